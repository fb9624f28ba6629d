// dtc-run's run options beyond the data and checkpoints (RunOptions.h):
// metrics, evaluation, exporting the trained parameters, a non-finite loss,
// a rank that hangs, and the range check of every option. lit runs this on
// the reference executor and (lit-target-cpu) on compiled programs.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as n; n.save('%t/tokens.npy', (n.arange(3001) * 5 % 64).astype(n.uint16)); n.save('%t/eval.npy', (n.arange(401) * 7 % 64).astype(n.uint16))"
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/one --lr 0.01 --eps 1e-3 2>/dev/null
// RUN: dtc-run %t/one --data %t/tokens.npy --steps 4 --dump %t/full > /dev/null

// --metrics: one JSON line per step; the gradient norm is numpy's norm of
// the dumped whole gradients, on one device and on meshes where gradients
// are replicated (dp), split over dp (ZeRO-2), split over tp and split
// between pipeline stages; FLOP/s times seconds are report.json's FLOPs.
// RUN: dtc-run %t/one --data %t/tokens.npy --steps 4 --metrics %t/one.jsonl --peak-tflops 1 --dump %t/one-dump > /dev/null
// RUN: %python %S/../Utils/check_metrics.py %t/one.jsonl %t/one-dump --flops %t/one/report.json --peak-tflops 1 | FileCheck %s --check-prefix=METRICS
// METRICS: metrics ok
// RUN: cmp %t/full/loss.npy %t/one-dump/loss.npy
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/dp2 --lr 0.01 --eps 1e-3 --mesh dp=2 2>/dev/null
// RUN: %mpirun -np 2 dtc-run %t/dp2 --data %t/tokens.npy --steps 3 --metrics %t/dp2.jsonl --dump %t/dp2-dump > /dev/null
// RUN: %python %S/../Utils/check_metrics.py %t/dp2.jsonl %t/dp2-dump --ranks 2 --flops %t/dp2/report.json | FileCheck %s --check-prefix=METRICS
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/z2 --lr 0.01 --eps 1e-3 --mesh dp=2 --zero 2 2>/dev/null
// RUN: %mpirun -np 2 dtc-run %t/z2 --data %t/tokens.npy --steps 3 --metrics %t/z2.jsonl --dump %t/z2-dump > /dev/null
// RUN: %python %S/../Utils/check_metrics.py %t/z2.jsonl %t/z2-dump --ranks 2 --flops %t/z2/report.json | FileCheck %s --check-prefix=METRICS
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/tp2 --lr 0.01 --eps 1e-3 --mesh tp=2 2>/dev/null
// RUN: %mpirun -np 2 dtc-run %t/tp2 --data %t/tokens.npy --steps 3 --metrics %t/tp2.jsonl --dump %t/tp2-dump > /dev/null
// RUN: %python %S/../Utils/check_metrics.py %t/tp2.jsonl %t/tp2-dump --ranks 2 --flops %t/tp2/report.json | FileCheck %s --check-prefix=METRICS
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/pp2 --lr 0.01 --eps 1e-3 --mesh pp=2 --microbatches 2 2>/dev/null
// RUN: %mpirun -np 2 dtc-run %t/pp2 --data %t/tokens.npy --steps 3 --metrics %t/pp2.jsonl --dump %t/pp2-dump > /dev/null
// RUN: %python %S/../Utils/check_metrics.py %t/pp2.jsonl %t/pp2-dump --ranks 2 --flops %t/pp2/report.json | FileCheck %s --check-prefix=METRICS

// The learning rate in the metrics is the one the step used: warm-up from
// a third (LinearLR's default) then cosine, by PyTorch's formulas.
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/sched --lr 3e-3 --schedule warmup-cosine --warmup-steps 3 --total-steps 8 --min-lr 1e-4 2>/dev/null
// RUN: dtc-run %t/sched --data %t/tokens.npy --steps 8 --metrics %t/sched.jsonl > /dev/null
// RUN: %python -c "import json, math; lr = [json.loads(l)['lr'] for l in open('%t/sched.jsonl')]; want = [3e-3 * (1/3 + (2/3) * k / 3) if k < 3 else 1e-4 + (3e-3 - 1e-4) * (1 + math.cos(math.pi * (k - 3) / 5)) / 2 for k in range(8)]; print('lr', 'agree' if all(abs(a - b) <= 1e-7 * b for a, b in zip(lr, want)) and len(lr) == 8 else 'DIFFER', lr)" | FileCheck %s --check-prefix=LR
// LR: lr agree

