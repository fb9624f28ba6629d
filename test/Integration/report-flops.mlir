// FLOPs per step in report.json against exact hand counts (lib/Analysis,
// docs/CostModel.md). Utils/check_flops.py reads B, s, l, h, V (and the
// Llama example's h_kv and F) from the ONNX model, checks its projections
// are exactly the family's, and compares the report's matmul FLOPs per rank
// with (1) 2*m*n*k summed over the matmuls of train_step.mlir, (2) the
// closed form, 72 B s l h^2 (1 + s/(6h) + V/(12 l h)) for the GPT-2 example
// (Narayanan et al. 2021) and its GQA/SwiGLU counterpart for the Llama
// example, and (3) the phases (forward a third, backward two thirds).
// Every matmul's input and weight gradients are computed: the token
// embeddings are trained, so the gradient reaches the first block's input.
// RUN: rm -rf %t && mkdir -p %t
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt 2> %t/gpt.err
// RUN: %python %S/../Utils/check_flops.py %t/gpt %S/../../examples/tiny_transformer/model.onnx --family gpt2 | FileCheck %s --check-prefixes=CHECK,GPT
// RUN: dtc-compile %S/../../examples/tiny_llama/model.onnx -o %t/llama --freeze '^rope_' 2> %t/llama.err
// RUN: %python %S/../Utils/check_flops.py %t/llama %S/../../examples/tiny_llama/model.onnx --family llama | FileCheck %s --check-prefixes=CHECK,LLAMA
// GPT: model: B 2, s 8, h 32, V 64, l 1; dp 1, tp 1
// LLAMA: model: B 2, s 8, h 32, V 64, h_kv 16, F 64, l 2; dp 1, tp 1
// CHECK: ok matmul FLOPs = sum of 2mnk over the {{[0-9]+}} matmuls of the step
// GPT-NEXT: ok matmul FLOPs = gpt2 formula: report 1425408, expected 1425408
// LLAMA-NEXT: ok matmul FLOPs = llama formula: report 2064384, expected 2064384
// CHECK-NOT: FAIL
// CHECK: 0 failed
//
// A frozen LM head gets no weight gradient: the step legitimately skips
// its 2*B*s*h*V = 65536 FLOPs, and the check fails by exactly that much.
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-frozen-head --freeze '^head' 2>/dev/null
// RUN: not %python %S/../Utils/check_flops.py %t/gpt-frozen-head %S/../../examples/tiny_transformer/model.onnx --family gpt2 | FileCheck %s --check-prefix=FROZEN
// FROZEN: ok matmul FLOPs = sum of 2mnk over the 20 matmuls of the step: report 1359872, expected 1359872
// FROZEN: FAIL matmul FLOPs = gpt2 formula: report 1359872, expected 1425408
// FROZEN: ok forward matmul FLOPs = 1/3: report 475136, expected 475136
// FROZEN: FAIL backward matmul FLOPs = 2/3: report 884736, expected 950272
//
// 32 layers of the Llama shape (compiled from shapes alone): the formula's
// terms in l and the LM head's, which is not per layer, apart.
// RUN: dtc-compile --shapes-only %S/../Import/ONNX/Inputs/scaling/llama_32.onnx -o %t/llama-32 --freeze '^rope_' 2>/dev/null
// RUN: %python %S/../Utils/check_flops.py %t/llama-32 %S/../Import/ONNX/Inputs/scaling/llama_32.onnx --family llama | FileCheck %s --check-prefix=L32
// L32: model: B 2, s 8, h 32, V 64, h_kv 16, F 64, l 32; dp 1, tp 1
// L32: ok matmul FLOPs = llama formula: report 30081024, expected 30081024
// L32: 0 failed
//
// Per rank: data parallelism halves the batch, tensor parallelism splits
// every matmul (heads, FFN columns, vocabulary rows), accumulation runs the
// same work in two microbatches.
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-dp2 --verify --mesh dp=2 2>/dev/null
// RUN: %python %S/../Utils/check_flops.py %t/gpt-dp2 %S/../../examples/tiny_transformer/model.onnx --family gpt2 --dp 2 | FileCheck %s
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-tp2 --verify --mesh tp=2 2>/dev/null
// RUN: %python %S/../Utils/check_flops.py %t/gpt-tp2 %S/../../examples/tiny_transformer/model.onnx --family gpt2 --tp 2 | FileCheck %s
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-acc2 --grad-accum 2 2>/dev/null
// RUN: %python %S/../Utils/check_flops.py %t/gpt-acc2 %S/../../examples/tiny_transformer/model.onnx --family gpt2 | FileCheck %s
// RUN: dtc-compile %S/../../examples/tiny_llama/model.onnx -o %t/llama-2x2 --freeze '^rope_' --verify --mesh dp=2,tp=2 2>/dev/null
// RUN: %python %S/../Utils/check_flops.py %t/llama-2x2 %S/../../examples/tiny_llama/model.onnx --family llama --dp 2 --tp 2 | FileCheck %s
//
// The summary on stderr:
// RUN: FileCheck %s --check-prefix=STDERR < %t/gpt.err
// STDERR: dtc-compile: per rank per step: {{.*}} FLOPs (matmul 1.425e+06, elementwise {{.*}}, transcendental {{.*}}), {{.*}} bytes moved; roofline on h100-80gb: {{.*}} s
//
// The roofline estimate (by default for an H100, --device-spec for others)
// of the f32 step: the FLOPs at the datasheet's FP32 rate (67 TFLOP/s on an
// H100 SXM, 19.5 on an A100) but for AdamW's 8 f64 scalar operations at
// FP64's (34, 9.7), all bytes at its memory bandwidth (3.35 TB/s, 2.039
// TB/s).
// RUN: FileCheck %s --check-prefix=H100 < %t/gpt/report.json
// H100: "roofline_per_step": {
// H100: "device": "h100-80gb",
// RUN: %python %S/../Utils/check_flops.py %t/gpt %S/../../examples/tiny_transformer/model.onnx --family gpt2 --peak-flops 67e12 --peak-flops-f64 34e12 --memory-bandwidth 3.35e12 | FileCheck %s --check-prefix=ROOF
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-a100 --device-spec a100-80gb 2>/dev/null
// RUN: FileCheck %s --check-prefix=A100 < %t/gpt-a100/report.json
// A100: "device": "a100-80gb",
// RUN: %python %S/../Utils/check_flops.py %t/gpt-a100 %S/../../examples/tiny_transformer/model.onnx --family gpt2 --peak-flops 19.5e12 --peak-flops-f64 9.7e12 --memory-bandwidth 2.039e12 | FileCheck %s --check-prefix=ROOF
// ROOF: ok roofline compute
// ROOF-NEXT: ok roofline memory
// ROOF-NEXT: ok roofline step
// ROOF-NEXT: 0 failed
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/bad --device-spec tpu 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: --device-spec: unknown device 'tpu' (h100-80gb, h200-141gb, a100-80gb, cpu-core)
//
// A device of the user's own, in an edited copy of data/devices.json: the
// H100 entry renamed, its memory bandwidth 1 TB/s.
// RUN: %python -c "import json, sys; d = json.load(open(sys.argv[1])); e = d['devices'][0]; e['name'] = 'my-gpu'; e['memory_bytes_per_second'] = 1e12; d['devices'] = [e]; json.dump(d, open(sys.argv[2], 'w'))" %S/../../data/devices.json %t/devices.json
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/gpt-mine --device-file %t/devices.json --device-spec my-gpu 2>/dev/null
// RUN: %python %S/../Utils/check_flops.py %t/gpt-mine %S/../../examples/tiny_transformer/model.onnx --family gpt2 --peak-flops 67e12 --peak-flops-f64 34e12 --memory-bandwidth 1e12 | FileCheck %s --check-prefix=ROOF
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/bad --device-file %t/devices.json 2>&1 | FileCheck %s --check-prefix=NOTINFILE
// NOTINFILE: error: --device-spec: unknown device 'h100-80gb' (my-gpu in {{.*}}devices.json)
// RUN: %python -c "import json, sys; d = json.load(open(sys.argv[1])); del d['devices'][1]['intra_node']; json.dump(d, open(sys.argv[2], 'w'))" %S/../../data/devices.json %t/broken.json
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/bad --device-file %t/broken.json 2>&1 | FileCheck %s --check-prefix=BROKEN
// BROKEN: error: --device-spec: {{.*}}broken.json: device 1 ('h200-141gb'): missing or malformed intra_node
