//===- DTCOpShardingRules.cpp - each op's sharding rule -------------------===//
//
// ShardingRuleOpInterface for the ops whose rule is not the default
// (elementwise by trait, else whole): which operand dimensions map to which
// result dimensions, which are contracted or reduced, which must be whole,
// and in which operands the results are linear (partial sums).
//
//===----------------------------------------------------------------------===//

#include "dtc/Dialect/DTC/IR/DTCOps.h"

using namespace mlir;
using namespace mlir::dtc;

namespace {
using Dims = SmallVector<std::pair<unsigned, int64_t>>;
constexpr FactorKind kParallel = FactorKind::Parallel;
constexpr FactorKind kReduction = FactorKind::Reduction;
constexpr FactorKind kWhole = FactorKind::NeedReplication;
} // namespace

/// Input and results alike in every dimension but `along`, which each
/// needs whole (cumsum, softmax, top_k, arg_max), or (`before`) in every
/// dimension from `along` on, which operands `extra` (a norm's scale and
/// bias) have too, right-aligned.
static OpShardingRule alongDimRule(ArrayRef<RankedTensorType> operandTypes,
                                   ArrayRef<RankedTensorType> resultTypes,
                                   int64_t along, bool fromAlongOn = false) {
  OpShardingRule rule(operandTypes, resultTypes);
  RankedTensorType input = operandTypes[0];
  int64_t rank = input.getRank();
  for (int64_t d = 0; d < rank; ++d) {
    bool whole = fromAlongOn ? d >= along : d == along;
    Dims operands{{0, d}}, results;
    for (auto [i, type] : llvm::enumerate(operandTypes))
      if (i > 0 && whole && d - (rank - type.getRank()) >= 0)
        operands.push_back(
            {static_cast<unsigned>(i), d - (rank - type.getRank())});
    for (auto [i, type] : llvm::enumerate(resultTypes))
      if (type.getRank() == rank && type.getDimSize(d) == input.getDimSize(d))
        results.push_back({static_cast<unsigned>(i), d});
    if (whole) {
      // Results whose size differs there (top_k's k) have their own.
      rule.addShared(input.getDimSize(d), kWhole, operands, results);
      for (auto [i, type] : llvm::enumerate(resultTypes))
        if (type.getRank() == rank && type.getDimSize(d) != input.getDimSize(d))
          rule.addShared(type.getDimSize(d), kWhole, {},
                         {{static_cast<unsigned>(i), d}});
    } else {
      rule.addShared(input.getDimSize(d), kParallel, operands, results);
    }
  }
  return rule;
}

/// The collectives over some mesh axes: alike in every dimension but
/// `dims`, which each needs whole (a gather's, a scatter's dimension).
static OpShardingRule collectiveRule(RankedTensorType input,
                                     RankedTensorType result,
                                     ArrayRef<int64_t> dims) {
  OpShardingRule rule({input}, {result});
  for (int64_t d = 0; d < input.getRank(); ++d) {
    if (llvm::is_contained(dims, d)) {
      rule.addShared(input.getDimSize(d), kWhole, {{0, d}}, {});
      rule.addShared(result.getDimSize(d), kWhole, {}, {{0, d}});
    } else {
      rule.addShared(input.getDimSize(d), kParallel, {{0, d}}, {{0, d}});
    }
  }
  return rule;
}

/// An elementwise op (broadcasting or not) linear in all its operands
/// together: applied to partial sums it gives a partial sum.
static OpShardingRule
jointlyLinearElementwise(ArrayRef<RankedTensorType> operands,
                         ArrayRef<RankedTensorType> results) {
  OpShardingRule rule = OpShardingRule::elementwise(operands, results[0]);
  rule.setJointlyLinearInAll();
  return rule;
}

//===----------------------------------------------------------------------===//
// Elementwise ops that pass partial sums through
//===----------------------------------------------------------------------===//

OpShardingRule NegOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                      ArrayRef<RankedTensorType> results) {
  return jointlyLinearElementwise(operands, results);
}

OpShardingRule CastOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                       ArrayRef<RankedTensorType> results) {
  return jointlyLinearElementwise(operands, results);
}

