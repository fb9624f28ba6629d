// Activation checkpointing (dtc-compile --remat, the dtc-remat pass) on
// four-layer variants of the two example models (Inputs/remat/
// make_models.py; the GPT-2-style one with dropout on the attention
// probabilities and both residual branches): with every policy, three
// steps give the same losses, gradients and updates as without
// recomputation, bit for bit, on the reference executor and compiled for
// CPU ranks, and each engine measures the activation peak it planned
// (Utils/remat_policies.sh). The recomputed dropouts redraw their masks
// from the counter-based generator, so the GPT model's match too.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %S/../Utils/remat_policies.sh %dtc_tools_dir %python %S/Inputs/remat/llama4 %t/llama 1 --freeze '^rope_' -- full every=2 selective budget=185000 | FileCheck %s --check-prefix=LLAMA
// LLAMA: none: planned activation peak [[N:[0-9]+]] B; reference peak intermediate memory: [[N]] B (planned [[N]] B); compiled peak intermediate memory: [[NC:[0-9]+]] B (planned [[NC]] B)
// LLAMA-NEXT: full: planned activation peak [[F:[0-9]+]] B; reference peak intermediate memory: [[F]] B (planned [[F]] B), against none: 77 tensors, 0 differ; compiled peak intermediate memory: [[FC:[0-9]+]] B (planned [[FC]] B), against none: 77 tensors, 0 differ
// LLAMA-NEXT: every=2: planned activation peak [[E:[0-9]+]] B; reference peak intermediate memory: [[E]] B (planned [[E]] B), against none: 77 tensors, 0 differ; compiled {{.*}}, against none: 77 tensors, 0 differ
// LLAMA-NEXT: selective: planned activation peak [[S:[0-9]+]] B; reference peak intermediate memory: [[S]] B (planned [[S]] B), against none: 77 tensors, 0 differ; compiled {{.*}}, against none: 77 tensors, 0 differ
// LLAMA-NEXT: budget=185000: planned activation peak [[B:[0-9]+]] B; reference peak intermediate memory: [[B]] B (planned [[B]] B), against none: 77 tensors, 0 differ; compiled {{.*}}, against none: 77 tensors, 0 differ
// RUN: %S/../Utils/remat_policies.sh %dtc_tools_dir %python %S/Inputs/remat/gpt4 %t/gpt 1 --dropout --seed 3 -- full every=2 selective | FileCheck %s --check-prefix=GPT
// GPT: none: planned activation peak [[N:[0-9]+]] B; reference peak intermediate memory: [[N]] B (planned [[N]] B)
// GPT-NEXT: full: planned activation peak [[F:[0-9]+]] B; reference peak intermediate memory: [[F]] B (planned [[F]] B), against none: 107 tensors, 0 differ; compiled {{.*}}, against none: 107 tensors, 0 differ
// GPT-NEXT: every=2: {{.*}} against none: 107 tensors, 0 differ; compiled {{.*}}, against none: 107 tensors, 0 differ
// GPT-NEXT: selective: {{.*}} against none: 107 tensors, 0 differ; compiled {{.*}}, against none: 107 tensors, 0 differ
//
// The recomputed copies: each marked dtc.recompute (so that CSE cannot
// merge them back), placed after the forward pass, the dropouts among them;
// the step records the policy and the peak without it. Selective
// recomputes the attention ops alone, one per layer.
// RUN: FileCheck %s --check-prefix=IR < %t/gpt/full/train_step.mlir
// IR: func.func @train_step
// IR-SAME: dtc.remat = {activation_peak_without = {{[0-9]+}} : i64, plan = "full", policy = "full", transformer_units = 4 : i64}
// IR-NOT: dtc.recompute
// IR: dtc.log_softmax
// IR: dtc.dropout {{.*}} {dtc.recompute}
// IR: dtc.matmul {{.*}} {dtc.recompute}
// RUN: grep -c "dtc.attention.*dtc.recompute" %t/gpt/selective/train_step.mlir | FileCheck %s --check-prefix=SELECTIVE
// SELECTIVE: {{^}}4{{$}}
// The report: bytes saved, FLOPs added, collectives issued again (none on
// one device).
// RUN: FileCheck %s --check-prefix=REPORT < %t/gpt/full/report.json
// REPORT: "remat": {
// REPORT-NEXT: "activation_bytes_saved": {{[1-9][0-9]*}},
// REPORT: "collective_calls": 0,
// REPORT: "plan": "full",
// REPORT: "recompute_flops": {
// REPORT-NEXT: "elementwise": {{[1-9][0-9.e+]*}},
// REPORT-NEXT: "matmul": {{[1-9][0-9.e+]*}},
