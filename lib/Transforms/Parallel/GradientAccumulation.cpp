//===- GradientAccumulation.cpp - microbatches run in sequence ------------===//
//
// The step's batch is cut into K microbatches that run one after another
// and whose gradients add up before the one optimizer update. The program
// of one microbatch comes from the batch partitioner (over a temporary
// mesh axis); it is then unrolled K times in the step. Its all-reduces
// become sums over the copies: those that only feed the results (the
// gradients, the loss) accumulate as each microbatch finishes, so a
// microbatch's activations are dead before the next one starts; the others
// (the loss normalizer, a count of labels) pull just the ops they need from
// every copy first.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Parallel/Passes.h"

#include "Partitioner.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_GRADIENTACCUMULATION
#include "dtc/Transforms/Parallel/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

constexpr llvm::StringLiteral kMeshName = "dtc_microbatches";

class Unroller {
public:
  Unroller(func::FuncOp func, func::FuncOp shard, int64_t copies,
           FlatSymbolRefAttr mesh, StringRef markCopies)
      : func(func), shard(shard), copies(copies), mesh(mesh),
        markCopies(markCopies), b(func.getContext()), maps(copies),
        done(copies) {}

  LogicalResult run() {
    Block &body = func.getBody().front();
    Block &shardBody = shard.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    SmallVector<Operation *> original;
    for (Operation &op : body.without_terminator())
      original.push_back(&op);
    b.setInsertionPoint(ret);

    // Ops whose results only reach the function's results and that read
    // the microbatches' sums, not their parts, run once after the last
    // microbatch; the sums among them accumulate.
    SmallVector<Operation *> ops;
    for (Operation &op : shardBody.without_terminator())
      ops.push_back(&op);
    llvm::DenseSet<Operation *> onlyFeedResults;
    for (Operation *op : llvm::reverse(ops))
      if (!op->use_empty() &&
          llvm::all_of(op->getUsers(), [&](Operation *user) {
            return isa<func::ReturnOp>(user) || onlyFeedResults.contains(user);
          }))
        onlyFeedResults.insert(op);
    // Values that differ between microbatches: the inputs' rows and what
    // is computed from them, up to the sums.
    llvm::DenseSet<Value> varies;
    for (BlockArgument arg : shard.getArguments())
      if (shard.getArgAttr(arg.getArgNumber(), kInputAttrName))
        varies.insert(arg);
    auto anyVaries = [&](Operation *op) {
      return llvm::any_of(op->getOperands(),
                          [&](Value v) { return varies.contains(v); });
    };
    for (Operation *op : ops) {
      if (isMicrobatchPart(op) ||
          (!isMicrobatchSum(op) && !isMicrobatchGather(op) && anyVaries(op)))
        varies.insert(op->getResults().begin(), op->getResults().end());
      if (onlyFeedResults.contains(op) &&
          (isMicrobatchSum(op) || isMicrobatchGather(op) ||
           (!anyVaries(op) && !isMicrobatchPart(op))))
        deferred.insert(op);
    }

    for (int64_t k = 0; k < copies; ++k)
      mapArguments(k);
    DenseMap<Operation *, Value> accumulated;
    for (int64_t k = 0; k < copies; ++k) {
      for (Operation *op : ops)
        if (!deferred.contains(op) && !op->use_empty())
          emit(op, k);
      for (Operation *op : ops) {
        if (!deferred.contains(op) || !isMicrobatchSum(op))
          continue;
        Value part = maps[k].lookup(op->getOperand(0));
        Value &sum = accumulated[op];
        if (sum) {
          sum = addMicrobatches(op->getLoc(), sum, part);
          mark(sum.getDefiningOp(), k, op);
        } else {
          sum = part;
        }
      }
    }
    for (Operation *op : ops) {
      if (!deferred.contains(op))
        continue;
      if (isMicrobatchSum(op)) {
        maps[0].map(op->getResult(0), accumulated[op]);
        deferredResults.insert(accumulated[op]);
        continue;
      }
      if (isMicrobatchGather(op)) {
        Value whole = gatherCopies(cast<AllGatherOp>(op));
        maps[0].map(op->getResult(0), whole);
        deferredResults.insert(whole);
        continue;
      }
      // What feeds the results is whole here: sums, or the same in every
      // copy.
      for (Value operand : op->getOperands()) {
        Value value = maps[0].lookupOrDefault(operand);
        if (!shared.contains(value) && !deferredResults.contains(value))
          return op->emitError("gradient accumulation: an operand of type ")
                 << operand.getType()
                 << " differs between microbatches but is not summed";
      }
      for (Value result : b.clone(*op, maps[0])->getResults())
        deferredResults.insert(result);
    }

    SmallVector<Value> results;
    for (Value v : shardBody.getTerminator()->getOperands())
      results.push_back(maps[0].lookupOrDefault(v));
    ret->setOperands(results);
    for (Operation *op : llvm::reverse(original))
      op->erase();
    return verify(func);
  }

private:
  /// With `markCopies`: `made`, an op of copy `k` standing for `origin`,
  /// carries the copy's index and `origin`'s discardable attributes.
  void mark(Operation *made, std::optional<int64_t> k,
            Operation *origin = nullptr) {
    if (markCopies.empty())
      return;
    if (origin)
      for (NamedAttribute attr : origin->getDiscardableAttrs())
        made->setDiscardableAttr(attr.getName(), attr.getValue());
    if (k)
      made->setDiscardableAttr(markCopies, b.getI64IntegerAttr(*k));
  }

