// Activation checkpointing on a mesh: dp=2 x tp=2 with sequence
// parallelism and ZeRO-3 on four ranks (real mpirun), the GPT-2-style
// four-layer model with dropout in fp32 and the Llama-style one in bf16.
// Every policy trains three steps bit for bit as the same layout without
// recomputation, on both engines (Utils/remat_policies.sh; --verify also
// checks each per-rank program against the single-device step without
// recomputation). Recomputing a layer under tp issues its collectives again
// (with SP, the all-gathers before the QKV and first MLP matmuls and the
// attention block's reduce-scatter; the MLP's makes the layer's output,
// which is kept; under ZeRO-3 no parameter gather: the backward gathers
// its own), and the report counts them. (ZeRO-3 under dropout once drew rank 0's masks on
// every rank, the dropout's chunk start taken for a part to gather; --verify
// here catches that again.)
// RUN: rm -rf %t && mkdir -p %t
// RUN: %S/../Utils/remat_policies.sh %dtc_tools_dir %python %S/Inputs/remat/gpt4 %t/gpt 4 --dropout --mesh dp=2,tp=2 --sequence-parallel --zero 3 -- full every=2 selective | FileCheck %s --check-prefix=GPT
// GPT: none: planned activation peak [[N:[0-9]+]] B; reference peak intermediate memory: [[N]] B (planned [[N]] B)
// GPT-NEXT: full: planned activation peak [[F:[0-9]+]] B; reference peak intermediate memory: [[F]] B (planned [[F]] B), against none: 107 tensors, 0 differ; compiled {{.*}}, against none: 107 tensors, 0 differ
// GPT-NEXT: every=2: {{.*}} against none: 107 tensors, 0 differ; compiled {{.*}}, against none: 107 tensors, 0 differ
// GPT-NEXT: selective: {{.*}} against none: 107 tensors, 0 differ; compiled {{.*}}, against none: 107 tensors, 0 differ
// RUN: FileCheck %s --check-prefix=REISSUED < %t/gpt/full.err
// REISSUED: remat full (full, 4 transformer units): {{.*}} [[CALLS:[1-9][0-9]*]] collectives issued again
// RUN: FileCheck %s --check-prefix=GATHERS < %t/gpt/full/report.json
// GATHERS: "remat": {
// GATHERS: "collectives": {
// GATHERS-NEXT: "all_gather": {
// GATHERS-NEXT: "bus_bytes": {{[1-9][0-9]*}},
// GATHERS-NEXT: "calls": {{[1-9][0-9]*}}
// GATHERS-NEXT: },
// GATHERS-NEXT: "reduce_scatter": {
// RUN: %S/../Utils/remat_policies.sh %dtc_tools_dir %python %S/Inputs/remat/llama4 %t/llama 4 --freeze '^rope_' --precision bf16 --mesh dp=2,tp=2 --sequence-parallel --zero 3 -- full selective | FileCheck %s --check-prefix=LLAMA
// LLAMA: none: planned activation peak [[N:[0-9]+]] B; reference peak intermediate memory: [[N]] B (planned [[N]] B)
// LLAMA-NEXT: full: {{.*}} against none: 77 tensors, 0 differ; compiled {{.*}}, against none: 77 tensors, 0 differ
// LLAMA-NEXT: selective: {{.*}} against none: 77 tensors, 0 differ; compiled {{.*}}, against none: 77 tensors, 0 differ
