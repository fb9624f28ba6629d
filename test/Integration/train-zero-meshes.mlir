// ZeRO on meshes other than dp=2: dp=4 (batch 4) and dp=2 x tp=2 (with
// sequence parallelism too), stages 1-3. Three AdamW steps match PyTorch's
// single-device run on every mesh; Psi, N and the paper's formulas are in
// train-zero-stage1.mlir.
// RUN: rm -rf %t && mkdir -p %t
//
// dp=4 (batch 4): GPT-2 stage 2, gradients 17120 = 4Psi/4, state 34248 =
// 8Psi/4 + 8, 3/4 x 68480 = 51360 bus bytes each way; Llama stage 1.
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/gpt-dp4 --lr 0.01 --weight-decay 0.01 --verify --mesh dp=4 --bucket-mb 0 --zero 2
// RUN: %python %S/../Utils/check_zero_memory.py %t/gpt-dp4/report.json %S/Inputs/tiny_transformer/initial --dp 4 --stage 2 | FileCheck %s
// RUN: FileCheck %s --check-prefix=DP4 < %t/gpt-dp4/report.json
// DP4: "gradients": 17120,
// DP4-NEXT: "master_weights": 0,
// DP4-NEXT: "optimizer_state": 34248,
// RUN: %mpirun -np 4 dtc-run %t/gpt-dp4 --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/gpt-dp4-dump > %t/gpt-dp4.log
// RUN: FileCheck %s --check-prefix=DP4-LOG < %t/gpt-dp4.log
// DP4-LOG: rank 0 per step: {{[0-9.]+}} s, all_reduce 2 calls, 12 bus bytes, all_gather 17 calls, 51360 bus bytes, reduce_scatter 17 calls, 51360 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/gpt-dp4-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/tiny_llama/b4/model.onnx -o %t/llama-dp4 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --verify --mesh dp=4 --bucket-mb 0 --zero 1
// RUN: %mpirun -np 4 dtc-run %t/llama-dp4 --batch %S/Inputs/tiny_llama/b4/batch --steps 3 --dump %t/llama-dp4-dump
// RUN: %python %S/../Utils/compare_training.py %t/llama-dp4-dump %S/Inputs/tiny_llama/b4/adamw %S/Inputs/tiny_llama/initial | FileCheck %s
//
// dp=2 x tp=2 (stage 2), and with sequence parallelism (stage 1). On dp x
// tp, Psi is the rank's tp part (GPT-2: 35264 bytes = 4Psi); a tp-split
// bias's state is dp's half of tp's half, so the formulas hold exactly:
// gradients 4Psi/2 = 17632, state 8Psi/2 + 8 = 35272.
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/gpt-2x2 --lr 0.01 --weight-decay 0.01 --bucket-mb 0 --verify --mesh dp=2,tp=2 --zero 2
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
// RUN: dtc-compile %S/Inputs/tiny_llama/b4/model.onnx -o %t/llama-2x2 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --verify --mesh dp=2,tp=2 --sequence-parallel --bucket-mb 0 --zero 1
// RUN: %mpirun -np 4 dtc-run %t/llama-2x2 --batch %S/Inputs/tiny_llama/b4/batch --steps 3 --dump %t/llama-2x2-dump
// RUN: %python %S/../Utils/compare_training.py %t/llama-2x2-dump %S/Inputs/tiny_llama/b4/adamw %S/Inputs/tiny_llama/initial | FileCheck %s
//
// Stage 3 on dp=4 and on dp=2 x tp=2:
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/gpt-z3-dp4 --lr 0.01 --weight-decay 0.01 --verify --mesh dp=4 --bucket-mb 0 --zero 3
// RUN: %mpirun -np 4 dtc-run %t/gpt-z3-dp4 --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/gpt-z3-dp4-dump
// RUN: %python %S/../Utils/compare_training.py %t/gpt-z3-dp4-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/tiny_llama/b4/model.onnx -o %t/llama-z3-2x2 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --verify --mesh dp=2,tp=2 --bucket-mb 0 --zero 3
// RUN: %mpirun -np 4 dtc-run %t/llama-z3-2x2 --batch %S/Inputs/tiny_llama/b4/batch --steps 3 --dump %t/llama-z3-2x2-dump
// RUN: %python %S/../Utils/compare_training.py %t/llama-z3-2x2-dump %S/Inputs/tiny_llama/b4/adamw %S/Inputs/tiny_llama/initial | FileCheck %s
//
// CHECK-NOT: FAIL
// CHECK: 0 failed
// AGREE4-NOT: FAIL
// AGREE4: 4 ranks, 0 failed
