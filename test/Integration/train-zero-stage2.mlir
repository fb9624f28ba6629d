// ZeRO stage 2 (--zero 2) on the Llama example, dp=2: as stage 1, and each
// rank keeps only its shard of the gradients: 4Psi + 4Psi/N + 8Psi/N bytes
// per rank (Psi, N and the paper's formulas: train-zero-stage1.mlir).
// Without gradient accumulation the program is stage 1's and only the
// report's gradient bytes differ (under accumulation:
// train-zero-accumulation.mlir). Three AdamW steps match PyTorch's
// single-device run.
// RUN: rm -rf %t && mkdir -p %t
//
// Llama example, dp=2, stage 2: gradients 41280 = 4Psi/2, state 82568 =
// 8Psi/2 + 8.
// RUN: dtc-compile %S/../../examples/tiny_llama/model.onnx -o %t/llama-z2 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --verify --mesh dp=2 --bucket-mb 0 --zero 2
// RUN: %python %S/../Utils/check_zero_memory.py %t/llama-z2/report.json %S/Inputs/tiny_llama/initial --dp 2 --stage 2 | FileCheck %s
// RUN: FileCheck %s --check-prefix=Z2 < %t/llama-z2/report.json
// Z2: "gradients": 41280,
// Z2-NEXT: "master_weights": 0,
// Z2-NEXT: "optimizer_state": 82568,
// Z2-NEXT: "parameters": 82560
// RUN: %mpirun -np 2 dtc-run %t/llama-z2 --batch %S/Inputs/tiny_llama/batch --steps 3 --dump %t/llama-z2-dump > %t/llama-z2.log
// RUN: FileCheck %s --check-prefix=Z2-LOG < %t/llama-z2.log
// (The reference executor measures the peak the plan predicts.)
// RUN: %mpirun -np 2 dtc-run --engine reference %t/llama-z2 --batch %S/Inputs/tiny_llama/batch --steps 1 > %t/llama-z2.reference.log
// RUN: cat %t/llama-z2/report.json %t/llama-z2.reference.log | FileCheck %s --check-prefix=PEAK
// Z2-LOG: rank 0 per step: {{[0-9.]+}} s, all_reduce 2 calls, 8 bus bytes, all_gather 20 calls, 41280 bus bytes, reduce_scatter 20 calls, 41280 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/llama-z2-dump %S/Inputs/tiny_llama/adamw %S/Inputs/tiny_llama/initial | FileCheck %s
// The planned peak of everything else (liveness over the per-rank
// program) is what the executor measured:
// PEAK: "activation_peak": [[PEAK:[0-9]+]]
// PEAK: rank 0 peak intermediate memory: [[PEAK]] B (planned [[PEAK]] B)
// PEAK-NEXT: rank 1 peak intermediate memory: [[PEAK]] B
//
// CHECK-NOT: FAIL
// CHECK: 0 failed
