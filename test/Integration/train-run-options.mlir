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
// are replicated (dp), split over dp (ZeRO-2) and split over tp.
// RUN: dtc-run %t/one --data %t/tokens.npy --steps 4 --metrics %t/one.jsonl --peak-tflops 1 --dump %t/one-dump > /dev/null
// RUN: %python %S/../Utils/check_metrics.py %t/one.jsonl %t/one-dump --flops | FileCheck %s --check-prefix=METRICS
// METRICS: metrics ok
// RUN: cmp %t/full/loss.npy %t/one-dump/loss.npy
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/dp2 --lr 0.01 --eps 1e-3 --mesh dp=2 2>/dev/null
// RUN: %mpirun -np 2 dtc-run %t/dp2 --data %t/tokens.npy --steps 3 --metrics %t/dp2.jsonl --dump %t/dp2-dump > /dev/null
// RUN: %python %S/../Utils/check_metrics.py %t/dp2.jsonl %t/dp2-dump --ranks 2 | FileCheck %s --check-prefix=METRICS
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/z2 --lr 0.01 --eps 1e-3 --mesh dp=2 --zero 2 2>/dev/null
// RUN: %mpirun -np 2 dtc-run %t/z2 --data %t/tokens.npy --steps 3 --metrics %t/z2.jsonl --dump %t/z2-dump > /dev/null
// RUN: %python %S/../Utils/check_metrics.py %t/z2.jsonl %t/z2-dump --ranks 2 | FileCheck %s --check-prefix=METRICS
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/tp2 --lr 0.01 --eps 1e-3 --mesh tp=2 2>/dev/null
// RUN: %mpirun -np 2 dtc-run %t/tp2 --data %t/tokens.npy --steps 3 --metrics %t/tp2.jsonl --dump %t/tp2-dump > /dev/null
// RUN: %python %S/../Utils/check_metrics.py %t/tp2.jsonl %t/tp2-dump --ranks 2 | FileCheck %s --check-prefix=METRICS

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

// A non-finite loss stops the run at its step, naming the first non-finite
// gradient; on a mesh every rank stops there together (no abort).
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/diverge --lr 1e30 2>/dev/null
// RUN: not dtc-run %t/diverge --data %t/tokens.npy --steps 5 2>&1 | FileCheck %s --check-prefix=NONFINITE
// NONFINITE: error: step 2: the loss is nan; the first non-finite result: the gradient of '{{[^']+}}' (nan at element {{[0-9]+}} of this rank's part)
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/diverge-dp2 --lr 1e30 --mesh dp=2 2>/dev/null
// RUN: not %mpirun -np 2 dtc-run %t/diverge-dp2 --data %t/tokens.npy --steps 5 2>&1 | FileCheck %s --check-prefix=NONFINITE-MESH
// NONFINITE-MESH: error: step 2: the loss is nan; the first non-finite result: the gradient of '{{[^']+}}' (nan at element {{[0-9]+}} of this rank's part) on rank 0
// NONFINITE-MESH-NOT: MPI_ABORT

// A rank that hangs (stopped with SIGSTOP after step 3) ends the job within
// the collective timeout (and two seconds of asking the other ranks where
// they are), the error naming the collective and the missing rank.
// RUN: %python %S/../Utils/stop_rank.py 1 "step     3/" -- %mpirun -np 2 dtc-run %t/dp2 --data %t/tokens.npy --steps 1000000 --log-every 1 --collective-timeout 5 2>&1 | FileCheck %s --check-prefix=HANG
// HANG: error: rank 0: {{all_reduce|all_gather|reduce_scatter}} #{{[0-9]+}} over axes dp ({{[0-9]+}} bytes) in {{.*}} waited more than --collective-timeout 5 s: rank 1 never arrived; ending the job
// HANG: stop_rank.py: the job ended {{[0-9]|1[0-5]}} s after rank 1 stopped

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
// RUN: not dtc-run %t/one --data %t/tokens.npy --save-every 2 2>&1 | FileCheck %s --check-prefix=BAD-SAVE
// BAD-SAVE: error: --save-every needs --save DIR
// RUN: not dtc-run %t/one --data 2>&1 | FileCheck %s --check-prefix=NOVALUE
// NOVALUE: error: --data needs a value
// RUN: not dtc-run %t/one --data %t/tokens.npy --metrics %t/no/such/dir/m.jsonl 2>&1 | FileCheck %s --check-prefix=BAD-METRICS
// BAD-METRICS: error: cannot write --metrics '{{.*}}m.jsonl': No such file or directory
