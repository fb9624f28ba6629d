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
#include "mlir/IR/BuiltinOps.h"

namespace mlir::dtc {

/// Whether `buildOpKernel` computes `op`.
bool hasOpKernel(Operation *op);

/// Adds to `kernels` `func.func @name(%operand0: memref<N0 x T0>, ...,
/// %result0: memref<M0 x U0>, ...)` computing `op`. Fails with a
/// diagnostic on `op` when it has no kernel.
FailureOr<func::FuncOp> buildOpKernel(Operation *op, ModuleOp kernels,
                                      StringRef name);

} // namespace mlir::dtc

#endif // DTC_CONVERSION_DTCTOSCF_H
