// Training from a token file (--data) with checkpoints (--save, --resume):
// docs/Checkpoint.md. The example transformer (vocabulary 64, batch 2 x 8
// tokens) on a counting sequence; 10 uninterrupted steps against 5, a
// checkpoint and 5 more. (AdamW's eps is 1e-3: the key bias's gradient is
// zero but for rounding, which a tiny eps would turn into full steps that
// differ between meshes.)
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as n; n.save('%t/tokens.npy', (n.arange(3001) * 5 % 64).astype(n.uint16)); (n.arange(3001) * 5 % 64).astype(n.uint16).tofile('%t/tokens.bin'); n.save('%t/short.npy', n.arange(8, dtype=n.int32)); n.save('%t/big.npy', n.full(300, 64, dtype=n.int32))"
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/one --lr 0.01 --eps 1e-3
// The signature names the labels input's classes (what --data checks ids
// against):
// RUN: FileCheck %s --check-prefix=CLASSES < %t/one/manifest.json
// CLASSES: "name": "labels",
// CLASSES: "classes": 64
// RUN: dtc-run %t/one --data %t/tokens.npy --steps 10 --dump %t/full | FileCheck %s --check-prefix=FULL
// FULL: step    10/10  loss
// The same run from the raw uint16 file (nanoGPT's train.bin): the same
// windows, the same losses.
// RUN: dtc-run %t/one --data %t/tokens.bin --data-type uint16 --steps 10 --dump %t/raw > /dev/null
// RUN: cmp %t/full/loss.npy %t/raw/loss.npy
// Another seed draws other windows: other losses.
// RUN: dtc-run %t/one --data %t/tokens.npy --data-seed 7 --steps 10 --dump %t/seed7 > /dev/null
// RUN: not cmp -s %t/full/loss.npy %t/seed7/loss.npy

// Save at step 5, resume to step 10: bit for bit the uninterrupted run.
// RUN: dtc-run %t/one --data %t/tokens.npy --steps 5 --save %t/ckpt | FileCheck %s --check-prefix=SAVE
// SAVE: checkpoint: step 5 saved in {{.*}}ckpt
// RUN: cat %t/ckpt/latest | FileCheck %s --check-prefix=LATEST
// LATEST: step-00000005
// RUN: FileCheck %s --check-prefix=STATE < %t/ckpt/step-00000005/state.txt
// STATE: dtc-checkpoint 1
// STATE-NEXT: step 5
// STATE-NEXT: data_seed 0
// STATE-NEXT: data_tokens 3001
// RUN: dtc-run %t/one --data %t/tokens.npy --steps 10 --resume %t/ckpt --dump %t/resumed | FileCheck %s --check-prefix=RESUMED
// RESUMED: step     6/10
// RESUMED: step    10/10
// RUN: %python %S/../Utils/compare_resumed.py %t/full %t/resumed --from 5 --exact | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: 0 failed
// --save-every: checkpoints at 4 and 8 and at the end; resuming from the
// one at 8 (its step directory named) is exact too.
// A run killed (SIGKILL: no chance to clean up) after its step-5
// checkpoint resumes from it to step 10 bit for bit.
// RUN: %python %S/../Utils/signal_after.py "checkpoint: step 5 saved" --kill -- dtc-run %t/one --data %t/tokens.npy --steps 1000000 --log-every 1 --save %t/killed --save-every 5 > /dev/null
// RUN: dtc-run %t/one --data %t/tokens.npy --steps 10 --resume %t/killed/step-00000005 --dump %t/killed-resumed > /dev/null
// RUN: %python %S/../Utils/compare_resumed.py %t/full %t/killed-resumed --from 5 --exact | FileCheck %s
// RUN: dtc-run %t/one --data %t/tokens.npy --steps 10 --save %t/every --save-every 4 > %t/every.log
// RUN: ls %t/every | FileCheck %s --check-prefix=EVERY
// EVERY: latest
// EVERY-NEXT: step-00000004
// EVERY-NEXT: step-00000008
// EVERY-NEXT: step-00000010
// RUN: dtc-run %t/one --data %t/tokens.npy --steps 10 --resume %t/every/step-00000008 --dump %t/from8 > /dev/null
// RUN: %python %S/../Utils/compare_resumed.py %t/full %t/from8 --from 8 --exact | FileCheck %s

