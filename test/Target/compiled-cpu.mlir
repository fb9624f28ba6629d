// dtc-compile --target cpu: GPT-2's step as a compiled per-rank program,
// run by dtc-launch (which dtc-run starts), checked against the reference
// executor, run to run, with the arena poisoned, and on bad input.
// RUN: rm -rf %t && mkdir -p %t
// RUN: dtc-compile %S/../Integration/Inputs/hf5/gpt2-names/model.onnx -o %t/gpt2 --lr 0.01 --target cpu 2>&1 | FileCheck %s --check-prefix=COMPILE
// COMPILE: dtc-compile: compiling the step for CPU ranks
// COMPILE: dtc-compile: wrote {{.*}}/program.txt and {{.*}}/kernels.so
// RUN: FileCheck %s --check-prefix=PROGRAM < %t/gpt2/program.txt
// PROGRAM: dtc-cpu-program 3
// PROGRAM-NEXT: abi 1
// PROGRAM: argument role=input name=ids dtype=i64 shape=4x8
// PROGRAM: argument role=parameter name=m.transformer.wpe.weight trainable=1 dtype=f32 shape=32x32 alias=
// PROGRAM: arena {{[0-9]+}}
// PROGRAM: kernel sym=dtc_kernel_{{[0-9]+}} op={{[a-z_]+}}:{{[a-z_+.]+}} {{(rows=[0-9]+ work=[0-9]+ )?}}args=
// Kernels whose rows threads may share say how many, and the elements they
// compute: the first layer norm, one row kernel with the embeddings' sum
// before it, on 4x8 tokens (32 rows) of 32 values: two passes over each
// row for its statistics (the mean, the variance: 2 x 1024 elements), then
// the output (1024) and the 32 1 / deviations the backward reads.
// PROGRAM: kernel sym=dtc_kernel_{{[0-9]+}} op=row_reduction:add+reduce_mean+sub+mul+... rows=32 work=3104 args=
// PROGRAM: gemm ta=0 tb=0 lhs=m{{[0-9]+}}:f32:32x32 rhs=a4:f32:32x96 out=m{{[0-9]+}}:f32:32x96
// PROGRAM: dead at=m{{[0-9]+}} bytes=
// The kernels' library needs libm and libc only; the launcher no LLVM or MLIR.
// RUN: ldd %t/gpt2/kernels.so | FileCheck %s --check-prefix=LDD
// LDD-NOT: {{[Ll][Ll][Vv][Mm]|MLIR}}
// LDD: libc.so
// LDD-NOT: {{[Ll][Ll][Vv][Mm]|MLIR}}
// RUN: ls %t/gpt2/init | FileCheck %s --check-prefix=INIT
// INIT: arg1.npy

