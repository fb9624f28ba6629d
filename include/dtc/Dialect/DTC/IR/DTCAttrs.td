//===- DTCAttrs.td - dtc attributes ------------------------*- tablegen -*-===//

#ifndef DTC_ATTRS_TD
#define DTC_ATTRS_TD

include "dtc/Dialect/DTC/IR/DTCDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def DTC_ShardingAttr : AttrDef<DTC_Dialect, "Sharding"> {
  let mnemonic = "sharding";
  let summary = "How a tensor is laid out over a device mesh";
  let description = [{
    For every dimension of a tensor, the mesh axes it is split over (none:
    the dimension is whole on every rank). A rank holds chunk r of the
    dimension, r its coordinate on the axis; a dimension split over several
    axes is split by each in turn (tp's part, then dp's part of that). With
    `blocks`, the first split views the dimension as `blocks[d]` equal
    blocks and splits every block: the rank holds chunk r of each block, in
    block order (a fused QKV weight split by heads holds its heads' q, k
    and v); a negative count -b mirrors the odd-numbered of b blocks, which
    give rank r chunk n - 1 - r (-2: context parallelism's zigzag order,
    chunks r and 2n - 1 - r of 2n). `partial` names
    the axes over which the ranks' values are partial sums of the whole.

    The partitioners put it on the arguments of the per-rank program
    (`dtc.sharding`), so that a runner can hand each rank its part of a
    whole tensor and put the parts back together for dumps.

    ```mlir
    #dtc.sharding<@mesh, [["tp"], []] blocks = [3, 1]>
    ```
  }];
  let parameters = (ins "FlatSymbolRefAttr":$mesh, "ArrayAttr":$dims,
                        OptionalArrayRefParameter<"int64_t">:$blocks,
                        OptionalParameter<"ArrayAttr">:$partial);
  let assemblyFormat = "`<` $mesh `,` $dims (`blocks` `=` `[` $blocks^ `]`)? "
                       "(`partial` `=` $partial^)? `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The axes dimension `dim` is split over.
    ::llvm::SmallVector<::llvm::StringRef> axesOf(unsigned dim) const;
    /// The blocks of dimension `dim` (1 without `blocks`).
    int64_t blocksOf(unsigned dim) const;
  }];
}

//===----------------------------------------------------------------------===//
// The step ABI: what a training step's arguments and results are
//===----------------------------------------------------------------------===//

def DTC_StateKind : I32EnumAttr<"StateKind",
    "what a training-state argument holds", [
      I32EnumAttrCase<"Step", 0, "step">,
      I32EnumAttrCase<"ExpAvg", 1, "exp_avg">,
      I32EnumAttrCase<"ExpAvgSq", 2, "exp_avg_sq">,
      I32EnumAttrCase<"MomentumBuffer", 3, "momentum_buffer">,
      I32EnumAttrCase<"Master", 4, "master">,
      I32EnumAttrCase<"LossScale", 5, "loss_scale">,
      I32EnumAttrCase<"GrowthTracker", 6, "growth_tracker">
    ]> {
  let cppNamespace = "::mlir::dtc";
  let genSpecializedAttr = 0;
}