// Data parallelism over 2 ranks reads the same windows (each rank its row
// of the global batch): the losses of the one-device run. Its checkpoint
// at step 5 resumes on one device (the whole values assembled from the two
// ranks' parts), and the one-device checkpoint on dp=2 with ZeRO-2 and on
// tp=2: each continues with the uninterrupted run's losses and parameters.
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/dp2 --lr 0.01 --eps 1e-3 --mesh dp=2 --bucket-mb 0
// RUN: %mpirun -np 2 dtc-run %t/dp2 --data %t/tokens.npy --steps 10 --dump %t/dp2-full > /dev/null
// RUN: %python %S/../Utils/compare_resumed.py %t/full %t/dp2-full --from 0 --rtol 1e-4 | FileCheck %s
// RUN: %mpirun -np 2 dtc-run %t/dp2 --data %t/tokens.npy --steps 5 --save %t/dp2-ckpt > /dev/null
// RUN: ls %t/dp2-ckpt/step-00000005 | FileCheck %s --check-prefix=RANKS
// RANKS: metadata.json
// RANKS-NEXT: rank-0
// RANKS-NEXT: rank-1
// RANKS-NEXT: signature.txt
// RANKS-NEXT: state.txt
// RUN: %mpirun -np 2 dtc-run %t/dp2 --data %t/tokens.npy --steps 10 --resume %t/dp2-ckpt --dump %t/dp2-resumed > /dev/null
// RUN: %python %S/../Utils/compare_resumed.py %t/dp2-full %t/dp2-resumed --from 5 --exact | FileCheck %s
// RUN: dtc-run %t/one --data %t/tokens.npy --steps 10 --resume %t/dp2-ckpt --dump %t/dp2-to-one > /dev/null
// RUN: %python %S/../Utils/compare_resumed.py %t/full %t/dp2-to-one --from 5 --rtol 1e-4 | FileCheck %s
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/z2 --lr 0.01 --eps 1e-3 --mesh dp=2 --zero 2 --bucket-mb 0
// RUN: %mpirun -np 2 dtc-run %t/z2 --data %t/tokens.npy --steps 10 --resume %t/ckpt --dump %t/one-to-z2 > /dev/null
// RUN: %python %S/../Utils/compare_resumed.py %t/full %t/one-to-z2 --from 5 --rtol 1e-4 | FileCheck %s
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/tp2 --lr 0.01 --eps 1e-3 --mesh tp=2
// RUN: %mpirun -np 2 dtc-run %t/tp2 --data %t/tokens.npy --steps 10 --resume %t/ckpt --dump %t/one-to-tp2 > /dev/null
// RUN: %python %S/../Utils/compare_resumed.py %t/full %t/one-to-tp2 --from 5 --rtol 1e-4 | FileCheck %s

// The layouts the issue names, on GPT-2 (hf5, batch 4 x 8): a dp=4 ZeRO-2
// checkpoint resumed on dp=2 x tp=2 and on one device.
// RUN: %python -c "import numpy as n; n.save('%t/gpt2-tokens.npy', (n.arange(5001) * 3 % 64).astype(n.uint16))"
// RUN: dtc-compile %S/Inputs/hf5/gpt2-names/model.onnx -o %t/gpt2-z2 --lr 0.01 --eps 1e-3 --mesh dp=4 --zero 2
// RUN: dtc-compile %S/Inputs/hf5/gpt2-names/model.onnx -o %t/gpt2-dt --lr 0.01 --eps 1e-3 --mesh dp=2,tp=2
// RUN: dtc-compile %S/Inputs/hf5/gpt2-names/model.onnx -o %t/gpt2-one --lr 0.01 --eps 1e-3
// RUN: %mpirun -np 4 dtc-run %t/gpt2-z2 --data %t/gpt2-tokens.npy --steps 10 --dump %t/gpt2-full > /dev/null
// RUN: %mpirun -np 4 dtc-run %t/gpt2-z2 --data %t/gpt2-tokens.npy --steps 5 --save %t/gpt2-ckpt > /dev/null
// RUN: %mpirun -np 4 dtc-run %t/gpt2-dt --data %t/gpt2-tokens.npy --steps 10 --resume %t/gpt2-ckpt --dump %t/gpt2-to-dt > /dev/null
// RUN: %python %S/../Utils/compare_resumed.py %t/gpt2-full %t/gpt2-to-dt --from 5 --rtol 1e-4 | FileCheck %s
// RUN: dtc-run %t/gpt2-one --data %t/gpt2-tokens.npy --steps 10 --resume %t/gpt2-ckpt --dump %t/gpt2-to-one > /dev/null
// RUN: %python %S/../Utils/compare_resumed.py %t/gpt2-full %t/gpt2-to-one --from 5 --rtol 1e-4 | FileCheck %s

