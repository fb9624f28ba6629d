//===- ShardingRule.cpp - factor-form sharding rules ----------------------===//
//
// The rule builder shared by every op's rule (DTCOpShardingRules.cpp): the
// elementwise and reshape rules, the default, and the printer.
//
//===----------------------------------------------------------------------===//

#include "dtc/Dialect/DTC/IR/DTCOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <numeric>

using namespace mlir;
using namespace mlir::dtc;

static TensorFactors dimsOf(RankedTensorType type) {
  return TensorFactors(type.getRank());
}

OpShardingRule::OpShardingRule(ArrayRef<RankedTensorType> operandTypes,
                               ArrayRef<RankedTensorType> resultTypes) {
  for (RankedTensorType type : operandTypes)
    operands.push_back(dimsOf(type));
  for (RankedTensorType type : resultTypes)
    results.push_back(dimsOf(type));
}

int64_t OpShardingRule::addFactor(int64_t size, FactorKind kind,
                                  FactorReduction reduction) {
  factors.push_back({size, kind, reduction});
  return factors.size() - 1;
}

void OpShardingRule::addToOperand(unsigned index, int64_t dim,
                                  int64_t factor) {
  operands[index][dim].push_back(factor);
}

void OpShardingRule::addToResult(unsigned index, int64_t dim, int64_t factor) {
  results[index][dim].push_back(factor);
}

int64_t
OpShardingRule::addShared(int64_t size, FactorKind kind,
                          ArrayRef<std::pair<unsigned, int64_t>> operandDims,
                          ArrayRef<std::pair<unsigned, int64_t>> resultDims,
                          FactorReduction reduction) {
  if (size == 1)
    return -1;
  int64_t factor = addFactor(size, kind, reduction);
  for (auto [index, dim] : operandDims)
    addToOperand(index, dim, factor);
  for (auto [index, dim] : resultDims)
    addToResult(index, dim, factor);
  return factor;
}

OpShardingRule OpShardingRule::allOwn(ArrayRef<RankedTensorType> operandTypes,
                                      ArrayRef<RankedTensorType> resultTypes,
                                      FactorKind kind) {
  OpShardingRule rule(operandTypes, resultTypes);
  for (auto [i, type] : llvm::enumerate(operandTypes))
    for (int64_t d = 0; d < type.getRank(); ++d)
      rule.addShared(type.getDimSize(d), kind, {{i, d}}, {});
  for (auto [i, type] : llvm::enumerate(resultTypes))
    for (int64_t d = 0; d < type.getRank(); ++d)
      rule.addShared(type.getDimSize(d), kind, {}, {{i, d}});
  return rule;
}

OpShardingRule
OpShardingRule::elementwise(ArrayRef<RankedTensorType> operandTypes,
                            RankedTensorType resultType) {
  OpShardingRule rule(operandTypes, {resultType});
  int64_t rank = resultType.getRank();
  for (int64_t d = 0; d < rank; ++d) {
    SmallVector<std::pair<unsigned, int64_t>> holders;
    for (auto [i, type] : llvm::enumerate(operandTypes)) {
      int64_t at = d - (rank - type.getRank());
      if (at >= 0 && type.getDimSize(at) == resultType.getDimSize(d))
        holders.push_back({static_cast<unsigned>(i), at});
    }
    rule.addShared(resultType.getDimSize(d), FactorKind::Parallel, holders,
                   {{0, d}});
  }
  return rule;
}

OpShardingRule OpShardingRule::reshape(RankedTensorType input,
                                       RankedTensorType result) {
  OpShardingRule rule({input}, {result});
  ArrayRef<int64_t> in = input.getShape(), out = result.getShape();
  size_t i = 0, j = 0;
  int64_t a = 1, b = 1; // what is left of in[i] and out[j]
  auto next = [](ArrayRef<int64_t> shape, size_t &k, int64_t &left) {
    while (left == 1 && k < shape.size())
      left = shape[k++];
    return left != 1;
  };
  // No elements: no factor to share (and no cut to make of a 0).
  if (input.getNumElements() == 0) {
    for (auto [k, size] : llvm::enumerate(in))
      rule.addShared(size, FactorKind::NeedReplication, {{0, int64_t(k)}}, {});
    for (auto [k, size] : llvm::enumerate(out))
      rule.addShared(size, FactorKind::NeedReplication, {}, {{0, int64_t(k)}});
    rule.setJointlyLinearInAll();
    return rule;
  }
  // Both shapes are cut, major first, into factors that divide what is
  // left of the current dimension on each side: with equal elements left
  // on both sides, a common major factor has the same stride in both.
  while (true) {
    bool moreIn = next(in, i, a), moreOut = next(out, j, b);
    if (!moreIn || !moreOut)
      break;
    int64_t g = std::gcd(a, b);
    if (g == 1) {
      // No common cut: what is left is whole on both sides.
      rule.addToOperand(0, i - 1, rule.addFactor(a, FactorKind::NeedReplication));
      rule.addToResult(0, j - 1, rule.addFactor(b, FactorKind::NeedReplication));
      for (; i < in.size(); ++i)
        rule.addShared(in[i], FactorKind::NeedReplication, {{0, i}}, {});
      for (; j < out.size(); ++j)
        rule.addShared(out[j], FactorKind::NeedReplication, {}, {{0, j}});
      break;
    }
    rule.addShared(g, FactorKind::Parallel, {{0, i - 1}}, {{0, j - 1}});
    a /= g;
    b /= g;
  }
  rule.setJointlyLinearInAll();
  return rule;
}