// --eval-data: the mean loss over the first --eval-batches batches of
// windows of the file, in order. Evaluating leaves training untouched (the
// same losses, bit for bit), and its loss is the mean of the step's loss
// on those batches from the trained parameters (--init from the dump).
// RUN: dtc-run %t/one --data %t/tokens.npy --steps 4 --eval-data %t/eval.npy --eval-every 2 --eval-batches 3 --dump %t/evald > %t/eval.log
// RUN: FileCheck %s --check-prefix=EVAL < %t/eval.log
// EVAL: step     2/4
// EVAL-NEXT: eval after step 2: loss {{[0-9.]+}}  perplexity {{[0-9.]+}}  (6 windows)
// EVAL: step     4/4
// EVAL-NEXT: eval after step 4: loss {{[0-9.]+}}  perplexity {{[0-9.]+}}  (6 windows)
// RUN: cmp %t/full/loss.npy %t/evald/loss.npy
// RUN: cmp %t/full/param/wte.weight.npy %t/evald/param/wte.weight.npy
// RUN: %python %S/../Utils/eval_reference.py %t/eval.npy %t/evb --rows 2 --sequence 8 --batches 3
// RUN: dtc-run %t/one --init %t/evald/param --batch %t/evb/b0 --steps 1 --dump %t/evb/d0 > /dev/null
// RUN: dtc-run %t/one --init %t/evald/param --batch %t/evb/b1 --steps 1 --dump %t/evb/d1 > /dev/null
// RUN: dtc-run %t/one --init %t/evald/param --batch %t/evb/b2 --steps 1 --dump %t/evb/d2 > /dev/null
// RUN: %python -c "import numpy as n, re, math; l = sum(float(n.load('%t/evb/d%%d/loss.npy' %% k)[0]) for k in range(3)) / 3; m = float(re.findall(r'eval after step 4: loss ([0-9.]+)', open('%t/eval.log').read())[0]); print('eval loss', m, 'reference', l, 'agree' if abs(m - l) < 2e-6 else 'DIFFER')" | FileCheck %s --check-prefix=EVALREF
// EVALREF: agree
// On a mesh the eval loss is the single device's.
// RUN: %mpirun -np 2 dtc-run %t/tp2 --data %t/tokens.npy --steps 4 --eval-data %t/eval.npy --eval-batches 3 > %t/eval-tp2.log
// RUN: %python -c "import re; a, b = (float(re.findall(r'eval after step 4: loss ([0-9.]+)', open(f).read())[0]) for f in ('%t/eval.log', '%t/eval-tp2.log')); print('tp2', 'agree' if abs(a - b) < 1e-4 else 'DIFFER', a, b)" | FileCheck %s --check-prefix=EVALTP
// EVALTP: tp2 agree

// A step with dropout is evaluated with it (the training step runs):
// said once.
// RUN: %python -c "import onnx, numpy as n; from onnx import helper, numpy_helper; m = onnx.load('%S/../../examples/tiny_transformer/model.onnx'); g = m.graph; [x for x in g.node if 'logits' in x.output][0].output[0] = 'pre'; g.initializer.append(numpy_helper.from_array(n.array(0.1, dtype=n.float32), 'ratio')); g.node.append(helper.make_node('Dropout', ['pre', 'ratio'], ['logits'])); onnx.save(m, '%t/dropout.onnx')"
// RUN: dtc-compile %t/dropout.onnx -o %t/dropout --dropout --lr 0.01 2>/dev/null
// RUN: dtc-run %t/dropout --data %t/tokens.npy --steps 1 --eval-data %t/eval.npy 2>&1 | FileCheck %s --check-prefix=EVAL-DROPOUT
// EVAL-DROPOUT: warning: --eval-data: this step has dropout, which evaluation applies as training does (it runs the training step with its update discarded)
// EVAL-DROPOUT: eval after step 1: loss