  bool isMicrobatchSum(Operation *op) {
    auto sum = dyn_cast<AllReduceOp>(op);
    return sum && sum.getMeshAttr() == mesh;
  }

  /// A resharding over the microbatches: the whole batch of a value.
  bool isMicrobatchGather(Operation *op) {
    auto gather = dyn_cast<AllGatherOp>(op);
    return gather && gather.getMeshAttr() == mesh;
  }

  /// Every copy's part of what `gather` gathers, concatenated in copy order
  /// (the copies emitted first where they are not yet).
  Value gatherCopies(AllGatherOp gather) {
    Value operand = gather.getInput();
    SmallVector<Value> parts;
    for (int64_t j = 0; j < copies; ++j) {
      if (Operation *def = operand.getDefiningOp())
        emit(def, j);
      parts.push_back(maps[j].lookupOrDefault(operand));
    }
    auto concat = ConcatOp::create(b, gather.getLoc(), parts, gather.getDim());
    mark(concat, std::nullopt, gather);
    return concat;
  }

  /// A replicated value's rows of one microbatch (a constant's, cut where
  /// it meets the inputs' rows).
  bool isMicrobatchPart(Operation *op) {
    auto part = dyn_cast<ShardOp>(op);
    return part && part.getMeshAttr() == mesh;
  }

  /// Copy `k` reads its rows of every model input and shares the rest.
  void mapArguments(int64_t k) {
    for (auto [global, local] :
         llvm::zip(func.getArguments(), shard.getArguments())) {
      if (!func.getArgAttr(global.getArgNumber(), kInputAttrName)) {
        maps[k].map(local, global);
        shared.insert(global);
        continue;
      }
      auto type = cast<RankedTensorType>(local.getType());
      SmallVector<int64_t> starts(type.getRank(), 0), sizes(type.getShape()),
          strides(type.getRank(), 1);
      starts[0] = k * sizes[0];
      auto slice =
          SliceOp::create(b, func.getLoc(), global, starts, sizes, strides);
      mark(slice, k);
      maps[k].map(local, slice.getResult());
    }
  }

  /// `sum` + `part`, marked as a sum over microbatches (ZeRO-2/3 then
  /// reduce-scatter each microbatch's part instead).
  Value addMicrobatches(Location loc, Value sum, Value part) {
    auto add = AddOp::create(b, loc, sum, part);
    add->setAttr(kMicrobatchSumAttrName, b.getUnitAttr());
    return add;
  }

  /// Emits `op` of copy `k` after what it reads.
  void emit(Operation *op, int64_t k) {
    if (done[k].contains(op))
      return;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        emit(def, k);
    if (isMicrobatchSum(op)) {
      // Needed before the results: sum every copy's part now.
      Value operand = op->getOperand(0);
      if (Operation *def = operand.getDefiningOp())
        for (int64_t j = 0; j < copies; ++j)
          emit(def, j);
      Value sum = maps[0].lookup(operand);
      for (int64_t j = 1; j < copies; ++j) {
        sum = addMicrobatches(op->getLoc(), sum, maps[j].lookup(operand));
        mark(sum.getDefiningOp(), std::nullopt, op);
      }
      share(op, sum);
      return;
    }
    if (isMicrobatchGather(op)) {
      // Needs every copy's part: the copies up to it run first.
      share(op, gatherCopies(cast<AllGatherOp>(op)));
      return;
    }
    if (isMicrobatchPart(op)) {
      sliceOfCopy(cast<ShardOp>(op), k);
      done[k].insert(op);
      return;
    }
    Operation *copy = b.clone(*op, maps[k]);
    if (llvm::all_of(op->getOperands(), [&](Value operand) {
          return shared.contains(maps[k].lookupOrDefault(operand));
        })) {
      // The same in every copy: once.
      share(op, copy->getResults());
      return;
    }
    mark(copy, k);
    done[k].insert(op);
  }

