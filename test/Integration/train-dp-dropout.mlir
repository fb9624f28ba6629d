// Dropout under data parallelism: it draws by the element's index in the
// whole tensor, so each rank's dropout learns the global shape and where
// its rows start, and dp=2 and dp=4 draw the single device's masks: three
// steps match it (losses, gradients and updates to the fp32 tolerances).
// (Dropout on one device: train-dropout.mlir.)
// RUN: rm -rf %t && mkdir -p %t
// RUN: mkdir -p %t/drop-init
// RUN: %python -c "import onnx, numpy, sys; from onnx import numpy_helper as h; [numpy.save(sys.argv[2] + '/' + t.name + '.npy', h.to_array(t)) for t in onnx.load(sys.argv[1]).graph.initializer]" %S/../Import/ONNX/Inputs/dropout_classifier.onnx %t/drop-init
// RUN: dtc-compile %S/../Import/ONNX/Inputs/dropout_classifier.onnx -o %t/drop1 --dropout --seed 7 --lr 0.01
// RUN: dtc-run %t/drop1 --batch %S/../Import/ONNX/Inputs/dropout_batch --steps 3 --dump %t/drop1-dump
// RUN: dtc-compile %S/../Import/ONNX/Inputs/dropout_classifier.onnx -o %t/drop2 --dropout --seed 7 --lr 0.01 --verify --mesh dp=2
// RUN: FileCheck %s --check-prefix=DROPOUT < %t/drop2/train_step.mlir
// DROPOUT: dtc.dropout %{{.*}}, %{{.*}} at %{{.*}} in [4, 8] ratio = 2.500000e-01 seed = 7 stream = 0 : (tensor<2x8xf32>, tensor<i64>, tensor<2xi64>) -> tensor<2x8xf32>
// RUN: %mpirun -np 2 dtc-run %t/drop2 --batch %S/../Import/ONNX/Inputs/dropout_batch --steps 3 --dump %t/drop2-dump
// RUN: %python %S/../Utils/compare_training.py %t/drop2-dump %t/drop1-dump %t/drop-init | FileCheck %s
// RUN: dtc-compile %S/../Import/ONNX/Inputs/dropout_classifier.onnx -o %t/drop4 --dropout --seed 7 --lr 0.01 --verify --mesh dp=4
// RUN: %mpirun -np 4 dtc-run %t/drop4 --batch %S/../Import/ONNX/Inputs/dropout_batch --steps 3 --dump %t/drop4-dump
// RUN: %python %S/../Utils/compare_training.py %t/drop4-dump %t/drop1-dump %t/drop-init | FileCheck %s
// Gradient accumulation's microbatches have no rank to index by: refused.
// RUN: not dtc-compile %S/../Import/ONNX/Inputs/dropout_classifier.onnx -o %t/drop-acc --dropout --grad-accum 2 2>&1 | FileCheck %s --check-prefix=DROPOUT-ACC
// DROPOUT-ACC: error: dropout is not partitioned for gradient accumulation yet (its microbatches have no rank to index by)
//
// CHECK-NOT: FAIL
// CHECK: 0 failed
