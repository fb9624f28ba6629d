// BLOOM (ALiBi biases of shape [batch x heads, 1, seq] computed from a baked
// mask, query, key and value taken out of the fused projection by Gather):
// a tiny config of the public transformers class with random weights
// (Inputs/hf/make_hf_models.py), three AdamW steps on every layout match
// PyTorch's single-device run (loss 1e-5, gradients 1e-4, updates 1e-3).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/bloom %t/one 1 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/bloom %t/tp2 2 --mesh tp=2 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/bloom %t/dp2 2 --mesh dp=2 | FileCheck %s --check-prefixes=QUIET,CHECK
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/bloom %t/sp 4 --mesh dp=2,tp=2 --sequence-parallel | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/bloom %t/z1 4 --mesh dp=2,tp=2 --sequence-parallel --zero 1 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/bloom %t/z2 4 --mesh dp=2,tp=2 --sequence-parallel --zero 2 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/bloom %t/z3 4 --mesh tp=2,dp=2 --sequence-parallel --zero 3 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/bloom %t/accum 2 --mesh dp=2 --zero 3 --grad-accum 2 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/bloom %t/tp4 4 --mesh tp=4 | FileCheck %s --check-prefix=TP4
// QUIET-NOT: warning
// CHECK: 0 failed
// TP4: 0 failed
// Each dp rank cuts its rows (its batch elements' heads) of the ALiBi
// biases, [batch x heads, 1, seq], locally.
// RUN: FileCheck %s --check-prefix=DP-IR < %t/dp2/train_step.mlir
// DP-IR: dtc.shard {{.*}} on @mesh axes = ["dp"] dim = 0 {reason = "data-parallel: {{.*}} computed without the inputs"} : tensor<16x1x8xf32> -> tensor<8x1x8xf32>
// DP-IR-NOT: dtc.all_gather
