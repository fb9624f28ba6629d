//===- Passes.td - communication passes --------------------*- tablegen -*-===//

#ifndef DTC_TRANSFORMS_COMM_PASSES_TD
#define DTC_TRANSFORMS_COMM_PASSES_TD

include "mlir/Pass/PassBase.td"

def GradientBucketing : Pass<"dtc-bucket-gradients", "mlir::func::FuncOp"> {
  let summary = "Fuse the gradients' collectives (and ZeRO's parameter "
                "gathers) into buckets";
  let description = [{
    Runs on the per-rank program after the parallelism passes, before
    dtc-optimizer. The all-reduces of gradients (sums read only by the
    function's `dtc.grad` results) are taken in the order the backward
    produces their inputs and packed, per set of mesh axes and element
    type, into buckets of at most `bucket-mb` megabytes (MiB): each bucket
    flattens and concatenates its gradients, all-reduces them in one call
    placed as soon as its last gradient is ready (so it can overlap with
    the rest of the backward), and slices them back. A gradient larger
    than a bucket gets one to itself. The sums are the same elementwise, so
    the step computes the same; each bucket's reason names what it serves
    (data-parallel or, without a dp axis, tensor-parallel gradient sums)
    and lists its gradients (the report's buckets). `bucket-mb=0` leaves
    every gradient its own all-reduce. Run after dtc-optimizer on a step
    without ZeRO, where the updates already read the sums, it is an error.

    Under ZeRO it runs after dtc-zero (in dtc-training, after
    dtc-sink-shards too): the gradients' reduce-scatters and the updated
    parameters' all-gathers are packed per rank (each tensor's split
    dimension first, viewed as [N, rest], the bucket their concatenation
    along rest, so that one call hands each rank its shard of every
    tensor); a bucket of parameter gathers names the ZeRO stage in its
    reason. Stage 3's gathers of
    parameters before their reads are bucketed per phase (forward,
    backward) and per unit: the parameter's `dtc.unit`, which the importer
    sets to the module path up to the first layer index (`layers.3`), else
    the top-level module (a parameter without one is a unit of its own); a
    unit larger than a bucket is cut. Each bucket is gathered where the
    previous one is first read, so that the next unit's parameters arrive
    while the current unit computes.
  }];
  let options = [
    Option<"bucketMB", "bucket-mb", "double", /*default=*/"25",
           "Bucket size in MiB (0: no bucketing)">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def FuseScalarReductions : Pass<"dtc-fuse-scalar-reductions",
                                 "mlir::func::FuncOp"> {
  let summary = "Pack scalar all-reduces into one call";
  let description = [{
    Scalar all-reduces over the same mesh axes, with the same reduction and
    element type, whose inputs all exist before any of their results is
    read, become one all-reduce of the scalars packed into a vector, placed
    right after the last input; its reason lists theirs. They are the
    loss and its normalizer, and under ZeRO the per-parameter sums of
    squares of `--clip-grad-norm` (one call per parameter otherwise): each
    call costs a collective's latency for a few bytes. dtc-compile runs it
    with gradient bucketing (`--bucket-mb` above 0).
  }];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

#endif // DTC_TRANSFORMS_COMM_PASSES_TD
