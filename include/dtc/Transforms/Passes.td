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
    (an out-of-range gather index, say) are left for run time. Only values
    of at most `max-elements` elements are evaluated (results and operands);
    an op whose operands are all splats folds to splats of any size,
    evaluated once on scalars (elementwise ops) or repeated (reshape,
    transpose, broadcast, slice). Larger constant subgraphs stay ops, so
    compile time does not grow with tensor sizes.

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
    Option<"maxElements", "max-elements", "int64_t",
           /*default=*/"::mlir::dtc::kMaxFoldedElements",
           "Largest value, in elements, that folding evaluates">
  ];
  let statistics = [
    Statistic<"numFolded", "num-folded", "Ops replaced by constants">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def BatchExperts : Pass<"dtc-batch-experts", "mlir::func::FuncOp"> {
  let summary = "Compute an unrolled loop over a mixture's experts as one "
                "batched computation";
  let description = [{
    Exporters unroll a mixture of experts' loop over its E experts (Hugging
    Face's Mixtral: per expert, its tokens, its slice of the stacked expert
    weights `w[e]`, its MLP, its output added to the others'). This pass
    finds each sum of E terms that are the same computation but for the
    expert index -- each reads `dtc.gather %stack[e] dim = 0` of the same
    stacks of E (the weights, the routing masks) where the others read
    other slices, and otherwise the same values or the same computation of
    them -- and replaces it with that computation over a leading experts
    dimension, reading each stack whole, followed by a sum over it. Values
    every expert shares are read once (numpy broadcasting carries them), so
    the experts' matmuls become batched matmuls over the stacked weights,
    which expert parallelism (dtc-expert-parallel) splits. Elementwise ops,
    matmuls, reshapes, broadcasts, transposes, slices and sums are
    batched; a sum with any other difference between its terms stays as it
    is. dtc-training runs it after dtc-raise-attention.
  }];
  let statistics = [
    Statistic<"numBatched", "num-batched", "Sums over experts batched">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def SortExperts : Pass<"dtc-sort-experts", "mlir::func::FuncOp"> {
  let summary = "Run each expert on its routed rows only, in a buffer of a "
                "static bound";
  let description = [{
    After dtc-batch-experts a mixture in Hugging Face's loop form runs every
    expert on every (token, choice) row, `Y[E, R, ...]`, and multiplies the
    rows its router did not choose by zero (`Y * M`, `M[E, R, 1]` the routing
    mask): the exact bound of a dropless mixture, E times the expert work of
    the routed rows. This pass sorts the rows by expert instead: in each of
    `groups` routing groups (contiguous rows; a rank's tokens under dp and
    ep) the rows each expert was chosen for fill, in order, that expert's
    buffer of `bound` rows (cumsum of the mask, a scatter of the row
    numbers), the shared row inputs `[1, R, ...]` are gathered into
    `[E, groups * bound, ...]`, the expert computation runs on the buffers
    (the batched matmuls now grouped per expert), and its rows are
    scattered back to their places (an empty slot's output times zero).
    While no expert receives more than `bound` rows in a group the step is
    the same function; the pairs past the bound are counted per expert (an
    op tagged `dtc.expert_overflow`, which dtc-expert-load returns as the
    step output `expert_overflow` and dtc-run stops on). The function
    attribute `dtc.expert_buffers` records the buffers' padded and useful
    bytes for the report. A mixture whose expert computation is not
    row-wise (only elementwise ops, matmuls of the rows by weights, and
    reshapes, transposes and slices keeping the experts and rows
    dimensions) is an error naming the op. With `zero-empty-slots` (the
    pipeline sets it under ep) the gathered rows of empty slots are zeroed
    too, so that every exchange of a buffer, forward and backward, holds
    zeros past its filled rows (dtc-send-filled-rows).
  }];
  let options = [
    Option<"bound", "bound", "int64_t", /*default=*/"0",
           "Rows of each expert's buffer per routing group (0: the pass "
           "does nothing)">,
    Option<"groups", "groups", "int64_t", /*default=*/"1",
           "Routing groups the rows are cut into (contiguous)">,
    Option<"zeroEmptySlots", "zero-empty-slots", "bool", /*default=*/"false",
           "Zero the gathered rows of empty slots (buffers that are "
           "exchanged)">
  ];
  let statistics = [
    Statistic<"numSorted", "num-sorted", "Mixtures run on sorted rows">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def RaiseAttention : Pass<"dtc-raise-attention", "mlir::func::FuncOp"> {
  let summary = "Replace each attention chain by one dtc.attention";
  let description = [{
    Finds, ending at each softmax over the last dimension of a rank-4
    tensor, the chain exporters write for scaled dot-product attention --
    q k^T (a rank-4 matmul: with transpose_rhs, with k transposed in its
    last two dimensions, or else with any rhs, taken as k^T), an optional
    scale (multiplication or division by a scalar computed from
    constants), an optional mask (an added float mask, or a select of a
    constant where a boolean mask is false -- or where it is true,
    masked_fill(~mask, c), whose mask is then inverted), the softmax, an
    optional dropout, the product with v -- with grouped-query attention's
    repetition of key/value heads (reshape to [b, kv, 1, s, d], broadcast,
    reshape to [b, h, s, d]), and replaces it by one `dtc.attention`, whose
    second result holds the probabilities the backward reads. A chain any
    of whose intermediate values is read elsewhere (attention weights
    returned as an output), whose q, k and v differ in element type, or
    whose mask does not broadcast to the scores stays as it is.
    dtc-training runs it as its first function pass, before mixed
    precision, autodiff and the partitioners.

    Before:
    ```mlir
    %kt = dtc.transpose %k permutation = [0, 1, 3, 2] : ...
    %s = dtc.matmul %q, %kt : ...
    %c = dtc.div %s, %sqrt_d : ...
    %m = dtc.add %c, %mask : ...
    %p = dtc.softmax %m dim = 3 : tensor<2x4x8x8xf32>
    %o = dtc.matmul %p, %v : ...
    ```
    After:
    ```mlir
    %o, %probs = dtc.attention %q, %k, %v mask %mask scale = 0.125 : ...
    ```
  }];
  let statistics = [
    Statistic<"numRaised", "num-raised", "Attention chains raised">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}


def VerifyPartition : Pass<"dtc-verify-partition", "mlir::ModuleOp"> {
  let summary = "Build the per-rank program and check it against one device";
  let description = [{
    Runs in place of the per-rank half of dtc-training (its `verify`
    option) on a module whose steps are global (after
    dtc-verify-global-step); it checks a mesh's partition and gradient
    accumulation's (against the whole batch at once). It tags every op, builds from a copy the
    single-device step (dtc-training's per-rank half without a mesh) and
    from the module the per-rank program of `training` (dtc-training's
    options), then runs both on seeded random parameters and inputs, every
    rank a thread of this process on the reference executor, and fails
    unless the losses (relative 1e-5), gradients (1e-4) and parameter
    updates (1e-3) agree -- bf16 and fp16 steps with the mixed-precision
    tests' tolerances. On a mismatch it runs both again recording every
    op's values and names the first op, in the per-rank program's order,
    whose ranks' parts fit no layout of the single-device value, with the
    collectives that feed it. The tags are removed: the result is the
    per-rank program dtc-training builds without `verify`.

    ```
    dtc-verify-partition: single-device step 0.01 s, per-rank program on
      4 simulated ranks (dp=2,tp=2) 0.02 s; worst relative error: loss
      0.00e+00, gradients 1.53e-07, updates 3.32e-07
    ```
  }];
  let options = [
    Option<"training", "training", "std::string", /*default=*/"",
           "dtc-training's options, as text (`mesh=tp=2 lr=0.01`; "
           "`verify-seed` and `verify-noise` choose the starting values)">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

#endif // DTC_TRANSFORMS_PASSES_TD
