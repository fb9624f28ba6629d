//===- ShardingRule.h - how an op's dimensions shard ------------*- C++ -*-===//
//
// An op's sharding rule in Shardy's factor form: the op's iteration space
// is a list of factors, each operand and result dimension is made of some
// of them (major to minor), and each factor says what splitting it over a
// mesh axis means -- the op runs on the parts (parallel), its results are
// partial reductions (reduction), or it needs the whole (replication).
// Rules are pure functions of the op's attributes and its operand and
// result types (global shapes); the propagation engine
// (lib/Transforms/Parallel) owns all state. Ops give their rule through
// ShardingRuleOpInterface (DTCInterfaces.td).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECT_DTC_IR_SHARDINGRULE_H
#define DTC_DIALECT_DTC_IR_SHARDINGRULE_H

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::dtc {

/// What splitting a factor over a mesh axis means for the op.
enum class FactorKind {
  /// Every tensor that has the factor is split alike; the op runs on the
  /// parts (a batch, the rows of a matmul, an elementwise dimension).
  Parallel,
  /// The op reduces over it (a matmul's contraction, a sum's dimension):
  /// split, each rank's result is a partial reduction of the whole.
  Reduction,
  /// The op needs it whole on every rank (a softmax's dimension, a slice
  /// along it, the dimension a gather indexes).
  NeedReplication,
};

/// How a reduction factor combines the parts.
enum class FactorReduction { Sum, Mean, Max, Min };

struct ShardingFactor {
  int64_t size;
  FactorKind kind;
  FactorReduction reduction = FactorReduction::Sum;
};

/// How the op's results depend on operands that are partial sums (each
/// rank holds a summand of the whole): whether the op may run on the
/// summands, its results then partial sums too.
enum class Linearity {
  /// Not linear: partial operands are summed first.
  None,
  /// Linear in `linearOperands` taken together (an add of two partial
  /// sums, a reshape of one): each of them partial (or an accumulator
  /// that is zero), the others whole.
  Joint,
  /// Linear in each operand with the others fixed (mul, matmul): exactly
  /// one operand partial, the others whole.
  Separate,
};

/// Dimension `d` of a tensor is made of `factors[d]`, major to minor; an
/// empty list is a dimension of size 1 (or one that broadcasts).
using TensorFactors = SmallVector<SmallVector<int64_t, 2>>;

class OpShardingRule {
public:
  /// A rule with a tensor entry (all dimensions factor-less) per operand
  /// and result type.
  OpShardingRule(ArrayRef<RankedTensorType> operandTypes,
                 ArrayRef<RankedTensorType> resultTypes);

  /// Adds a factor and returns its index.
  int64_t addFactor(int64_t size, FactorKind kind,
                    FactorReduction reduction = FactorReduction::Sum);
  /// Appends `factor` to dimension `dim` of operand `index` (minor-most).
  void addToOperand(unsigned index, int64_t dim, int64_t factor);
  void addToResult(unsigned index, int64_t dim, int64_t factor);
  /// A new factor of `kind` for a dimension of `size` (nothing for a
  /// dimension of size 1) shared by the given operand and result
  /// dimensions; -1 for none.
  int64_t addShared(int64_t size, FactorKind kind,
                    ArrayRef<std::pair<unsigned, int64_t>> operandDims,
                    ArrayRef<std::pair<unsigned, int64_t>> resultDims,
                    FactorReduction reduction = FactorReduction::Sum);
  /// Every dimension of every operand and result its own factor of `kind`
  /// (no dimension shared: what an op with no better rule gets).
  static OpShardingRule allOwn(ArrayRef<RankedTensorType> operandTypes,
                               ArrayRef<RankedTensorType> resultTypes,
                               FactorKind kind);

  /// Elementwise with numpy broadcasting: result dimension d is a parallel
  /// factor that each operand has where its (right-aligned) dimension is
  /// not a broadcast 1.
  static OpShardingRule elementwise(ArrayRef<RankedTensorType> operandTypes,
                                    RankedTensorType resultType);

  /// A view between two shapes of the same elements (reshape): both
  /// shapes are cut into common factors, row-major; where no common cut
  /// exists, the dimensions involved are whole (need replication).
  static OpShardingRule reshape(RankedTensorType input,
                                RankedTensorType result);

  ArrayRef<ShardingFactor> getFactors() const { return factors; }
  const TensorFactors &getOperand(unsigned index) const {
    return operands[index];
  }
  const TensorFactors &getResult(unsigned index) const {
    return results[index];
  }
  unsigned getNumOperands() const { return operands.size(); }
  unsigned getNumResults() const { return results.size(); }

  Linearity getLinearity() const { return linearity; }
  /// With Joint linearity: the operands the results are linear in.
  ArrayRef<unsigned> getLinearOperands() const { return linearOperands; }
  /// Linear operands that the results contain once as a summand (a
  /// scatter's destination): a zero constant there counts as a partial sum.
  ArrayRef<unsigned> getAccumulators() const { return accumulators; }
  void setJointlyLinear(ArrayRef<unsigned> operandIndices,
                        ArrayRef<unsigned> accumulatorIndices = {});
  /// Jointly linear in every operand.
  void setJointlyLinearInAll();
  void setSeparatelyLinear() { linearity = Linearity::Separate; }

  /// Shardy's notation, e.g. `([i, j], [j, k]) -> ([i, k]) {i=8, j=16,
  /// k=48} reduction={j}`; a dimension of several factors prints them
  /// joined (`[ij]`), one of none as `1`.
  void print(raw_ostream &os) const;

private:
  SmallVector<ShardingFactor> factors;
  SmallVector<TensorFactors> operands, results;
  Linearity linearity = Linearity::None;
  SmallVector<unsigned> linearOperands, accumulators;
};

} // namespace mlir::dtc

#endif // DTC_DIALECT_DTC_IR_SHARDINGRULE_H