OpShardingRule AddOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                      ArrayRef<RankedTensorType> results) {
  return jointlyLinearElementwise(operands, results);
}

OpShardingRule SubOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                      ArrayRef<RankedTensorType> results) {
  return jointlyLinearElementwise(operands, results);
}

OpShardingRule MulOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                      ArrayRef<RankedTensorType> results) {
  OpShardingRule rule = OpShardingRule::elementwise(operands, results[0]);
  rule.setSeparatelyLinear();
  return rule;
}

OpShardingRule DivOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                      ArrayRef<RankedTensorType> results) {
  OpShardingRule rule = OpShardingRule::elementwise(operands, results[0]);
  rule.setJointlyLinear({0});
  return rule;
}

/// Elementwise in the input; the step and the offset are whole.
OpShardingRule DropoutOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                          ArrayRef<RankedTensorType> results) {
  OpShardingRule rule(operands, results);
  RankedTensorType input = operands[0];
  for (int64_t d = 0; d < input.getRank(); ++d)
    rule.addShared(input.getDimSize(d), kParallel, {{0, d}}, {{0, d}});
  for (unsigned i = 1; i < operands.size(); ++i)
    for (int64_t d = 0; d < operands[i].getRank(); ++d)
      rule.addShared(operands[i].getDimSize(d), kWhole, {{i, d}}, {});
  return rule;
}

//===----------------------------------------------------------------------===//
// Contractions, reductions, normalizations
//===----------------------------------------------------------------------===//

/// Batch dimensions (broadcast), rows, columns, and the contraction.
OpShardingRule MatmulOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                         ArrayRef<RankedTensorType> results) {
  RankedTensorType lhs = operands[0], rhs = operands[1], out = results[0];
  int64_t l = lhs.getRank(), r = rhs.getRank(), o = out.getRank();
  bool tl = getTransposeLhs(), tr = getTransposeRhs();
  OpShardingRule rule(operands, results);
  for (int64_t d = 0; d < o - 2; ++d) {
    Dims holders;
    for (auto [i, type] : llvm::enumerate(operands)) {
      int64_t at = d - (o - type.getRank());
      if (at >= 0 && type.getDimSize(at) == out.getDimSize(d))
        holders.push_back({static_cast<unsigned>(i), at});
    }
    rule.addShared(out.getDimSize(d), kParallel, holders, {{0, d}});
  }
  rule.addShared(out.getDimSize(o - 2), kParallel, {{0, tl ? l - 1 : l - 2}},
                 {{0, o - 2}});
  rule.addShared(out.getDimSize(o - 1), kParallel, {{1, tr ? r - 2 : r - 1}},
                 {{0, o - 1}});
  rule.addShared(lhs.getDimSize(tl ? l - 2 : l - 1), kReduction,
                 {{0, tl ? l - 2 : l - 1}, {1, tr ? r - 1 : r - 2}}, {});
  rule.setSeparatelyLinear();
  return rule;
}

static OpShardingRule reduceRule(ArrayRef<RankedTensorType> operands,
                                 ArrayRef<RankedTensorType> results,
                                 ArrayRef<int64_t> dims, bool keepDims,
                                 FactorReduction reduction) {
  OpShardingRule rule(operands, results);
  RankedTensorType input = operands[0];
  int64_t kept = 0;
  for (int64_t d = 0; d < input.getRank(); ++d) {
    if (llvm::is_contained(dims, d)) {
      rule.addShared(input.getDimSize(d), kReduction, {{0, d}}, {}, reduction);
      kept += keepDims;
      continue;
    }
    rule.addShared(input.getDimSize(d), kParallel, {{0, d}}, {{0, kept++}});
  }
  return rule;
}

#define DTC_REDUCE_RULE(Op, Reduction, Linear)                                 \
  OpShardingRule Op::getShardingRule(ArrayRef<RankedTensorType> operands,      \
                                     ArrayRef<RankedTensorType> results) {     \
    OpShardingRule rule =                                                      \
        reduceRule(operands, results, getDims(), getKeepDims(),                \
                   FactorReduction::Reduction);                                \
    if (Linear)                                                                \
      rule.setJointlyLinearInAll();                                            \
    return rule;                                                               \
  }
