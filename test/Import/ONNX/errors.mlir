// Malformed and unsupported models: one clear error naming the node and
// problem, and a non-zero exit, never a crash.

// RUN: not dtc-translate --import-onnx %S/Inputs/missing.onnx 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: cannot open input file '{{.*}}missing.onnx': No such file or directory

// RUN: not dtc-translate --import-onnx %S/Inputs/truncated.onnx 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// TRUNCATED: error: '{{.*}}truncated.onnx' is not a valid ONNX model (truncated or corrupt protobuf, or no graph)

// RUN: not dtc-translate --import-onnx %S/Inputs/garbage.onnx 2>&1 | FileCheck %s --check-prefix=GARBAGE
// GARBAGE: error: '{{.*}}garbage.onnx' is not a valid ONNX model

// RUN: not dtc-translate --import-onnx %S/Inputs/unsupported_op.onnx 2>&1 | FileCheck %s --check-prefix=UNKNOWNOP
// UNKNOWNOP: error: LpPool node '/pool/LpPool': unsupported ONNX op 'LpPool'

// RUN: not dtc-translate --import-onnx %S/Inputs/foreign_domain.onnx 2>&1 | FileCheck %s --check-prefix=DOMAIN
// DOMAIN: error: FusedGemm node '/fused': op domain 'com.microsoft' is not supported

// RUN: not dtc-translate --import-onnx %S/Inputs/unsorted.onnx 2>&1 | FileCheck %s --check-prefix=UNSORTED
// UNSORTED: error: Relu node '/second': input 't' is not defined before this node (the graph is not topologically sorted, or has a cycle)

// RUN: not dtc-translate --import-onnx %S/Inputs/cycle.onnx 2>&1 | FileCheck %s --check-prefix=CYCLE
// CYCLE: error: Add node '/a': input 'b' is not defined before this node

// RUN: not dtc-translate --import-onnx %S/Inputs/symbolic_dim.onnx 2>&1 | FileCheck %s --check-prefix=SYMBOLIC
// SYMBOLIC: error: graph input 'x' has symbolic dimension 'batch'; dtc compiles static shapes: give its shape with --input-shape x=... or bind it from a batch (--bind-inputs DIR holding x.npy)

// RUN: not dtc-translate --import-onnx %S/Inputs/new_opset.onnx 2>&1 | FileCheck %s --check-prefix=OPSET
// OPSET: error: opset 99 is newer than dtc supports (28)

// RUN: not dtc-translate --import-onnx %S/Inputs/bad_broadcast.onnx 2>&1 | FileCheck %s --check-prefix=BROADCAST
// BROADCAST: error: Add node '/add': operand shapes are not broadcastable

// RUN: not dtc-translate --import-onnx %S/Inputs/missing_operand.onnx 2>&1 | FileCheck %s --check-prefix=ARITY
// ARITY: error: Add node '/add': needs 2 inputs but has 1

// RUN: not dtc-translate --import-onnx %S/Inputs/bad_axis.onnx 2>&1 | FileCheck %s --check-prefix=AXIS
// AXIS: error: Softmax node '/softmax': axis 5 is out of range for rank 2

// RUN: not dtc-translate --import-onnx %S/Inputs/wrong_output_shape.onnx 2>&1 | FileCheck %s --check-prefix=OUTPUT
// OUTPUT: error: graph output 'y' is computed as 'tensor<3xf32>' but the model declares another shape

// RUN: not dtc-translate --import-onnx %S/Inputs/mlp.onnx --bind-inputs %S/Inputs/no-such-dir 2>&1 | FileCheck %s --check-prefix=BINDDIR
// BINDDIR: error: {{.*}}no-such-dir: cannot read directory

// A ConstantOfShape of 2^40 elements is a splat: one element stored.
// RUN: dtc-translate --import-onnx %S/Inputs/huge_constant.onnx 2>&1 | FileCheck %s --check-prefix=HUGECONST
// HUGECONST: dtc.constant dense<0.000000e+00> : tensor<1048576x1048576xf32>

// RUN: not dtc-translate --import-onnx %S/Inputs/huge_expand.onnx 2>&1 | FileCheck %s --check-prefix=HUGEEXPAND
// HUGEEXPAND: error: Expand node '/expand': a result of type 'tensor<1099511627776x1099511627776x4xf32>' is absurdly large

// NonZero's static form (every position, the others masked where
// ScatterElements adds the rows back into zeros) serves no other use:
// RUN: not dtc-translate --import-onnx %S/Inputs/nonzero_unscattered.onnx 2>&1 | FileCheck %s --check-prefix=NONZERO
// NONZERO: error: NonZero node '/NonZero': its positions (as many as the nonzero elements, known only at run time) are not scattered back by a ScatterElements into zeros (index_add_), the one use the static form of every position can express
// RUN: not dtc-translate --import-onnx %S/Inputs/nonzero_counted.onnx 2>&1 | FileCheck %s --check-prefix=COUNTED
// COUNTED: error: NonZero node '/NonZero': its positions reach 'dtc.reduce_sum', which would count the padding of the static form (every position, the others masked)