void OpShardingRule::setJointlyLinear(ArrayRef<unsigned> operandIndices,
                                      ArrayRef<unsigned> accumulatorIndices) {
  linearity = Linearity::Joint;
  linearOperands.assign(operandIndices.begin(), operandIndices.end());
  accumulators.assign(accumulatorIndices.begin(), accumulatorIndices.end());
}

void OpShardingRule::setJointlyLinearInAll() {
  SmallVector<unsigned> all(operands.size());
  std::iota(all.begin(), all.end(), 0);
  setJointlyLinear(all);
}

/// Factor names: i, j, ..., z, then z_1, z_2, ... (Shardy's convention).
static std::string factorName(int64_t index) {
  if (index < 18)
    return std::string(1, static_cast<char>('i' + index));
  return "z_" + std::to_string(index - 17);
}

void OpShardingRule::print(raw_ostream &os) const {
  auto printTensors = [&](ArrayRef<TensorFactors> tensors) {
    os << "(";
    llvm::interleaveComma(tensors, os, [&](const TensorFactors &dims) {
      os << "[";
      llvm::interleaveComma(dims, os, [&](ArrayRef<int64_t> dim) {
        if (dim.empty())
          os << "1";
        for (int64_t f : dim)
          os << factorName(f);
      });
      os << "]";
    });
    os << ")";
  };
  printTensors(operands);
  os << " -> ";
  printTensors(results);
  os << " {";
  llvm::interleaveComma(llvm::enumerate(factors), os, [&](auto entry) {
    os << factorName(entry.index()) << "=" << entry.value().size;
  });
  os << "}";
  auto printKind = [&](FactorKind kind, StringRef name) {
    SmallVector<std::string> names;
    for (auto [i, factor] : llvm::enumerate(factors)) {
      if (factor.kind != kind)
        continue;
      std::string text = factorName(i);
      static const char *reductions[] = {"", "mean", "max", "min"};
      if (kind == FactorKind::Reduction &&
          factor.reduction != FactorReduction::Sum)
        text += std::string("(") +
                reductions[static_cast<int>(factor.reduction)] + ")";
      names.push_back(text);
    }
    if (names.empty())
      return;
    os << " " << name << "={";
    llvm::interleaveComma(names, os);
    os << "}";
  };
  printKind(FactorKind::Reduction, "reduction");
  printKind(FactorKind::NeedReplication, "need_replication");
  if (linearity == Linearity::Separate)
    os << " linear=separate";
  if (linearity == Linearity::Joint) {
    os << " linear={";
    llvm::interleaveComma(linearOperands, os);
    os << "}";
    if (!accumulators.empty()) {
      os << " accumulators={";
      llvm::interleaveComma(accumulators, os);
      os << "}";
    }
  }
}

OpShardingRule
mlir::dtc::defaultShardingRule(Operation *op,
                               ArrayRef<RankedTensorType> operandTypes,
                               ArrayRef<RankedTensorType> resultTypes) {
  if (isElementwise(op))
    return OpShardingRule::elementwise(operandTypes, resultTypes[0]);
  return OpShardingRule::allOwn(operandTypes, resultTypes,
                                FactorKind::NeedReplication);
}

OpShardingRule ShardingRuleOpInterface::getShardingRule() {
  SmallVector<RankedTensorType> operandTypes, resultTypes;
  for (Type type : (*this)->getOperandTypes())
    operandTypes.push_back(cast<RankedTensorType>(type));
  for (Type type : (*this)->getResultTypes())
    resultTypes.push_back(cast<RankedTensorType>(type));
  return getShardingRule(operandTypes, resultTypes);
}