// --export-checkpoint: the trained parameters as whole tensors under the
// model's names, the --dump's byte for byte; from a mesh too, and from a
// checkpoint with no steps left.
// RUN: dtc-run %t/one --data %t/tokens.npy --steps 4 --export-checkpoint %t/export | FileCheck %s --check-prefix=EXPORT
// EXPORT: exported the parameters of step 4 to {{.*}}export
// RUN: ls %t/export | FileCheck %s --check-prefix=EXPORTED
// EXPORTED: block.fc.bias.npy
// EXPORTED: wte.weight.npy
// RUN: cmp %t/export/wte.weight.npy %t/full/param/wte.weight.npy
// RUN: cmp %t/export/block.fc.weight.npy %t/full/param/block.fc.weight.npy
// RUN: %mpirun -np 2 dtc-run %t/tp2 --data %t/tokens.npy --steps 3 --save %t/tp2-ckpt --export-checkpoint %t/tp2-export > /dev/null
// RUN: cmp %t/tp2-export/wte.weight.npy %t/tp2-dump/param/wte.weight.npy
// RUN: cmp %t/tp2-export/block.fc.weight.npy %t/tp2-dump/param/block.fc.weight.npy
// RUN: dtc-run %t/one --resume %t/tp2-ckpt --steps 3 --export-checkpoint %t/from-ckpt | FileCheck %s --check-prefix=FROMCKPT
// FROMCKPT: exported the parameters of step 3 to {{.*}}from-ckpt
// FROMCKPT-NOT: step
// RUN: cmp %t/from-ckpt/block.fc.weight.npy %t/tp2-dump/param/block.fc.weight.npy
// Across precisions: a bf16 step's f32 master copies become the f32 step's
// parameters, and an f32 step's parameters a bf16 step's master copies.
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/bf16-dp2 --lr 0.01 --eps 1e-3 --mesh dp=2 --zero 1 --precision bf16 2>/dev/null
// RUN: %mpirun -np 2 dtc-run %t/bf16-dp2 --data %t/tokens.npy --steps 3 --save %t/bf16-ckpt --dump %t/bf16-dump > /dev/null
// RUN: dtc-run %t/one --resume %t/bf16-ckpt --steps 3 --export-checkpoint %t/bf16-to-f32 > /dev/null
// RUN: cmp %t/bf16-to-f32/block.qkv.weight.npy %t/bf16-dump/param/block.qkv.weight.npy
// RUN: %mpirun -np 2 dtc-run %t/bf16-dp2 --resume %t/tp2-ckpt --steps 3 --export-checkpoint %t/f32-to-bf16 > /dev/null
// RUN: cmp %t/f32-to-bf16/block.qkv.weight.npy %t/tp2-dump/param/block.qkv.weight.npy

