//===- Passes.h - rematerialization -----------------------------*- C++ -*-===//
//
// Activation checkpointing: which saved activations a training step keeps
// for its backward pass and which it recomputes there.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TRANSFORMS_REMAT_PASSES_H
#define DTC_TRANSFORMS_REMAT_PASSES_H

#include "dtc/Dialect/DTC/IR/DTCDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

#include <string>
#include <vector>

namespace mlir::dtc {

#define GEN_PASS_DECL
#include "dtc/Transforms/Remat/Passes.h.inc"

/// A `dtc-remat` policy, parsed.
struct RematPolicy {
  enum class Kind { None, Full, Every, Selective, Budget };
  Kind kind = Kind::None;
  /// every=K: the units per kept input.
  int64_t every = 1;
  /// budget=SIZE: the activation peak to fit, in bytes.
  int64_t budgetBytes = 0;
  /// budget=auto: the memory limit less the step's persistent state.
  bool budgetAuto = false;

  /// Parses `text` into `policy`; an error message, empty on success.
  static std::string parse(llvm::StringRef text, RematPolicy &policy);
  /// As `parse` reads it ("every=2", "budget=1048576").
  std::string str() const;
};

/// Op attribute of the copies dtc-remat makes of forward ops.
inline constexpr llvm::StringLiteral kRecomputeAttrName = "dtc.recompute";
/// Function attribute: `{policy = "...", activation_peak_without = N}`.
inline constexpr llvm::StringLiteral kRematAttrName = "dtc.remat";

/// Per transformer unit (a `dtc.unit` holding an attention op), in order:
/// the bytes of the values its forward computes that the rest of the step
/// reads after the forward (its backward, or a later unit's recomputation),
/// what a rank holds for it from its forward to its backward.
/// With `counts`, only the values it accepts.
std::vector<int64_t>
savedBytesPerTransformerUnit(func::FuncOp step,
                             llvm::function_ref<bool(Value)> counts = {});

/// Registers dtc-remat (for dtc-opt).
void registerRematPasses();

} // namespace mlir::dtc

#endif // DTC_TRANSFORMS_REMAT_PASSES_H
