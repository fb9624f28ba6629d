// ZeRO pads along the first dimension no other axis splits. Today's
// exporters store a linear layer's weight [out, in]; tensor parallelism
// splits a column-parallel weight's first dimension, so on dp=3 x tp=2 the
// Llama-style model's q/k/v, gate/up and head weights ([32, 32] and [64,
// 32] wholes, 16 and 32 rows per tp rank) divide over dp in neither
// dimension: their state (and at stage 3 their shards) is padded along
// the second, 32 -> 33 columns, where ZeRO used to keep their whole state
// on every rank. The row-parallel and norm weights pad their first
// dimension as before.
//
// The reference is the single-device run of the same step on the same
// 6-row batch: three AdamW steps on dp=3 x tp=2 (6 ranks) with ZeRO-1 and
// ZeRO-3 match its losses, gradients and updates (the padding never
// reaches a dump), and a ZeRO-3 checkpoint taken on the 6 ranks after two
// steps resumes on one device for the third (the padded columns stripped
// when the checkpoint is resharded).
// RUN: rm -rf %t && mkdir -p %t/batch
// RUN: %python -c "import numpy as np; r = np.random.default_rng(0); ids = r.integers(0, 64, (6, 8)); np.save('%t/batch/ids.npy', ids); np.save('%t/batch/labels.npy', np.roll(ids, -1, 1))"
// RUN: dtc-compile %S/Inputs/hf5/llama-names_dynamic/model.onnx --input-shape ids=6x8 -o %t/one --lr 0.01 --weight-decay 0.01
// RUN: dtc-run %t/one --batch %t/batch --steps 3 --dump %t/one-dump > /dev/null
//
// RUN: dtc-compile %S/Inputs/hf5/llama-names_dynamic/model.onnx --input-shape ids=6x8 -o %t/z1 --lr 0.01 --weight-decay 0.01 --mesh dp=3,tp=2 --zero 1 --verify 2> %t/z1.err
// RUN: FileCheck %s --check-prefix=REMARK < %t/z1.err
// REMARK-DAG: remark: ZeRO: padded the optimizer state of 'm.model.layers.0.self_attn.q_proj.weight' along dimension 1 from 32 to 33, a multiple of dp=3
// REMARK-DAG: remark: ZeRO: padded the optimizer state of 'm.lm_head.weight' along dimension 1 from 32 to 33, a multiple of dp=3
// REMARK-DAG: remark: ZeRO: padded the optimizer state of 'm.model.layers.0.self_attn.o_proj.weight' from 32 to 33 rows, a multiple of dp=3
// REMARK-DAG: dtc-verify-partition: {{.*}} on 6 simulated ranks (dp=3,tp=2)
// REMARK-NOT: stays whole
// The state of a column-parallel weight: its tp rows, 11 of the 33
// (padded) columns, the true count recorded for the runtime.
// RUN: FileCheck %s --check-prefix=IR < %t/z1/train_step.mlir
// IR: tensor<16x11xf32> {{{.*}}dtc.padded_dim = 1 : i64, dtc.sharding = #dtc.sharding<@mesh, {{\[}}["tp"], ["dp"]]>, dtc.state = #dtc.state<exp_avg of "m.model.layers.0.self_attn.q_proj.weight">, dtc.unpadded_rows = 32 : i64}
// RUN: %mpirun -np 6 dtc-run %t/z1 --batch %t/batch --steps 3 --dump %t/z1-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/z1-dump %t/one-dump %S/Inputs/hf5/llama-names_dynamic/initial | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: 0 failed
//
// RUN: dtc-compile %S/Inputs/hf5/llama-names_dynamic/model.onnx --input-shape ids=6x8 -o %t/z3 --lr 0.01 --weight-decay 0.01 --mesh dp=3,tp=2 --zero 3 --verify 2> /dev/null
// RUN: %mpirun -np 6 dtc-run %t/z3 --batch %t/batch --steps 3 --dump %t/z3-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/z3-dump %t/one-dump %S/Inputs/hf5/llama-names_dynamic/initial | FileCheck %s
// RUN: %mpirun -np 6 dtc-run %t/z3 --batch %t/batch --steps 2 --save %t/ckpt > /dev/null
// RUN: dtc-run %t/one --batch %t/batch --steps 3 --resume %t/ckpt --dump %t/resumed > /dev/null
// RUN: %python %S/../Utils/compare_resumed.py %t/one-dump %t/resumed --from 2 --rtol 1e-5 | FileCheck %s
