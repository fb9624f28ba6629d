//===- Report.h - what a compiled step needs per rank -----------*- C++ -*-===//

#ifndef DTC_TOOLS_DTC_COMPILE_REPORT_H
#define DTC_TOOLS_DTC_COMPILE_REPORT_H

#include "dtc/Analysis/DeviceSpec.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/JSON.h"

#include <optional>

namespace mlir::dtc {

/// The per-rank report of a compiled step (lib/Analysis): memory by
/// category (parameters, gradients, master weights, optimizer state,
/// activation peak), every collective it runs per step with its kind, axes,
/// bus bytes (nccl-tests convention) and reason, plus the totals per kind,
/// FLOPs and bytes per step (by kind and by phase) and a roofline estimate
/// on `device`. Prints a summary to stderr.
llvm::json::Object reportStep(func::FuncOp step, const DeviceSpec &device);

/// A pipelined step's schedule (dtc-pipeline-parallel), simulated on its
/// stages' fragment times: per stage its times, activation and sent bytes;
/// the predicted step time, each rank's bubble and in-flight activations.
/// Writes the predicted timeline to `traceFile` (a Chrome trace) and prints
/// a summary; nullopt for a step without stages.
std::optional<llvm::json::Object> reportPipeline(func::FuncOp step,
                                                 llvm::StringRef traceFile);

/// Whether a rank's memory in `report` (reportStep's) fits in `limit`
/// ("80GB", "512MiB", a number of bytes); prints an error with the
/// breakdown when it does not, or when `limit` does not parse.
bool fitsMemoryLimit(const llvm::json::Object &report, llvm::StringRef limit);

} // namespace mlir::dtc

#endif // DTC_TOOLS_DTC_COMPILE_REPORT_H
