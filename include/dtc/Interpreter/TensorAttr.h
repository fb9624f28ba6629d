//===- TensorAttr.h - runtime tensors <-> MLIR types and attrs --*- C++ -*-===//
//
// The bridge between the MLIR world (element types, ElementsAttr constants
// and parameter values) and the runtime's host tensors.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_INTERPRETER_TENSORATTR_H
#define DTC_INTERPRETER_TENSORATTR_H

#include "dtc/Runtime/Tensor.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::dtc {

/// The runtime element type of an MLIR element type, if dtc supports it.
std::optional<DType> dtypeOf(Type elementType);
Type elementTypeOf(MLIRContext *context, DType dtype);
RankedTensorType tensorTypeOf(MLIRContext *context, const Tensor &tensor);

/// Decodes a dense or dense_resource elements attribute; fails on other
/// kinds, on unsupported element types and on missing resource blobs.
FailureOr<Tensor> tensorFromAttr(ElementsAttr attr);
/// A dense elements attribute holding `tensor`: a splat when all its
/// elements are equal.
ElementsAttr denseAttrFromTensor(MLIRContext *context, const Tensor &tensor);
/// A dense_resource attribute holding `tensor` in a builtin-dialect blob
/// named after `name`: how parameter values travel with a module.
ElementsAttr resourceAttrFromTensor(MLIRContext *context, StringRef name,
                                    const Tensor &tensor);

} // namespace mlir::dtc

#endif // DTC_INTERPRETER_TENSORATTR_H
