//===- AxisPartitioner.h - a step's program for one rank of an axis -*- C++ -*-===//
//
// The rewriting half of the propagation engine: a forward walk over the
// step that gives every value a layout over one mesh axis from its
// operands' (ShardingPropagation.h plans each op by its sharding rule),
// rewrites split values to their per-rank types, and inserts the
// collectives the layouts need, each with its reason. The cases a rule
// cannot state -- they need the engine's state or build new ops -- are
// named patterns (PartitionPatterns.cpp), which use the API below.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_LIB_TRANSFORMS_PARALLEL_AXISPARTITIONER_H
#define DTC_LIB_TRANSFORMS_PARALLEL_AXISPARTITIONER_H

#include "Partitioner.h"
#include "ShardingPropagation.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <string>

namespace mlir::dtc {

class AxisPartitioner {
public:
  /// Partitions over the batch (no `resultSplit`: every model input split
  /// along dimension 0) or from the `seeds`.
  AxisPartitioner(func::FuncOp func, int64_t ranks, FlatSymbolRefAttr mesh,
                  StringRef axis, StringRef purpose,
                  ArrayRef<SplitArgument> seeds = {},
                  llvm::function_ref<std::optional<SplitArgument>(unsigned)>
                      resultSplit = nullptr,
                  int64_t sequenceLength = 0);

  /// Whether the shards are ranks of a mesh (not gradient accumulation's
  /// microbatches), so that values may depend on the rank.
  void setRankIndexed(bool indexed) { rankIndexed = indexed; }

  LogicalResult run();

  //===--------------------------------------------------------------------===//
  // For the named patterns
  //===--------------------------------------------------------------------===//

  AxisLayout layoutOf(Value value) const { return layouts.lookup(value); }
  void setLayout(Value value, AxisLayout layout) { layouts[value] = layout; }
  /// `value`'s type on one device: its per-rank type with a split
  /// dimension whole again.
  RankedTensorType globalType(Value value) const;
  bool anyOperand(Operation *op, AxisLayout::Kind kind) const;

  /// Rewrites `value` to its per-rank type, split along `dim` (in `blocks`
  /// blocks); an error on `where` when the dimension does not divide.
  LogicalResult split(Value value, int64_t dim, Operation *where,
                      int64_t blocks = 1);
  /// The whole of split `value`: all-gathered (and put back in block
  /// order), once, right after it.
  Value gather(Value value, Location loc, const std::string &why);
  /// The sum over the axis of `partial`, right after it: all-reduced or,
  /// with sequence parallelism (`mayScatter`), an activation's part of the
  /// sequence, reduce-scattered.
  Value sumOverAxis(Value partial, Location loc, const std::string &why,
                    bool mayScatter);
  Value allReduce(Value value, Location loc, const std::string &why,
                  CollectiveReduction kind = CollectiveReduction::Sum);
  /// Where this rank's chunk of `size` starts along a split of `size`
  /// times the ranks over this axis (a scalar of the integer `type`).
  Value chunkStart(int64_t size, Type type, Location loc);
  /// A scalar constant of `type`.
  Value scalar(Location loc, Type type, int64_t value);
  /// Whether `value` is a splat constant zero (float).
  static bool isZero(Value value);
  /// Whether the ranks are a mesh axis (see setRankIndexed).
  bool isRankIndexed() const { return rankIndexed; }
  /// Whether this partitions the batch (data parallelism, microbatches).
  bool partitionsBatch() const { return batch; }
  /// What result `index` of the function should end up as: split as the
  /// returned argument says (its `index` unused), or whole.
  std::optional<SplitArgument> wantedResultSplit(unsigned index) const {
    return batch ? std::nullopt : resultSplit(index);
  }
  StringRef getAxis() const { return axis; }
  int64_t getRanks() const { return ranks; }
  /// "data-parallel: 'dtc.matmul' (/h.0/attn/MatMul)": the start of every
  /// reason and diagnostic about `op`.
  std::string describe(Operation *op) const;
  /// "the batch" or "the split over 'tp'".
  std::string splitName() const;
  const std::string &getPurpose() const { return purpose; }
  OpBuilder &builder() { return b; }

private:
  /// Partitions `op`, or (succeeding) says in `notApplicable` why its
  /// operands' layouts do not let it run on parts; fails, with an error,
  /// only when the program cannot be partitioned at all.
  LogicalResult partition(Operation *op, std::string &notApplicable);
  LogicalResult partitionOrGather(Operation *op);
  LogicalResult applyPlan(Operation *op, const OpPlan &plan);
  PlanOptions planOptions(Operation *op) const;
  SmallVector<RankedTensorType> globalOperandTypes(Operation *op) const;
  bool passesPartials(Operation *op) const;
  void materialize(Operation *op);
  void reduceSharedPartials(Operation *op);
  LogicalResult localize(OpOperand &use, int64_t dim, int64_t blocks = 1);
  bool uniformAlong(Value value, int64_t dim) const;
  bool scattersAlongSequence(Value partial) const;
  void fuseReduceScatters();
  void fuseNestedSums();

  func::FuncOp func;
  int64_t ranks;
  FlatSymbolRefAttr mesh;
  std::string axis, purpose;
  /// Splitting the batch (no seeds, no rank-dependent slices, results
  /// whole) rather than seeded arguments.
  bool batch;
  ArrayRef<SplitArgument> seeds;
  llvm::function_ref<std::optional<SplitArgument>(unsigned)> resultSplit;
  /// Sequence parallelism: partial activations [batch, sequence, features]
  /// of this sequence length are reduce-scattered along the sequence.
  int64_t sequenceLength;
  bool rankIndexed = true;
  OpBuilder b;
  llvm::DenseMap<Value, AxisLayout> layouts;
  llvm::DenseMap<Value, Value> materialized, gathered;
  /// Ops the partitioner made that need no partitioning (a mean's scale).
  llvm::DenseSet<Operation *> inserted;
  llvm::DenseSet<Value> pinned;

};

/// A case the sharding rules cannot state, partitioned its own way.
struct PartitionPattern {
  const char *name;
  /// Whether the pattern takes `op`, laid out as it is now.
  bool (*matches)(AxisPartitioner &, Operation *);
  /// Partitions `op`; or, changing nothing, says why it cannot in
  /// `notApplicable` (the engine then gathers its operands).
  LogicalResult (*apply)(AxisPartitioner &, Operation *,
                         std::string &notApplicable);
};

/// The named patterns, in the order the engine tries them (before the
/// op's rule): vocabulary-parallel embedding gradients, caller-placed
/// shards, vocabulary-parallel log-softmax and lookups, dropout offsets.
ArrayRef<PartitionPattern> getPartitionPatterns();

} // namespace mlir::dtc

#endif // DTC_LIB_TRANSFORMS_PARALLEL_AXISPARTITIONER_H
