// ZeRO with gradient accumulation (--grad-accum 2: batch 4 in two
// microbatches, dp=2). Stage 1 keeps the whole gradient buffer: the
// microbatches accumulate into it and it is reduce-scattered once per
// step. Stages 2 and 3 keep only the shard: each microbatch's gradient is
// reduce-scattered as soon as it is made and the shards are added (K
// reduce-scatters per step, a lower activation peak). Three AdamW steps
// match PyTorch's single-device run.
// RUN: rm -rf %t && mkdir -p %t
//
// Stage 1: the same collectives as without accumulation
// (train-zero-stage1.mlir: 17 reduce-scatters, 17 all-gathers).
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/gpt-acc --lr 0.01 --weight-decay 0.01 --verify --mesh dp=2 --bucket-mb 0 --zero 1 --grad-accum 2
// RUN: %mpirun -np 2 dtc-run %t/gpt-acc --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/gpt-acc-dump > %t/gpt-acc.log
// RUN: FileCheck %s --check-prefix=Z1-LOG < %t/gpt-acc.log
// RUN: %python %S/../Utils/compare_training.py %t/gpt-acc-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// Z1-LOG: rank 0 per step: {{[0-9.]+}} s, all_reduce 2 calls, 8 bus bytes, all_gather 17 calls, 34240 bus bytes, reduce_scatter 17 calls, 34240 bus bytes
// Stage 2 under accumulation keeps no whole gradient buffer: each
// microbatch's gradient is reduce-scattered as soon as it is made (2 x 17
// calls, 2 x 34240 bus bytes: the K reduce-scatters' worth), the shards
// added up; stage 1 (above, gpt-acc) reduce-scatters the accumulated whole
// once (17 calls).
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/gpt-z2-acc --lr 0.01 --weight-decay 0.01 --verify --mesh dp=2 --bucket-mb 0 --zero 2 --grad-accum 2
// RUN: %mpirun -np 2 dtc-run %t/gpt-z2-acc --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/gpt-z2-acc-dump > %t/gpt-z2-acc.log
// RUN: FileCheck %s --check-prefix=Z2-ACC < %t/gpt-z2-acc.log
// Z2-ACC: rank 0 per step: {{[0-9.]+}} s, all_reduce 2 calls, 8 bus bytes, all_gather 17 calls, 34240 bus bytes, reduce_scatter 34 calls, 68480 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/gpt-z2-acc-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/gpt-z3-acc --lr 0.01 --weight-decay 0.01 --verify --mesh dp=2 --bucket-mb 0 --zero 3 --grad-accum 2
// RUN: %mpirun -np 2 dtc-run %t/gpt-z3-acc --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/gpt-z3-acc-dump
// RUN: %python %S/../Utils/compare_training.py %t/gpt-z3-acc-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// The Llama example, stage 2:
// RUN: dtc-compile %S/Inputs/tiny_llama/b4/model.onnx -o %t/llama-z2-acc --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --verify --mesh dp=2 --bucket-mb 0 --zero 2 --grad-accum 2
// RUN: %mpirun -np 2 dtc-run %t/llama-z2-acc --batch %S/Inputs/tiny_llama/b4/batch --steps 3 --dump %t/llama-z2-acc-dump
// RUN: %python %S/../Utils/compare_training.py %t/llama-z2-acc-dump %S/Inputs/tiny_llama/b4/adamw %S/Inputs/tiny_llama/initial | FileCheck %s
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
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/gpt-bf16-z2-acc --lr 0.01 --weight-decay 0.01 --precision bf16 --grad-accum 2 --verify --mesh dp=2 --zero 2 --bucket-mb 0 2>&1 | FileCheck %s --check-prefix=ACC-RS
// ACC-RS: per rank per step: reduce_scatter 34 calls, 34240 bus bytes
// RUN: FileCheck %s --check-prefix=ACC-SHARDS < %t/gpt-bf16-z2-acc/train_step.mlir
// ACC-SHARDS: %[[RS:.*]] = dtc.reduce_scatter {{.*}} : tensor<64x32xbf16> -> tensor<32x32xbf16>
// ACC-SHARDS-NEXT: dtc.cast %[[RS]] : tensor<32x32xbf16> to tensor<32x32xf32>
// RUN: %mpirun -np 2 dtc-run %t/gpt-bf16-z2-acc --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/gpt-bf16-z2-acc-dump
// RUN: %python %S/../Utils/compare_training.py %t/gpt-bf16-z2-acc-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial --loss-rtol 1.6e-2 --grad-rl2 0.1 --update-rl2 0.2 | FileCheck %s
//
// CHECK-NOT: FAIL
// CHECK: 0 failed