// --export-onnx: the compiled model with its initializers replaced by the
// trained parameters: the graph unchanged, each trained initializer the
// dumped parameter byte for byte (checked with the onnx package), frozen
// ones kept; from one device, a tp=2 GPT-2 whose fused QKV is split in
// blocks, and a tp=2 bf16 Llama with frozen rotary tables.
// RUN: dtc-run %t/one --data %t/tokens.npy --steps 4 --export-onnx %t/trained.onnx | FileCheck %s --check-prefix=ONNX
// ONNX: exported the model with the parameters of step 4 to {{.*}}trained.onnx
// RUN: %python %S/../Utils/check_onnx_export.py %S/../../examples/tiny_transformer/model.onnx %t/trained.onnx %t/full/param | FileCheck %s --check-prefix=ONNX-OK
// ONNX-OK: export ok: 17 trained initializers replaced, 0 kept, the graph unchanged
// RUN: %python -c "import numpy as n; n.save('%t/gpt2-tokens.npy', (n.arange(5001) * 3 %% 64).astype(n.uint16))"
// RUN: dtc-compile %S/Inputs/hf5/gpt2-names/model.onnx -o %t/gpt2-tp2 --lr 0.01 --eps 1e-3 --mesh tp=2 2>/dev/null
// RUN: %mpirun -np 2 dtc-run %t/gpt2-tp2 --data %t/gpt2-tokens.npy --steps 2 --dump %t/gpt2-dump --export-onnx %t/gpt2.onnx > /dev/null
// RUN: %python %S/../Utils/check_onnx_export.py %S/Inputs/hf5/gpt2-names/model.onnx %t/gpt2.onnx %t/gpt2-dump/param | FileCheck %s --check-prefix=ONNX-GPT2
// ONNX-GPT2: export ok: 28 trained initializers replaced, 0 kept, the graph unchanged
// RUN: dtc-compile %S/../../examples/tiny_llama/model.onnx -o %t/llama-tp2 --freeze '^rope_' --mesh tp=2 --precision bf16 2>/dev/null
// RUN: %mpirun -np 2 dtc-run %t/llama-tp2 --batch %S/Inputs/tiny_llama/batch --steps 2 --dump %t/llama-dump --export-onnx %t/llama.onnx > /dev/null
// RUN: %python %S/../Utils/check_onnx_export.py %S/../../examples/tiny_llama/model.onnx %t/llama.onnx %t/llama-dump/param | FileCheck %s --check-prefix=ONNX-LLAMA
// ONNX-LLAMA: export ok: 20 trained initializers replaced, 3 kept, the graph unchanged
// RUN: cp -r %t/one %t/moved && sed -i 's|"model": "[^"]*"|"model": "/nonexistent/model.onnx"|' %t/moved/manifest.json
// RUN: not dtc-run %t/moved --data %t/tokens.npy --steps 1 --export-onnx %t/x.onnx 2>&1 | FileCheck %s --check-prefix=ONNX-MOVED
// ONNX-MOVED: error: --export-onnx: cannot read the model '/nonexistent/model.onnx' to export: it is where dtc-compile read it (OUT/manifest.json names it)

// A non-finite loss stops the run at its step, naming the first non-finite
// gradient; on a mesh every rank stops there together (no abort).
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/diverge --lr 1e30 2>/dev/null
// RUN: not dtc-run %t/diverge --data %t/tokens.npy --steps 5 2>&1 | FileCheck %s --check-prefix=NONFINITE
// NONFINITE: error: step 2: the loss is nan; the first non-finite result: the gradient of '{{[^']+}}' (nan at element {{[0-9]+}} of this rank's part)
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/diverge-dp2 --lr 1e30 --mesh dp=2 2>/dev/null
// RUN: not %mpirun -np 2 dtc-run %t/diverge-dp2 --data %t/tokens.npy --steps 5 2>&1 | FileCheck %s --check-prefix=NONFINITE-MESH
// NONFINITE-MESH: error: step 2: the loss is nan; the first non-finite result: the gradient of '{{[^']+}}' (nan at element {{[0-9]+}} of this rank's part) on rank 0
// NONFINITE-MESH-NOT: MPI_ABORT
// With fp16's loss scaling a non-finite step is skipped (its scale
// halved), but a forward that overflows step after step (parameters past
// fp16's range) stops the run after 16 such steps; the metrics stay JSON
// (null for a non-finite loss).
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/diverge-fp16 --lr 1e30 --precision fp16 2>/dev/null
// RUN: not dtc-run %t/diverge-fp16 --data %t/tokens.npy --steps 50 --metrics %t/fp16.jsonl 2>&1 | FileCheck %s --check-prefix=NONFINITE-FP16
// NONFINITE-FP16: error: step 17: the loss is nan on 16 steps in a row, each skipped by loss scaling (the forward overflows); the first non-finite result: the gradient of '{{[^']+}}'
// RUN: %python -c "import json; m = [json.loads(l) for l in open('%t/fp16.jsonl')]; print(len(m), m[1]['loss'], [l['loss_scale'] for l in m[1:4]])" | FileCheck %s --check-prefix=FP16-METRICS
// FP16-METRICS: 16 None [65536, 32768, 16384]

