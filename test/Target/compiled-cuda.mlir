// dtc-compile --target cuda: GPT-2's step as CUDA C++ kernels compiled by
// nvcc for sm_90 (SASS and PTX), ptxas's registers and spills reported;
// the same kernels.cu compiled as host C++ (--cuda-emulation, one thread
// per block) and run by the CPU launcher (--emulate-cuda) trains as the
// reference executor does. No GPU runs here: what the kernels compute is
// checked, not the GPU's cooperative parts (docs/Codegen.md).
// RUN: rm -rf %t && mkdir -p %t
// RUN: dtc-compile %S/../Integration/Inputs/hf5/gpt2-names/model.onnx -o %t/gpt2 --lr 0.01 --target cuda --cuda-emulation 2>&1 | FileCheck %s --check-prefix=COMPILE
// COMPILE: dtc-compile: compiling the step for CUDA GPUs (sm_90)
// COMPILE: dtc-compile: compiled program: {{[0-9]+}} kernels, {{[0-9]+}} GEMMs
// COMPILE: dtc-compile: ptxas: at most {{[0-9]+}} registers a thread, 0 bytes of spills
// COMPILE: dtc-compile: wrote {{.*}}/program.txt and {{.*}}/kernels.{cu,fatbin}, kernels-emulated.so
// RUN: FileCheck %s --check-prefix=PROGRAM < %t/gpt2/program.txt
// PROGRAM: dtc-cuda-program 3
// PROGRAM: argument role=input name=ids dtype=i64 shape=4x8
// The first layer norm with the embeddings' sum before it: a block of 32
// threads per row of 32 values, one block per token.
// PROGRAM: kernel sym=dtc_kernel_{{[0-9]+}} op=row_reduction:add+reduce_mean+sub+mul+... grid=32 block=32 args=
// PROGRAM: gemm ta=0 tb=0 lhs=m{{[0-9]+}}:f32:32x32 rhs=a4:f32:32x96 out=m{{[0-9]+}}:f32:32x96
// The embedding's gradient: one block, its copy then atomic adds.
// PROGRAM: kernel sym=dtc_kernel_{{[0-9]+}} op=scatter_add grid=1 block=256 args=
// RUN: FileCheck %s --check-prefix=SOURCE < %t/gpt2/kernels.cu
// SOURCE: #ifdef DTC_CUDA_EMULATE
// SOURCE: DTC_KERNEL void dtc_kernel_0(
// SOURCE: acc{{[0-9]+}} = dtc_block_reduce(acc{{[0-9]+}}, dtc_sum());
// SOURCE: dtc_atomic_add(&out0[
// SOURCE: extern "C" void dtc_kernel_0_packed(void **args, int64_t, int64_t) {
// RUN: FileCheck %s --check-prefix=REPORT < %t/gpt2/report.json
// REPORT: "cuda": {
// REPORT: "arch": "sm_90"
// REPORT: "spill_bytes": 0
// ptxas compiled every kernel for sm_90 (the fatbin also holds their PTX).
// RUN: FileCheck %s --check-prefix=PTXAS < %t/gpt2/ptxas.txt
// PTXAS: ptxas info    : Compiling entry function 'dtc_kernel_0' for 'sm_90'
// PTXAS: ptxas info    : Used {{[0-9]+}} registers

// The emulated kernels against the reference executor on the same OUT:
// loss 1e-5, gradients 1e-4, updates 1e-3 relative.
// RUN: dtc-run %t/gpt2 --emulate-cuda --batch %S/../Integration/Inputs/hf5/gpt2-names/batch --steps 3 --dump %t/emulated | FileCheck %s --check-prefix=TRAIN
// TRAIN-COUNT-3: step {{ *[0-9]}}/3 loss
// TRAIN: peak intermediate memory: [[ARENA:[0-9]+]] B (planned [[ARENA]] B)
// RUN: dtc-run %t/gpt2 --engine reference --batch %S/../Integration/Inputs/hf5/gpt2-names/batch --steps 3 --dump %t/ref > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/emulated %t/ref %S/../Integration/Inputs/hf5/gpt2-names/initial --mask-from %S/../Integration/Inputs/hf5/gpt2-names/adamw | FileCheck %s --check-prefix=SAME
// SAME: 0 failed

