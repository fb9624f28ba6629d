// Three AdamW steps of the example model on a fixed batch (with ignored
// labels) match PyTorch autograd + torch.optim.AdamW (reference from
// Inputs/make_training_reference.py): losses within 1e-5 relative,
// gradients within 1e-4 relative L2, updates within 1e-3 relative L2.
// RUN: rm -rf %t && dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/step --lr 0.01 --weight-decay 0.01
// RUN: dtc-run %t/step --batch %S/Inputs/batch --steps 3 --dump %t/dump | FileCheck %s
// RUN: %python %S/../Utils/compare_training.py %t/dump %S/Inputs/adamw %S/Inputs/initial | FileCheck %s --check-prefix=COMPARE
// CHECK: step     1/3  loss 4.3649
// CHECK: step     3/3  loss
// COMPARE-NOT: FAIL
// COMPARE: grad  wte.weight
// COMPARE: 0 failed
