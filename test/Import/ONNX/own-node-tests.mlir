// dtc's own ONNX node tests (Inputs/make_node_tests.py, expected outputs
// from numpy) for what ONNX 1.12's test data lacks: more Einsum patterns
// (attention scores, broadcasting "...", three operands, trace, MoE
// dispatch) and opset-18+ forms (Gelu, RMSNormalization, ReduceMean axes
// input, Split num_outputs, Attention with a float mask that excludes
// every key of a row), run by the conformance runner.
// RUN: %python %S/../../Conformance/run_onnx_node_tests.py --tools %dtc_tools_dir --node-dir %S/Inputs/node -v | FileCheck %s
// CHECK: PASS test_dtc_attention_float_mask_fully_masked_row_opset23
// CHECK: PASS test_dtc_einsum_attention_scores
// CHECK: PASS test_dtc_rms_normalization_opset23
// CHECK: 14 passed, 0 failed, 0 skipped
