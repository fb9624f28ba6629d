//===- BuildProgram.h - a training step as a thunk program ------*- C++ -*-===//
//
// What the compiled backends share above the kernel level: the step is
// fused in the dtc dialect (dtc-fuse), every intermediate value gets its
// offset in one arena (ArenaPlan.h), and the step becomes program.txt, the
// thunks a rank runs in order: kernels, GEMMs, collectives, waits for
// started collectives, copies. docs/Codegen.md describes the format. Where
// a kernel comes from is the target's: the CPU target compiles MLIR kernels
// to native code (lib/Target/CPU), the CUDA target prints CUDA C++
// (lib/Target/CUDA).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TARGET_PROGRAM_BUILDPROGRAM_H
#define DTC_TARGET_PROGRAM_BUILDPROGRAM_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace mlir::dtc {

struct StepSignature;

/// The version of program.txt this build writes and its launchers read.
inline constexpr int64_t kProgramVersion = 3;

/// What a compiled program holds, for the report.
struct ProgramSummary {
  int64_t kernels = 0, gemms = 0, collectives = 0, asyncCollectives = 0;
  /// Its arena, and the most bytes (aligned) live at once in it.
  int64_t arenaBytes = 0, arenaLowerBound = 0;
};

/// Where a program's kernels come from.
class KernelTarget {
public:
  virtual ~KernelTarget() = default;
  /// The first word of program.txt ("dtc-cpu-program").
  virtual std::string programKind() const = 0;
  /// Adds the kernel `name` computing `op`: a fusion group, or an op that
  /// is neither a matmul nor a collective. Returns what the kernel's thunk
  /// line adds (" rows=R work=W": rows the launcher may split among
  /// threads), or emits an error naming the op.
  virtual FailureOr<std::string> addKernel(Operation *op, StringRef name) = 0;
  /// Whether it has kernels for dtc.fused_attention and its gradient
  /// (dtc-fuse-attention runs first).
  virtual bool fusesAttention() const { return false; }
  /// Writes the kernels added into `dir`; errors are reported at `where`.
  virtual LogicalResult writeKernels(const std::string &dir,
                                     Operation *where) = 0;
};

/// On the step of one pp coordinate's program (pipelineRankModule): that
/// coordinate (i64).
inline constexpr llvm::StringLiteral kPipelineCoordinateAttr =
    "dtc.pp_coordinate";

/// The program of the ranks at `coordinate` along a pipelined step's pp
/// axis: a copy of `step`'s module in which the step keeps only the ops
/// those ranks run (pipelineRankOrders), in their order. A broadcast they
/// receive reads zeros in place of the value they do not hold, and a
/// result they do not hold returns an argument they do not hold either
/// (the function's result type follows), which nothing computes or
/// copies. The step carries kPipelineCoordinateAttr.
FailureOr<OwningOpRef<ModuleOp>> pipelineRankModule(func::FuncOp step,
                                                    int64_t coordinate);

/// Compiles `step` (a per-rank training step, `signature` its
/// description; neither is changed) into `dir`: program.txt, the target's
/// kernels and init/arg<N>.npy (the starting values the step carries).
/// Emits a diagnostic naming the op or tool on failure.
FailureOr<ProgramSummary> buildProgram(func::FuncOp step,
                                       const StepSignature &signature,
                                       const std::string &dir,
                                       KernelTarget &target);

} // namespace mlir::dtc

#endif // DTC_TARGET_PROGRAM_BUILDPROGRAM_H