def DTC_StateAttr : AttrDef<DTC_Dialect, "State"> {
  let mnemonic = "state";
  let summary = "What a training-state argument of a step holds";
  let description = [{
    The argument attribute `dtc.state` of a training step's state: the
    optimizer's (and the training loop's) values that persist from step to
    step. The kinds, named as PyTorch names them:

    | kind | of a parameter | what |
    | --- | --- | --- |
    | `step` | no | the number of steps taken (i64; AdamW's `t - 1`, dropout's counter) |
    | `exp_avg`, `exp_avg_sq` | yes | AdamW's first and second moments |
    | `momentum_buffer` | yes | SGD's momentum |
    | `master` | yes | the f32 copy of a parameter stored in a narrower type |
    | `loss_scale`, `growth_tracker` | no | dynamic loss scaling (fp16): the scale and the finite steps since it last changed |

    State of a parameter names it (its `dtc.param`); the other kinds name
    none. A runner starts every state at zero, except a `master` copy, which
    starts from its parameter's value, and state with a `dtc.value` (the
    loss scale), which starts from that.

    ```mlir
    %m: tensor<4xf32> {dtc.state = #dtc.state<exp_avg of "fc.weight">}
    %t: tensor<i64> {dtc.state = #dtc.state<step>}
    ```
  }];
  let parameters = (ins EnumParameter<DTC_StateKind>:$kind,
                        OptionalParameter<"StringAttr">:$param);
  let assemblyFormat = "`<` $kind (`of` $param^)? `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether state of `kind` belongs to a parameter (and names it).
    static bool isPerParameter(StateKind kind);
    /// How messages, collective reasons and name-keyed files call it:
    /// `exp_avg/<param>`, or the kind alone (`step`). Never parsed back.
    std::string getDisplayName() const;
  }];
}

def DTC_RngAttr : AttrDef<DTC_Dialect, "Rng"> {
  let mnemonic = "rng";
  let summary = "The key and counter of a step's random numbers";
  let description = [{
    Dropout draws with Philox4x32-10 keyed on `seed` (and each site's
    stream) at the counter that argument `counter` of the step holds (the
    `step` state, which the optimizer increments).
  }];
  let parameters = (ins "int64_t":$seed, "int64_t":$counter);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def DTC_LossScalingAttr : AttrDef<DTC_Dialect, "LossScaling"> {
  let mnemonic = "loss_scaling";
  let summary = "Dynamic loss scaling's settings";
  let description = [{
    As `torch.cuda.amp.GradScaler`: the scale (state `loss_scale`, starting
    at its `dtc.value`) halves on a step with a non-finite gradient and
    doubles after `growth_interval` finite steps in a row (state
    `growth_tracker`).
  }];
  let parameters = (ins "int64_t":$growth_interval);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def DTC_StepAttr : AttrDef<DTC_Dialect, "Step"> {
  let mnemonic = "step";
  let summary = "A training step's description: the step ABI";
  let description = [{
    The function attribute `dtc.step` makes a function a training step and
    says what a runner needs beyond the arguments' own attributes:

    - `abi`: the version of this contract (docs/StepABI.md) the step was
      built for; a runner refuses any other;
    - `loss`: the index of the result holding the scalar loss;
    - `microbatches`: how many microbatches the step runs in sequence
      (gradient accumulation; default 1);
    - `mesh`: the `dtc.mesh` the step's program runs on (absent: one
      device);
    - `rng`: the key and counter of dropout's random numbers;
    - `loss_scaling`: dynamic loss scaling's settings (fp16);
    - `stage`: the pipeline stage the function is (absent: the whole step).

    Passes fill it in as they build the step: the importer (`rng`),
    dtc-mixed-precision (`loss_scaling`), dtc-attach-loss (`loss`), the
    partitioners (`mesh`), dtc-gradient-accumulation (`microbatches`).
    The arguments say the rest: `dtc.input`, `dtc.param`, `dtc.state`,
    and `dtc.aliasing_output = i` on each argument whose next value is
    result i.

    ```mlir
    func.func @train_step(...) -> (...) attributes {
      dtc.step = #dtc.step<abi = 1, loss = 0, microbatches = 2, mesh = @mesh,
                           rng = <seed = 7, counter = 9>,
                           loss_scaling = <growth_interval = 2000>>}
    ```
  }];
  let parameters = (ins "int64_t":$abi,
                        OptionalParameter<"std::optional<int64_t>">:$loss,
                        DefaultValuedParameter<"int64_t", "1">:$microbatches,
                        OptionalParameter<"FlatSymbolRefAttr">:$mesh,
                        OptionalParameter<"RngAttr">:$rng,
                        OptionalParameter<"LossScalingAttr">:$loss_scaling,
                        OptionalParameter<"std::optional<int64_t>">:$stage);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // DTC_ATTRS_TD
