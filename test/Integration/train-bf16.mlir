// bf16 mixed precision (bf16 compute, parameters and gradients; fp32
// master weights, optimizer state and loss) against PyTorch's fp32
// trajectory, within the bf16 bound of docs/Training.md: loss 4u = 1.6e-2 relative, gradients 0.1 relative L2,
// AdamW updates 0.2 relative L2 (u = 2^-8, bf16's unit roundoff).
// RUN: rm -rf %t && dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt --lr 0.01 --weight-decay 0.01 --precision bf16
// RUN: FileCheck %s --check-prefix=IR < %t/gpt/train_step.mlir
// The moments stay f32:
// IR: tensor<64x32xf32> {dtc.aliasing_output = {{[0-9]+}} : i64, dtc.state = #dtc.state<exp_avg of "wte.weight">}
// IR: dtc.matmul {{.*}} -> tensor<2x8x96xbf16>
// IR: dtc.layer_norm {{.*}} -> (tensor<2x8x32xf32>
// RUN: dtc-run %t/gpt --batch %S/Inputs/tiny_transformer/batch --steps 3 --dump %t/gpt-dump
// RUN: %python %S/../Utils/compare_training.py %t/gpt-dump %S/Inputs/tiny_transformer/adamw %S/Inputs/tiny_transformer/initial --loss-rtol 1.6e-2 --grad-rl2 0.1 --update-rl2 0.2 | FileCheck %s
// RUN: dtc-compile %S/../../examples/tiny_llama/model.onnx -o %t/llama --lr 0.01 --weight-decay 0.01 --precision bf16 --freeze '^rope_'
// RUN: dtc-run %t/llama --batch %S/Inputs/tiny_llama/batch --steps 3 --dump %t/llama-dump
// RUN: %python %S/../Utils/compare_training.py %t/llama-dump %S/Inputs/tiny_llama/adamw %S/Inputs/tiny_llama/initial --loss-rtol 1.6e-2 --grad-rl2 0.1 --update-rl2 0.2 | FileCheck %s
// As the ZeRO paper counts mixed precision: the trainable parameters and
// their gradients are bf16 (2 + 2 bytes each), the optimizer updates an
// f32 master copy (state `master` of the parameter, 4) with f32 moments
// (8); dumps hold the master copy.
// RUN: FileCheck %s --check-prefix=STATE < %t/llama/manifest.json
// STATE: "name": "embed.weight",
// STATE-NEXT: "trainable": true,
// STATE-NEXT: "type": "tensor<64x32xbf16>"
// STATE: "kind": "master",
// STATE-NEXT: "parameter": "embed.weight",
// STATE-NEXT: "type": "tensor<64x32xf32>"
// STATE: "kind": "exp_avg",
// STATE-NEXT: "parameter": "embed.weight",
// STATE-NEXT: "type": "tensor<64x32xf32>"
// RUN: FileCheck %s --check-prefix=GRAD < %t/llama/train_step.mlir
// GRAD: tensor<64x32xbf16> {dtc.grad = "embed.weight"}
// With clipping (the norm summed over the f32 master gradients), no decay
// for biases and norms and the warm-up + cosine schedule, five steps,
// against PyTorch's fp32 run of the same:
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/sched --lr 0.01 --weight-decay 0.01 --no-decay 'bias|ln' --clip-grad-norm 0.5 --schedule warmup-cosine --warmup-steps 2 --warmup-start-factor 0.25 --total-steps 5 --min-lr 1e-3 --precision bf16
// RUN: dtc-run %t/sched --batch %S/Inputs/tiny_transformer/batch --steps 5 --dump %t/sched-dump
// RUN: %python %S/../Utils/compare_training.py %t/sched-dump %S/Inputs/tiny_transformer/schedule %S/Inputs/tiny_transformer/initial --loss-rtol 1.6e-2 --grad-rl2 0.1 --update-rl2 0.2 | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: 0 failed
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/bad --precision fp8 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: dtc-compile: for the --precision option: Cannot find option named 'fp8'!
