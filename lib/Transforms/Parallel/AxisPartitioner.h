//===- AxisPartitioner.h - a step's program for one rank of an axis -*- C++ -*-===//
//
// The stateful half of the propagation engine: a forward walk over the
// step that gives every value a layout over one mesh axis from its
// operands' (ShardingPropagation.h plans each op by its sharding rule) and
// decides the collectives the layouts need, each with its reason. It runs
// in one of two modes:
//  - rewrite: split values take their per-rank types and the collectives
//    are inserted (the parallel passes);
//  - analysis: nothing changes; every value's layout and the collectives a
//    rewrite would insert (kinds, bytes, reasons) are recorded, so that a
//    planner can weigh many layouts cheaply.
// The cases a rule cannot state are named patterns (PartitionPatterns.cpp),
// which use the API below.
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

/// A value as an operand sees it. Rewriting, `value` is what the operand
/// reads (a gather's or sum's result, say); analysing, it is the original
/// value, seen with another layout.
struct SeenValue {
  Value value;
  AxisLayout layout;
  /// Analysis: the sum (an index into the recorded collectives) whose
  /// result this is, to find sums whose readers all keep one part.
  int sum = -1;
  /// Made by a collective: no part of it is known without the rank.
  bool collective = false;
};

/// How attention runs when its queries, keys and values are split along
/// the tokens (context parallelism).
enum class TokenSplitAttention {
  /// Each rank's queries attend to the keys and values gathered whole; the
  /// backward's key and value gradients are reduce-scattered back.
  GatherKeys,
  /// DeepSpeed-Ulysses: all-to-alls turn the token split into a split of
  /// the heads around attention and its gradient, and back.
  ExchangeHeads,
  /// Ring attention: the key and value blocks pass around the ring of
  /// ranks (RingAttention.cpp), the tokens in zigzag order.
  Ring,
};

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
  /// Analyse instead of rewriting (before run()).
  void setAnalysisOnly() { analysis = true; }
  /// Refuse (with an error) every resharding an op's layouts force.
  void setStrict(bool refuse) { strict = refuse; }
  void setTokenSplitAttention(TokenSplitAttention how) {
    tokenSplitAttention = how;
  }
  /// The split dimensions are tokens in zigzag order (zigzagOrder): this
  /// rank's part of a replicated value is cut from it so permuted, and a
  /// gathered value is put back in order.
  void setZigzag(bool zigzagOrder) { zigzag = zigzagOrder; }
  /// A gather that resolves a conflict between operands split along
  /// different dimensions is the layouts' design, not a resharding: expert
  /// parallelism's exchange of the tokens a rank holds for the experts it
  /// holds (an all-to-all where the gathered operand is cut along the
  /// experts, an all-gather of the tokens where every expert reads them).
  void setExchangesAreDesign(bool design) { exchangesAreDesign = design; }
  bool isZigzag() const { return zigzag; }

  LogicalResult run();

  /// Analysis: every value's layout, and the collectives the rewrite would
  /// insert or change, after its clean-up (sums that every reader cuts
  /// become reduce-scatters; a sum feeding a sum over other axes joins it).
  const llvm::DenseMap<Value, AxisLayout> &getLayouts() const {
    return layouts;
  }
  ArrayRef<PlannedCollective> getCollectives() const { return collectives; }
  ArrayRef<std::pair<Operation *, std::string>> getFallbacks() const {
    return fallbacks;
  }

  //===--------------------------------------------------------------------===//
  // For the named patterns
  //===--------------------------------------------------------------------===//

  bool isAnalysis() const { return analysis; }
  /// The layout of `value` itself, and as operand `use` sees it.
  AxisLayout layoutOf(Value value) const { return layouts.lookup(value); }
  AxisLayout layoutOf(OpOperand &use) const { return seen(use).layout; }
  void setLayout(Value value, AxisLayout layout) { layouts[value] = layout; }
  /// `value`'s type on one device: rewriting, its per-rank type with a
  /// split dimension whole again.
  RankedTensorType globalType(Value value) const;
  bool anyOperand(Operation *op, AxisLayout::Kind kind) const;

  /// Rewrites `value` to its per-rank type (analysing: records the
  /// layout), split along `dim` (in `blocks` blocks); an error on `where`
  /// when the dimension does not divide.
  LogicalResult split(Value value, int64_t dim, Operation *where,
                      int64_t blocks = 1);
  /// `use` reads the whole of its split operand: all-gathered (and put
  /// back in block order), once per value, right after it; `resharding`
  /// marks the gather as the way out of a layout conflict.
  void gatherOperand(OpOperand &use, const std::string &why,
                     bool resharding = false);
  /// The same, and every reader of the operand after `use`'s owner reads
  /// the whole too: what one op gathered, the later ones (its backward)
  /// need not gather again.
  void gatherForLaterReaders(OpOperand &use, const std::string &why);
  /// The sum over the axis of `partial`, right after it: all-reduced or,
  /// with sequence parallelism (`mayScatter`), an activation's part of the
  /// sequence, reduce-scattered.
  SeenValue sumOverAxis(Value partial, Location loc, const std::string &why,
                        bool mayScatter);
  /// Rewriting: an all-reduce of `value`; analysing: its record.
  SeenValue allReduce(Value value, Location loc, const std::string &why,
                      CollectiveReduction kind = CollectiveReduction::Sum);
  /// Analysis: an all-reduce of a value of `type` that the rewrite would
  /// make (a row statistic of a split log-softmax).
  void recordAllReduce(RankedTensorType type, Location loc,
                       const std::string &why, CollectiveReduction kind);
  /// Analysis: `result`, a partial sum, is summed right where it is made,
  /// for every reader.
  void sumResult(Value result, const std::string &why);
  /// Analysis: `use` keeps only this rank's part (along `dim`, in
  /// `blocks`) of what it reads, as a shard op would.
  void noteCut(OpOperand &use, int64_t dim, int64_t blocks);
  /// Where this rank's chunk of `size` starts along a split of `size`
  /// times the ranks over this axis (a scalar of the integer `type`).
  Value chunkStart(int64_t size, Type type, Location loc);
  /// A scalar constant of `type`.
  Value scalar(Location loc, Type type, int64_t value);
  /// `value` with dimension `dim` permuted by the zigzag order of its
  /// tokens over the ranks, or (`toNatural`) back from it.
  Value permuteTokens(Value value, int64_t dim, bool toNatural, Location loc);
  /// Erases `op` once every op is partitioned (a pattern replaced it and
  /// another op, partitioned later, still reads it).
  void eraseLater(Operation *op) { erased.push_back(op); }
  /// Values a pattern keeps for a later one, by op (ring attention's
  /// forward, for its gradient).
  SmallVector<Value> &patternState(Operation *op) { return state[op]; }
  /// Partitions `op` by its sharding rule (the engine's generic path); or,
  /// changing nothing, says why it cannot in `notApplicable`.
  LogicalResult partitionByRule(Operation *op, std::string &notApplicable);
  /// Gives `use` this rank's part of its replicated operand along `dim`
  /// (in `blocks` blocks).
  LogicalResult localize(OpOperand &use, int64_t dim, int64_t blocks = 1);
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
  FlatSymbolRefAttr getMeshAttr() const { return mesh; }
  TokenSplitAttention getTokenSplitAttention() const {
    return tokenSplitAttention;
  }
  int64_t getRanks() const { return ranks; }
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
  LogicalResult reshard(OpOperand &use, const std::string &why);
  LogicalResult applyPlan(Operation *op, const OpPlan &plan);
  LogicalResult partitionResults();
  PlanOptions planOptions(Operation *op) const;
  SmallVector<RankedTensorType> globalOperandTypes(Operation *op) const;
  SmallVector<AxisLayout> operandLayouts(Operation *op) const;
  bool passesPartials(Operation *op) const;
  void materialize(Operation *op);
  void reduceSharedPartials(Operation *op);
  bool uniformAlong(Value value, int64_t dim) const;
  bool scattersAlongSequence(Value partial) const;
  bool isTokenRows(Value value, int depth = 0) const;
  bool isSequencePart(Value value) const;
  SeenValue seen(OpOperand &use) const;
  void setOperand(OpOperand &use, SeenValue value);
  void countReads(Operation *op);
  int record(PlannedCollective collective);
  void fuseReduceScatters();
  void fuseNestedSums();
  void fusePlannedSums();

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
  /// of this sequence length are reduce-scattered along the sequence, and
  /// so are those of the batch's `tokens` rows [batch x sequence,
  /// features] (a Gemm's), each sequence apart.
  int64_t sequenceLength, tokens = 0;
  bool rankIndexed = true;
  bool analysis = false;
  bool strict = false;
  TokenSplitAttention tokenSplitAttention = TokenSplitAttention::GatherKeys;
  bool zigzag = false;
  bool exchangesAreDesign = false;
  OpBuilder b;
  SmallVector<Operation *> erased;
  llvm::DenseMap<Operation *, SmallVector<Value>> state;
  llvm::DenseMap<Value, AxisLayout> layouts;
  llvm::DenseMap<Value, SeenValue> materialized, gathered;
  /// Ops the partitioner made that need no partitioning (a mean's scale).
  llvm::DenseSet<Operation *> inserted;
  llvm::DenseSet<Value> pinned;

  /// Analysis state: what each operand sees instead of its value, what a
  /// value stands for once all its uses would read another (a shared
  /// partial's sum), and per recorded sum, how its readers read it.
  llvm::DenseMap<OpOperand *, SeenValue> operandSeen;
  llvm::DenseMap<Value, SeenValue> valueSeen;
  struct SumReads {
    int64_t reads = 0;
    SmallVector<std::pair<int64_t, int64_t>> cuts; // (dim, blocks)
    SmallVector<Operation *> readers;
  };
  llvm::DenseMap<int, SumReads> sumReads;
  SmallVector<PlannedCollective> collectives;
  SmallVector<std::pair<Operation *, std::string>> fallbacks;
};

/// A case the sharding rules cannot state, partitioned its own way.
struct PartitionPattern {
  const char *name;
  /// Whether the pattern takes `op`, laid out as it is now.
  bool (*matches)(AxisPartitioner &, Operation *);
  /// Partitions (or, analysing, records) `op`; or, changing nothing, says
  /// why it cannot in `notApplicable` (the engine then gathers its
  /// operands).
  LogicalResult (*apply)(AxisPartitioner &, Operation *,
                         std::string &notApplicable);
};

/// The named patterns, in the order the engine tries them (before the
/// op's rule): vocabulary-parallel embedding gradients, caller-placed
/// shards, gathers, shards and reduce-scatters over other axes along the
/// split, vocabulary-parallel log-softmax and lookups, dropout offsets.
ArrayRef<PartitionPattern> getPartitionPatterns();

} // namespace mlir::dtc

#endif // DTC_LIB_TRANSFORMS_PARALLEL_AXISPARTITIONER_H
