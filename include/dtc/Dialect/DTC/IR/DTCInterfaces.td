//===- DTCInterfaces.td - dtc op interfaces ----------------*- tablegen -*-===//
//
// Per-op behaviour that passes need, declared here and implemented next to
// the ops (lib/Dialect/DTC/IR).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_INTERFACES_TD
#define DTC_INTERFACES_TD

include "mlir/IR/OpBase.td"

def DTC_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::mlir::dtc";
  let description = [{
    An op whose vector-Jacobian product reverse-mode autodiff
    (`--dtc-autodiff`) can build. Ops without it are not differentiable:
    autodiff accepts them only off the paths from trainable parameters to the
    loss (comparisons, integer ops, masks).
  }];
  let methods = [
    InterfaceMethod<[{
        Builds, at the builder's insertion point, the gradient of each operand
        given the gradients of the op's results (`resultGrads`, one per
        result, null where a result has no gradient). Appends one value per
        operand to `operandGrads`, null where the operand is not
        differentiable (integers, conditions, indices). May fail with a
        diagnostic on the op for configurations it cannot differentiate.
      }], "::llvm::LogicalResult", "buildVJP",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::ValueRange":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>
  ];
}

#endif // DTC_INTERFACES_TD