// Compiled (dtc-run starts dtc-launch), against the reference executor on
// the same OUT: loss 1e-5, gradients 1e-4, updates 1e-3 relative.
// RUN: dtc-run %t/gpt2 --batch %S/../Integration/Inputs/hf5/gpt2-names/batch --steps 3 --dump %t/cpu | FileCheck %s --check-prefix=TRAIN
// TRAIN-COUNT-3: step {{ *[0-9]}}/3 loss
// TRAIN: peak intermediate memory: [[ARENA:[0-9]+]] B (planned [[ARENA]] B)
// TRAIN: throughput: {{[0-9]+}} tokens/s
// RUN: dtc-run %t/gpt2 --engine reference --batch %S/../Integration/Inputs/hf5/gpt2-names/batch --steps 3 --dump %t/ref > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/cpu %t/ref %S/../Integration/Inputs/hf5/gpt2-names/initial --mask-from %S/../Integration/Inputs/hf5/gpt2-names/adamw | FileCheck %s --check-prefix=SAME
// SAME: 0 failed
// Bit-identical from run to run, and with every arena slot filled with NaN
// once its last reader has run (the plan lets no two live values share bytes).
// RUN: dtc-launch %t/gpt2 --batch %S/../Integration/Inputs/hf5/gpt2-names/batch --steps 3 --dump %t/again > /dev/null
// RUN: dtc-run %t/gpt2 --check-arena --batch %S/../Integration/Inputs/hf5/gpt2-names/batch --steps 3 --dump %t/poisoned > /dev/null
// RUN: cmp %t/cpu/loss.npy %t/again/loss.npy
// RUN: cmp %t/cpu/loss.npy %t/poisoned/loss.npy
// RUN: cmp %t/cpu/param/m.lm_head.weight.npy %t/again/param/m.lm_head.weight.npy
// RUN: cmp %t/cpu/param/m.lm_head.weight.npy %t/poisoned/param/m.lm_head.weight.npy
// And on 2 and 3 threads, every kernel that can be shared among them (each
// thread computes fixed rows), more threads than cores included.
// RUN: dtc-launch %t/gpt2 --threads 2 --min-work-per-thread 1 --batch %S/../Integration/Inputs/hf5/gpt2-names/batch --steps 3 --dump %t/threads2 > /dev/null
// RUN: dtc-launch %t/gpt2 --threads 3 --min-work-per-thread 1 --batch %S/../Integration/Inputs/hf5/gpt2-names/batch --steps 3 --dump %t/threads3 > /dev/null
// RUN: cmp %t/cpu/loss.npy %t/threads2/loss.npy
// RUN: cmp %t/cpu/loss.npy %t/threads3/loss.npy
// RUN: cmp %t/cpu/grad/m.lm_head.weight.npy %t/threads2/grad/m.lm_head.weight.npy
// RUN: cmp %t/cpu/param/m.transformer.h.0.attn.c_attn.weight.npy %t/threads3/param/m.transformer.h.0.attn.c_attn.weight.npy
// RUN: not dtc-launch %t/gpt2 --threads 2 --min-work-per-thread 0 2>&1 | FileCheck %s --check-prefix=MINWORK
// MINWORK: error: --min-work-per-thread is '0': it must be an integer of at least 1
// The check can fail: a plan that frees the first matmul's output before
// its readers run gives a NaN loss under --check-arena, which stops the
// run (and the right one without).
// RUN: cp -r %t/gpt2 %t/broken && sed -i -E '0,/^(gemm .* out=(m[0-9]+):f32:32x96)$/s//\1\ndead at=\2 bytes=12288/' %t/broken/program.txt
// RUN: not dtc-launch %t/broken --check-arena --batch %S/../Integration/Inputs/hf5/gpt2-names/batch --steps 1 2>&1 | FileCheck %s --check-prefix=BROKEN
// BROKEN: error: step 1: the loss is nan; the first non-finite result: the gradient of
// RUN: dtc-launch %t/broken --batch %S/../Integration/Inputs/hf5/gpt2-names/batch --steps 1 | FileCheck %s --check-prefix=UNCHECKED
// UNCHECKED: step 1/1 loss 4.16

