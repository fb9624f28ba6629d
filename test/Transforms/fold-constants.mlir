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

// -----

// Ops on splats fold to splats of any size, evaluated once: nothing the size
// of the tensor is built (a [64, 4096, 128256] f32 would be 134 GB).
// CHECK-LABEL: func @large_splats
// CHECK-NEXT: %[[C:.*]] = dtc.constant dense<3.000000e+00> : tensor<64x4096x128256xf32>
// CHECK-NEXT: %[[B:.*]] = dtc.constant dense<true> : tensor<64x4096x128256xi1>
// CHECK-NEXT: %[[R:.*]] = dtc.constant dense<3.000000e+00> : tensor<4096x64x128256xf32>
// CHECK-NEXT: return %[[C]], %[[B]], %[[R]]
func.func @large_splats() -> (tensor<64x4096x128256xf32>, tensor<64x4096x128256xi1>, tensor<4096x64x128256xf32>) {
  %one = dtc.constant dense<1.0> : tensor<64x4096x128256xf32>
  %two = dtc.constant dense<2.0> : tensor<f32>
  %sum = dtc.add %one, %two : (tensor<64x4096x128256xf32>, tensor<f32>) -> tensor<64x4096x128256xf32>
  %big = dtc.compare gt, %sum, %two : (tensor<64x4096x128256xf32>, tensor<f32>) -> tensor<64x4096x128256xi1>
  %t = dtc.transpose %sum permutation = [1, 0, 2] : tensor<64x4096x128256xf32> -> tensor<4096x64x128256xf32>
  return %sum, %big, %t : tensor<64x4096x128256xf32>, tensor<64x4096x128256xi1>, tensor<4096x64x128256xf32>
}

// -----

// Values above max-elements (4,096 by default) are not evaluated, though
// computed from constants alone: the causal mask of a 128-token sequence
// (16,384 elements) stays compare and select.
// CHECK-LABEL: func @large_mask
// CHECK: dtc.compare
// CHECK: dtc.select
func.func @large_mask() -> tensor<128x128xf32> {
  %i = dtc.constant dense<[[0], [1], [2], [3], [4], [5], [6], [7], [8], [9], [10], [11], [12], [13], [14], [15], [16], [17], [18], [19], [20], [21], [22], [23], [24], [25], [26], [27], [28], [29], [30], [31], [32], [33], [34], [35], [36], [37], [38], [39], [40], [41], [42], [43], [44], [45], [46], [47], [48], [49], [50], [51], [52], [53], [54], [55], [56], [57], [58], [59], [60], [61], [62], [63], [64], [65], [66], [67], [68], [69], [70], [71], [72], [73], [74], [75], [76], [77], [78], [79], [80], [81], [82], [83], [84], [85], [86], [87], [88], [89], [90], [91], [92], [93], [94], [95], [96], [97], [98], [99], [100], [101], [102], [103], [104], [105], [106], [107], [108], [109], [110], [111], [112], [113], [114], [115], [116], [117], [118], [119], [120], [121], [122], [123], [124], [125], [126], [127]]> : tensor<128x1xi64>
  %j = dtc.constant dense<[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127]]> : tensor<1x128xi64>
  %future = dtc.compare gt, %j, %i : (tensor<1x128xi64>, tensor<128x1xi64>) -> tensor<128x128xi1>
  %ninf = dtc.constant dense<0xFF800000> : tensor<f32>
  %zero = dtc.constant dense<0.0> : tensor<f32>
  %mask = dtc.select %future, %ninf, %zero : (tensor<128x128xi1>, tensor<f32>, tensor<f32>) -> tensor<128x128xf32>
  return %mask : tensor<128x128xf32>
}

// -----

// An evaluated value whose elements are all equal is stored as a splat.
// CHECK-LABEL: func @equal_elements
// CHECK-NEXT: %[[C:.*]] = dtc.constant dense<4> : tensor<3xi64>
// CHECK-NEXT: return %[[C]]
func.func @equal_elements() -> tensor<3xi64> {
  %a = dtc.constant dense<[1, 2, 3]> : tensor<3xi64>
  %b = dtc.constant dense<[3, 2, 1]> : tensor<3xi64>
  %y = dtc.add %a, %b : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  return %y : tensor<3xi64>
}
