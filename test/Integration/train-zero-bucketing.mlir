// Gradient bucketing under ZeRO (the default --bucket-mb 25, or as given),
// dp=2: the gradients' reduce-scatters and the updated parameters'
// all-gathers (stages 1, 2), and stage 3's parameter gathers by phase and
// unit, with a prefetch. Three AdamW steps match PyTorch's single-device
// run, as with one collective per tensor.
// RUN: rm -rf %t && mkdir -p %t
//
// Bucketing (the default --bucket-mb 25) under ZeRO packs per rank:
// each gradient, its split dimension first, viewed as [N, rest], the
// bucket their concatenation along rest, so one reduce-scatter hands every
// rank its shard of each (FSDP2's interleaving); the parameters' gathers
// are packed the same way. GPT-2 stage 1: 17 + 17 calls become 1 + 1, the
// same bytes and trajectory.
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-z1-b --lr 0.01 --weight-decay 0.01 --verify --mesh dp=2 --zero 1
// RUN: FileCheck %s --check-prefix=BUCKET < %t/gpt-z1-b/report.json
// BUCKET: "reason": "data-parallel: gradient bucket 1 of 2 (68480 bytes): head.weight,
// BUCKET: "reason": "ZeRO-1: parameter bucket 2 of 2 (68480 bytes): wte.weight,
// RUN: %mpirun -np 2 dtc-run %t/gpt-z1-b --batch %S/Inputs/tiny_transformer/batch --steps 3 --dump %t/gpt-z1-b-dump > %t/gpt-z1-b.log
// RUN: FileCheck %s --check-prefix=BUCKET-LOG < %t/gpt-z1-b.log
// BUCKET-LOG: rank 0 per step: {{[0-9.]+}} s, all_reduce 1 calls, 8 bus bytes, all_gather 1 calls, 34240 bus bytes, reduce_scatter 1 calls, 34240 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/gpt-z1-b-dump %S/Inputs/tiny_transformer/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// Stage 3's parameter gathers are bucketed too, by phase and by unit -- a
// transformer block, the parameters whose names share the module path up
// to the first layer index (layers.0), else the top-level module (block,
// wte) -- in the order their parameters are first read, and split where a
// unit exceeds --bucket-mb; each bucket is gathered where the previous one
// is first read (a prefetch of the next unit while the current one
// computes). GPT-2 (units wte, wpe, block, ln_f, head): 5 forward gathers
// and 3 backward ones (head, ln_f and the block's weights), 1
// reduce-scatter. Llama with 0.02 MiB buckets: layer 0's first bucket is
// gathered before the embedding lookup, its second before layer 0 computes
// anything.
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-z3-b --lr 0.01 --weight-decay 0.01 --verify --mesh dp=2 --zero 3
// RUN: FileCheck %s --check-prefix=UNIT < %t/gpt-z3-b/train_step.mlir
// UNIT: reason = "ZeRO-3: parameter bucket 1 of 4 (50816 bytes): block.ln1.weight, block.ln1.bias, block.qkv.weight, block.qkv.bias, block.proj.weight, block.proj.bias, block.ln2.weight, block.ln2.bias, block.fc.weight, block.fc.bias, block.out.weight, block.out.bias"
// RUN: %mpirun -np 2 dtc-run %t/gpt-z3-b --batch %S/Inputs/tiny_transformer/batch --steps 3 --dump %t/gpt-z3-b-dump > %t/gpt-z3-b.log
// RUN: FileCheck %s --check-prefix=Z3B-LOG < %t/gpt-z3-b.log
// Z3B-LOG: rank 0 per step: {{[0-9.]+}} s, all_reduce 1 calls, 8 bus bytes, all_gather 8 calls, 63104 bus bytes, reduce_scatter 1 calls, 34240 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/gpt-z3-b-dump %S/Inputs/tiny_transformer/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// (The reference executor measures the peak the plan predicts.)
// RUN: %mpirun -np 2 dtc-run --engine reference %t/gpt-z3-b --batch %S/Inputs/tiny_transformer/batch --steps 1 > %t/gpt-z3-b.reference.log
// RUN: cat %t/gpt-z3-b/report.json %t/gpt-z3-b.reference.log | FileCheck %s --check-prefix=PEAK
// RUN: dtc-compile %S/../../examples/tiny_llama/model.onnx -o %t/llama-z3-b --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --verify --mesh dp=2 --zero 3 --bucket-mb 0.02
// RUN: FileCheck %s --check-prefix=PREFETCH < %t/llama-z3-b/train_step.mlir
// PREFETCH: dtc.all_gather {{.*}} {dtc.gather_phase = "forward", reason = "ZeRO-3: embed.weight whole for the forward"}
// PREFETCH: dtc.all_gather {{.*}} {dtc.gather_phase = "forward", reason = "ZeRO-3: parameter bucket 1 of 12 (20736 bytes): layers.0.attn_norm.weight,
// PREFETCH-NEXT: dtc.slice
// PREFETCH: dtc.gather %
// PREFETCH-NOT: dtc.matmul
// PREFETCH: dtc.all_gather {{.*}} {dtc.gather_phase = "forward", reason = "ZeRO-3: parameter bucket 2 of 12 (16384 bytes): layers.0.mlp.w3.weight, layers.0.mlp.w2.weight"}
// RUN: %mpirun -np 2 dtc-run %t/llama-z3-b --batch %S/Inputs/tiny_llama/batch --steps 3 --dump %t/llama-z3-b-dump
// RUN: %python %S/../Utils/compare_training.py %t/llama-z3-b-dump %S/Inputs/tiny_llama/adamw %S/Inputs/tiny_llama/initial | FileCheck %s
// The planned peak of everything else (liveness over the per-rank
// program) is what the executor measured:
// PEAK: "activation_peak": [[PEAK:[0-9]+]]
// PEAK: rank 0 peak intermediate memory: [[PEAK]] B (planned [[PEAK]] B)
// PEAK-NEXT: rank 1 peak intermediate memory: [[PEAK]] B
//
// CHECK-NOT: FAIL
// CHECK: 0 failed
