// Mixtures of experts, on one device and with expert parallelism: the ep
// ranks split the batch (as dp does) and the stacked expert weights, and
// all-to-alls exchange each rank's rows of every expert's buffer for all
// rows of its own experts, and back. Two-layer GPT-style models with 4
// experts and top-2 routing (Inputs/moe/make_models.py); three AdamW steps
// on every mesh match PyTorch's single-device trajectory (standard
// tolerances).
//
// GShard's capacity form (TopK, OneHot, CumSum places, capacity 8 per
// sequence with tokens past it dropped, Einsum dispatch and combine):
// RUN: rm -rf %t && dtc-compile %S/Inputs/moe/gshard/model.onnx -o %t/gshard --lr 0.01 --weight-decay 0.01
// RUN: dtc-run %t/gshard --batch %S/Inputs/moe/gshard/batch --steps 3 --dump %t/gshard-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/gshard-dump %S/Inputs/moe/gshard/adamw %S/Inputs/moe/gshard/initial | FileCheck %s
// CHECK: 0 failed
//
// Data parallelism: routing groups are rows, so a rank's rows route (and
// drop) as on one device.
// RUN: dtc-compile %S/Inputs/moe/gshard/model.onnx -o %t/gshard-dp2 --lr 0.01 --weight-decay 0.01 --mesh dp=2 --strict-sharding
// RUN: %mpirun -np 2 dtc-run %t/gshard-dp2 --batch %S/Inputs/moe/gshard/batch --steps 3 --dump %t/gshard-dp2-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/gshard-dp2-dump %S/Inputs/moe/gshard/adamw %S/Inputs/moe/gshard/initial | FileCheck %s
//
// ep = 2: the ids split by rows, w1, b1, w2 and b2 ([4, ...]) by experts,
// the router's weight [4, 32] (a projection's columns) replicated.
// RUN: dtc-compile %S/Inputs/moe/gshard/model.onnx -o %t/gshard-ep2 --lr 0.01 --weight-decay 0.01 --mesh ep=2 --strict-sharding
// RUN: FileCheck %s --check-prefix=EP2-IR < %t/gshard-ep2/train_step.mlir
// EP2-IR: dtc.mesh @mesh ["ep" = 2]
// EP2-IR: %arg0: tensor<2x16xi64> {dtc.input = "ids", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["ep"], []]>}
// EP2-IR-SAME: tensor<2x32x64xf32> {{.*}}dtc.param = "blocks.0.moe.w1", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["ep"], [], []]>
// EP2-IR-SAME: tensor<2x64xf32> {{.*}}dtc.param = "blocks.0.moe.b1", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["ep"], []]>
// EP2-IR-SAME: tensor<4x32xf32> {{.*}}dtc.param = "blocks.0.moe.router.weight", dtc.unit
// EP2-IR: dtc.all_to_all {{.*}} on @mesh axes = ["ep"] split_dim = 0 concat_dim = 1 {reason = "expert-parallel: 'dtc.matmul' (/blocks.0/moe/Einsum_1)
// EP2-IR-SAME: tensor<4x16x32xf32> -> tensor<2x32x32xf32>
// EP2-IR-NOT: dtc.all_gather
// The analytic volume: each layer exchanges a rank's buffer, [4 experts, 2
// rows, capacity 8, 32 features] f32 = 8192 B, before the first expert
// matmul and before the combine, and their gradients back: 4 all-to-alls a
// layer, each sending (ep-1)/ep of it: 2 layers x 4 x 4096 B = 32768 B.
// RUN: %mpirun -np 2 dtc-run %t/gshard-ep2 --batch %S/Inputs/moe/gshard/batch --steps 3 --dump %t/gshard-ep2-dump --metrics %t/gshard-ep2.jsonl > %t/gshard-ep2.log
// RUN: FileCheck %s --check-prefix=EP2 < %t/gshard-ep2.log
// EP2: rank 0 per step: {{.*}} all_to_all 8 calls, 32768 bus bytes
// EP2: expert tokens in the last step (per router): {{\[\[}}[[E0:[0-9]+]], [[E1:[0-9]+]], [[E2:[0-9]+]], [[E3:[0-9]+]]], [
// The step returns the (token, choice) pairs each router sent to each
// expert, summed over the ranks: in the first step they are PyTorch's
// (Inputs/moe/*/expert_tokens.npy, torch.bincount of the top-k choices).
// RUN: %python %S/../Utils/compare_expert_tokens.py %t/gshard-ep2.jsonl %S/Inputs/moe/gshard/expert_tokens.npy | FileCheck %s --check-prefix=TOKENS
// TOKENS: expert tokens of step 1 equal the reference: {{\[\[}}35, 44, 29, 20], [27, 36, 40, 25]]
// RUN: %python %S/../Utils/compare_report.py %t/gshard-ep2/report.json %t/gshard-ep2.log | FileCheck %s --check-prefix=AGREE
// AGREE-NOT: FAIL
// RUN: %python %S/../Utils/compare_training.py %t/gshard-ep2-dump %S/Inputs/moe/gshard/adamw %S/Inputs/moe/gshard/initial | FileCheck %s
//
// ep = 4 (one expert and one row a rank; buffers [4, 1, 8, 32]: 8 x 3/4 x
// 4096 B) and dp = 2 x ep = 2 (one row a rank: 8 x 1/2 x 4096 B; the
// expert weights' gradients summed over dp only, the others over both):
// RUN: dtc-compile %S/Inputs/moe/gshard/model.onnx -o %t/gshard-ep4 --lr 0.01 --weight-decay 0.01 --mesh ep=4 --strict-sharding
// RUN: %mpirun -np 4 dtc-run %t/gshard-ep4 --batch %S/Inputs/moe/gshard/batch --steps 3 --dump %t/gshard-ep4-dump > %t/gshard-ep4.log
// RUN: FileCheck %s --check-prefix=EP4 < %t/gshard-ep4.log
// EP4: rank 0 per step: {{.*}} all_to_all 8 calls, 24576 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/gshard-ep4-dump %S/Inputs/moe/gshard/adamw %S/Inputs/moe/gshard/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/moe/gshard/model.onnx -o %t/gshard-dp2ep2 --lr 0.01 --weight-decay 0.01 --mesh dp=2,ep=2 --strict-sharding
// RUN: FileCheck %s --check-prefix=DPEP-IR < %t/gshard-dp2ep2/train_step.mlir
// DPEP-IR: dtc.input = "ids", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["dp", "ep"], []]>
// DPEP-IR-DAG: dtc.all_reduce {{.*}} axes = ["dp"] {{.*}}blocks.0.moe.w1
// DPEP-IR-DAG: dtc.all_reduce {{.*}} axes = ["dp", "ep"] {{.*}}blocks.0.qkv.weight
// RUN: %mpirun -np 4 dtc-run %t/gshard-dp2ep2 --batch %S/Inputs/moe/gshard/batch --steps 3 --dump %t/gshard-dp2ep2-dump > %t/gshard-dp2ep2.log
// RUN: FileCheck %s --check-prefix=DPEP < %t/gshard-dp2ep2.log
// DPEP: rank 0 per step: {{.*}} all_to_all 8 calls, 16384 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/gshard-dp2ep2-dump %S/Inputs/moe/gshard/adamw %S/Inputs/moe/gshard/initial | FileCheck %s
//
// tp = 2 x ep = 2: Megatron's pairs inside each expert (w1's hidden
// features, w2's rows) as well as attention's:
// RUN: dtc-compile %S/Inputs/moe/gshard/model.onnx -o %t/gshard-tp2ep2 --lr 0.01 --weight-decay 0.01 --mesh tp=2,ep=2 --strict-sharding
// RUN: FileCheck %s --check-prefix=TPEP-IR < %t/gshard-tp2ep2/train_step.mlir
// TPEP-IR: dtc.param = "blocks.0.moe.w1", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["ep"], [], ["tp"]]>
// TPEP-IR-SAME: dtc.param = "blocks.0.moe.b1", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["ep"], ["tp"]]>
// TPEP-IR-SAME: dtc.param = "blocks.0.moe.w2", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["ep"], ["tp"], []]>
// RUN: %mpirun -np 4 dtc-run %t/gshard-tp2ep2 --batch %S/Inputs/moe/gshard/batch --steps 3 --dump %t/gshard-tp2ep2-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/gshard-tp2ep2-dump %S/Inputs/moe/gshard/adamw %S/Inputs/moe/gshard/initial | FileCheck %s
//
// ZeRO shards the optimizer state over the data-parallel ranks, as
// DeepSpeed-MoE does: an expert parameter's over dp within its ep part (its
// gradient is summed over dp alone), the others' over dp and then over ep
// along another dimension (their gradients reduce-scattered over dp, and
// those parts over ep), a bias or a norm's scale with no other dimension
// over dp alone. Stage 2 for GShard on dp=2 x ep=2 (the state per rank 95496 B,
// not 121608 B as over dp alone), stage 3 for Mixtral's loop form on dp=2
// x ep=2 and on ep=2 alone, stage 1 for GShard on ep=4:
// RUN: dtc-compile %S/Inputs/moe/gshard/model.onnx -o %t/gshard-dp2ep2-z2 --lr 0.01 --weight-decay 0.01 --mesh dp=2,ep=2 --zero 2 --strict-sharding 2>&1 | FileCheck %s --check-prefix=ZERO-QUIET
// ZERO-QUIET-NOT: warning
// RUN: FileCheck %s --check-prefix=ZERO-IR < %t/gshard-dp2ep2-z2/train_step.mlir
// ZERO-IR-DAG: tensor<2x16x64xf32> {{{.*}}dtc.sharding = #dtc.sharding<@mesh, {{\[}}["ep"], ["dp"], []]>, dtc.state = #dtc.state<exp_avg of "blocks.0.moe.w1">}
// ZERO-IR-DAG: tensor<48x16xf32> {{{.*}}dtc.sharding = #dtc.sharding<@mesh, {{\[}}["dp"], ["ep"]]>, dtc.state = #dtc.state<exp_avg of "blocks.0.qkv.weight">}
// ZERO-IR-DAG: tensor<2x16xf32> {{{.*}}dtc.sharding = #dtc.sharding<@mesh, {{\[}}["dp"], ["ep"]]>, dtc.state = #dtc.state<exp_avg of "blocks.0.moe.router.weight">}
// ZERO-IR-DAG: tensor<16xf32> {{{.*}}dtc.sharding = #dtc.sharding<@mesh, {{\[}}["dp"]]>, dtc.state = #dtc.state<exp_avg of "blocks.0.ln1.weight">}
// A non-expert gradient is reduce-scattered over dp, and its part over ep
// (in buckets), not all-reduced over both:
// ZERO-IR-DAG: dtc.reduce_scatter {{.*}} axes = ["dp"] dim = 0 {reason = "data-parallel: gradient of blocks.0.qkv.weight {{.*}}each dp rank keeps its part"}
// ZERO-IR-DAG: dtc.reduce_scatter {{.*}} axes = ["ep"] dim = 0 {reason = "expert-parallel: gradient bucket {{.*}}blocks.0.qkv.weight
// RUN: FileCheck %s --check-prefix=ZERO-SUMS < %t/gshard-dp2ep2-z2/train_step.mlir
// ZERO-SUMS-NOT: dtc.all_reduce {{.*}} axes = ["dp", "ep"] {{.*}}gradient of blocks.0.qkv.weight
// ZERO-SUMS: return
// RUN: %python -c "import json, sys; print(json.load(open(sys.argv[1]))['memory_bytes_per_rank']['optimizer_state'])" %t/gshard-dp2ep2-z2/report.json | FileCheck %s --check-prefix=ZERO-STATE
// ZERO-STATE: {{^}}95496
// RUN: %mpirun -np 4 dtc-run %t/gshard-dp2ep2-z2 --batch %S/Inputs/moe/gshard/batch --steps 3 --dump %t/gshard-dp2ep2-z2-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/gshard-dp2ep2-z2-dump %S/Inputs/moe/gshard/adamw %S/Inputs/moe/gshard/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/mixtral-dp2ep2-z3 --lr 0.01 --weight-decay 0.01 --mesh dp=2,ep=2 --zero 3 --strict-sharding 2> /dev/null
// RUN: %mpirun -np 4 dtc-run %t/mixtral-dp2ep2-z3 --batch %S/Inputs/moe/mixtral/batch --steps 3 --dump %t/mixtral-dp2ep2-z3-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/mixtral-dp2ep2-z3-dump %S/Inputs/moe/mixtral/adamw %S/Inputs/moe/mixtral/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/mixtral-ep2-z3 --lr 0.01 --weight-decay 0.01 --mesh ep=2 --zero 3 --strict-sharding 2> /dev/null
// RUN: FileCheck %s --check-prefix=ZERO-EP-IR < %t/mixtral-ep2-z3/train_step.mlir
// ZERO-EP-IR: dtc.reduce_scatter {{.*}} axes = ["ep"]
// RUN: %mpirun -np 2 dtc-run %t/mixtral-ep2-z3 --batch %S/Inputs/moe/mixtral/batch --steps 3 --dump %t/mixtral-ep2-z3-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/mixtral-ep2-z3-dump %S/Inputs/moe/mixtral/adamw %S/Inputs/moe/mixtral/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/moe/gshard/model.onnx -o %t/gshard-ep4-z1 --lr 0.01 --weight-decay 0.01 --mesh ep=4 --zero 1 --strict-sharding 2> /dev/null
// RUN: %mpirun -np 4 dtc-run %t/gshard-ep4-z1 --batch %S/Inputs/moe/gshard/batch --steps 3 --dump %t/gshard-ep4-z1-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/gshard-ep4-z1-dump %S/Inputs/moe/gshard/adamw %S/Inputs/moe/gshard/initial | FileCheck %s
//
// A load-balancing loss the model outputs (gshard-aux: Switch's, E x the
// sum over experts of the fraction of the batch's tokens whose first
// choice it is times its mean router probability, per layer, summed as the
// output aux_loss) is added to the loss by --aux-loss NAME=COEF; its means
// are the whole batch's on every mesh, as in PyTorch's cross-entropy + 0.1
// x aux_loss (three AdamW steps):
// RUN: dtc-compile %S/Inputs/moe/gshard-aux/model.onnx -o %t/aux --lr 0.01 --weight-decay 0.01 --aux-loss aux_loss=0.1 2> /dev/null
// RUN: dtc-run %t/aux --batch %S/Inputs/moe/gshard-aux/batch --steps 3 --dump %t/aux-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/aux-dump %S/Inputs/moe/gshard-aux/adamw %S/Inputs/moe/gshard-aux/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/moe/gshard-aux/model.onnx -o %t/aux-dp2 --lr 0.01 --weight-decay 0.01 --aux-loss aux_loss=0.1 --mesh dp=2 --strict-sharding 2> /dev/null
// RUN: %mpirun -np 2 dtc-run %t/aux-dp2 --batch %S/Inputs/moe/gshard-aux/batch --steps 3 --dump %t/aux-dp2-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/aux-dp2-dump %S/Inputs/moe/gshard-aux/adamw %S/Inputs/moe/gshard-aux/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/moe/gshard-aux/model.onnx -o %t/aux-dp2ep2 --lr 0.01 --weight-decay 0.01 --aux-loss aux_loss=0.1 --mesh dp=2,ep=2 --strict-sharding 2> /dev/null
// RUN: %mpirun -np 4 dtc-run %t/aux-dp2ep2 --batch %S/Inputs/moe/gshard-aux/batch --steps 3 --dump %t/aux-dp2ep2-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/aux-dp2ep2-dump %S/Inputs/moe/gshard-aux/adamw %S/Inputs/moe/gshard-aux/initial | FileCheck %s
// Without the flag the output is not trained (the trajectory differs):
// RUN: dtc-compile %S/Inputs/moe/gshard-aux/model.onnx -o %t/aux-off --lr 0.01 --weight-decay 0.01 2> /dev/null
// RUN: dtc-run %t/aux-off --batch %S/Inputs/moe/gshard-aux/batch --steps 3 --dump %t/aux-off-dump > /dev/null
// RUN: not %python %S/../Utils/compare_training.py %t/aux-off-dump %S/Inputs/moe/gshard-aux/adamw %S/Inputs/moe/gshard-aux/initial
// Errors name the output:
// RUN: not dtc-compile %S/Inputs/moe/gshard-aux/model.onnx -o %t/bad --aux-loss balance=0.1 2>&1 | FileCheck %s --check-prefix=AUX-NAME
// AUX-NAME: error: aux-loss: the model has no scalar float output 'balance' to add to the loss
// RUN: not dtc-compile %S/Inputs/moe/gshard-aux/model.onnx -o %t/bad --aux-loss aux_loss 2>&1 | FileCheck %s --check-prefix=AUX-SPEC
// AUX-SPEC: error: aux-loss: 'aux_loss' is not NAME=COEF
// RUN: not dtc-compile %S/Inputs/moe/gshard-aux/model.onnx -o %t/bad --aux-loss logits=0.1 2>&1 | FileCheck %s --check-prefix=AUX-SCALAR
// AUX-SCALAR: error: aux-loss: the model has no scalar float output 'logits' to add to the loss
//
// --capacity-factor F rewrites the capacity the export baked in (8) to
// ceil(F x 2 choices x 16 tokens / 4 experts) rows per expert and
// sequence: the slot OneHots' depth, the comparisons of the places with
// it, and the zeros of the combine tensor (a Constant in the first layer, a
// ConstantOfShape of a computed shape in the second). Each trajectory is
// PyTorch's with that capacity (Inputs/moe/gshard/capacity-C/adamw): 4
// drops more tokens, 16 none.
// RUN: dtc-compile %S/Inputs/moe/gshard/model.onnx -o %t/capacity-4 --lr 0.01 --weight-decay 0.01 --capacity-factor 0.5 2>&1 | FileCheck %s --check-prefix=CAPACITY-4
// CAPACITY-4: dtc-compile: --capacity-factor 0.50: each expert's buffer holds 4 of a routing group's 16 tokens (the model's capacity: 8, in 4 slot one-hots)
// RUN: dtc-run %t/capacity-4 --batch %S/Inputs/moe/gshard/batch --steps 3 --dump %t/capacity-4-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/capacity-4-dump %S/Inputs/moe/gshard/capacity-4/adamw %S/Inputs/moe/gshard/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/moe/gshard/model.onnx -o %t/capacity-16 --lr 0.01 --weight-decay 0.01 --capacity-factor 2 2> /dev/null
// RUN: dtc-run %t/capacity-16 --batch %S/Inputs/moe/gshard/batch --steps 3 --dump %t/capacity-16-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/capacity-16-dump %S/Inputs/moe/gshard/capacity-16/adamw %S/Inputs/moe/gshard/initial | FileCheck %s
// At ep=2 the buffers, [4, 2, 4, 32] f32 a rank, and so the all-to-alls
// halve: 8 x 1/2 x 4096 B.
// RUN: dtc-compile %S/Inputs/moe/gshard/model.onnx -o %t/capacity-4-ep2 --lr 0.01 --weight-decay 0.01 --capacity-factor 0.5 --mesh ep=2 --strict-sharding 2> /dev/null
// RUN: %mpirun -np 2 dtc-run %t/capacity-4-ep2 --batch %S/Inputs/moe/gshard/batch --steps 3 --dump %t/capacity-4-ep2-dump > %t/capacity-4-ep2.log
// RUN: FileCheck %s --check-prefix=CAPACITY-EP2 < %t/capacity-4-ep2.log
// CAPACITY-EP2: rank 0 per step: {{.*}} all_to_all 8 calls, 16384 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/capacity-4-ep2-dump %S/Inputs/moe/gshard/capacity-4/adamw %S/Inputs/moe/gshard/initial | FileCheck %s
// A model without the capacity form has none to rewrite:
// RUN: not dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/bad --capacity-factor 1 2>&1 | FileCheck %s --check-prefix=NO-CAPACITY
// NO-CAPACITY: error: --capacity-factor: the model has no expert capacity to rewrite
//
// The Hugging Face loop form (Mixtral as transformers 5 writes it: per
// expert, torch.where of its routing mask, its tokens gathered, its slice
// of the stacked weights gate_up_proj [4, 128, 32] and down_proj [4, 32,
// 64], index_add_ back). The importer gives NonZero its static form (every
// (token, choice) position, those the expert was not chosen for masked
// when the rows are added back: each expert's buffer padded to the bound
// of all 64 tokens x 2 choices), the gathers of rows in order become
// broadcasts and the scatters sums, and dtc-batch-experts computes the
// four unrolled experts as one batched computation over the stacked
// weights:
// RUN: dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/mixtral --lr 0.01 --weight-decay 0.01
// The padding, in the report: 2 layers x 4 experts NonZero nodes, each
// 2 x 64 positions (1024 rows, of which the 2 x 128 routed pairs are
// real), gathering [128, 32] token rows and [128, 1] routing weights f32
// at them: 8 x (16384 + 512) B.
// RUN: %python -c "import json, sys; print(sorted(json.load(open(sys.argv[1]))['static_positions'].items()))" %t/mixtral/report.json | FileCheck %s --check-prefix=PADDED
// PADDED: [('gathered_bytes', 135168), ('nodes', 8), ('positions', 1024)]
// RUN: FileCheck %s --check-prefix=MIX-IR < %t/mixtral/train_step.mlir
// MIX-IR-NOT: dtc.gather %arg{{[0-9]+}}[%{{.*}}] dim = 0 : (tensor<4x128x32xf32>
// MIX-IR: dtc.matmul {{.*}} : (tensor<1x128x32xf32>, tensor<4x32x128xf32>) -> tensor<4x128x128xf32>
// MIX-IR-NOT: dtc.scatter_elements_add {{.*}} -> tensor<64x32xf32>
// RUN: dtc-run %t/mixtral --batch %S/Inputs/moe/mixtral/batch --steps 3 --dump %t/mixtral-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/mixtral-dump %S/Inputs/moe/mixtral/adamw %S/Inputs/moe/mixtral/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/mixtral-dp2 --lr 0.01 --weight-decay 0.01 --mesh dp=2 --strict-sharding
// RUN: %mpirun -np 2 dtc-run %t/mixtral-dp2 --batch %S/Inputs/moe/mixtral/batch --steps 3 --dump %t/mixtral-dp2-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/mixtral-dp2-dump %S/Inputs/moe/mixtral/adamw %S/Inputs/moe/mixtral/initial | FileCheck %s
// ep = 2: every expert reads every (token, choice) row of the padded
// form, so the dispatch all-gathers a rank's tokens before they are
// repeated for the 2 choices, [32 tokens, 32] f32 = 4096 B of 8192 (one
// call a layer); the combine exchanges the experts' outputs, [2 experts,
// 128 rows, 32] f32 = 32768 B a rank, for all experts' rows of the rank's
// tokens (an all-to-all, half of it sent), once forward and twice backward
// a layer: 2 x 3 x 16384 B.
// RUN: dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/mixtral-ep2 --lr 0.01 --weight-decay 0.01 --mesh ep=2 --strict-sharding
// RUN: %mpirun -np 2 dtc-run %t/mixtral-ep2 --batch %S/Inputs/moe/mixtral/batch --steps 3 --dump %t/mixtral-ep2-dump --metrics %t/mixtral-ep2.jsonl > %t/mixtral-ep2.log
// RUN: %python %S/../Utils/compare_expert_tokens.py %t/mixtral-ep2.jsonl %S/Inputs/moe/mixtral/expert_tokens.npy | FileCheck %s --check-prefix=MIX-TOKENS
// MIX-TOKENS: expert tokens of step 1 equal the reference: {{\[\[}}20, 38, 28, 42], [43, 39, 27, 19]]
// RUN: FileCheck %s --check-prefix=MIX-EP2 < %t/mixtral-ep2.log
// MIX-EP2: rank 0 per step: {{.*}} all_gather 2 calls, 8192 bus bytes, {{.*}} all_to_all 6 calls, 98304 bus bytes
// RUN: %python %S/../Utils/compare_training.py %t/mixtral-ep2-dump %S/Inputs/moe/mixtral/adamw %S/Inputs/moe/mixtral/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/mixtral-ep4 --lr 0.01 --weight-decay 0.01 --mesh ep=4 --strict-sharding
// RUN: %mpirun -np 4 dtc-run %t/mixtral-ep4 --batch %S/Inputs/moe/mixtral/batch --steps 3 --dump %t/mixtral-ep4-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/mixtral-ep4-dump %S/Inputs/moe/mixtral/adamw %S/Inputs/moe/mixtral/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/mixtral-dp2ep2 --lr 0.01 --weight-decay 0.01 --mesh dp=2,ep=2 --strict-sharding
// RUN: %mpirun -np 4 dtc-run %t/mixtral-dp2ep2 --batch %S/Inputs/moe/mixtral/batch --steps 3 --dump %t/mixtral-dp2ep2-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/mixtral-dp2ep2-dump %S/Inputs/moe/mixtral/adamw %S/Inputs/moe/mixtral/initial | FileCheck %s
// tp = 2 x ep = 2: the fused gate and up projection split in its two
// chunks' halves (2 blocks), the down projection by rows:
// RUN: dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/mixtral-tp2ep2 --lr 0.01 --weight-decay 0.01 --mesh tp=2,ep=2 --strict-sharding
// RUN: FileCheck %s --check-prefix=MIX-TPEP-IR < %t/mixtral-tp2ep2/train_step.mlir
// MIX-TPEP-IR: dtc.param = "blocks.0.moe.gate_up_proj", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["ep"], ["tp"], []] blocks = [1, 2, 1]>
// MIX-TPEP-IR-SAME: dtc.param = "blocks.0.moe.down_proj", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["ep"], [], ["tp"]]>
// RUN: %mpirun -np 4 dtc-run %t/mixtral-tp2ep2 --batch %S/Inputs/moe/mixtral/batch --steps 3 --dump %t/mixtral-tp2ep2-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/mixtral-tp2ep2-dump %S/Inputs/moe/mixtral/adamw %S/Inputs/moe/mixtral/initial | FileCheck %s
//
// Sorted, with a bound (--expert-bound B): each expert runs only on the
// rows routed to it, sorted into a buffer of B rows per routing group (a
// dp x ep rank's tokens), and the rows are scattered back; dropless while
// no expert gets more than B of a group's rows, so the trajectory is
// PyTorch's. On one device the largest load of the three steps is 48 of the
// 128 rows (Mixtral's routing weights stay on the token side: only the
// token rows are gathered):
// RUN: dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/sorted --lr 0.01 --weight-decay 0.01 --expert-bound 48 2> %t/sorted.err
// RUN: FileCheck %s --check-prefix=SORTED-IR < %t/sorted/train_step.mlir
// SORTED-IR: dtc.matmul {{.*}} : (tensor<4x48x32xf32>, tensor<4x32x128xf32>) -> tensor<4x48x128xf32>
// SORTED-IR: dtc.matmul {{.*}} : (tensor<4x48x64xf32>, tensor<4x64x32xf32>) -> tensor<4x48x32xf32>
// The buffers against the rows: 2 layers x 4 experts x 48 rows of [32]
// f32 for the 2 x 128 routed (token, choice) rows.
// RUN: %python -c "import json, sys; print(sorted(json.load(open(sys.argv[1]))['expert_buffers'].items()))" %t/sorted/report.json | FileCheck %s --check-prefix=SORTED-BYTES
// SORTED-BYTES: [('buffer_rows', 384), ('mixtures', 2), ('padded_bytes', 49152), ('routed_rows', 256), ('useful_bytes', 32768)]
// RUN: dtc-run %t/sorted --batch %S/Inputs/moe/mixtral/batch --steps 3 --dump %t/sorted-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/sorted-dump %S/Inputs/moe/mixtral/adamw %S/Inputs/moe/mixtral/initial | FileCheck %s
// A bound below a load is detected, not trained through: PyTorch's router
// sends 42 pairs to the first layer's expert 3 in the first step
// (expert_tokens.npy), 2 past a bound of 40.
// RUN: dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/sorted-40 --lr 0.01 --weight-decay 0.01 --expert-bound 40 2> /dev/null
// RUN: not dtc-run %t/sorted-40 --batch %S/Inputs/moe/mixtral/batch --steps 3 2>&1 | FileCheck %s --check-prefix=OVERFLOW
// OVERFLOW: error: step 1: mixture 0's expert 3 was chosen for 2 (token, choice) pairs more than its buffers hold
// Evaluation batches are checked too (one token repeated, 4 windows of
// 16, crowds an expert):
// RUN: %python -c "import numpy, sys; numpy.save(sys.argv[1], numpy.zeros(272, numpy.int32))" %t/same-token.npy
// RUN: not dtc-run %t/sorted --batch %S/Inputs/moe/mixtral/batch --steps 2 --eval-data %t/same-token.npy --eval-every 1 2>&1 | FileCheck %s --check-prefix=EVAL-OVERFLOW
// EVAL-OVERFLOW: error: evaluating after step 1: mixture {{[0-9]}}'s expert {{[0-9]}} was chosen for {{[0-9]+}} (token, choice) pairs more than its buffers hold
// With ep the buffers are exchanged instead of every row: the dispatch
// and the combine, and their gradients, each an all-to-all of a rank's
// buffers [4 experts, B rows, 32] f32 half of which it would send whole: at
// ep=2 (a group of 64 rows, B = 28) 2 layers x 4 x 7168 B a step, the
// bound report.json gives (the exact form above: 8192 B of all-gathers and
// 98304 B of all-to-alls). Only the filled rows are sent, after their
// counts (all-to-all-v): what dtc-run counts equals, on every rank, the
// bytes PyTorch's routing of each step puts in the buffers
// (mixtral/routing.npy), less the trailing rows of tokens no loss depends
// on, whose gradients are zero.
// RUN: dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/sorted-ep2 --lr 0.01 --weight-decay 0.01 --expert-bound 28 --mesh ep=2 --strict-sharding 2> /dev/null
// RUN: FileCheck %s --check-prefix=SORTED-EP2-IR < %t/sorted-ep2/train_step.mlir
// SORTED-EP2-IR-COUNT-8: dtc.all_to_all {{.*}} on @mesh axes = ["ep"] split_dim = {{[01]}} concat_dim = {{[01]}} {{{.*}}rows_dim = 1 : i64}
// RUN: %python -c "import json, sys; r = json.load(open(sys.argv[1])); print([(c['bus_bytes'], c.get('filled_rows_only')) for c in r['collectives_per_step'] if c['kind'] == 'all_to_all'], r['collective_totals_per_step']['all_to_all'])" %t/sorted-ep2/report.json | FileCheck %s --check-prefix=SORTED-EP2-BOUND
// SORTED-EP2-BOUND: [(7168, True), (7168, True), (7168, True), (7168, True), (7168, True), (7168, True), (7168, True), (7168, True)] {'bus_bytes': 57344, 'calls': 8}
// RUN: %mpirun -np 2 dtc-run %t/sorted-ep2 --batch %S/Inputs/moe/mixtral/batch --steps 3 --dump %t/sorted-ep2-dump > %t/sorted-ep2.log
// RUN: FileCheck %s --check-prefix=SORTED-EP2 < %t/sorted-ep2.log
// SORTED-EP2: rank 0 per step: {{.*}} all_to_all 8 calls, {{[0-9]+}} bus bytes
// SORTED-EP2-NOT: all_gather
// RUN: %python %S/Inputs/moe/filled_rows_bytes.py %t/sorted-ep2.log %S/Inputs/moe/mixtral/routing.npy %S/Inputs/moe/mixtral/batch/labels.npy --ep 2 --row-bytes 128 | FileCheck %s --check-prefix=FILLED
// FILLED: {{^}}0 mismatched
// RUN: %python %S/../Utils/compare_training.py %t/sorted-ep2-dump %S/Inputs/moe/mixtral/adamw %S/Inputs/moe/mixtral/initial | FileCheck %s
// The reference executor's exchanges send the same rows:
// RUN: dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/sorted-ep2-ref --lr 0.01 --weight-decay 0.01 --expert-bound 28 --mesh ep=2 --target reference 2> /dev/null
// RUN: %mpirun -np 2 dtc-run %t/sorted-ep2-ref --batch %S/Inputs/moe/mixtral/batch --steps 3 > %t/sorted-ep2-ref.log
// RUN: %python %S/Inputs/moe/filled_rows_bytes.py %t/sorted-ep2-ref.log %S/Inputs/moe/mixtral/routing.npy %S/Inputs/moe/mixtral/batch/labels.npy --ep 2 --row-bytes 128 | FileCheck %s --check-prefix=FILLED
// ep=4 (a group of 32 rows, B = 14; bound 8 x 3/4 x 7168 B) and dp=2 x
// ep=2 (the same groups; 8 x 1/2 x 7168 B):
// RUN: dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/sorted-ep4 --lr 0.01 --weight-decay 0.01 --expert-bound 14 --mesh ep=4 --strict-sharding 2> /dev/null
// RUN: %mpirun -np 4 dtc-run %t/sorted-ep4 --batch %S/Inputs/moe/mixtral/batch --steps 3 --dump %t/sorted-ep4-dump > %t/sorted-ep4.log
// RUN: %python %S/Inputs/moe/filled_rows_bytes.py %t/sorted-ep4.log %S/Inputs/moe/mixtral/routing.npy %S/Inputs/moe/mixtral/batch/labels.npy --ep 4 --row-bytes 128 | FileCheck %s --check-prefix=FILLED
// RUN: %python %S/../Utils/compare_training.py %t/sorted-ep4-dump %S/Inputs/moe/mixtral/adamw %S/Inputs/moe/mixtral/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/sorted-dp2ep2 --lr 0.01 --weight-decay 0.01 --expert-bound 14 --mesh dp=2,ep=2 --strict-sharding 2> /dev/null
// RUN: %mpirun -np 4 dtc-run %t/sorted-dp2ep2 --batch %S/Inputs/moe/mixtral/batch --steps 3 --dump %t/sorted-dp2ep2-dump > %t/sorted-dp2ep2.log
// RUN: %python %S/Inputs/moe/filled_rows_bytes.py %t/sorted-dp2ep2.log %S/Inputs/moe/mixtral/routing.npy %S/Inputs/moe/mixtral/batch/labels.npy --dp 2 --ep 2 --row-bytes 128 | FileCheck %s --check-prefix=FILLED
// RUN: %python %S/../Utils/compare_training.py %t/sorted-dp2ep2-dump %S/Inputs/moe/mixtral/adamw %S/Inputs/moe/mixtral/initial | FileCheck %s
// And with ZeRO-2 over dp:
// RUN: dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/sorted-dp2ep2-z2 --lr 0.01 --weight-decay 0.01 --expert-bound 14 --mesh dp=2,ep=2 --zero 2 --strict-sharding 2> /dev/null
// RUN: %mpirun -np 4 dtc-run %t/sorted-dp2ep2-z2 --batch %S/Inputs/moe/mixtral/batch --steps 3 --dump %t/sorted-dp2ep2-z2-dump > %t/sorted-dp2ep2-z2.log
// RUN: %python %S/Inputs/moe/filled_rows_bytes.py %t/sorted-dp2ep2-z2.log %S/Inputs/moe/mixtral/routing.npy %S/Inputs/moe/mixtral/batch/labels.npy --dp 2 --ep 2 --row-bytes 128 | FileCheck %s --check-prefix=FILLED
// RUN: %python %S/../Utils/compare_training.py %t/sorted-dp2ep2-z2-dump %S/Inputs/moe/mixtral/adamw %S/Inputs/moe/mixtral/initial | FileCheck %s
// dp=2 and tp=2 x ep=2 (B = 28):
// RUN: dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/sorted-dp2 --lr 0.01 --weight-decay 0.01 --expert-bound 28 --mesh dp=2 --strict-sharding 2> /dev/null
// RUN: %mpirun -np 2 dtc-run %t/sorted-dp2 --batch %S/Inputs/moe/mixtral/batch --steps 3 --dump %t/sorted-dp2-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/sorted-dp2-dump %S/Inputs/moe/mixtral/adamw %S/Inputs/moe/mixtral/initial | FileCheck %s
// RUN: dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/sorted-tp2ep2 --lr 0.01 --weight-decay 0.01 --expert-bound 28 --mesh tp=2,ep=2 --strict-sharding 2> /dev/null
// RUN: %mpirun -np 4 dtc-run %t/sorted-tp2ep2 --batch %S/Inputs/moe/mixtral/batch --steps 3 --dump %t/sorted-tp2ep2-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/sorted-tp2ep2-dump %S/Inputs/moe/mixtral/adamw %S/Inputs/moe/mixtral/initial | FileCheck %s
// Pipeline stages, each microbatch its own routing group (B = 28):
// RUN: dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/sorted-pp2 --lr 0.01 --weight-decay 0.01 --expert-bound 28 --mesh pp=2 --microbatches 2 2> /dev/null
// RUN: %mpirun -np 2 dtc-run %t/sorted-pp2 --batch %S/Inputs/moe/mixtral/batch --steps 3 --dump %t/sorted-pp2-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/sorted-pp2-dump %S/Inputs/moe/mixtral/adamw %S/Inputs/moe/mixtral/initial | FileCheck %s
// The single-device step in the compiler agrees (--verify):
// RUN: dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/sorted-verify --lr 0.01 --weight-decay 0.01 --expert-bound 14 --mesh dp=2,ep=2 --verify --target reference 2>&1 | FileCheck %s --check-prefix=VERIFY
// A bound needs the loop form, and routing groups of contiguous rows:
// RUN: not dtc-compile %S/Inputs/moe/gshard/model.onnx -o %t/bad --expert-bound 8 2>&1 | FileCheck %s --check-prefix=SORT-GSHARD
// SORT-GSHARD: error: --expert-bound needs a mixture of experts in the loop form
// RUN: not dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/bad --expert-bound 8 --mesh cp=2 2>&1 | FileCheck %s --check-prefix=SORT-CP
// SORT-CP: error: --expert-bound with a cp axis
//
// bf16 (bf16 compute, f32 master weights; the bound of docs/Training.md:
// loss 1.6e-2, gradients 0.1, updates 0.2), each layout against the same
// engine's single-device bf16 run (the fp32 reference choosing the
// compared update elements), as the other bf16 layouts are. The router
// computes in f32 (its weight's transpose, the projection and the softmax
// the top_k reads). Routing is discrete: against PyTorch's fp32 run a bf16
// rounding of the router's input already moves one of 128 (token, choice)
// pairs in GShard's second layer in the first step on the reference
// executor ([27, 35, 41, 25] for PyTorch's [27, 36, 40, 25]), so the
// trajectories part beyond the bound; and GShard's layouts on the compiled
// CPU backend reach second-layer expert gradients 12-15% from one device's
// by the third step (their per-expert counts equal: we attribute it to a
// near-tie whose order a rounding changes, which moves capacity drops).
// GShard is compared over its first step, Mixtral over three.
// RUN: dtc-compile %S/Inputs/moe/gshard/model.onnx -o %t/gshard-bf16 --lr 0.01 --weight-decay 0.01 --precision bf16
// RUN: dtc-run %t/gshard-bf16 --batch %S/Inputs/moe/gshard/batch --steps 1 --dump %t/gshard-bf16-dump > /dev/null
// RUN: dtc-compile %S/Inputs/moe/gshard/model.onnx -o %t/gshard-bf16-ep2 --lr 0.01 --weight-decay 0.01 --precision bf16 --mesh ep=2
// RUN: %mpirun -np 2 dtc-run %t/gshard-bf16-ep2 --batch %S/Inputs/moe/gshard/batch --steps 1 --dump %t/gshard-bf16-ep2-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/gshard-bf16-ep2-dump %t/gshard-bf16-dump %S/Inputs/moe/gshard/initial --loss-rtol 1.6e-2 --grad-rl2 0.1 --update-rl2 0.2 --mask-from %S/Inputs/moe/gshard/adamw | FileCheck %s
// RUN: dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/mixtral-bf16 --lr 0.01 --weight-decay 0.01 --precision bf16
// RUN: FileCheck %s --check-prefix=ROUTER-F32 < %t/mixtral-bf16/train_step.mlir
// ROUTER-F32: dtc.matmul {{.*}} {dtc.compute_in_f32} : (tensor<64x32xf32>, tensor<32x4xf32>) -> tensor<64x4xf32>
// ROUTER-F32-NEXT: dtc.softmax {{.*}} {dtc.compute_in_f32} : tensor<64x4xf32>
// RUN: dtc-run %t/mixtral-bf16 --batch %S/Inputs/moe/mixtral/batch --steps 3 --dump %t/mixtral-bf16-dump > /dev/null
// RUN: dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/mixtral-bf16-ep2 --lr 0.01 --weight-decay 0.01 --precision bf16 --mesh ep=2
// RUN: %mpirun -np 2 dtc-run %t/mixtral-bf16-ep2 --batch %S/Inputs/moe/mixtral/batch --steps 3 --dump %t/mixtral-bf16-ep2-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/mixtral-bf16-ep2-dump %t/mixtral-bf16-dump %S/Inputs/moe/mixtral/initial --loss-rtol 1.6e-2 --grad-rl2 0.1 --update-rl2 0.2 --mask-from %S/Inputs/moe/mixtral/adamw | FileCheck %s
// RUN: dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/sorted-bf16-ep2 --lr 0.01 --weight-decay 0.01 --precision bf16 --mesh ep=2 --expert-bound 28
// RUN: %mpirun -np 2 dtc-run %t/sorted-bf16-ep2 --batch %S/Inputs/moe/mixtral/batch --steps 3 --dump %t/sorted-bf16-ep2-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/sorted-bf16-ep2-dump %t/mixtral-bf16-dump %S/Inputs/moe/mixtral/initial --loss-rtol 1.6e-2 --grad-rl2 0.1 --update-rl2 0.2 --mask-from %S/Inputs/moe/mixtral/adamw | FileCheck %s
// RUN: dtc-compile %S/Inputs/moe/mixtral/model.onnx -o %t/mixtral-bf16-tp2ep2 --lr 0.01 --weight-decay 0.01 --precision bf16 --mesh tp=2,ep=2
// RUN: %mpirun -np 4 dtc-run %t/mixtral-bf16-tp2ep2 --batch %S/Inputs/moe/mixtral/batch --steps 3 --dump %t/mixtral-bf16-tp2ep2-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/mixtral-bf16-tp2ep2-dump %t/mixtral-bf16-dump %S/Inputs/moe/mixtral/initial --loss-rtol 1.6e-2 --grad-rl2 0.1 --update-rl2 0.2 --mask-from %S/Inputs/moe/mixtral/adamw | FileCheck %s
//
// Every layout against the single-device step in the compiler (--verify):
// RUN: dtc-compile %S/Inputs/moe/gshard/model.onnx -o %t/gshard-verify --lr 0.01 --weight-decay 0.01 --mesh dp=2,ep=2 --verify --target reference 2>&1 | FileCheck %s --check-prefix=VERIFY
// VERIFY: dtc-verify-partition: {{.*}} on 4 simulated ranks (dp=2,ep=2)
//
// Accumulated and pipelined microbatches split the exchanges by their
// blocks of every group's tokens (--strict-sharding: nothing runs
// replicated on the whole batch, as the gathers and scatters over ep did
// before), and train as PyTorch does.
// RUN: for m in gshard mixtral; do \
// RUN:   dtc-compile %S/Inputs/moe/$m/model.onnx -o %t/$m-accum --lr 0.01 --weight-decay 0.01 --mesh ep=2 --grad-accum 2 --strict-sharding && \
// RUN:   %mpirun -np 2 dtc-run %t/$m-accum --batch %S/Inputs/moe/$m/batch --steps 3 --dump %t/$m-accum-dump > /dev/null && \
// RUN:   %python %S/../Utils/compare_training.py %t/$m-accum-dump %S/Inputs/moe/$m/adamw %S/Inputs/moe/$m/initial | tail -1; \
// RUN:   dtc-compile %S/Inputs/moe/$m/model.onnx -o %t/$m-pp --lr 0.01 --weight-decay 0.01 --mesh pp=2,ep=2 --microbatches 2 --pipeline-split 1,1 --strict-sharding --target reference && \
// RUN:   %mpirun -np 4 dtc-run %t/$m-pp --engine reference --batch %S/Inputs/moe/$m/batch --steps 3 --dump %t/$m-pp-dump > /dev/null && \
// RUN:   %python %S/../Utils/compare_training.py %t/$m-pp-dump %S/Inputs/moe/$m/adamw %S/Inputs/moe/$m/initial | tail -1; \
// RUN: done 2>&1 | FileCheck %s --check-prefix=MICROBATCHES
// MICROBATCHES-NOT: warning
// MICROBATCHES-COUNT-4: 0 failed
// MICROBATCHES-NOT: {{warning|error|failed}}
//
// Errors name what is wrong:
// RUN: not dtc-compile %S/Inputs/moe/gshard/model.onnx -o %t/bad --mesh ep=3 2>&1 | FileCheck %s --check-prefix=EP3
// EP3: error: expert parallelism needs ep to divide the 4 experts, not 3
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/bad --mesh ep=2 2>&1 | FileCheck %s --check-prefix=DENSE
// DENSE: error: expert parallelism needs a mixture of experts: the step has no router (a top_k choosing experts)
