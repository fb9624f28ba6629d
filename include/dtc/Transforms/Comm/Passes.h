//===- Passes.h - communication passes --------------------------*- C++ -*-===//
//
// The passes that rearrange a per-rank program's collectives without
// changing what they compute (so far: gradient bucketing).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TRANSFORMS_COMM_PASSES_H
#define DTC_TRANSFORMS_COMM_PASSES_H

#include "dtc/Dialect/DTC/IR/DTCDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dtc {

#define GEN_PASS_DECL
#include "dtc/Transforms/Comm/Passes.h.inc"

/// Registers the communication passes (for dtc-opt).
void registerCommPasses();

} // namespace mlir::dtc

#endif // DTC_TRANSFORMS_COMM_PASSES_H
