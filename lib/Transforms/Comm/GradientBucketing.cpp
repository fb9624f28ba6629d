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

#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_GRADIENTBUCKETING
#include "dtc/Transforms/Comm/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// A collective to bucket: a gradient's all-reduce or reduce-scatter, or
/// an updated parameter's all-gather (ZeRO), and what it carries.
struct Member {
  Operation *op;
  std::string name;
  Value input() const { return op->getOperand(0); }
  RankedTensorType inputType() const {
    return cast<RankedTensorType>(input().getType());
  }
  RankedTensorType resultType() const {
    return cast<RankedTensorType>(op->getResult(0).getType());
  }
  /// The dimension a reduce-scatter splits or an all-gather joins.
  int64_t dim() const { return op->getAttrOfType<IntegerAttr>("dim").getInt(); }
  /// The bytes the bucket holds for it: the whole tensor.
  int64_t bytes() const {
    return std::max(tensorByteSize(inputType()), tensorByteSize(resultType()));
  }
};

/// The reduce-scatter of a gradient result made by `def`: `def` itself, or
/// the one an elementwise op with scalars reads (fp16's unscaling).
Operation *scatteredGradient(Operation *def) {
  if (isa<ReduceScatterOp>(def))
    return def;
  if (!isElementwise(def))
    return nullptr;
  Operation *scatter = nullptr;
  for (Value operand : def->getOperands()) {
    if (cast<RankedTensorType>(operand.getType()).getRank() == 0)
      continue;
    auto inner = operand.getDefiningOp<ReduceScatterOp>();
    if (!inner || scatter)
      return nullptr;
    scatter = inner;
  }
  return scatter;
}

/// The unit ZeRO-3 gathers each parameter with (its `dtc.unit`, or itself).
llvm::StringMap<StringRef> unitsOf(func::FuncOp func) {
  llvm::StringMap<StringRef> units;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    auto name = func.getArgAttrOfType<StringAttr>(i, kParamAttrName);
    if (!name)
      continue;
    auto unit = func.getArgAttrOfType<StringAttr>(i, kUnitAttrName);
    units[name.getValue()] = unit ? unit.getValue() : name.getValue();
  }
  return units;
}

/// What a bucket serves, for its reason: data (or, without a dp axis,
/// expert, context or tensor) parallelism's gradient sums, or ZeRO's
/// parameter gathers at the step's stage.
std::string purposeOf(Operation *collective) {
  auto func = collective->getParentOfType<func::FuncOp>();
  auto stage = func->getAttrOfType<IntegerAttr>(kZeroStageAttrName);
  if (stage && isa<AllGatherOp>(collective))
    return "ZeRO-" + std::to_string(stage.getInt());
  auto axes = cast<CollectiveOpInterface>(collective).getGroupAxes();
  for (auto [axis, purpose] : {std::pair{"dp", "data-parallel"},
                               {"ep", "expert-parallel"},
                               {"cp", "context-parallel"}})
    if (llvm::is_contained(axes, axis))
      return purpose;
  return "tensor-parallel";
}

