// RUN: dtc-opt %s --dtc-attach-loss="logits=scores" --split-input-file --verify-diagnostics
// RUN: not dtc-opt %s --dtc-attach-loss="loss=mse" 2>&1 | FileCheck %s
// CHECK: unknown loss 'mse' (expected cross-entropy, distillation or output:NAME)

// expected-error @+1 {{cross-entropy needs a float output named 'scores' with the classes along its last dimension (rank >= 2)}}
func.func @no_such_output(%x: tensor<2x3xf32>) -> (tensor<2x3xf32> {dtc.output = "logits"}) {
  return %x : tensor<2x3xf32>
}