// A rank that hangs (stopped with SIGSTOP after step 3) ends the job within
// the collective timeout (and two seconds of asking the other ranks where
// they are), the error naming the collective and the missing rank.
// RUN: %python %S/../Utils/stop_rank.py 1 "step     3/" -- %mpirun -np 2 dtc-run %t/dp2 --data %t/tokens.npy --steps 1000000 --log-every 1 --collective-timeout 5 2>&1 | FileCheck %s --check-prefix=HANG
// HANG: error: rank 0: {{all_reduce|all_gather|reduce_scatter}} #{{[0-9]+}} over axes dp ({{[0-9]+}} bytes) in {{.*}} waited more than --collective-timeout 5 s: rank 1 never arrived; ending the job
// HANG: stop_rank.py: the job ended {{[0-9]|1[0-5]}} s after rank 1 stopped
// On dp=2 x tp=2 with rank 3 stopped, its tp partner (rank 2) waits on it
// and rank 0 on rank 2 (over dp): rank 0 finds its partner arrived but
// waiting elsewhere, and leaves the naming to the ranks that wait on rank 3.
// (Stopped between steps, every rank waits on it in the stop flag's
// all-reduce over dp,tp, and any of them names it.)
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/dt --lr 0.01 --eps 1e-3 --mesh dp=2,tp=2 2>/dev/null
// RUN: %python %S/../Utils/stop_rank.py 3 "step     3/" -- %mpirun -np 4 dtc-run %t/dt --data %t/tokens.npy --steps 1000000 --log-every 1 --collective-timeout 5 2>&1 | FileCheck %s --check-prefix=HANG4 --implicit-check-not="every rank of its group arrived"
// HANG4: error: rank {{[0-2]}}: {{all_reduce|all_gather|reduce_scatter}} #{{[0-9]+}} over axes {{dp|tp|dp,tp}} ({{[0-9]+}} bytes) in {{.*}} waited more than --collective-timeout 5 s: rank 3 never arrived; ending the job
// HANG4: stop_rank.py: the job ended {{[0-9]|1[0-5]}} s after rank 3 stopped

// Every option's range, one line each.
// RUN: not dtc-run %t/one --data %t/tokens.npy --steps 0 2>&1 | FileCheck %s --check-prefix=BAD-STEPS
// BAD-STEPS: error: --steps is '0': it must be an integer of at least 1
// RUN: not dtc-run %t/one --data %t/tokens.npy --steps two 2>&1 | FileCheck %s --check-prefix=BAD-STEPS2
// BAD-STEPS2: error: --steps is 'two': it must be an integer of at least 1
// RUN: not dtc-run %t/one --data %t/tokens.npy --log-every -1 2>&1 | FileCheck %s --check-prefix=BAD-LOG
// BAD-LOG: error: --log-every is '-1': it must be an integer of at least 1
// RUN: not dtc-run %t/one --data %t/tokens.npy --save %t/s --save-every 0 2>&1 | FileCheck %s --check-prefix=BAD-EVERY
// BAD-EVERY: error: --save-every is '0': it must be an integer of at least 1
// RUN: not dtc-run %t/one --data %t/tokens.npy --data-type int8 2>&1 | FileCheck %s --check-prefix=BAD-TYPE
// BAD-TYPE: error: --data-type is 'int8': it must be uint16 or int32
// RUN: not dtc-run %t/one --data %t/tokens.npy --data-seed -3 2>&1 | FileCheck %s --check-prefix=BAD-SEED
// BAD-SEED: error: --data-seed is '-3': it must be a non-negative integer
// RUN: not dtc-run %t/one --data %t/tokens.npy --collective-timeout 0 2>&1 | FileCheck %s --check-prefix=BAD-TIMEOUT
// BAD-TIMEOUT: error: --collective-timeout is '0': it must be a number of seconds above 0
// RUN: not dtc-run %t/one --data %t/tokens.npy --collective-timeout nan 2>&1 | FileCheck %s --check-prefix=BAD-TIMEOUT2
// BAD-TIMEOUT2: error: --collective-timeout is 'nan': it must be a number of seconds above 0
// RUN: not dtc-run %t/one --data %t/tokens.npy --peak-tflops -1 2>&1 | FileCheck %s --check-prefix=BAD-PEAK
// BAD-PEAK: error: --peak-tflops is '-1': it must be a number above 0
// RUN: not dtc-run %t/one --data %t/tokens.npy --eval-every 2 2>&1 | FileCheck %s --check-prefix=BAD-EVAL
// BAD-EVAL: error: --eval-every needs --eval-data FILE
// RUN: not dtc-run %t/one --data %t/tokens.npy --eval-data %t/eval.npy --eval-batches 0 2>&1 | FileCheck %s --check-prefix=BAD-BATCHES
// BAD-BATCHES: error: --eval-batches is '0': it must be an integer of at least 1
// RUN: not dtc-run %t/one --data %t/tokens.npy --eval-data %t/nothere.npy 2>&1 | FileCheck %s --check-prefix=BAD-EVALFILE
// BAD-EVALFILE: error: --eval-data: {{.*}}nothere.npy
// A token outside the vocabulary met in the middle of a run on a mesh: each
// rank reads the whole batch and finds it alike, so the first says so,
// once, and all end without an abort.
// RUN: %python -c "import numpy as n; t = (n.arange(3001) * 5 % 64).astype(n.uint16); t[2000] = 64; n.save('%t/late-bad.npy', t)"
// RUN: not %mpirun --quiet -np 2 dtc-run %t/dp2 --data %t/late-bad.npy --steps 400 --log-every 1000 > %t/late-bad.txt 2>&1
// RUN: FileCheck %s --check-prefix=LATE-BAD < %t/late-bad.txt
// LATE-BAD: error: the data file '{{.*}}late-bad.npy' holds token 64 at token offset 2000 (byte {{[0-9]+}}), outside the vocabulary [0, 64)
// RUN: %python -c "import sys; print(len(open(sys.argv[1]).read().splitlines()), 'line')" %t/late-bad.txt | FileCheck %s --check-prefix=ONE-LINE
// ONE-LINE: 1 line