// Bad input: another program format, a buffer outside the program's, a
// missing library, a reference-only
// OUT asked to run compiled, --check-arena without a compiled program, an
// unknown target. (An op with no kernel is refused by name:
// unittests/Conversion/KernelTest.cpp.)
// RUN: cp -r %t/gpt2 %t/stale && sed -i '1s/.*/dtc-cpu-program 99/' %t/stale/program.txt
// RUN: not dtc-run %t/stale --batch %S/../Integration/Inputs/hf5/gpt2-names/batch 2>&1 | FileCheck %s --check-prefix=STALE
// STALE: error: '{{.*}}/program.txt' is a compiled program of format 99, this dtc-launch runs format 3: recompile the model with this dtc-compile
// RUN: cp -r %t/gpt2 %t/corrupt && sed -i '0,/rhs=a4:/s//rhs=a999:/' %t/corrupt/program.txt
// RUN: not dtc-launch %t/corrupt --batch %S/../Integration/Inputs/hf5/gpt2-names/batch 2>&1 | FileCheck %s --check-prefix=CORRUPT
// CORRUPT: error: {{.*}}/program.txt: a 'gemm' thunk names a buffer outside the program's: recompile
// RUN: cp -r %t/gpt2 %t/nolib && rm %t/nolib/kernels.so
// RUN: not dtc-launch %t/nolib --batch %S/../Integration/Inputs/hf5/gpt2-names/batch 2>&1 | FileCheck %s --check-prefix=NOLIB
// NOLIB: error: cannot load '{{.*}}/kernels.so'
// RUN: dtc-compile %S/../Integration/Inputs/hf5/gpt2-names/model.onnx -o %t/ref-only --lr 0.01 2> /dev/null
// RUN: not dtc-run %t/ref-only --engine cpu --batch %S/../Integration/Inputs/hf5/gpt2-names/batch 2>&1 | FileCheck %s --check-prefix=NOCPU
// NOCPU: error: {{.*}}ref-only holds no compiled program: compile with dtc-compile --target cpu, or run --engine reference
// RUN: not dtc-run %t/ref-only --check-arena --batch %S/../Integration/Inputs/hf5/gpt2-names/batch 2>&1 | FileCheck %s --check-prefix=NOARENA
// NOARENA: error: --check-arena checks a compiled program's arena; the reference executor has none
// RUN: not dtc-compile %S/../Integration/Inputs/hf5/gpt2-names/model.onnx -o %t/x --target gpu 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: error: unknown --target 'gpu' (reference, cpu, cuda)
// A program compiled from shapes alone (as a GPU-sized model is, its
// weights never read) trains from --init or --init-random: with a zero
// learning rate the parameters after a step are the drawn ones, matrices
// of std 0.02, biases zero, norm scales one.
// RUN: dtc-compile %S/../Integration/Inputs/hf5/gpt2-names/model.onnx -o %t/shapes --shapes-only --lr 0 --weight-decay 0 --target cpu 2> /dev/null
// RUN: not dtc-run %t/shapes --batch %S/../Integration/Inputs/hf5/gpt2-names/batch 2>&1 | FileCheck %s --check-prefix=SHAPES
// SHAPES: error: no value for parameter
// RUN: dtc-run %t/shapes --batch %S/../Integration/Inputs/hf5/gpt2-names/batch --init-random 5 --dump %t/shapes-dump | FileCheck %s --check-prefix=SHAPES-TRAIN
// SHAPES-TRAIN: step 1/1 loss 4.
// RUN: %python -c "import numpy as np, glob, sys; p = {f.split('/')[-1][:-4]: np.load(f) for f in glob.glob(sys.argv[1] + '/param/*.npy')}; m = [v for v in p.values() if v.ndim == 2]; print(len(m), all(0.019 < v.std() < 0.021 and abs(v.mean()) < 2e-3 for v in m), all((v == 0).all() for k, v in p.items() if v.ndim == 1 and k.endswith('bias')), all((v == 1).all() for k, v in p.items() if v.ndim == 1 and not k.endswith('bias')))" %t/shapes-dump | FileCheck %s --check-prefix=SHAPES-DRAWN
// SHAPES-DRAWN: {{[1-9][0-9]*}} True True True
// A Chrome trace of every thunk, a track per rank (dp=2 here: each rank
// multiplies its 2 x 8 tokens by the 32 x 96 QKV weight, a 16x96x32 GEMM):
// RUN: dtc-compile %S/../Integration/Inputs/hf5/gpt2-names/model.onnx -o %t/dp2 --lr 0.01 --mesh dp=2 --target cpu 2> /dev/null
// RUN: %mpirun -np 2 dtc-run %t/dp2 --batch %S/../Integration/Inputs/hf5/gpt2-names/batch --steps 2 --trace %t/trace.json > /dev/null
// RUN: %python -c "import json, sys; t = json.load(open(sys.argv[1]))['traceEvents']; x = [e for e in t if e['ph'] == 'X']; print(sorted({e['pid'] for e in x}), sorted({e['cat'] for e in x}), all(e['dur'] >= 0 for e in x))" %t/trace.json | FileCheck %s --check-prefix=TRACE
// TRACE: [0, 1] ['blas', 'collective', 'kernel'] True
// RUN: FileCheck %s --check-prefix=NAMES < %t/trace.json
// NAMES-DAG: "name": "rank 1"
// NAMES-DAG: "name": "row_reduction:{{[^"]*}}", "cat": "kernel"
// NAMES-DAG: "name": "multi_tensor:
// NAMES-DAG: "name": "gemm 16x96x32", "cat": "blas"
// NAMES-DAG: "name": "all_reduce #{{[0-9]+}}", "cat": "collective"

