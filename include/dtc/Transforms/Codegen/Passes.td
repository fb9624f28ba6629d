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
    state) then become `multi_tensor` groups with a result per updated
    value, one per latest collective they read (a gradient bucket's
    updates need not wait for the buckets reduced after it), each placed at
    the last of its ops when every other reader of those values comes after
    it (else they stay apart); those that only the return reads then go to
    the step's end in the order of the collectives they read. Scalar and splat
    constants are copied into each group that reads them, and so are values
    cheaper to recompute than to store (index grids, broadcasts of smaller
    values, cheap elementwise ops -- add, sub, mul, a division by a scalar,
    select, compare, cast, ... -- of those, of scalars and of at most one
    stored value of their size). Matmuls (a library call), attention,
    gathers and scatters, concats, slices, transposes and collectives stay
    outside groups, as do lone ops that recompute nothing. Values and their
    rounding are unchanged: the reference executor runs a group's ops one
    by one.

    `row-reductions` says which row_reduction groups form: `all` (the
    default: one reduction, softmax or norm per group, with the ops feeding
    it), `rows` (what the CPU target's row kernels compute: float
    reduce_sum, reduce_mean, reduce_max and reduce_min along the trailing
    dimensions, several to a group when they fold rows of one shape, with
    the elementwise ops that feed them and those that read their results,
    where each such op reads only its own row of them; every reduction's
    result is a group result, and so may be values read outside the group
    too, after it: values no larger than a member reduction's result or
    shaped as statistics of the group's rows, and cheap ops of the
    leader's shape (a residual add before a norm that `dtc-expand-row-ops`
    wrote out); a loop group joins a later loop group of its shape that
    reads its leader when every other reader of its values comes after
    that group (GELU's erf, which the backward reads again, and the product
    reading it: one kernel writing both); softmax and norms stay alone, and reshapes
    lead no group: the CPU program reads a lone reshape's result in its
    operand's buffer, so that a group ending in one writes the value
    before it, whose rows a row kernel keeps), or `none`
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

def FoldIntoMatmuls : Pass<"dtc-fold-into-matmuls", "mlir::func::FuncOp"> {
  let summary = "Fold transposes and batch sums into the matmuls' operands";
  let description = [{
    Makes the transposes around matmuls the matmuls' own, as a GEMM reads
    either operand transposed at no cost:
    `matmul(transpose(a), b)` (a transpose of the last two dimensions)
    becomes `matmul(a, b)` with `transpose_lhs` flipped, and likewise for
    the rhs (a Linear's `x @ W.T`); `transpose(matmul(a, b))` becomes
    `matmul(b, a)` with both flags flipped; and
    `reduce_sum(matmul(x, g, transpose_lhs), dims = the batch)`, with `x`
    and `g` of one batch shape (a weight's gradient summed over the
    batch), becomes one matmul of `x` and `g` reshaped to
    `[batch * tokens, ...]`: the batch joins the GEMM's inner dimension. A
    product is rewritten only when nothing else reads it. The same sums in
    another grouping: values change by rounding only.
  }];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def AccumulateScatters
    : Pass<"dtc-accumulate-scatters", "mlir::func::FuncOp"> {
  let summary = "Scatter-add into the value a scatter-add into zeros is "
                "added to";
  let description = [{
    Autodiff writes a gathered value's gradient as a scatter-add into
    zeros, and a value read twice gets its gradients summed: a tied
    embedding's gradient is `add(head, scatter_add(d into zeros[ids]))`,
    three passes over a [vocabulary, d] table (the zeros, the scatter's
    copy of them, the add). It becomes `scatter_add(d into head[ids])`:
    one copy and the scattered rows. Rewritten when the scatter is read by
    the add alone and neither operand is broadcast. The same sums in
    another order: values change by rounding only.
  }];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def ExpandRowOps : Pass<"dtc-expand-row-ops", "mlir::func::FuncOp"> {
  let summary = "Write f32/f64 softmaxes and norms as reductions and "
                "elementwise ops";
  let description = [{
    Replaces each f32 or f64 `dtc.layer_norm`, `dtc.rms_norm`, and
    `dtc.softmax` or `dtc.log_softmax` along the last dimension, by the
    arithmetic its kernel computes: the row statistics as reductions kept
    as size-1 dimensions (a layer norm's mean, then the mean of squared
    deviations; an RMS norm's mean of squares; a softmax's maximum, then
    the sum of exponentials) and the rest elementwise:
    `(x - mean) * rsqrt(var + epsilon) * scale + bias`,
    `x * rsqrt(mean(x^2) + epsilon) * scale`, `exp(x - max) / sum` and
    `(x - max) - log(sum)`. Run before `dtc-fuse` with
    `row-reductions=rows`, each becomes one row kernel together with the
    elementwise ops feeding it and reading it (a residual add before a
    norm), and the cross-entropy's readers of the log-softmax (the
    forward's pick of each label, the backward's exponential) recompute it
    from the logits, so that no [tokens, vocab] value beyond the logits and
    their gradient is stored. bf16 and f16 ops stay (the expansion would
    round every intermediate where the op rounds its results once).
  }];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def ExpandAttention : Pass<"dtc-expand-attention", "mlir::func::FuncOp"> {
  let summary = "Write f32/f64 attention as matmuls around a softmax";
  let description = [{
    `dtc.attention` computes two batched products of [queries, keys] by
    [keys, d] around its softmax; a fused kernel of scalar loops computes
    them at a fraction of a GEMM's rate. Since the probabilities are a
    result the backward reads anyway, nothing is saved by not storing the
    scores: the op becomes `matmul(q, k, transpose_rhs)`, the scale (and
    softcap), the mask (added, or selected with `masked_value`), a
    softmax along the keys, the dropout (`dtc.dropout` with the op's
    seed, stream, step and offset: the mask the backward draws) and
    `matmul(probs, v)`. Grouped-query attention needs no repeated heads:
    the queries of one key/value head's group are reshaped into its rows
    (`[batch, kv_heads, group * queries, d]`). bf16 and f16 ops stay (the
    op rounds its results once). The same sums in another order: values
    change by rounding only.
  }];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def FuseAttention : Pass<"dtc-fuse-attention", "mlir::func::FuncOp"> {
  let summary = "Attention and its backward as FlashAttention-style kernels";
  let description = [{
    For a target with a fused attention kernel (CUDA, sm_80 and later:
    bf16 and f16 tensor cores), each 16-bit `dtc.attention` whose
    probabilities only `dtc.attention_grad`s read becomes
    `dtc.fused_attention` (its result and each query row's logsumexp), and
    those backwards `dtc.fused_attention_grad`s (which recompute the
    probabilities tile by tile): the [batch, heads, queries, keys]
    probabilities are never stored. The kernels tile the head dimensions
    by 16 up to 128, so `d` and `dv` must be multiples of 16 no larger; any
    other attention is left to dtc-expand-attention-grad and
    dtc-expand-attention (f32: cuBLAS GEMMs around a row softmax, which
    keeps f32 products exact where tensor cores would round them).
  }];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

#endif // DTC_TRANSFORMS_CODEGEN_PASSES_TD