DTC_REDUCE_RULE(ReduceSumOp, Sum, true)
DTC_REDUCE_RULE(ReduceMeanOp, Mean, false)
DTC_REDUCE_RULE(ReduceMaxOp, Max, false)
DTC_REDUCE_RULE(ReduceMinOp, Min, false)
#undef DTC_REDUCE_RULE

OpShardingRule ArgMaxOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                         ArrayRef<RankedTensorType> results) {
  OpShardingRule rule(operands, results);
  RankedTensorType input = operands[0];
  int64_t kept = 0, dim = getDim();
  for (int64_t d = 0; d < input.getRank(); ++d) {
    if (d == dim) {
      rule.addShared(input.getDimSize(d), kWhole, {{0, d}}, {});
      kept += getKeepDims();
      continue;
    }
    rule.addShared(input.getDimSize(d), kParallel, {{0, d}}, {{0, kept++}});
  }
  return rule;
}

OpShardingRule CumSumOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                         ArrayRef<RankedTensorType> results) {
  return alongDimRule(operands, results, getDim());
}

OpShardingRule SoftmaxOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                          ArrayRef<RankedTensorType> results) {
  return alongDimRule(operands, results, getDim());
}

OpShardingRule
LogSoftmaxOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                              ArrayRef<RankedTensorType> results) {
  return alongDimRule(operands, results, getDim());
}

OpShardingRule TopKOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                       ArrayRef<RankedTensorType> results) {
  return alongDimRule(operands, results, getDim());
}

/// The normalized dimensions (from `dim` on) are whole, the scale's and
/// the bias's too; the statistics are 1 there.
OpShardingRule
LayerNormOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                             ArrayRef<RankedTensorType> results) {
  return alongDimRule(operands, results, getDim(), /*fromAlongOn=*/true);
}

OpShardingRule RMSNormOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                          ArrayRef<RankedTensorType> results) {
  return alongDimRule(operands, results, getDim(), /*fromAlongOn=*/true);
}

/// Every dimension but the rotated one passes through, with the angles'
/// dimensions of that size (right-aligned; broadcast ones stay whole); the
/// features, whose pairs meet, and the angles' pairs are whole.
OpShardingRule RotaryOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                         ArrayRef<RankedTensorType> results) {
  OpShardingRule rule(operands, results);
  RankedTensorType input = operands[0];
  int64_t rank = input.getRank();
  for (int64_t d = 0; d + 1 < rank; ++d) {
    Dims dims{{0, d}};
    for (unsigned angles : {1u, 2u}) {
      int64_t at = d - (rank - operands[angles].getRank());
      if (at >= 0 && operands[angles].getDimSize(at) == input.getDimSize(d))
        dims.push_back({angles, at});
    }
    rule.addShared(input.getDimSize(d), kParallel, dims, {{0, d}});
  }
  rule.addShared(input.getDimSize(rank - 1), kWhole, {{0, rank - 1}},
                 {{0, rank - 1}});
  rule.addShared(
      getRotaryDim() / 2, kWhole,
      {{1, operands[1].getRank() - 1}, {2, operands[2].getRank() - 1}}, {});
  return rule;
}

/// Where operand `mask` of an attention (right-aligned against the scores
/// [batch, heads, queries, keys]) has scores dimension `d` of `size`, not
/// broadcast; nothing without a mask.
static Dims attentionMaskDim(ArrayRef<RankedTensorType> operands,
                             std::optional<unsigned> mask, int64_t d,
                             int64_t size) {
  if (!mask)
    return {};
  int64_t at = d - (4 - operands[*mask].getRank());
  if (at < 0 || operands[*mask].getDimSize(at) != size)
    return {};
  return {{*mask, at}};
}

static Dims with(Dims dims, const Dims &more) {
  dims.append(more.begin(), more.end());
  return dims;
}