  /// Copy `k`'s chunk of what `part` cuts: chunk k along its dimension
  /// (of each block).
  void sliceOfCopy(ShardOp part, int64_t k) {
    Value whole = maps[k].lookupOrDefault(part.getInput());
    auto type = cast<RankedTensorType>(whole.getType());
    int64_t dim = part.getDim(), blocks = part.getBlocks();
    int64_t block = type.getDimSize(dim) / blocks, chunk = block / copies;
    SmallVector<Value> pieces;
    for (int64_t i = 0; i < blocks; ++i) {
      SmallVector<int64_t> starts(type.getRank(), 0), sizes(type.getShape()),
          strides(type.getRank(), 1);
      starts[dim] = i * block + k * chunk;
      sizes[dim] = chunk;
      pieces.push_back(
          SliceOp::create(b, part.getLoc(), whole, starts, sizes, strides));
    }
    Value result = pieces.size() == 1
                       ? pieces.front()
                       : ConcatOp::create(b, part.getLoc(), pieces, dim)
                             .getResult();
    for (Value piece : pieces)
      mark(piece.getDefiningOp(), k, part);
    mark(result.getDefiningOp(), k, part);
    maps[k].map(part.getResult(), result);
  }

  /// `op` has the values `to` in every copy.
  void share(Operation *op, ValueRange to) {
    for (int64_t j = 0; j < copies; ++j) {
      maps[j].map(op->getResults(), to);
      done[j].insert(op);
    }
    shared.insert(to.begin(), to.end());
  }

  func::FuncOp func, shard;
  int64_t copies;
  FlatSymbolRefAttr mesh;
  StringRef markCopies;
  OpBuilder b;
  SmallVector<IRMapping> maps;
  SmallVector<llvm::DenseSet<Operation *>> done;
  llvm::DenseSet<Operation *> deferred;
  llvm::DenseSet<Value> shared, deferredResults;
};

} // namespace

LogicalResult mlir::dtc::unrollMicrobatches(
    func::FuncOp func, int64_t microbatches, StringRef purpose, bool strict,
    function_ref<LogicalResult(func::FuncOp)> prepare, StringRef markCopies) {
  auto module = func->getParentOfType<ModuleOp>();
  OpBuilder b(module.getBodyRegion());
  auto mesh = MeshOp::create(b, module.getLoc(), kMeshName,
                             b.getStrArrayAttr({"microbatch"}),
                             b.getDenseI64ArrayAttr({microbatches}));
  auto meshRef = FlatSymbolRefAttr::get(func.getContext(), kMeshName);
  // The program of one microbatch, next to the step while it is built.
  b.setInsertionPointAfter(func);
  auto shard = cast<func::FuncOp>(b.clone(*func));
  shard.setName((func.getName() + "_microbatch").str());
  bool ok =
      succeeded(partitionBatch(shard, microbatches, meshRef, "microbatch",
                               purpose, /*rankIndexed=*/false, strict)) &&
      (!prepare || succeeded(prepare(shard))) &&
      succeeded(Unroller(func, shard, microbatches, meshRef, markCopies).run());
  shard.erase();
  mesh.erase();
  return success(ok);
}

namespace {

struct GradientAccumulationPass
    : public dtc::impl::GradientAccumulationBase<GradientAccumulationPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (microbatches < 1) {
      module.emitError("dtc-gradient-accumulation needs microbatches >= 1");
      return signalPassFailure();
    }
    if (microbatches == 1)
      return;
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      if (func.isExternal())
        continue;
      if (failed(unrollMicrobatches(func, microbatches, "gradient accumulation",
                                    strictSharding)))
        return signalPassFailure();
      setStepMicrobatches(func, microbatches);
    }
  }
};

} // namespace
