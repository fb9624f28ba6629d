// Three steps of AdamW (lr 1e-2, weight decay 0.01) on the Llama-style example (RMSNorm, RoPE, grouped-query attention, SwiGLU, causal mask, tied head; its RoPE buffers frozen), on a fixed batch with ignored labels,
// match PyTorch autograd + torch.optim (Inputs/make_training_reference.py):
// losses within 1e-5 relative, gradients within 1e-4 relative L2, updates
// within 1e-3 relative L2.
// RUN: rm -rf %t && dtc-compile %S/../../examples/tiny_llama/model.onnx -o %t/step --lr 0.01 --weight-decay 0.01 --freeze '^rope_'
// RUN: dtc-run %t/step --batch %S/Inputs/tiny_llama/batch --steps 3 --dump %t/dump | FileCheck %s
// RUN: %python %S/../Utils/compare_training.py %t/dump %S/Inputs/tiny_llama/adamw %S/Inputs/tiny_llama/initial | FileCheck %s --check-prefix=COMPARE
// CHECK: step     1/3  loss
// CHECK: step     3/3  loss
// COMPARE-NOT: FAIL
// COMPARE: ok   step 3 loss
// COMPARE: 0 failed