/// Batch, query heads and queries pass through (the heads as [kv_heads,
/// group], so that k and v split with the query heads they serve), as do
/// v's features; the keys and the contracted features are whole. A mask is
/// right-aligned against the scores [batch, heads, queries, keys].
OpShardingRule
AttentionOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                             ArrayRef<RankedTensorType> results) {
  RankedTensorType q = operands[0], k = operands[1], v = operands[2];
  OpShardingRule rule(operands, results);
  std::optional<unsigned> mask;
  if (getMask())
    mask = 1 + 2; // after q, k, v
  auto maskDim = [&](int64_t d, int64_t size) {
    return attentionMaskDim(operands, mask, d, size);
  };
  // The result, then the probabilities [batch, heads, queries, keys].
  rule.addShared(q.getDimSize(0), kParallel,
                 with({{0, 0}, {1, 0}, {2, 0}}, maskDim(0, q.getDimSize(0))),
                 {{0, 0}, {1, 0}});
  int64_t kvHeads = k.getDimSize(1), group = q.getDimSize(1) / kvHeads;
  Dims maskHeads = maskDim(1, q.getDimSize(1));
  rule.addShared(kvHeads, kParallel, with({{0, 1}, {1, 1}, {2, 1}}, maskHeads),
                 {{0, 1}, {1, 1}});
  rule.addShared(group, kParallel, with({{0, 1}}, maskHeads), {{0, 1}, {1, 1}});
  rule.addShared(q.getDimSize(2), kParallel,
                 with({{0, 2}}, maskDim(2, q.getDimSize(2))), {{0, 2}, {1, 2}});
  rule.addShared(k.getDimSize(2), kWhole,
                 with({{1, 2}, {2, 2}}, maskDim(3, k.getDimSize(2))), {{1, 3}});
  rule.addShared(q.getDimSize(3), kWhole, {{0, 3}, {1, 3}}, {});
  rule.addShared(v.getDimSize(3), kParallel, {{2, 3}}, {{0, 3}});
  // The dropout's step and offset.
  for (unsigned i = mask ? 4 : 3; i < operands.size(); ++i)
    for (int64_t d = 0; d < operands[i].getRank(); ++d)
      rule.addShared(operands[i].getDimSize(d), kWhole, {{i, d}}, {});
  return rule;
}

/// The batch and the key/value heads pass through (a key/value head with
/// the query heads it serves). Everything else is whole: a split of the
/// queries or of a key/value head's group of query heads leaves dK and dV
/// partial sums and dQ split, which a rule cannot state (context
/// parallelism's patterns partition the queries); keys and features are
/// contracted on one side and kept on the other.
OpShardingRule
AttentionGradOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                 ArrayRef<RankedTensorType> results) {
  RankedTensorType q = operands[0], k = operands[1];
  OpShardingRule rule(operands, results);
  constexpr unsigned probs = 3, resultGrad = 4;
  std::optional<unsigned> mask;
  if (getMask())
    mask = 5;
  auto maskDim = [&](int64_t d, int64_t size) {
    return attentionMaskDim(operands, mask, d, size);
  };
  rule.addShared(q.getDimSize(0), kParallel,
                 with({{0, 0}, {1, 0}, {2, 0}, {probs, 0}, {resultGrad, 0}},
                      maskDim(0, q.getDimSize(0))),
                 {{0, 0}, {1, 0}, {2, 0}});
  int64_t kvHeads = k.getDimSize(1), group = q.getDimSize(1) / kvHeads;
  Dims maskHeads = maskDim(1, q.getDimSize(1));
  rule.addShared(
      kvHeads, kParallel,
      with({{0, 1}, {1, 1}, {2, 1}, {probs, 1}, {resultGrad, 1}}, maskHeads),
      {{0, 1}, {1, 1}, {2, 1}});
  rule.addShared(group, kWhole,
                 with({{0, 1}, {probs, 1}, {resultGrad, 1}}, maskHeads),
                 {{0, 1}});
  int64_t queries = q.getDimSize(2), keys = k.getDimSize(2);
  rule.addShared(
      queries, kWhole,
      with({{0, 2}, {probs, 2}, {resultGrad, 2}}, maskDim(2, queries)),
      {{0, 2}});
  rule.addShared(keys, kWhole,
                 with({{1, 2}, {2, 2}, {probs, 3}}, maskDim(3, keys)),
                 {{1, 2}, {2, 2}});
  rule.addShared(q.getDimSize(3), kWhole, {{0, 3}, {1, 3}}, {{0, 3}, {1, 3}});
  rule.addShared(operands[2].getDimSize(3), kWhole, {{2, 3}, {resultGrad, 3}},
                 {{2, 3}});
  // The dropout's step and offset.
  for (unsigned i = mask ? 6 : 5; i < operands.size(); ++i)
    for (int64_t d = 0; d < operands[i].getRank(); ++d)
      rule.addShared(operands[i].getDimSize(d), kWhole, {{i, d}}, {});
  return rule;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

/// result = input[..., indices[...], ...]: the indexed dimension is whole;
/// the others and the indices' dimensions pass through.
OpShardingRule GatherOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                         ArrayRef<RankedTensorType> results) {
  RankedTensorType input = operands[0], indices = operands[1];
  int64_t dim = getDim(), idxRank = indices.getRank();
  OpShardingRule rule(operands, results);
  for (int64_t d = 0; d < input.getRank(); ++d) {
    if (d == dim)
      rule.addShared(input.getDimSize(d), kWhole, {{0, d}}, {});
    else
      rule.addShared(input.getDimSize(d), kParallel, {{0, d}},
                     {{0, d < dim ? d : d - 1 + idxRank}});
  }
  for (int64_t d = 0; d < idxRank; ++d)
    rule.addShared(indices.getDimSize(d), kParallel, {{1, d}}, {{0, dim + d}});
  rule.setJointlyLinear({0});
  return rule;
}

