//===- DTCToSCF.h - ops outside fusion groups as loop kernels ---*- C++ -*-===//
//
// The CPU backend's kernels for the ops that no elementwise loop nest
// computes: data movement (transpose, slice, split, concat, update_slice),
// indexed reads and writes (gather, scatter), reductions, softmax, norms,
// rotary embeddings and attention. Each becomes a function of flat buffers
// (`memref<N x T>`, one per operand then one per result, written in place)
// whose explicit scf loops compute what the reference kernel computes, in
// the element type.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_CONVERSION_DTCTOSCF_H
#define DTC_CONVERSION_DTCTOSCF_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::dtc {

/// Whether `buildOpKernel` computes `op`.
bool hasOpKernel(Operation *op);

/// Adds to `kernels` `func.func @name(%operand0: memref<N0 x T0>, ...,
/// %result0: memref<M0 x U0>, ...)` computing `op`. Fails with a
/// diagnostic on `op` when it has no kernel.
FailureOr<func::FuncOp> buildOpKernel(Operation *op, ModuleOp kernels,
                                      StringRef name);

/// The row-major index (i64) in a tensor of shape `whole` of the element at
/// `indexes` (index values) of a part of it placed at `offsets` (a rank-1
/// i64 memref, one per dimension; null: at the origin).
Value emitWholeIndex(OpBuilder &b, Location loc, ValueRange indexes,
                     ArrayRef<int64_t> whole, Value offsets);

/// dtc.dropout's value for element `x` whose row-major index in the whole
/// (unsplit) tensor is `global` (i64), at step `step` (i64): x / (1 -
/// ratio), divided in f64 and rounded to x's type, where Philox4x32-10
/// keyed on (seed, stream) draws a uniform >= ratio, else 0 -- the draw of
/// the reference executor (dtc/Runtime/Philox.h), bit for bit.
Value emitDropout(OpBuilder &b, Location loc, Value x, Value global, Value step,
                  uint64_t seed, uint64_t stream, double ratio);

} // namespace mlir::dtc

#endif // DTC_CONVERSION_DTCTOSCF_H
