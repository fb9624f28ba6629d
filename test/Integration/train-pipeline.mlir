// Pipeline stages (dtc-compile --mesh pp=P --microbatches M
// --pipeline-schedule S): the batch of 4 streams through the stages as M
// microbatches in each schedule's order, and three AdamW steps match
// PyTorch's on the whole batch (Inputs/<model>/b4/adamw).
// Under --param dtc_target=cpu every step here but the one --trace times
// (the reference executor's fragments) is compiled for CPU ranks: one
// program per pp coordinate.
// RUN: rm -rf %t
//
// Every schedule at pp=2 with M=2P (interleaved and ZBV cut the model into
// four stages: two per rank, in turn or in a V):
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/gpipe --lr 0.01 --weight-decay 0.01 --mesh pp=2 --microbatches 4 --pipeline-schedule gpipe
// RUN: FileCheck %s --check-prefix=IR < %t/gpipe/train_step.mlir
// IR: dtc.pipeline = {{{.*}}axis = "pp"{{.*}}microbatches = 4 : i64, schedule = "gpipe"{{.*}}stage_ranks = array<i64: 0, 1>, virtual_stages = 1 : i64}
// IR: dtc.collective_broadcast {{.*}} on @mesh axes = ["pp"] root = 0 {reason = "pipeline: stage 0's value"}
// The report simulates the schedule on the stages' roofline times: one
// transfer each way per stage boundary and microbatch (2 (P-1) M), and a
// timeline with a forward and a backward span per stage and microbatch:
// RUN: FileCheck %s --check-prefix=REPORT < %t/gpipe/report.json
// REPORT: "pipeline": {
// REPORT: "max_bubble_fraction":
// REPORT: "transfers_per_step": 8
// REPORT: "schedule": "gpipe",
// REPORT: "trace": "schedule.trace.json",
// RUN: %python -c "import json, sys; print(sum(e['ph'] == 'X' for e in json.load(open(sys.argv[1]))['traceEvents']), 'spans')" %t/gpipe/schedule.trace.json | FileCheck %s --check-prefix=TRACE
// TRACE: 16 spans
// RUN: %mpirun -np 2 dtc-run %t/gpipe --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/gpipe-dump
// RUN: %python %S/../Utils/compare_training.py %t/gpipe-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/1f1b --lr 0.01 --weight-decay 0.01 --mesh pp=2 --microbatches 4 --target reference
// RUN: %mpirun -np 2 dtc-run %t/1f1b --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/1f1b-dump --trace %t/1f1b-measured.json | FileCheck %s --check-prefix=MEASURED
// dtc-run --trace times each fragment of the last step as the ranks run it
// and feeds the measured means to the simulator (bench/pipeline_bubble.py
// compares the two bubbles on fragments long enough to time):
// MEASURED: pipeline 1f1b over pp=2, 4 microbatches, measured (last step): {{[0-9.e+-]+}} s from the first fragment's start to the last one's end, bubble per pp rank {{[0-9.]+}}%, {{[0-9.]+}}%
// MEASURED: pipeline simulated on the measured mean fragment times: {{[0-9.e+-]+}} s, bubble per pp rank {{[0-9.]+}}%, {{[0-9.]+}}%
// MEASURED: pipeline stage 0: forward {{[0-9.e+-]+}} s, backward (input) {{[0-9.e+-]+}} s, weight gradients 0 s (means)
// MEASURED: pipeline stage 1: forward
// RUN: %python -c "import json, sys; e = [x for x in json.load(open(sys.argv[1]))['traceEvents'] if x['ph'] == 'X']; print(len(e), 'fragments on tracks', sorted({x['tid'] for x in e}), 'in order', all(a['ts'] + a['dur'] <= b['ts'] for a, b in zip(e, e[1:]) if a['tid'] == b['tid']))" %t/1f1b-measured.json | FileCheck %s --check-prefix=MEASUREDTRACE
// MEASUREDTRACE: 16 fragments on tracks [0, 1] in order True
// RUN: %python %S/../Utils/compare_training.py %t/1f1b-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/interleaved --lr 0.01 --weight-decay 0.01 --mesh pp=2 --microbatches 4 --pipeline-schedule interleaved --virtual-stages 2
// RUN: FileCheck %s --check-prefix=INTERLEAVED < %t/interleaved/train_step.mlir
// INTERLEAVED: stage_ranks = array<i64: 0, 1, 0, 1>, virtual_stages = 2 : i64}
// RUN: %mpirun -np 2 dtc-run %t/interleaved --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/interleaved-dump
// RUN: %python %S/../Utils/compare_training.py %t/interleaved-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/zbh1 --lr 0.01 --weight-decay 0.01 --mesh pp=2 --microbatches 4 --pipeline-schedule zb-h1
// RUN: %mpirun -np 2 dtc-run %t/zbh1 --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/zbh1-dump
// RUN: %python %S/../Utils/compare_training.py %t/zbh1-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/zbv --lr 0.01 --weight-decay 0.01 --mesh pp=2 --microbatches 4 --pipeline-schedule zbv
// RUN: FileCheck %s --check-prefix=ZBV < %t/zbv/train_step.mlir
// ZBV: stage_ranks = array<i64: 0, 1, 1, 0>, virtual_stages = 2 : i64}
// RUN: %mpirun -np 2 dtc-run %t/zbv --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/zbv-dump
// RUN: %python %S/../Utils/compare_training.py %t/zbv-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
//
// pp=4 with M=P, a three-stage split, and the Llama-style model:
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/pp4 --lr 0.01 --weight-decay 0.01 --mesh pp=4 --microbatches 4
// An activation only the next stage reads goes to it alone, point to point
// (dtc.receivers: the pp coordinates that take part besides the root):
// RUN: FileCheck %s --check-prefix=P2P < %t/pp4/train_step.mlir
// P2P: dtc.collective_broadcast {{.*}} on @mesh axes = ["pp"] root = 0 {dtc.receivers = array<i64: 1>, reason = "pipeline: stage 0's value"}
// RUN: %mpirun -np 4 dtc-run %t/pp4 --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/pp4-dump | FileCheck %s --check-prefix=PEAK
// Each rank holds what its stages' ops read, and measures the peak the
// report plans for its pp coordinate (report.json's pp_ranks):
// PEAK: rank 0 peak intermediate memory: [[P0:[0-9]+]] B (planned [[P0]] B)
// PEAK: rank 1 peak intermediate memory: [[P1:[0-9]+]] B (planned [[P1]] B)
// PEAK: rank 2 peak intermediate memory: [[P2:[0-9]+]] B (planned [[P2]] B)
// PEAK: rank 3 peak intermediate memory: [[P3:[0-9]+]] B (planned [[P3]] B)
// RUN: %python -c "import json, sys; r = json.load(open(sys.argv[1])); print('pp rank', r['pp_rank'], 'of', len(r['pp_ranks']), 'peak', r['memory_bytes_per_rank']['activation_peak'] == max(x['activation_peak'] for x in r['pp_ranks']))" %t/pp4/report.json | FileCheck %s --check-prefix=PPRANKS
// PPRANKS: pp rank {{[0-3]}} of 4 peak True
// RUN: %python %S/../Utils/compare_training.py %t/pp4-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// Each pp rank holds the parameters its stages read, with their gradients
// and AdamW state (dtc.pp_ranks; every rank its own step counter, 8 B): over
// the four ranks they add up to one device's (this model ties no weights).
// RUN: FileCheck %s --check-prefix=HELD < %t/pp4/train_step.mlir
// HELD: dtc.param = "wte.weight", dtc.pp_ranks = array<i64: 0>
// HELD: dtc.param = "head.weight", dtc.pp_ranks = array<i64: 3>
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/one --lr 0.01 --weight-decay 0.01 2> /dev/null
// RUN: %python -c "import json, sys; one = json.load(open(sys.argv[1]))['memory_bytes_per_rank']; pp = json.load(open(sys.argv[2]))['pp_ranks']; print(*[(k, [x[k] for x in pp], sum(x[k] for x in pp) - (len(pp) - 1) * 8 * (k == 'optimizer_state') == one[k]) for k in ('parameters', 'gradients', 'optimizer_state')])" %t/one/report.json %t/pp4/report.json | FileCheck %s --check-prefix=SPLITSTATE
// SPLITSTATE: ('parameters', [{{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}], True) ('gradients', [{{.*}}], True) ('optimizer_state', [{{.*}}], True)
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/pp3 --lr 0.01 --weight-decay 0.01 --mesh pp=3 --microbatches 2 --pipeline-schedule gpipe
// RUN: %mpirun -np 3 dtc-run %t/pp3 --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/pp3-dump
// RUN: %python %S/../Utils/compare_training.py %t/pp3-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/tiny_llama/b4/model.onnx -o %t/llama --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --mesh pp=2 --microbatches 4
// RUN: %mpirun -np 2 dtc-run %t/llama --batch %S/Inputs/tiny_llama/b4/batch --steps 3 --dump %t/llama-dump
// RUN: %python %S/../Utils/compare_training.py %t/llama-dump %S/Inputs/tiny_llama/b4/adamw %S/Inputs/tiny_llama/initial | FileCheck %s
//
// With data and tensor parallelism inside the stages (ZeRO-1 over dp):
// RUN: dtc-compile %S/Inputs/tiny_llama/b4/model.onnx -o %t/llama-dp2pp2 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --mesh dp=2,pp=2 --microbatches 2 --zero 1
// RUN: %mpirun -np 4 dtc-run %t/llama-dp2pp2 --batch %S/Inputs/tiny_llama/b4/batch --steps 3 --dump %t/llama-dp2pp2-dump
// RUN: %python %S/../Utils/compare_training.py %t/llama-dp2pp2-dump %S/Inputs/tiny_llama/b4/adamw %S/Inputs/tiny_llama/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/pp2tp2 --lr 0.01 --weight-decay 0.01 --mesh pp=2,tp=2 --microbatches 2 --clip-grad-norm 0.5
// RUN: %mpirun -np 4 dtc-run %t/pp2tp2 --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/pp2tp2-dump
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/clip --lr 0.01 --weight-decay 0.01 --clip-grad-norm 0.5 --target reference
// RUN: dtc-run %t/clip --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/clip-dump
// RUN: not dtc-run %t/clip --batch %S/Inputs/tiny_transformer/b4/batch --steps 1 --trace %t/bad.json 2>&1 | FileCheck %s --check-prefix=NOTRACE
// NOTRACE: error: --trace times the fragments of a pipelined step (dtc-compile --mesh pp=P)
// RUN: %python %S/../Utils/compare_training.py %t/pp2tp2-dump %t/clip-dump %S/Inputs/tiny_transformer/initial | FileCheck %s
//
// pp=2 x dp=2 x tp=2 with sequence parallelism (a stage sends its sequence
// shard: 1/T of the activation), ZeRO-1 and bf16, against one device in
// bf16 (the bf16 tolerances):
// RUN: dtc-compile %S/Inputs/tiny_llama/b4/model.onnx -o %t/combined --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --mesh pp=2,dp=2,tp=2 --sequence-parallel --zero 1 --precision bf16 --microbatches 2
// RUN: FileCheck %s --check-prefix=SP < %t/combined/train_step.mlir
// SP: dtc.collective_broadcast {{.*}} on @mesh axes = ["pp"] root = 0 {reason = "pipeline: stage 0's value"} : tensor<1x4x32xbf16>
// RUN: %mpirun -np 8 dtc-run %t/combined --batch %S/Inputs/tiny_llama/b4/batch --steps 3 --dump %t/combined-dump
// RUN: dtc-compile %S/Inputs/tiny_llama/b4/model.onnx -o %t/bf16 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --precision bf16
// RUN: dtc-run %t/bf16 --batch %S/Inputs/tiny_llama/b4/batch --steps 3 --dump %t/bf16-dump
// RUN: %python %S/../Utils/compare_training.py %t/combined-dump %t/bf16-dump %S/Inputs/tiny_llama/initial --loss-rtol 1.6e-2 --grad-rl2 0.1 --update-rl2 0.2 | FileCheck %s
// fp16 with loss scaling on pp=2 x tp=2 (the fp16 tolerances, as
// train-fp16's):
// RUN: dtc-compile %S/Inputs/tiny_llama/b4/model.onnx -o %t/fp16 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --mesh pp=2,tp=2 --microbatches 4 --precision fp16 --init-scale 8
// RUN: %mpirun -np 4 dtc-run %t/fp16 --batch %S/Inputs/tiny_llama/b4/batch --steps 3 --dump %t/fp16-dump
// RUN: %python %S/../Utils/compare_training.py %t/fp16-dump %S/Inputs/tiny_llama/b4/adamw %S/Inputs/tiny_llama/initial --loss-rtol 2e-3 --grad-rl2 2.5e-2 --update-rl2 0.1 | FileCheck %s
//
// Full recomputation inside the stages (each microbatch's units recomputed
// before its own backward):
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/remat --lr 0.01 --weight-decay 0.01 --mesh pp=2 --microbatches 4 --remat full 2>&1 | FileCheck %s --check-prefix=REMAT
// REMAT: per rank: remat full
// RUN: %mpirun -np 2 dtc-run %t/remat --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/remat-dump
// RUN: %python %S/../Utils/compare_training.py %t/remat-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
//
// --verify runs the stages on simulated ranks against one device:
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/verify --mesh pp=2 --microbatches 2 --pipeline-schedule zbv --verify 2>&1 | FileCheck %s --check-prefix=VERIFY
// VERIFY: per-rank program on 2 simulated ranks (pp=2), 2 microbatches
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/verify4 --mesh pp=4 --microbatches 4 --verify 2>&1 | FileCheck %s --check-prefix=VERIFY4
// VERIFY4: per-rank program on 4 simulated ranks (pp=4), 4 microbatches
// CHECK-NOT: FAIL
// CHECK: 0 failed
//
// Distillation: the frozen teacher's forward is cut on its own, so each
// stage runs its share of both models (the 8-block GPT as its own teacher:
// four of the student's layers and four of the teacher's blocks per stage), and the GPT-2-style example distilled on
// pp=2 matches PyTorch (train-distillation.mlir's reference):
// RUN: dtc-compile %S/Inputs/pipeline/gpt8/model.onnx -o %t/distill8 --teacher %S/Inputs/pipeline/gpt8/model.onnx --mesh pp=2 --microbatches 4 2>&1 | FileCheck %s --check-prefix=DISTILL8
// DISTILL8: pipeline 1f1b over pp=2 (2 stages of 4,4 transformer layers)
// RUN: grep -o 'dtc.param = "teacher/blocks.[0-9].ln1.weight", dtc.pp_ranks = array<i64: [0-9]>' %t/distill8/train_step.mlir | FileCheck %s --check-prefix=TEACHER8
// TEACHER8-COUNT-4: teacher/blocks.{{[0-3]}}.ln1.weight", dtc.pp_ranks = array<i64: 0>
// TEACHER8-COUNT-4: teacher/blocks.{{[4-7]}}.ln1.weight", dtc.pp_ranks = array<i64: 1>
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/distill --lr 0.01 --weight-decay 0.01 --teacher %S/Inputs/tiny_transformer/teacher.onnx --temperature 2 --alpha 0.5 --mesh pp=2 --microbatches 2 2> /dev/null
// RUN: %mpirun -np 2 dtc-run %t/distill --batch %S/Inputs/tiny_transformer/batch --steps 3 --dump %t/distill-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/distill-dump %S/Inputs/tiny_transformer/distill %S/Inputs/tiny_transformer/initial | FileCheck %s
//
// Compiled for CPU ranks: one program per pp coordinate (OUT's and
// OUT/pp-C's), each with only what its ranks run; an activation goes to the
// next stage point to point (receivers=), started on the collective thread
// and waited for before the next transfer, and each rank's measured peak
// is its program's arena:
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/cpu-pp4 --lr 0.01 --weight-decay 0.01 --mesh pp=4 --microbatches 4 --target cpu 2> /dev/null
// RUN: ls %t/cpu-pp4/pp-1/program.txt %t/cpu-pp4/pp-2/kernels.so %t/cpu-pp4/pp-3/program.txt
// RUN: FileCheck %s --check-prefix=CPUP2P < %t/cpu-pp4/program.txt
// CPUP2P: broadcast axes=pp root=0 receivers=1 in={{.*}} async=0
// CPUP2P: wait req=0
// RUN: %python -c "import json, sys; p = json.load(open(sys.argv[1]))['compiled_program']; print('programs', [r['pp_rank'] for r in p['pp_ranks']], 'largest arena', p['arena'] == max(r['arena'] for r in p['pp_ranks']))" %t/cpu-pp4/report.json | FileCheck %s --check-prefix=CPUPROGRAMS
// CPUPROGRAMS: programs [0, 1, 2, 3] largest arena True
// RUN: %mpirun -np 4 dtc-run %t/cpu-pp4 --batch %S/Inputs/tiny_transformer/b4/batch --steps 3 --dump %t/cpu-pp4-dump | FileCheck %s --check-prefix=CPUPEAK
// CPUPEAK: rank 3 peak intermediate memory: [[A3:[0-9]+]] B (planned [[A3]] B)
// RUN: %python %S/../Utils/compare_training.py %t/cpu-pp4-dump %S/Inputs/tiny_transformer/b4/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
//
// Checkpoints: each rank writes what it holds (the ranks share only the
// step counter's file); resuming on the same mesh continues bit for bit,
// and a checkpoint moves between one device, pp=2 and pp=4:
// RUN: %python -c "import numpy as n; n.save('%t/tokens.npy', (n.arange(3001) * 5 % 64).astype(n.uint16))"
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/ck-one --lr 0.01 --eps 1e-3 2> /dev/null
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/ck-pp2 --lr 0.01 --eps 1e-3 --mesh pp=2 --microbatches 2 2> /dev/null
// RUN: dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/ck-pp4 --lr 0.01 --eps 1e-3 --mesh pp=4 --microbatches 4 2> /dev/null
// RUN: dtc-run %t/ck-one --data %t/tokens.npy --steps 6 --dump %t/ck-one-full > /dev/null
// RUN: %mpirun -np 2 dtc-run %t/ck-pp2 --data %t/tokens.npy --steps 6 --dump %t/ck-pp2-full > /dev/null
// RUN: %mpirun -np 2 dtc-run %t/ck-pp2 --data %t/tokens.npy --steps 3 --save %t/ck-pp2-ckpt > /dev/null
// RUN: %python -c "import os, sys; a, b = (set(os.listdir(d)) for d in sys.argv[1:]); print('files', len(a), len(b), 'shared', len(a & b))" %t/ck-pp2-ckpt/step-00000003/rank-0 %t/ck-pp2-ckpt/step-00000003/rank-1 | FileCheck %s --check-prefix=CKFILES
// CKFILES: files 25 28 shared 1
// RUN: %mpirun -np 2 dtc-run %t/ck-pp2 --data %t/tokens.npy --steps 6 --resume %t/ck-pp2-ckpt --dump %t/ck-pp2-resumed > /dev/null
// RUN: %python %S/../Utils/compare_resumed.py %t/ck-pp2-full %t/ck-pp2-resumed --from 3 --exact | FileCheck %s
// RUN: dtc-run %t/ck-one --data %t/tokens.npy --steps 6 --resume %t/ck-pp2-ckpt --dump %t/ck-pp2-to-one > /dev/null
// RUN: %python %S/../Utils/compare_resumed.py %t/ck-one-full %t/ck-pp2-to-one --from 3 --rtol 1e-4 | FileCheck %s
// RUN: %mpirun -np 4 dtc-run %t/ck-pp4 --data %t/tokens.npy --steps 6 --resume %t/ck-pp2-ckpt --dump %t/ck-pp2-to-pp4 > /dev/null
// RUN: %python %S/../Utils/compare_resumed.py %t/ck-one-full %t/ck-pp2-to-pp4 --from 3 --rtol 1e-4 | FileCheck %s
// RUN: dtc-run %t/ck-one --data %t/tokens.npy --steps 3 --save %t/ck-one-ckpt > /dev/null
// RUN: %mpirun -np 2 dtc-run %t/ck-pp2 --data %t/tokens.npy --steps 6 --resume %t/ck-one-ckpt --dump %t/ck-one-to-pp2 > /dev/null
// RUN: %python %S/../Utils/compare_resumed.py %t/ck-one-full %t/ck-one-to-pp2 --from 3 --rtol 1e-4 | FileCheck %s
// Evaluation, the gradient norm of --metrics (summed over the pp ranks,
// each parameter once) and the exported parameters (each from a rank that
// holds it) are one device's:
// RUN: %mpirun -np 2 dtc-run %t/ck-pp2 --data %t/tokens.npy --eval-data %t/tokens.npy --eval-every 3 --steps 3 --metrics %t/ck-pp2.jsonl --export-checkpoint %t/ck-pp2-export > %t/ck-pp2-eval.txt
// RUN: dtc-run %t/ck-one --data %t/tokens.npy --eval-data %t/tokens.npy --eval-every 3 --steps 3 --metrics %t/ck-one.jsonl --export-checkpoint %t/ck-one-export > %t/ck-one-eval.txt
// RUN: cat %t/ck-pp2-eval.txt %t/ck-one-eval.txt | FileCheck %s --check-prefix=EVAL
// EVAL: eval after step 3: loss [[EVALLOSS:[0-9.]+]]
// EVAL: eval after step 3: loss [[EVALLOSS]]
// RUN: %python -c "import json, os, sys, numpy as n; a, b, ma, mb = sys.argv[1:]; norm = lambda m: json.loads(open(m).readlines()[-1])['grad_norm']; print('exported', sorted(os.listdir(a)) == sorted(os.listdir(b)) and all(n.allclose(n.load(a + '/' + f), n.load(b + '/' + f), rtol=1e-4, atol=1e-6) for f in os.listdir(b)), 'grad norm', abs(norm(ma) / norm(mb) - 1) < 1e-5)" %t/ck-pp2-export %t/ck-one-export %t/ck-pp2.jsonl %t/ck-one.jsonl | FileCheck %s --check-prefix=EXPORTED
// EXPORTED: exported True grad norm True
//
// Errors:
// RUN: not dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/bad --mesh pp=2 --microbatches 3 --pipeline-schedule interleaved --virtual-stages 2 2>&1 | FileCheck %s --check-prefix=GROUPS
// GROUPS: error: --pipeline-schedule: the interleaved schedule runs microbatches in groups of the pipeline's ranks: 3 microbatches is not a multiple of pp=2
// RUN: not dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/bad --mesh pp=2 --pipeline-schedule 1f2b 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: --pipeline-schedule: unknown '1f2b' (gpipe, 1f1b, interleaved, zb-h1 or zbv)
// RUN: not dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/bad --mesh pp=2 --microbatches 4 --grad-accum 2 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: error: --microbatches and --grad-accum name the same count; give one (4 and 2 were given)
// RUN: not dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/bad --mesh pp=2 --target cuda 2>&1 | FileCheck %s --check-prefix=CUDA
// CUDA: error: --target cuda does not run pipeline stages (a pp axis) yet; the reference executor (the default with pp) and --target cpu do
// RUN: not dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/bad --mesh pp=2,dp=2 --zero 2 2>&1 | FileCheck %s --check-prefix=ZERO2
// ZERO2: error: --zero 2 does not combine with pipeline stages: a stage sums its microbatches' gradients whole before they are reduced; use --zero 1 (DeepSpeed refuses ZeRO-2 and 3 with pipeline parallelism too)
// RUN: not dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/bad --mesh pp=2,dp=2 --zero 3 2>&1 | FileCheck %s --check-prefix=ZERO3
// ZERO3: error: --zero 3 does not combine with pipeline stages
// RUN: not dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/bad --virtual-stages 2 2>&1 | FileCheck %s --check-prefix=NOPP
// NOPP: error: --virtual-stages needs a pp axis of 2 or more ranks
// RUN: not dtc-compile %S/Inputs/tiny_transformer/b4/model.onnx -o %t/bad --mesh pp=128 --microbatches 4 2>&1 | FileCheck %s --check-prefix=DEEP
// DEEP: error: pipeline: the forward has {{[0-9]+}} {{.*}}too few for 128 stages
