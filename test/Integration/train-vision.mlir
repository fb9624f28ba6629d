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
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/vision/vit %t/vit 1 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/vision/vit %t/vit-dp2 2 --mesh dp=2 | FileCheck %s --check-prefixes=QUIET,CHECK
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/vision/vit %t/vit-tp2 2 --mesh tp=2 | FileCheck %s
// QUIET-NOT: warning
// CHECK: 0 failed
// CHECK: compiled vs PyTorch: {{.*}}0 failed
// CHECK: compiled vs reference: {{.*}}0 failed

// The running statistics are buffers: frozen parameters whose next values
// the step returns (the argument donated to that result).
// RUN: FileCheck %s --check-prefix=ABI < %t/resnet/train_step.mlir
// ABI: dtc.aliasing_output = {{[0-9]+}} : i64, dtc.param = "bn.running_mean", dtc.trainable = false
// Under dp, a batch norm's statistics over the split batch are all-reduced.
// RUN: FileCheck %s --check-prefix=SYNC < %t/resnet-dp2/train_step.mlir
// SYNC: dtc.all_reduce {{.*}} on @mesh axes = ["dp"] kind = sum
