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

    With `row-reductions=false` reductions, softmax and norms lead no group
    and join none (each is a kernel of its own, with loop groups around
    it): for a target that has no row-reduction kernels yet.
  }];
  let options = [
    Option<"rowReductions", "row-reductions", "bool", /*default=*/"true",
           "Form row_reduction groups (off: reductions stay outside groups)">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

#endif // DTC_TRANSFORMS_CODEGEN_PASSES_TD
