//===- Passes.td - rematerialization ----------------------*- tablegen -*-===//

#ifndef DTC_TRANSFORMS_REMAT_PASSES_TD
#define DTC_TRANSFORMS_REMAT_PASSES_TD

include "mlir/Pass/PassBase.td"

def Remat : Pass<"dtc-remat", "mlir::func::FuncOp"> {
  let summary = "Recompute saved activations in the backward pass "
                "(activation checkpointing)";
  let description = [{
    Trades recomputation for activation memory on a per-rank training step
    (dtc-training runs it last, after the final CSE, so that nothing merges
    a recomputed op back into its original). The backward pass reads
    forward values directly; this pass keeps some of them and recomputes
    the others: their forward ops are cloned just before the first backward
    op that reads one of them, from the values kept, and the backward reads
    the copies. The forward values are then freed as soon as the forward is
    done with them. Copies carry `dtc.recompute` (which also keeps CSE from
    merging them); a recomputed collective (a row-parallel block's
    all-reduce under tp, its all-gather with SP, a ZeRO-3 parameter gather)
    is issued again, in the same place on every rank; a recomputed dropout
    redraws the same mask from its counter-based generator.

    The forward is cut into units: a unit starts at the first forward op
    that combines an activation with a trainable parameter of a `dtc.unit`
    not met before (the module FSDP would wrap: `h.3`, `layers.3`; the
    first unit met again starts the next microbatch), and a transformer
    unit is one holding an attention op (`dtc.attention`).

    Every policy recomputes what costs memory to hold and next to nothing
    to make again: values computed from parameters alone, sequence
    parallelism's all-gathers of activations (gathered again from the
    rank's part, as Megatron-LM does) and casts to a wider type (a bf16
    step's f32 norm inputs, cast again from the bf16 value); dtc-training
    runs the pass with policy `none` for them under sequence parallelism or
    a half precision. `policy`:

    - `none`: nothing else recomputed;
    - `full`: each transformer unit keeps only its input (and what later
      units read); everything else the backward reads is recomputed;
    - `every=K`: the same over groups of K consecutive transformer units:
      only every K-th unit's input is kept (`every=1` is `full`);
    - `selective`: Korthikanti et al.'s policy, the attention core
      recomputed (the attention op: scores, softmax, dropout, times V, from
      the q, k and v kept) and everything else kept;
    - `budget=SIZE` (as `--memory-limit` reads sizes: 80GB, 512MiB, bytes):
      the least recomputation whose activation peak fits SIZE. Within each
      transformer unit, a 0/1 knapsack (exact dynamic programming over the
      values' bytes) keeps the values whose recomputation costs the most
      FLOPs per byte; the per-unit capacity is searched for the largest
      whose planned peak fits, and the cheapest plan that fits among it,
      `selective`, `every=K` and `full` is taken. A budget no plan meets is
      an error naming the smallest peak reachable. `budget=auto`: the
      budget is `memory-limit` less the step's persistent state
      (parameters, gradients, master weights, optimizer state).

    The function's `dtc.remat` attribute records the policy and the
    activation peak without recomputation; the report (dtc-compile's
    report.json) shows the bytes saved, the FLOPs and the collectives the
    recomputation adds. Activation offload to host memory is not done.
  }];
  let options = [
    Option<"policy", "policy", "std::string", /*default=*/"\"none\"",
           "none, full, every=K, selective or budget=SIZE|auto">,
    Option<"memoryLimit", "memory-limit", "std::string", /*default=*/"\"\"",
           "budget=auto: the bytes a rank may hold (80GB, 512MiB, ...)">,
  ];
}

#endif // DTC_TRANSFORMS_REMAT_PASSES_TD
