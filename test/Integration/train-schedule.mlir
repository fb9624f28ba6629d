// Five AdamW steps with no weight decay for biases and norms (--no-decay),
// global-norm clipping (--clip-grad-norm, as clip_grad_norm_) and a warm-up +
// cosine schedule (as SequentialLR of LinearLR and CosineAnnealingLR) match
// PyTorch (Inputs/make_training_reference.py); the dumped gradients are
// those before clipping.
// RUN: rm -rf %t && dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/step --lr 0.01 --weight-decay 0.01 --no-decay 'bias|ln' --clip-grad-norm 0.5 --schedule warmup-cosine --warmup-steps 2 --warmup-start-factor 0.25 --total-steps 5 --min-lr 1e-3
// RUN: dtc-run %t/step --batch %S/Inputs/tiny_transformer/batch --steps 5 --dump %t/dump
// RUN: %python %S/../Utils/compare_training.py %t/dump %S/Inputs/tiny_transformer/schedule %S/Inputs/tiny_transformer/initial | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: ok   step 5 loss
// CHECK: 0 failed
