// The importer fuzzer's corpus and every input that ever crashed it
// (fuzz/, scripts/fuzz-importer.sh) import or fail cleanly.
// RUN: %python %S/../../Utils/replay_inputs.py dtc-translate %S/../../../fuzz/corpus %S/../../../fuzz/crashers | FileCheck %s
// CHECK-NOT: CRASH
// CHECK: {{[0-9]+}} inputs, 0 crashes
