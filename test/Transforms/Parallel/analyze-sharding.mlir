// dtc-analyze-sharding: the propagation engine's analysis mode on the
// example's differentiated step. Nothing is partitioned (types stay whole,
// no collective appears); values are annotated with their layouts, and the
// collectives the partition would insert are reported. check-rewrite
// partitions a copy and fails unless its collectives are exactly the
// predicted ones (kinds, axes, bus bytes, reasons). The totals are those
// the Communicator counts at run time for the same layouts
// (test/Integration/train-tp.mlir, train-sp.mlir).
//
// RUN: dtc-translate --import-onnx %S/../../../examples/tiny_transformer/model.onnx -o %t.mlir
// RUN: dtc-opt %t.mlir --mlir-print-op-on-diagnostic=false --pass-pipeline="builtin.module(func.func(dtc-attach-loss,dtc-autodiff),dtc-analyze-sharding{axis=tp size=2 check-rewrite=1})" -o %t.tp.mlir 2>&1 | FileCheck %s --check-prefix=TP
// TP-DAG: remark: would insert all_reduce over [tp], 2048 bus bytes: tensor-parallel: 'dtc.add' needs the whole value of a partial sum over 'tp'
// TP-DAG: remark: would insert all_reduce over [tp], 64 bus bytes: tensor-parallel: 'dtc.log_softmax' split over 'tp': the maximum of each row
// TP-DAG: remark: over 'tp' (2 ranks): 9 collectives inserted, 0 changed, 12480 bus bytes; 0 ops replicated
// TP-DAG: remark: the partition inserts and changes exactly the collectives predicted
// RUN: FileCheck %s --check-prefix=TP-IR < %t.tp.mlir
// TP-IR: %arg5: tensor<96x32xf32> {dtc.layout = #dtc.sharding<@mesh, {{\[}}["tp"], []] blocks = [3, 1]>, dtc.param = "block.qkv.weight"
// TP-IR: %arg7: tensor<32x32xf32> {dtc.layout = #dtc.sharding<@mesh, {{\[}}[], ["tp"]]>, dtc.param = "block.proj.weight"
// The heads of q: dimension 2 of the split pieces, then 1 of the transpose.
// TP-IR: dtc.split {{.*}} {dtc.layouts = [#dtc.sharding<@mesh, {{\[}}[], [], ["tp"]]>,
// TP-IR: dtc.reshape {{.*}} {dtc.layouts = [#dtc.sharding<@mesh, {{\[}}[], [], ["tp"], []]>]} : tensor<2x8x32xf32> to tensor<2x8x4x8xf32>
// The row-parallel projection's result: a partial sum.
// TP-IR: dtc.matmul {{.*}} {dtc.layouts = [#dtc.sharding<@mesh, {{\[}}[], [], []] partial = ["tp"]>]} : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
// TP-IR-NOT: dtc.all_reduce
// TP-IR-NOT: dtc.all_gather
//
// Sequence parallelism: 12 all-reduces, 6 all-gathers and 6 reduce-scatters.
// RUN: dtc-opt %t.mlir --mlir-print-op-on-diagnostic=false --pass-pipeline="builtin.module(func.func(dtc-attach-loss,dtc-autodiff),dtc-analyze-sharding{axis=tp size=2 sequence-parallel=1 check-rewrite=1})" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SP
// SP-DAG: remark: would insert reduce_scatter over [tp], 1024 bus bytes: tensor-parallel: 'dtc.gather' from rows split over 'tp' (each rank has looked up its own) (sequence-parallel: each rank keeps its part of the sequence)
// SP-DAG: remark: over 'tp' (2 ranks): 24 collectives inserted, 0 changed, 14528 bus bytes; 0 ops replicated
// SP-DAG: remark: the partition inserts and changes exactly the collectives predicted
//
// Data parallelism: the gradients' sums (19 collectives, 68488 bus bytes).
// RUN: dtc-opt %t.mlir --mlir-print-op-on-diagnostic=false --pass-pipeline="builtin.module(func.func(dtc-attach-loss,dtc-autodiff),dtc-analyze-sharding{axis=dp size=2 check-rewrite=1})" -o %t.dp.mlir 2>&1 | FileCheck %s --check-prefix=DP
// DP-DAG: remark: over 'dp' (2 ranks): 19 collectives inserted, 0 changed, 68488 bus bytes; 0 ops replicated
// DP-DAG: remark: the partition inserts and changes exactly the collectives predicted
// RUN: FileCheck %s --check-prefix=DP-IR < %t.dp.mlir
// DP-IR: %arg0: tensor<2x8xi64> {dtc.input = "ids", dtc.layout = #dtc.sharding<@mesh, {{\[}}["dp"], []]>}
//
// tp after dp: the sums of the norms' gradients, partial over tp and then
// over dp, become one sum over both (the existing dp sums change).
// RUN: dtc-opt %t.mlir --mlir-print-op-on-diagnostic=false --pass-pipeline="builtin.module(func.func(dtc-attach-loss,dtc-autodiff),dtc-data-parallel{dp=2},dtc-analyze-sharding{axis=tp size=2 sequence-parallel=1 check-rewrite=1})" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NESTED
// NESTED-DAG: remark: would change an existing collective into all_reduce over [dp,tp], 192 bus bytes: data-parallel: gradient of ln_f.bias (summed over the batch shards)
// NESTED-DAG: remark: over 'tp' (2 ranks): 15 collectives inserted, 9 changed, 9312 bus bytes; 0 ops replicated
// NESTED-DAG: remark: the partition inserts and changes exactly the collectives predicted
//
// Ops the layouts do not let run on parts are reported, not warned about:
// the Llama example's grouped-query attention on tp=4.
// RUN: dtc-translate --import-onnx %S/../../../examples/tiny_llama/model.onnx -o %t.llama.mlir
// RUN: dtc-opt %t.llama.mlir --mlir-print-op-on-diagnostic=false --pass-pipeline="builtin.module(func.func(dtc-attach-loss,dtc-autodiff),dtc-analyze-sharding{axis=tp size=4 check-rewrite=1})" -o /dev/null 2>&1 | FileCheck %s --check-prefix=GQA
// GQA-DAG: remark: would run replicated on gathered operands: operand #0 is split along dimension 1 in parts that do not line up with how the op regroups that dimension
// GQA-DAG: remark: over 'tp' (4 ranks): {{[0-9]+}} collectives inserted, 0 changed, {{[0-9]+}} bus bytes; 4 ops replicated
// GQA-DAG: remark: the partition inserts and changes exactly the collectives predicted
// GQA-NOT: warning
//
// Bad options.
// RUN: not dtc-opt %t.mlir --pass-pipeline="builtin.module(dtc-analyze-sharding{axis=pp})" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: dtc-analyze-sharding: unknown axis 'pp' (dp or tp)
