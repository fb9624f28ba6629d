// A Llama-3-70B-shaped graph (80 layers, d 8192, 64/8 heads, FFN 28672,
// vocabulary 128256, sequence 4096, batch 16; weights that do not exist)
// compiles for dp=16,tp=8 with ZeRO-1, sequence parallelism and bf16, and its
// step stores no constant above 4,096 elements: compile-time folding keeps
// the causal mask, the rotary tables and the loss's seeds as ops or splats
// (how fast it compiles is bench/compile_scaling.py's to measure).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/../../bench/llama_shapes.py llama3-70b %t/model.onnx --batch 16
// RUN: dtc-compile --shapes-only --precision bf16 --zero 1 --sequence-parallel --mesh dp=16,tp=8 %t/model.onnx -o %t/out 2>&1 | FileCheck %s
// CHECK: dtc-compile: per rank: parameters 17640734720 B
// CHECK: dtc-compile: wrote
// RUN: %python %S/../Utils/check_no_large_constants.py %t/out/train_step.mlir
//
// And with pipeline stages on 1,024 ranks (pp=8, 8 microbatches of a batch
// of 128): each microbatch's program is unrolled eight times, and a pp
// rank's share of it is some 27,000 buffers, whose arena is planned in
// allocation order (the general placement is quadratic in them).
// RUN: %python %S/../../bench/llama_shapes.py llama3-70b %t/model128.onnx --batch 128
// RUN: dtc-compile --shapes-only --precision bf16 --zero 1 --sequence-parallel --mesh pp=8,dp=16,tp=8 --microbatches 8 %t/model128.onnx -o %t/pp 2>&1 | FileCheck %s --check-prefix=PP
// PP: dtc-compile: per rank: one arena of {{[0-9]+}} B for the intermediate values ({{[1-9][0-9][0-9][0-9][0-9]+}} buffers
// PP: dtc-compile: pipeline 1f1b over pp=8 (8 stages of {{([0-9]+,){7}[0-9]+}} transformer layers), 8 microbatches
//
// The check fails on a step that does hold one: a 128x128 mask folded with
// the old limit of 2^20 elements.
// RUN: dtc-opt %S/../Transforms/fold-constants.mlir --split-input-file --dtc-fold-constants=max-elements=1048576 -o %t/folded.mlir
// RUN: not %python %S/../Utils/check_no_large_constants.py %t/folded.mlir | FileCheck %s --check-prefix=LARGE
// LARGE: a constant of 16384 elements (tensor<128x128xf32>), above 4096
// LARGE: 1 above 4096 elements
