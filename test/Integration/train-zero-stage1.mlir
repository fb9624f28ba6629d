// ZeRO stage 1 (--zero 1) on the GPT-2 example, dp=2: the optimizer state
// is split over dp, each rank updates its shard from its part of the
// reduce-scattered gradient, and the updated parameters are all-gathered.
// Three AdamW steps match PyTorch's single-device run.
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
//
// ZeRO's other integration tests, by what they cover: train-zero-stage2,
// -stage3, -meshes (dp=4, dp x tp), -bf16, -accumulation, -bucketing,
// -optimizers (stage 3 under SGD, schedules, fp16), -errors and -padding.
// RUN: rm -rf %t && mkdir -p %t
//
// GPT-2 example, dp=2, stage 1: parameters 68480 = 4Psi, gradients 68480 =
// 4Psi, state 68488 = 8Psi/2 + 8; 17 reduce-scatters and 17 all-gathers of
// 34240 bus bytes (= 68480 / 2 each).
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-z1 --lr 0.01 --weight-decay 0.01 --verify --mesh dp=2 --bucket-mb 0 --zero 1
// RUN: %python %S/../Utils/check_zero_memory.py %t/gpt-z1/report.json %S/Inputs/tiny_transformer/initial --dp 2 --stage 1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=Z1 < %t/gpt-z1/report.json
// Z1: "memory_bytes_per_rank": {
// Z1-NEXT: "activation_peak": {{[0-9]+}},
// Z1-NEXT: "arena": {{[0-9]+}},
// Z1-NEXT: "arena_lower_bound": {{[0-9]+}},
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
// (The reference executor measures the peak the plan predicts.)
// RUN: %mpirun -np 2 dtc-run --engine reference %t/gpt-z1 --batch %S/Inputs/tiny_transformer/batch --steps 1 > %t/gpt-z1.reference.log
// RUN: cat %t/gpt-z1/report.json %t/gpt-z1.reference.log | FileCheck %s --check-prefix=PEAK
// PEAK: "activation_peak": [[PEAK:[0-9]+]]
// PEAK: rank 0 peak intermediate memory: [[PEAK]] B (planned [[PEAK]] B)
// PEAK-NEXT: rank 1 peak intermediate memory: [[PEAK]] B
// The updates read reduce-scattered gradients, with their reason:
// RUN: FileCheck %s --check-prefix=IR < %t/gpt-z1/train_step.mlir
// IR: dtc.reduce_scatter {{.*}} on @mesh axes = ["dp"] dim = 0 {reason = "data-parallel: gradient of head.weight (summed over the batch shards); each rank keeps its part"}
// IR: dtc.all_gather {{.*}} on @mesh axes = ["dp"] dim = 0 {reason = "ZeRO-1: new head.weight is computed split over 'dp' but kept whole"}
//
// CHECK-NOT: FAIL
// CHECK: 0 failed
// AGREE-NOT: FAIL
// AGREE: 2 ranks, 0 failed