// A CUDA program is not run on CPU ranks unless asked for its emulation.
// RUN: not dtc-run %t/gpt2 --batch %S/../Integration/Inputs/hf5/gpt2-names/batch --steps 1 2>&1 | FileCheck %s --check-prefix=NOT-CPU
// NOT-CPU: error: '{{.*}}program.txt' is a program for CUDA GPUs (dtc-compile --target cuda): run it with dtc-launch-cuda on a GPU, or compile it with --cuda-emulation and run it here with --emulate-cuda
// RUN: rm %t/gpt2/kernels-emulated.so
// RUN: not dtc-launch %t/gpt2 --emulate-cuda --batch %S/../Integration/Inputs/hf5/gpt2-names/batch --steps 1 2>&1 | FileCheck %s --check-prefix=NO-EMULATION
// NO-EMULATION: error: cannot load '{{.*}}kernels-emulated.so'

// bf16 mixed precision: bf16 buffers hold their bits, every op computes in
// f32 and rounds its result once, bf16 GEMMs accumulate in f32 (cuBLAS's
// GemmEx on the GPU, OpenBLAS on the widened operands in emulation),
// attention keeps its op kernel (a thread per query row), the embedding's
// gradient adds bf16 atomically; against PyTorch's f32 trajectory within
// the bf16 bound of docs/Training.md (as train-bf16.mlir).
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/bf16 --lr 0.01 --weight-decay 0.01 --precision bf16 --target cuda --cuda-emulation 2> /dev/null
// RUN: FileCheck %s --check-prefix=BF16-SOURCE < %t/bf16/kernels.cu
// BF16-SOURCE: dtc_round_bf16(
// BF16-SOURCE: dtc_atomic_add_half(dtc_bf16_ptr{&out0[
// RUN: grep "op=attention" %t/bf16/program.txt
// RUN: dtc-run %t/bf16 --emulate-cuda --batch %S/../Integration/Inputs/tiny_transformer/batch --steps 3 --dump %t/bf16-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/bf16-dump %S/../Integration/Inputs/tiny_transformer/adamw %S/../Integration/Inputs/tiny_transformer/initial --loss-rtol 1.6e-2 --grad-rl2 0.1 --update-rl2 0.2 | FileCheck %s --check-prefix=SAME
// And against the same step compiled for CPU ranks, which rounds as the
// reference executor does, within the f32 tolerances: each op's rounding
// is the same (only summation orders differ).
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/bf16-cpu --lr 0.01 --weight-decay 0.01 --precision bf16 --target cpu 2> /dev/null
// RUN: dtc-run %t/bf16-cpu --batch %S/../Integration/Inputs/tiny_transformer/batch --steps 3 --dump %t/bf16-cpu-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/bf16-dump %t/bf16-cpu-dump %S/../Integration/Inputs/tiny_transformer/initial --mask-from %S/../Integration/Inputs/tiny_transformer/adamw | FileCheck %s --check-prefix=SAME
// RUN: dtc-compile %S/../../examples/tiny_llama/model.onnx -o %t/bf16-llama --lr 0.01 --weight-decay 0.01 --precision bf16 --freeze '^rope_' --target cuda --cuda-emulation 2> /dev/null
// RUN: dtc-run %t/bf16-llama --emulate-cuda --batch %S/../Integration/Inputs/tiny_llama/batch --steps 3 --dump %t/bf16-llama-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/bf16-llama-dump %S/../Integration/Inputs/tiny_llama/adamw %S/../Integration/Inputs/tiny_llama/initial --loss-rtol 1.6e-2 --grad-rl2 0.1 --update-rl2 0.2 | FileCheck %s --check-prefix=SAME

