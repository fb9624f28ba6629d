//===- DTCDialect.td - the dtc dialect definition ----------*- tablegen -*-===//
//
// The dtc dialect: tensor ops for training graphs, on builtin ranked tensors.
// Shapes are static everywhere: dtc compiles training steps, whose shapes are
// bound at import.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECT_TD
#define DTC_DIALECT_TD

include "mlir/IR/OpBase.td"

def DTC_Dialect : Dialect {
  let name = "dtc";
  let summary = "Tensor ops of the dtc distributed-training compiler";
  let description = [{
    The `dtc` dialect holds the tensor computation of a model and, after the
    training passes, of its whole training step. Ops work on builtin ranked
    tensors with static shapes and numpy broadcasting where stated. Element
    types: `f32`, `f64`, `bf16`, `f16`, `i64`, `i32`, `i16`, `i8`, `ui8`, `i1`.

    Function arguments that carry trainable or frozen weights are marked with
    the `dtc.param` argument attribute (the ONNX initializer name); their
    initial value travels with the module as `dtc.value`. Model inputs carry
    `dtc.input` and results `dtc.output`, each with the ONNX value name.
    After partitioning, arguments that a rank holds only part of carry their
    layout as `dtc.sharding` (a `#dtc.sharding`).

    A training step is a function with the `dtc.step` attribute (a
    `#dtc.step`: the step ABI's version, the loss result, the mesh, ...);
    its optimizer state carries `dtc.state` (a `#dtc.state`), and each
    argument donated to the step, `dtc.aliasing_output = i`: result i is
    its next value. The dialect verifies these (indices in range, alias
    pairs of one type, the loss a float scalar); docs/StepABI.md is the
    contract.
  }];
  let cppNamespace = "::mlir::dtc";
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let hasCanonicalizer = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
}

#endif // DTC_DIALECT_TD
