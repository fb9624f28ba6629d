//===- Passes.td - dtc pass declarations -------------------*- tablegen -*-===//

#ifndef DTC_TRANSFORMS_PASSES_TD
#define DTC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FoldConstants : Pass<"dtc-fold-constants", "mlir::func::FuncOp"> {
  let summary = "Evaluate dtc ops whose operands are all constants";
  let description = [{
    Replaces every dtc op whose operands are all `dtc.constant` by constants
    holding its results, computed with the reference executor's kernels (so
    folding has exactly the executor's semantics). Ops whose evaluation fails
    (an out-of-range gather index, say) are left for run time, and results
    larger than `max-elements` are not materialized.

    Before:
    ```mlir
    %a = dtc.constant dense<8.0> : tensor<f32>
    %b = dtc.constant dense<0.5> : tensor<f32>
    %s = dtc.pow %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %y = dtc.div %x, %s : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    ```
    After:
    ```mlir
    %s = dtc.constant dense<2.82842708> : tensor<f32>
    %y = dtc.div %x, %s : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    ```
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", /*default=*/"1 << 20",
           "Largest result, in elements, to materialize as a constant">
  ];
  let statistics = [
    Statistic<"numFolded", "num-folded", "Ops replaced by constants">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

#endif // DTC_TRANSFORMS_PASSES_TD
