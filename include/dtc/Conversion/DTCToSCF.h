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

/// A tensor around one of its dimensions, as a kernel along that dimension
/// loops over it: {prod(shape[:dim]), shape[dim], prod(shape[dim+1:])}.
struct DimSplit {
  int64_t outer, size, inner;
};
inline DimSplit splitAt(ArrayRef<int64_t> shape, int64_t dim) {
  return {ShapedType::getNumElements(shape.take_front(dim)), shape[dim],
          ShapedType::getNumElements(shape.drop_front(dim + 1))};
}

/// Whether `buildOpKernel` computes `op`.
bool hasOpKernel(Operation *op);

/// A kernel whose rows threads may share takes two more arguments,
/// `%part: index, %parts: index`, and computes only its part's share of the
/// rows of each outermost loop (dtc-split-kernel-rows divides them, once
/// every loop is scf): parts run at once, each element computed as the
/// whole kernel computes it. Such a function carries kKernelRowsAttr (its
/// longest outermost loop's rows) and kKernelWorkAttr (the elements it
/// computes, which decides how many threads it is worth).
constexpr llvm::StringLiteral kKernelRowsAttr = "dtc.kernel_rows";
constexpr llvm::StringLiteral kKernelWorkAttr = "dtc.kernel_work";

/// Appends `%part, %parts` to `kernel` and marks it so (above).
void addKernelParts(func::FuncOp kernel, int64_t rows, int64_t work);

/// Adds to `kernels` `func.func @name(%operand0: memref<N0 x T0>, ...,
/// %result0: memref<M0 x U0>, ...)` computing `op`. Fails with a
/// diagnostic on `op` when it has no kernel. Kernels that write each row of
/// their outermost loops from that row alone (data movement, gathers,
/// reductions, softmax, norms, attention, dropout...) take parts (above).
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

/// carried = inits; for (i = from; i < to; i += step) carried = body(i,
/// carried); returns carried. An scf.for at `b`'s insertion point; `body`
/// builds at `b` inside it.
SmallVector<Value>
emitFor(OpBuilder &b, Location loc, int64_t from, int64_t to, int64_t step,
        ValueRange inits,
        llvm::function_ref<SmallVector<Value>(Value, ValueRange)> body);

/// The larger and the smaller of `x` and `y`: for floats NaN if either is
/// (as torch.maximum), for integers signed.
Value emitMax(OpBuilder &b, Location loc, Value x, Value y);
Value emitMin(OpBuilder &b, Location loc, Value x, Value y);

/// How many partial results emitLaneFold keeps.
constexpr int64_t kFoldLanes = 8;

/// acc = init; for i in [0, n): acc = body(i, acc) -- a reduction whose
/// body is `combine(acc, f(i))` -- emitted (from n = 2 * kFoldLanes on) as
/// kFoldLanes partial results, lane l folding i = l, l + kFoldLanes, ...,
/// the tail folded into lane 0 and the lanes combined pairwise. One chain
/// of float adds can neither be vectorized nor pipelined without
/// reassociating, which strict math forbids; independent lanes can (LLVM's
/// SLP vectorizer widens them), and their fixed order repeats bit for bit.
/// `body` and `combine` build at `b`'s insertion point.
Value emitLaneFold(OpBuilder &b, Location loc, int64_t n, Value init,
                   llvm::function_ref<Value(Value, Value)> body,
                   llvm::function_ref<Value(Value, Value)> combine);

/// acc = init; for each index of `shape`, row-major: acc = body(indexes,
/// acc); in lanes (emitLaneFold) when `shape` has one dimension.
Value emitFoldOver(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   Value init,
                   llvm::function_ref<Value(ValueRange, Value)> body,
                   llvm::function_ref<Value(Value, Value)> combine);

} // namespace mlir::dtc

#endif // DTC_CONVERSION_DTCTOSCF_H
