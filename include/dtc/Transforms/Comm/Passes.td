//===- Passes.td - communication passes --------------------*- tablegen -*-===//

#ifndef DTC_TRANSFORMS_COMM_PASSES_TD
#define DTC_TRANSFORMS_COMM_PASSES_TD

include "mlir/Pass/PassBase.td"

def GradientBucketing : Pass<"dtc-bucket-gradients", "mlir::func::FuncOp"> {
  let summary = "Fuse the gradients' all-reduces into buckets";
  let description = [{
    Runs on the per-rank program after the parallelism passes, before
    dtc-optimizer. The all-reduces of gradients (those whose sum is a
    `dtc.grad` result) are taken in the order the backward produces their
    inputs and packed, per set of mesh axes and element type, into buckets
    of at most `bucket-mb` megabytes (MiB): each bucket flattens and
    concatenates its gradients, all-reduces them in one call placed as soon
    as its last gradient is ready (so it can overlap with the rest of the
    backward), and slices them back. A gradient larger than a bucket gets
    one to itself. The sums are the same elementwise, so the step computes
    the same; each bucket's reason lists its gradients (the report's
    buckets). `bucket-mb=0` leaves every gradient its own all-reduce.
  }];
  let options = [
    Option<"bucketMB", "bucket-mb", "double", /*default=*/"25",
           "Bucket size in MiB (0: no bucketing)">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

#endif // DTC_TRANSFORMS_COMM_PASSES_TD
