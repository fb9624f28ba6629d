// RUN: dtc-opt %s | dtc-opt | FileCheck %s
// RUN: dtc-opt %s --mlir-print-op-generic | dtc-opt | FileCheck %s

// CHECK: dtc.mesh @mesh ["dp" = 2, "tp" = 4]
dtc.mesh @mesh ["dp" = 2, "tp" = 4]

// CHECK-LABEL: func @collectives
func.func @collectives(%x: tensor<8x4x48xf32>, %g: tensor<96x48xbf16>) {
  // CHECK: dtc.all_reduce %{{.*}} on @mesh axes = ["tp"] kind = sum {reason = "row-parallel matmul /h.0/attn/proj"} : tensor<8x4x48xf32>
  %0 = dtc.all_reduce %x on @mesh axes = ["tp"] kind = sum {reason = "row-parallel matmul /h.0/attn/proj"} : tensor<8x4x48xf32>
  // CHECK: dtc.all_reduce %{{.*}} on @mesh axes = ["dp", "tp"] kind = max : tensor<8x4x48xf32>
  %1 = dtc.all_reduce %x on @mesh axes = ["dp", "tp"] kind = max : tensor<8x4x48xf32>
  // CHECK: dtc.all_gather %{{.*}} on @mesh axes = ["tp"] dim = 1 : tensor<8x4x48xf32> -> tensor<8x16x48xf32>
  %2 = dtc.all_gather %x on @mesh axes = ["tp"] dim = 1 : tensor<8x4x48xf32> -> tensor<8x16x48xf32>
  // CHECK: dtc.reduce_scatter %{{.*}} on @mesh axes = ["dp"] dim = 0 {reason = "ZeRO-2 gradient shard"} : tensor<96x48xbf16> -> tensor<48x48xbf16>
  %3 = dtc.reduce_scatter %g on @mesh axes = ["dp"] dim = 0 {reason = "ZeRO-2 gradient shard"} : tensor<96x48xbf16> -> tensor<48x48xbf16>
  // CHECK: dtc.all_to_all %{{.*}} on @mesh axes = ["tp"] split_dim = 0 concat_dim = 2 : tensor<8x4x48xf32> -> tensor<2x4x192xf32>
  %4 = dtc.all_to_all %x on @mesh axes = ["tp"] split_dim = 0 concat_dim = 2 : tensor<8x4x48xf32> -> tensor<2x4x192xf32>
  // CHECK: dtc.all_to_all %{{.*}} on @mesh axes = ["tp"] split_dim = 0 concat_dim = 1 {rows_dim = 1 : i64} : tensor<8x4x48xf32> -> tensor<2x16x48xf32>
  %filled = dtc.all_to_all %x on @mesh axes = ["tp"] split_dim = 0 concat_dim = 1 {rows_dim = 1} : tensor<8x4x48xf32> -> tensor<2x16x48xf32>
  // CHECK: dtc.collective_broadcast %{{.*}} on @mesh axes = ["dp"] root = 1 : tensor<8x4x48xf32>
  %7 = dtc.collective_broadcast %x on @mesh axes = ["dp"] root = 1 : tensor<8x4x48xf32>
  // CHECK: dtc.send_recv %{{.*}} on @mesh axis = "tp" shift = -1 {reason = "pipeline stage boundary"} : tensor<8x4x48xf32>
  %8 = dtc.send_recv %x on @mesh axis = "tp" shift = -1 {reason = "pipeline stage boundary"} : tensor<8x4x48xf32>
  // CHECK: dtc.shard %{{.*}} on @mesh axes = ["tp"] dim = 2 : tensor<8x4x48xf32> -> tensor<8x4x12xf32>
  %5 = dtc.shard %x on @mesh axes = ["tp"] dim = 2 : tensor<8x4x48xf32> -> tensor<8x4x12xf32>
  // CHECK: dtc.shard %{{.*}} on @mesh axes = ["dp", "tp"] dim = 2 blocks = 3 {reason = "q, k and v by heads"} : tensor<8x4x48xf32> -> tensor<8x4x6xf32>
  %6 = dtc.shard %x on @mesh axes = ["dp", "tp"] dim = 2 blocks = 3 {reason = "q, k and v by heads"} : tensor<8x4x48xf32> -> tensor<8x4x6xf32>
  return
}

// Layouts of arguments: per dimension the axes it is split over, blocks,
// partial-sum axes.
// CHECK-LABEL: func @layouts
// CHECK-SAME: dtc.sharding = #dtc.sharding<@mesh, {{\[}}["tp"], []] blocks = [3, 1]>
// CHECK-SAME: dtc.sharding = #dtc.sharding<@mesh, {{\[}}["dp"], [], ["tp"]]>
// CHECK-SAME: dtc.sharding = #dtc.sharding<@mesh, {{\[}}[], []] partial = ["tp"]>
func.func @layouts(%w: tensor<24x48xf32> {dtc.sharding = #dtc.sharding<@mesh, [["tp"], []] blocks = [3, 1]>},
                   %x: tensor<4x4x12xf32> {dtc.sharding = #dtc.sharding<@mesh, [["dp"], [], ["tp"]]>},
                   %p: tensor<4x4xf32> {dtc.sharding = #dtc.sharding<@mesh, [[], []] partial = ["tp"]>}) {
  return
}