// Fused attention (dtc-fuse-attention, for bf16 and f16 attention whose
// head dimensions are multiples of 16 up to 128): a FlashAttention-style
// forward that keeps each row's logsumexp instead of the probabilities and
// one backward kernel (dK and dV per key tile, dQ per query tile) that
// recomputes them; tensor-core products on 64-row tiles in shared memory
// beyond the default 48 KiB (smem=), so the launcher opts in. A Llama with
// head dimension 128 (the largest tile) and grouped heads, 72 tokens (a
// whole and a partial tile); a GPT with a boolean causal mask and dropout
// on the probabilities. Against the reference executor on the same OUT
// (f64 attention): loss 1e-3, gradients 5e-2 relative (the probabilities
// are rounded to bf16 for their product with v, as FlashAttention's are;
// the unfused program's own errors against the reference are of the same
// size, 2.8e-2 for the key projection here against 3.4e-2).
// RUN: dtc-compile %S/../Integration/Inputs/flash/llama/model.onnx -o %t/flash --lr 0.01 --precision bf16 --freeze '^rope_' --target cuda --cuda-emulation 2>&1 | FileCheck %s --check-prefix=FLASH-COMPILE
// FLASH-COMPILE: ptxas: at most {{[0-9]+}} registers a thread, 0 bytes of spills
// RUN: FileCheck %s --check-prefix=FLASH < %t/flash/program.txt
// FLASH-NOT: op=attention
// FLASH: op=fused_attention grid=8 block=128 smem=113408 flops=1.061683e+07
// FLASH: op=fused_attention_grad grid=12 block=128 smem=190976 flops=2.654208e+07
// The float causal mask's -inf: tiles above the diagonal are skipped.
// RUN: FileCheck %s --check-prefix=FLASH-SOURCE < %t/flash/kernels.cu
// FLASH-SOURCE: return (float)dtc_bf16_to_f32(in3[qi * 72LL + j]) == -INFINITY;
// FLASH-SOURCE: dtc_fa_forward<dtc_bf16, 128, 128, true>(in0, in1, in2, out0, out1, 2LL, 2LL, 1LL, 72LL, 72LL, score, keep, masked);
// FLASH-SOURCE: dtc_fa_backward<dtc_bf16, 128, 128, true>(in0, in1, in2, in3, in4, in5, out0, out1, out2,
// RUN: dtc-run %t/flash --emulate-cuda --batch %S/../Integration/Inputs/flash/llama/task --steps 3 --dump %t/flash-dump > /dev/null
// RUN: dtc-run %t/flash --engine reference --batch %S/../Integration/Inputs/flash/llama/task --steps 3 --dump %t/flash-ref > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/flash-dump %t/flash-ref %S/../Integration/Inputs/flash/llama/initial --loss-rtol 1e-3 --grad-rl2 5e-2 --update-rl2 0.2 | FileCheck %s --check-prefix=SAME
// fp16 (f16 tensor-core fragments; loss scaling from 16) within
// train-fp16's bound.
// RUN: dtc-compile %S/../Integration/Inputs/flash/llama/model.onnx -o %t/flash-f16 --lr 0.01 --precision fp16 --init-scale 16 --freeze '^rope_' --target cuda --cuda-emulation 2> /dev/null
// RUN: grep "dtc_fa_backward<dtc_f16, 128, 128, true>" %t/flash-f16/kernels.cu
// RUN: dtc-run %t/flash-f16 --emulate-cuda --batch %S/../Integration/Inputs/flash/llama/task --steps 3 --dump %t/flash-f16-dump > /dev/null
// RUN: dtc-run %t/flash-f16 --engine reference --batch %S/../Integration/Inputs/flash/llama/task --steps 3 --dump %t/flash-f16-ref > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/flash-f16-dump %t/flash-f16-ref %S/../Integration/Inputs/flash/llama/initial --loss-rtol 2e-3 --grad-rl2 2.5e-2 --update-rl2 0.1 | FileCheck %s --check-prefix=SAME
// Data parallel with ZeRO-1: each rank's fused kernels on its sequence.
// RUN: dtc-compile %S/../Integration/Inputs/flash/llama/model.onnx -o %t/flash-dp --mesh dp=2 --zero 1 --lr 0.01 --precision bf16 --freeze '^rope_' --target cuda --cuda-emulation 2> /dev/null
// RUN: grep "op=fused_attention_grad" %t/flash-dp/program.txt
// RUN: %mpirun -np 2 dtc-run %t/flash-dp --emulate-cuda --batch %S/../Integration/Inputs/flash/llama/task --steps 3 --dump %t/flash-dp-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/flash-dp-dump %t/flash-ref %S/../Integration/Inputs/flash/llama/initial --loss-rtol 1e-3 --grad-rl2 5e-2 --update-rl2 0.2 | FileCheck %s --check-prefix=SAME
// RUN: dtc-compile %S/../Integration/Inputs/flash/gpt/model.onnx -o %t/flash-gpt --lr 0.01 --precision bf16 --dropout --seed 7 --target cuda --cuda-emulation 2> /dev/null
// RUN: grep "op=fused_attention_grad" %t/flash-gpt/program.txt
// RUN: dtc-run %t/flash-gpt --emulate-cuda --batch %S/../Integration/Inputs/flash/gpt/task --steps 3 --dump %t/flash-gpt-dump > /dev/null
// RUN: dtc-run %t/flash-gpt --engine reference --batch %S/../Integration/Inputs/flash/gpt/task --steps 3 --dump %t/flash-gpt-ref > /dev/null
// (The f32 step tells which gradients are zero in exact arithmetic.)
// RUN: dtc-compile %S/../Integration/Inputs/flash/gpt/model.onnx -o %t/flash-gpt-f32 --lr 0.01 --dropout --seed 7 2> /dev/null
// RUN: dtc-run %t/flash-gpt-f32 --batch %S/../Integration/Inputs/flash/gpt/task --steps 3 --dump %t/flash-gpt-f32-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/flash-gpt-dump %t/flash-gpt-ref %S/../Integration/Inputs/flash/gpt/initial --mask-from %t/flash-gpt-f32-dump --loss-rtol 1e-3 --grad-rl2 5e-2 --update-rl2 0.2 | FileCheck %s --check-prefix=SAME