/// `value` with dimension `dim` moved to the front (and back).
SmallVector<int64_t> frontPermutation(int64_t rank, int64_t dim) {
  SmallVector<int64_t> perm{dim};
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim)
      perm.push_back(d);
  return perm;
}

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
    // A ZeRO-3 gather is needed by its first reader; the others are ready
    // when their input is made.
    auto readyAt = [&](const Member &m) {
      if (m.op->hasAttr(kGatherPhaseAttrName)) {
        unsigned first = ~0u;
        for (Operation *user : m.op->getUsers())
          first = std::min(first, position.lookup(user));
        return first;
      }
      Operation *def = m.input().getDefiningOp();
      return def ? position.lookup(def) : 0u;
    };

    // The gradients' sums and (ZeRO) the updated parameters' gathers, in
    // the order their inputs are made.
    SmallVector<Member> members;
    llvm::DenseSet<Operation *> seen;
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    // The argument each result is the next value of (a parameter's update).
    llvm::DenseMap<unsigned, unsigned> updated;
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      if (std::optional<unsigned> result = getAliasingOutput(func, i))
        updated[*result] = i;
    // A gradient's sum the update reads already (the optimizer has run)
    // stays where it is.
    StringRef readByUpdate;
    for (OpOperand &operand : ret->getOpOperands()) {
      unsigned i = operand.getOperandNumber();
      auto grad = func.getResultAttrOfType<StringAttr>(i, kGradAttrName);
      auto update = updated.find(i);
      Operation *def = operand.get().getDefiningOp();
      if (!def || !seen.insert(def).second)
        continue;
      auto sum = dyn_cast<AllReduceOp>(def);
      bool gradientSum =
          grad && sum && sum.getKind() == CollectiveReduction::Sum;
      if (gradientSum &&
          llvm::all_of(sum->getUsers(), llvm::IsaPred<func::ReturnOp>))
        members.push_back({def, grad.str()});
      else if (gradientSum && readByUpdate.empty())
        readByUpdate = grad.getValue();
      else if (auto scatter = scatteredGradient(def); grad && scatter)
        members.push_back({scatter, grad.str()});
      else if (update != updated.end()) {
        // (A parameter ZeRO padded is the gathered whole's first rows.)
        if (auto rows = dyn_cast<SliceOp>(def))
          def = rows.getInput().getDefiningOp();
        if (isa_and_nonnull<AllGatherOp>(def) && def->hasOneUse())
          members.push_back({def, dtc::getArgumentName(func, update->second)});
      }
    }
    // ZeRO-3's gathers of parameters before their reads.
    func.walk([&](AllGatherOp gather) {
      if (gather->hasAttr(kGatherPhaseAttrName))
        if (auto arg = dyn_cast<BlockArgument>(gather.getInput()))
          if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                            kParamAttrName))
            members.push_back({gather, name.str()});
    });
    // Nothing to bucket because the optimizer ran first: say so rather
    // than leave every all-reduce as it was. (After dtc-zero, a gradient
    // whose state stayed whole -- no dimension splits over dp -- keeps its
    // all-reduce, which the update reads: the random-graph tests found
    // such a step, all of whose parameters were so.)
    if (members.empty() && !readByUpdate.empty() &&
        !func->hasAttr(kZeroStageAttrName)) {
      func.emitError("dtc-bucket-gradients: the sum of the gradient of '")
          << readByUpdate
          << "' is read by the update already: run dtc-bucket-gradients "
             "before dtc-optimizer (or, under ZeRO, after dtc-zero)";
      return signalPassFailure();
    }
    llvm::stable_sort(members, [&](const Member &a, const Member &b) {
      return readyAt(a) < readyAt(b);
    });

    // Buckets per kind, set of axes and element type, filled in that order.
    int64_t limit = static_cast<int64_t>(bucketMB * (1 << 20));
    using Key =
        std::tuple<OperationName, Attribute, Attribute, Type, Attribute>;
    llvm::MapVector<Key, SmallVector<SmallVector<Member>>> buckets;
    // The bytes of each key's last bucket.
    llvm::DenseMap<Key, int64_t> lastBytes;
    llvm::StringMap<StringRef> units = unitsOf(func);
    auto unitOf = [&](StringRef param) {
      auto it = units.find(param);
      return it == units.end() ? param : it->second;
    };
    for (Member &member : members) {
      Attribute phase = member.op->getAttr(kGatherPhaseAttrName);
      auto collective = cast<CollectiveOpInterface>(member.op);
      Key key{member.op->getName(), collective.getMeshAttr(),
              Builder(&getContext()).getStrArrayAttr(collective.getGroupAxes()),
              member.inputType().getElementType(), phase};
      auto &list = buckets[key];
      int64_t &bytes = lastBytes[key];
      // ZeRO-3's gathers bucket by unit: a bucket holds one block.
      bool newUnit = phase && !list.empty() &&
                     unitOf(list.back().back().name) != unitOf(member.name);
      if (list.empty() || newUnit || bytes + member.bytes() > limit) {
        list.emplace_back();
        bytes = 0;
      }
      list.back().push_back(member);
      bytes += member.bytes();
    }
    int64_t count = 0;
    for (auto &[key, list] : buckets)
      count += llvm::count_if(list, [](auto &b) { return b.size() > 1; });
    int64_t index = 0;
    for (auto &[key, list] : buckets) {
      // ZeRO-3's gathers: each bucket is made where the previous one is
      // first read (a prefetch: the next unit's parameters arrive while
      // the current unit computes), the first where it is first read.
      bool prefetch = std::get<4>(key) != nullptr;
      SmallVector<Operation *> firstReads;
      if (prefetch)
        for (SmallVector<Member> &bucket : list) {
          Operation *first = nullptr;
          for (Member &m : bucket)
            for (Operation *user : m.op->getUsers())
              if (!first || user->isBeforeInBlock(first))
                first = user;
          firstReads.push_back(first);
        }
      for (auto [k, bucket] : llvm::enumerate(list)) {
        Operation *at = prefetch ? firstReads[k == 0 ? 0 : k - 1] : nullptr;
        if (bucket.size() > 1)
          fuse(bucket, ++index, count, readyAt, at);
        else if (at)
          bucket.front().op->moveBefore(at);
      }
    }
  }

  /// Reduce-scatters or all-gathers (`gather`) of `bucket` as one call like
  /// `like`, packed per rank (FSDP2's interleaving): each tensor, its split
  /// dimension moved to the front, is viewed as [n, rest]; the bucket is
  /// their concatenation along `rest`, so that rank r's row is its chunk of
  /// every tensor.
  void packPerRank(OpBuilder &b, Location loc, MutableArrayRef<Member> bucket,
                   bool gather, StringAttr why, Operation *like) {
    Type element = bucket.front().inputType().getElementType();
    int64_t n = cast<CollectiveOpInterface>(like).getGroupSize();
    auto rows = [&](int64_t cols) {
      return RankedTensorType::get({gather ? 1 : n, cols}, element);
    };
    SmallVector<Value> packed;
    SmallVector<int64_t> widths;
    for (Member &m : bucket) {
      auto type = m.inputType();
      Value x = TransposeOp::create(b, loc, m.input(),
                                    frontPermutation(type.getRank(), m.dim()));
      int64_t width = type.getNumElements() / (gather ? 1 : n);
      packed.push_back(ReshapeOp::create(b, loc, rows(width), x));
      widths.push_back(width);
    }
    int64_t total = 0;
    for (int64_t w : widths)
      total += w;
    Value all = ConcatOp::create(b, loc, packed, 1);
    Operation *one = b.clone(*like);
    one->setOperand(0, all);
    one->setAttr("reason", why);
    one->setAttr("dim", b.getI64IntegerAttr(0));
    one->getResult(0).setType(rows(total).clone({gather ? n : 1, total}));
    Value result = one->getResult(0);

    int64_t offset = 0;
    for (auto [m, width] : llvm::zip(bucket, widths)) {
      auto out = m.resultType();
      Value part = SliceOp::create(b, loc, result, {0, offset},
                                   {gather ? n : 1, width}, {1, 1});
      SmallVector<int64_t> perm = frontPermutation(out.getRank(), m.dim());
      SmallVector<int64_t> front;
      for (int64_t d : perm)
        front.push_back(out.getDimSize(d));
      part = ReshapeOp::create(b, loc, out.clone(front), part);
      SmallVector<int64_t> inverse(perm.size());
      for (auto [i, d] : llvm::enumerate(perm))
        inverse[d] = i;
      part = TransposeOp::create(b, loc, part, inverse);
      offset += width;
      m.op->getResult(0).replaceAllUsesWith(part);
    }
  }

  /// One collective for the bucket, right after its last input (or at
  /// `at`): all-reduces of the flattened tensors, reduce-scatters and
  /// all-gathers packed per rank.
  template <typename ReadyAt>
  void fuse(MutableArrayRef<Member> bucket, int64_t index, int64_t count,
            ReadyAt readyAt, Operation *at) {
    Member *last = &bucket.front();
    for (Member &m : bucket)
      if (readyAt(m) > readyAt(*last))
        last = &m;
    OpBuilder b(&getContext());
    if (at)
      b.setInsertionPoint(at);
    else if (Operation *def = last->input().getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(last->op->getBlock());
    Location loc = last->op->getLoc();
    bool gather = isa<AllGatherOp>(last->op);
    std::string names;
    int64_t bytes = 0;
    for (Member &m : bucket) {
      names += (names.empty() ? "" : ", ") + m.name;
      bytes += m.bytes();
    }
    std::string why = purposeOf(last->op) + ": " +
                      (gather ? "parameter" : "gradient") + " bucket " +
                      std::to_string(index) + " of " + std::to_string(count) +
                      " (" + std::to_string(bytes) + " bytes): " + names;

    if (auto sum = dyn_cast<AllReduceOp>(last->op)) {
      SmallVector<Value> inputs;
      for (Member &m : bucket)
        inputs.push_back(m.input());
      SmallVector<Value> sums =
          allReducePacked(b, loc, inputs, sum.getMeshAttr(), sum.getAxesAttr(),
                          sum.getKindAttr(), b.getStringAttr(why));
      for (auto [m, whole] : llvm::zip(bucket, sums))
        m.op->getResult(0).replaceAllUsesWith(whole);
    } else {
      packPerRank(b, loc, bucket, gather, b.getStringAttr(why), last->op);
    }
    // Erased last: one of them may be where the builder inserts.
    for (Member &m : bucket)
      m.op->erase();
  }
};

} // namespace
