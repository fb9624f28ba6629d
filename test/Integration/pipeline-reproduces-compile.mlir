// dtc-opt reproduces dtc-compile: the model imported by dtc-translate (with
// its locations, which name the ONNX nodes in collectives' reasons) and run
// through the dtc-training pipeline that dtc-compile's manifest records
// gives byte for byte the step dtc-compile wrote. The meshes list tp first
// or dp first: ranks are laid out in the order given, by either tool.
// RUN: rm -rf %t && mkdir -p %t

// tp before dp, ZeRO-1, a warm-up whose start factor (1/3) must print
// back exactly.
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt --verify --mesh tp=2,dp=2 --zero 1 --lr 0.01 --schedule warmup-cosine --warmup-steps 3 2>/dev/null
// RUN: dtc-translate --import-onnx %S/../../examples/tiny_transformer/model.onnx --mlir-print-debuginfo | sed 's/@forward(/@train_step(/' > %t/gpt/forward.mlir
// RUN: dtc-opt %t/gpt/forward.mlir --pass-pipeline="$(%python %S/../Utils/manifest_pipeline.py %t/gpt)" -o %t/gpt/opt.mlir
// RUN: cmp %t/gpt/opt.mlir %t/gpt/train_step.mlir
// RUN: FileCheck %s --check-prefix=GPT < %t/gpt/opt.mlir
// GPT: dtc.mesh @mesh ["tp" = 2, "dp" = 2]

// Llama: sequence parallelism, bf16 with master weights,
// SGD with momentum.
// RUN: dtc-compile %S/../../examples/tiny_llama/model.onnx -o %t/llama --verify --mesh dp=2,tp=2 --sequence-parallel --precision bf16 --optimizer sgd --momentum 0.9 --lr 0.05 2>/dev/null
// RUN: dtc-translate --import-onnx %S/../../examples/tiny_llama/model.onnx --mlir-print-debuginfo | sed 's/@forward(/@train_step(/' > %t/llama/forward.mlir
// RUN: dtc-opt %t/llama/forward.mlir --pass-pipeline="$(%python %S/../Utils/manifest_pipeline.py %t/llama)" -o %t/llama/opt.mlir
// RUN: cmp %t/llama/opt.mlir %t/llama/train_step.mlir
// RUN: FileCheck %s --check-prefix=LLAMA < %t/llama/opt.mlir
// LLAMA: dtc.mesh @mesh ["dp" = 2, "tp" = 2]

// One device: fp16 with loss scaling, gradient accumulation, clipping, a
// no-decay regex.
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/fp16 --precision fp16 --grad-accum 2 --bucket-mb 0.01 --clip-grad-norm 1 --no-decay 'bias|ln' 2>/dev/null
// RUN: dtc-translate --import-onnx %S/../../examples/tiny_transformer/model.onnx --mlir-print-debuginfo | sed 's/@forward(/@train_step(/' > %t/fp16/forward.mlir
// RUN: dtc-opt %t/fp16/forward.mlir --pass-pipeline="$(%python %S/../Utils/manifest_pipeline.py %t/fp16)" -o %t/fp16/opt.mlir
// RUN: cmp %t/fp16/opt.mlir %t/fp16/train_step.mlir

// Training dropout on a dp=2 mesh: dtc-translate takes the same import
// options as dtc-compile (--dropout --seed).
// RUN: dtc-compile %S/../Import/ONNX/Inputs/dropout_classifier.onnx -o %t/drop --dropout --seed 7 --verify --mesh dp=2 2>/dev/null
// RUN: dtc-translate --import-onnx %S/../Import/ONNX/Inputs/dropout_classifier.onnx --dropout --seed 7 --mlir-print-debuginfo | sed 's/@forward(/@train_step(/' > %t/drop/forward.mlir
// RUN: dtc-opt %t/drop/forward.mlir --pass-pipeline="$(%python %S/../Utils/manifest_pipeline.py %t/drop)" -o %t/drop/opt.mlir
// RUN: cmp %t/drop/opt.mlir %t/drop/train_step.mlir
// RUN: FileCheck %s --check-prefix=DROP < %t/drop/opt.mlir
// DROP: dtc.dropout {{.*}} seed = 7

// The pipeline checks its options as dtc-compile does.
// RUN: not dtc-opt %t/gpt/forward.mlir --dtc-training="mesh=dp=2,xp=2" 2>&1 | FileCheck %s --check-prefix=AXIS
// AXIS: dtc-training: option 'mesh': unknown axis 'xp' (pp, dp, cp, tp or ep)
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/x --verify --mesh dp=2,xp=2 2>&1 | FileCheck %s --check-prefix=AXIS-FLAG
// AXIS-FLAG: error: --mesh: unknown axis 'xp' (pp, dp, cp, tp or ep)
// RUN: not dtc-opt %t/gpt/forward.mlir --dtc-training="mesh=dp=2 sequence-parallel=1" 2>&1 | FileCheck %s --check-prefix=SP
// SP: dtc-training: option 'sequence-parallel' needs a tp axis of 2 or more ranks (mesh=...,tp=N)
// RUN: not dtc-opt %t/gpt/forward.mlir --dtc-training="optimizer=lamb" 2>&1 | FileCheck %s --check-prefix=ENUM
// ENUM: for the --optimizer option: Cannot find option named 'lamb'!
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/x --loss mse 2>&1 | FileCheck %s --check-prefix=LOSS
// LOSS: error: --loss: unknown loss 'mse' (cross-entropy, distillation or output:NAME)