// SIGTERM (sent once step 3 is printed): the run finishes the step it is
// in, writes a checkpoint and stops; resumed, it continues as the
// uninterrupted run did.
// RUN: dtc-run %t/one --data %t/tokens.npy --steps 150 --dump %t/full150 > /dev/null
// RUN: %python %S/../Utils/signal_after.py "step     3/" -- dtc-run %t/one --data %t/tokens.npy --steps 150 --log-every 1 --save %t/term | FileCheck %s --check-prefix=TERM
// TERM: step     3/{{150|600}}
// TERM: checkpoint: step {{[0-9]+}} saved in {{.*}}term
// TERM-NEXT: stopped by SIGTERM after step {{[0-9]+}}
// RUN: dtc-run %t/one --data %t/tokens.npy --steps 150 --resume %t/term --dump %t/term-resumed > /dev/null
// RUN: %python %S/../Utils/compare_resumed.py %t/full150 %t/term-resumed --from %t/term --exact | FileCheck %s
// The same under mpirun, which forwards SIGTERM to both ranks: they agree
// to stop after the same step, and the checkpoint resumes. (mpirun kills
// its ranks at once when told to stop in its first moments, and a rank
// blocked writing output it no longer reads cannot stop in time: the
// signal waits 2 seconds, and the run prints a line every 200 steps.)
// RUN: %python %S/../Utils/signal_after.py "step" --seconds 2 --any-status -- %mpirun -np 2 dtc-run %t/dp2 --data %t/tokens.npy --steps 1000000 --log-every 200 --save %t/dp2-term | FileCheck %s --check-prefix=MPITERM
// MPITERM: checkpoint: step [[K:[0-9]+]] saved in {{.*}}dp2-term
// MPITERM-NEXT: stopped by SIGTERM after step [[K]]
// RUN: %python %S/../Utils/resume_steps.py %t/dp2-term 3 -- %mpirun -np 2 dtc-run %t/dp2 --data %t/tokens.npy | FileCheck %s --check-prefix=MPIRESUMED
// MPIRESUMED: step {{ *[0-9]+}}/{{[0-9]+}}  loss
// MPIRESUMED: rank 1 throughput

