// GPT-2 (its fused QKV split by SplitToSequence/SequenceAt; the tied embedding and head are one initializer, m.lm_head.weight),
// exported by torch 2.x's default exporter with transformers 5 as a user
// would (torch.onnx.export(..., dynamo=True, optimize=False), eager
// attention: Inputs/hf5/make_hf5_models.py; opset 20, GatherND masks): three
// AdamW steps on one device and on dp=2 x tp=2 with sequence parallelism and
// ZeRO-1 match PyTorch (loss 1e-5, gradients 1e-4, updates 1e-3).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf5/gpt2-names %t/one 1 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf5/gpt2-names %t/z1 4 --mesh dp=2,tp=2 --sequence-parallel --zero 1 | FileCheck %s
// CHECK: 0 failed
//
// Its Conv1D projections work on [batch x sequence, features] rows, and its
// fused QKV is split from a [batch, sequence, 3d] view of them: the QKV
// weight is split in 3 blocks (each rank its heads of q, k and v; before,
// its halves did not line up with q, k and v and every layer gathered the
// QKV output again, forward and backward), and under sequence parallelism
// the rows' partial sums are reduce-scattered each sequence apart, not
// all-reduced. Gradient accumulation then splits the batch's sequences
// (before, it ran the layers on the whole batch in every microbatch, with
// a warning), and the trajectory is still PyTorch's.
// RUN: dtc-compile %S/Inputs/hf5/gpt2-names/model.onnx --shapes-only --mesh tp=2 --sequence-parallel -o %t/sp 2>&1 | FileCheck %s --check-prefix=SP --allow-empty
// SP-NOT: warning
// RUN: %python -c "import json; [print(c['kind'], c['reason'], 'resharding' if c.get('resharding') else '') for c in json.load(open('%t/sp/report.json'))['collectives_per_step']]" | FileCheck %s --check-prefix=COLLECTIVES
// COLLECTIVES-NOT: resharding
// COLLECTIVES: reduce_scatter tensor-parallel: 'dtc.add' (node_addmm_1) needs the whole value of a partial sum
// COLLECTIVES-NOT: resharding
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf5/gpt2-names %t/accum 2 --mesh tp=2 --sequence-parallel --grad-accum 2 | FileCheck %s --check-prefix=ACCUM
// ACCUM-NOT: warning
// ACCUM: 0 failed
// ACCUM-NOT: warning
