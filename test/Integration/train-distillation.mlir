// Knowledge distillation: three AdamW steps of the GPT-2-style example on
// alpha * T^2 * KL(teacher/T || student/T) + (1 - alpha) * CE, with a frozen
// teacher of the same architecture run forward in the same step, match
// PyTorch (kl_div batchmean + cross_entropy; Inputs/make_training_reference.py).
// RUN: rm -rf %t && dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/step --lr 0.01 --weight-decay 0.01 --teacher %S/Inputs/tiny_transformer/teacher.onnx --temperature 2 --alpha 0.5 2>&1 | FileCheck %s --check-prefix=COMPILE
// COMPILE: dtc-compile: importing the teacher
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/step/manifest.json
// MANIFEST: "name": "teacher/wte.weight",
// MANIFEST-NEXT: "trainable": false,
// RUN: dtc-run %t/step --batch %S/Inputs/tiny_transformer/batch --steps 3 --dump %t/dump
// RUN: %python %S/../Utils/compare_training.py %t/dump %S/Inputs/tiny_transformer/distill %S/Inputs/tiny_transformer/initial | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: ok   step 3 loss
// CHECK: 0 failed
