// Grouped-query attention on more ranks than key/value heads (4 query
// heads over tp=4, 2 key/value heads) with a mask that has a heads
// dimension: each rank's attention reads its heads' part of the mask too.
// --verify runs the per-rank program on 4 simulated ranks against one
// device (it used to stop at "the mask must broadcast to the scores").
// RUN: echo '{"^q$": {"dims": [[], ["tp"], [], []], "pinned": false}}' > %t.json
// RUN: dtc-opt %s "--dtc-training=loss=output:loss optimizer=sgd lr=0.1 mesh=tp=4 verify=1 verify-noise=0 tp-strategy=none sharding-spec=%t.json" -o %t.mlir 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=IR < %t.mlir
// CHECK: dtc-verify-partition: {{.*}} worst relative error: loss {{[0-9.e+-]+}}, gradients
// IR: dtc.attention {{.*}} : (tensor<2x1x4x8xf32>, tensor<2x1x6x8xf32>, tensor<2x1x6x8xf32>, tensor<2x1x4x6xf32>)

func.func @forward(%q: tensor<2x4x4x8xf32> {dtc.param = "q"},
                   %k: tensor<2x2x6x8xf32> {dtc.param = "k"},
                   %v: tensor<2x2x6x8xf32> {dtc.param = "v"},
                   %m: tensor<2x4x4x6xf32> {dtc.input = "m"})
    -> (tensor<f32> {dtc.output = "loss"}) {
  %y, %p = dtc.attention %q, %k, %v mask %m scale = 0.35 : (tensor<2x4x4x8xf32>, tensor<2x2x6x8xf32>, tensor<2x2x6x8xf32>, tensor<2x4x4x6xf32>) -> (tensor<2x4x4x8xf32>, tensor<2x4x4x6xf32>)
  %s = dtc.reduce_sum %y dims = [0, 1, 2, 3] : tensor<2x4x4x8xf32> -> tensor<f32>
  return %s : tensor<f32>
}