// Collectives run on the buffers themselves. A gradient bucket's all-reduce
// starts where its last gradient is computed and is waited for just before
// its first reader (the bucket's unpacking is moved down to the optimizer),
// so the rest of the backward pass overlaps it; it reduces in the buffer
// its bucket was packed in (nothing else reads that). Each bucket's parameters
// are updated by their own multi-tensor kernel, the buckets in the order
// their all-reduces started: the step waits for the first one started
// first, and updates its parameters while the later ones are in flight.
// RUN: dtc-compile %S/../Integration/Inputs/hf5/gpt2-names/model.onnx -o %t/buckets --lr 0.01 --mesh dp=2 --bucket-mb 0.02 --target cpu 2> /dev/null
// RUN: FileCheck %s --check-prefix=ASYNC < %t/buckets/program.txt
// ASYNC: all_reduce kind=sum axes=dp in=[[BUCKET:m[0-9]+]]:f32:4320 out=[[BUCKET]]:f32:4320 {{.*}}async=[[FIRST:[0-9]+]]
// ASYNC: all_reduce kind=sum axes=dp in=m{{[0-9]+}}:f32:5216 out=m{{[0-9]+}}:f32:5216 {{.*}}async=[[SECOND:[0-9]+]]
// ASYNC: gemm
// ASYNC-NOT: wait req=
// ASYNC: wait req=[[FIRST]]
// ASYNC-NOT: wait req=
// ASYNC: kernel sym={{.*}} op=multi_tensor:
// ASYNC-NEXT: wait req=[[SECOND]]
// ASYNC-NOT: wait req=
// ASYNC: kernel sym={{.*}} op=multi_tensor:
// Against the reference executor on the same OUT, and with the arena
// poisoned (an operand freed while its all-reduce is in flight would show).
// RUN: %mpirun -np 2 dtc-run %t/buckets --batch %S/../Integration/Inputs/hf5/gpt2-names/batch --steps 3 --dump %t/bcpu > /dev/null
// RUN: %mpirun -np 2 dtc-run %t/buckets --check-arena --batch %S/../Integration/Inputs/hf5/gpt2-names/batch --steps 3 --dump %t/bpoisoned > /dev/null
// RUN: %mpirun -np 2 dtc-run %t/buckets --engine reference --batch %S/../Integration/Inputs/hf5/gpt2-names/batch --steps 3 --dump %t/bref > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/bcpu %t/bref %S/../Integration/Inputs/hf5/gpt2-names/initial --mask-from %S/../Integration/Inputs/hf5/gpt2-names/adamw | FileCheck %s --check-prefix=SAME
// RUN: cmp %t/bcpu/loss.npy %t/bpoisoned/loss.npy
// RUN: cmp %t/bcpu/param/m.lm_head.weight.npy %t/bpoisoned/param/m.lm_head.weight.npy
// Without overlap (each collective completes where the program starts it)
// the trajectory is the same; the report and the metrics give each rank's
// exposed communication, the time its step spent on collectives.
// RUN: %mpirun -np 2 dtc-run %t/buckets --no-overlap --batch %S/../Integration/Inputs/hf5/gpt2-names/batch --steps 3 --dump %t/bserial --metrics %t/bserial.jsonl | FileCheck %s --check-prefix=EXPOSED
// EXPOSED: rank 0 per step: {{[0-9.]+}} s, all_reduce 8 calls
// EXPOSED: rank 0 exposed communication: {{[0-9.]+}} s per step
// EXPOSED-NEXT: rank 1 exposed communication: {{[0-9.]+}} s per step
// RUN: cmp %t/bcpu/loss.npy %t/bserial/loss.npy
// RUN: cmp %t/bcpu/param/m.lm_head.weight.npy %t/bserial/param/m.lm_head.weight.npy
// RUN: %python -c "import json, sys; r = [json.loads(l) for l in open(sys.argv[1])]; print(len(r), [len(x['exposed_comm_seconds']) for x in r], all(min(x['exposed_comm_seconds']) > 0 for x in r))" %t/bserial.jsonl | FileCheck %s --check-prefix=METRICS
// METRICS: 3 [2, 2, 2] True
// Under ZeRO-2 the buckets' reduce-scatters start alike; each reads its
// operand (the bucket of whole gradients) until its wait, so that operand
// dies only after the wait, which comes before the next reduce-scatter at
// the latest (one bucket in flight). The poisoned arena would show an
// operand freed too early.
// RUN: dtc-compile %S/../Integration/Inputs/hf5/gpt2-names/model.onnx -o %t/zero2 --lr 0.01 --mesh dp=2 --zero 2 --bucket-mb 0.02 --target cpu 2> /dev/null
// RUN: FileCheck %s --check-prefix=ZASYNC < %t/zero2/program.txt
// ZASYNC: reduce_scatter axes=dp dim=0 in=[[IN:m[0-9]+]]:f32:2x{{[0-9]+}} out=m{{[0-9]+}}:f32:1x{{[0-9]+}} {{.*}}async=[[REQ:[0-9]+]]
// ZASYNC-NOT: dead at=[[IN]] bytes
// ZASYNC-NOT: reduce_scatter
// ZASYNC: wait req=[[REQ]]
// ZASYNC: dead at=[[IN]] bytes
// ZASYNC: reduce_scatter axes=dp dim=0 {{.*}}async=
// RUN: %mpirun -np 2 dtc-run %t/zero2 --batch %S/../Integration/Inputs/hf5/gpt2-names/batch --steps 3 --dump %t/zcpu > /dev/null
// RUN: %mpirun -np 2 dtc-run %t/zero2 --check-arena --batch %S/../Integration/Inputs/hf5/gpt2-names/batch --steps 3 --dump %t/zpoisoned > /dev/null
// RUN: %mpirun -np 2 dtc-run %t/zero2 --engine reference --batch %S/../Integration/Inputs/hf5/gpt2-names/batch --steps 3 --dump %t/zref > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/zcpu %t/zref %S/../Integration/Inputs/hf5/gpt2-names/initial --mask-from %S/../Integration/Inputs/hf5/gpt2-names/adamw | FileCheck %s --check-prefix=SAME
// RUN: cmp %t/zcpu/loss.npy %t/zpoisoned/loss.npy
// RUN: cmp %t/zcpu/param/m.lm_head.weight.npy %t/zpoisoned/param/m.lm_head.weight.npy
// Under ZeRO-3 each parameter bucket's all-gather but the first moves up,
// with the concat packing its shards, to just after the first reader of
// the gather before it; it starts there and is waited for before its own
// first reader, so that it overlaps the compute of the bucket before (one
// bucket ahead: h.1's parameters are gathered while h.0 computes).
// RUN: dtc-compile %S/../Integration/Inputs/hf5/gpt2-names/model.onnx -o %t/zero3 --lr 0.01 --mesh dp=2 --zero 3 --target cpu 2> /dev/null
// RUN: FileCheck %s --check-prefix=PREFETCH < %t/zero3/program.txt
// PREFETCH: all_gather axes=dp dim=0 {{.*}}parameter%20bucket%203%20of%208{{.*}}h.1.ln_1.weight{{.*}} async=[[REQ:[0-9]+]]
// PREFETCH-COUNT-8: kernel sym=
// PREFETCH: wait req=[[REQ]]
// RUN: %mpirun -np 2 dtc-run %t/zero3 --batch %S/../Integration/Inputs/hf5/gpt2-names/batch --steps 3 --dump %t/z3cpu > /dev/null
// RUN: %mpirun -np 2 dtc-run %t/zero3 --check-arena --batch %S/../Integration/Inputs/hf5/gpt2-names/batch --steps 3 --dump %t/z3poisoned > /dev/null
// RUN: %mpirun -np 2 dtc-run %t/zero3 --engine reference --batch %S/../Integration/Inputs/hf5/gpt2-names/batch --steps 3 --dump %t/z3ref > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/z3cpu %t/z3ref %S/../Integration/Inputs/hf5/gpt2-names/initial --mask-from %S/../Integration/Inputs/hf5/gpt2-names/adamw | FileCheck %s --check-prefix=SAME
// RUN: cmp %t/z3cpu/loss.npy %t/z3poisoned/loss.npy
// RUN: cmp %t/z3cpu/param/m.lm_head.weight.npy %t/z3poisoned/param/m.lm_head.weight.npy
// A wait for nothing started, a started collective never waited for:
// RUN: cp -r %t/buckets %t/nowait && sed -i '0,/^wait req=.*$/s///' %t/nowait/program.txt
// RUN: not dtc-launch %t/nowait --batch %S/../Integration/Inputs/hf5/gpt2-names/batch 2>&1 | FileCheck %s --check-prefix=NOWAIT
// NOWAIT: error: {{.*}}/program.txt: collective request {{[0-9]+}} is never waited for
// RUN: cp -r %t/buckets %t/badwait && sed -i '0,/^wait req=.*$/s//wait req=77/' %t/badwait/program.txt
// RUN: not dtc-launch %t/badwait --batch %S/../Integration/Inputs/hf5/gpt2-names/batch 2>&1 | FileCheck %s --check-prefix=BADWAIT
// BADWAIT: error: {{.*}}/program.txt:{{[0-9]+}}: a wait for no started collective

// bf16 with dropout: the kernels narrow the f64 dropped value through f32,
// as the reference executor rounds (a direct f64 -> bf16 truncation left
// kernels.so an undefined libgcc symbol, __truncdfbf2).
// RUN: dtc-compile %S/../Integration/Inputs/remat/gpt4/model.onnx -o %t/drop-bf16 --lr 0.01 --dropout --seed 7 --precision bf16 --target cpu 2> /dev/null
// RUN: dtc-run %t/drop-bf16 --batch %S/../Integration/Inputs/remat/gpt4/batch --steps 3 --dump %t/drop-bf16-cpu > /dev/null
// RUN: dtc-run %t/drop-bf16 --engine reference --batch %S/../Integration/Inputs/remat/gpt4/batch --steps 3 --dump %t/drop-bf16-ref > /dev/null
// RUN: %python %S/../Utils/compare_npy.py %t/drop-bf16-cpu/loss.npy %t/drop-bf16-ref/loss.npy --rtol 1.6e-2 --atol 0