/// result[i] = input[.., indices[i], ..] along `dim`: the result has the
/// indices' shape; the input is shared only where its size agrees.
OpShardingRule
GatherElementsOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                  ArrayRef<RankedTensorType> results) {
  RankedTensorType input = operands[0], indices = operands[1];
  OpShardingRule rule(operands, results);
  for (int64_t d = 0; d < input.getRank(); ++d) {
    bool same = d != static_cast<int64_t>(getDim()) &&
                input.getDimSize(d) == indices.getDimSize(d);
    if (!same)
      rule.addShared(input.getDimSize(d), kWhole, {{0, d}}, {});
    rule.addShared(indices.getDimSize(d), kParallel,
                   same ? Dims{{0, d}, {1, d}} : Dims{{1, d}}, {{0, d}});
  }
  return rule;
}

/// The adjoint of gather_elements: positions along `dim` add up.
OpShardingRule
ScatterElementsAddOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                      ArrayRef<RankedTensorType> results) {
  RankedTensorType input = operands[0], indices = operands[1];
  OpShardingRule rule(operands, results);
  for (int64_t d = 0; d < input.getRank(); ++d) {
    bool along = d == static_cast<int64_t>(getDim());
    if (!along && input.getDimSize(d) == indices.getDimSize(d)) {
      rule.addShared(input.getDimSize(d), kParallel, {{0, d}, {1, d}, {2, d}},
                     {{0, d}});
      continue;
    }
    rule.addShared(input.getDimSize(d), kWhole, {{0, d}}, {{0, d}});
    rule.addShared(indices.getDimSize(d), along ? kReduction : kWhole,
                   {{1, d}, {2, d}}, {});
  }
  rule.setJointlyLinear({0, 2}, /*accumulators=*/{0});
  return rule;
}

/// The adjoint of gather: the indices' dimensions add up into the rows
/// they name.
/// A scatter: the input's dimensions pass through but `dim`, which is
/// whole; the indices' dimensions are `indexKind` (a scatter_add's sum over
/// them is a reduction).
static OpShardingRule scatterRule(ArrayRef<RankedTensorType> operands,
                                  ArrayRef<RankedTensorType> results,
                                  int64_t dim, FactorKind indexKind) {
  RankedTensorType input = operands[0], indices = operands[1];
  int64_t idxRank = indices.getRank();
  OpShardingRule rule(operands, results);
  for (int64_t d = 0; d < input.getRank(); ++d) {
    if (d == dim)
      rule.addShared(input.getDimSize(d), kWhole, {{0, d}}, {{0, d}});
    else
      rule.addShared(input.getDimSize(d), kParallel,
                     {{0, d}, {2, d < dim ? d : d - 1 + idxRank}}, {{0, d}});
  }
  for (int64_t d = 0; d < idxRank; ++d)
    rule.addShared(indices.getDimSize(d), indexKind, {{1, d}, {2, dim + d}},
                   {});
  return rule;
}

