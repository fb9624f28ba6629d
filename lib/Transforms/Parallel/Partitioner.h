//===- Partitioner.h - a step's program for one rank ------------*- C++ -*-===//

#ifndef DTC_LIB_TRANSFORMS_PARALLEL_PARTITIONER_H
#define DTC_LIB_TRANSFORMS_PARALLEL_PARTITIONER_H

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/SignatureEditor.h"
#include "dtc/Transforms/Options.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace mlir {
class RewriterBase;
} // namespace mlir

namespace mlir::dtc {

class AllReduceOp;

/// Rewrites the differentiated step `func` into the program of one of
/// `shards` equal shards of its batch (dimension 0 of every dtc.input):
/// partial sums are all-reduced over `axis` of `mesh` where they are needed
/// whole, each with a reason starting with `purpose`. Errors name the op or
/// input that cannot be partitioned. `rankIndexed`: the shards are ranks of
/// `mesh` (data parallelism), so a shard may compute its index (dropout's
/// global element indices); not for gradient accumulation's microbatches.
/// An op that cannot run on its shard of the batch gets its split operands
/// all-gathered (a resharding, with a warning), or with `strict` an error
/// naming the op, the operand and the bytes.
LogicalResult partitionBatch(func::FuncOp func, int64_t shards,
                             FlatSymbolRefAttr mesh, StringRef axis,
                             StringRef purpose, bool rankIndexed,
                             bool strict = false);

/// Replaces the differentiated step `func` by `microbatches` copies of the
/// program of one microbatch, run in sequence (gradient accumulation): the
/// batch partitioner makes that program over a temporary mesh (its errors
/// name `purpose`; `strict` as partitionBatch's), `prepare`, if given, sees
/// it before it is unrolled; copy k reads rows k of the inputs, the partial
/// sums become sums of the copies. With `markCopies`, each op made for one
/// copy carries its index under that name, and what stands for an op of the
/// one-microbatch program (a clone, an add of copies, a slice) that op's
/// discardable attributes.
LogicalResult
unrollMicrobatches(func::FuncOp func, int64_t microbatches, StringRef purpose,
                   bool strict,
                   function_ref<LogicalResult(func::FuncOp)> prepare = nullptr,
                   StringRef markCopies = "");

/// An argument that starts out split along `dim` over the axis: chunk r of
/// each of `blocks` equal blocks of the dimension. A pinned one is never
/// gathered (an op that needs it whole is an error); an unpinned one is a
/// starting layout that ops may reshard.
struct SplitArgument {
  unsigned index;
  int64_t dim;
  int64_t blocks = 1;
  bool pinned = true;
};

/// A collective that partitioning inserts (or widens), as the analysis
/// mode of the engine (AxisPartitioner) records it without inserting it.
struct PlannedCollective {
  /// The Communicator's name: all_reduce, all_gather, reduce_scatter.
  std::string kind;
  SmallVector<std::string> axes;
  /// Per call, as nccl-tests counts them (CollectiveOpInterface).
  double busBytes = 0;
  std::string reason;
  /// Where it would be made.
  std::optional<Location> loc;
  /// How an all-reduce combines.
  CollectiveReduction reduction = CollectiveReduction::Sum;
  /// An existing collective this stands for, which the partition changes:
  /// a sum over this axis every reader cuts (a reduce-scatter then), a sum
  /// over other axes widened to this one (a replicated weight's gradient,
  /// summed over tp then dp).
  Operation *existing = nullptr;
  /// Folded into another: not inserted after all.
  bool folded = false;
};

/// Rewrites `func` into the program of one of the `ranks` ranks of `axis`,
/// the `seeds` split (their types become the local ones) and everything
/// else replicated. Layouts propagate from the seeds; a replicated value
/// that meets a split one is sliced (dtc.shard), partial sums are
/// all-reduced where needed whole or used more than once, and an op that
/// cannot work on its operands' layouts gets them gathered, with a warning
/// naming it (an error when that would gather a seed). Result i ends up
/// split as `resultSplit(i)` says (its `index` unused), or whole. With a
/// `sequenceLength` (sequence parallelism), partial activations [batch,
/// sequence, features] are reduce-scattered along the sequence instead of
/// all-reduced, so that the norms and residual adds between the projections
/// run on a part of the sequence; the projections gather it again. With
/// `strict`, every gather of an activation that an op's layouts force (a
/// resharding) is an error instead.
LogicalResult partitionOverAxis(
    func::FuncOp func, int64_t ranks, FlatSymbolRefAttr mesh, StringRef axis,
    StringRef purpose, ArrayRef<SplitArgument> seeds,
    llvm::function_ref<std::optional<SplitArgument>(unsigned)> resultSplit,
    int64_t sequenceLength = 0, bool strict = false);

/// Tensor parallelism's choice of parameter layouts over `tp` ranks: the
/// column/row pairs the Megatron matcher finds (under
/// TPStrategy::Megatron), then those a --sharding-spec file gives.
FailureOr<SmallVector<SplitArgument>>
tensorParallelSeeds(func::FuncOp func, int64_t tp, TPStrategy strategy,
                    StringRef shardingSpec);

/// The sequence length: dimension 1 of the first model input (an error
/// when there is none).
FailureOr<int64_t> sequenceLengthOf(func::FuncOp func);

/// The gradient of a split parameter, and the next value of a split
/// argument the step updates (a batch norm's running statistics), stay
/// split like it: result i's split, for partitionOverAxis.
class ResultSplits {
public:
  ResultSplits(func::FuncOp func, ArrayRef<SplitArgument> seeds);
  std::optional<SplitArgument> operator()(unsigned index) const;

private:
  mutable func::FuncOp func;
  llvm::StringMap<SplitArgument> byName;
  llvm::DenseMap<unsigned, SplitArgument> byUpdate;
};

/// A parameter as an op reads it: through casts and transposes.
struct WeightRead {
  BlockArgument param;
  /// For each dimension of the read value, the parameter's dimension.
  SmallVector<int64_t> paramDim;
};

/// The parameter (a `dtc.param` argument) that `value` is, up to casts and
/// transposes; none when it is computed otherwise.
std::optional<WeightRead> traceParam(Value value);

/// Context parallelism's zigzag order of `size` tokens over `ranks`: the
/// token at each position of the order, rank r's contiguous part holding
/// chunks r and 2 ranks - 1 - r of 2 ranks equal chunks (so that every
/// rank gets as much of a causal attention's work). With `inverse`, each
/// token's position in the order.
SmallVector<int64_t> zigzagOrder(int64_t size, int64_t ranks,
                                 bool inverse = false);

/// The ops that compute the loss: the forward part of the step.
llvm::DenseSet<Operation *> forwardOps(func::FuncOp func);

/// Where this rank's chunk starts along a dimension of `partSize * ranks`
/// split in equal chunks over `axes` of `mesh`: its part of a 1-D iota,
/// first element (a scalar of the integer `type`).
Value chunkStart(OpBuilder &b, Location loc, int64_t partSize, int64_t ranks,
                 Type type, FlatSymbolRefAttr mesh, ArrayAttr axes);

/// Replaces `sum`, an all-reduce every reader of which keeps the same part
/// of it (a `dtc.shard` along one dimension over the same axes), by one
/// reduce-scatter: half the bus bytes. With `someAxes` the readers may keep
/// their part over only some of the sum's axes: the reduce-scatter over
/// those is then summed over the others (ZeRO over dp of a gradient summed
/// over dp and ep). Fails, changing nothing, otherwise.
LogicalResult scatterInsteadOfSum(AllReduceOp sum, RewriterBase &rewriter,
                                  bool someAxes = false);

/// Gives `op` the result types inferred from its (retyped) operands and
/// appends the results whose type changed to `changed`; fails if `op`
/// cannot infer them.
LogicalResult reinferResultTypes(Operation *op,
                                 SmallVectorImpl<Value> &changed);

/// The module's mesh with `axis` of `size`: the mesh its steps' dtc.step
/// names, else its only dtc.mesh, else a new `@mesh`; the axis appended to
/// it (the last axis varies fastest), or checked. Null, with an error on
/// the module, when the mesh has the axis with another size or the mesh is
/// ambiguous. The caller records it on each step (setStepMesh).
FlatSymbolRefAttr meshWithAxis(ModuleOp module, StringRef axis, int64_t size);

/// Records on argument `index` that it is split along `dim` over `axis` of
/// `mesh` (in `blocks` blocks), next to any other axis's split.
void recordSharding(SignatureEditor &signature, unsigned index,
                    FlatSymbolRefAttr mesh, int64_t dim, StringRef axis,
                    int64_t blocks = 1);

/// The same for result `index`, a gradient: next to the splits of its
/// parameter, argument `param` (the layout it would have had).
void recordResultSharding(SignatureEditor &signature, unsigned index,
                          std::optional<unsigned> param,
                          FlatSymbolRefAttr mesh, int64_t dim, StringRef axis);

} // namespace mlir::dtc

#endif // DTC_LIB_TRANSFORMS_PARALLEL_PARTITIONER_H
