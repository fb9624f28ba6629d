// Llama 3.2's layout (the head tied to the embedding; the optimizer stores the head as a transposed copy, which dtc re-ties), exported by torch 2.x's default
// exporter with every default (torch.onnx.export(..., dynamo=True): opset
// 20, optimize=True, sdpa attention; Inputs/hf5/make_hf5_models.py): each
// Linear weight is a transposed val_N initializer, which dtc trains as the
// PyTorch parameter it records (folded_from). Three AdamW steps on one device
// and on dp=2 x tp=2 with sequence parallelism and ZeRO-1 match PyTorch.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf5/llama_tied-defaults %t/one 1 | FileCheck %s
// RUN: %S/../Utils/train_layout.sh %dtc_tools_dir %python %S/Inputs/hf5/llama_tied-defaults %t/z1 4 --mesh dp=2,tp=2 --sequence-parallel --zero 1 | FileCheck %s
// CHECK: 0 failed
//
// The tie is restored with a remark; --no-retie keeps the copy apart, a
// second parameter (which PyTorch does not have).
// RUN: dtc-compile %S/Inputs/hf5/llama_tied-defaults/model.onnx -o %t/tied 2>&1 | FileCheck %s --check-prefix=RETIE
// RETIE: remark: re-tied 'val_{{[0-9]+}}' to parameter 'm.lm_head.weight': torch's ONNX optimizer stored its transpose apart; they train as one, gradients summed
// RUN: dtc-compile %S/Inputs/hf5/llama_tied-defaults/model.onnx --list-params --no-retie | FileCheck %s --check-prefix=APART
// APART: val_{{[0-9]+}} {{ *}}32x64xf32 {{ *}}trainable (exporter: folded from PARAMETER 'm.lm_head.weight')
