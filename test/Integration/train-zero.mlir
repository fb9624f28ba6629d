// ZeRO stages 1-3 (--zero): the optimizer state is split over dp, each
// rank updates its shard from its part of the reduce-scattered gradient,
// and the parameters are all-gathered -- after the update (stages 1, 2),
// or, keeping only the shard, before each use in the forward and again in
// the backward (stage 3). Three AdamW steps match PyTorch's single-device
// run on every mesh.
//
// Persistent bytes per rank (report.json), against the ZeRO paper's
// formulas for fp32 AdamW (computed from the PyTorch parameters' sizes by
// Utils/check_zero_memory.py, and spelled out below), with Psi the trainable parameters (PyTorch's
// count: GPT-2 example 17120, Llama example 20640) and N = dp; AdamW's
// state also holds one i64 step (8 bytes):
//   no ZeRO 4Psi + 4Psi + 8Psi; stage 1: 4Psi + 4Psi + 8Psi/N (the whole
//   gradient buffer); stage 2: 4Psi + 4Psi/N + 8Psi/N; stage 3: 16Psi/N.
// Communication per rank per step equals plain data parallelism's: the
// gradients' reduce-scatters and the parameters' all-gathers move
// (N-1)/N x 4Psi bytes each, as the all-reduce moved 2(N-1)/N x 4Psi; the
// loss normalizer's two scalars are still all-reduced. Stage 3 gathers
// the parameters twice (forward, backward): at most 1.5 times the bytes.
// RUN: rm -rf %t && mkdir -p %t
//
// GPT-2 example, dp=2, stage 1: parameters 68480 = 4Psi, gradients 68480 =
// 4Psi, state 68488 = 8Psi/2 + 8; 17 reduce-scatters and 17 all-gathers of
// 34240 bus bytes (= 68480 / 2 each).
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-z1 --lr 0.01 --weight-decay 0.01 --mesh dp=2 --bucket-mb 0 --zero 1
// RUN: %python %S/../Utils/check_zero_memory.py %t/gpt-z1/report.json %S/Inputs/tiny_transformer/initial --dp 2 --stage 1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=Z1 < %t/gpt-z1/report.json
// Z1: "memory_bytes_per_rank": {
// Z1-NEXT: "activation_peak": {{[0-9]+}},
// Z1-NEXT: "gradients": 68480,
// Z1-NEXT: "master_weights": 0,
// Z1-NEXT: "optimizer_state": 68488,
// Z1-NEXT: "parameters": 68480
// RUN: %mpirun -np 2 dtc-run %t/gpt-z1 --batch %S/Inputs/tiny_transformer/batch --steps 3 --dump %t/gpt-z1-dump > %t/gpt-z1.log
// RUN: FileCheck %s --check-prefix=Z1-LOG < %t/gpt-z1.log
// Z1-LOG: rank 0 per step: {{[0-9.]+}} s, all_reduce 2 calls, 8 bus bytes, all_gather 17 calls, 34240 bus bytes, reduce_scatter 17 calls, 34240 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/gpt-z1-dump %S/Inputs/tiny_transformer/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: %python %S/../Utils/compare_report.py %t/gpt-z1/report.json %t/gpt-z1.log | FileCheck %s --check-prefix=AGREE
// The planned peak of everything else (liveness over the per-rank
// program) is what the executor measured, for every stage:
// RUN: cat %t/gpt-z1/report.json %t/gpt-z1.log | FileCheck %s --check-prefix=PEAK
// PEAK: "activation_peak": [[PEAK:[0-9]+]]
// PEAK: rank 0 peak intermediate memory: [[PEAK]] B (planned [[PEAK]] B)
// PEAK-NEXT: rank 1 peak intermediate memory: [[PEAK]] B
// The updates read reduce-scattered gradients, with their reason:
// RUN: FileCheck %s --check-prefix=IR < %t/gpt-z1/train_step.mlir
// IR: dtc.reduce_scatter {{.*}} on @mesh axes = ["dp"] dim = 0 {reason = "data-parallel: gradient of head.weight (summed over the batch shards); each rank keeps its part"}
// IR: dtc.all_gather {{.*}} on @mesh axes = ["dp"] dim = 0 {reason = "ZeRO-1: new head.weight is computed split over 'dp' but kept whole"}
//
// Llama example, dp=2, stage 2: gradients 41280 = 4Psi/2, state 82568 =
// 8Psi/2 + 8.
// RUN: dtc-compile %S/../../examples/tiny_llama/model.onnx -o %t/llama-z2 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --mesh dp=2 --bucket-mb 0 --zero 2
// RUN: %python %S/../Utils/check_zero_memory.py %t/llama-z2/report.json %S/Inputs/tiny_llama/initial --dp 2 --stage 2 | FileCheck %s
// RUN: FileCheck %s --check-prefix=Z2 < %t/llama-z2/report.json
// Z2: "gradients": 41280,
// Z2-NEXT: "master_weights": 0,
// Z2-NEXT: "optimizer_state": 82568,
// Z2-NEXT: "parameters": 82560
// RUN: %mpirun -np 2 dtc-run %t/llama-z2 --batch %S/Inputs/tiny_llama/batch --steps 3 --dump %t/llama-z2-dump > %t/llama-z2.log
// RUN: FileCheck %s --check-prefix=Z2-LOG < %t/llama-z2.log
// RUN: cat %t/llama-z2/report.json %t/llama-z2.log | FileCheck %s --check-prefix=PEAK
// Z2-LOG: rank 0 per step: {{[0-9.]+}} s, all_reduce 2 calls, 8 bus bytes, all_gather 20 calls, 41280 bus bytes, reduce_scatter 20 calls, 41280 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/llama-z2-dump %S/Inputs/tiny_llama/adamw %S/Inputs/tiny_llama/initial | FileCheck %s
//
// dp=4 (batch 4): GPT-2 stage 2, gradients 17120 = 4Psi/4, state 34248 =
// 8Psi/4 + 8, 3/4 x 68480 = 51360 bus bytes each way; Llama stage 1.
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/gpt-dp4 --lr 0.01 --weight-decay 0.01 --mesh dp=4 --bucket-mb 0 --zero 2
// RUN: %python %S/../Utils/check_zero_memory.py %t/gpt-dp4/report.json %S/Inputs/tiny_transformer/initial --dp 4 --stage 2 | FileCheck %s
// RUN: FileCheck %s --check-prefix=DP4 < %t/gpt-dp4/report.json
// DP4: "gradients": 17120,
// DP4-NEXT: "master_weights": 0,
// DP4-NEXT: "optimizer_state": 34248,
// RUN: %mpirun -np 4 dtc-run %t/gpt-dp4 --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/gpt-dp4-dump > %t/gpt-dp4.log
// RUN: FileCheck %s --check-prefix=DP4-LOG < %t/gpt-dp4.log
// DP4-LOG: rank 0 per step: {{[0-9.]+}} s, all_reduce 2 calls, 12 bus bytes, all_gather 17 calls, 51360 bus bytes, reduce_scatter 17 calls, 51360 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/gpt-dp4-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/tiny_llama/b4/model.onnx -o %t/llama-dp4 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --mesh dp=4 --bucket-mb 0 --zero 1
// RUN: %mpirun -np 4 dtc-run %t/llama-dp4 --batch %S/Inputs/tiny_llama/b4/batch --steps 3 --dump %t/llama-dp4-dump
// RUN: %python %S/../Utils/compare_training.py %t/llama-dp4-dump %S/Inputs/tiny_llama/b4/adamw %S/Inputs/tiny_llama/initial | FileCheck %s
//
// dp=2 x tp=2 (stage 2), with sequence parallelism (stage 1), and with 2
// microbatches (stage 1: the microbatches accumulate into the whole
// gradient, which is reduce-scattered once per step). On dp x tp, Psi is
// the rank's tp part (GPT-2: 35264 bytes = 4Psi); a tp-split bias's state
// is dp's half of tp's half, so the formulas hold exactly: gradients 4Psi/2
// = 17632, state 8Psi/2 + 8 = 35272.
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/gpt-2x2 --lr 0.01 --weight-decay 0.01 --bucket-mb 0 --mesh dp=2,tp=2 --zero 2
// RUN: FileCheck %s --check-prefix=NESTED < %t/gpt-2x2/report.json
// NESTED: "gradients": 17632,
// NESTED-NEXT: "master_weights": 0,
// NESTED-NEXT: "optimizer_state": 35272,
// NESTED-NEXT: "parameters": 35264
// RUN: FileCheck %s --check-prefix=NESTED-IR < %t/gpt-2x2/train_step.mlir
// NESTED-IR: tensor<24xf32> {dtc.aliasing_output = {{[0-9]+}} : i64, dtc.sharding = #dtc.sharding<@mesh, {{\[}}["tp", "dp"]] blocks = [3]>, dtc.state = #dtc.state<exp_avg of "block.qkv.bias">}
// RUN: %mpirun -np 4 dtc-run %t/gpt-2x2 --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/gpt-2x2-dump > %t/gpt-2x2.log
// RUN: %python %S/../Utils/compare_training.py %t/gpt-2x2-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: %python %S/../Utils/compare_report.py %t/gpt-2x2/report.json %t/gpt-2x2.log | FileCheck %s --check-prefix=AGREE4
// RUN: dtc-compile %S/Inputs/tiny_llama/b4/model.onnx -o %t/llama-2x2 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --mesh dp=2,tp=2 --sequence-parallel --bucket-mb 0 --zero 1
// RUN: %mpirun -np 4 dtc-run %t/llama-2x2 --batch %S/Inputs/tiny_llama/b4/batch --steps 3 --dump %t/llama-2x2-dump
// RUN: %python %S/../Utils/compare_training.py %t/llama-2x2-dump %S/Inputs/tiny_llama/b4/adamw %S/Inputs/tiny_llama/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/gpt-acc --lr 0.01 --weight-decay 0.01 --mesh dp=2 --bucket-mb 0 --zero 1 --grad-accum 2
// RUN: %mpirun -np 2 dtc-run %t/gpt-acc --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/gpt-acc-dump > %t/gpt-acc.log
// RUN: FileCheck %s --check-prefix=Z1-LOG < %t/gpt-acc.log
// RUN: %python %S/../Utils/compare_training.py %t/gpt-acc-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
//
// bf16 (stage 2) against single-device bf16, as in train-tp-combos.mlir.
//
// Under --precision bf16 the split is the paper's 2Psi + 2Psi + 12Psi:
// bf16 parameters and gradients, f32 master weights (reported apart) and
// moments. GPT-2 (Psi = 17120), dp=2: none 34240 + 34240 + (68480 +
// 136968); stage 1 2Psi + 2Psi + 12Psi/2 (+ 8); stage 2 2Psi + 2Psi/2 +
// 12Psi/2; stage 3 16Psi/2. Stages 1 and 2 move Psi/2 elements (17120
// bytes of bf16) each way.
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-bf16 --lr 0.01 --weight-decay 0.01 --precision bf16
// RUN: %python %S/../Utils/check_zero_memory.py %t/gpt-bf16/report.json %S/Inputs/tiny_transformer/initial --dp 1 --precision bf16 | FileCheck %s
// RUN: FileCheck %s --check-prefix=BF16-NONE < %t/gpt-bf16/report.json
// BF16-NONE: "gradients": 34240,
// BF16-NONE-NEXT: "master_weights": 68480,
// BF16-NONE-NEXT: "optimizer_state": 136968,
// BF16-NONE-NEXT: "parameters": 34240
// RUN: dtc-run %t/gpt-bf16 --batch %S/Inputs/tiny_transformer/batch --steps 3 --dump %t/gpt-bf16-dump
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-bf16-z1 --lr 0.01 --weight-decay 0.01 --precision bf16 --mesh dp=2 --bucket-mb 0 --zero 1
// RUN: %python %S/../Utils/check_zero_memory.py %t/gpt-bf16-z1/report.json %S/Inputs/tiny_transformer/initial --dp 2 --stage 1 --precision bf16 | FileCheck %s
// RUN: FileCheck %s --check-prefix=BF16-Z1 < %t/gpt-bf16-z1/report.json
// BF16-Z1: "gradients": 34240,
// BF16-Z1-NEXT: "master_weights": 34240,
// BF16-Z1-NEXT: "optimizer_state": 68488,
// BF16-Z1-NEXT: "parameters": 34240
// RUN: %mpirun -np 2 dtc-run %t/gpt-bf16-z1 --batch %S/Inputs/tiny_transformer/batch --steps 3 --dump %t/gpt-bf16-z1-dump > %t/gpt-bf16-z1.log
// RUN: FileCheck %s --check-prefix=BF16-LOG < %t/gpt-bf16-z1.log
// BF16-LOG: rank 0 per step: {{[0-9.]+}} s, all_reduce 2 calls, 8 bus bytes, all_gather 17 calls, 17120 bus bytes, reduce_scatter 17 calls, 17120 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/gpt-bf16-z1-dump %t/gpt-bf16-dump %S/Inputs/tiny_transformer/initial --loss-rtol 1.6e-2 --grad-rl2 0.1 --update-rl2 0.2 --mask-from %S/Inputs/tiny_transformer/adamw | FileCheck %s
// RUN: cat %t/gpt-bf16-z1/report.json %t/gpt-bf16-z1.log | FileCheck %s --check-prefix=PEAK
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-bf16-z2 --lr 0.01 --weight-decay 0.01 --precision bf16 --mesh dp=2 --bucket-mb 0 --zero 2
// RUN: %python %S/../Utils/check_zero_memory.py %t/gpt-bf16-z2/report.json %S/Inputs/tiny_transformer/initial --dp 2 --stage 2 --precision bf16 | FileCheck %s
// RUN: FileCheck %s --check-prefix=BF16-Z2 < %t/gpt-bf16-z2/report.json
// BF16-Z2: "gradients": 17120,
// BF16-Z2-NEXT: "master_weights": 34240,
// BF16-Z2-NEXT: "optimizer_state": 68488,
// BF16-Z2-NEXT: "parameters": 34240
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-bf16-z3 --lr 0.01 --weight-decay 0.01 --precision bf16 --mesh dp=2 --bucket-mb 0 --zero 3
// RUN: %python %S/../Utils/check_zero_memory.py %t/gpt-bf16-z3/report.json %S/Inputs/tiny_transformer/initial --dp 2 --stage 3 --precision bf16 | FileCheck %s
// RUN: FileCheck %s --check-prefix=BF16-Z3 < %t/gpt-bf16-z3/report.json
// BF16-Z3: "gradients": 17120,
// BF16-Z3-NEXT: "master_weights": 34240,
// BF16-Z3-NEXT: "optimizer_state": 68488,
// BF16-Z3-NEXT: "parameters": 17120
// RUN: %mpirun -np 2 dtc-run %t/gpt-bf16-z3 --batch %S/Inputs/tiny_transformer/batch --steps 3 --dump %t/gpt-bf16-z3-dump > %t/gpt-bf16-z3.log
// RUN: %python %S/../Utils/compare_training.py %t/gpt-bf16-z3-dump %t/gpt-bf16-dump %S/Inputs/tiny_transformer/initial --loss-rtol 1.6e-2 --grad-rl2 0.1 --update-rl2 0.2 --mask-from %S/Inputs/tiny_transformer/adamw | FileCheck %s
// RUN: cat %t/gpt-bf16-z3/report.json %t/gpt-bf16-z3.log | FileCheck %s --check-prefix=PEAK
// RUN: dtc-compile %S/../../examples/tiny_llama/model.onnx -o %t/llama-bf16 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --precision bf16
// RUN: dtc-run %t/llama-bf16 --batch %S/Inputs/tiny_llama/batch --steps 3 --dump %t/llama-bf16-dump
// RUN: dtc-compile %S/../../examples/tiny_llama/model.onnx -o %t/llama-bf16-z2 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --precision bf16 --mesh dp=2 --bucket-mb 0 --zero 2
// RUN: %mpirun -np 2 dtc-run %t/llama-bf16-z2 --batch %S/Inputs/tiny_llama/batch --steps 3 --dump %t/llama-bf16-z2-dump
// RUN: %python %S/../Utils/compare_training.py %t/llama-bf16-z2-dump %t/llama-bf16-dump %S/Inputs/tiny_llama/initial --loss-rtol 1.6e-2 --grad-rl2 0.1 --update-rl2 0.2 --mask-from %S/Inputs/tiny_llama/adamw | FileCheck %s
//
// bf16 with 2 microbatches: the microbatches' gradients add up in f32 and
// are cast to bf16 once (the dp sum then moves bf16); stage 2
// reduce-scatters each microbatch's bf16 gradient as it is made and adds
// the shards in f32 (2 x 17 calls, 2 x 17120 bus bytes).
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/gpt-bf16-acc --lr 0.01 --weight-decay 0.01 --precision bf16 --grad-accum 2
// RUN: FileCheck %s --check-prefix=ACC32 < %t/gpt-bf16-acc/train_step.mlir
// ACC32: %[[SUM:.*]] = dtc.add {{.*}} : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
// ACC32: dtc.cast %[[SUM]] : tensor<64x32xf32> to tensor<64x32xbf16>
// RUN: dtc-run %t/gpt-bf16-acc --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/gpt-bf16-acc-dump
// RUN: %python %S/../Utils/compare_training.py %t/gpt-bf16-acc-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial --loss-rtol 1.6e-2 --grad-rl2 0.1 --update-rl2 0.2 | FileCheck %s
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/gpt-bf16-z2-acc --lr 0.01 --weight-decay 0.01 --precision bf16 --grad-accum 2 --mesh dp=2 --zero 2 --bucket-mb 0 2>&1 | FileCheck %s --check-prefix=ACC-RS
// ACC-RS: per rank per step: reduce_scatter 34 calls, 34240 bus bytes
// RUN: FileCheck %s --check-prefix=ACC-SHARDS < %t/gpt-bf16-z2-acc/train_step.mlir
// ACC-SHARDS: %[[RS:.*]] = dtc.reduce_scatter {{.*}} : tensor<64x32xbf16> -> tensor<32x32xbf16>
// ACC-SHARDS-NEXT: dtc.cast %[[RS]] : tensor<32x32xbf16> to tensor<32x32xf32>
// RUN: %mpirun -np 2 dtc-run %t/gpt-bf16-z2-acc --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/gpt-bf16-z2-acc-dump
// RUN: %python %S/../Utils/compare_training.py %t/gpt-bf16-z2-acc-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial --loss-rtol 1.6e-2 --grad-rl2 0.1 --update-rl2 0.2 | FileCheck %s
//
// Stage 3, GPT-2 example, dp=2: parameters 34240 = 4Psi/2, gradients
// 34240, state 68488 (16Psi/2 + 8 in all). Every parameter is all-gathered
// before the forward (17 calls, 34240 bus bytes), and again before the
// backward where the backward reads it: the 8 weights and norm scales, not
// the biases or the embedding tables, whose gradients do not read them
// (28864 bus bytes; the update reads the shard); each gradient is
// reduce-scattered (17 calls, 34240). 97344 bus bytes: 1.42 times data
// parallelism's 68480, within the paper's 3 x 34240 (1.5 times).
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-z3 --lr 0.01 --weight-decay 0.01 --mesh dp=2 --bucket-mb 0 --zero 3
// RUN: %python %S/../Utils/check_zero_memory.py %t/gpt-z3/report.json %S/Inputs/tiny_transformer/initial --dp 2 --stage 3 | FileCheck %s
// RUN: FileCheck %s --check-prefix=Z3 < %t/gpt-z3/report.json
// Z3: "gradients": 34240,
// Z3-NEXT: "master_weights": 0,
// Z3-NEXT: "optimizer_state": 68488,
// Z3-NEXT: "parameters": 34240
// RUN: %mpirun -np 2 dtc-run %t/gpt-z3 --batch %S/Inputs/tiny_transformer/batch --steps 3 --dump %t/gpt-z3-dump > %t/gpt-z3.log
// RUN: FileCheck %s --check-prefix=Z3-LOG < %t/gpt-z3.log
// RUN: cat %t/gpt-z3/report.json %t/gpt-z3.log | FileCheck %s --check-prefix=PEAK
// Z3-LOG: rank 0 per step: {{[0-9.]+}} s, all_reduce 2 calls, 8 bus bytes, all_gather 25 calls, 63104 bus bytes, reduce_scatter 17 calls, 34240 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/gpt-z3-dump %S/Inputs/tiny_transformer/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: %python %S/../Utils/compare_report.py %t/gpt-z3/report.json %t/gpt-z3.log | FileCheck %s --check-prefix=AGREE
// The forward's gather comes just before the first forward use; the
// backward gathers again (after the simplify pipeline, still two: the
// collectives are not merged) and remakes the forward's transpose from it.
// RUN: FileCheck %s --check-prefix=Z3-IR < %t/gpt-z3/train_step.mlir
// Z3-IR: %[[F:.*]] = dtc.all_gather %arg17 on @mesh axes = ["dp"] dim = 0 {dtc.gather_phase = "forward", reason = "ZeRO-3: head.weight whole for the forward"} : tensor<32x32xf32> -> tensor<64x32xf32>
// Z3-IR-NEXT: dtc.transpose %[[F]]
// Z3-IR: %[[B:.*]] = dtc.all_gather %arg17 on @mesh axes = ["dp"] dim = 0 {dtc.gather_phase = "backward", reason = "ZeRO-3: head.weight whole for the backward"} : tensor<32x32xf32> -> tensor<64x32xf32>
// Z3-IR-NEXT: dtc.transpose %[[B]]
// dp=4, dp=2 x tp=2, 2 microbatches, bf16:
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/gpt-z3-dp4 --lr 0.01 --weight-decay 0.01 --mesh dp=4 --bucket-mb 0 --zero 3
// RUN: %mpirun -np 4 dtc-run %t/gpt-z3-dp4 --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/gpt-z3-dp4-dump
// RUN: %python %S/../Utils/compare_training.py %t/gpt-z3-dp4-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/tiny_llama/b4/model.onnx -o %t/llama-z3-2x2 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --mesh dp=2,tp=2 --bucket-mb 0 --zero 3
// RUN: %mpirun -np 4 dtc-run %t/llama-z3-2x2 --batch %S/Inputs/tiny_llama/b4/batch --steps 3 --dump %t/llama-z3-2x2-dump
// RUN: %python %S/../Utils/compare_training.py %t/llama-z3-2x2-dump %S/Inputs/tiny_llama/b4/adamw %S/Inputs/tiny_llama/initial | FileCheck %s
// RUN: dtc-compile %S/../../examples/tiny_llama/model.onnx -o %t/llama-z3 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --mesh dp=2 --bucket-mb 0 --zero 3
// RUN: %mpirun -np 2 dtc-run %t/llama-z3 --batch %S/Inputs/tiny_llama/batch --steps 3 --dump %t/llama-z3-dump
// RUN: %python %S/../Utils/compare_training.py %t/llama-z3-dump %S/Inputs/tiny_llama/adamw %S/Inputs/tiny_llama/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/tiny_llama/b4/model.onnx -o %t/llama-z2-acc --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --mesh dp=2 --bucket-mb 0 --zero 2 --grad-accum 2
// RUN: %mpirun -np 2 dtc-run %t/llama-z2-acc --batch %S/Inputs/tiny_llama/b4/batch --steps 3 --dump %t/llama-z2-acc-dump
// RUN: %python %S/../Utils/compare_training.py %t/llama-z2-acc-dump %S/Inputs/tiny_llama/b4/adamw %S/Inputs/tiny_llama/initial | FileCheck %s
// Stage 2 under accumulation keeps no whole gradient buffer: each
// microbatch's gradient is reduce-scattered as soon as it is made (2 x 17
// calls, 2 x 34240 bus bytes: the K reduce-scatters' worth), the shards
// added up; stage 1 (above, gpt-acc) reduce-scatters the accumulated whole
// once (17 calls).
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/gpt-z2-acc --lr 0.01 --weight-decay 0.01 --mesh dp=2 --bucket-mb 0 --zero 2 --grad-accum 2
// RUN: %mpirun -np 2 dtc-run %t/gpt-z2-acc --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/gpt-z2-acc-dump > %t/gpt-z2-acc.log
// RUN: FileCheck %s --check-prefix=Z2-ACC < %t/gpt-z2-acc.log
// Z2-ACC: rank 0 per step: {{[0-9.]+}} s, all_reduce 2 calls, 8 bus bytes, all_gather 17 calls, 34240 bus bytes, reduce_scatter 34 calls, 68480 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/gpt-z2-acc-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/gpt-z3-acc --lr 0.01 --weight-decay 0.01 --mesh dp=2 --bucket-mb 0 --zero 3 --grad-accum 2
// RUN: %mpirun -np 2 dtc-run %t/gpt-z3-acc --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/gpt-z3-acc-dump
// RUN: %python %S/../Utils/compare_training.py %t/gpt-z3-acc-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: dtc-compile %S/../../examples/tiny_llama/model.onnx -o %t/llama-bf16-z3 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --precision bf16 --mesh dp=2 --bucket-mb 0 --zero 3
// RUN: %mpirun -np 2 dtc-run %t/llama-bf16-z3 --batch %S/Inputs/tiny_llama/batch --steps 3 --dump %t/llama-bf16-z3-dump
// RUN: %python %S/../Utils/compare_training.py %t/llama-bf16-z3-dump %t/llama-bf16-dump %S/Inputs/tiny_llama/initial --loss-rtol 1.6e-2 --grad-rl2 0.1 --update-rl2 0.2 --mask-from %S/Inputs/tiny_llama/adamw | FileCheck %s
//
// Bucketing (the default --bucket-mb 25) under ZeRO packs per rank:
// each gradient, its split dimension first, viewed as [N, rest], the
// bucket their concatenation along rest, so one reduce-scatter hands every
// rank its shard of each (FSDP2's interleaving); the parameters' gathers
// are packed the same way. GPT-2 stage 1: 17 + 17 calls become 1 + 1, the
// same bytes and trajectory.
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-z1-b --lr 0.01 --weight-decay 0.01 --mesh dp=2 --zero 1
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
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-z3-b --lr 0.01 --weight-decay 0.01 --mesh dp=2 --zero 3
// RUN: FileCheck %s --check-prefix=UNIT < %t/gpt-z3-b/train_step.mlir
// UNIT: reason = "ZeRO-3: parameter bucket 1 of 4 (50816 bytes): block.ln1.weight, block.ln1.bias, block.qkv.weight, block.qkv.bias, block.proj.weight, block.proj.bias, block.ln2.weight, block.ln2.bias, block.fc.weight, block.fc.bias, block.out.weight, block.out.bias"
// RUN: %mpirun -np 2 dtc-run %t/gpt-z3-b --batch %S/Inputs/tiny_transformer/batch --steps 3 --dump %t/gpt-z3-b-dump > %t/gpt-z3-b.log
// RUN: FileCheck %s --check-prefix=Z3B-LOG < %t/gpt-z3-b.log
// Z3B-LOG: rank 0 per step: {{[0-9.]+}} s, all_reduce 1 calls, 8 bus bytes, all_gather 8 calls, 63104 bus bytes, reduce_scatter 1 calls, 34240 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/gpt-z3-b-dump %S/Inputs/tiny_transformer/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: cat %t/gpt-z3-b/report.json %t/gpt-z3-b.log | FileCheck %s --check-prefix=PEAK
// RUN: dtc-compile %S/../../examples/tiny_llama/model.onnx -o %t/llama-z3-b --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --mesh dp=2 --zero 3 --bucket-mb 0.02
// RUN: FileCheck %s --check-prefix=PREFETCH < %t/llama-z3-b/train_step.mlir
// PREFETCH: dtc.all_gather {{.*}} {dtc.gather_phase = "forward", reason = "ZeRO-3: embed.weight whole for the forward"}
// PREFETCH: dtc.all_gather {{.*}} {dtc.gather_phase = "forward", reason = "ZeRO-3: parameter bucket 1 of 12 (20736 bytes): layers.0.attn_norm.weight,
// PREFETCH-NEXT: dtc.slice
// PREFETCH: dtc.gather %
// PREFETCH-NOT: dtc.matmul
// PREFETCH: dtc.all_gather {{.*}} {dtc.gather_phase = "forward", reason = "ZeRO-3: parameter bucket 2 of 12 (16384 bytes): layers.0.mlp.w3.weight, layers.0.mlp.w2.weight"}
// RUN: %mpirun -np 2 dtc-run %t/llama-z3-b --batch %S/Inputs/tiny_llama/batch --steps 3 --dump %t/llama-z3-b-dump
// RUN: %python %S/../Utils/compare_training.py %t/llama-z3-b-dump %S/Inputs/tiny_llama/adamw %S/Inputs/tiny_llama/initial | FileCheck %s
//
// Stage 3 under other optimizers and their options: the update reads the
// shard wherever it reads the parameter -- SGD with momentum, AdamW
// without decay for biases and norms (clipping, warm-up + cosine; five
// steps), fp16's skipped-step select -- against PyTorch.
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-z3-sgd --optimizer sgd --lr 0.1 --momentum 0.9 --weight-decay 0.01 --mesh dp=2 --zero 3
// RUN: %mpirun -np 2 dtc-run %t/gpt-z3-sgd --batch %S/Inputs/tiny_transformer/batch --steps 3 --dump %t/gpt-z3-sgd-dump
// RUN: %python %S/../Utils/compare_training.py %t/gpt-z3-sgd-dump %S/Inputs/tiny_transformer/sgd %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-z3-sched --lr 0.01 --weight-decay 0.01 --no-decay 'bias|ln' --clip-grad-norm 0.5 --schedule warmup-cosine --warmup-steps 2 --warmup-start-factor 0.25 --total-steps 5 --min-lr 1e-3 --mesh dp=2 --zero 3
// RUN: %mpirun -np 2 dtc-run %t/gpt-z3-sched --batch %S/Inputs/tiny_transformer/batch --steps 5 --dump %t/gpt-z3-sched-dump
// RUN: %python %S/../Utils/compare_training.py %t/gpt-z3-sched-dump %S/Inputs/tiny_transformer/schedule %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-z3-fp16 --lr 0.01 --weight-decay 0.01 --precision fp16 --mesh dp=2 --zero 3
// RUN: %mpirun -np 2 dtc-run %t/gpt-z3-fp16 --batch %S/Inputs/tiny_transformer/batch --steps 3 --dump %t/gpt-z3-fp16-dump > %t/gpt-z3-fp16.log
// fp16 unscales each gradient before the update and its overflow count
// reads it: the cut moves above the unscaling (dtc-sink-shards), so the
// sums are still reduce-scatters, bucketed (the loss scalars and the
// overflow counts: 2 all-reduces). Stage 2 per gradient: 17 calls.
// RUN: FileCheck %s --check-prefix=FP16-LOG < %t/gpt-z3-fp16.log
// FP16-LOG: rank 0 per step: {{[0-9.]+}} s, all_reduce 2 calls, 12 bus bytes, all_gather 8 calls, 63104 bus bytes, reduce_scatter 1 calls, 34240 bus bytes
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-z2-fp16 --precision fp16 --mesh dp=2 --zero 2 --bucket-mb 0 2>&1 | FileCheck %s --check-prefix=FP16-Z2
// FP16-Z2: per rank per step: reduce_scatter 17 calls, 34240 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/gpt-z3-fp16-dump %S/Inputs/tiny_transformer/adamw %S/Inputs/tiny_transformer/initial --loss-rtol 2e-3 --grad-rl2 2.5e-2 --update-rl2 0.1 | FileCheck %s
//
// What is not there is refused by name.
// RUN: not dtc-compile %S/../../examples/tiny_llama/model.onnx -o %t/x --mesh dp=2 --bucket-mb 0 --zero 4 2>&1 | FileCheck %s --check-prefix=STAGE4
// STAGE4: error: dtc-zero: stage 4 does not exist (1, 2 or 3)
// RUN: not dtc-compile %S/../../examples/tiny_llama/model.onnx -o %t/x --bucket-mb 0 --zero 1 2>&1 | FileCheck %s --check-prefix=NODP
// NODP: error: dtc-zero shards over the dp axis: compile with --mesh dp=N, N >= 2
//
// CHECK-NOT: FAIL
// CHECK: 0 failed
// AGREE-NOT: FAIL
// AGREE: 2 ranks, 0 failed
// AGREE4-NOT: FAIL
// AGREE4: 4 ranks, 0 failed
