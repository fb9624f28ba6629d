// RUN: dtc-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{axis 'dp' appears twice}}
dtc.mesh @mesh ["dp" = 2, "dp" = 4]

// -----

// expected-error @+1 {{axis 'tp' has size 0}}
dtc.mesh @mesh ["tp" = 0]

// -----

dtc.mesh @mesh ["dp" = 2]
func.func @unknown_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{mesh 'mesh' has no axis "tp"}}
  %0 = dtc.all_reduce %x on @mesh axes = ["tp"] kind = sum : tensor<4xf32>
  return
}

// -----

func.func @not_a_mesh(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nowhere' is not a dtc.mesh}}
  %0 = dtc.all_reduce %x on @nowhere axes = ["tp"] kind = sum : tensor<4xf32>
  return
}

// -----

dtc.mesh @mesh ["dp" = 2]
func.func @no_axes(%x: tensor<4xf32>) {
  // expected-error @+1 {{needs at least one mesh axis}}
  %0 = dtc.all_reduce %x on @mesh axes = [] kind = sum : tensor<4xf32>
  return
}

// -----

dtc.mesh @mesh ["dp" = 2]
func.func @repeated_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{axis "dp" appears twice}}
  %0 = dtc.all_reduce %x on @mesh axes = ["dp", "dp"] kind = sum : tensor<4xf32>
  return
}

// -----

dtc.mesh @mesh ["dp" = 2]
func.func @gather_dim(%x: tensor<4xf32>) {
  // expected-error @+1 {{dim 1 is out of range for rank 1}}
  %0 = dtc.all_gather %x on @mesh axes = ["dp"] dim = 1 : tensor<4xf32> -> tensor<8xf32>
  return
}

// -----

dtc.mesh @mesh ["dp" = 2]
func.func @gather_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{result type 'tensor<4xf32>' should be 'tensor<8xf32>'}}
  %0 = dtc.all_gather %x on @mesh axes = ["dp"] dim = 0 : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

dtc.mesh @mesh ["dp" = 2]
func.func @scatter_divisible(%x: tensor<5xf32>) {
  // expected-error @+1 {{dimension 0 (5) is not divisible by the group size 2}}
  %0 = dtc.reduce_scatter %x on @mesh axes = ["dp"] dim = 0 : tensor<5xf32> -> tensor<2xf32>
  return
}

// -----

dtc.mesh @mesh ["ep" = 4]
func.func @all_to_all_type(%x: tensor<8x2xf32>) {
  // expected-error @+1 {{result type 'tensor<8x2xf32>' should be 'tensor<2x8xf32>'}}
  %0 = dtc.all_to_all %x on @mesh axes = ["ep"] split_dim = 0 concat_dim = 1 : tensor<8x2xf32> -> tensor<8x2xf32>
  return
}

// -----

dtc.mesh @mesh ["ep" = 4]
func.func @all_to_all_rows(%x: tensor<8x2xf32>) {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %0 = dtc.all_to_all %x on @mesh axes = ["ep"] split_dim = 0 concat_dim = 1 {rows_dim = 2} : tensor<8x2xf32> -> tensor<2x8xf32>
  return
}

// -----

dtc.mesh @mesh ["ep" = 4]
func.func @all_to_all_divisible(%x: tensor<6x2xf32>) {
  // expected-error @+1 {{dimension 0 (6) is not divisible by the group size 4}}
  %0 = dtc.all_to_all %x on @mesh axes = ["ep"] split_dim = 0 concat_dim = 1 : tensor<6x2xf32> -> tensor<1x8xf32>
  return
}

// -----

dtc.mesh @mesh ["tp" = 4]
func.func @shard_blocks(%x: tensor<2x18xf32>) {
  // expected-error @+1 {{dimension 1 (18) is not divisible into 3 blocks of 4 chunks}}
  %0 = dtc.shard %x on @mesh axes = ["tp"] dim = 1 blocks = 3 : tensor<2x18xf32> -> tensor<2x6xf32>
  return
}

// -----

dtc.mesh @mesh ["tp" = 4]
func.func @shard_type(%x: tensor<2x24xf32>) {
  // expected-error @+1 {{result type 'tensor<2x24xf32>' should be 'tensor<2x6xf32>'}}
  %0 = dtc.shard %x on @mesh axes = ["tp"] dim = 1 : tensor<2x24xf32> -> tensor<2x24xf32>
  return
}

// -----

// expected-error @+1 {{blocks has 1 entries for 2 dimensions}}
func.func @sharding_blocks(%x: tensor<2x24xf32> {dtc.sharding = #dtc.sharding<@mesh, [[], ["tp"]] blocks = [3]>}) {
  return
}

// -----

// expected-error @+1 {{each dimension's entry must be an array of axis names, not "tp"}}
func.func @sharding_dims(%x: tensor<2x24xf32> {dtc.sharding = #dtc.sharding<@mesh, ["tp", []]>}) {
  return
}

// -----

dtc.mesh @mesh ["dp" = 2]
func.func @broadcast_root(%x: tensor<4xf32>) {
  // expected-error @+1 {{root 2 is not a rank of the group of 2}}
  %0 = dtc.collective_broadcast %x on @mesh axes = ["dp"] root = 2 : tensor<4xf32>
  return
}

// -----

dtc.mesh @mesh ["pp" = 4]
func.func @send_recv_shift(%x: tensor<4xf32>) {
  // expected-error @+1 {{shift 8 moves nothing along an axis of size 4}}
  %0 = dtc.send_recv %x on @mesh axis = "pp" shift = 8 : tensor<4xf32>
  return
}

// -----

dtc.mesh @mesh ["pp" = 4]
func.func @send_recv_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{mesh 'mesh' has no axis "tp"}}
  %0 = dtc.send_recv %x on @mesh axis = "tp" shift = 1 : tensor<4xf32>
  return
}
