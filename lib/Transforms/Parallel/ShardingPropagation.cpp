//===- ShardingPropagation.cpp - layouts through an op by its rule --------===//
//
// A split of dimension d in B blocks over n ranks puts the ranks' index at
// one place of the dimension's factors: after a major part B (the blocks),
// inside one factor f of which the rank's chunk is a 1/(q n) part, q = B /
// (the factors before f). Every other tensor that has f is then split at
// the same place: the dimension that holds f, in (the factors before f
// there) * q blocks. Operands that disagree on that place are a conflict:
// one is gathered (the one split along a contraction first, else the one
// whose factor fewer operands share, else the first) and the plan retried.
//
//===----------------------------------------------------------------------===//

#include "ShardingPropagation.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// Where a split falls among a dimension's factors.
struct Place {
  int64_t factor;
  int64_t q;
  bool operator==(const Place &other) const {
    return factor == other.factor && q == other.q;
  }
};

/// The place of a split in `blocks` blocks over `ranks` ranks of a
/// dimension made of `dimFactors`; none when the rank's chunk does not lie
/// inside one factor.
std::optional<Place> locate(ArrayRef<int64_t> dimFactors,
                            ArrayRef<ShardingFactor> factors, int64_t blocks,
                            int64_t ranks) {
  int64_t before = 1;
  for (int64_t f : dimFactors) {
    int64_t size = factors[f].size;
    if (blocks % before == 0 && size % (blocks / before * ranks) == 0)
      return Place{f, blocks / before};
    before *= size;
  }
  return std::nullopt;
}

/// The dimension of `tensor` that holds `factor`, and the product of the
/// factors before it there; none when no dimension holds it.
std::optional<std::pair<int64_t, int64_t>> find(const TensorFactors &tensor,
                                                ArrayRef<ShardingFactor> factors,
                                                int64_t factor) {
  for (auto [d, dimFactors] : llvm::enumerate(tensor)) {
    int64_t before = 1;
    for (int64_t f : dimFactors) {
      if (f == factor)
        return std::make_pair(static_cast<int64_t>(d), before);
      before *= factors[f].size;
    }
  }
  return std::nullopt;
}

} // namespace

