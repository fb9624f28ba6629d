//===- Passes.td - parallelism passes ----------------------*- tablegen -*-===//

#ifndef DTC_TRANSFORMS_PARALLEL_PASSES_TD
#define DTC_TRANSFORMS_PARALLEL_PASSES_TD

include "mlir/Pass/PassBase.td"

def DefineMesh : Pass<"dtc-define-mesh", "mlir::ModuleOp"> {
  let summary = "Declare the device mesh, its axes in the given order";
  let description = [{
    Adds `dtc.mesh @mesh` with the axes and sizes of `shape`, in that order
    (e.g. `shape=dp=2,tp=2`): rank r sits at r's digits in that mixed
    radix, the last axis fastest. The parallelism passes then split over
    these axes; without a mesh each appends its axis in the order the
    passes run. dtc-training runs it first when its `mesh` option
    (dtc-compile's `--mesh`) has more than one device, so that ranks are
    laid out as the user wrote the mesh. A module whose `@mesh` has these
    axes and sizes already is left alone; one whose `@mesh` differs is an
    error.
  }];
  let options = [
    Option<"shape", "shape", "std::string", /*default=*/"",
           "Axes and their sizes, e.g. dp=2,tp=2">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def DataParallel : Pass<"dtc-data-parallel", "mlir::ModuleOp"> {
  let summary = "Partition a differentiated step over the batch (data parallelism)";
  let description = [{
    Runs after dtc-autodiff and before dtc-optimizer; dtc-training runs it
    before the other parallelism passes. Adds `dtc.mesh @mesh ["dp" = N]`
    (or the axis to the mesh the step's `dtc.step` names, else to the
    module's one mesh), records it as the step's mesh, and rewrites the
    step into the program of one of the N ranks: every model input is split
    along its first (batch) dimension, which N must divide (the inputs
    record it in `dtc.sharding`), the parameters are replicated, and the
    layout of every value follows from its operands' by the ops' sharding
    rules: split along one dimension, replicated, or a partial sum (a
    contraction or sum over the batch, such as a weight gradient or the
    loss's numerator). Partial sums are all-reduced over `dp` where a
    non-linear op or the function's results need the full value, each
    all-reduce recording why; the gradients thus arrive replicated, as in
    PyTorch's DistributedDataParallel, and the optimizer that follows runs
    identically on every rank. Dropout draws by each element's index in
    the whole batch (the op is given the global shape and the rank's first
    row), so the ranks draw one device's mask. A value computed without
    the inputs that spans the batch (positions from a baked mask) is cut
    to the rank's rows. An op that cannot run on a shard of the batch (a
    softmax over the batch) gets its input all-gathered over `dp` and runs
    on the whole batch, with a warning (a resharding, marked
    `dtc.resharding`); `strict-sharding` makes it an error that names the
    op, the operand and the bytes.
  }];
  let options = [
    Option<"size", "dp", "int64_t", /*default=*/"2", "Number of ranks">,
    Option<"strictSharding", "strict-sharding", "bool", /*default=*/"false",
           "Refuse, with an error naming the op, the operand and the bytes, "
           "every activation an op's layouts would have all-gathered">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def TensorParallel : Pass<"dtc-tensor-parallel", "mlir::ModuleOp"> {
  let summary = "Megatron tensor parallelism: column- then row-parallel projections";
  let description = [{
    Runs after dtc-autodiff (and dtc-data-parallel) and before
    dtc-optimizer. Finds, in the forward part of the step, the projections
    (a matmul by a parameter) that read what other projections made without
    a normalization in between: those are row-parallel (attention output,
    MLP down), their producers column-parallel (q/k/v or a fused QKV, MLP
    up and gate). Column weights and biases are split over `tp` by output
    features -- a fused QKV followed by an equal Split by heads within each
    of q, k and v (a split in blocks) -- and row weights by input features;
    the shardings are recorded on the arguments (`dtc.sharding`), and the
    mesh on the step's `dtc.step`.

    The partitioner then propagates the layouts through the attention's
    reshapes, transposes and `dtc.attention` (each rank its heads),
    all-reduces the row-parallel partial sums before the residual add
    (forward) and the column-parallel input gradients (backward), and
    slices replicated values that meet split ones with `dtc.shard`. A
    column projection whose features or heads do not divide over `tp`
    stays replicated, with a warning, and so does a row projection none of
    whose inputs is split. Grouped-query attention whose key/value heads
    do not divide over `tp` (k and v replicated) gets on each rank the key
    and value heads its query heads read. An op that cannot work on split
    operands gets them gathered, with a warning naming it (an error when
    that would gather a parameter whose layout was chosen). Token
    embeddings and the LM head (the projection whose features a
    log-softmax normalizes) are split by vocabulary rows when `tp` divides
    the vocabulary (dtc-training pads it to a multiple of `tp` first,
    dtc-pad-vocabulary; otherwise they stay replicated, with a warning):
    lookups mask the ids outside the rank's rows and all-reduce, and the
    log-softmax all-reduces each row's maximum and sum of exponentials, so
    the full logits are never gathered. Norms stay replicated.

    `sharding-spec` names a JSON file mapping parameter-name regexes to
    layouts, e.g. `{"h\\.\\d+\\.qkv\\.weight": {"dims": [["tp"], []],
    "blocks": [3, 1]}, "h\\.\\d+\\.out\\.weight": [[], ["tp"]]}`: for
    models the matcher does not recognize (with strategy=none), or to
    override its choice. A parameter two of its regexes match, a layout
    that is not one list of axes per dimension, an axis other than `tp` or
    a dimension that does not divide is an error.
  }];
  let options = [
    Option<"size", "tp", "int64_t", /*default=*/"2", "Number of ranks">,
    Option<"strategy", "strategy", "::mlir::dtc::TPStrategy",
           /*default=*/"::mlir::dtc::TPStrategy::Megatron",
           "The parameters split without a sharding spec",
           "::mlir::dtc::tpStrategyValues()">,
    Option<"shardingSpec", "sharding-spec", "std::string", /*default=*/"",
           "JSON file: parameter-name regex -> per-dimension mesh axes "
           "(overrides the pairs found for the parameters it names)">,
    Option<"strictSharding", "strict-sharding", "bool", /*default=*/"false",
           "Refuse, with an error naming the op, the operand and the bytes, "
           "every activation an op's layouts would have all-gathered">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def ContextParallel : Pass<"dtc-context-parallel", "mlir::ModuleOp"> {
  let summary = "Split the sequence of every activation, attention included, over cp";
  let description = [{
    Runs after dtc-data-parallel; dtc-training runs it after
    dtc-tensor-parallel (whose Megatron matcher keys on the attention this
    pass rewrites), or before dtc-sequence-parallel. Adds the
    `cp` axis to the step's mesh and rewrites the step into the program of
    one of its ranks: every model input of shape [batch, sequence, ...]
    is split along the sequence (the inputs record it in `dtc.sharding`),
    the parameters are replicated, and every activation follows, so norms,
    projections, MLPs and the loss run on the rank's part of the sequence.
    Values computed without the inputs that span the sequence (position
    ids, RoPE tables, causal masks) are cut to the rank's positions, so
    positions keep their global index. Attention is the one op that needs
    other ranks' tokens: each query part attends to every key. The weight
    gradients are partial sums over `cp` (each rank's tokens contribute),
    all-reduced as data parallelism's are.

    Attention and its gradient (dtc.attention_grad, which this pass
    expects; dtc-expand-attention-grad writes it out afterwards) see the
    other ranks' tokens in one of three ways (`attention`): `ring` (ring
    attention: each rank's key and value block passes around the ring of
    ranks by dtc.send_recv with an online softmax, the forward keeping each
    query's log-sum-exp; the backward passes the blocks around again and
    each block's key and value gradients with it. The tokens are in zigzag
    order, rank r holding chunks r and 2 cp - 1 - r of 2 cp, and a constant
    causal mask's fully masked tiles are skipped, so that every rank does
    the same half of the work); `all-gather` (the keys and values gathered
    whole for the rank's queries, their gradients reduce-scattered); or
    `ulysses` (DeepSpeed-Ulysses: all-to-alls exchange q, k and v for whole
    sequences of 1/cp of the heads, and the result back; the same for the
    backward: four all-to-alls each way, each moving (cp - 1)/cp of its
    tensor's part; cp must divide the query heads, and key/value heads it
    does not divide are repeated until it does).
  }];
  let options = [
    Option<"size", "cp", "int64_t", /*default=*/"2", "Number of ranks">,
    Option<"attention", "attention", "std::string", /*default=*/"\"ring\"",
           "ring: key and value blocks passed around the ranks (tokens in "
           "zigzag order); all-gather: the keys and values gathered for "
           "each rank's queries; ulysses: all-to-alls exchange the split of "
           "the tokens for a split of the heads around attention">,
    Option<"strictSharding", "strict-sharding", "bool", /*default=*/"false",
           "Refuse, with an error naming the op, the operand and the bytes, "
           "every activation an op's layouts would have all-gathered">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def ExpertParallel : Pass<"dtc-expert-parallel", "mlir::ModuleOp"> {
  let summary = "Split the batch and the experts of a mixture of experts over ep";
  let description = [{
    Expert parallelism as GShard, DeepSpeed-MoE and Megatron-Core have it:
    the `ep` ranks are data-parallel ranks that also split the experts.
    Runs after dtc-data-parallel and dtc-tensor-parallel. Adds the `ep`
    axis to the step's mesh; every model input is split along the batch and
    every expert parameter (a parameter stacked by the experts,
    [experts, ...], that no matmul reads as a projection; the experts are
    the routed dimension of the routers' top_k) along the experts, which ep
    must divide. The propagation engine carries both: the tokens dispatched
    to the experts (the rank's rows of every expert's buffer) are exchanged
    for all rows of the rank's experts by an all-to-all before the expert
    matmuls, and back before the combine. The expert parameters' gradients
    stay split; the other parameters' gradients are summed over ep, as data
    parallelism's are over dp. Capacity is counted per routing group as the
    model writes it (GShard's groups, or each row's tokens), so a rank's
    rows route as they do on one device.
  }];
  let options = [
    Option<"size", "ep", "int64_t", /*default=*/"2", "Number of ranks">,
    Option<"strictSharding", "strict-sharding", "bool", /*default=*/"false",
           "Refuse, with an error naming the op, the operand and the bytes, "
           "every activation an op's layouts would have all-gathered">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def SendFilledRows : Pass<"dtc-send-filled-rows", "mlir::func::FuncOp"> {
  let summary = "Exchange only the filled rows of sorted experts' buffers";
  let description = [{
    Runs on the per-rank program after dtc-sink-shards, for a step whose
    mixtures dtc-sort-experts sorted ([experts, groups x B, ...] buffers,
    each expert's rows of a routing group filling its first slots, the
    others zero, forward and backward). The all-to-alls over the `ep`
    axis between those two dimensions (the dispatch, the combine and their
    gradients) get `rows_dim = 1`: each rank sends an expert's buffer only
    up to its last non-zero row, after the counts (all-to-all-v, as
    DeepSpeed-MoE and Megatron-Core's dropless token dispatchers exchange
    their token counts first). Marking any other all-to-all changes what
    it sends, never its result.
  }];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def SequenceParallel : Pass<"dtc-sequence-parallel", "mlir::ModuleOp"> {
  let summary = "Megatron tensor parallelism with sequence parallelism";
  let description = [{
    dtc-tensor-parallel (the same column/row pairs and vocabulary-parallel
    embedding, head and cross-entropy) with the regions between the
    projections -- residual adds, norms -- split along the sequence over
    `tp` (Korthikanti et al., 2022): each partial activation is
    reduce-scattered along the sequence instead of all-reduced, and the
    projections all-gather their input. Learned position embeddings are
    added to each rank's part of the sequence; attention sees the whole
    sequence (the projections gathered it), so RoPE tables and causal masks
    stay whole. Gathered activations are kept for the backward (the weight
    gradients read them), not gathered again as Megatron does: one
    all-gather fewer per projection for the memory of its input. The
    gradients of the replicated weights the split regions read (norms,
    row-parallel biases, position embeddings) are partial sums over `tp`:
    one all-reduce each. The sequence length is dimension 1 of the first
    model input of rank 2 or more (an error when there is none).
  }];
  let options = [
    Option<"size", "tp", "int64_t", /*default=*/"2", "Number of ranks">,
    Option<"strategy", "strategy", "::mlir::dtc::TPStrategy",
           /*default=*/"::mlir::dtc::TPStrategy::Megatron",
           "The parameters split without a sharding spec",
           "::mlir::dtc::tpStrategyValues()">,
    Option<"shardingSpec", "sharding-spec", "std::string", /*default=*/"",
           "JSON file: parameter-name regex -> per-dimension mesh axes "
           "(overrides the pairs found for the parameters it names)">,
    Option<"strictSharding", "strict-sharding", "bool", /*default=*/"false",
           "Refuse, with an error naming the op, the operand and the bytes, "
           "every activation an op's layouts would have all-gathered">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def PadVocabulary : Pass<"dtc-pad-vocabulary", "mlir::func::FuncOp"> {
  let summary = "Pad the vocabulary to a multiple of the tensor-parallel ranks";
  let description = [{
    Runs on the forward, before dtc-attach-loss. When the LM head (the
    matmul that makes the `logits` output, possibly through casts, its
    weight a parameter whose first dimension is the vocabulary, possibly
    read through a transpose) has a vocabulary that `multiple` does not
    divide, its weight gets zero rows up to the next multiple and the
    logits of the padded rows are set to -inf (a constant added to the
    output). Token embeddings (tables indexed by a model input), tied to
    the head or not, get zero rows the same way. Each padded argument
    records `dtc.unpadded_rows`. The cross-entropy then sees probability
    zero for the padding, every gradient of the padded rows is zero, so
    they stay zero, and the trajectory is the unpadded model's; dtc-run
    pads the parameter it loads and strips the padding from dumps. A
    padded parameter read by anything but casts, transposes and lookups is
    an error. dtc-training runs it with `multiple = tp` when the mesh has
    a tp axis (not with a distillation loss, whose teacher logits are
    unpadded), so that vocabulary parallelism splits the vocabulary evenly
    instead of replicating it.
  }];
  let options = [
    Option<"multiple", "multiple", "int64_t", /*default=*/"1",
           "Pad the vocabulary to a multiple of this">,
    Option<"logits", "logits", "std::string", /*default=*/"\"logits\"",
           "Output holding the logits">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def Zero : Pass<"dtc-zero", "mlir::ModuleOp"> {
  let summary = "ZeRO stages 1-3: optimizer state, gradients and parameters sharded over dp";
  let description = [{
    Runs after dtc-optimizer on a step partitioned over `dp`. The optimizer
    state of every parameter (AdamW's moments, SGD's momentum) is split over
    `dp` along the first dimension dp divides that no other axis splits;
    each update reads this rank's part of the gradient, so the gradient's
    all-reduce becomes a reduce-scatter, the update runs on the rank's
    shard, and the updated parameters are all-gathered: the same bus bytes
    as data parallelism's all-reduce (2(N-1)/N of the gradients). The
    gradient results are the rank's shards (`dtc.sharding` on the results;
    dtc-run gathers them for dumps). Stage 1 keeps a whole gradient buffer
    (with dtc-gradient-accumulation, the microbatches accumulate into it
    and it is reduce-scattered once per step); stage 2 keeps only the
    shard (under dtc-gradient-accumulation, whose `dtc.step` records the
    microbatches and whose sums over them are tagged `dtc.microbatch_sum`,
    each microbatch's gradient reduce-scattered as it is made, the shards
    added). Stage 3 also keeps each parameter as its shard and all-gathers
    it where the step reads it whole: just before its first use in the
    forward, and again just before its first use in the backward (the
    forward's views of it, such as a transpose, made again from the second
    gather), so that neither lives across the whole step, and the update
    reads the shard. Each gather is of one parameter, marked with its
    phase (`dtc.gather_phase`); dtc-bucket-gradients, run after, groups
    them by unit. A parameter no dimension of which dp divides is
    padded with zero rows to a multiple of dp (state, update, and the
    gradient before its sum, the padding concats tagged `dtc.padding`;
    `dtc.unpadded_rows` on padded state, gradient results and stage-3
    shards, which dtc-run strips from dumps); one whose first dimension
    another axis splits keeps whole state, with a warning. With an `ep`
    axis (dtc-expert-parallel: the ep ranks are data-parallel ranks too)
    the same is done over `ep` after `dp` for the parameters ep does not
    split (not the experts'), along a dimension no other axis splits (one
    without, a bias or a norm's scale, stays split over dp alone; no
    padding over ep), as DeepSpeed-MoE shards the non-expert state over all
    data-parallel ranks; their gradients, summed over dp and ep together,
    are reduce-scattered over dp first, and their parts over ep. Errors: a step whose mesh has neither a dp nor an
    ep axis of 2 or more, a stage other than 0 to 3, and a step where no
    parameter has optimizer state (SGD without momentum).
  }];
  let options = [
    Option<"stage", "stage", "int64_t", /*default=*/"1",
           "ZeRO stage: 1, 2 or 3 (0: nothing)">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def SinkShards : Pass<"dtc-sink-shards", "mlir::func::FuncOp"> {
  let summary = "Compute a rank's part of a replicated value rather than "
                "cutting it from the whole";
  let description = [{
    Runs on the per-rank program after the parallelism passes. Where a
    `dtc.shard` cuts a rank's part out of a value every rank computed
    without communication -- iotas, splat constants, broadcasts and
    elementwise ops on them -- and every reader of that value takes the same
    part, the cut moves to the operands: each rank computes its part only
    (an iota is made at size 1 along its other dimensions, its start moved
    to the rank's first index when it runs along the split, and
    broadcast; the dialect's canonicalizer then lets ops that broadcast
    their operands read the broadcast's input). Applied repeatedly, the
    whole value is never made. Also rewrites a sum over a
    dimension of `select(iota == y, x, 0)` (a one-hot selection, as the
    cross-entropy's backward makes) to `select(0 <= y < n, x, 0)`, which
    reads no whole one-hot. The vocabulary-parallel cross-entropy so keeps
    its [batch, sequence, vocabulary] one-hot masks vocabulary/tp wide. An
    all-reduce every reader of which keeps the same part becomes a
    reduce-scatter (a ZeRO gradient that fp16 unscales before the cut); an
    all-gather every reader of which keeps its part along another
    dimension becomes an all-to-all (a split moved between dimensions: 1/n
    of the gather's bytes), and one whose readers keep their own part
    along the gathered dimension is removed. An all-gather along the
    outermost dimension of reshapes and broadcasts that repeat only inner
    dimensions (each token repeated for its k expert choices) gathers
    before them, moving each element once.

    ```mlir
    // before: %i = dtc.iota dim = 2 : tensor<2x8x64xi64>
    //         %m = dtc.compare eq, %i, %labels : (...) -> tensor<2x8x64xi1>
    //         %p = dtc.shard %m on @mesh axes = ["tp"] dim = 2 : ... -> tensor<2x8x32xi1>
    // after:  %i = dtc.iota dim = 2 : tensor<1x1x32xi64>
    //         %j = dtc.add %i, %first : (tensor<1x1x32xi64>, tensor<i64>) -> ...
    //         %b = dtc.broadcast %j : tensor<1x1x32xi64> to tensor<2x8x32xi64>
    //         %p = dtc.compare eq, %b, %labels : (...) -> tensor<2x8x32xi1>
    ```
  }];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def GradientAccumulation : Pass<"dtc-gradient-accumulation", "mlir::ModuleOp"> {
  let summary = "Run the batch as K microbatches in sequence, summing gradients";
  let description = [{
    Runs after dtc-autodiff and the other parallelism passes
    (dtc-data-parallel, dtc-tensor-parallel or dtc-sequence-parallel) and
    before dtc-optimizer. Cuts the batch (dimension 0 of every model
    input) into K microbatches, builds the program of one microbatch with
    the same batch partitioner as data parallelism, and unrolls it K times
    in the step, each copy reading its rows of the inputs. Where data parallelism would
    all-reduce a partial sum, the copies' parts are added: the gradients
    and the loss accumulate as each microbatch finishes (so a microbatch's
    activations are dead before the next begins, and with data parallelism
    the gradients are all-reduced once, after the last microbatch); a sum
    needed inside the step, such as the loss's count of labels, is computed
    from every microbatch first, so the result is the full batch's step, as
    PyTorch's accumulation with the loss divided by the global token count.
    Gradients a cast narrows (bf16 ones, dtc-master-weights) add up before
    the cast, in f32. The adds over microbatches are tagged
    `dtc.microbatch_sum` and the step's `dtc.step` records K
    (`microbatches`); dtc-zero reads both. Dropout is refused: the
    microbatches have no rank to index its mask by.
  }];
  let options = [
    Option<"microbatches", "microbatches", "int64_t", /*default=*/"2",
           "Number of microbatches">,
    Option<"strictSharding", "strict-sharding", "bool", /*default=*/"false",
           "Refuse, with an error naming the op, the operand and the bytes, "
           "every activation an op's layouts would have all-gathered">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def PipelineParallel : Pass<"dtc-pipeline-parallel", "mlir::ModuleOp"> {
  let summary = "Cut the step into pipeline stages over pp and order its "
                "microbatches by a schedule";
  let description = [{
    Runs where dtc-gradient-accumulation would (after the other
    parallelism passes, before dtc-optimizer), in its place. The program of
    one microbatch is cut into the schedule's stages (pp ranks x virtual
    stages): the forward ops that read the batch at the points where the
    fewest activation bytes cross (at most twice the fewest), balanced by
    forward and backward roofline time, or after the transformer layers
    `split` gives each stage; each backward op joins the stage of the forward op it
    differentiates (by location), never above a backward value it reads
    (what reads forward values alone goes to the last stage it reads);
    ops that read no batch value run where what they read is held. The program is unrolled
    over the microbatches (as gradient accumulation unrolls it) and its ops
    are ordered as the schedule (`schedule`: gpipe, 1f1b, interleaved,
    zb-h1, zbv) runs the fragments on unit costs; the zero-bubble schedules
    split a backward fragment into its input gradient (what a lower stage
    reads) and its weight gradients. Ops carry `dtc.stage`,
    `dtc.microbatch` and `dtc.fragment`; the step carries `dtc.pipeline` (the stage-to-rank
    map). Each parameter is held by the pp ranks whose stages read it
    (`dtc.pp_ranks` on the argument, where not every rank: a tied
    embedding by the first and the last stage's), with its gradient and,
    after the optimizer, its state. A value read on another pp rank is
    broadcast over pp after the op that makes it (point to point where
    only some ranks read it): activations, a gradient to the other ranks
    holding its parameter, the loss and outputs to every rank.

    ```mlir
    %h = dtc.matmul %x, %w {dtc.stage = 0 : i64, dtc.microbatch = 1 : i64}
    %t = dtc.collective_broadcast %h on @mesh axes = ["pp"] root = 0
    ```
  }];
  let options = [
    Option<"size", "size", "int64_t", /*default=*/"2", "Ranks of the pp axis">,
    Option<"microbatches", "microbatches", "int64_t", /*default=*/"1",
           "Microbatches per step">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"1f1b\"",
           "gpipe, 1f1b, interleaved, zb-h1 or zbv">,
    Option<"virtualStages", "virtual-stages", "int64_t", /*default=*/"1",
           "Model chunks per rank (interleaved)">,
    Option<"split", "split", "std::string", /*default=*/"\"auto\"",
           "auto, or the transformer layers of each stage (counts or "
           "ranges, as dtc-compile's --pipeline-split)">,
    Option<"strictSharding", "strict-sharding", "bool", /*default=*/"false",
           "Refuse, with an error naming the op, the operand and the bytes, "
           "every activation an op's layouts would have all-gathered">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def AnalyzeSharding : Pass<"dtc-analyze-sharding", "mlir::ModuleOp"> {
  let summary = "Layouts and collectives a partition over one axis implies, "
                "without partitioning";
  let description = [{
    The propagation engine's analysis mode, on a differentiated step (after
    dtc-autodiff): for data parallelism (`axis=dp`: the batch split over
    `size` ranks) or tensor parallelism (`axis=tp`: the parameter layouts
    dtc-tensor-parallel would choose, with `strategy`, `sharding-spec` and
    `sequence-parallel` as there), every value's layout and every
    collective the partitioner would insert or change -- its kind, bus
    bytes and reason, after the partitioner's clean-up -- are worked out
    from the ops' sharding rules and the named patterns, and nothing is
    partitioned. Each op with a split or partial result is annotated with
    `dtc.layouts` (one #dtc.sharding per result; `partial` names the axis of
    a partial sum), each split argument with `dtc.layout`; each collective,
    each op that would run replicated and the totals are reported as
    remarks, so that layouts can be weighed without rewriting the step.
    The module's mesh gets the axis, as the partitioning passes give it.

    With `check-rewrite`, the pass also partitions a copy of the module and
    fails unless the copy's collectives are exactly those predicted.
  }];
  let options = [
    Option<"axis", "axis", "std::string", /*default=*/"\"tp\"",
           "dp (the batch) or tp (tensor parallelism)">,
    Option<"size", "size", "int64_t", /*default=*/"2", "Number of ranks">,
    Option<"strategy", "strategy", "::mlir::dtc::TPStrategy",
           /*default=*/"::mlir::dtc::TPStrategy::Megatron",
           "With axis=tp: the parameters split without a sharding spec",
           "::mlir::dtc::tpStrategyValues()">,
    Option<"shardingSpec", "sharding-spec", "std::string", /*default=*/"",
           "With axis=tp: JSON file of parameter layouts">,
    Option<"sequenceParallel", "sequence-parallel", "bool",
           /*default=*/"false", "With axis=tp: sequence parallelism">,
    Option<"checkRewrite", "check-rewrite", "bool", /*default=*/"false",
           "Partition a copy and check that its collectives are the ones "
           "predicted">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def VerifyRankProgram : Pass<"dtc-verify-rank-program",
                             "mlir::func::FuncOp"> {
  let summary = "Check the per-rank step before it is written out";
  let description = [{
    The end of the per-rank phase (dtc-training runs it last). For each
    function with a `dtc.step`: the step's ABI attributes are consistent
    and describe a step dtc-run accepts (the checks it makes when it binds
    one: roles, layouts over the mesh's axes, aliasing of updates, the ABI
    version), every trainable parameter has an update, and every
    collective runs on the step's mesh. Fails naming the first problem;
    changes nothing.
  }];
}

#endif // DTC_TRANSFORMS_PARALLEL_PASSES_TD
