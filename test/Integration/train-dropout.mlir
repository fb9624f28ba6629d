// Training-mode dropout (dtc-compile --dropout): the Dropout node becomes
// dtc.dropout keyed on the seed, its site (stream 0) and the step argument,
// which the optimizer then counts; the backward pass redraws the same mask.
// RUN: rm -rf %t && dtc-compile %S/../Import/ONNX/Inputs/dropout_classifier.onnx -o %t/step --dropout --seed 7 2>/dev/null
// RUN: FileCheck %s --check-prefix=IR < %t/step/train_step.mlir
// The step records the argument as its RNG counter, beside the seed.
// IR: func.func @train_step({{.*}}%arg[[STEP:[0-9]+]]: tensor<i64> {dtc.aliasing_output = {{[0-9]+}} : i64, dtc.state = #dtc.state<step>}
// IR-SAME: attributes {dtc.step = #dtc.step<abi = 1, loss = 0, rng = <seed = 7, counter = [[STEP]]>>}
// IR-NOT: dtc.state = #dtc.state<step>
// IR: dtc.dropout %{{.*}}, %arg[[STEP]] ratio = 2.500000e-01 seed = 7 stream = 0
// IR: dtc.dropout %{{.*}}, %arg[[STEP]] ratio = 2.500000e-01 seed = 7 stream = 0
// The first step's gradient matches numpy with an independent Philox4x32-10:
// RUN: dtc-run %t/step --batch %S/../Import/ONNX/Inputs/dropout_batch --steps 1 --dump %t/dump
// RUN: %python %S/../Utils/check_dropout_grad.py %S/../Import/ONNX/Inputs/dropout_classifier.onnx %S/../Import/ONNX/Inputs/dropout_batch %t/dump 7 | FileCheck %s
// CHECK: dropped 7 of 32; grad rel L2
// Without --dropout the node is the identity.
// RUN: dtc-compile %S/../Import/ONNX/Inputs/dropout_classifier.onnx -o %t/eval 2>/dev/null
// RUN: FileCheck %s --check-prefix=EVAL < %t/eval/train_step.mlir
// EVAL-NOT: dtc.dropout
