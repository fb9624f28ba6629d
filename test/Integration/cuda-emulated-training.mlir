// The CUDA target's kernels (dtc-compile --target cuda) on real exports,
// one device and sharded: each step compiled for sm_90 by nvcc and, as
// host C++ (--cuda-emulation), trained three steps on CPU ranks
// (--emulate-cuda) against PyTorch's trajectory and the reference
// executor's (Utils/train_layout.sh: loss 1e-5, gradients 1e-4, updates
// 1e-3 relative). Covers GQA with rotary and SwiGLU (Llama), Falcon's
// update_slice, Gemma, Phi-3 on tp=2, OPT (torch 1.13), convolutions and
// pooling (ResNet), a ViT on dp=2, and mixtures of experts (top_k, cumsum,
// scatter_elements_add): GShard's capacity form on one device and ep=2,
// Mixtral's loop form on dp=2 x ep=2. A GPU runs none of it: the launcher
// for GPUs (dtc-launch-cuda) is docs/Codegen.md's.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf5/llama-names %t/llama 1 --target cuda | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf5/llama-names %t/llama-z1 4 --mesh dp=2,tp=2 --sequence-parallel --zero 1 --target cuda | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf5/falcon-names %t/falcon 1 --target cuda | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf5/gemma-names %t/gemma 1 --target cuda | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf5/phi3-names %t/phi3-tp2 2 --mesh tp=2 --target cuda | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf/opt %t/opt 1 --target cuda | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/vision/resnet %t/resnet 1 --target cuda | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/vision/vit %t/vit-dp2 2 --mesh dp=2 --target cuda | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/moe/gshard %t/gshard 1 --target cuda | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/moe/gshard %t/gshard-ep2 2 --mesh ep=2 --strict-sharding --target cuda | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/moe/mixtral %t/mixtral-dp2-ep2 4 --mesh dp=2,ep=2 --strict-sharding --target cuda | FileCheck %s
// CHECK: 0 failed
// CHECK-NEXT: compiled vs PyTorch: 0 failed
// CHECK-NEXT: compiled vs reference: 0 failed
