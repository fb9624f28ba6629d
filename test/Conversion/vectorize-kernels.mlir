// dtc-vectorize-kernels on loop kernels (dtc-opt --dtc-test-vectorize-kernels
// builds each fusion group's kernel and prints it vectorized): columns in
// tiles of 8 as vector loads, ops and stores, the columns left over a scalar
// generic; broadcasts read one element and broadcast it; a nest that reads
// through a reshape, or writes fewer than 8 columns, stays scalar. Row
// kernels (row_reduction groups) fold and write a row's columns 8 at a time
// as vectors too, the rest one by one.
// The kernels' values are checked against the reference executor by
// unittests/Conversion/KernelTest.cpp and kernels-of-steps.mlir.
// RUN: dtc-opt %s --dtc-test-vectorize-kernels -o /dev/null | FileCheck %s

// A bias, tanh-GELU and a per-row scale over 19 columns: 16 as two tiles
// of 8 in each of the 4 rows, 3 scalar.
// CHECK-LABEL: func.func @kernel0(
// CHECK-SAME: memref<4x19xf32>, %{{.*}}: memref<19xf32>, %{{.*}}: memref<4x1xf32>
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %[[C4]] step %{{.*}} {
// CHECK-NEXT: scf.for %[[COL:.*]] = %{{.*}} to %[[C16]] step %[[C8]] {
// CHECK: %[[X:.*]] = vector.load %{{.*}} vector<8xf32>
// CHECK-NEXT: %[[B:.*]] = vector.load %{{.*}} vector<8xf32>
// CHECK-NEXT: %[[S:.*]] = vector.load %{{.*}} : memref<1x1xf32, {{.*}}>, vector<f32>
// CHECK-NEXT: %[[SB:.*]] = vector.broadcast %[[S]] : vector<f32> to vector<8xf32>
// CHECK-NEXT: arith.addf %[[X]], %[[B]] : vector<8xf32>
// CHECK: math.tanh %{{.*}} : vector<8xf32>
// CHECK: %[[Y:.*]] = arith.mulf %{{.*}}, %[[SB]] : vector<8xf32>
// CHECK-NEXT: vector.store %[[Y]], %{{.*}} vector<8xf32>
// CHECK: memref.subview %{{.*}}[0, 16] [4, 3] [1, 1]
// CHECK: linalg.generic
// CHECK: math.tanh %{{.*}} : f32
func.func @bias_gelu(%x: tensor<4x19xf32>, %b: tensor<19xf32>, %c: tensor<4x1xf32>) -> tensor<4x19xf32> {
  %y = dtc.fusion loop(%x, %b, %c) : (tensor<4x19xf32>, tensor<19xf32>, tensor<4x1xf32>) -> tensor<4x19xf32> {
  ^bb0(%a: tensor<4x19xf32>, %bb: tensor<19xf32>, %cc: tensor<4x1xf32>):
    %s = dtc.add %a, %bb : (tensor<4x19xf32>, tensor<19xf32>) -> tensor<4x19xf32>
    %g = dtc.gelu %s approximate = tanh : tensor<4x19xf32>
    %m = dtc.mul %g, %cc : (tensor<4x19xf32>, tensor<4x1xf32>) -> tensor<4x19xf32>
    dtc.yield %m : tensor<4x19xf32>
  }
  return %y : tensor<4x19xf32>
}

// An SGD update of a vector of 21: the outermost loop steps by 8 (threads
// share it in whole steps), the last 5 elements scalar.
// CHECK-LABEL: func.func @kernel1(
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C16]] step %[[C8]] {
// CHECK: %[[LR:.*]] = vector.load %{{.*}}[] : memref<f32>, vector<f32>
// CHECK-NEXT: %[[LRB:.*]] = vector.broadcast %[[LR]]
// CHECK-NEXT: %[[STEP:.*]] = arith.mulf %{{.*}}, %[[LRB]] : vector<8xf32>
// CHECK-NEXT: arith.subf %{{.*}}, %[[STEP]] : vector<8xf32>
// CHECK: memref.subview %{{.*}}[16] [5] [1]
// CHECK: linalg.generic
func.func @sgd(%w: tensor<21xf32>, %g: tensor<21xf32>, %lr: tensor<f32>) -> tensor<21xf32> {
  %y = dtc.fusion multi_tensor(%w, %g, %lr) : (tensor<21xf32>, tensor<21xf32>, tensor<f32>) -> tensor<21xf32> {
  ^bb0(%w0: tensor<21xf32>, %g0: tensor<21xf32>, %l: tensor<f32>):
    %s = dtc.mul %g0, %l : (tensor<21xf32>, tensor<f32>) -> tensor<21xf32>
    %n = dtc.sub %w0, %s : (tensor<21xf32>, tensor<21xf32>) -> tensor<21xf32>
    dtc.yield %n : tensor<21xf32>
  }
  return %y : tensor<21xf32>
}

// Heads merged by a reshape: read at floordiv/mod indexes, stays scalar.
// CHECK-LABEL: func.func @kernel2(
// CHECK-NOT: vector
// CHECK: linalg.generic {{.*}}floordiv
// CHECK-NOT: vector
// CHECK: return
func.func @merge_heads(%x: tensor<2x3x8xf32>) -> tensor<2x24xf32> {
  %y = dtc.fusion loop(%x) : (tensor<2x3x8xf32>) -> tensor<2x24xf32> {
  ^bb0(%a: tensor<2x3x8xf32>):
    %e = dtc.exp %a : tensor<2x3x8xf32>
    %r = dtc.reshape %e : tensor<2x3x8xf32> to tensor<2x24xf32>
    dtc.yield %r : tensor<2x24xf32>
  }
  return %y : tensor<2x24xf32>
}

// Six columns: fewer than a tile, stays scalar.
// CHECK-LABEL: func.func @kernel3(
// CHECK-NOT: vector
// CHECK: linalg.generic
// CHECK-NOT: vector
// CHECK: return
func.func @narrow(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %y = dtc.fusion loop(%x) : (tensor<4x6xf32>) -> tensor<4x6xf32> {
  ^bb0(%a: tensor<4x6xf32>):
    %e = dtc.exp %a : tensor<4x6xf32>
    dtc.yield %e : tensor<4x6xf32>
  }
  return %y : tensor<4x6xf32>
}

// A causal softmax over rows of 20: the mask's index grid along the
// columns is a vector.step; the maximum folds 8 lanes (16 columns) and the
// rest into lane 0, then the lanes pairwise; the sum of exponentials also
// stores them in the result, whose pass divides them there.
// CHECK-LABEL: func.func @kernel4(
// CHECK: scf.for {{.*}} to %c16 step %c8 iter_args({{.*}}) -> (vector<8xf32>)
// CHECK: vector.step : vector<8xindex>
// CHECK: arith.maximumf {{.*}} : vector<8xf32>
// CHECK: scf.for {{.*}} -> (f32)
// CHECK: arith.maximumf {{.*}} : f32
// CHECK: scf.for {{.*}} -> (vector<8xf32>)
// CHECK: %[[E:.*]] = math.exp {{.*}} : vector<8xf32>
// CHECK-NEXT: vector.store %[[E]], %arg3
// CHECK: scf.for {{.*}} -> (f32)
// CHECK: %[[ES:.*]] = math.exp {{.*}} : f32
// CHECK-NEXT: memref.store %[[ES]], %arg3
// CHECK: scf.for
// CHECK: %[[K:.*]] = vector.load %arg3
// CHECK-NOT: math.exp
// CHECK: arith.divf %[[K]], {{.*}} : vector<8xf32>
// CHECK-NOT: math.exp
// CHECK: return
func.func @causal_softmax(%x: tensor<2x20x20xf32>) -> (tensor<2x20x1xf32>, tensor<2x20x1xf32>, tensor<2x20x20xf32>) {
  %y:3 = dtc.fusion row_reduction(%x) : (tensor<2x20x20xf32>) -> (tensor<2x20x1xf32>, tensor<2x20x1xf32>, tensor<2x20x20xf32>) {
  ^bb0(%a: tensor<2x20x20xf32>):
    %c = dtc.iota dim = 1 : tensor<1x20xi64>
    %r = dtc.iota dim = 0 : tensor<20x1xi64>
    %d = dtc.sub %c, %r : (tensor<1x20xi64>, tensor<20x1xi64>) -> tensor<20x20xi64>
    %zero = dtc.constant dense<0> : tensor<i64>
    %keep = dtc.compare le, %d, %zero : (tensor<20x20xi64>, tensor<i64>) -> tensor<20x20xi1>
    %ninf = dtc.constant dense<0xFF800000> : tensor<f32>
    %m = dtc.select %keep, %a, %ninf : (tensor<20x20xi1>, tensor<2x20x20xf32>, tensor<f32>) -> tensor<2x20x20xf32>
    %mx = dtc.reduce_max %m dims = [2] keep_dims : tensor<2x20x20xf32> -> tensor<2x20x1xf32>
    %sh = dtc.sub %m, %mx : (tensor<2x20x20xf32>, tensor<2x20x1xf32>) -> tensor<2x20x20xf32>
    %e = dtc.exp %sh : tensor<2x20x20xf32>
    %sum = dtc.reduce_sum %e dims = [2] keep_dims : tensor<2x20x20xf32> -> tensor<2x20x1xf32>
    %p = dtc.div %e, %sum : (tensor<2x20x20xf32>, tensor<2x20x1xf32>) -> tensor<2x20x20xf32>
    dtc.yield %mx, %sum, %p : tensor<2x20x1xf32>, tensor<2x20x1xf32>, tensor<2x20x20xf32>
  }
  return %y#0, %y#1, %y#2 : tensor<2x20x1xf32>, tensor<2x20x1xf32>, tensor<2x20x20xf32>
}

// A one-hot pick (a label's logit): no loop over the row, the label's
// column read once, +0 where the label is outside [0, 37).
// CHECK-LABEL: func.func @kernel5(
// CHECK: scf.for
// CHECK-NOT: scf.for
// CHECK: %[[L:.*]] = memref.load %arg1
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[L]], %c37_i64
// CHECK: %[[C:.*]] = arith.select %[[IN]], %[[L]]
// CHECK: %[[I:.*]] = arith.index_cast %[[C]]
// CHECK: memref.load %arg0
// CHECK: arith.select %[[IN]]
// CHECK-NOT: scf.for
// CHECK: return
func.func @pick(%x: tensor<3x37xf32>, %labels: tensor<3x1xi64>) -> tensor<3xf32> {
  %y = dtc.fusion row_reduction(%x, %labels) : (tensor<3x37xf32>, tensor<3x1xi64>) -> tensor<3xf32> {
  ^bb0(%a: tensor<3x37xf32>, %t: tensor<3x1xi64>):
    %i = dtc.iota dim = 1 : tensor<1x37xi64>
    %hot = dtc.compare eq, %i, %t : (tensor<1x37xi64>, tensor<3x1xi64>) -> tensor<3x37xi1>
    %zero = dtc.constant dense<0.0> : tensor<f32>
    %pick = dtc.select %hot, %a, %zero : (tensor<3x37xi1>, tensor<3x37xf32>, tensor<f32>) -> tensor<3x37xf32>
    %s = dtc.reduce_sum %pick dims = [1] : tensor<3x37xf32> -> tensor<3xf32>
    dtc.yield %s : tensor<3xf32>
  }
  return %y : tensor<3xf32>
}
