// Context parallelism: every activation split along the sequence over the
// cp ranks, attention seeing the other ranks' tokens by a ring of key/value
// blocks (the default), DeepSpeed-Ulysses all-to-alls or an all-gather of
// the keys and values. On sequence-64 exports of both example models with
// 8 query and 4 key/value heads (Inputs/context/make_models.py: GPT-2
// style with learned positions and a boolean causal mask, Llama style with
// RoPE and an additive one), three AdamW steps at cp = 2 and 4 match
// PyTorch's single-device trajectory (standard tolerances).
//
// Ring attention, tokens in zigzag order: rank r holds chunks r and
// 2cp-1-r of 2cp, so the ids record mirrored blocks.
// RUN: rm -rf %t && dtc-compile %S/Inputs/context/gpt/model.onnx -o %t/gpt-ring2 --lr 0.01 --weight-decay 0.01 --mesh cp=2
// RUN: FileCheck %s --check-prefix=RING-IR < %t/gpt-ring2/train_step.mlir
// RING-IR: dtc.mesh @mesh ["cp" = 2]
// RING-IR: %arg0: tensor<2x32xi64> {dtc.input = "ids", dtc.sharding = #dtc.sharding<@mesh, {{\[}}[], ["cp"]] blocks = [1, -2]>}
// RING-IR: dtc.send_recv {{.*}} axis = "cp" shift = 1 {reason = "context-parallel: ring attention passes 'dtc.attention' (/blocks.0/Softmax)'s keys and values on"}
// RING-IR-NOT: dtc.all_gather
// The analytic volume per layer and rank, K and V blocks of B x KV x S/cp
// x d = 2 x 4 x 32 x 8 f32 (8192 B each): forward cp-1 K and V blocks,
// backward cp-1 K and V blocks and cp dK and dV blocks (the last hop
// brings each block's gradients home): 2 layers x (1 + 1 + 2) x 16384 B =
// 131072 B in 16 send_recvs.
// RUN: %mpirun -np 2 dtc-run %t/gpt-ring2 --batch %S/Inputs/context/gpt/batch --steps 3 --dump %t/gpt-ring2-dump > %t/gpt-ring2.log
// RUN: FileCheck %s --check-prefix=RING2 < %t/gpt-ring2.log
// RING2: rank 0 per step: {{[0-9.]+}} s, all_reduce {{[0-9]+}} calls, {{[0-9]+}} bus bytes, send_recv 16 calls, 131072 bus bytes
// RING2: rank 0 peak intermediate memory: [[PEAK:[0-9]+]] B (planned [[PEAK]] B)
// RUN: %python %S/../Utils/compare_report.py %t/gpt-ring2/report.json %t/gpt-ring2.log | FileCheck %s --check-prefix=AGREE
// AGREE-NOT: FAIL
// RUN: %python %S/../Utils/compare_training.py %t/gpt-ring2-dump %S/Inputs/context/gpt/adamw %S/Inputs/context/gpt/initial | FileCheck %s
// Causal tiles skipped: of the 8 tiles of 16 x 16 scores a rank's 32
// queries make with the 64 keys at cp = 2, ring attention computes 5, each
// of two products of 2 B H 16 16 d = 65536 FLOPs: 3 x 2 x 65536 x 2
// layers = 786432 forward matmul FLOPs per rank fewer than the all-gather,
// which computes every score (5/8 of its work; (2cp+1)/(4cp) in general).
// RUN: dtc-compile %S/Inputs/context/gpt/model.onnx -o %t/gpt-gather2 --lr 0.01 --weight-decay 0.01 --mesh cp=2 --context-parallel all-gather --target reference
// RUN: %python -c "import json, sys; f = lambda p: json.load(open(p))['flops_per_step']['forward']['matmul']; print('skipped', f(sys.argv[2]) - f(sys.argv[1]))" %t/gpt-ring2/report.json %t/gpt-gather2/report.json | FileCheck %s --check-prefix=SKIPPED
// SKIPPED: skipped 786432{{$}}
// At cp = 4 (K, V blocks of 4096 B): 2 x (3 + 3 + 4) x 8192 = 163840 B.
// RUN: dtc-compile %S/Inputs/context/gpt/model.onnx -o %t/gpt-ring4 --lr 0.01 --weight-decay 0.01 --mesh cp=4
// RUN: %mpirun -np 4 dtc-run %t/gpt-ring4 --batch %S/Inputs/context/gpt/batch --steps 3 --dump %t/gpt-ring4-dump > %t/gpt-ring4.log
// RUN: FileCheck %s --check-prefix=RING4 < %t/gpt-ring4.log
// RING4: rank 0 per step: {{[0-9.]+}} s, all_reduce {{[0-9]+}} calls, {{[0-9]+}} bus bytes, send_recv 40 calls, 163840 bus bytes
// RING4: rank 0 peak intermediate memory: [[PEAK:[0-9]+]] B (planned [[PEAK]] B)
// RUN: %python %S/../Utils/compare_training.py %t/gpt-ring4-dump %S/Inputs/context/gpt/adamw %S/Inputs/context/gpt/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/context/llama/model.onnx -o %t/llama-ring2 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --mesh cp=2
// RUN: %mpirun -np 2 dtc-run %t/llama-ring2 --batch %S/Inputs/context/llama/batch --steps 3 --dump %t/llama-ring2-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/llama-ring2-dump %S/Inputs/context/llama/adamw %S/Inputs/context/llama/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/context/llama/model.onnx -o %t/llama-ring4 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --mesh cp=4
// RUN: %mpirun -np 4 dtc-run %t/llama-ring4 --batch %S/Inputs/context/llama/batch --steps 3 --dump %t/llama-ring4-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/llama-ring4-dump %S/Inputs/context/llama/adamw %S/Inputs/context/llama/initial | FileCheck %s
// Without a causal mask every query meets every key: the GPT-2 example
// (no mask, sequence 8) at cp = 2 and 4, and a sliding-window causal mask
// with the inputs' padding mask, which each block reads at its keys'
// positions (the padding mask, made from split inputs, gathered first):
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/tiny-ring2 --lr 0.01 --weight-decay 0.01 --mesh cp=2
// RUN: %mpirun -np 2 dtc-run %t/tiny-ring2 --batch %S/Inputs/tiny_transformer/batch --steps 3 --dump %t/tiny-ring2-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/tiny-ring2-dump %S/Inputs/tiny_transformer/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/tiny-ring4 --lr 0.01 --weight-decay 0.01 --mesh cp=4
// RUN: %mpirun -np 4 dtc-run %t/tiny-ring4 --batch %S/Inputs/tiny_transformer/batch --steps 3 --dump %t/tiny-ring4-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/tiny-ring4-dump %S/Inputs/tiny_transformer/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/context/gpt_window/model.onnx -o %t/window-ring4 --lr 0.01 --weight-decay 0.01 --mesh cp=4
// RUN: FileCheck %s --check-prefix=WINDOW-IR < %t/window-ring4/train_step.mlir
// WINDOW-IR: dtc.all_gather {{.*}} axes = ["cp"] {{.*}}reason = "context-parallel: ring attention reads 'dtc.attention' (/blocks.0/Softmax)'s mask at every key"
// WINDOW-IR: dtc.gather {{.*}} dim = 3 : (tensor<2x1x16x64xi1>, tensor<16xi64>) -> tensor<2x1x16x16xi1>
// RUN: %mpirun -np 4 dtc-run %t/window-ring4 --batch %S/Inputs/context/gpt_window/batch --steps 3 --dump %t/window-ring4-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/window-ring4-dump %S/Inputs/context/gpt_window/adamw %S/Inputs/context/gpt_window/initial | FileCheck %s
// The same model on one device compiled for CPU ranks: the padding mask
// ([batch, 1, 1, keys]) that the softmax's row kernel reads and later
// layers read too is made outside the kernel (a row kernel writes only
// results shaped as its rows).
// RUN: dtc-compile %S/Inputs/context/gpt_window/model.onnx -o %t/window-cpu --lr 0.01 --weight-decay 0.01 --target cpu
// RUN: dtc-run %t/window-cpu --batch %S/Inputs/context/gpt_window/batch --steps 3 --dump %t/window-cpu-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/window-cpu-dump %S/Inputs/context/gpt_window/adamw %S/Inputs/context/gpt_window/initial | FileCheck %s
//
// Ulysses: four all-to-alls forward (q, k, v, the result) and four
// backward (the result's gradient, dq, dk, dv), each moving (cp-1)/cp of
// its tensor's part; at cp = 4 the parts are q and the result 2 x 8 x 16 x
// 8 f32 (8192 B), k and v half that: 2 layers x 2 x 3 x 8192 x 3/4 =
// 73728 B in 16 all-to-alls.
// RUN: dtc-compile %S/Inputs/context/gpt/model.onnx -o %t/gpt-ulysses4 --lr 0.01 --weight-decay 0.01 --mesh cp=4 --context-parallel ulysses
// RUN: %mpirun -np 4 dtc-run %t/gpt-ulysses4 --batch %S/Inputs/context/gpt/batch --steps 3 --dump %t/gpt-ulysses4-dump > %t/gpt-ulysses4.log
// RUN: FileCheck %s --check-prefix=ULYSSES4 < %t/gpt-ulysses4.log
// ULYSSES4: rank 0 per step: {{[0-9.]+}} s, all_reduce {{[0-9]+}} calls, {{[0-9]+}} bus bytes, all_to_all 16 calls, 73728 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/gpt-ulysses4-dump %S/Inputs/context/gpt/adamw %S/Inputs/context/gpt/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/context/gpt/model.onnx -o %t/gpt-ulysses2 --lr 0.01 --weight-decay 0.01 --mesh cp=2 --context-parallel ulysses
// RUN: %mpirun -np 2 dtc-run %t/gpt-ulysses2 --batch %S/Inputs/context/gpt/batch --steps 3 --dump %t/gpt-ulysses2-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/gpt-ulysses2-dump %S/Inputs/context/gpt/adamw %S/Inputs/context/gpt/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/context/llama/model.onnx -o %t/llama-ulysses4 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --mesh cp=4 --context-parallel ulysses
// RUN: %mpirun -np 4 dtc-run %t/llama-ulysses4 --batch %S/Inputs/context/llama/batch --steps 3 --dump %t/llama-ulysses4-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/llama-ulysses4-dump %S/Inputs/context/llama/adamw %S/Inputs/context/llama/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/context/llama/model.onnx -o %t/llama-ulysses2 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --mesh cp=2 --context-parallel ulysses
// RUN: %mpirun -np 2 dtc-run %t/llama-ulysses2 --batch %S/Inputs/context/llama/batch --steps 3 --dump %t/llama-ulysses2-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/llama-ulysses2-dump %S/Inputs/context/llama/adamw %S/Inputs/context/llama/initial | FileCheck %s
// More ranks than key/value heads (4 heads, cp = 8; and 2 heads per
// tensor-parallel rank, tp = 2 x cp = 4): each key/value head is repeated
// until the ranks divide them, as DeepSpeed and Megatron do, and the
// repeats' gradients summed back. At cp = 8 every part is 2 x 8 x 8 x 8
// f32 (4096 B): 2 layers x 2 x 4 x 4096 x 7/8 = 57344 B.
// RUN: dtc-compile %S/Inputs/context/llama/model.onnx -o %t/llama-ulysses8 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --mesh cp=8 --context-parallel ulysses
// RUN: %mpirun -np 8 dtc-run %t/llama-ulysses8 --batch %S/Inputs/context/llama/batch --steps 3 --dump %t/llama-ulysses8-dump > %t/llama-ulysses8.log
// RUN: FileCheck %s --check-prefix=ULYSSES8 < %t/llama-ulysses8.log
// ULYSSES8: rank 0 per step: {{[0-9.]+}} s, all_reduce {{[0-9]+}} calls, {{[0-9]+}} bus bytes, all_to_all 16 calls, 57344 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/llama-ulysses8-dump %S/Inputs/context/llama/adamw %S/Inputs/context/llama/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/context/llama/model.onnx -o %t/llama-tp2-ulysses4 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --mesh tp=2,cp=4 --context-parallel ulysses
// RUN: %mpirun -np 8 dtc-run %t/llama-tp2-ulysses4 --batch %S/Inputs/context/llama/batch --steps 3 --dump %t/llama-tp2-ulysses4-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/llama-tp2-ulysses4-dump %S/Inputs/context/llama/adamw %S/Inputs/context/llama/initial | FileCheck %s
//
// All-gather: each rank's queries attend to the keys and values gathered
// whole (kept for the backward), whose gradients are reduce-scattered:
// per layer, K and V of 2 x 4 x 64 x 8 f32 (16384 B), (cp-1)/cp of each
// moved: 2 layers x 2 x 12288 = 49152 B each way at cp = 4.
// RUN: dtc-compile %S/Inputs/context/llama/model.onnx -o %t/llama-gather4 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --mesh cp=4 --context-parallel all-gather
// RUN: %mpirun -np 4 dtc-run %t/llama-gather4 --batch %S/Inputs/context/llama/batch --steps 3 --dump %t/llama-gather4-dump > %t/llama-gather4.log
// RUN: FileCheck %s --check-prefix=GATHER4 < %t/llama-gather4.log
// GATHER4: rank 0 per step: {{[0-9.]+}} s, all_reduce {{[0-9]+}} calls, {{[0-9]+}} bus bytes, all_gather 4 calls, 49152 bus bytes, reduce_scatter 4 calls, 49152 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/llama-gather4-dump %S/Inputs/context/llama/adamw %S/Inputs/context/llama/initial | FileCheck %s
//
// Combined with data and tensor parallelism (8 ranks), each way:
// RUN: dtc-compile %S/Inputs/context/llama/model.onnx -o %t/llama-3d --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --mesh dp=2,tp=2,cp=2
// RUN: %mpirun -np 8 dtc-run %t/llama-3d --batch %S/Inputs/context/llama/batch --steps 3 --dump %t/llama-3d-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/llama-3d-dump %S/Inputs/context/llama/adamw %S/Inputs/context/llama/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/context/llama/model.onnx -o %t/llama-3d-ulysses --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --mesh dp=2,tp=2,cp=2 --context-parallel ulysses
// RUN: %mpirun -np 8 dtc-run %t/llama-3d-ulysses --batch %S/Inputs/context/llama/batch --steps 3 --dump %t/llama-3d-ulysses-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/llama-3d-ulysses-dump %S/Inputs/context/llama/adamw %S/Inputs/context/llama/initial | FileCheck %s
// The GPT-2-style model's fused QKV projection of unequal parts (8 query,
// 4 + 4 key/value heads) is resharded by tensor parallelism, which then
// reads the probabilities: ring attention warns and gathers the keys and
// values instead.
// RUN: dtc-compile %S/Inputs/context/gpt/model.onnx -o %t/gpt-3d --lr 0.01 --weight-decay 0.01 --mesh dp=2,tp=2,cp=2 2>&1 | FileCheck %s --check-prefix=GPT-3D
// GPT-3D: warning: context-parallel: 'dtc.attention' (/blocks.0/Softmax): its probabilities are read (by 'dtc.shard' (/blocks.0/Softmax)), which ring attention never holds whole; its keys and values are all-gathered instead
// RUN: %mpirun -np 8 dtc-run %t/gpt-3d --batch %S/Inputs/context/gpt/batch --steps 3 --dump %t/gpt-3d-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/gpt-3d-dump %S/Inputs/context/gpt/adamw %S/Inputs/context/gpt/initial | FileCheck %s
// With sequence parallelism and ZeRO-1 (context parallelism then runs
// before tensor parallelism):
// RUN: dtc-compile %S/Inputs/context/llama/model.onnx -o %t/llama-3d-sp --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --mesh dp=2,tp=2,cp=2 --sequence-parallel --zero 1 --context-parallel all-gather
// RUN: %mpirun -np 8 dtc-run %t/llama-3d-sp --batch %S/Inputs/context/llama/batch --steps 3 --dump %t/llama-3d-sp-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/llama-3d-sp-dump %S/Inputs/context/llama/adamw %S/Inputs/context/llama/initial | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: 0 failed
//
// bf16, within docs/Training.md's bf16 bound of PyTorch's fp32 run (the
// GPT-2-style model), and, for the Llama-style model, whose single-device
// bf16 run is itself outside that bound of fp32 (its small embedding makes
// small gradients), within twice the bound of the single-device bf16 run
// (the triangle inequality over the two roundings):
// RUN: dtc-compile %S/Inputs/context/gpt/model.onnx -o %t/gpt-bf16 --lr 0.01 --weight-decay 0.01 --mesh cp=4 --precision bf16
// RUN: %mpirun -np 4 dtc-run %t/gpt-bf16 --batch %S/Inputs/context/gpt/batch --steps 3 --dump %t/gpt-bf16-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/gpt-bf16-dump %S/Inputs/context/gpt/adamw %S/Inputs/context/gpt/initial --loss-rtol 1.6e-2 --grad-rl2 0.1 --update-rl2 0.2 | FileCheck %s
// RUN: dtc-compile %S/Inputs/context/llama/model.onnx -o %t/llama-bf16-1 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --precision bf16
// RUN: dtc-run %t/llama-bf16-1 --batch %S/Inputs/context/llama/batch --steps 3 --dump %t/llama-bf16-1-dump > /dev/null
// RUN: dtc-compile %S/Inputs/context/llama/model.onnx -o %t/llama-bf16-2 --lr 0.01 --weight-decay 0.01 --freeze '^rope_' --precision bf16 --mesh cp=2
// RUN: %mpirun -np 2 dtc-run %t/llama-bf16-2 --batch %S/Inputs/context/llama/batch --steps 3 --dump %t/llama-bf16-2-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/llama-bf16-2-dump %t/llama-bf16-1-dump %S/Inputs/context/llama/initial --loss-rtol 3.2e-2 --grad-rl2 0.2 --update-rl2 0.4 | FileCheck %s
//
// Activation memory: the planned peak per rank (which each run above
// measured equal) against the single device's: the sequence-split
// activations fall to 1/cp; what stays is the backward's weight-gradient
// temporaries, replicated over cp.
// RUN: dtc-compile %S/Inputs/context/gpt/model.onnx -o %t/gpt-1 --lr 0.01 --weight-decay 0.01
// RUN: %python %S/../Utils/check_activation_ratio.py %t/gpt-1/report.json %t/gpt-ring2/report.json 0.52 %t/gpt-ring4/report.json 0.35 | FileCheck %s --check-prefix=MEMORY
// MEMORY: ok activation peak
// MEMORY-NOT: FAIL
//
// A real run: token windows from a file (each rank takes its zigzag chunks
// of its rows), a checkpoint written at cp = 2 and resumed on one device,
// which then continues as the uninterrupted single-device run does (losses
// equal; parameters within 1e-2 relative L2: the key bias's gradient is
// zero but for rounding, since softmax ignores a shift of a row's scores,
// and AdamW scales that noise up to updates of the learning rate's size).
// RUN: %python -c "import numpy as n; n.save('%t/tokens.npy', (n.arange(5001) * 7 %% 64).astype(n.uint16))"
// RUN: dtc-compile %S/Inputs/context/gpt/model.onnx -o %t/data-1 --lr 0.01
// RUN: dtc-run %t/data-1 --data %t/tokens.npy --steps 4 --dump %t/data-full > /dev/null
// RUN: %mpirun -np 2 dtc-run %t/gpt-ring2 --data %t/tokens.npy --steps 2 --save %t/data-ckpt --save-every 2 > /dev/null
// RUN: dtc-run %t/data-1 --data %t/tokens.npy --steps 4 --resume %t/data-ckpt --dump %t/data-resumed > /dev/null
// RUN: %python %S/../Utils/compare_resumed.py %t/data-full %t/data-resumed --from 2 --rtol 1e-2 | FileCheck %s --check-prefix=RESUMED
// RESUMED-NOT: FAIL
// RESUMED: 0 failed
//
// Attention dropout draws one device's mask: its offsets place each rank's
// queries (all-gather) or heads (Ulysses) in the whole, checked against
// one device on simulated ranks (GPT-2 style, 4 blocks, dropout on the
// attention probabilities); ring attention refuses it by name.
// RUN: dtc-compile %S/Inputs/remat/gpt4/model.onnx -o %t/drop-gather --dropout --seed 3 --mesh cp=2 --context-parallel all-gather --verify 2>&1 | FileCheck %s --check-prefix=DROPOUT
// RUN: dtc-compile %S/Inputs/remat/gpt4/model.onnx -o %t/drop-ulysses --dropout --seed 3 --mesh cp=2 --context-parallel ulysses --verify 2>&1 | FileCheck %s --check-prefix=DROPOUT
// DROPOUT: dtc-verify-partition: single-device step {{.*}} per-rank program on 2 simulated ranks (cp=2)
// RUN: not dtc-compile %S/Inputs/remat/gpt4/model.onnx -o %t/drop-ring --dropout --seed 3 --mesh cp=2 2>&1 | FileCheck %s --check-prefix=DROPOUT-RING
// DROPOUT-RING: error: context-parallel: 'dtc.attention' (/blocks.0/Softmax): ring attention does not take attention dropout or a softcap yet: use --context-parallel all-gather or ulysses
//
// Errors name the problem:
// RUN: not dtc-compile %S/Inputs/context/gpt/model.onnx -o %t/bad --mesh cp=3 2>&1 | FileCheck %s --check-prefix=UNEVEN
// UNEVEN: error: context parallelism needs a sequence length that 6 equal chunks divide, not 64
// RUN: not dtc-compile %S/Inputs/context/gpt/model.onnx -o %t/bad --mesh cp=16 --context-parallel ulysses 2>&1 | FileCheck %s --check-prefix=HEADS
// HEADS: error: context-parallel: 'dtc.attention' (/blocks.0/Softmax) has 8 query heads and 4 key/value heads: the all-to-all over 16 ranks of 'cp' needs them to divide the query heads (and repeats the key/value heads until they do): use --context-parallel ring or all-gather
// RUN: not dtc-compile %S/Inputs/context/gpt/model.onnx -o %t/bad --mesh cp=2 --context-parallel rings 2>&1 | FileCheck %s --check-prefix=MODE
// MODE: --context-parallel: unknown 'rings' (ring, all-gather or ulysses)
