// mistral-opset23_dynamic: exported at opset 23 with dynamic batch and sequence dimensions
// (dynamic_shapes, Dim.DYNAMIC; Inputs/hf5/make_hf5_models.py), where the
// exporter writes ONNX's RotaryEmbedding as well as Attention. Bound from the
// batch files (--bind-inputs BATCH_DIR), three AdamW steps on one device and
// on dp=2 x tp=2 with sequence parallelism and ZeRO-1 match PyTorch.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf5/mistral-opset23_dynamic %t/one 1 --bind-inputs %S/Inputs/hf5/mistral-opset23_dynamic/batch | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf5/mistral-opset23_dynamic %t/z1 4 --bind-inputs %S/Inputs/hf5/mistral-opset23_dynamic/batch --mesh dp=2,tp=2 --sequence-parallel --zero 1 | FileCheck %s
// CHECK: 0 failed
