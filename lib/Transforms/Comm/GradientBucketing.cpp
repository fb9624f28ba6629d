//===- GradientBucketing.cpp - gradients all-reduced in buckets -----------===//
//
// Data parallelism all-reduces every gradient on its own: many small calls,
// each paying a collective's latency. As PyTorch's DDP does, the gradients
// are packed, in the order the backward makes them, into buckets of a
// bounded size, each all-reduced once as soon as its last gradient exists,
// so that its communication can overlap with the rest of the backward.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Comm/Passes.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_GRADIENTBUCKETING
#include "dtc/Transforms/Comm/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

int64_t byteSize(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return tensor.getNumElements() * ((tensor.getElementTypeBitWidth() + 7) / 8);
}

/// One gradient's all-reduce and the parameter it is the gradient of.
struct Member {
  AllReduceOp sum;
  std::string name;
};

struct GradientBucketingPass
    : public dtc::impl::GradientBucketingBase<GradientBucketingPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || bucketMB <= 0)
      return;
    Block &body = func.getBody().front();
    llvm::DenseMap<Operation *, unsigned> position;
    for (Operation &op : body)
      position[&op] = position.size() + 1; // block arguments come first: 0
    auto readyAt = [&](AllReduceOp sum) {
      Operation *def = sum.getInput().getDefiningOp();
      return def ? position.lookup(def) : 0u;
    };

    // The gradients' all-reduces, in the order their inputs are made.
    SmallVector<Member> members;
    llvm::DenseSet<Operation *> seen;
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    for (OpOperand &operand : ret->getOpOperands()) {
      auto grad = func.getResultAttrOfType<StringAttr>(
          operand.getOperandNumber(), kGradAttrName);
      auto sum = operand.get().getDefiningOp<AllReduceOp>();
      if (!grad || !sum || sum.getKind() != CollectiveReduction::Sum ||
          !llvm::all_of(sum->getUsers(), llvm::IsaPred<func::ReturnOp>) ||
          !seen.insert(sum).second)
        continue;
      members.push_back({sum, grad.str()});
    }
    llvm::stable_sort(members, [&](const Member &a, const Member &b) {
      return readyAt(a.sum) < readyAt(b.sum);
    });

    // Buckets per set of axes and element type, filled in that order.
    int64_t limit = static_cast<int64_t>(bucketMB * (1 << 20));
    using Key = std::tuple<Attribute, Attribute, Type>;
    llvm::MapVector<Key, SmallVector<SmallVector<Member>>> buckets;
    for (Member &member : members) {
      auto type = member.sum.getType();
      Key key{member.sum.getMeshAttr(), member.sum.getAxes(),
              type.getElementType()};
      auto &list = buckets[key];
      int64_t bytes = 0;
      if (!list.empty())
        for (Member &m : list.back())
          bytes += byteSize(m.sum.getType());
      if (list.empty() || bytes + byteSize(type) > limit)
        list.emplace_back();
      list.back().push_back(member);
    }
    int64_t count = 0;
    for (auto &[key, list] : buckets)
      count += llvm::count_if(list, [](auto &b) { return b.size() > 1; });
    int64_t index = 0;
    for (auto &[key, list] : buckets)
      for (SmallVector<Member> &bucket : list)
        if (bucket.size() > 1)
          fuse(bucket, ++index, count, readyAt);
  }

  /// One all-reduce for the bucket, right after its last gradient.
  template <typename ReadyAt>
  void fuse(MutableArrayRef<Member> bucket, int64_t index, int64_t count,
            ReadyAt readyAt) {
    AllReduceOp last = bucket.front().sum;
    for (Member &m : bucket)
      if (readyAt(m.sum) > readyAt(last))
        last = m.sum;
    OpBuilder b(&getContext());
    if (Operation *def = last.getInput().getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(last->getBlock());
    Location loc = last.getLoc();
    Type element = last.getType().getElementType();
    SmallVector<Value> flat;
    int64_t total = 0;
    std::string names;
    for (Member &m : bucket) {
      int64_t n = m.sum.getType().getNumElements();
      flat.push_back(ReshapeOp::create(
          b, loc, RankedTensorType::get({n}, element), m.sum.getInput()));
      total += n;
      names += (names.empty() ? "" : ", ") + m.name;
    }
    Value packed = ConcatOp::create(b, loc, flat, 0);
    StringRef reason = last.getReason().value_or("");
    std::string purpose = reason.split(':').first.str();
    auto sum = AllReduceOp::create(
        b, loc, packed.getType(), packed, last.getMeshAttr(), last.getAxes(),
        last.getKindAttr(),
        b.getStringAttr(purpose + ": gradient bucket " + std::to_string(index) +
                        " of " + std::to_string(count) + " (" +
                        std::to_string(byteSize(packed.getType())) +
                        " bytes): " + names));
    int64_t offset = 0;
    for (Member &m : bucket) {
      int64_t n = m.sum.getType().getNumElements();
      Value part = SliceOp::create(b, loc, sum, {offset}, {n}, {1});
      offset += n;
      m.sum.getResult().replaceAllUsesWith(
          ReshapeOp::create(b, loc, m.sum.getType(), part).getResult());
      m.sum.erase();
    }
  }
};

} // namespace
