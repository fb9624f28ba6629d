// The step ABI between dtc-compile and dtc-run (docs/StepABI.md): what the
// compiled step records about itself, and a step compiled for another ABI
// version refused by dtc-run with a message that says so.

// A step with every field: a mesh, microbatches, loss scaling, ZeRO's
// split state. manifest.json describes it as dtc-run reads it.
// RUN: rm -rf %t && dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/rich --verify --mesh dp=2,tp=2 --grad-accum 2 --precision fp16 --zero 1 2>/dev/null
// RUN: FileCheck %s --check-prefix=IR < %t/rich/train_step.mlir
// IR: func.func @train_step(
// IR-SAME: %arg1: tensor<32x32xf32> {dtc.aliasing_output = 18 : i64, dtc.param = "wte.weight", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["tp"], []]>
// IR-SAME: %arg22: tensor<32x16xf32> {dtc.aliasing_output = 19 : i64, dtc.sharding = #dtc.sharding<@mesh, {{\[}}["tp"], ["dp"]]>, dtc.state = #dtc.state<exp_avg of "wte.weight">}
// IR-SAME: attributes {{{.*}}dtc.step = #dtc.step<abi = 1, loss = 0, microbatches = 2, mesh = @mesh, loss_scaling = <growth_interval = 2000>>, dtc.zero_stage = 1 : i64}
// RUN: %python %S/../Utils/print_step_abi.py %t/rich/manifest.json | FileCheck %s --check-prefix=RICH
// RICH: step abi=1 function=train_step loss=0 microbatches=2 mesh=dp=2,tp=2 loss_scaling.growth_interval=2000
// RICH-NEXT: argument 0: input ids i64[2,8] sharding={{\[}}[dp],[]]
// RICH-NEXT: argument 1: parameter wte.weight f32[32,32] sharding={{\[}}[tp],[]] aliasing_output=18
// RICH: argument 5: parameter block.qkv.weight f32[48,32] sharding={{\[}}[tp],[]] blocks=[3, 1] aliasing_output=30
// RICH: argument 18: state loss_scale f32[] aliasing_output=70
// RICH-NEXT: argument 19: state growth_tracker i64[] aliasing_output=71
// RICH-NEXT: argument 20: input labels i64[2,8] sharding={{\[}}[dp],[]]
// RICH-NEXT: argument 21: state step i64[] aliasing_output=69
// RICH-NEXT: argument 22: state exp_avg of wte.weight f32[32,16] sharding={{\[}}[tp],[dp]] aliasing_output=19
// RICH: argument 30: state exp_avg of block.qkv.weight f32[48,16] sharding={{\[}}[tp],[dp]] blocks=[3, 1] aliasing_output=31
// RICH: result 0: loss f32[]
// The gradients are ZeRO's shards; an update has its argument's layout.
// RICH-NEXT: result 1: gradient of wte.weight f32[32,16] sharding={{\[}}[tp],[dp]]
// RICH: result 18: update of argument 1 f32[32,32] sharding={{\[}}[tp],[]]
// RICH-NEXT: result 19: update of argument 22 f32[32,16] sharding={{\[}}[tp],[dp]]
// RICH: result 71: update of argument 19 i64[]
// The learning rate the step used, for dtc-run's --metrics.
// RICH-NEXT: result 72: output learning_rate f32[]
// RICH-NOT: result

// Dropout records its key and counter, the step state.
// RUN: dtc-compile %S/../Import/ONNX/Inputs/dropout_classifier.onnx -o %t/dropout --dropout --seed 7 2>/dev/null
// RUN: %python %S/../Utils/print_step_abi.py %t/dropout/manifest.json | FileCheck %s --check-prefix=RNG
// RNG: step abi=1 function=train_step loss=0 microbatches=1 mesh=none rng.seed=7 rng.counter=[[COUNTER:[0-9]+]]
// RNG: argument [[COUNTER]]: state step i64[]

// A step dtc-run reads:
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/step 2>/dev/null
// RUN: dtc-run %t/step --batch %S/Inputs/tiny_transformer/batch --steps 1 | FileCheck %s --check-prefix=RUNS
// RUNS: step 1/1 loss

// The same step from an older ABI version, refused before any attribute
// is read:
// RUN: mkdir -p %t/old && cp %t/step/report.json %t/old/
// RUN: sed -e 's/#dtc.step<abi = 1,/#dtc.step<abi = 0,/' %t/step/train_step.mlir > %t/old/train_step.mlir
// RUN: not dtc-run %t/old --batch %S/Inputs/tiny_transformer/batch --steps 1 2>&1 | FileCheck %s --check-prefix=OLD
// OLD: error: {{.*}}old/train_step.mlir was compiled for step ABI version 0, but this build reads version 1: recompile it with dtc-compile
// OLD-NOT: error

// One written before the step ABI had a version: no dtc.step, and state
// named by strings (`dtc.state = "exp_avg/<param>"`), which would not
// verify; the message is the version's.
// RUN: mkdir -p %t/unversioned
// RUN: sed -e 's/ attributes {dtc.step = #dtc.step<abi = 1, loss = 0>}//' -e 's/#dtc.state<\([a-z_]*\) of "\([^"]*\)">/"\1\/\2"/g' %t/step/train_step.mlir > %t/unversioned/train_step.mlir
// RUN: FileCheck %s --check-prefix=UNVERSIONED-IR < %t/unversioned/train_step.mlir
// UNVERSIONED-IR: dtc.state = "exp_avg/wte.weight"
// UNVERSIONED-IR-NOT: dtc.step
// RUN: not dtc-run %t/unversioned --batch %S/Inputs/tiny_transformer/batch --steps 1 2>&1 | FileCheck %s --check-prefix=UNVERSIONED
// UNVERSIONED: error: {{.*}}unversioned/train_step.mlir has no step ABI version (written by a dtc-compile older than step ABI version 1): recompile it with dtc-compile
// UNVERSIONED-NOT: error

// A newer version may spell its description in a way this build cannot
// parse: the parser's error comes with the version's note.
// RUN: mkdir -p %t/newer
// RUN: sed -e 's/#dtc.step<abi = 1, loss = 0>/#dtc.step<abi = 2, loss = 0, schedule = 1>/' %t/step/train_step.mlir > %t/newer/train_step.mlir
// RUN: not dtc-run %t/newer --batch %S/Inputs/tiny_transformer/batch --steps 1 2>&1 | FileCheck %s --check-prefix=NEWER
// NEWER: error:
// NEWER: note: {{.*}}newer/train_step.mlir was compiled for step ABI version 2, but this build reads version 1: recompile it with dtc-compile
