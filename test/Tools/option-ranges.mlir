// Every training option out of its range stops dtc-compile with one line
// naming the option, its value and the range (no step is written).

// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t --lr nan 2>&1 | FileCheck %s --check-prefix=LR_NAN
// LR_NAN: error: option 'lr' is nan: it must be finite and at least 0
// LR_NAN-NOT: dtc-compile: wrote
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t --lr -5 2>&1 | FileCheck %s --check-prefix=LR_NEG
// LR_NEG: error: option 'lr' is -5: it must be finite and at least 0
// LR_NEG-NOT: dtc-compile: wrote
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t --beta1 3 2>&1 | FileCheck %s --check-prefix=BETA1
// BETA1: error: option 'beta1' is 3: it must be in [0, 1)
// BETA1-NOT: dtc-compile: wrote
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t --beta2 1 2>&1 | FileCheck %s --check-prefix=BETA2
// BETA2: error: option 'beta2' is 1: it must be in [0, 1)
// BETA2-NOT: dtc-compile: wrote
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t --eps 0 2>&1 | FileCheck %s --check-prefix=EPS
// EPS: error: option 'eps' is 0: it must be finite and above 0
// EPS-NOT: dtc-compile: wrote
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t --weight-decay -1 2>&1 | FileCheck %s --check-prefix=WD
// WD: error: option 'weight-decay' is -1: it must be finite and at least 0
// WD-NOT: dtc-compile: wrote
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t --optimizer sgd --momentum -0.5 2>&1 | FileCheck %s --check-prefix=MOMENTUM
// MOMENTUM: error: option 'momentum' is -0.5: it must be finite and at least 0
// MOMENTUM-NOT: dtc-compile: wrote
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t --clip-grad-norm inf 2>&1 | FileCheck %s --check-prefix=CLIP
// CLIP: error: option 'clip-grad-norm' is inf: it must be finite and at least 0
// CLIP-NOT: dtc-compile: wrote
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t --warmup-start-factor 0 2>&1 | FileCheck %s --check-prefix=START
// START: error: option 'warmup-start-factor' is 0: it must be in (0, 1]
// START-NOT: dtc-compile: wrote
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t --schedule warmup-cosine --min-lr 1 2>&1 | FileCheck %s --check-prefix=MINLR
// MINLR: error: option 'min-lr' is 1: it must be in [0, 0.001]
// MINLR-NOT: dtc-compile: wrote
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t --warmup-steps -1 2>&1 | FileCheck %s --check-prefix=WARMUP
// WARMUP: error: option 'warmup-steps' is -1: it must be at least 0
// WARMUP-NOT: dtc-compile: wrote
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t --total-steps 0 2>&1 | FileCheck %s --check-prefix=TOTAL
// TOTAL: error: option 'total-steps' is 0: it must be at least 1
// TOTAL-NOT: dtc-compile: wrote
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t --schedule warmup-cosine --warmup-steps 10 --total-steps 5 2>&1 | FileCheck %s --check-prefix=WARMUP_TOTAL
// WARMUP_TOTAL: error: option 'warmup-steps' (10) must be at most 'total-steps' (5)
// WARMUP_TOTAL-NOT: dtc-compile: wrote
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t --precision fp16 --init-scale 0 2>&1 | FileCheck %s --check-prefix=SCALE
// SCALE: error: option 'init-scale' is 0: it must be in (0, 3.4028234663852886e+38]
// SCALE-NOT: dtc-compile: wrote
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t --precision fp16 --growth-interval 0 2>&1 | FileCheck %s --check-prefix=GROWTH
// GROWTH: error: option 'growth-interval' is 0: it must be at least 1
// GROWTH-NOT: dtc-compile: wrote
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t --loss distillation --teacher %S/../../examples/tiny_transformer/model.onnx --temperature 0 2>&1 | FileCheck %s --check-prefix=TEMPERATURE
// TEMPERATURE: error: option 'temperature' is 0: it must be finite and above 0
// TEMPERATURE-NOT: dtc-compile: wrote
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t --loss distillation --teacher %S/../../examples/tiny_transformer/model.onnx --alpha 2 2>&1 | FileCheck %s --check-prefix=ALPHA
// ALPHA: error: option 'alpha' is 2: it must be in [0, 1]
// ALPHA-NOT: dtc-compile: wrote