// Bad input, one line each: a truncated part, a checkpoint never completed,
// no checkpoint, nothing left to train, a file shorter than one window, a
// token outside the vocabulary (its offsets named), no data at all.
// RUN: cp -r %t/ckpt %t/truncated && truncate -s 100 %t/truncated/step-00000005/rank-0/arg1.npy
// RUN: not dtc-run %t/one --data %t/tokens.npy --steps 10 --resume %t/truncated 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// TRUNCATED: error: the checkpoint is damaged: {{.*}}truncated/step-00000005/rank-0/arg1.npy: not a valid .npy file: {{.*}}
// TRUNCATED-NOT: func.func
// A checkpoint is refused whole, even where the new layout reads only some
// of its parts (one device reads rank 0's of a dp=2 checkpoint's
// replicated parameters): a part truncated, missing or too long.
// RUN: cp -r %t/dp2-ckpt %t/dp2-damaged && truncate -s 100 %t/dp2-damaged/step-00000005/rank-1/arg5.npy
// RUN: not dtc-run %t/one --data %t/tokens.npy --steps 10 --resume %t/dp2-damaged 2>&1 | FileCheck %s --check-prefix=DAMAGED-TRUNCATED
// DAMAGED-TRUNCATED: error: the checkpoint is damaged: {{.*}}dp2-damaged/step-00000005/rank-1/arg5.npy: not a valid .npy file: {{.*}} ({{.+}})
// RUN: %python -c "import numpy as n; n.save('%t/dp2-damaged/step-00000005/rank-1/arg5.npy', n.zeros(3, n.float32))"
// RUN: not dtc-run %t/one --data %t/tokens.npy --steps 10 --resume %t/dp2-damaged 2>&1 | FileCheck %s --check-prefix=DAMAGED-SHAPE
// DAMAGED-SHAPE: error: the checkpoint is damaged: {{.*}}rank-1/arg5.npy: it holds {{[0-9x]+}} of <f4, not the {{[0-9x]+}} its signature says
// RUN: head -c -4 %t/dp2-ckpt/step-00000005/rank-0/arg1.npy > %t/short-arg1.npy && cat %t/short-arg1.npy %t/short-arg1.npy > %t/dp2-damaged/step-00000005/rank-0/arg1.npy
// RUN: cp %t/dp2-ckpt/step-00000005/rank-1/arg5.npy %t/dp2-damaged/step-00000005/rank-1/arg5.npy
// RUN: not dtc-run %t/one --data %t/tokens.npy --steps 10 --resume %t/dp2-damaged 2>&1 | FileCheck %s --check-prefix=DAMAGED-LONG
// DAMAGED-LONG: error: the checkpoint is damaged: {{.*}}rank-0/arg1.npy: it holds {{[0-9]+}} data bytes, not the {{[0-9]+}} of {{[0-9x]+}} of <f4 (wte.weight)
// RUN: cp %t/dp2-ckpt/step-00000005/rank-0/arg1.npy %t/dp2-damaged/step-00000005/rank-0/arg1.npy && rm -r %t/dp2-damaged/step-00000005/rank-1
// RUN: not dtc-run %t/one --data %t/tokens.npy --steps 10 --resume %t/dp2-damaged 2>&1 | FileCheck %s --check-prefix=DAMAGED-MISSING
// DAMAGED-MISSING: error: the checkpoint is damaged: {{.*}}rank-1/arg1.npy: No such file or directory (wte.weight)
// On a mesh the first rank that fails says why, once, and the ranks end
// without an abort (mpirun --quiet: without its own lines on exit codes).
// RUN: not %mpirun --quiet -np 2 dtc-run %t/dp2 --data %t/tokens.npy --steps 10 --resume %t/dp2-damaged > %t/mesh-error.txt 2>&1
// RUN: FileCheck %s --check-prefix=DAMAGED-MESH < %t/mesh-error.txt
// DAMAGED-MESH: error: the checkpoint is damaged: {{.*}}rank-1/arg1.npy: No such file or directory (wte.weight)
// RUN: %python -c "import sys; print(len(open(sys.argv[1]).read().splitlines()), 'line')" %t/mesh-error.txt | FileCheck %s --check-prefix=ONE-LINE
// ONE-LINE: 1 line
// RUN: mv %t/truncated/step-00000005 %t/truncated/step-00000005.partial
// RUN: not dtc-run %t/one --data %t/tokens.npy --steps 10 --resume %t/truncated/step-00000005.partial 2>&1 | FileCheck %s --check-prefix=PARTIAL
// PARTIAL: error: '{{.*}}step-00000005.partial' is a checkpoint that was never completed
// RUN: not dtc-run %t/one --data %t/tokens.npy --steps 10 --resume %t 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: error: '{{.*}}' holds no checkpoint (neither a 'latest' file nor state.txt)
// RUN: not dtc-run %t/one --data %t/tokens.npy --steps 5 --resume %t/ckpt 2>&1 | FileCheck %s --check-prefix=DONE
// DONE: error: the checkpoint '{{.*}}step-00000005' is at step 5: --steps 5 leaves nothing to train (--steps counts from the start of the run)
// RUN: not dtc-run %t/one --data %t/short.npy --steps 1 2>&1 | FileCheck %s --check-prefix=SHORT
// SHORT: error: the data file '{{.*}}short.npy' holds 8 tokens, fewer than one window of 9 (the compiled sequence length plus the next token)
// RUN: not dtc-run %t/one --data %t/big.npy --steps 1 2>&1 | FileCheck %s --check-prefix=VOCAB
// VOCAB: error: the data file '{{.*}}big.npy' holds token 64 at token offset {{[0-9]+}} (byte {{[0-9]+}}), outside the vocabulary [0, 64)
// RUN: not dtc-run %t/one --steps 1 2>&1 | FileCheck %s --check-prefix=NODATA
// NODATA: error: training needs --data FILE (a token file) or --batch DIR (the inputs and labels of every step)
// RUN: not dtc-run %t/one --data %t/tokens.npy --save-every 2 2>&1 | FileCheck %s --check-prefix=EVERYNEEDS
// EVERYNEEDS: error: --save-every needs --save DIR
// Another --data file (of another length) on resume gets a warning:
// RUN: %python -c "import numpy as n; n.save('%t/other.npy', (n.arange(2001) * 3 % 64).astype(n.uint16))"
// RUN: dtc-run %t/one --data %t/other.npy --steps 6 --resume %t/ckpt 2>&1 >/dev/null | FileCheck %s --check-prefix=OTHERDATA
// OTHERDATA: warning: --data '{{.*}}other.npy' holds 2001 tokens; the checkpoint was trained on 3001: from step 6 on, the run reads other windows than the uninterrupted one did
// A resumed run keeps its checkpoint's data order, starts from its
// checkpoint only, and refuses another optimizer's state:
// RUN: not dtc-run %t/one --data %t/tokens.npy --steps 10 --resume %t/ckpt --data-seed 9 2>&1 | FileCheck %s --check-prefix=RESEED
// RESEED: error: --data-seed 9: the checkpoint '{{.*}}step-00000005' was trained on the windows of seed 0, which a resumed run goes on with (leave --data-seed out)
// RUN: not dtc-run %t/one --data %t/tokens.npy --steps 10 --resume %t/ckpt --init %t/full/param 2>&1 | FileCheck %s --check-prefix=REINIT
// REINIT: error: --init and --resume both give the starting parameters: a resumed run starts from its checkpoint
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/sgd --optimizer sgd --momentum 0.9
// RUN: not dtc-run %t/sgd --data %t/tokens.npy --steps 10 --resume %t/ckpt 2>&1 | FileCheck %s --check-prefix=OPTIMIZER
// OPTIMIZER: error: the checkpoint '{{.*}}step-00000005' holds optimizer state exp_avg, exp_avg_sq; this step's optimizer keeps momentum_buffer: it was written by another optimizer (to start this one afresh from its parameters, export them with --export-checkpoint and give them to --init)
