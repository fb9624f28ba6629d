//===- DTCDialect.h - the dtc dialect ---------------------------*- C++ -*-===//
//
// Declares the dtc dialect and the names of the attributes it puts on function
// arguments and results (parameters, their initial values, ONNX names).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECT_DTC_IR_DTCDIALECT_H
#define DTC_DIALECT_DTC_IR_DTCDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dtc/Dialect/DTC/IR/DTCOpsDialect.h.inc"

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

} // namespace mlir::dtc

#endif // DTC_DIALECT_DTC_IR_DTCDIALECT_H
