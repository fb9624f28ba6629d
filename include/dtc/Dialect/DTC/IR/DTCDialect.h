//===- DTCDialect.h - the dtc dialect ---------------------------*- C++ -*-===//
//
// Declares the dtc dialect and the names of the attributes it puts on function
// arguments and results (parameters, their initial values, ONNX names).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECT_DTC_IR_DTCDIALECT_H
#define DTC_DIALECT_DTC_IR_DTCDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "dtc/Dialect/DTC/IR/DTCOpsDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dtc/Dialect/DTC/IR/DTCAttrs.h.inc"

namespace mlir::dtc {

/// Argument attribute: the argument is a model parameter (ONNX initializer);
/// the value is its ONNX name.
inline constexpr llvm::StringLiteral kParamAttrName = "dtc.param";
/// Argument attribute: the parameter's initial value (an ElementsAttr).
inline constexpr llvm::StringLiteral kValueAttrName = "dtc.value";
/// Argument attribute: the argument is a model input; the value is its name.
inline constexpr llvm::StringLiteral kInputAttrName = "dtc.input";
/// Result attribute: the ONNX name of a model output.
inline constexpr llvm::StringLiteral kOutputAttrName = "dtc.output";
/// Argument attribute: `false` excludes a parameter from training.
inline constexpr llvm::StringLiteral kTrainableAttrName = "dtc.trainable";
/// Result attribute: the result is the gradient of the named parameter.
inline constexpr llvm::StringLiteral kGradAttrName = "dtc.grad";
/// Argument attribute: optimizer state ("step", "exp_avg/<param>", ...).
inline constexpr llvm::StringLiteral kStateAttrName = "dtc.state";
/// The prefix of the state holding an f32 master copy of a parameter kept
/// in a narrower type: `master/<parameter name>`.
inline constexpr llvm::StringLiteral kMasterStatePrefix = "master/";
/// Argument attribute of the `loss_scale` state: after this many finite
/// steps in a row, dynamic loss scaling doubles the scale.
inline constexpr llvm::StringLiteral kGrowthIntervalAttrName =
    "dtc.growth_interval";
/// Argument attribute: the part of the whole tensor each rank holds (a
/// ShardingAttr); absent: every rank holds all of it.
inline constexpr llvm::StringLiteral kShardingAttrName = "dtc.sharding";
/// Argument attribute: the rows of a parameter that are real; the rest
/// are padding (zeros) that dtc-pad-vocabulary added.
inline constexpr llvm::StringLiteral kUnpaddedRowsAttrName =
    "dtc.unpadded_rows";
/// Function attribute: the ZeRO stage the step was built for (its
/// gradient buffer: whole for stage 1, a shard for stage 2).
inline constexpr llvm::StringLiteral kZeroStageAttrName = "dtc.zero_stage";
/// Op attribute of a ZeRO-3 parameter gather: "forward" or "backward", the
/// phase whose reads it serves (bucketing groups and prefetches by it).
inline constexpr llvm::StringLiteral kGatherPhaseAttrName = "dtc.gather_phase";
/// Result attribute: the new value of the named argument (a parameter or
/// state), which a runner feeds back as that argument on the next step.
inline constexpr llvm::StringLiteral kUpdateAttrName = "dtc.update";

/// The name an argument is known by: its `dtc.input`, `dtc.param` or
/// `dtc.state` name, or `arg<N>`.
std::string getArgumentName(FunctionOpInterface func, unsigned index);
/// The argument marked `dtc.param = name`, or null.
BlockArgument getParameterArgument(FunctionOpInterface func, StringRef name);
/// The name a result is known by: its `dtc.output` name, `grad/<param>`
/// for a gradient, `update/<name>` for an update, or `result<N>`.
std::string getResultName(FunctionOpInterface func, unsigned index);

} // namespace mlir::dtc

#endif // DTC_DIALECT_DTC_IR_DTCDIALECT_H
