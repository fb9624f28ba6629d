// stablelm (opset23 flavour): a tiny config of the transformers 5 class, exported
// by torch 2.x's default exporter at opset 23 with sdpa attention
// (torch.onnx.export(..., dynamo=True, opset_version=23): ONNX's Attention
// and RMSNormalization ops, Linear weights folded into transposed val_N
// initializers; Inputs/hf5/make_hf5_models.py). Three AdamW steps on one
// device and on dp=2 x tp=2 with sequence parallelism and ZeRO-1 match
// PyTorch (loss 1e-5, gradients 1e-4, updates 1e-3).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf5/stablelm-opset23 %t/one 1 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf5/stablelm-opset23 %t/z1 4 --mesh dp=2,tp=2 --sequence-parallel --zero 1 | FileCheck %s
// CHECK: 0 failed
