// The automatic stage split against Meta's on Llama-3-405B shapes (126
// layers, d 16384, sequence 4096; weights that do not exist) at pp=16:
// Meta's split puts 7 layers on the first and the last stage (which also
// hold the embedding, and the head and the loss) and 8 on the others. The
// auto split's slowest stage (forward and backward roofline time, the
// report's per-stage figures) must be no slower than Meta's.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/../../bench/llama_shapes.py llama3-405b %t/model.onnx --batch 16
// RUN: dtc-compile --shapes-only --precision bf16 --mesh pp=16 --pipeline-schedule gpipe %t/model.onnx -o %t/auto 2>&1 | FileCheck %s --check-prefix=AUTO
// AUTO: dtc-compile: pipeline gpipe over pp=16 (16 stages of {{([0-9]+,){15}[0-9]+}} transformer layers)
// RUN: dtc-compile --shapes-only --precision bf16 --mesh pp=16 --pipeline-schedule gpipe --pipeline-split 7,8,8,8,8,8,8,8,8,8,8,8,8,8,8,7 %t/model.onnx -o %t/meta 2>&1 | FileCheck %s --check-prefix=META
// META: dtc-compile: pipeline gpipe over pp=16 (16 stages of 7,8,8,8,8,8,8,8,8,8,8,8,8,8,8,7 transformer layers)
// The same split as ranges:
// RUN: dtc-compile --shapes-only --precision bf16 --mesh pp=16 --pipeline-schedule gpipe --pipeline-split 0-6,7-14,15-22,23-30,31-38,39-46,47-54,55-62,63-70,71-78,79-86,87-94,95-102,103-110,111-118,119-125 %t/model.onnx -o %t/ranges 2>&1 | FileCheck %s --check-prefix=META
// RUN: %python -c "import json, sys; t = [[s['forward_seconds'] + s['backward_input_seconds'] + s['backward_weight_seconds'] for s in json.load(open(f + '/report.json'))['pipeline']['stages']] for f in sys.argv[1:]]; print('auto', max(t[0]), 'meta', max(t[1]), 'no worse' if max(t[0]) <= max(t[1]) * (1 + 1e-9) else 'WORSE'); print('ranges', 'same' if t[2] == t[1] else 'DIFFERENT')" %t/auto %t/meta %t/ranges | FileCheck %s
// CHECK: auto {{[0-9.e+-]+}} meta {{[0-9.e+-]+}} no worse
// CHECK: ranges same
//
// Errors: a split of another number of layers, or of stages.
// RUN: not dtc-compile --shapes-only --mesh pp=16 --pipeline-split 8,8,8,8,8,8,8,8,8,8,8,8,8,8,8,8 %t/model.onnx -o %t/bad 2>&1 | FileCheck %s --check-prefix=LAYERS
// LAYERS: error: pipeline: --pipeline-split names 128 transformer layers; the model has 126 (the blocks the stages can be cut between)
// RUN: not dtc-compile --shapes-only --mesh pp=16 --pipeline-split 63,63 %t/model.onnx -o %t/bad 2>&1 | FileCheck %s --check-prefix=STAGES
// STAGES: error: --pipeline-split names 2 stages; the 1f1b schedule on pp=16 has 16
// RUN: not dtc-compile --shapes-only --mesh pp=2 --pipeline-split 0-62,64-125 %t/model.onnx -o %t/bad 2>&1 | FileCheck %s --check-prefix=GAP
// GAP: error: --pipeline-split: the ranges must follow each other from layer 0: '64-125' should start at layer 63
// RUN: not dtc-compile --shapes-only --mesh pp=2 --pipeline-split 63,x %t/model.onnx -o %t/bad 2>&1 | FileCheck %s --check-prefix=SYNTAX
// SYNTAX: error: --pipeline-split: 'x' is not a number of layers (1 or more) or a range of them
// RUN: not dtc-compile --shapes-only --pipeline-split 63,63 %t/model.onnx -o %t/bad 2>&1 | FileCheck %s --check-prefix=NOPP
// NOPP: error: --pipeline-split needs a pp axis of 2 or more ranks
