//===- ShardingPropagation.h - layouts through an op by its rule -*- C++ -*-===//
//
// The propagation engine's pure part: given how an op's operands are laid
// out over one mesh axis, its sharding rule (ShardingRuleOpInterface) says
// how its results are laid out and what each operand must become first
// (this rank's part of a replicated operand, or the whole of a split one
// the op cannot use split). Nothing here changes the IR: the partitioner
// (AxisPartitioner.cpp) applies the plan, and an analysis can evaluate layouts
// without rewriting anything. When no plan exists the answer is "not
// applicable", with the reason, never an error.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_LIB_TRANSFORMS_PARALLEL_SHARDINGPROPAGATION_H
#define DTC_LIB_TRANSFORMS_PARALLEL_SHARDINGPROPAGATION_H

#include "dtc/Dialect/DTC/IR/DTCOps.h"

#include <string>

namespace mlir::dtc {

/// How a value is laid out over one mesh axis of `ranks` ranks.
struct AxisLayout {
  enum class Kind { Replicated, Split, Partial };
  Kind kind = Kind::Replicated;
  /// Split: the dimension, viewed as `blocks` equal blocks of which each
  /// rank holds its chunk (the heads of a fused QKV projection).
  int64_t dim = -1;
  int64_t blocks = 1;

  static AxisLayout split(int64_t dim, int64_t blocks = 1) {
    return {Kind::Split, dim, blocks};
  }
  static AxisLayout partial() { return {Kind::Partial, -1, 1}; }
  bool isSplit() const { return kind == Kind::Split; }
  bool isPartial() const { return kind == Kind::Partial; }
  bool isReplicated() const { return kind == Kind::Replicated; }
};

/// What the engine does to one operand before the op runs per rank: as
/// it is, unless `gather` (a split operand the op cannot use split as it
/// is, gathered whole) or `localizeDim` (a replicated one, cut to this
/// rank's part along that dimension in `blocks` blocks), or both.
struct OperandAction {
  bool gather = false;
  int64_t localizeDim = -1;
  int64_t blocks = 1;
  bool localizes() const { return localizeDim >= 0; }
};

/// An op's per-rank form: its operands' actions and its results' layouts.
struct OpPlan {
  SmallVector<OperandAction> operands;
  SmallVector<AxisLayout> results;
  /// Set when a split reduction makes the results partial: a mean's parts
  /// must also be divided by the rank count.
  std::optional<FactorReduction> partialReduction;
};

/// What the planner may ask of the IR and may do.
struct PlanOptions {
  int64_t ranks = 1;
  /// Whether a split operand may be gathered to resolve a conflict (not
  /// over the batch, whose shards never exist whole).
  bool mayGather = false;
  /// Whether operand `index` of the op is a zero constant (a scatter's
  /// destination may be one when its result is a partial sum).
  std::function<bool(unsigned index)> isZero;
};

/// The plan for `op`, whose operands (of `operandTypes`, global shapes;
/// results `resultTypes`) are laid out as `layouts` (none partial; at
/// least one split). Fails with `whyNot` when the rule cannot keep the
/// operands' splits.
FailureOr<OpPlan> planByRule(ShardingRuleOpInterface op,
                             ArrayRef<RankedTensorType> operandTypes,
                             ArrayRef<RankedTensorType> resultTypes,
                             ArrayRef<AxisLayout> layouts,
                             const PlanOptions &options, std::string &whyNot);

/// Whether `op` may run on operands that are partial sums (laid out as
/// `layouts`, none split), its results partial sums too: its rule is
/// linear in them.
bool passesPartialSums(ShardingRuleOpInterface op,
                       ArrayRef<RankedTensorType> operandTypes,
                       ArrayRef<RankedTensorType> resultTypes,
                       ArrayRef<AxisLayout> layouts,
                       const PlanOptions &options);

} // namespace mlir::dtc

#endif // DTC_LIB_TRANSFORMS_PARALLEL_SHARDINGPROPAGATION_H