OpShardingRule
ScatterAddOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                              ArrayRef<RankedTensorType> results) {
  OpShardingRule rule = scatterRule(operands, results, getDim(), kReduction);
  rule.setJointlyLinear({0, 2}, /*accumulators=*/{0});
  return rule;
}

/// Products, maxima and minima are no partial sums: the updates combine
/// whole.
OpShardingRule
ScatterReduceOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                 ArrayRef<RankedTensorType> results) {
  return scatterRule(operands, results, getDim(), kWhole);
}

OpShardingRule ReshapeOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                          ArrayRef<RankedTensorType> results) {
  return OpShardingRule::reshape(operands[0], results[0]);
}

OpShardingRule
TransposeOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                             ArrayRef<RankedTensorType> results) {
  OpShardingRule rule(operands, results);
  for (auto [i, from] : llvm::enumerate(getPermutation()))
    rule.addShared(operands[0].getDimSize(from), kParallel, {{0, from}},
                   {{0, static_cast<int64_t>(i)}});
  rule.setJointlyLinearInAll();
  return rule;
}

OpShardingRule
BroadcastOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                             ArrayRef<RankedTensorType> results) {
  return jointlyLinearElementwise(operands, results);
}

/// Dimensions other than `dim` pass through. Along `dim`, equal pieces
/// make the result's dimension [pieces, piece]: a split of each piece is a
/// split of the result in as many blocks (the gradient of a fused QKV).
OpShardingRule ConcatOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                         ArrayRef<RankedTensorType> results) {
  int64_t dim = getDim();
  RankedTensorType result = results[0];
  OpShardingRule rule(operands, results);
  bool equal = llvm::all_of(operands, [&](RankedTensorType type) {
    return type.getDimSize(dim) == operands[0].getDimSize(dim);
  });
  for (int64_t d = 0; d < result.getRank(); ++d) {
    Dims all;
    for (unsigned i = 0; i < operands.size(); ++i)
      all.push_back({i, d});
    if (d != dim) {
      rule.addShared(result.getDimSize(d), kParallel, all, {{0, d}});
    } else if (equal) {
      rule.addShared(operands.size(), kWhole, {}, {{0, d}});
      rule.addShared(operands[0].getDimSize(d), kParallel, all, {{0, d}});
    } else {
      for (auto [i, type] : llvm::enumerate(operands))
        rule.addShared(type.getDimSize(d), kWhole,
                       {{static_cast<unsigned>(i), d}}, {});
      rule.addShared(result.getDimSize(d), kWhole, {}, {{0, d}});
    }
  }
  rule.setJointlyLinearInAll();
  return rule;
}

/// Dimensions the slice keeps whole pass through; the others are whole.
OpShardingRule SliceOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                        ArrayRef<RankedTensorType> results) {
  RankedTensorType input = operands[0];
  OpShardingRule rule(operands, results);
  for (int64_t d = 0; d < input.getRank(); ++d) {
    int64_t size = getSizes()[d];
    bool full = getStarts()[d] == 0 && getStrides()[d] == 1 &&
                size == input.getDimSize(d);
    if (full) {
      rule.addShared(input.getDimSize(d), kParallel, {{0, d}}, {{0, d}});
      continue;
    }
    // One of equal pieces (a fused projection's chunk): the dimension is
    // [pieces, piece], and an input split in as many blocks splits it.
    if (getStrides()[d] == 1 && size > 0 && input.getDimSize(d) % size == 0 &&
        getStarts()[d] % size == 0) {
      rule.addShared(input.getDimSize(d) / size, kWhole, {{0, d}}, {});
      rule.addShared(size, kParallel, {{0, d}}, {{0, d}});
      continue;
    }
    rule.addShared(input.getDimSize(d), kWhole, {{0, d}}, {});
    rule.addShared(results[0].getDimSize(d), kWhole, {}, {{0, d}});
  }
  rule.setJointlyLinearInAll();
  return rule;
}

