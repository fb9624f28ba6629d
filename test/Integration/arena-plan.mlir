// The static arena (lib/Analysis/ArenaPlan.cpp) against the liveness lower
// bound, the most bytes live at once: within 10% on the layouts that are
// hardest for it (ZeRO-3's gathered parameters, sequence parallelism), and
// the compiled program's arena (its fused step's) against its own bound.
// RUN: rm -rf %t && mkdir -p %t
// RUN: dtc-compile %S/Inputs/hf5/gpt2-names/model.onnx -o %t/gpt2-zero3 --lr 0.01 --mesh dp=4 --zero 3 --target cpu 2> %t/gpt2.err
// RUN: FileCheck %s --check-prefix=REPORT < %t/gpt2.err
// RUN: dtc-compile %S/Inputs/hf5/phi3-defaults/model.onnx -o %t/phi3-zero3 --lr 0.01 --mesh dp=4 --zero 3 2> /dev/null
// RUN: dtc-compile %S/Inputs/hf5/falcon-defaults/model.onnx -o %t/falcon-sp --lr 0.01 --mesh dp=2,tp=2 --sequence-parallel --zero 1 2> /dev/null
// RUN: dtc-compile %S/Inputs/hf/llama_gqa/model.onnx -o %t/llama-bf16 --lr 0.01 --mesh tp=2 --precision bf16 --grad-accum 2 2> /dev/null
// RUN: %python %S/../Utils/check_arena.py %t/gpt2-zero3 %t/phi3-zero3 %t/falcon-sp %t/llama-bf16 | FileCheck %s
// REPORT: dtc-compile: per rank: one arena of {{[0-9]+}} B for the intermediate values ({{[0-9]+}} buffers; the most live at once, aligned to 64 B: {{[0-9]+}} B, +{{[0-9.]+}}%)
// REPORT: dtc-compile: compiled program: {{[1-9][0-9]*}} kernels, {{[1-9][0-9]*}} GEMMs, {{[1-9][0-9]*}} collectives ({{[0-9]+}} started asynchronously); one arena of {{[0-9]+}} B (the most live at once: {{[0-9]+}} B, +{{[0-9.]+}}%)
// CHECK: ok gpt2-zero3: arena
// CHECK: ok gpt2-zero3 (compiled): arena
// CHECK: ok phi3-zero3
// CHECK: ok falcon-sp
// CHECK: ok llama-bf16