// Dropout (--dropout: training-mode Dropout nodes, 28 in this GPT): the
// kernels draw Philox4x32-10 as the CPU kernels and the reference executor
// do, inside loop groups, as op kernels and in bf16 attention; the
// emulated losses equal the CPU-compiled step's, in f32 and in bf16.
// RUN: dtc-compile %S/../Integration/Inputs/remat/gpt4/model.onnx -o %t/drop --lr 0.01 --dropout --seed 7 --target cuda --cuda-emulation 2> /dev/null
// RUN: dtc-compile %S/../Integration/Inputs/remat/gpt4/model.onnx -o %t/drop-cpu --lr 0.01 --dropout --seed 7 --target cpu 2> /dev/null
// RUN: dtc-run %t/drop --emulate-cuda --batch %S/../Integration/Inputs/remat/gpt4/batch --steps 3 --dump %t/drop-dump > /dev/null
// RUN: dtc-run %t/drop-cpu --batch %S/../Integration/Inputs/remat/gpt4/batch --steps 3 --dump %t/drop-cpu-dump > /dev/null
// RUN: %python %S/../Utils/compare_npy.py %t/drop-dump/loss.npy %t/drop-cpu-dump/loss.npy --rtol 1e-5 --atol 0
// RUN: dtc-compile %S/../Integration/Inputs/remat/gpt4/model.onnx -o %t/drop-bf16 --lr 0.01 --dropout --seed 7 --precision bf16 --target cuda --cuda-emulation 2> /dev/null
// RUN: grep -c "dtc_dropout(" %t/drop-bf16/kernels.cu | FileCheck %s --check-prefix=DRAWS
// DRAWS: {{[1-9][0-9]+}}
// RUN: dtc-compile %S/../Integration/Inputs/remat/gpt4/model.onnx -o %t/drop-bf16-cpu --lr 0.01 --dropout --seed 7 --precision bf16 --target cpu 2> /dev/null
// RUN: dtc-run %t/drop-bf16 --emulate-cuda --batch %S/../Integration/Inputs/remat/gpt4/batch --steps 3 --dump %t/drop-bf16-dump > /dev/null
// RUN: dtc-run %t/drop-bf16-cpu --batch %S/../Integration/Inputs/remat/gpt4/batch --steps 3 --dump %t/drop-bf16-cpu-dump > /dev/null
// RUN: %python %S/../Utils/compare_npy.py %t/drop-bf16-dump/loss.npy %t/drop-bf16-cpu-dump/loss.npy --rtol 1e-5 --atol 0

