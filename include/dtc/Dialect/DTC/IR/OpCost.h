//===- OpCost.h - FLOPs and bytes of one op ---------------------*- C++ -*-===//
//
// What one execution of an op costs, as the cost model (lib/Analysis) and
// the passes that weigh ops (remat, pipeline balancing, a planner) read it:
// floating-point operations by kind and bytes moved. Ops give it through
// CostOpInterface (DTCInterfaces.td; dtc's ops in DTCOpCosts.cpp); an op
// with MLIR's `Elementwise` or dtc's `BroadcastingElementwise` trait and no
// interface gets the elementwise cost from its trait, so a new broadcasting
// binary op needs no cost code. docs/CostModel.md has the conventions:
//
//  - matmul: 2*m*n*k per batch element (after broadcasting), as
//    `matmulFlops`;
//  - arithmetic (add, mul, compare, select, cast, ...): 1 FLOP per result
//    element, as `elementwiseFlops`;
//  - transcendental functions (exp, log, sqrt, rsqrt, tanh, erf, sin, cos,
//    sigmoid, pow, and those inside gelu, silu, softplus): 1 per element, as
//    `transcendentalFlops`, apart from the arithmetic around them, as XLA's
//    HloCostAnalysis counts them;
//  - a reduction of n elements into one: n - 1 (n for a mean, which also
//    divides); softmax, log-softmax, layer and RMS norm as their parts;
//  - data movement (reshape, transpose, broadcast, slice, gather, concat,
//    ...) and collectives: 0 FLOPs;
//  - bytes read: the operands' bytes; written: the results' bytes (by
//    element type, tensorByteSize), as if each op ran alone, unfused. A
//    slice or gather reads only what it returns (plus the indices); a
//    constant reads and writes nothing (it is data of the program).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECT_DTC_IR_OPCOST_H
#define DTC_DIALECT_DTC_IR_OPCOST_H

#include <cstdint>

namespace mlir {
class MLIRContext;
class Operation;

namespace dtc {

/// The cost of one execution of an op.
struct OpCost {
  /// Multiply-adds of contractions, as 2 FLOPs each.
  double matmulFlops = 0;
  /// Other arithmetic: additions, multiplications, divisions, comparisons,
  /// selections, conversions.
  double elementwiseFlops = 0;
  /// Evaluations of transcendental functions.
  double transcendentalFlops = 0;
  int64_t bytesRead = 0;
  int64_t bytesWritten = 0;

  double flops() const {
    return matmulFlops + elementwiseFlops + transcendentalFlops;
  }
  int64_t bytes() const { return bytesRead + bytesWritten; }
  OpCost &operator+=(const OpCost &other) {
    matmulFlops += other.matmulFlops;
    elementwiseFlops += other.elementwiseFlops;
    transcendentalFlops += other.transcendentalFlops;
    bytesRead += other.bytesRead;
    bytesWritten += other.bytesWritten;
    return *this;
  }
};

/// The bytes `op` reads (its operands) and writes (its results), no FLOPs:
/// the cost of pure data movement, and the base of every other cost.
OpCost dataMovementCost(Operation *op);

/// An op that computes every element of its one result from the elements at
/// the same index of its operands: `arithmetic` and `transcendental` FLOPs
/// per result element, and its operands' and result's bytes.
OpCost elementwiseCost(Operation *op, double arithmetic = 1,
                       double transcendental = 0);

/// The cost of any op: its CostOpInterface; else, for an op with the
/// `Elementwise` or `BroadcastingElementwise` trait, one arithmetic FLOP
/// per result element; else its bytes alone (data movement, collectives,
/// ops of other dialects).
OpCost getOpCost(Operation *op);

/// Attaches CostOpInterface to dtc's ops (external models, DTCOpCosts.cpp);
/// called when the dialect is loaded.
void attachOpCostModels(MLIRContext &context);

} // namespace dtc
} // namespace mlir

#endif // DTC_DIALECT_DTC_IR_OPCOST_H
