// GPT-2 exported with every default (Inputs/hf5/make_hf5_models.py,
// flavour defaults_folded): torch's ONNX optimizer folds the position
// embedding's first 8 rows (the positions of the exported sequence) into a
// constant, so the parameter is gone from the graph. dtc trains the folded
// rows in its place, saying what differs from PyTorch, or refuses under
// --strict-params.
// RUN: rm -rf %t && mkdir -p %t
// RUN: dtc-compile %S/Inputs/hf5/gpt2-defaults/model.onnx -o %t/out 2>&1 | FileCheck %s
// CHECK: warning: initializer 'embedding_1' is computed from parameter 'm.transformer.wpe.weight' and other values by torch's ONNX optimizer: it trains in the parameter's place, which differs from PyTorch's training of 'm.transformer.wpe.weight' (export with optimize=False to keep it)
// CHECK: remark: re-tied 'val_{{[0-9]+}}' to parameter 'm.lm_head.weight'
// RUN: not dtc-compile %S/Inputs/hf5/gpt2-defaults/model.onnx -o %t/strict --strict-params 2>&1 | FileCheck %s --check-prefix=STRICT
// STRICT: error: initializer 'embedding_1' is computed from parameter 'm.transformer.wpe.weight'
