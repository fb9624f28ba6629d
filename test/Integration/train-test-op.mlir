// An op added the way the architecture promises: dtc_test.hypot (test/lib)
// has its ODS definition, its VJP and its reference kernel, and nothing
// else -- its sharding rule and cost come from its BroadcastingElementwise
// trait, and no file under lib/Transforms knows it. A small language model
// that uses it on the column-parallel projection's features and on the
// normalized residual stream (Inputs/hypot/forward.mlir) trains:
//  - on one device, its loss and gradients match central finite
//    differences of the same model written in numpy (float64);
//  - on dp=2, tp=2, tp=2 with sequence parallelism and dp=2 x tp=2 with
//    sequence parallelism, three SGD steps match the single-device run,
//    with the test op running on each rank's part (features split by tp,
//    tokens by sequence parallelism), not gathered.
//
// RUN: rm -rf %t && mkdir -p %t/one %t/ref %t/dp2 %t/tp2 %t/sp2 %t/mesh4
// RUN: %python %S/Inputs/hypot/check_hypot.py make %t
// RUN: dtc-opt %S/Inputs/hypot/forward.mlir --dtc-training="optimizer=sgd lr=0.1" -o %t/one/train_step.mlir
// RUN: dtc-run %t/one --batch %t/batch --init %t/init --steps 1 --dump %t/one-dump > /dev/null
// RUN: %python %S/Inputs/hypot/check_hypot.py fd %t %t/one-dump | FileCheck %s --check-prefix=FD
// FD: ok   loss
// FD-COUNT-7: ok   grad
// FD: 0 failed
//
// RUN: cp %t/one/train_step.mlir %t/ref/ && dtc-run %t/ref --batch %t/batch --init %t/init --steps 3 --dump %t/ref-dump > /dev/null
// RUN: dtc-opt %S/Inputs/hypot/forward.mlir --dtc-training="optimizer=sgd lr=0.1 bucket-mb=0 verify=1 mesh=dp=2" -o %t/dp2/train_step.mlir 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty
// RUN: dtc-opt %S/Inputs/hypot/forward.mlir --dtc-training="optimizer=sgd lr=0.1 bucket-mb=0 verify=1 mesh=tp=2" -o %t/tp2/train_step.mlir 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty
// RUN: dtc-opt %S/Inputs/hypot/forward.mlir --dtc-training="optimizer=sgd lr=0.1 bucket-mb=0 verify=1 mesh=tp=2 sequence-parallel=1" -o %t/sp2/train_step.mlir 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty
// RUN: dtc-opt %S/Inputs/hypot/forward.mlir --dtc-training="optimizer=sgd lr=0.1 bucket-mb=0 verify=1 mesh=dp=2,tp=2 sequence-parallel=1" -o %t/mesh4/train_step.mlir 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty
// QUIET-NOT: warning
// RUN: FileCheck %s --check-prefix=TP < %t/tp2/train_step.mlir
// TP: dtc_test.hypot {{.*}} : (tensor<4x8x8xf32>, tensor<8xf32>) -> tensor<4x8x8xf32>
// RUN: FileCheck %s --check-prefix=SP < %t/sp2/train_step.mlir
// SP-DAG: dtc_test.hypot {{.*}} : (tensor<4x8x8xf32>, tensor<8xf32>) -> tensor<4x8x8xf32>
// SP-DAG: dtc_test.hypot {{.*}} : (tensor<4x4x8xf32>, tensor<8xf32>) -> tensor<4x4x8xf32>
// RUN: %mpirun -np 2 dtc-run %t/dp2 --batch %t/batch --init %t/init --steps 3 --dump %t/dp2-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/dp2-dump %t/ref-dump %t/init | FileCheck %s
// RUN: %mpirun -np 2 dtc-run %t/tp2 --batch %t/batch --init %t/init --steps 3 --dump %t/tp2-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/tp2-dump %t/ref-dump %t/init | FileCheck %s
// RUN: %mpirun -np 2 dtc-run %t/sp2 --batch %t/batch --init %t/init --steps 3 --dump %t/sp2-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/sp2-dump %t/ref-dump %t/init | FileCheck %s
// RUN: %mpirun -np 4 dtc-run %t/mesh4 --batch %t/batch --init %t/init --steps 3 --dump %t/mesh4-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/mesh4-dump %t/ref-dump %t/init | FileCheck %s
// CHECK: 0 failed
