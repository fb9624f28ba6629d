// ZeRO options dtc-compile refuses: a stage that does not exist, and a
// ZeRO stage without a dp axis to shard over.
// RUN: rm -rf %t && mkdir -p %t
//
// What is not there is refused by name.
// RUN: not dtc-compile %S/../../examples/tiny_llama/model.onnx -o %t/x --mesh dp=2 --bucket-mb 0 --zero 4 2>&1 | FileCheck %s --check-prefix=STAGE4
// STAGE4: error: dtc-zero: stage 4 does not exist (1, 2 or 3)
// RUN: not dtc-compile %S/../../examples/tiny_llama/model.onnx -o %t/x --bucket-mb 0 --zero 1 2>&1 | FileCheck %s --check-prefix=NODP
// NODP: error: dtc-zero shards over the data-parallel ranks: compile with --mesh dp=N (or ep=N), N >= 2
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/x --mesh dp=2 --zero 3 --optimizer sgd 2>&1 | FileCheck %s --check-prefix=NOSTATE
// NOSTATE: error: dtc-zero: no parameter has optimizer state to shard (SGD without momentum keeps none)
