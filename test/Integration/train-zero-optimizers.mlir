// ZeRO stage 3 (and stage 2's collectives under fp16) with optimizers
// and options other than plain AdamW, dp=2, against PyTorch.
// RUN: rm -rf %t && mkdir -p %t
//
// Stage 3 under other optimizers and their options: the update reads the
// shard wherever it reads the parameter -- SGD with momentum, AdamW
// without decay for biases and norms (clipping, warm-up + cosine; five
// steps), fp16's skipped-step select -- against PyTorch.
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-z3-sgd --optimizer sgd --lr 0.1 --momentum 0.9 --weight-decay 0.01 --verify --mesh dp=2 --zero 3
// RUN: %mpirun -np 2 dtc-run %t/gpt-z3-sgd --batch %S/Inputs/tiny_transformer/batch --steps 3 --dump %t/gpt-z3-sgd-dump
// RUN: %python %S/../Utils/compare_training.py %t/gpt-z3-sgd-dump %S/Inputs/tiny_transformer/sgd %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-z3-sched --lr 0.01 --weight-decay 0.01 --no-decay 'bias|ln' --clip-grad-norm 0.5 --schedule warmup-cosine --warmup-steps 2 --warmup-start-factor 0.25 --total-steps 5 --min-lr 1e-3 --verify --mesh dp=2 --zero 3
// RUN: %mpirun -np 2 dtc-run %t/gpt-z3-sched --batch %S/Inputs/tiny_transformer/batch --steps 5 --dump %t/gpt-z3-sched-dump
// RUN: %python %S/../Utils/compare_training.py %t/gpt-z3-sched-dump %S/Inputs/tiny_transformer/schedule %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-z3-fp16 --lr 0.01 --weight-decay 0.01 --precision fp16 --verify --mesh dp=2 --zero 3
// RUN: %mpirun -np 2 dtc-run %t/gpt-z3-fp16 --batch %S/Inputs/tiny_transformer/batch --steps 3 --dump %t/gpt-z3-fp16-dump > %t/gpt-z3-fp16.log
// fp16 unscales each gradient before the update and its overflow count
// reads it: the cut moves above the unscaling (dtc-sink-shards), so the
// sums are still reduce-scatters, bucketed (the loss scalars and the
// overflow counts: 2 all-reduces). Stage 2 per gradient: 17 calls.
// RUN: FileCheck %s --check-prefix=FP16-LOG < %t/gpt-z3-fp16.log
// FP16-LOG: rank 0 per step: {{[0-9.]+}} s, all_reduce 2 calls, 12 bus bytes, all_gather 8 calls, 63104 bus bytes, reduce_scatter 1 calls, 34240 bus bytes
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-z2-fp16 --precision fp16 --verify --mesh dp=2 --zero 2 --bucket-mb 0 2>&1 | FileCheck %s --check-prefix=FP16-Z2
// FP16-Z2: per rank per step: reduce_scatter 17 calls, 34240 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/gpt-z3-fp16-dump %S/Inputs/tiny_transformer/adamw %S/Inputs/tiny_transformer/initial --loss-rtol 2e-3 --grad-rl2 2.5e-2 --update-rl2 0.1 | FileCheck %s
//
// CHECK-NOT: FAIL
// CHECK: 0 failed