void SliceOp::adaptToLocalTypes() {
  // A piece of a split dimension starts at the same piece of the part.
  SmallVector<int64_t> starts(getStarts());
  ArrayRef<int64_t> local = getType().getShape();
  for (auto [start, global, part] : llvm::zip(starts, getSizes(), local))
    if (global != part && global > 0)
      start = start / global * part;
  setStarts(starts);
  setSizes(local);
}

/// Like concat, reversed: equal pieces make the input's dimension
/// [pieces, piece], so an input split in as many blocks splits each piece.
OpShardingRule SplitOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                        ArrayRef<RankedTensorType> results) {
  int64_t dim = getDim();
  RankedTensorType input = operands[0];
  OpShardingRule rule(operands, results);
  bool equal = llvm::all_equal(getSizes());
  for (int64_t d = 0; d < input.getRank(); ++d) {
    Dims all;
    for (unsigned i = 0; i < results.size(); ++i)
      all.push_back({i, d});
    if (d != dim) {
      rule.addShared(input.getDimSize(d), kParallel, {{0, d}}, all);
    } else if (equal) {
      rule.addShared(results.size(), kWhole, {{0, d}}, {});
      rule.addShared(results[0].getDimSize(d), kParallel, {{0, d}}, all);
    } else {
      rule.addShared(input.getDimSize(d), kWhole, {{0, d}}, {});
      for (auto [i, type] : llvm::enumerate(results))
        rule.addShared(type.getDimSize(d), kWhole, {},
                       {{static_cast<unsigned>(i), d}});
    }
  }
  rule.setJointlyLinearInAll();
  return rule;
}

void SplitOp::adaptToLocalTypes() {
  SmallVector<int64_t> sizes;
  for (Type type : getResultTypes())
    sizes.push_back(cast<RankedTensorType>(type).getDimSize(getDim()));
  setSizes(sizes);
}

/// Where the update covers the input's whole dimension, the three pass it
/// through; elsewhere each is whole.
OpShardingRule
UpdateSliceOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                               ArrayRef<RankedTensorType> results) {
  RankedTensorType update = operands[0], input = operands[1];
  OpShardingRule rule(operands, results);
  for (int64_t d = 0; d < input.getRank(); ++d) {
    bool full = getStarts()[d] == 0 && getStrides()[d] == 1 &&
                update.getDimSize(d) == input.getDimSize(d);
    if (!full)
      rule.addShared(update.getDimSize(d), kWhole, {{0, d}}, {});
    rule.addShared(input.getDimSize(d), full ? kParallel : kWhole,
                   full ? Dims{{0, d}, {1, d}} : Dims{{1, d}}, {{0, d}});
  }
  return rule;
}

//===----------------------------------------------------------------------===//
// Collectives (over other axes than the one being partitioned)
//===----------------------------------------------------------------------===//

OpShardingRule
AllReduceOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                             ArrayRef<RankedTensorType> results) {
  return collectiveRule(operands[0], results[0], {});
}

OpShardingRule
AllGatherOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                             ArrayRef<RankedTensorType> results) {
  return collectiveRule(operands[0], results[0], {getDim()});
}

OpShardingRule
ReduceScatterOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                 ArrayRef<RankedTensorType> results) {
  return collectiveRule(operands[0], results[0], {getDim()});
}

OpShardingRule ShardOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                        ArrayRef<RankedTensorType> results) {
  return collectiveRule(operands[0], results[0], {getDim()});
}

OpShardingRule
CollectiveBroadcastOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                       ArrayRef<RankedTensorType> results) {
  return collectiveRule(operands[0], results[0], {});
}

OpShardingRule SendRecvOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                           ArrayRef<RankedTensorType> results) {
  return collectiveRule(operands[0], results[0], {});
}

OpShardingRule AllToAllOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                           ArrayRef<RankedTensorType> results) {
  return collectiveRule(operands[0], results[0],
                        {static_cast<int64_t>(getSplitDim()),
                         static_cast<int64_t>(getConcatDim())});
}
