// The sequence ops resolve at import into plain tensors: SplitToSequence
// (sizes, a chunk size, unit parts without the axis), SequenceAt (negative
// positions too), SequenceLength, SequenceConstruct, SequenceInsert,
// SequenceErase and ConcatFromSequence (concat and stack) compute numpy's
// results.
// RUN: rm -rf %t && %python %S/Inputs/make_sequences.py %t
// RUN: dtc-translate --import-onnx %t/model.onnx -o %t/model.mlir
// RUN: dtc-run %t/model.mlir --inputs %t/inputs --outputs %t/out > /dev/null
// RUN: for name in q k v n joined stacked qq; do %python %S/../../Utils/compare_npy.py %t/out/$name.npy %t/expected/$name.npy --rtol 0 --atol 0 || exit 1; done
//
// A position that is not a constant is an error naming the node.
// RUN: %python -c "import onnx; from onnx import helper as h, TensorProto as T; \
// RUN:   g = h.make_graph([h.make_node('SplitToSequence', ['x'], ['s'], axis=0), h.make_node('SequenceAt', ['s', 'i'], ['y'])], 'g', \
// RUN:   [h.make_tensor_value_info('x', T.FLOAT, [3]), h.make_tensor_value_info('i', T.INT64, [])], [h.make_tensor_value_info('y', T.FLOAT, [1])]); \
// RUN:   onnx.save(h.make_model(g, opset_imports=[h.make_opsetid('', 18)]), '%t/dynamic.onnx')"
// RUN: not dtc-translate --import-onnx %t/dynamic.onnx 2>&1 | FileCheck %s --check-prefix=DYNAMIC
// DYNAMIC: error: SequenceAt node '': its position operand ('i') determines a shape and must be a constant
