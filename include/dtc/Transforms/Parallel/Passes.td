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

def GradientAccumulation : Pass<"dtc-gradient-accumulation", "mlir::ModuleOp"> {
  let summary = "Run the batch as K microbatches in sequence, summing gradients";
  let description = [{
    Runs after dtc-autodiff (and dtc-data-parallel) and before
    dtc-optimizer. Cuts the batch (dimension 0 of every model input) into K
    microbatches, builds the program of one microbatch with the same batch
    partitioner as data parallelism, and unrolls it K times in the step,
    each copy reading its rows of the inputs. Where data parallelism would
    all-reduce a partial sum, the copies' parts are added: the gradients
    and the loss accumulate as each microbatch finishes (so a microbatch's
    activations are dead before the next begins, and with data parallelism
    the gradients are all-reduced once, after the last microbatch); a sum
    needed inside the step, such as the loss's count of labels, is computed
    from every microbatch first, so the result is the full batch's step, as
    PyTorch's accumulation with the loss divided by the global token count.
  }];
  let options = [
    Option<"microbatches", "microbatches", "int64_t", /*default=*/"2",
           "Number of microbatches">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

#endif // DTC_TRANSFORMS_PARALLEL_PASSES_TD
