// dtc-compile and dtc-run's training mode on bad input.
// RUN: rm -rf %t && dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/step 2>&1 | FileCheck %s --check-prefix=PROGRESS
// PROGRESS: dtc-compile: importing
// PROGRESS: dtc-compile: building the training step
// PROGRESS: dtc-compile: wrote {{.*}}train_step.mlir, {{.*}}manifest.json and {{.*}}report.json
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/step/manifest.json
// MANIFEST: "function": "train_step"
// MANIFEST: "name": "labels"
// MANIFEST: "name": "wte.weight",
// MANIFEST-NEXT: "trainable": true,
// MANIFEST: "kind": "exp_avg",
// MANIFEST-NEXT: "parameter": "wte.weight",

// RUN: not dtc-run %t/step --steps 2 2>&1 | FileCheck %s --check-prefix=NOBATCH
// NOBATCH: error: training needs --data FILE (a token file) or --batch DIR (the inputs and labels of every step)
// RUN: not dtc-run %t/step --batch %S/Inputs/tiny_transformer/batch --steps 0 2>&1 | FileCheck %s --check-prefix=STEPS
// STEPS: error: --steps is '0': it must be an integer of at least 1
// RUN: mkdir -p %t/nolabels && cp %S/Inputs/tiny_transformer/batch/ids.npy %t/nolabels/
// RUN: not dtc-run %t/step --batch %t/nolabels 2>&1 | FileCheck %s --check-prefix=LABELS
// LABELS: error: no tensor given for input 'labels'

// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/bad --logits nope 2>&1 | FileCheck %s --check-prefix=LOGITS
// LOGITS: error: cross-entropy needs a float output named 'nope'
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/bad --freeze '(' 2>&1 | FileCheck %s --check-prefix=REGEX
// REGEX: error: invalid --freeze regex: parentheses not balanced

// A frozen initializer is a constant of the step (here folded with the
// position lookup into one): no parameter, no gradient, no optimizer state.
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/frozen --freeze '^wpe' 2>/dev/null
// RUN: FileCheck %s --check-prefix=FROZEN < %t/frozen/train_step.mlir
// FROZEN: dtc.param = "wte.weight"
// FROZEN-NOT: wpe.weight
// RUN: dtc-run %t/frozen --batch %S/Inputs/tiny_transformer/batch --steps 2 --dump %t/frozen-dump
// RUN: not ls %t/frozen-dump/grad/wpe.weight.npy
// RUN: not ls %t/frozen-dump/param/wpe.weight.npy
// RUN: ls %t/frozen-dump/grad/wte.weight.npy

// --list-params prints what the importer made of each initializer.
// RUN: dtc-compile %S/../../examples/tiny_llama/model.onnx -o %t/list --list-params --freeze '^rope_' 2>/dev/null | FileCheck %s --check-prefix=LIST
// LIST: rope_cos                                 8x8xf32          constant
// LIST: causal_mask                              8x8xf32          constant
// LIST: embed.weight                             64x32xf32        trainable
