// Gradient bucketing (--bucket-mb, default 25 MiB): the gradients'
// all-reduces are packed, in the order the backward makes them, into
// buckets. The sums are the same, so the trajectory still matches
// PyTorch's, and the bus bytes are unchanged; only the calls drop.
// RUN: rm -rf %t && mkdir -p %t
//
// GPT-2 example, dp=2: 19 gradient all-reduces (train-dp.mlir, with
// --bucket-mb 0) become 1 bucket of every gradient (68480 bytes), plus the
// loss normalizer's 2 scalars packed in one call (dtc-fuse-scalar-
// reductions): 2 calls, the same 68488 bus bytes.
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt --lr 0.01 --weight-decay 0.01 --verify --mesh dp=2
// RUN: FileCheck %s --check-prefix=ONE < %t/gpt/report.json
// ONE: "reason": "data-parallel: gradient bucket 1 of 1 (68480 bytes): head.weight, ln_f.weight, ln_f.bias, block.out.bias, block.out.weight
// ONE-SAME: wte.weight"
// RUN: %mpirun -np 2 dtc-run %t/gpt --batch %S/Inputs/tiny_transformer/batch --steps 3 --dump %t/gpt-dump > %t/gpt.log
// RUN: FileCheck %s --check-prefix=GPT-LOG < %t/gpt.log
// GPT-LOG: rank 0 per step: {{[0-9.]+}} s, all_reduce 2 calls, 68488 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/gpt-dump %S/Inputs/tiny_transformer/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: %python %S/../Utils/compare_report.py %t/gpt/report.json %t/gpt.log | FileCheck %s --check-prefix=AGREE
//
// Buckets of 0.02 MiB (20971 bytes): 4 buckets, in backward order (the
// LM head first), and the embedding's gradient, made last and too big for
// the last bucket's room, alone: 5 + 1 calls.
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/small --lr 0.01 --weight-decay 0.01 --verify --mesh dp=2 --bucket-mb 0.02
// RUN: FileCheck %s --check-prefix=SMALL < %t/small/report.json
// SMALL: "reason": "data-parallel: gradient bucket 1 of 4 (8576 bytes): head.weight, ln_f.weight, ln_f.bias, block.out.bias"
// SMALL: "reason": "data-parallel: gradient bucket 4 of 4 (13952 bytes): block.qkv.bias, block.qkv.weight, block.ln1.weight, block.ln1.bias, wpe.weight"
// SMALL: "reason": "data-parallel: gradient of wte.weight (summed over the batch shards)"
// RUN: %mpirun -np 2 dtc-run %t/small --batch %S/Inputs/tiny_transformer/batch --steps 3 --dump %t/small-dump > %t/small.log
// RUN: FileCheck %s --check-prefix=SMALL-LOG < %t/small.log
// SMALL-LOG: rank 0 per step: {{[0-9.]+}} s, all_reduce 6 calls, 68488 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/small-dump %S/Inputs/tiny_transformer/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
//
// Llama example on dp=2 x tp=2 with sequence parallelism: the gradients'
// all-reduces -- 17 over dp, and 5 over dp and tp together (the norm
// weights, whose gradients are also summed over the tp ranks' tokens) --
// become two buckets; with the cross-entropy's 3 and the loss
// normalizer's 2 scalars in one: 6 all-reduces. Bus bytes: 3 x 32 + 2 x 4 + 2(3/4) x 640
// + 40960 = 42024.
// RUN: dtc-compile %S/../../examples/tiny_llama/model.onnx -o %t/llama --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --verify --mesh dp=2,tp=2 --sequence-parallel
// RUN: FileCheck %s --check-prefix=NESTED < %t/llama/report.json
// NESTED: "dp",
// NESTED-NEXT: "tp"
// NESTED-NEXT: ],
// NESTED-NEXT: "bus_bytes": 960,
// NESTED-NEXT: "kind": "all_reduce",
// NESTED-NEXT: "reason": "data-parallel: gradient bucket 1 of 2 (640 bytes): norm.weight,
// RUN: %mpirun -np 4 dtc-run %t/llama --batch %S/Inputs/tiny_llama/batch --steps 3 --dump %t/llama-dump > %t/llama.log
// RUN: FileCheck %s --check-prefix=LLAMA-LOG < %t/llama.log
// LLAMA-LOG: rank 0 per step: {{[0-9.]+}} s, all_reduce 6 calls, 42024 bus bytes, all_gather 14 calls, 7168 bus bytes, reduce_scatter 10 calls, 5120 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/llama-dump %S/Inputs/tiny_llama/adamw %S/Inputs/tiny_llama/initial | FileCheck %s
// RUN: %python %S/../Utils/compare_report.py %t/llama/report.json %t/llama.log | FileCheck %s --check-prefix=AGREE4
//
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/bad --verify --mesh dp=2 --bucket-mb -1 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: error: --bucket-mb must not be negative
//
// CHECK-NOT: FAIL
// CHECK: 0 failed
// AGREE-NOT: FAIL
// AGREE: 2 ranks, 0 failed
// AGREE4-NOT: FAIL
// AGREE4: 4 ranks, 0 failed
