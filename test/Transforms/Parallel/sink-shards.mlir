// RUN: dtc-opt %s --dtc-sink-shards --split-input-file | FileCheck %s
// RUN: dtc-opt %s --dtc-sink-shards --canonicalize --split-input-file | FileCheck %s --check-prefix=FINAL

// The cross-entropy's one-hot, cut for a vocabulary split over tp = 2: each
// rank makes its own part, its iota starting at its first class. The iota
// varies along the classes only, so it is made 1 x 1 x classes and
// broadcast; the canonicalizer then lets the comparison and the selection
// broadcast their operands themselves: no [batch, sequence, classes]
// integers at all.
// CHECK-LABEL: func.func @one_hot(
// CHECK-SAME: %[[LABELS:[a-z0-9]+]]: tensor<2x4x1xi64>, %[[G:[a-z0-9]+]]: tensor<2x4x1xf32>
// CHECK-DAG: %[[CLASSES:.*]] = dtc.iota dim = 0 : tensor<8xi64>
// CHECK-DAG: %[[MINE:.*]] = dtc.shard %[[CLASSES]] on @mesh axes = ["tp"] dim = 0 {reason = "where this rank{{.}}s chunk starts"} : tensor<8xi64> -> tensor<4xi64>
// CHECK-DAG: %[[FIRST:.*]] = dtc.slice %[[MINE]]
// CHECK-DAG: %[[START:.*]] = dtc.reshape %[[FIRST]] : tensor<1xi64> to tensor<i64>
// CHECK-DAG: %[[LOCAL:.*]] = dtc.iota dim = 2 : tensor<1x1x4xi64>
// CHECK: %[[IDS:.*]] = dtc.add %[[LOCAL]], %[[START]] : (tensor<1x1x4xi64>, tensor<i64>) -> tensor<1x1x4xi64>
// CHECK: %[[WIDE:.*]] = dtc.broadcast %[[IDS]] : tensor<1x1x4xi64> to tensor<2x4x4xi64>
// CHECK: %[[HOT:.*]] = dtc.compare eq, %[[WIDE]], %[[LABELS]] : (tensor<2x4x4xi64>, tensor<2x4x1xi64>) -> tensor<2x4x4xi1>
// CHECK: %[[GW:.*]] = dtc.broadcast %[[G]] : tensor<2x4x1xf32> to tensor<2x4x4xf32>
// CHECK: dtc.select %[[HOT]], %[[GW]], %{{.*}} : (tensor<2x4x4xi1>, tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
// CHECK-NOT: tensor<2x4x8x
// CHECK: return
// FINAL-LABEL: func.func @one_hot(
// FINAL: dtc.compare eq, %{{.*}}, %{{.*}} : (tensor<1x1x4xi64>, tensor<2x4x1xi64>) -> tensor<2x4x4xi1>
// FINAL: dtc.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x4x4xi1>, tensor<2x4x1xf32>, tensor<f32>) -> tensor<2x4x4xf32>
// FINAL-NOT: dtc.broadcast
// FINAL: return
dtc.mesh @mesh ["tp" = 2]
func.func @one_hot(%labels: tensor<2x4x1xi64>, %g: tensor<2x4x1xf32>) -> tensor<2x4x4xf32> {
  %zero = dtc.constant dense<0.0> : tensor<f32>
  %classes = dtc.iota dim = 2 : tensor<2x4x8xi64>
  %hot = dtc.compare eq, %classes, %labels : (tensor<2x4x8xi64>, tensor<2x4x1xi64>) -> tensor<2x4x8xi1>
  %wide = dtc.broadcast %g : tensor<2x4x1xf32> to tensor<2x4x8xf32>
  %picked = dtc.select %hot, %wide, %zero : (tensor<2x4x8xi1>, tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %mine = dtc.shard %picked on @mesh axes = ["tp"] dim = 2 : tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  return %mine : tensor<2x4x4xf32>
}

// -----

// The sum of a one-hot selection over its classes is the selected value,
// where the label is a class: no whole one-hot is read.
// CHECK-LABEL: func.func @sum_of_one_hot(
// CHECK-SAME: %[[LABELS:[a-z0-9]+]]: tensor<2x4x1xi64>, %[[G:[a-z0-9]+]]: tensor<2x4x1xf32>
// CHECK-DAG: %[[GE:.*]] = dtc.compare ge, %[[LABELS]]
// CHECK-DAG: %[[LT:.*]] = dtc.compare lt, %[[LABELS]]
// CHECK: %[[IN:.*]] = dtc.and
// CHECK: %[[S:.*]] = dtc.select %[[IN]], %[[G]], %{{.*}} : (tensor<2x4x1xi1>, tensor<2x4x1xf32>, tensor<f32>) -> tensor<2x4x1xf32>
// CHECK: %[[R:.*]] = dtc.reshape %[[S]] : tensor<2x4x1xf32> to tensor<2x4xf32>
// CHECK-NOT: dtc.iota
// CHECK: return %[[R]]
func.func @sum_of_one_hot(%labels: tensor<2x4x1xi64>, %g: tensor<2x4x1xf32>) -> tensor<2x4xf32> {
  %zero = dtc.constant dense<0.0> : tensor<f32>
  %classes = dtc.iota dim = 2 : tensor<2x4x8xi64>
  %hot = dtc.compare eq, %classes, %labels : (tensor<2x4x8xi64>, tensor<2x4x1xi64>) -> tensor<2x4x8xi1>
  %wide = dtc.broadcast %g : tensor<2x4x1xf32> to tensor<2x4x8xf32>
  %picked = dtc.select %hot, %wide, %zero : (tensor<2x4x8xi1>, tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %sum = dtc.reduce_sum %picked dims = [2] : tensor<2x4x8xf32> -> tensor<2x4xf32>
  return %sum : tensor<2x4xf32>
}

// -----

// Left as they are: a value some op reads whole (the cut would only add
// work), and a 1-D iota along the split (where chunk starts come from).
// A sum whose only reader keeps its part is a reduce-scatter; one read
// whole stays.
// CHECK-LABEL: func.func @kept(
// CHECK: %[[CLASSES:.*]] = dtc.iota dim = 2 : tensor<2x4x8xi64>
// CHECK: dtc.shard %[[CLASSES]] on @mesh axes = ["tp"] dim = 2 : tensor<2x4x8xi64> -> tensor<2x4x4xi64>
// CHECK: dtc.reduce_scatter %arg0 on @mesh axes = ["tp"] dim = 2 {reason = "partial; each rank keeps its part"} : tensor<2x4x8xf32> -> tensor<2x4x4xf32>
// CHECK: %[[WHOLE:.*]] = dtc.all_reduce %arg1
// CHECK: dtc.shard %[[WHOLE]]
// CHECK: %[[ROW:.*]] = dtc.iota dim = 0 : tensor<8xi64>
// CHECK: dtc.shard %[[ROW]]
dtc.mesh @mesh ["tp" = 2]
func.func @kept(%x: tensor<2x4x8xf32>, %y: tensor<2x4x8xf32>) -> (tensor<2x4x4xi64>, tensor<2x4x8xi64>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x8xf32>, tensor<4xi64>) {
  %classes = dtc.iota dim = 2 : tensor<2x4x8xi64>
  %part = dtc.shard %classes on @mesh axes = ["tp"] dim = 2 : tensor<2x4x8xi64> -> tensor<2x4x4xi64>
  %sum = dtc.all_reduce %x on @mesh axes = ["tp"] kind = sum {reason = "partial"} : tensor<2x4x8xf32>
  %sum_part = dtc.shard %sum on @mesh axes = ["tp"] dim = 2 : tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %whole = dtc.all_reduce %y on @mesh axes = ["tp"] kind = sum : tensor<2x4x8xf32>
  %whole_part = dtc.shard %whole on @mesh axes = ["tp"] dim = 2 : tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %row = dtc.iota dim = 0 : tensor<8xi64>
  %row_part = dtc.shard %row on @mesh axes = ["tp"] dim = 0 : tensor<8xi64> -> tensor<4xi64>
  return %part, %classes, %sum_part, %whole_part, %whole, %row_part : tensor<2x4x4xi64>, tensor<2x4x8xi64>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x8xf32>, tensor<4xi64>
}

// -----

// A split moved from one dimension to another (the partitioner gathered
// the features for an op that needed them whole; a later reader keeps its
// part of the sequence) is an all-to-all, a resharding still; a gather
// whose readers keep their own part along the gathered dimension is no
// communication at all. One kept whole stays a gather.
// CHECK-LABEL: func.func @reshard(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4x4xf32>, %[[Y:[^:]*]]: tensor<2x4x4xf32>, %[[Z:[^:]*]]: tensor<2x4x4xf32>
// CHECK: %[[A:.*]] = dtc.all_to_all %[[X]] on @mesh axes = ["tp"] split_dim = 1 concat_dim = 2 {dtc.resharding, reason = "tensor-parallel: 'dtc.sub': needs it whole; every reader keeps its part along dimension 1: an all-to-all"} : tensor<2x4x4xf32> -> tensor<2x2x8xf32>
// CHECK-NOT: dtc.shard
// CHECK: %[[G:.*]] = dtc.all_gather %[[Z]]
// CHECK: dtc.shard %[[G]]
// CHECK: return %[[A]], %[[A]], %[[Y]], %[[G]], %{{.*}}
dtc.mesh @mesh ["tp" = 2]
func.func @reshard(%x: tensor<2x4x4xf32>, %y: tensor<2x4x4xf32>, %z: tensor<2x4x4xf32>) -> (tensor<2x2x8xf32>, tensor<2x2x8xf32>, tensor<2x4x4xf32>, tensor<2x4x8xf32>, tensor<2x2x8xf32>) {
  %gx = dtc.all_gather %x on @mesh axes = ["tp"] dim = 2 {dtc.resharding, reason = "tensor-parallel: 'dtc.sub': needs it whole"} : tensor<2x4x4xf32> -> tensor<2x4x8xf32>
  %a = dtc.shard %gx on @mesh axes = ["tp"] dim = 1 : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
  %b = dtc.shard %gx on @mesh axes = ["tp"] dim = 1 : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
  %gy = dtc.all_gather %y on @mesh axes = ["tp"] dim = 2 : tensor<2x4x4xf32> -> tensor<2x4x8xf32>
  %c = dtc.shard %gy on @mesh axes = ["tp"] dim = 2 : tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %gz = dtc.all_gather %z on @mesh axes = ["tp"] dim = 2 : tensor<2x4x4xf32> -> tensor<2x4x8xf32>
  %d = dtc.shard %gz on @mesh axes = ["tp"] dim = 1 : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
  return %a, %b, %c, %gz, %d : tensor<2x2x8xf32>, tensor<2x2x8xf32>, tensor<2x4x4xf32>, tensor<2x4x8xf32>, tensor<2x2x8xf32>
}