FailureOr<OpPlan> mlir::dtc::planByRule(ShardingRuleOpInterface op,
                                        ArrayRef<RankedTensorType> operandTypes,
                                        ArrayRef<RankedTensorType> resultTypes,
                                        ArrayRef<AxisLayout> layouts,
                                        const PlanOptions &options,
                                        std::string &whyNot) {
  OpShardingRule rule = op.getShardingRule(operandTypes, resultTypes);
  ArrayRef<ShardingFactor> factors = rule.getFactors();
  int64_t n = options.ranks;
  unsigned numOperands = operandTypes.size();
  OpPlan plan;
  plan.operands.resize(numOperands);
  SmallVector<AxisLayout> in(layouts);
  auto holders = [&](int64_t factor) {
    return llvm::count_if(llvm::seq(numOperands), [&](unsigned i) {
      return find(rule.getOperand(i), factors, factor).has_value();
    });
  };

  // The place every split operand puts the ranks at; gather until they
  // agree.
  std::optional<Place> chosen;
  while (true) {
    SmallVector<std::optional<Place>> places(numOperands);
    chosen.reset();
    bool conflict = false;
    for (unsigned i = 0; i < numOperands; ++i) {
      if (!in[i].isSplit())
        continue;
      places[i] = locate(rule.getOperand(i)[in[i].dim], factors,
                         in[i].blocks, n);
      if (!places[i]) {
        whyNot = "operand #" + std::to_string(i) +
                 " is split along dimension " + std::to_string(in[i].dim) +
                 " in parts that do not line up with how the op regroups "
                 "that dimension";
        return failure();
      }
      if (chosen && !(*chosen == *places[i]))
        conflict = true;
      if (!chosen)
        chosen = places[i];
    }
    if (!conflict)
      break;
    if (!options.mayGather) {
      whyNot = "its operands are split along different dimensions";
      return failure();
    }
    // Keep the split that more operands share; gather one along a
    // contraction first.
    std::optional<unsigned> gathered;
    int64_t lowest = 0;
    for (unsigned i = 0; i < numOperands; ++i) {
      if (!places[i])
        continue;
      const ShardingFactor &factor = factors[places[i]->factor];
      int64_t score = factor.kind == FactorKind::Reduction
                          ? 0
                          : 1 + holders(places[i]->factor);
      if (!gathered || score < lowest) {
        gathered = i;
        lowest = score;
      }
    }
    plan.operands[*gathered].gather = true;
    in[*gathered] = AxisLayout();
  }

  plan.results.resize(resultTypes.size());
  if (!chosen)
    return plan; // all gathered: the op runs on whole operands
  const ShardingFactor &factor = factors[chosen->factor];
  if (factor.kind == FactorKind::NeedReplication) {
    unsigned i = *llvm::find_if(llvm::seq(numOperands),
                                [&](unsigned i) { return in[i].isSplit(); });
    whyNot = "it needs dimension " + std::to_string(in[i].dim) +
             " of operand #" + std::to_string(i) + " whole";
    return failure();
  }
  if (factor.kind == FactorKind::Reduction &&
      (factor.reduction == FactorReduction::Max ||
       factor.reduction == FactorReduction::Min)) {
    whyNot = "a maximum or minimum over the split dimension is not "
             "partitioned yet";
    return failure();
  }

  // Replicated operands that have the factor: this rank's part.
  for (unsigned j = 0; j < numOperands; ++j) {
    if (in[j].isSplit())
      continue;
    auto where = find(rule.getOperand(j), factors, chosen->factor);
    if (!where)
      continue;
    auto [dim, before] = *where;
    int64_t blocks = before * chosen->q;
    if (operandTypes[j].getDimSize(dim) % (blocks * n) != 0) {
      whyNot = "operand #" + std::to_string(j) + " of type " +
               std::to_string(operandTypes[j].getDimSize(dim)) +
               " does not split along dimension " + std::to_string(dim) +
               " over " + std::to_string(n) + " ranks";
      return failure();
    }
    plan.operands[j].localizeDim = dim;
    plan.operands[j].blocks = blocks;
  }

  if (factor.kind == FactorKind::Reduction) {
    for (unsigned a : rule.getAccumulators())
      if (!options.isZero || !options.isZero(a)) {
        whyNot = "the split dimension is summed into operand #" +
                 std::to_string(a) + ", which is not zero";
        return failure();
      }
    for (AxisLayout &result : plan.results)
      result = AxisLayout::partial();
    plan.partialReduction = factor.reduction;
    return plan;
  }
  for (unsigned r = 0; r < resultTypes.size(); ++r) {
    auto where = find(rule.getResult(r), factors, chosen->factor);
    if (!where) {
      whyNot = "result #" + std::to_string(r) +
               " does not have the split dimension";
      return failure();
    }
    plan.results[r] = AxisLayout::split(where->first,
                                        where->second * chosen->q);
  }
  return plan;
}

bool mlir::dtc::passesPartialSums(ShardingRuleOpInterface op,
                                  ArrayRef<RankedTensorType> operandTypes,
                                  ArrayRef<RankedTensorType> resultTypes,
                                  ArrayRef<AxisLayout> layouts,
                                  const PlanOptions &options) {
  OpShardingRule rule = op.getShardingRule(operandTypes, resultTypes);
  auto partial = [&](unsigned i) { return layouts[i].isPartial(); };
  unsigned numOperands = layouts.size();
  switch (rule.getLinearity()) {
  case Linearity::None:
    return false;
  case Linearity::Separate:
    return llvm::count_if(llvm::seq(numOperands), partial) == 1;
  case Linearity::Joint: {
    ArrayRef<unsigned> linear = rule.getLinearOperands();
    bool anyPartial = false;
    for (unsigned i = 0; i < numOperands; ++i) {
      bool inSet = llvm::is_contained(linear, i);
      if (!inSet && partial(i))
        return false;
      if (!inSet)
        continue;
      anyPartial |= partial(i);
      if (!partial(i) &&
          !(llvm::is_contained(rule.getAccumulators(), i) && options.isZero &&
            options.isZero(i)))
        return false;
    }
    return anyPartial;
  }
  }
  return false;
}
