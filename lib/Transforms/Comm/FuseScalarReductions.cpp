//===- FuseScalarReductions.cpp - one all-reduce for many scalars ---------===//
//
// A step all-reduces scalars besides its gradients: the loss and its
// normalizer, and under ZeRO the sums of squares of each parameter's
// gradient shard that --clip-grad-norm adds up (one per parameter). Each
// call costs a collective's latency for four bytes. Scalar all-reduces over
// the same axes, with the same reduction and element type, whose inputs
// all exist before any of their results is read are one all-reduce of the
// scalars packed into a vector, placed after the last input.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Comm/Passes.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_FUSESCALARREDUCTIONS
#include "dtc/Transforms/Comm/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

struct FuseScalarReductionsPass
    : public dtc::impl::FuseScalarReductionsBase<FuseScalarReductionsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &body = func.getBody().front();
    llvm::DenseMap<Operation *, unsigned> position;
    for (Operation &op : body)
      position[&op] = position.size() + 1; // block arguments come first: 0
    auto madeAt = [&](AllReduceOp sum) {
      Operation *def = sum.getInput().getDefiningOp();
      return def ? position.lookup(def) : 0u;
    };
    auto firstReadAt = [&](AllReduceOp sum) {
      unsigned first = ~0u;
      for (Operation *user : sum->getUsers())
        first = std::min(first, position.lookup(user));
      return first;
    };

    // Candidates in the order their inputs are made, by kind.
    using Key = std::tuple<Attribute, Attribute, Attribute, Type>;
    llvm::MapVector<Key, SmallVector<AllReduceOp>> candidates;
    func.walk([&](AllReduceOp sum) {
      auto type = cast<RankedTensorType>(sum.getType());
      if (type.getRank() == 0 && sum->getBlock() == &body)
        candidates[{sum.getMeshAttr(), sum.getAxesAttr(), sum.getKindAttr(),
                    type.getElementType()}]
            .push_back(sum);
    });
    // Groups whose every input is made before any result is read, found on
    // the program as it is, then fused.
    SmallVector<SmallVector<AllReduceOp>> groups;
    for (auto &[key, sums] : candidates) {
      llvm::stable_sort(sums, [&](AllReduceOp a, AllReduceOp b) {
        return madeAt(a) < madeAt(b);
      });
      unsigned firstRead = ~0u;
      for (auto [k, sum] : llvm::enumerate(sums)) {
        if (k == 0 || madeAt(sum) >= firstRead) {
          groups.emplace_back();
          firstRead = ~0u;
        }
        groups.back().push_back(sum);
        firstRead = std::min(firstRead, firstReadAt(sum));
      }
    }
    for (SmallVector<AllReduceOp> &group : groups)
      fuse(group);
  }

  /// One all-reduce of `group`'s scalars, right after the last input.
  void fuse(MutableArrayRef<AllReduceOp> group) {
    if (group.size() < 2)
      return;
    AllReduceOp last = group.back();
    OpBuilder b(&getContext());
    if (Operation *def = last.getInput().getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(last->getBlock());
    llvm::MapVector<StringRef, int64_t> reasons;
    SmallVector<Value> scalars;
    for (AllReduceOp sum : group) {
      scalars.push_back(sum.getInput());
      StringAttr reason = sum.getReasonAttr();
      ++reasons[reason ? reason.getValue() : StringRef()];
    }
    std::string why = std::to_string(group.size()) + " scalars in one call";
    for (auto [k, entry] : llvm::enumerate(reasons))
      why +=
          (k == 0 ? ": " : "; ") + entry.first.str() +
          (entry.second > 1 ? " (x" + std::to_string(entry.second) + ")" : "");
    SmallVector<Value> sums = allReducePacked(
        b, last.getLoc(), scalars, last.getMeshAttr(), last.getAxesAttr(),
        last.getKindAttr(), b.getStringAttr(why));
    for (auto [sum, whole] : llvm::zip(group, sums))
      sum.getResult().replaceAllUsesWith(whole);
    for (AllReduceOp sum : group)
      sum.erase();
  }
};

} // namespace
