// phi3 (defaults flavour): a tiny config of the transformers 5 class, exported
// by torch 2.x's default exporter (torch.onnx.export(..., dynamo=True) with every default: optimize=True, sdpa attention; each Linear weight a transposed val_N initializer that dtc trains as the PyTorch parameter it records;
// Inputs/hf5/make_hf5_models.py). Three AdamW steps on one device and on
// dp=2 x tp=2 with sequence parallelism and ZeRO-1 match PyTorch (loss 1e-5,
// gradients 1e-4, updates 1e-3).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf5/phi3-defaults %t/one 1 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf5/phi3-defaults %t/z1 4 --mesh dp=2,tp=2 --sequence-parallel --zero 1 | FileCheck %s
// CHECK: 0 failed
