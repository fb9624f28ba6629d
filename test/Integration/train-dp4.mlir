// dp in {1, 2, 4} on the batch-4 exports of both examples
// (Inputs/<model>/b4, from Inputs/make_training_reference.py): three AdamW
// steps match PyTorch's single-device run on the whole batch every time,
// and each rank's all-reduce bus bytes are 2(N-1)/N of the gradient bytes
// plus two loss scalars (GPT-2 example 4 * 17122 B, Llama 4 * 20642 B):
// N = 2 gives 68488 and 82568, N = 4 gives 102732 and 123852.
// RUN: rm -rf %t
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/gpt1 --lr 0.01 --weight-decay 0.01
// RUN: dtc-run %t/gpt1 --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/gpt1-dump
// RUN: %python %S/../Utils/compare_training.py %t/gpt1-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/gpt2 --lr 0.01 --weight-decay 0.01 --bucket-mb 0 --verify --mesh dp=2
// RUN: %mpirun -np 2 dtc-run %t/gpt2 --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/gpt2-dump > %t/gpt2.log
// RUN: %python %S/../Utils/compare_training.py %t/gpt2-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: FileCheck %s --check-prefix=GPT2 < %t/gpt2.log
// GPT2-COUNT-2: per step: {{[0-9.]+}} s, all_reduce 19 calls, 68488 bus bytes
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/gpt4 --lr 0.01 --weight-decay 0.01 --bucket-mb 0 --verify --mesh dp=4
// RUN: %mpirun -np 4 dtc-run %t/gpt4 --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/gpt4-dump > %t/gpt4.log
// RUN: %python %S/../Utils/compare_training.py %t/gpt4-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: FileCheck %s --check-prefix=GPT4 < %t/gpt4.log
// GPT4-COUNT-4: per step: {{[0-9.]+}} s, all_reduce 19 calls, 102732 bus bytes
// RUN: %python %S/../Utils/compare_report.py %t/gpt4/report.json %t/gpt4.log | FileCheck %s --check-prefix=AGREE4
// RUN: dtc-compile %S/Inputs/tiny_llama/b4/model.onnx -o %t/llama1 --lr 0.01 --weight-decay 0.01 --freeze '^rope_'
// RUN: dtc-run %t/llama1 --batch %S/Inputs/tiny_llama/b4/batch --steps 3 --dump %t/llama1-dump
// RUN: %python %S/../Utils/compare_training.py %t/llama1-dump %S/Inputs/tiny_llama/b4/adamw %S/Inputs/tiny_llama/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/tiny_llama/b4/model.onnx -o %t/llama2 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --bucket-mb 0 --verify --mesh dp=2
// RUN: %mpirun -np 2 dtc-run %t/llama2 --batch %S/Inputs/tiny_llama/b4/batch --steps 3 --dump %t/llama2-dump > %t/llama2.log
// RUN: %python %S/../Utils/compare_training.py %t/llama2-dump %S/Inputs/tiny_llama/b4/adamw %S/Inputs/tiny_llama/initial | FileCheck %s
// RUN: FileCheck %s --check-prefix=LLAMA2 < %t/llama2.log
// LLAMA2-COUNT-2: per step: {{[0-9.]+}} s, all_reduce 22 calls, 82568 bus bytes
// RUN: dtc-compile %S/Inputs/tiny_llama/b4/model.onnx -o %t/llama4 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --bucket-mb 0 --verify --mesh dp=4
// RUN: %mpirun -np 4 dtc-run %t/llama4 --batch %S/Inputs/tiny_llama/b4/batch --steps 3 --dump %t/llama4-dump > %t/llama4.log
// RUN: %python %S/../Utils/compare_training.py %t/llama4-dump %S/Inputs/tiny_llama/b4/adamw %S/Inputs/tiny_llama/initial | FileCheck %s
// RUN: FileCheck %s --check-prefix=LLAMA4 < %t/llama4.log
// LLAMA4-COUNT-4: per step: {{[0-9.]+}} s, all_reduce 22 calls, 123852 bus bytes
// RUN: %python %S/../Utils/compare_report.py %t/llama4/report.json %t/llama4.log | FileCheck %s --check-prefix=AGREE4
// CHECK-NOT: FAIL
// CHECK: 0 failed
// AGREE4-NOT: FAIL
// AGREE4: 4 ranks, 0 failed
// A world that does not match the mesh is refused:
// RUN: not %mpirun -np 2 dtc-run %t/gpt4 --batch %S/Inputs/tiny_transformer/b4/batch --steps 1 2>&1 | FileCheck %s --check-prefix=WORLD
// WORLD: error: the mesh dp=4 has 4 devices but 2 ranks were launched (mpirun -np 4)
