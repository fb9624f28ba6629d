//===- Passes.td - parallelism passes ----------------------*- tablegen -*-===//

#ifndef DTC_TRANSFORMS_PARALLEL_PASSES_TD
#define DTC_TRANSFORMS_PARALLEL_PASSES_TD

include "mlir/Pass/PassBase.td"

def DataParallel : Pass<"dtc-data-parallel", "mlir::ModuleOp"> {
  let summary = "Partition a differentiated step over the batch (data parallelism)";
  let description = [{
    Runs after dtc-autodiff and before dtc-optimizer. Adds `dtc.mesh @mesh
    ["dp" = N]` and rewrites the step into the program of one of the N
    ranks: every model input is split along its first (batch) dimension, the
    parameters are replicated, and the layout of every value follows from
    its operands': sharded along one dimension, replicated, or a partial sum
    (a contraction or sum over the batch, such as a weight gradient or the
    loss's numerator). Partial sums are all-reduced over `dp` where a
    non-linear op or the function's results need the full value, each
    all-reduce recording why; the gradients thus arrive replicated, as in
    PyTorch's DistributedDataParallel, and the optimizer that follows runs
    identically on every rank. Ops this first partitioner cannot split (a
    softmax over the batch, dropout, which would need global element
    indices) are errors naming the op.
  }];
  let options = [
    Option<"size", "dp", "int64_t", /*default=*/"2", "Number of ranks">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

#endif // DTC_TRANSFORMS_PARALLEL_PASSES_TD
