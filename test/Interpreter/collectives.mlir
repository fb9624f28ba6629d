// The collectives on 4 real ranks (mpirun) as a dp=2 x tp=2 mesh; numpy
// recomputes every rank's results from the rank layout.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/check_collectives.py make %t/in
// RUN: %mpirun -np 4 dtc-run %s --inputs %t/in --outputs %t/out | FileCheck %s --check-prefix=RANKS
// RUN: %python %S/Inputs/check_collectives.py check %t/out | FileCheck %s
// RANKS-DAG: [rank 0] sum_tp: 4x2xf32
// RANKS-DAG: [rank 3] to_all: 1x8xf32
// CHECK: 40 outputs match, 0 differ

// A world size that does not match the mesh is an error.
// RUN: not %mpirun -np 2 dtc-run %s --inputs %t/in 2>&1 | FileCheck %s --check-prefix=WORLD
// WORLD: error: the mesh dp=2,tp=2 has 4 devices but 2 ranks were launched (mpirun -np 4)

dtc.mesh @mesh ["dp" = 2, "tp" = 2]

func.func @main(%x: tensor<4x2xf32> {dtc.input = "x"})
    -> (tensor<4x2xf32> {dtc.output = "sum_tp"}, tensor<4x2xf32> {dtc.output = "max_all"},
        tensor<4x4xf32> {dtc.output = "gather_dp"}, tensor<2x2xf32> {dtc.output = "scatter_tp"},
        tensor<1x8xf32> {dtc.output = "to_all"}, tensor<2x2xf32> {dtc.output = "shard_tp"},
        tensor<2x2xf32> {dtc.output = "shard_blocks"}, tensor<4x2xf32> {dtc.output = "bcast_dp"},
        tensor<4x2xf32> {dtc.output = "next_tp"}, tensor<4x2xf32> {dtc.output = "prev_dp"}) {
  %0 = dtc.all_reduce %x on @mesh axes = ["tp"] kind = sum : tensor<4x2xf32>
  %1 = dtc.all_reduce %x on @mesh axes = ["dp", "tp"] kind = max : tensor<4x2xf32>
  %2 = dtc.all_gather %x on @mesh axes = ["dp"] dim = 1 : tensor<4x2xf32> -> tensor<4x4xf32>
  %3 = dtc.reduce_scatter %x on @mesh axes = ["tp"] dim = 0 : tensor<4x2xf32> -> tensor<2x2xf32>
  %4 = dtc.all_to_all %x on @mesh axes = ["dp", "tp"] split_dim = 0 concat_dim = 1 : tensor<4x2xf32> -> tensor<1x8xf32>
  %5 = dtc.shard %x on @mesh axes = ["tp"] dim = 0 : tensor<4x2xf32> -> tensor<2x2xf32>
  %6 = dtc.shard %x on @mesh axes = ["tp"] dim = 0 blocks = 2 : tensor<4x2xf32> -> tensor<2x2xf32>
  %7 = dtc.collective_broadcast %x on @mesh axes = ["dp"] root = 1 : tensor<4x2xf32>
  %8 = dtc.send_recv %x on @mesh axis = "tp" shift = 1 : tensor<4x2xf32>
  %9 = dtc.send_recv %x on @mesh axis = "dp" shift = -1 : tensor<4x2xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x4xf32>, tensor<2x2xf32>, tensor<1x8xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>
}
