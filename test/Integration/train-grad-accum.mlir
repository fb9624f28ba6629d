// Gradient accumulation (dtc-compile --grad-accum K): the batch of 4 runs
// as K microbatches in sequence whose gradients add up before one AdamW
// update, and three steps match PyTorch's on the whole batch
// (Inputs/<model>/b4/adamw), for K = 2 and 4 on one device and for K = 2
// on each of two data-parallel ranks. With data parallelism the gradients
// are all-reduced once per step, after the last microbatch: the same 19
// (22) all-reduces and bytes as without accumulation.
// RUN: rm -rf %t
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/gpt-k2 --lr 0.01 --weight-decay 0.01 --grad-accum 2
// RUN: dtc-run %t/gpt-k2 --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/gpt-k2-dump
// RUN: %python %S/../Utils/compare_training.py %t/gpt-k2-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/gpt-k4 --lr 0.01 --weight-decay 0.01 --grad-accum 4
// RUN: FileCheck %s --check-prefix=IR < %t/gpt-k4/train_step.mlir
// IR: dtc.slice %arg0 starts = [3, 0] sizes = [1, 8]
// IR-NOT: dtc.all_reduce
// IR-NOT: dtc.mesh
// RUN: dtc-run %t/gpt-k4 --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/gpt-k4-dump
// RUN: %python %S/../Utils/compare_training.py %t/gpt-k4-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/gpt-dp2-k2 --lr 0.01 --weight-decay 0.01 --bucket-mb 0 --verify --mesh dp=2 --grad-accum 2
// RUN: %mpirun -np 2 dtc-run %t/gpt-dp2-k2 --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/gpt-dp2-k2-dump > %t/gpt-dp2-k2.log
// RUN: %python %S/../Utils/compare_training.py %t/gpt-dp2-k2-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: FileCheck %s --check-prefix=GPT-DP < %t/gpt-dp2-k2.log
// GPT-DP-COUNT-2: per step: {{[0-9.]+}} s, all_reduce 19 calls, 68488 bus bytes
// RUN: %python %S/../Utils/compare_report.py %t/gpt-dp2-k2/report.json %t/gpt-dp2-k2.log | FileCheck %s --check-prefix=AGREE
// RUN: dtc-compile %S/Inputs/tiny_llama/b4/model.onnx -o %t/llama-k2 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --grad-accum 2
// RUN: dtc-run %t/llama-k2 --batch %S/Inputs/tiny_llama/b4/batch --steps 3 --dump %t/llama-k2-dump
// RUN: %python %S/../Utils/compare_training.py %t/llama-k2-dump %S/Inputs/tiny_llama/b4/adamw %S/Inputs/tiny_llama/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/tiny_llama/b4/model.onnx -o %t/llama-dp2-k2 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --bucket-mb 0 --verify --mesh dp=2 --grad-accum 2
// RUN: %mpirun -np 2 dtc-run %t/llama-dp2-k2 --batch %S/Inputs/tiny_llama/b4/batch --steps 3 --dump %t/llama-dp2-k2-dump > %t/llama-dp2-k2.log
// RUN: %python %S/../Utils/compare_training.py %t/llama-dp2-k2-dump %S/Inputs/tiny_llama/b4/adamw %S/Inputs/tiny_llama/initial | FileCheck %s
// RUN: FileCheck %s --check-prefix=LLAMA-DP < %t/llama-dp2-k2.log
// LLAMA-DP-COUNT-2: per step: {{[0-9.]+}} s, all_reduce 22 calls, 82568 bus bytes
// With bf16 mixed precision the gradients reaching the parameters are f32
// (the casts' VJPs), so the microbatches accumulate in f32; against
// PyTorch's fp32 steps within the bf16 bound of docs/Training.md:
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/gpt-bf16-k2 --lr 0.01 --weight-decay 0.01 --precision bf16 --grad-accum 2
// RUN: dtc-run %t/gpt-bf16-k2 --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/gpt-bf16-k2-dump
// RUN: %python %S/../Utils/compare_training.py %t/gpt-bf16-k2-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial --loss-rtol 1.6e-2 --grad-rl2 0.1 --update-rl2 0.2 | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: 0 failed
// AGREE: 2 ranks, 0 failed
// Microbatches that do not divide the batch are refused by input name:
// RUN: not dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/bad --grad-accum 3 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: input 'ids' of type 'tensor<4x8xi64>': its batch (dimension 0) does not divide over 3 gradient accumulation shards
// RUN: not dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/bad --grad-accum 0 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: --grad-accum must be at least 1
