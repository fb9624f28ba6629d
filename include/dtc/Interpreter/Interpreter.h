//===- Interpreter.h - the dtc reference executor ---------------*- C++ -*-===//
//
// The reference executor: runs a func.func of dtc ops on host tensors, one
// op at a time, with each op's semantics given by exactly one reference kernel
// (lib/Interpreter/*Kernels.cpp). It is the numerical oracle the rest of dtc
// is checked against, so it favours plain loops over speed.
//
// Numerics: floating-point kernels compute in f64 and round every result to
// its element type (so f32, bf16 and f16 results are those of a correctly
// rounded f64 computation); sums, matmuls and norms accumulate in f64.
// Integer kernels compute in i64 and wrap to the element width.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_INTERPRETER_INTERPRETER_H
#define DTC_INTERPRETER_INTERPRETER_H

#include "dtc/Runtime/Tensor.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace mlir::dtc {

class Communicator;

/// The largest tensor, in elements, the reference executor materializes
/// (32 GiB of f64): beyond it an op fails with a diagnostic instead of
/// exhausting memory.
inline constexpr int64_t kMaxElements = int64_t(1) << 32;

/// Runs one op on host tensors. Emits an error on `op` and fails when the op
/// has no reference kernel, a result exceeds kMaxElements, or its inputs are
/// invalid at run time.
LogicalResult evaluateOp(Operation *op, ArrayRef<const Tensor *> operands,
                         SmallVectorImpl<Tensor> &results);

/// What an interpretation measured.
/// One fragment of a pipelined step as this rank ran it: the ops of one
/// (stage, microbatch, dtc.fragment kind) in a row.
struct FragmentSpan {
  int64_t stage = 0, microbatch = 0;
  std::string kind;
  /// Seconds on the steady clock (shared by the processes of a machine):
  /// the first op's start and the last one's end.
  double start = 0, end = 0;
};

struct InterpretStats {
  /// The most bytes (of the element types) of intermediate tensors --
  /// neither arguments nor results -- alive at once, the operands and
  /// results of the op being run included.
  int64_t peakIntermediateBytes = 0;
  /// Set by the caller: time a pipelined step's fragments into
  /// `fragments`, in the order they ran.
  bool recordFragments = false;
  std::vector<FragmentSpan> fragments;
};

/// Sees each op's results as soon as the op has run (dtc-compile --verify
/// records the values it compares).
using OpObserver = std::function<void(Operation *, ArrayRef<Tensor>)>;

/// Runs `func` on `arguments` (one per function argument, of its type) and
/// returns its results. The arguments are donated: each tensor, arguments
/// included, is freed as soon as its last user has run. Collectives run on
/// `communicator` (this rank's view of the mesh). `stats`, when given,
/// receives what the run measured; `observe`, when given, sees every op's
/// results.
FailureOr<SmallVector<Tensor>>
interpretFunction(func::FuncOp func, SmallVector<Tensor> arguments,
                  Communicator *communicator = nullptr,
                  InterpretStats *stats = nullptr,
                  const OpObserver &observe = nullptr);

/// A reference kernel: the op's results from its operands' values.
using ReferenceKernel = std::function<LogicalResult(
    Operation *, ArrayRef<const Tensor *>, SmallVectorImpl<Tensor> &)>;

/// Registers the reference kernel of an op of another dialect (a test
/// dialect's), before any interpretation; dtc's own ops have theirs in
/// lib/Interpreter. Float results are computed in f64, as dtc's, and
/// rounded to their element type by the caller.
void registerReferenceKernel(TypeID op, ReferenceKernel kernel);

/// For each element of a tensor of shape `out`, the row-major offset of the
/// element of a tensor of shape `operand` that numpy broadcasting reads.
std::vector<int64_t> broadcastOffsets(const Shape &operand, const Shape &out);

/// The communicator of the interpretation in progress, or null.
Communicator *currentCommunicator();

/// Builds the argument list of `func` from tensors matched by name
/// (getArgumentName): each argument takes the provided tensor of its name,
/// or, for a parameter, its
/// `dtc.value`. A bf16 argument also takes an f32 tensor, rounded (.npy files
/// cannot hold bf16). Emits an error naming the argument when one is
/// missing, when its shape or element type differs from the argument's
/// type, or when the argument is not a static tensor of a dtc element type.
FailureOr<SmallVector<Tensor>>
bindArguments(func::FuncOp func, const std::map<std::string, Tensor> &provided);

} // namespace mlir::dtc

#endif // DTC_INTERPRETER_INTERPRETER_H
