// --sharding-spec: parameter layouts from a JSON file. With --tp-strategy
// none, a spec that spells out Megatron's layouts for the GPT-2 example
// gives the same program as the matcher -- the same shardings and
// collectives -- and the same trajectory as PyTorch.
// RUN: rm -rf %t && mkdir -p %t
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/spec --lr 0.01 --weight-decay 0.01 --verify --mesh tp=2 --tp-strategy none --sharding-spec %S/Inputs/specs/gpt2-megatron.json
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/matched --lr 0.01 --weight-decay 0.01 --verify --mesh tp=2
// RUN: diff %t/spec/train_step.mlir %t/matched/train_step.mlir
// RUN: %mpirun -np 2 dtc-run %t/spec --batch %S/Inputs/tiny_transformer/batch --steps 3 --dump %t/spec-dump
// RUN: %python %S/../Utils/compare_training.py %t/spec-dump %S/Inputs/tiny_transformer/adamw %S/Inputs/tiny_transformer/initial | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: 0 failed
//
// A spec overrides the matcher for what it names: here the MLP stays
// replicated (its pair is not split) while attention keeps its layout.
// RUN: echo '{"block\\.(fc|out)\\.weight": [[], []], "block\\.fc\\.bias": [[]]}' > %t/mlp-whole.json
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/mlp-whole --verify --mesh tp=2 --sharding-spec %t/mlp-whole.json
// RUN: FileCheck %s --check-prefix=WHOLE < %t/mlp-whole/train_step.mlir
// WHOLE: dtc.param = "block.qkv.weight", dtc.sharding
// WHOLE-NOT: dtc.param = "block.fc.weight", dtc.sharding
// WHOLE: dtc.param = "block.fc.weight"
//
// Errors name the file, the rule and the parameter.
// RUN: echo '{"block\\.(fc|out)\\.weight|block\\.fc\\.bias": [[]]}' > %t/bad-rank.json
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/x --verify --mesh tp=2 --sharding-spec %t/bad-rank.json 2>&1 | FileCheck %s --check-prefix=RANK
// RANK: error: --sharding-spec {{.*}}bad-rank.json: rule 'block\.(fc|out)\.weight|block\.fc\.bias' gives 'block.fc.weight' a layout that is not one list of axes per dimension (it has 2 dimensions)
// RUN: echo '{"block\\.qkv\\.weight": [["tp"], []], "block\\.qkv\\.w.*": [["tp"], []]}' > %t/ambiguous.json
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/x --verify --mesh tp=2 --sharding-spec %t/ambiguous.json 2>&1 | FileCheck %s --check-prefix=AMBIGUOUS
// AMBIGUOUS: error: --sharding-spec {{.*}}ambiguous.json: 'block.qkv.weight' matches both
// RUN: echo '{"head\\.weight": [["dp"], []]}' > %t/dp.json
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/x --verify --mesh dp=2,tp=2 --sharding-spec %t/dp.json 2>&1 | FileCheck %s --check-prefix=AXIS
// AXIS: error: --sharding-spec {{.*}}dp.json: rule 'head\.weight': only the tp axis shards parameters here
// RUN: echo '{"block\\.qkv\\.bias": {"dims": [["tp"]], "blocks": [5]}}' > %t/blocks.json
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/x --verify --mesh tp=2 --sharding-spec %t/blocks.json 2>&1 | FileCheck %s --check-prefix=BLOCKS
// BLOCKS: error: --sharding-spec {{.*}}blocks.json: 'block.qkv.bias' dimension 0 (96) does not split into 2 ranks in 5 blocks
// RUN: echo '{"block\\.fc\\.weight": {"dims": [["tp"], []], "pinned": "no"}}' > %t/pinned.json
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/x --verify --mesh tp=2 --sharding-spec %t/pinned.json 2>&1 | FileCheck %s --check-prefix=PINNED
// PINNED: error: --sharding-spec {{.*}}pinned.json: rule 'block\.fc\.weight': "pinned" must be true or false
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/x --verify --mesh tp=2 --sharding-spec %t/missing.json 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: --sharding-spec {{.*}}missing.json: No such file or directory
// RUN: echo '{"a": ' > %t/broken.json
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/x --verify --mesh tp=2 --sharding-spec %t/broken.json 2>&1 | FileCheck %s --check-prefix=BROKEN
// BROKEN: error: --sharding-spec {{.*}}broken.json: {{.*}}
// The tp options need a tp axis.
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/x --verify --mesh dp=2 --sharding-spec %S/Inputs/specs/gpt2-megatron.json 2>&1 | FileCheck %s --check-prefix=NOTP
// NOTP: error: --sharding-spec needs a tp axis of 2 or more ranks (--mesh ...,tp=N)
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/x --sequence-parallel 2>&1 | FileCheck %s --check-prefix=NOTP-SP
// NOTP-SP: error: --sequence-parallel needs a tp axis of 2 or more ranks (--mesh ...,tp=N)
