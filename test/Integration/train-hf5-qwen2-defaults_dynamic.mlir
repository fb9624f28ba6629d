// qwen2-defaults_dynamic: exported with dynamic batch and sequence dimensions
// (dynamic_shapes, Dim.DYNAMIC; Inputs/hf5/make_hf5_models.py). Without a
// shape the compile names the unbound dimension; bound from the batch files
// (--bind-inputs BATCH_DIR: ids stays an input, only its shape is taken),
// three AdamW steps on one device and on dp=2 x tp=2 with sequence
// parallelism and ZeRO-1 match PyTorch.
// RUN: rm -rf %t && mkdir -p %t
// RUN: not dtc-compile %S/Inputs/hf5/qwen2-defaults_dynamic/model.onnx -o %t/unbound 2>&1 | FileCheck %s --check-prefix=UNBOUND
// UNBOUND: error: graph input 'ids' has symbolic dimension '{{.*}}'; dtc compiles static shapes: give its shape with --input-shape ids=... or bind it from a batch (--bind-inputs DIR holding ids.npy)
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf5/qwen2-defaults_dynamic %t/one 1 --bind-inputs %S/Inputs/hf5/qwen2-defaults_dynamic/batch | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf5/qwen2-defaults_dynamic %t/z1 4 --bind-inputs %S/Inputs/hf5/qwen2-defaults_dynamic/batch --mesh dp=2,tp=2 --sequence-parallel --zero 1 | FileCheck %s
// CHECK: 0 failed
