// RUN: dtc-opt %s --dtc-fold-constants --split-input-file | FileCheck %s
// RUN: dtc-opt %s --dtc-fold-constants=max-elements=2 --split-input-file | FileCheck %s --check-prefix=SMALL
// RUN: dtc-opt %s --dtc-simplify --split-input-file | FileCheck %s --check-prefix=SIMPLIFY

// CHECK-LABEL: func @scalar_chain
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[S:.*]] = dtc.constant dense<2.82842708> : tensor<f32>
// CHECK-NEXT: %[[Y:.*]] = dtc.div %[[X]], %[[S]]
// CHECK-NEXT: return %[[Y]]
// SIMPLIFY-LABEL: func @scalar_chain
// SIMPLIFY-NOT: dtc.pow
func.func @scalar_chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = dtc.constant dense<8.0> : tensor<f32>
  %b = dtc.constant dense<0.5> : tensor<f32>
  %s = dtc.pow %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %y = dtc.div %x, %s : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Multi-result ops fold too; results above max-elements stay computed.
// CHECK-LABEL: func @split
// CHECK-DAG: dtc.constant dense<[1, 2]> : tensor<2xi64>
// CHECK-DAG: dtc.constant dense<[3, 4, 5]> : tensor<3xi64>
// CHECK-NOT: dtc.split
// SMALL-LABEL: func @split
// SMALL: dtc.split
func.func @split() -> (tensor<2xi64>, tensor<3xi64>) {
  %c = dtc.constant dense<[1, 2, 3, 4, 5]> : tensor<5xi64>
  %p:2 = dtc.split %c dim = 0 sizes = [2, 3] : tensor<5xi64> -> tensor<2xi64>, tensor<3xi64>
  return %p#0, %p#1 : tensor<2xi64>, tensor<3xi64>
}

// -----

// An evaluation that fails at compile time is left for run time, silently.
// CHECK-LABEL: func @bad_index
// CHECK: dtc.gather
func.func @bad_index() -> tensor<1xf32> {
  %t = dtc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %i = dtc.constant dense<[5]> : tensor<1xi64>
  %y = dtc.gather %t[%i] dim = 0 : (tensor<2xf32>, tensor<1xi64>) -> tensor<1xf32>
  return %y : tensor<1xf32>
}

// -----

// Ops with a non-constant operand are untouched.
// CHECK-LABEL: func @not_constant
// CHECK: dtc.add
func.func @not_constant(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = dtc.constant dense<1.0> : tensor<2xf32>
  %y = dtc.add %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// A constant used twice by the folded op is removed once.
// CHECK-LABEL: func @same_operand_twice
// CHECK-NEXT: %[[C:.*]] = dtc.constant dense<[2, 4]> : tensor<2xi32>
// CHECK-NEXT: return %[[C]]
func.func @same_operand_twice() -> tensor<2xi32> {
  %c = dtc.constant dense<[1, 2]> : tensor<2xi32>
  %y = dtc.add %c, %c : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %y : tensor<2xi32>
}
