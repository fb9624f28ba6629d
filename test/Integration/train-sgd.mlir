// Three steps of SGD with momentum and (coupled) weight decay match
// torch.optim.SGD on the same batch.
// RUN: rm -rf %t && dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/step --optimizer sgd --lr 0.1 --momentum 0.9 --weight-decay 0.01
// RUN: dtc-run %t/step --batch %S/Inputs/batch --steps 3 --dump %t/dump
// RUN: %python %S/../Utils/compare_training.py %t/dump %S/Inputs/sgd %S/Inputs/initial | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: update wte.weight
// CHECK: 0 failed
