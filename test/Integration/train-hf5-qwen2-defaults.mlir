// Qwen2 (q/k/v biases), exported by torch 2.x's default
// exporter with every default (torch.onnx.export(..., dynamo=True): opset
// 20, optimize=True, sdpa attention; Inputs/hf5/make_hf5_models.py): each
// Linear weight is a transposed val_N initializer, which dtc trains as the
// PyTorch parameter it records (folded_from). Three AdamW steps on one device
// and on dp=2 x tp=2 with sequence parallelism and ZeRO-1 match PyTorch.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf5/qwen2-defaults %t/one 1 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf5/qwen2-defaults %t/z1 4 --mesh dp=2,tp=2 --sequence-parallel --zero 1 | FileCheck %s
// CHECK: 0 failed
