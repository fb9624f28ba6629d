// Every kernel of whole fused training steps, as the CPU target fuses them
// (dtc-expand-row-ops, dtc-fuse with row-reductions=rows): each
// loop, multi-tensor and reduction group lowered to its linalg kernel and
// each other op to its scf kernel, compiled in process and run on random
// inputs (infinities and NaNs mixed in) against the reference executor.
// GPT-2 on one device (AdamW's multi-tensor group, attention, layer norms,
// the cross-entropy's expanded log-softmax, gathers); Llama on dp=2 x tp=2 with sequence parallelism
// and ZeRO-1 (its rank program: rotary, RMS norm, SiLU, masks, slices);
// Llama in bf16 on tp=2 (bf16 buffers, f32 arithmetic); the dropout
// classifier (masks drawn in kernels).
// RUN: rm -rf %t && mkdir -p %t
// RUN: dtc-compile %S/../Integration/Inputs/hf5/gpt2-names/model.onnx -o %t/gpt2 --lr 0.01 2> /dev/null
// RUN: dtc-opt --dtc-expand-row-ops --dtc-fuse=row-reductions=rows %t/gpt2/train_step.mlir | dtc-opt --dtc-test-check-kernels -o /dev/null | FileCheck %s --check-prefix=GPT2
// GPT2: checked {{[1-9][0-9]*}} loop kernels, {{[1-9][0-9]*}} reduction kernels and {{[1-9][0-9]*}} op kernels, 0 disagree
// RUN: dtc-compile %S/../Integration/Inputs/hf5/llama-names/model.onnx -o %t/llama --lr 0.01 --mesh dp=2,tp=2 --sequence-parallel --zero 1 2> /dev/null
// RUN: dtc-opt --dtc-expand-row-ops --dtc-fuse=row-reductions=rows %t/llama/train_step.mlir | dtc-opt --dtc-test-check-kernels -o /dev/null | FileCheck %s
// RUN: dtc-compile %S/../../examples/tiny_llama/model.onnx -o %t/llama-bf16 --lr 0.01 --freeze '^rope_' --precision bf16 --mesh tp=2 2> /dev/null
// RUN: dtc-opt --dtc-expand-row-ops --dtc-fuse=row-reductions=rows %t/llama-bf16/train_step.mlir | dtc-opt --dtc-test-check-kernels -o /dev/null | FileCheck %s
// RUN: dtc-compile %S/../Import/ONNX/Inputs/dropout_classifier.onnx -o %t/dropout --dropout --seed 7 --mesh dp=2 2> /dev/null
// RUN: dtc-opt --dtc-expand-row-ops --dtc-fuse=row-reductions=rows %t/dropout/train_step.mlir | dtc-opt --dtc-test-check-kernels -o /dev/null | FileCheck %s
// CHECK: checked {{[1-9][0-9]*}} loop kernels, {{[0-9]+}} reduction kernels and {{[1-9][0-9]*}} op kernels, 0 disagree