// fp16 with dynamic loss scaling: f16 as its bits, converted in software
// as the runtime's _Float16 (nearest even, subnormals); within the fp16
// bound of train-fp16.mlir against PyTorch, and within 2 f16 units of
// roundoff (1e-3) of the CPU-compiled fp16 step's gradients.
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/f16 --lr 0.01 --weight-decay 0.01 --precision fp16 --target cuda --cuda-emulation 2> /dev/null
// RUN: grep -c "dtc_round_f16(" %t/f16/kernels.cu
// RUN: dtc-run %t/f16 --emulate-cuda --batch %S/../Integration/Inputs/tiny_transformer/batch --steps 3 --dump %t/f16-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/f16-dump %S/../Integration/Inputs/tiny_transformer/adamw %S/../Integration/Inputs/tiny_transformer/initial --loss-rtol 2e-3 --grad-rl2 2.5e-2 --update-rl2 0.1 | FileCheck %s --check-prefix=SAME
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/f16-cpu --lr 0.01 --weight-decay 0.01 --precision fp16 --target cpu 2> /dev/null
// RUN: dtc-run %t/f16-cpu --batch %S/../Integration/Inputs/tiny_transformer/batch --steps 3 --dump %t/f16-cpu-dump > /dev/null
// RUN: %python %S/../Utils/compare_training.py %t/f16-dump %t/f16-cpu-dump %S/../Integration/Inputs/tiny_transformer/initial --mask-from %S/../Integration/Inputs/tiny_transformer/adamw --grad-rl2 1e-3 | FileCheck %s --check-prefix=SAME

// Errors.
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/arch --target cuda --gpu-arch 90 2>&1 | FileCheck %s --check-prefix=ARCH
// ARCH: error: --gpu-arch takes an architecture like sm_90, not '90'

// The GPU launcher (run on a GPU by scripts/gpu-check.sh, ctest's
// gpu-check): its help, and a program of another target refused before any
// GPU is looked for.
// RUN: %dtc_tools_dir/dtc-launch-cuda --help | FileCheck %s --check-prefix=LAUNCH-HELP
// LAUNCH-HELP: dtc-launch-cuda: runs a training step compiled with dtc-compile --target cuda
// LAUNCH-HELP: PyTorch's wheels
// LAUNCH-HELP: --profile N
// LAUNCH-HELP: --steps K
// RUN: not %dtc_tools_dir/dtc-launch-cuda %t/gpt2 --profile 0 2>&1 | FileCheck %s --check-prefix=PROFILE
// PROFILE: error: --profile takes a number of thunks to print, at least 1
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/cpu --target cpu 2> /dev/null
// RUN: not %dtc_tools_dir/dtc-launch-cuda %t/cpu --batch %S/../Integration/Inputs/tiny_transformer/batch 2>&1 | FileCheck %s --check-prefix=NOT-CUDA
// NOT-CUDA: error: '{{.*}}program.txt' is no program compiled with --target cuda
