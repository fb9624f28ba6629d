// Every loop and multi-tensor fusion group of whole fused training steps,
// lowered to its linalg kernel, compiled in process and run on random
// inputs (infinities and NaNs mixed in) against the reference executor:
// GPT-2 on one device (its 30 loop groups and AdamW's multi-tensor group of
// 85 updated values), Llama on dp=2 x tp=2 with sequence parallelism and
// ZeRO-1 (its rank program: rotary, RMS norm, SiLU, masks, the updates).
// RUN: rm -rf %t && mkdir -p %t
// RUN: dtc-compile %S/../Integration/Inputs/hf5/gpt2-names/model.onnx -o %t/gpt2 --lr 0.01 2> /dev/null
// RUN: dtc-opt --dtc-fuse %t/gpt2/train_step.mlir | dtc-opt --dtc-test-check-loop-kernels -o /dev/null | FileCheck %s --check-prefix=GPT2
// RUN: dtc-compile %S/../Integration/Inputs/hf5/llama-names/model.onnx -o %t/llama --lr 0.01 --mesh dp=2,tp=2 --sequence-parallel --zero 1 2> /dev/null
// RUN: dtc-opt --dtc-fuse %t/llama/train_step.mlir | dtc-opt --dtc-test-check-loop-kernels -o /dev/null | FileCheck %s --check-prefix=LLAMA
// GPT2: checked 31 loop kernels, 0 disagree
// LLAMA: checked 94 loop kernels, 0 disagree
