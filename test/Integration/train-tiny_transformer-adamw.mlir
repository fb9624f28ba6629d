// Three steps of AdamW (lr 1e-2, weight decay 0.01) on the GPT-2-style example (LayerNorm, fused QKV, GELU, untied head), on a fixed batch with ignored labels,
// match PyTorch autograd + torch.optim (Inputs/make_training_reference.py):
// losses within 1e-5 relative, gradients within 1e-4 relative L2, updates
// within 1e-3 relative L2.
// RUN: rm -rf %t && dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/step --lr 0.01 --weight-decay 0.01
// RUN: dtc-run %t/step --batch %S/Inputs/tiny_transformer/batch --steps 3 --dump %t/dump | FileCheck %s
// RUN: %python %S/../Utils/compare_training.py %t/dump %S/Inputs/tiny_transformer/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s --check-prefix=COMPARE
// CHECK: step     1/3  loss
// CHECK: step     3/3  loss
// COMPARE-NOT: FAIL
// COMPARE: ok   step 3 loss
// COMPARE: 0 failed
