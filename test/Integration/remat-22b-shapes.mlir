// Activation memory per layer of Korthikanti et al.'s 22B GPT (h 6144,
// a 64, s 2048, 48 layers, b 1; bench/gpt_shapes.py gpt-22b: weights that
// do not exist) compiled from shapes for tp=8 with sequence parallelism,
// bf16 and dropout: what each layer holds from its forward to its backward
// (report.json's saved_activation_bytes_per_transformer_unit) is the paper's
// 2sbh/t with full recomputation and at most its sbh(34/t + 5as/(ht))
// without and 34sbh/t with selective recomputation: exactly the count
// docs/Remat.md derives (dtc redraws dropout masks and recomputes the
// dropped probabilities instead of holding them; Utils/
// check_activation_formula.py).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/../../bench/gpt_shapes.py gpt-22b %t/model.onnx
// RUN: dtc-compile --shapes-only --precision bf16 --dropout --sequence-parallel --mesh tp=8 %t/model.onnx -o %t/none --remat none 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: remat none (none, 48 transformer units): {{.*}} 96 collectives issued again
// RUN: %python %S/../Utils/check_activation_formula.py %t/none/report.json none --s 2048 --b 1 --h 6144 --a 64 --t 8 | FileCheck %s
// RUN: dtc-compile --shapes-only --precision bf16 --dropout --sequence-parallel --mesh tp=8 %t/model.onnx -o %t/selective --remat selective 2> /dev/null
// RUN: %python %S/../Utils/check_activation_formula.py %t/selective/report.json selective --s 2048 --b 1 --h 6144 --a 64 --t 8 | FileCheck %s
// RUN: dtc-compile --shapes-only --precision bf16 --dropout --sequence-parallel --mesh tp=8 %t/model.onnx -o %t/full --remat full 2> /dev/null
// RUN: %python %S/../Utils/check_activation_formula.py %t/full/report.json full --s 2048 --b 1 --h 6144 --a 64 --t 8 | FileCheck %s
// CHECK: 48 layers
// CHECK-NEXT: ok
