//===- Passes.td - training-step passes --------------------*- tablegen -*-===//
//
// The passes that turn a model's forward function into a training step:
// attach a loss, differentiate, apply the optimizer.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TRANSFORMS_TRAINING_PASSES_TD
#define DTC_TRANSFORMS_TRAINING_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttachLoss : Pass<"dtc-attach-loss", "mlir::func::FuncOp"> {
  let summary = "Make the function return a scalar training loss";
  let description = [{
    `loss=cross-entropy`: token-level cross-entropy of the output named
    `logits` (classes along the last dimension) against a new int64 input
    named `labels` (the logits' shape without the class dimension), averaged
    over the tokens whose label is not `ignore-index`, as PyTorch's
    `cross_entropy(..., ignore_index=...)`.
    `loss=output:NAME`: the model's own scalar output NAME is the loss.
    `loss=distillation`: knowledge distillation from the teacher's logits,
    the output `teacher-logits` names (dtc-inline-teacher makes it):
    `alpha * T^2 * KL(softmax(teacher/T) || softmax(student/T)) +
    (1 - alpha) * cross-entropy`, the KL summed over classes and averaged
    over all tokens (PyTorch's `kl_div(..., reduction='batchmean')` on
    [tokens, classes]); the ignore index applies to the cross-entropy only.
    `aux-loss=NAME=COEF,...` adds each named scalar output times COEF to
    the loss (a mixture of experts' load-balancing loss: Switch's and
    GShard's, Mixtral's `router_aux_loss_coef`); the partitioners keep it
    the whole batch's.

    Afterwards the function is a training step: it returns the loss alone,
    and its `dtc.step` (made here if no earlier pass made one) names that
    result as the loss (docs/StepABI.md).

    ```mlir
    // before: func @forward(%ids ...) -> (tensor<2x8x64xf32> {dtc.output = "logits"})
    // after:  func @forward(%ids ..., %labels: tensor<2x8xi64> {dtc.input = "labels"})
    //             -> tensor<f32> attributes {dtc.step = #dtc.step<abi = 1, loss = 0>}
    ```
  }];
  let options = [
    Option<"loss", "loss", "std::string", /*default=*/"\"cross-entropy\"",
           "cross-entropy, distillation, or output:NAME for a model that "
           "computes its loss (any other value is an error when the pass "
           "runs)">,
    Option<"logits", "logits", "std::string", /*default=*/"\"logits\"",
           "Output holding the logits (cross-entropy, distillation)">,
    Option<"labels", "labels", "std::string", /*default=*/"\"labels\"",
           "Name of the labels input to add (cross-entropy, distillation)">,
    Option<"ignoreIndex", "ignore-index", "int64_t", /*default=*/"-100",
           "Label value whose tokens do not count (cross-entropy, and "
           "distillation's cross-entropy term)">,
    Option<"teacherLogits", "teacher-logits", "std::string",
           /*default=*/"\"teacher/logits\"",
           "Output holding the teacher's logits (distillation)">,
    Option<"auxLoss", "aux-loss", "std::string", /*default=*/"\"\"",
           "NAME=COEF[,NAME=COEF...]: scalar model outputs added to the "
           "loss times COEF">,
    Option<"temperature", "temperature", "double", /*default=*/"1.0",
           "Distillation temperature T">,
    Option<"alpha", "alpha", "double", /*default=*/"0.5",
           "Weight of the distillation term">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def MixedPrecision : Pass<"dtc-mixed-precision", "mlir::func::FuncOp"> {
  let summary = "Compute a forward function in bf16 or fp16 with fp32 master "
                "weights";
  let description = [{
    Runs before dtc-attach-loss, on the model's forward function (in
    dtc-training after dtc-raise-attention). Float parameters stay f32
    (the master weights the optimizer updates); each use by an op casts
    them to the type the op computes in (one cast per use, so that a tied
    weight's gradients meet, and add up, in f32). Ops with the
    `ComputesInF32` trait (DTCTraits.h), those that accumulate or
    normalize, compute in f32 on f32 operands: softmax, log_softmax,
    layer_norm, rms_norm, reduce_sum, reduce_mean (and iota, whose integers
    bf16 cannot hold). Every other op with a float operand or result
    computes in the 16-bit type, `dtc.attention` included (its softmax is
    inside it); constants are cast where they are used. The function's
    float results are cast back to f32, so the loss dtc-attach-loss builds
    on them is computed in f32. Gradients reach the parameters through the
    casts' VJPs, in f32.

    With `type=f16`, whose range is narrow, the loss is also scaled
    dynamically as `torch.cuda.amp.GradScaler` does: the pass adds the
    state `#dtc.state<loss_scale>` (f32, starting at `init-scale`, its
    `dtc.value`) and `#dtc.state<growth_tracker>` (i64), and records
    `growth-interval` in the step's `dtc.step` (`loss_scaling`);
    dtc-autodiff then seeds the backward pass with the scale, and
    dtc-optimizer unscales the gradients, skips the whole update when any
    is not finite, and halves the scale (or doubles it after
    `growth-interval` finite steps in a row).

    ```mlir
    // before: %y = dtc.matmul %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
    // after:  %xb = dtc.cast %x : tensor<2x4xf32> to tensor<2x4xbf16>
    //         %wb = dtc.cast %w : tensor<4x3xf32> to tensor<4x3xbf16>
    //         %yb = dtc.matmul %xb, %wb : (...) -> tensor<2x3xbf16>
    //         %y = dtc.cast %yb : tensor<2x3xbf16> to tensor<2x3xf32>
    ```
  }];
  let options = [
    Option<"type", "type", "::mlir::dtc::HalfType",
           /*default=*/"::mlir::dtc::HalfType::BF16",
           "Compute type (f16 adds dynamic loss scaling)",
           "::mlir::dtc::halfTypeValues()">,
    Option<"initScale", "init-scale", "double", /*default=*/"65536.0",
           "Initial loss scale (f16)">,
    Option<"growthInterval", "growth-interval", "int64_t",
           /*default=*/"2000",
           "Finite steps after which the loss scale doubles (f16)">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def MasterWeights : Pass<"dtc-master-weights", "mlir::func::FuncOp"> {
  let summary = "Keep trainable parameters and their gradients in bf16; "
                "dtc-optimizer then keeps f32 master copies";
  let description = [{
    Runs after dtc-autodiff on a function dtc-mixed-precision computed in
    bf16, and gives it the ZeRO paper's mixed-precision state: every
    trainable f32 parameter argument becomes bf16 (2 bytes per parameter:
    the casts of it to bf16 go away, readers that compute in f32 get a
    cast of it), and its gradient result is rounded to bf16 (2 bytes; the
    contributions of several uses still add up in f32 first, and the
    data-parallel sum then moves bf16). dtc-optimizer updates a parameter
    stored in less than f32 through an f32 master copy, the state
    `#dtc.state<master of "<name>">`, with f32 moments (AdamW): 4 + 8
    bytes more, 16 per parameter in all, split 2 + 2 + 12 as in the
    paper. dtc-run starts the master
    copy from the parameter's f32 value and dumps it as the parameter.
  }];
  let options = [
    Option<"type", "type", "::mlir::dtc::HalfType",
           /*default=*/"::mlir::dtc::HalfType::BF16",
           "Storage type of the parameters and gradients (bf16 only)",
           "::mlir::dtc::halfTypeValues()">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def VerifyGlobalStep : Pass<"dtc-verify-global-step", "mlir::func::FuncOp"> {
  let summary = "Check the global training step before it is partitioned";
  let description = [{
    The end of the global-step phase (dtc-training runs it after
    dtc-autodiff and dtc-master-weights). For each function with a
    `dtc.step`: the step's ABI attributes are consistent (the
    TrainingStep view accepts them), the loss is an f32 scalar, every
    trainable parameter has a gradient result of its own type and no frozen
    one has any, and the step is still global: its `dtc.step` names no
    mesh, no argument or result is laid out, no collective or `dtc.shard`
    is in it. Fails naming the first problem; changes nothing.
  }];
}

def InlineTeacher : Pass<"dtc-inline-teacher", "mlir::ModuleOp"> {
  let summary = "Run a frozen teacher model inside the student's function";
  let description = [{
    For knowledge distillation. The module holds the student's function and
    the teacher's `@teacher` (both as imported). The teacher's body is
    inlined at the start of the student's function: its inputs are the
    student's inputs of the same `dtc.input` name (and type), its
    parameters become frozen parameters of the student function
    (`dtc.param = "teacher/<name>"`, `dtc.trainable = false`, with the
    teacher's `dtc.value`), and its outputs become results marked
    `dtc.output = "teacher/<name>"`. `@teacher` is removed. dtc-training
    runs it first (after dtc-define-mesh) when the loss is distillation.
  }];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def ExpertLoad : Pass<"dtc-expert-load", "mlir::func::FuncOp"> {
  let summary = "Return how many tokens each expert of a mixture receives";
  let description = [{
    For a training step (after dtc-autodiff) whose routers are top_k ops
    choosing among the same number of experts: adds the result
    `expert_tokens` (`dtc.output`), f32 [routers, experts], how many of
    the batch's (token, choice) pairs each router sent to each expert (as
    routed, before a capacity drops any), the routers in program order.
    dtc-run writes it to --metrics and prints the last step's. A step
    without routers is left as it is.
  }];
}

def ExpandAttentionGrad : Pass<"dtc-expand-attention-grad",
                                "mlir::func::FuncOp"> {
  let summary = "Write each dtc.attention_grad as the ops it stands for";
  let description = [{
    dtc-autodiff makes attention's backward one op, dtc.attention_grad, for
    the partitioners that key on it (context parallelism). Where nothing
    does -- dtc-training runs this pass right after dtc-autodiff without a
    cp axis, and after dtc-context-parallel with one -- it becomes the
    matmuls, reductions and elementwise ops it stands for, which every other
    pass, executor and backend knows.
  }];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def Autodiff : Pass<"dtc-autodiff", "mlir::func::FuncOp"> {
  let summary = "Reverse-mode differentiation of the loss";
  let description = [{
    Appends to a training step (the scalar float loss its `dtc.step` names;
    under dynamic loss scaling the backward starts from the `loss_scale`
    state instead of 1)
    the gradient of that loss with respect to every trainable parameter (an
    argument marked `dtc.param` and not `dtc.trainable = false`), one result
    each, marked `dtc.grad = "<param>"`.

    Ops are differentiated in reverse through their
    DifferentiableOpInterface; gradients of values used several times add
    up, so a tied weight gets one gradient. Integer and boolean values carry
    none. An op on a path from a parameter to the loss that has no VJP is an
    error naming the op and its node. A parameter the loss does not depend on
    gets a zero gradient.

    ```mlir
    // before: func @f(%w {dtc.param = "w"}, %x) -> tensor<f32>
    //             attributes {dtc.step = #dtc.step<abi = 1, loss = 0>}
    // after:  func @f(%w {dtc.param = "w"}, %x) -> (tensor<f32>, tensor<...> {dtc.grad = "w"})
    //             attributes {dtc.step = #dtc.step<abi = 1, loss = 0>}
    ```

    A VJP builds the adjoints of all its operands; those of operands no
    parameter reaches (a mask's) are left unused, and canonicalization
    erases them at the end of the pipeline. With `erase-dead-adjoints` the
    pass erases them itself, before the partitioners, which would otherwise
    communicate for them. (dtc-training sets it for a mixture sorted by
    dtc-sort-experts, whose routing mask multiplies the experts' outputs.
    Set everywhere it also cuts other layouts' communication -- the tiny
    transformer's tp=2 all-reduces, 12480 to 12420 bus bytes -- which
    dtc-plan's byte-exact figures would have to follow first.)
  }];
  let options = [
    Option<"eraseDeadAdjoints", "erase-dead-adjoints", "bool",
           /*default=*/"false",
           "Erase the adjoints nothing reads before the pass ends">
  ];
  let statistics = [
    Statistic<"numDifferentiated", "num-differentiated",
              "Ops whose VJP was built">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

def Optimizer : Pass<"dtc-optimizer", "mlir::func::FuncOp"> {
  let summary = "Apply an optimizer step to the parameters";
  let description = [{
    Turns a function returning (loss, gradients...) (after `dtc-autodiff`)
    into a training step: it takes the optimizer state as extra arguments
    (`dtc.state`: `#dtc.state<step>`, and per parameter
    `#dtc.state<exp_avg of "p">` and `#dtc.state<exp_avg_sq of "p">` for
    AdamW or `#dtc.state<momentum_buffer of "p">` for SGD with momentum,
    `#dtc.state<master of "p">` for a parameter stored below f32, all zero
    at the start but the master copy, which starts from its parameter) and
    returns, after the loss and the gradients, the updated parameters and
    state. Each trainable parameter and each state argument is donated to
    the step: `dtc.aliasing_output = i` on it says
    that result i is its next value, which a runner feeds back.

    ```mlir
    // after: func @f(%w: tensor<3xf32> {dtc.aliasing_output = 2 : i64, dtc.param = "w"}, ...,
    //                %t: tensor<i64> {dtc.aliasing_output = 5 : i64, dtc.state = #dtc.state<step>},
    //                %m: tensor<3xf32> {dtc.aliasing_output = 3 : i64,
    //                                   dtc.state = #dtc.state<exp_avg of "w">}, ...)
    //            -> (tensor<f32>, tensor<3xf32> {dtc.grad = "w"}, tensor<3xf32>, tensor<3xf32>, ...)
    ```

    The update is PyTorch's: `torch.optim.AdamW` (decoupled weight decay,
    bias correction) or `torch.optim.SGD` (coupled weight decay, momentum,
    Nesterov), after optional global-norm clipping as
    `torch.nn.utils.clip_grad_norm_` (the returned gradients are those before
    clipping). Parameters whose name matches `no-decay` get no weight decay.
    The learning rate is constant, or (`schedule=warmup-cosine`) PyTorch's
    `SequentialLR` of `LinearLR(start_factor=warmup-start-factor,
    total_iters=warmup-steps)` and `CosineAnnealingLR(T_max=total-steps -
    warmup-steps, eta_min=min-lr)`, in closed form. Scalar coefficients are
    computed in f64. With dynamic loss scaling (dtc-mixed-precision
    `type=f16`) it unscales the gradients first (the returned ones
    too), skips the whole update
    when any is not finite, and updates `loss_scale` and
    `growth_tracker`.
  }];
  let options = [
    Option<"optimizer", "optimizer", "::mlir::dtc::OptimizerKind",
           /*default=*/"::mlir::dtc::OptimizerKind::AdamW", "The update rule",
           "::mlir::dtc::optimizerKindValues()">,
    Option<"lr", "lr", "double", /*default=*/"1e-3", "Learning rate">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "AdamW beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "AdamW beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "AdamW epsilon">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.01",
           "Weight decay (AdamW: decoupled; SGD: added to the gradient)">,
    Option<"momentum", "momentum", "double", /*default=*/"0", "SGD momentum">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "SGD Nesterov momentum">,
    Option<"noDecay", "no-decay", "std::string", /*default=*/"\"\"",
           "Regex of parameter names that get no weight decay">,
    Option<"clipGradNorm", "clip-grad-norm", "double", /*default=*/"0",
           "Clip the global gradient norm to this (0: no clipping)">,
    Option<"schedule", "schedule", "::mlir::dtc::LRSchedule",
           /*default=*/"::mlir::dtc::LRSchedule::Constant",
           "Learning-rate schedule", "::mlir::dtc::lrScheduleValues()">,
    Option<"warmupSteps", "warmup-steps", "int64_t", /*default=*/"0",
           "Linear warm-up steps (warmup-cosine)">,
    Option<"warmupStartFactor", "warmup-start-factor", "double",
           /*default=*/"1.0 / 3", "Warm-up's first learning-rate factor, as "
           "LinearLR's start_factor (warmup-cosine)">,
    Option<"totalSteps", "total-steps", "int64_t", /*default=*/"1000",
           "Step at which the cosine reaches min-lr (warmup-cosine)">,
    Option<"minLr", "min-lr", "double", /*default=*/"0",
           "Final learning rate (warmup-cosine)">
  ];
  let dependentDialects = ["mlir::dtc::DTCDialect"];
}

#endif // DTC_TRANSFORMS_TRAINING_PASSES_TD
