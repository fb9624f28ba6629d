// Vision models (Inputs/vision/make_vision_models.py): a ResNet-style
// classifier exported in training mode (convolutions, batch norms on the
// batch's statistics, ReLU, max pool, global average pool, a linear head)
// and a ViT-style one (patch convolution, class token, position embedding,
// transformer blocks). Three AdamW steps on one device, dp=2 and (ViT)
// tp=2 match PyTorch's single-device run (loss 1e-5, gradients 1e-4,
// updates 1e-3), the batch norms' running statistics included: under dp
// their batch statistics are the whole batch's (SyncBatchNorm), so the
// running statistics after three steps are PyTorch's too.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/vision/resnet %t/resnet 1 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/vision/resnet %t/resnet-dp2 2 --mesh dp=2 | FileCheck %s --check-prefixes=QUIET,CHECK
// Convolutions split by channels (Inputs/vision/specs/resnet-channels.json):
// block1's first convolution by output channels (its batch norm's channels
// with it), the second by input channels, whose partial sums are
// all-reduced, as Megatron pairs a column- and a row-parallel linear.
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/vision/resnet %t/resnet-tp2 2 --mesh tp=2 --sharding-spec %S/Inputs/vision/specs/resnet-channels.json | FileCheck %s --check-prefixes=QUIET,CHECK
// RUN: FileCheck %s --check-prefix=TP-IR < %t/resnet-tp2/train_step.mlir
// TP-IR: %arg{{[0-9]+}}: tensor<4x8x3x3xf32> {dtc.aliasing_output = {{[0-9]+}} : i64, dtc.param = "block1.conv1.weight", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["tp"], [], [], []]>
// TP-IR: dtc.all_reduce {{.*}} on @mesh axes = ["tp"] kind = sum {reason = "tensor-parallel: 'dtc.reshape' (/block1/conv2/Conv) makes a partial sum that several ops read"}
// Without a spec no convolution gets a layout, and the compiler says so.
// RUN: dtc-compile %S/Inputs/vision/resnet/model.onnx -o %t/tp-none --mesh tp=2 --target reference 2>&1 | FileCheck %s --check-prefix=NO-LAYOUT
// NO-LAYOUT: warning: dtc-tensor-parallel: no parameter gets a layout over 'tp' (the Megatron matcher found no projections it knows): every rank computes the whole step; give layouts with --sharding-spec
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/vision/vit %t/vit 1 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/vision/vit %t/vit-dp2 2 --mesh dp=2 | FileCheck %s --check-prefixes=QUIET,CHECK
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/vision/vit %t/vit-tp2 2 --mesh tp=2 | FileCheck %s
// QUIET-NOT: warning
// CHECK: 0 failed
// CHECK: compiled vs PyTorch: {{.*}}0 failed
// CHECK: compiled vs reference: {{.*}}0 failed

// --batch-norm-stats per-rank: each dp rank's rows normalized by their own
// statistics, the running statistics rank 0's, as PyTorch's
// DistributedDataParallel without SyncBatchNorm trains (reference:
// Inputs/vision/resnet/adamw-per-rank-dp2). Only rank 0's statistics of C
// values per norm travel (an all-reduce), no activation-sized sums.
// RUN: dtc-compile %S/Inputs/vision/resnet/model.onnx -o %t/per-rank --lr 0.01 --weight-decay 0.01 --bucket-mb 0 --verify --mesh dp=2 --batch-norm-stats per-rank 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty
// RUN: %mpirun -np 2 dtc-run %t/per-rank --batch %S/Inputs/vision/resnet/batch --steps 3 --dump %t/per-rank/dump > %t/per-rank.log
// RUN: %python %S/../Utils/compare_training.py %t/per-rank/dump %S/Inputs/vision/resnet/adamw-per-rank-dp2 %S/Inputs/vision/resnet/initial | FileCheck %s --check-prefix=PER-RANK
// PER-RANK: ok   state  bn.running_mean
// PER-RANK: 0 failed
// RUN: FileCheck %s --check-prefix=PER-RANK-LOG < %t/per-rank.log
// PER-RANK-LOG: rank 0 per step: {{.*}}, all_reduce 34 calls, 21648 bus bytes
// A batch the groups do not divide is an error naming the node.
// RUN: not dtc-compile %S/Inputs/vision/resnet/model.onnx -o %t/bad --mesh dp=3 --batch-norm-stats per-rank 2>&1 | FileCheck %s --check-prefix=GROUPS
// GROUPS: error: BatchNormalization node '/bn/BatchNormalization': a batch of 4 does not split into 3 groups for per-rank batch statistics

// Under bf16 the batch norms compute in f32 (as dtc.layer_norm does, and
// PyTorch's batch norm on bf16 inputs): the per-rank program on dp=2 agrees
// with the single-device step within the mixed-precision bounds. (A bf16
// trajectory of this small ResNet is not compared with PyTorch's f32 one:
// three steps of bf16 move its convolutions' gradients 57-81% away from the
// f32 ones, PyTorch's autocast as much as dtc.)
// RUN: dtc-compile %S/Inputs/vision/resnet/model.onnx -o %t/bf16 --precision bf16 --mesh dp=2 --verify --target reference 2>&1 | FileCheck %s --check-prefix=BF16
// BF16: dtc-verify-partition: {{.*}}; worst relative error
// RUN: FileCheck %s --check-prefix=BF16-IR < %t/bf16/train_step.mlir
// BF16-IR: dtc.rsqrt {{.*}} {dtc.compute_in_f32} : tensor<1x8x1x1xf32>

// Checkpoints hold the running statistics: on dp=2 (compiled), saved at
// step 2 and resumed to step 4, every parameter and statistic is bit for
// bit the uninterrupted run's.
// RUN: %mpirun -np 2 dtc-run %t/resnet-dp2 --batch %S/Inputs/vision/resnet/batch --steps 4 --dump %t/ckpt-full > /dev/null
// RUN: %mpirun -np 2 dtc-run %t/resnet-dp2 --batch %S/Inputs/vision/resnet/batch --steps 2 --save %t/ckpt > /dev/null
// RUN: %mpirun -np 2 dtc-run %t/resnet-dp2 --batch %S/Inputs/vision/resnet/batch --steps 4 --resume %t/ckpt --dump %t/ckpt-resumed > /dev/null
// RUN: %python %S/../Utils/compare_resumed.py %t/ckpt-full %t/ckpt-resumed --from 2 --exact | FileCheck %s --check-prefix=RESUMED
// RESUMED: ok {{.*}}block1.bn1.running_mean
// RESUMED: 0 failed

// The running statistics are buffers: frozen parameters whose next values
// the step returns (the argument donated to that result).
// RUN: FileCheck %s --check-prefix=ABI < %t/resnet/train_step.mlir
// ABI: dtc.aliasing_output = {{[0-9]+}} : i64, dtc.param = "bn.running_mean", dtc.trainable = false
// Under dp, a batch norm's statistics over the split batch are all-reduced.
// RUN: FileCheck %s --check-prefix=SYNC < %t/resnet-dp2/train_step.mlir
// SYNC: dtc.all_reduce {{.*}} on @mesh axes = ["dp"] kind = sum
