// dtc-fuse on whole training steps changes where values live, not what is
// computed: GPT-2's step, on one device, on dp=2 with small gradient
// buckets and on dp=2 x tp=2 with sequence parallelism and ZeRO-1 (four
// ranks under mpirun), and a Llama (GQA) step
// on tp=2 in bf16 with two microbatches, give bit-identical losses,
// gradients and parameters over three steps fused and unfused.
// RUN: rm -rf %t && mkdir -p %t
// RUN: dtc-compile %S/../../Integration/Inputs/hf5/gpt2-names/model.onnx -o %t/one --lr 0.01 2> /dev/null
// RUN: cp -r %t/one %t/one-fused
// RUN: dtc-opt --dtc-fuse %t/one/train_step.mlir -o %t/one-fused/train_step.mlir
// RUN: FileCheck %s < %t/one-fused/train_step.mlir
// RUN: dtc-run %t/one --batch %S/../../Integration/Inputs/hf5/gpt2-names/batch --steps 3 --dump %t/one/dump > /dev/null
// RUN: dtc-run %t/one-fused --batch %S/../../Integration/Inputs/hf5/gpt2-names/batch --steps 3 --dump %t/one-fused/dump > /dev/null
// RUN: diff -r %t/one/dump %t/one-fused/dump
// RUN: dtc-compile %S/../../Integration/Inputs/hf5/gpt2-names/model.onnx -o %t/mesh --lr 0.01 --mesh dp=2,tp=2 --sequence-parallel --zero 1 2> /dev/null
// RUN: cp -r %t/mesh %t/mesh-fused
// RUN: dtc-opt --dtc-fuse %t/mesh/train_step.mlir -o %t/mesh-fused/train_step.mlir
// RUN: %mpirun -np 4 dtc-run %t/mesh --batch %S/../../Integration/Inputs/hf5/gpt2-names/batch --steps 3 --dump %t/mesh/dump > /dev/null
// RUN: %mpirun -np 4 dtc-run %t/mesh-fused --batch %S/../../Integration/Inputs/hf5/gpt2-names/batch --steps 3 --dump %t/mesh-fused/dump > /dev/null
// RUN: diff -r %t/mesh/dump %t/mesh-fused/dump
// RUN: dtc-compile %S/../../Integration/Inputs/hf5/gpt2-names/model.onnx -o %t/dp --lr 0.01 --mesh dp=2 --bucket-mb 0.04 2> /dev/null
// RUN: cp -r %t/dp %t/dp-fused
// RUN: dtc-opt --dtc-fuse %t/dp/train_step.mlir -o %t/dp-fused/train_step.mlir
// RUN: FileCheck %s --check-prefix=DP < %t/dp-fused/train_step.mlir
// RUN: %mpirun -np 2 dtc-run %t/dp --batch %S/../../Integration/Inputs/hf5/gpt2-names/batch --steps 3 --dump %t/dp/dump > /dev/null
// RUN: %mpirun -np 2 dtc-run %t/dp-fused --batch %S/../../Integration/Inputs/hf5/gpt2-names/batch --steps 3 --dump %t/dp-fused/dump > /dev/null
// RUN: diff -r %t/dp/dump %t/dp-fused/dump
// RUN: dtc-compile %S/../../Integration/Inputs/hf/llama_gqa/model.onnx -o %t/bf16 --lr 0.01 --mesh tp=2 --precision bf16 --grad-accum 2 2> /dev/null
// RUN: cp -r %t/bf16 %t/bf16-fused
// RUN: dtc-opt --dtc-fuse %t/bf16/train_step.mlir -o %t/bf16-fused/train_step.mlir
// RUN: %mpirun -np 2 dtc-run %t/bf16 --batch %S/../../Integration/Inputs/hf/llama_gqa/batch --steps 3 --dump %t/bf16/dump > /dev/null
// RUN: %mpirun -np 2 dtc-run %t/bf16-fused --batch %S/../../Integration/Inputs/hf/llama_gqa/batch --steps 3 --dump %t/bf16-fused/dump > /dev/null
// RUN: diff -r %t/bf16/dump %t/bf16-fused/dump

// The forward's bias adds and GELU (tanh form) are loop groups; the loss's sums and the
// backward's row sums (the softmax's) lead row-reduction groups. The layer
// norms stay alone: the backward reads their inputs and statistics.
// CHECK: dtc.layer_norm
// CHECK: dtc.fusion loop
// CHECK: dtc.tanh
// CHECK: dtc.fusion row_reduction
// CHECK: dtc.reduce_sum {{.*}} dims = [2] : tensor<4x8x64xf32> -> tensor<4x8xf32>
// CHECK: dtc.fusion row_reduction
// CHECK: dtc.reduce_sum {{.*}} dims = [3] keep_dims : tensor<4x4x8x8xf32>
// AdamW's updates of the 28 parameters and their two moments, and of the
// step counter (once, also read by the bias corrections): one multi-tensor
// group, after the last gradient.
// CHECK: %{{.*}}:85 = dtc.fusion multi_tensor
// CHECK: dtc.add %{{.*}}, %{{.*}} : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK-NOT: (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK: dtc.yield
// CHECK-NOT: dtc.fusion
// CHECK: return

// On dp=2 with three gradient buckets and the head's own all-reduce, the
// updates of each bucket's parameters (three tensors each: the parameter
// and its two moments) form one multi-tensor group per all-reduce, which
// need not wait for the all-reduces after it. The step counter and the
// bias corrections, which read no gradient, stay out of them.
// DP: %[[B1:.*]] = dtc.all_reduce {{.*}} "data-parallel: gradient bucket 1 of 3
// DP: %[[B2:.*]] = dtc.all_reduce {{.*}} "data-parallel: gradient bucket 2 of 3
// DP: %[[B3:.*]] = dtc.all_reduce {{.*}} "data-parallel: gradient bucket 3 of 3
// DP: %[[HEAD:.*]] = dtc.all_reduce {{.*}} "data-parallel: gradient of m.lm_head.weight
// DP-DAG: %{{.*}}:30 = dtc.fusion multi_tensor(
// DP-DAG: %{{.*}}:18 = dtc.fusion multi_tensor(
// DP-DAG: %{{.*}}:33 = dtc.fusion multi_tensor(
// DP-DAG: %{{.*}}:3 = dtc.fusion multi_tensor(%{{[^,]*}}, %{{[^,]*}}, %[[HEAD]],
// DP-NOT: dtc.fusion multi_tensor
