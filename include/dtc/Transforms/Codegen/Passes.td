//===- Passes.td - code generation passes ------------------*- tablegen -*-===//

#ifndef DTC_TRANSFORMS_CODEGEN_PASSES_TD
#define DTC_TRANSFORMS_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def Fuse : Pass<"dtc-fuse", "mlir::func::FuncOp"> {
  let summary = "Group ops into fusion groups (dtc.fusion), one kernel each";
  let description = [{
    Decides fusion above any target, as XLA and IREE do: on the per-rank
    program after every other pass, each group becomes a `dtc.fusion` whose
    body is its ops, so that only the group's inputs are read and its
    results written. Walking the program from its end, an op that can lead
    a group (an elementwise op, a broadcast or reshape, a reduction along
    the trailing dimensions, softmax, log-softmax, layer or RMS norm)
    absorbs the producers of its operands, latest first, while each
    producer is fusible and every use of its results is inside the group
    (no op is computed twice, and a group has one result set: its last
    op's). A group holds at most one reduction (its hero, kind
    `row_reduction`, with the elementwise ops that feed it and read it);
    without one it is a `loop`. On a training step, the optimizer's loop
    groups and lone elementwise ops (the updates of every parameter and its
    state) then become one `multi_tensor` group with a result per updated
    value, placed at the last of them when every other reader of those
    values comes after it (else they stay apart). Scalar and splat
    constants are copied into each group that reads them. Matmuls (a library call), attention,
    gathers and scatters, concats, slices, transposes and collectives stay
    outside groups, as do lone ops. Values and their rounding are
    unchanged: the reference executor runs a group's ops one by one.

    `row-reductions` says which row_reduction groups form: `all` (the
    default: one reduction, softmax or norm per group, with the ops feeding
    it), `rows` (what the CPU target's row kernels compute: float
    reduce_sum, reduce_mean, reduce_max and reduce_min along the trailing
    dimensions, several to a group when they fold rows of one shape, with
    the elementwise ops that feed them and those that read their results,
    where each such op reads only its own row of them; every reduction's
    result is a group result; softmax and norms stay alone), or `none`
    (reductions, softmax and norms lead no group and join none).
  }];
  let options = [
    Option<"rowReductions", "row-reductions", "std::string",
           /*default=*/"\"all\"",
           "Which row_reduction groups to form: all, rows (reductions that "
           "share rows, with what feeds them and what reads them) or none">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def ExpandLogSoftmax : Pass<"dtc-expand-log-softmax", "mlir::func::FuncOp"> {
  let summary = "Write f32/f64 log-softmax as x - max - log(sum(exp(x - max)))";
  let description = [{
    Replaces each f32 or f64 `dtc.log_softmax` by its arithmetic: the row
    maximum and the sum of exponentials as reductions kept as size-1
    dimensions, and `(x - max) - log(sum)`, elementwise. Run before
    `dtc-fuse`, it lets the cross-entropy's readers of the log-softmax
    (the forward's pick of each label, the backward's exponential)
    recompute it from the logits, so that no [tokens, vocab] value beyond
    the logits and their gradient is stored. bf16 and f16 log-softmaxes
    stay (the expansion would round three results where the op rounds
    one).
  }];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

#endif // DTC_TRANSFORMS_CODEGEN_PASSES_TD
