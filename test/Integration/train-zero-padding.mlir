// ZeRO pads what dp does not divide. The fixture (Inputs/uneven, made by
// Inputs/make_training_reference.py) has parameters of 13, 6 and 5 rows:
// a parameter no dimension of which dp divides gets its state (and, at
// stage 3, its shard) padded with zero rows to a multiple of dp; its
// gradient is padded before the dp sum, which so stays a reduce-scatter.
// The padding never reaches a dump: three AdamW steps match PyTorch's
// single-device run, compared element for element at the true shapes.
//
// Psi = 203 parameters (812 bytes); padded, Psi' = 210 for dp=2 (fc.bias
// 5 -> 6, head.weight 13x5 -> 14x5, head.bias 13 -> 14; the others split
// along a dimension dp divides) and 264 for dp=4 (every parameter padded).
// Persistent bytes per rank are the paper's formulas with Psi' where a
// split is involved (Utils/check_zero_memory.py computes them from the
// PyTorch parameters' shapes): stage 1 4Psi + 4Psi' + 8Psi'/N (+ 8 for
// AdamW's step), stage 2 4Psi + 4Psi'/N + 8Psi'/N, stage 3 16Psi'/N.
// RUN: rm -rf %t && mkdir -p %t
// RUN: dtc-compile %S/Inputs/uneven/model.onnx -o %t/z1 --lr 0.01 --weight-decay 0.01 --verify --mesh dp=2 --bucket-mb 0 --zero 1 2> %t/z1.err
// RUN: FileCheck %s --check-prefix=REMARK < %t/z1.err
// REMARK-DAG: remark: ZeRO: padded the optimizer state of 'fc.bias' from 5 to 6 rows, a multiple of dp=2
// REMARK-DAG: remark: ZeRO: padded the optimizer state of 'head.weight' from 13 to 14 rows, a multiple of dp=2
// REMARK-DAG: remark: ZeRO: padded the optimizer state of 'head.bias' from 13 to 14 rows, a multiple of dp=2
// RUN: %python %S/../Utils/check_zero_memory.py %t/z1/report.json %S/Inputs/uneven/initial --dp 2 --stage 1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=Z1 < %t/z1/report.json
// Z1: "gradients": 840,
// Z1-NEXT: "master_weights": 0,
// Z1-NEXT: "optimizer_state": 848,
// Z1-NEXT: "parameters": 812
// The gradient's zero rows are appended before the sum over dp:
// RUN: FileCheck %s --check-prefix=IR < %t/z1/train_step.mlir
// IR: tensor<7xf32> {dtc.grad = "head.bias", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["dp"]]>, dtc.unpadded_rows = 13 : i64}
// IR: %[[PAD:.*]] = dtc.concat %{{.*}}, %{{.*}} dim = 0 {dtc.padding} : (tensor<13xf32>, tensor<1xf32>) -> tensor<14xf32>
// IR: dtc.reduce_scatter %[[PAD]] on @mesh axes = ["dp"] dim = 0 {{.*}} : tensor<14xf32> -> tensor<7xf32>
// RUN: %mpirun -np 2 dtc-run %t/z1 --batch %S/Inputs/uneven/batch --steps 3 --dump %t/z1-dump > %t/z1.log
// RUN: %python %S/../Utils/compare_training.py %t/z1-dump %S/Inputs/uneven/adamw %S/Inputs/uneven/initial | FileCheck %s
// RUN: %python %S/../Utils/compare_report.py %t/z1/report.json %t/z1.log | FileCheck %s --check-prefix=AGREE
// AGREE: {{[0-9]+}} ranks, 0 failed
// (The reference executor measures the peak the plan predicts.)
// RUN: %mpirun -np 2 dtc-run --engine reference %t/z1 --batch %S/Inputs/uneven/batch --steps 1 > %t/z1.reference.log
// RUN: cat %t/z1/report.json %t/z1.reference.log | FileCheck %s --check-prefix=PEAK
// PEAK: "activation_peak": [[PEAK:[0-9]+]]
// PEAK: rank 0 peak intermediate memory: [[PEAK]] B (planned [[PEAK]] B)
//
// RUN: dtc-compile %S/Inputs/uneven/model.onnx -o %t/z2 --lr 0.01 --weight-decay 0.01 --verify --mesh dp=2 --bucket-mb 0 --zero 2
// RUN: %python %S/../Utils/check_zero_memory.py %t/z2/report.json %S/Inputs/uneven/initial --dp 2 --stage 2 | FileCheck %s
// RUN: FileCheck %s --check-prefix=Z2 < %t/z2/report.json
// Z2: "gradients": 420,
// Z2-NEXT: "master_weights": 0,
// Z2-NEXT: "optimizer_state": 848,
// Z2-NEXT: "parameters": 812
// RUN: %mpirun -np 2 dtc-run %t/z2 --batch %S/Inputs/uneven/batch --steps 3 --dump %t/z2-dump
// RUN: %python %S/../Utils/compare_training.py %t/z2-dump %S/Inputs/uneven/adamw %S/Inputs/uneven/initial | FileCheck %s
//
// Stage 3 keeps the padded shard (its true row count recorded for dtc-run,
// which pads the initial value and strips the dumps) and uses the gathered
// whole's first rows.
// RUN: dtc-compile %S/Inputs/uneven/model.onnx -o %t/z3 --lr 0.01 --weight-decay 0.01 --verify --mesh dp=4 --bucket-mb 0 --zero 3
// RUN: %python %S/../Utils/check_zero_memory.py %t/z3/report.json %S/Inputs/uneven/initial --dp 4 --stage 3 | FileCheck %s
// RUN: FileCheck %s --check-prefix=Z3 < %t/z3/report.json
// Z3: "gradients": 264,
// Z3-NEXT: "master_weights": 0,
// Z3-NEXT: "optimizer_state": 536,
// Z3-NEXT: "parameters": 264
// RUN: FileCheck %s --check-prefix=Z3-IR < %t/z3/train_step.mlir
// Z3-IR: tensor<2xf32> {dtc.aliasing_output = {{[0-9]+}} : i64, dtc.param = "fc.bias", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["dp"]]>, dtc.unit = "fc", dtc.unpadded_rows = 5 : i64
// Z3-IR: %[[G:.*]] = dtc.all_gather %arg5 on @mesh axes = ["dp"] dim = 0 {dtc.gather_phase = "forward", {{.*}}} : tensor<2xf32> -> tensor<8xf32>
// Z3-IR-NEXT: dtc.slice %[[G]] {{.*}} : tensor<8xf32> -> tensor<5xf32>
// RUN: %mpirun -np 4 dtc-run %t/z3 --batch %S/Inputs/uneven/batch --steps 3 --dump %t/z3-dump > %t/z3.log
// RUN: %python %S/../Utils/compare_training.py %t/z3-dump %S/Inputs/uneven/adamw %S/Inputs/uneven/initial | FileCheck %s
// RUN: %python %S/../Utils/compare_report.py %t/z3/report.json %t/z3.log | FileCheck %s --check-prefix=AGREE
// (The reference executor measures the peak the plan predicts.)
// RUN: %mpirun -np 4 dtc-run --engine reference %t/z3 --batch %S/Inputs/uneven/batch --steps 1 > %t/z3.reference.log
// RUN: cat %t/z3/report.json %t/z3.reference.log | FileCheck %s --check-prefix=PEAK
//
// With buckets (default 25 MiB), on dp=2 x tp=2 (the vocabulary padded for
// tp as well), and stage 2 with two microbatches: each microbatch's
// padded gradient is reduce-scattered (7 parameters x 2 = 14 calls).
// RUN: dtc-compile %S/Inputs/uneven/model.onnx -o %t/z3b --lr 0.01 --weight-decay 0.01 --verify --mesh dp=4 --zero 3
// RUN: %mpirun -np 4 dtc-run %t/z3b --batch %S/Inputs/uneven/batch --steps 3 --dump %t/z3b-dump
// RUN: %python %S/../Utils/compare_training.py %t/z3b-dump %S/Inputs/uneven/adamw %S/Inputs/uneven/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/uneven/model.onnx -o %t/tp --lr 0.01 --weight-decay 0.01 --verify --mesh dp=2,tp=2 --bucket-mb 0 --zero 3
// RUN: %mpirun -np 4 dtc-run %t/tp --batch %S/Inputs/uneven/batch --steps 3 --dump %t/tp-dump
// RUN: %python %S/../Utils/compare_training.py %t/tp-dump %S/Inputs/uneven/adamw %S/Inputs/uneven/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/uneven/model.onnx -o %t/acc --lr 0.01 --weight-decay 0.01 --verify --mesh dp=2 --bucket-mb 0 --zero 2 --grad-accum 2
// RUN: %mpirun -np 2 dtc-run %t/acc --batch %S/Inputs/uneven/batch --steps 3 --dump %t/acc-dump > %t/acc.log
// RUN: FileCheck %s --check-prefix=ACC < %t/acc.log
// ACC: rank 0 per step: {{[0-9.]+}} s, all_reduce 2 calls, 8 bus bytes, all_gather 7 calls, 420 bus bytes, reduce_scatter 14 calls, 840 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/acc-dump %S/Inputs/uneven/adamw %S/Inputs/uneven/initial | FileCheck %s
//
// bf16 (the paper's split, padded: 2Psi + 2Psi' + 12Psi'/4 + 8 at stage 1,
// the master weights padded like the moments and cut by dtc-run from the
// parameter's padded value), with buckets: the 7 reduce-scatters and the 7
// all-gathers of the padded parameters become one each. Against the
// single-device bf16 run, as in train-zero-bf16.mlir.
// RUN: dtc-compile %S/Inputs/uneven/model.onnx -o %t/bf16 --lr 0.01 --weight-decay 0.01 --precision bf16
// RUN: dtc-run %t/bf16 --batch %S/Inputs/uneven/batch --steps 3 --dump %t/bf16-dump
// RUN: dtc-compile %S/Inputs/uneven/model.onnx -o %t/bf16-z1 --lr 0.01 --weight-decay 0.01 --precision bf16 --verify --mesh dp=4 --zero 1
// RUN: %python %S/../Utils/check_zero_memory.py %t/bf16-z1/report.json %S/Inputs/uneven/initial --dp 4 --stage 1 --precision bf16 | FileCheck %s
// RUN: FileCheck %s --check-prefix=BF16 < %t/bf16-z1/report.json
// BF16: "gradients": 528,
// BF16-NEXT: "master_weights": 264,
// BF16-NEXT: "optimizer_state": 536,
// BF16-NEXT: "parameters": 406
// RUN: %mpirun -np 4 dtc-run %t/bf16-z1 --batch %S/Inputs/uneven/batch --steps 3 --dump %t/bf16-z1-dump > %t/bf16-z1.log
// RUN: FileCheck %s --check-prefix=BF16-LOG < %t/bf16-z1.log
// BF16-LOG: rank 0 per step: {{[0-9.]+}} s, all_reduce 1 calls, 12 bus bytes, all_gather 1 calls, 396 bus bytes, reduce_scatter 1 calls, 396 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/bf16-z1-dump %t/bf16-dump %S/Inputs/uneven/initial --loss-rtol 1.6e-2 --grad-rl2 0.1 --update-rl2 0.2 --mask-from %S/Inputs/uneven/adamw | FileCheck %s
//
// fp16 (its overflow count reads the padded, unscaled gradient shards),
// stage 2 on dp=4, against PyTorch within the fp16 bound of
// docs/Training.md:
// RUN: dtc-compile %S/Inputs/uneven/model.onnx -o %t/fp16 --lr 0.01 --weight-decay 0.01 --precision fp16 --verify --mesh dp=4 --zero 2
// RUN: %mpirun -np 4 dtc-run %t/fp16 --batch %S/Inputs/uneven/batch --steps 3 --dump %t/fp16-dump
// RUN: %python %S/../Utils/compare_training.py %t/fp16-dump %S/Inputs/uneven/adamw %S/Inputs/uneven/initial --loss-rtol 2e-3 --grad-rl2 2.5e-2 --update-rl2 0.1 | FileCheck %s
//
// Gradient clipping sums the squares of the padded shards: the same
// trajectory as the single-device run with the same flags. The 7
// parameters' sums of squares (one all-reduce each) and the loss
// normalizer's 2 scalars go in two calls (dtc-fuse-scalar-reductions).
// RUN: dtc-compile %S/Inputs/uneven/model.onnx -o %t/clip1 --lr 0.01 --weight-decay 0.01 --clip-grad-norm 0.05
// RUN: dtc-run %t/clip1 --batch %S/Inputs/uneven/batch --steps 3 --dump %t/clip1-dump
// RUN: dtc-compile %S/Inputs/uneven/model.onnx -o %t/clip4 --lr 0.01 --weight-decay 0.01 --clip-grad-norm 0.05 --verify --mesh dp=4 --zero 2
// RUN: %mpirun -np 4 dtc-run %t/clip4 --batch %S/Inputs/uneven/batch --steps 3 --dump %t/clip4-dump > %t/clip4.log
// RUN: FileCheck %s --check-prefix=CLIP-LOG < %t/clip4.log
// CLIP-LOG: rank 0 per step: {{[0-9.]+}} s, all_reduce 2 calls, 54 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/clip4-dump %t/clip1-dump %S/Inputs/uneven/initial | FileCheck %s
//
// CHECK-NOT: FAIL
// CHECK: 0 failed