// The eval windows are read before training, not first after it:
// RUN: %python -c "import numpy as n; n.save('%t/empty.npy', n.zeros(0, n.uint16)); n.save('%t/big.npy', n.full(300, 64, n.int32))"
// RUN: not dtc-run %t/one --data %t/tokens.npy --steps 3 --eval-data %t/empty.npy 2>&1 | FileCheck %s --check-prefix=BAD-EVALEMPTY --implicit-check-not=step
// BAD-EVALEMPTY: error: --eval-data: the data file '{{.*}}empty.npy' holds 0 tokens, fewer than one window of 9
// RUN: not dtc-run %t/one --data %t/tokens.npy --steps 3 --eval-data %t/big.npy 2>&1 | FileCheck %s --check-prefix=BAD-EVALVOCAB --implicit-check-not=step
// BAD-EVALVOCAB: error: --eval-data: the data file '{{.*}}big.npy' holds token 64 at token offset 0 (byte {{[0-9]+}}), outside the vocabulary [0, 64)
// RUN: not dtc-run %t/one --data %t/tokens.npy --eval-batches 3 2>&1 | FileCheck %s --check-prefix=BAD-EVALBATCHES
// BAD-EVALBATCHES: error: --eval-batches needs --eval-data FILE
// RUN: not dtc-run %t/one --data %t/tokens.npy --data-type int32 2>&1 | FileCheck %s --check-prefix=BAD-DATATYPE
// BAD-DATATYPE: error: --data-type is for raw token files (--data, --eval-data); a .npy file says its own type
// RUN: not dtc-run %t/one --data %t/tokens.npy --steps 3 --export-onnx /proc/none/trained.onnx 2>&1 | FileCheck %s --check-prefix=BAD-EXPORT --implicit-check-not=step
// BAD-EXPORT: error: cannot write --export-onnx '/proc/none/trained.onnx': {{.+}}
// RUN: not dtc-run %t/one --data %t/tokens.npy --save-every 2 2>&1 | FileCheck %s --check-prefix=BAD-SAVE
// BAD-SAVE: error: --save-every needs --save DIR
// RUN: not dtc-run %t/one --data 2>&1 | FileCheck %s --check-prefix=NOVALUE
// NOVALUE: error: --data needs a value
// RUN: not dtc-run %t/one --data %t/tokens.npy --metrics %t/no/such/dir/m.jsonl 2>&1 | FileCheck %s --check-prefix=BAD-METRICS
// BAD-METRICS: error: cannot write --metrics '{{.*}}m.jsonl': No such file or directory
