// OPT (learned positions computed from an all-ones attention mask that the
// exporter baked into a [batch, seq] constant: under dp each rank cuts its rows
// of the positions' embedding locally):
// a tiny config of the public transformers class with random weights
// (Inputs/hf/make_hf_models.py), three AdamW steps on every layout match
// PyTorch's single-device run (loss 1e-5, gradients 1e-4, updates 1e-3).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/opt %t/one 1 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/opt %t/tp2 2 --mesh tp=2 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/opt %t/dp2 2 --mesh dp=2 | FileCheck %s --check-prefixes=QUIET,CHECK
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/opt %t/sp 4 --mesh dp=2,tp=2 --sequence-parallel | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/opt %t/z1 4 --mesh dp=2,tp=2 --sequence-parallel --zero 1 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/opt %t/z2 4 --mesh dp=2,tp=2 --sequence-parallel --zero 2 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/opt %t/z3 4 --mesh tp=2,dp=2 --sequence-parallel --zero 3 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/opt %t/accum 2 --mesh dp=2 --zero 3 --grad-accum 2 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/opt %t/tp4 4 --mesh tp=4 | FileCheck %s --check-prefix=TP4
// QUIET-NOT: warning
// CHECK: 0 failed
// TP4: 0 failed
// Each dp rank cuts its rows of the positions' embedding (computed from the
// baked mask and the table) and of the positions for the table's gradient:
// no communication, no warning.
// RUN: FileCheck %s --check-prefix=DP-IR < %t/dp2/train_step.mlir
// DP-IR: dtc.shard {{.*}} on @mesh axes = ["dp"] dim = 0 {reason = "data-parallel: 'dtc.add' (/m/decoder/Add) reads this shard's rows of operand #1, computed without the inputs"} : tensor<4x8x32xf32> -> tensor<2x8x32xf32>
// DP-IR: dtc.shard {{.*}} on @mesh axes = ["dp"] dim = 0 {reason = "data-parallel: 'dtc.scatter_add' (/m/decoder/embed_positions/Gather) reads this shard's rows of operand #1, computed without the inputs"} : tensor<4x8xi64> -> tensor<2x8xi64>
// DP-IR-NOT: dtc.all_gather
