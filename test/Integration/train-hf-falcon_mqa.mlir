// Falcon with multi-query attention (one fused query_key_value projection
// whose H query heads and one key and one value head are picked apart by Slice
// and Gather along the head axis of a [batch, seq, H+2, head_dim] view):
// a tiny config of the public transformers class with random weights
// (Inputs/hf/make_hf_models.py), three AdamW steps on every layout match
// PyTorch's single-device run (loss 1e-5, gradients 1e-4, updates 1e-3).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/falcon_mqa %t/one 1 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/falcon_mqa %t/tp2 2 --mesh tp=2 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/falcon_mqa %t/dp2 2 --mesh dp=2 | FileCheck %s --check-prefixes=QUIET,CHECK
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/falcon_mqa %t/sp 4 --mesh dp=2,tp=2 --sequence-parallel | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/falcon_mqa %t/z1 4 --mesh dp=2,tp=2 --sequence-parallel --zero 1 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/falcon_mqa %t/z2 4 --mesh dp=2,tp=2 --sequence-parallel --zero 2 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/falcon_mqa %t/z3 4 --mesh tp=2,dp=2 --sequence-parallel --zero 3 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/falcon_mqa %t/accum 2 --mesh dp=2 --zero 3 --grad-accum 2 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/falcon_mqa %t/tp4 4 --mesh tp=4 | FileCheck %s --check-prefix=TP4
// QUIET-NOT: warning
// CHECK: 0 failed
// 6 fused heads (4 query, 1 key, 1 value) do not divide over 4 ranks: the
// projection stays replicated, with a warning that says why.
// TP4: warning: tensor-parallel: 'm.transformer.h.0.self_attention.query_key_value.weight' stays replicated: 6 heads do not divide over 4 ranks
// TP4: 0 failed
// On tp=2 the query slice and the key and value gathers along the split
// head axis take the fused projection whole: a resharding, which the
// report lists with the op that needed it and its bytes.
// RUN: FileCheck %s --check-prefix=REPORT < %t/tp2/report.json
// REPORT: "bus_bytes": 3072,
// REPORT-NEXT: "kind": "all_gather",
// REPORT-NEXT: "reason": "tensor-parallel: 'dtc.slice' (/m/transformer/h.0/self_attention/Slice): it needs dimension 2 of operand #0 whole",
// REPORT-NEXT: "resharding": true
// REPORT: "resharding_per_step": {
// REPORT-NEXT: "bus_bytes": 10240,
// REPORT-NEXT: "calls": 4
