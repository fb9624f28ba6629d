// fp16 mixed precision with dynamic loss scaling (torch.cuda.amp.GradScaler
// semantics). Against PyTorch's fp32 trajectory within the fp16 bound of
// docs/Training.md (u = 2^-11: loss 4u = 2e-3 relative, gradients 2.5e-2 and
// AdamW updates 0.1 relative L2):
// RUN: rm -rf %t && dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt --lr 0.01 --weight-decay 0.01 --precision fp16
// RUN: FileCheck %s --check-prefix=IR < %t/gpt/train_step.mlir
// IR: {dtc.aliasing_output = {{[0-9]+}} : i64, dtc.state = #dtc.state<loss_scale>, dtc.value = dense<6.553600e+04> : tensor<f32>}
// IR-SAME: {dtc.aliasing_output = {{[0-9]+}} : i64, dtc.state = #dtc.state<growth_tracker>}
// IR-SAME: attributes {{{.*}}dtc.step = #dtc.step<abi = 1, loss = 0, loss_scaling = <growth_interval = 2000>>}
// IR: dtc.matmul {{.*}} -> tensor<2x8x96xf16>
// RUN: dtc-run %t/gpt --batch %S/Inputs/tiny_transformer/batch --steps 3 --dump %t/gpt-dump
// RUN: %python %S/../Utils/compare_training.py %t/gpt-dump %S/Inputs/tiny_transformer/adamw %S/Inputs/tiny_transformer/initial --loss-rtol 2e-3 --grad-rl2 2.5e-2 --update-rl2 0.1 | FileCheck %s
// RUN: dtc-compile %S/../../examples/tiny_llama/model.onnx -o %t/llama --lr 0.01 --weight-decay 0.01 --precision fp16 --init-scale 8 --freeze '^rope_'
// RUN: dtc-run %t/llama --batch %S/Inputs/tiny_llama/batch --steps 3 --dump %t/llama-dump
// RUN: %python %S/../Utils/compare_training.py %t/llama-dump %S/Inputs/tiny_llama/adamw %S/Inputs/tiny_llama/initial --loss-rtol 2e-3 --grad-rl2 2.5e-2 --update-rl2 0.1 | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: 0 failed

// With GradScaler's initial scale of 65536 the Llama example's gradients
// overflow fp16: each such step changes no parameter and halves the scale,
// until (at 16384, the third step) they fit and training proceeds.
// RUN: dtc-compile %S/../../examples/tiny_llama/model.onnx -o %t/overflow --lr 0.01 --weight-decay 0.01 --precision fp16 --freeze '^rope_'
// RUN: dtc-run %t/overflow --batch %S/Inputs/tiny_llama/batch --steps 2 --dump %t/skipped
// RUN: %python %S/../Utils/compare_npy.py %t/skipped/param/layers.0.attn.wq.weight.npy %S/Inputs/tiny_llama/initial/layers.0.attn.wq.weight.npy --rtol 0 --atol 0
// RUN: dtc-run %t/overflow --batch %S/Inputs/tiny_llama/batch --steps 4 --dump %t/resumed
// RUN: %python -c "import numpy as np; l = np.load('%t/resumed/loss.npy'); assert l[0] == l[1] == l[2] > l[3], l; print('2 steps skipped, then trained')" | FileCheck %s --check-prefix=RESUMED
// RESUMED: 2 steps skipped, then trained
