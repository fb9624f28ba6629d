// RUN: dtc-opt %s --dtc-test-print-sharding-rules -o /dev/null | FileCheck %s
//
// Every op's sharding rule (every op of the dialect but dtc.mesh), in
// Shardy's notation: each operand's and
// result's dimensions as factors (a dimension of several factors prints
// them joined, major first; one of size 1 as `1`), the factor sizes, which
// factors are reductions or need the whole dimension, and in which
// operands the results are linear (partial sums pass through). Expected
// rules written from the ops' definitions.

dtc.mesh @mesh ["tp" = 2]

func.func @rules(%nothing: tensor<0x3x4xf32>, %x: tensor<4x8xf32>, %v: tensor<8xf32>, %w: tensor<6x8xf32>,
                 %q: tensor<2x4x24xf32>, %r: tensor<24x5xf32>,
                 %ids: tensor<4x3xi64>, %m: tensor<4x8xi1>, %step: tensor<i64>,
                 %idx: tensor<4x2xi64>, %dy: tensor<4x2xf32>,
                 %upd: tensor<4x3x8xf32>, %y: tensor<4x2xf32>,
                 %u: tensor<4x3xf32>, %s: tensor<6x4xf32>,
                 %aq: tensor<2x4x3x4xf32>, %ak: tensor<2x2x5x4xf32>,
                 %av: tensor<2x2x5x6xf32>, %amask: tensor<3x5xf32>,
                 %angles: tensor<2x1x3x2xf32>) {
  // CHECK: dtc.constant: () -> ([i, j]) {i=4, j=8} need_replication={i, j}
  %c = dtc.constant dense<1.0> : tensor<4x8xf32>
  // CHECK-NEXT: dtc.iota: () -> ([i, j]) {i=4, j=8} need_replication={i, j}
  %io = dtc.iota dim = 1 : tensor<4x8xi64>
  // CHECK-NEXT: dtc.exp: ([i, j]) -> ([i, j]) {i=4, j=8}{{$}}
  %e = dtc.exp %x : tensor<4x8xf32>
  // CHECK-NEXT: dtc.neg: ([i, j]) -> ([i, j]) {i=4, j=8} linear={0}
  %n = dtc.neg %x : tensor<4x8xf32>
  // CHECK-NEXT: dtc.not: ([i, j]) -> ([i, j]) {i=4, j=8}{{$}}
  %nm = dtc.not %m : tensor<4x8xi1>
  // CHECK-NEXT: dtc.gelu: ([i, j]) -> ([i, j]) {i=4, j=8}{{$}}
  %g = dtc.gelu %x approximate = none : tensor<4x8xf32>
  // CHECK-NEXT: dtc.abs: ([i, j]) -> ([i, j]) {i=4, j=8}{{$}}
  %u_abs = dtc.abs %x : tensor<4x8xf32>
  // CHECK-NEXT: dtc.relu: ([i, j]) -> ([i, j]) {i=4, j=8}{{$}}
  %u_relu = dtc.relu %x : tensor<4x8xf32>
  // CHECK-NEXT: dtc.log: ([i, j]) -> ([i, j]) {i=4, j=8}{{$}}
  %u_log = dtc.log %x : tensor<4x8xf32>
  // CHECK-NEXT: dtc.sqrt: ([i, j]) -> ([i, j]) {i=4, j=8}{{$}}
  %u_sqrt = dtc.sqrt %x : tensor<4x8xf32>
  // CHECK-NEXT: dtc.rsqrt: ([i, j]) -> ([i, j]) {i=4, j=8}{{$}}
  %u_rsqrt = dtc.rsqrt %x : tensor<4x8xf32>
  // CHECK-NEXT: dtc.reciprocal: ([i, j]) -> ([i, j]) {i=4, j=8}{{$}}
  %u_reciprocal = dtc.reciprocal %x : tensor<4x8xf32>
  // CHECK-NEXT: dtc.tanh: ([i, j]) -> ([i, j]) {i=4, j=8}{{$}}
  %u_tanh = dtc.tanh %x : tensor<4x8xf32>
  // CHECK-NEXT: dtc.erf: ([i, j]) -> ([i, j]) {i=4, j=8}{{$}}
  %u_erf = dtc.erf %x : tensor<4x8xf32>
  // CHECK-NEXT: dtc.sin: ([i, j]) -> ([i, j]) {i=4, j=8}{{$}}
  %u_sin = dtc.sin %x : tensor<4x8xf32>
  // CHECK-NEXT: dtc.cos: ([i, j]) -> ([i, j]) {i=4, j=8}{{$}}
  %u_cos = dtc.cos %x : tensor<4x8xf32>
  // CHECK-NEXT: dtc.sigmoid: ([i, j]) -> ([i, j]) {i=4, j=8}{{$}}
  %u_sigmoid = dtc.sigmoid %x : tensor<4x8xf32>
  // CHECK-NEXT: dtc.silu: ([i, j]) -> ([i, j]) {i=4, j=8}{{$}}
  %u_silu = dtc.silu %x : tensor<4x8xf32>
  // CHECK-NEXT: dtc.softplus: ([i, j]) -> ([i, j]) {i=4, j=8}{{$}}
  %u_softplus = dtc.softplus %x : tensor<4x8xf32>
  // CHECK-NEXT: dtc.dropout: ([i, j], []) -> ([i, j]) {i=4, j=8}{{$}}
  %d = dtc.dropout %x, %step ratio = 1.0e-01 seed = 0 stream = 0
      : (tensor<4x8xf32>, tensor<i64>) -> tensor<4x8xf32>
  // CHECK-NEXT: dtc.add: ([i, j], [j]) -> ([i, j]) {i=4, j=8} linear={0, 1}
  %a = dtc.add %x, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: dtc.sub: ([i, j], [j]) -> ([i, j]) {i=4, j=8} linear={0, 1}
  %sb = dtc.sub %x, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: dtc.mul: ([i, j], [j]) -> ([i, j]) {i=4, j=8} linear=separate
  %mu = dtc.mul %x, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: dtc.div: ([i, j], [j]) -> ([i, j]) {i=4, j=8} linear={0}
  %dv = dtc.div %x, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: dtc.pow: ([i, j], [j]) -> ([i, j]) {i=4, j=8}{{$}}
  %pw = dtc.pow %x, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: dtc.mod: ([i, j], [j]) -> ([i, j]) {i=4, j=8}{{$}}
  %md = dtc.mod %x, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: dtc.max: ([i, j], [i, j]) -> ([i, j]) {i=4, j=8}{{$}}
  %mx = dtc.max %x, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: dtc.and: ([i, j], [i, j]) -> ([i, j]) {i=4, j=8}{{$}}
  %an = dtc.and %m, %m : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  // CHECK-NEXT: dtc.min: ([i, j], [i, j]) -> ([i, j]) {i=4, j=8}{{$}}
  %mn = dtc.min %x, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: dtc.or: ([i, j], [i, j]) -> ([i, j]) {i=4, j=8}{{$}}
  %or = dtc.or %m, %m : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  // CHECK-NEXT: dtc.xor: ([i, j], [i, j]) -> ([i, j]) {i=4, j=8}{{$}}
  %xo = dtc.xor %m, %m : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  // CHECK-NEXT: dtc.compare: ([i, j], [j]) -> ([i, j]) {i=4, j=8}{{$}}
  %cm = dtc.compare lt, %x, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  // CHECK-NEXT: dtc.select: ([i, j], [i, j], [j]) -> ([i, j]) {i=4, j=8}{{$}}
  %se = dtc.select %m, %x, %v
      : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: dtc.cast: ([i, j]) -> ([i, j]) {i=4, j=8} linear={0}
  %ca = dtc.cast %x : tensor<4x8xf32> to tensor<4x8xbf16>
  // An op of another dialect gets the elementwise rule from its trait.
  // CHECK-NEXT: dtc_test.hypot: ([i, j], [j]) -> ([i, j]) {i=4, j=8}{{$}}
  %hy = dtc_test.hypot %x, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>

  // Rows, columns, the contraction; batch dimensions broadcast.
  // CHECK-NEXT: dtc.matmul: ([i, k], [j, k]) -> ([i, j]) {i=4, j=6, k=8} reduction={k} linear=separate
  %mm = dtc.matmul %x, %w transpose_rhs
      : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  // CHECK-NEXT: dtc.matmul: ([i, j, l], [l, k]) -> ([i, j, k]) {i=2, j=4, k=5, l=24} reduction={l} linear=separate
  %bm = dtc.matmul %q, %r
      : (tensor<2x4x24xf32>, tensor<24x5xf32>) -> tensor<2x4x5xf32>

  // CHECK-NEXT: dtc.reduce_sum: ([i, j]) -> ([i]) {i=4, j=8} reduction={j} linear={0}
  %rs = dtc.reduce_sum %x dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  // CHECK-NEXT: dtc.reduce_mean: ([i, j]) -> ([1, j]) {i=4, j=8} reduction={i(mean)}{{$}}
  %rm = dtc.reduce_mean %x dims = [0] keep_dims : tensor<4x8xf32> -> tensor<1x8xf32>
  // CHECK-NEXT: dtc.reduce_max: ([i, j]) -> ([i]) {i=4, j=8} reduction={j(max)}{{$}}
  %rx = dtc.reduce_max %x dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  // CHECK-NEXT: dtc.reduce_min: ([i, j]) -> ([i]) {i=4, j=8} reduction={j(min)}{{$}}
  %rn = dtc.reduce_min %x dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  // CHECK-NEXT: dtc.arg_max: ([i, j]) -> ([i]) {i=4, j=8} need_replication={j}{{$}}
  %am = dtc.arg_max %x dim = 1 : tensor<4x8xf32> -> tensor<4xi64>
  // CHECK-NEXT: dtc.cumsum: ([i, j]) -> ([i, j]) {i=4, j=8} need_replication={j}{{$}}
  %cs = dtc.cumsum %x dim = 1 : tensor<4x8xf32>
  // CHECK-NEXT: dtc.softmax: ([i, j]) -> ([i, j]) {i=4, j=8} need_replication={j}{{$}}
  %sm = dtc.softmax %x dim = 1 : tensor<4x8xf32>
  // CHECK-NEXT: dtc.log_softmax: ([i, j]) -> ([i, j]) {i=4, j=8} need_replication={j}{{$}}
  %ls = dtc.log_softmax %x dim = 1 : tensor<4x8xf32>
  // CHECK-NEXT: dtc.top_k: ([i, j]) -> ([i, k], [i, l]) {i=4, j=8, k=2, l=2} need_replication={j, k, l}{{$}}
  %tv, %ti = dtc.top_k %x k = 2 dim = 1
      : tensor<4x8xf32> -> (tensor<4x2xf32>, tensor<4x2xi64>)
  // CHECK-NEXT: dtc.layer_norm: ([i, j], [j], [j]) -> ([i, j], [i, 1], [i, 1]) {i=4, j=8} need_replication={j}{{$}}
  %ln:3 = dtc.layer_norm %x, %v, %v dim = 1 epsilon = 1.0e-05
      : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
      -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  // Batch, kv heads x group, queries pass through; keys and d are whole.
  // CHECK-NEXT: dtc.attention: ([i, jk, l, n], [i, j, m, n], [i, j, m, o], [l, m]) -> ([i, jk, l, o], [i, jk, l, m]) {i=2, j=2, k=2, l=3, m=5, n=4, o=6} need_replication={m, n}{{$}}
  %att:2 = dtc.attention %aq, %ak, %av mask %amask scale = 0.5
      : (tensor<2x4x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x6xf32>,
         tensor<3x5xf32>) -> (tensor<2x4x3x6xf32>, tensor<2x4x3x5xf32>)
  // Its gradient: batch and kv heads pass through; a split of the group or
  // the queries would leave dk and dv partial sums and dq split.
  // CHECK-NEXT: dtc.attention_grad: ([i, jk, l, n], [i, j, m, n], [i, j, m, o], [i, jk, l, m], [i, jk, l, o], [l, m]) -> ([i, jk, l, n], [i, j, m, n], [i, j, m, o]) {i=2, j=2, k=2, l=3, m=5, n=4, o=6} need_replication={k, l, m, n, o}{{$}}
  %agrad:3 = dtc.attention_grad %aq, %ak, %av, %att#1, %att#0 mask %amask scale = 0.5
      : (tensor<2x4x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x6xf32>,
         tensor<2x4x3x5xf32>, tensor<2x4x3x6xf32>, tensor<3x5xf32>)
      -> (tensor<2x4x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x6xf32>)
  // CHECK-NEXT: dtc.rms_norm: ([i, j], [j]) -> ([i, j]) {i=4, j=8} need_replication={j}{{$}}
  %rms = dtc.rms_norm %x, %v dim = 1 epsilon = 1.0e-06
      : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // The angles broadcast over the heads; the features' pairs are whole.
  // CHECK-NEXT: dtc.rotary: ([i, j, k, l], [i, 1, k, m], [i, 1, k, m]) -> ([i, j, k, l]) {i=2, j=4, k=3, l=4, m=2} need_replication={l, m}{{$}}
  %rot = dtc.rotary %aq, %angles, %angles rotary_dim = 4
      : (tensor<2x4x3x4xf32>, tensor<2x1x3x2xf32>, tensor<2x1x3x2xf32>) -> tensor<2x4x3x4xf32>

  // The indexed dimension is whole; the indices' dimensions pass through.
  // CHECK-NEXT: dtc.gather: ([i, j], [k, l]) -> ([k, l, j]) {i=6, j=8, k=4, l=3} need_replication={i} linear={0}
  %ga = dtc.gather %w[%ids] dim = 0
      : (tensor<6x8xf32>, tensor<4x3xi64>) -> tensor<4x3x8xf32>
  // CHECK-NEXT: dtc.gather_elements: ([i, j], [i, k]) -> ([i, k]) {i=4, j=8, k=2} need_replication={j}{{$}}
  %ge = dtc.gather_elements %x[%idx] dim = 1
      : (tensor<4x8xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
  // CHECK-NEXT: dtc.scatter_elements_add: ([i, j], [i, k], [i, k]) -> ([i, j]) {i=4, j=8, k=2} reduction={k} need_replication={j} linear={0, 2} accumulators={0}
  %sea = dtc.scatter_elements_add %dy into %x[%idx] dim = 1
      : (tensor<4x8xf32>, tensor<4x2xi64>, tensor<4x2xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: dtc.scatter_add: ([i, j], [k, l], [k, l, j]) -> ([i, j]) {i=6, j=8, k=4, l=3} reduction={k, l} need_replication={i} linear={0, 2} accumulators={0}
  %sa = dtc.scatter_add %upd into %w[%ids] dim = 0
      : (tensor<6x8xf32>, tensor<4x3xi64>, tensor<4x3x8xf32>) -> tensor<6x8xf32>
  // Products and extrema are no partial sums: the updates combine whole.
  // CHECK-NEXT: dtc.scatter_reduce: ([i, j], [k, l], [k, l, j]) -> ([i, j]) {i=6, j=8, k=4, l=3} need_replication={i, k, l}{{$}}
  %sred = dtc.scatter_reduce %upd into %w[%ids] dim = 0 kind = max
      : (tensor<6x8xf32>, tensor<4x3xi64>, tensor<4x3x8xf32>) -> tensor<6x8xf32>

  // Reshapes cut both shapes into common factors, major first.
  // CHECK-NEXT: dtc.reshape: ([i, j, kl]) -> ([i, j, k, l]) {i=2, j=4, k=3, l=8} linear={0}
  %heads = dtc.reshape %q : tensor<2x4x24xf32> to tensor<2x4x3x8xf32>
  // CHECK-NEXT: dtc.reshape: ([i, jk]) -> ([ij, k]) {i=4, j=2, k=4} linear={0}
  %re = dtc.reshape %x : tensor<4x8xf32> to tensor<8x4xf32>
  // CHECK-NEXT: dtc.reshape: ([ij, l]) -> ([ik, m]) {i=2, j=3, k=2, l=4, m=6} need_replication={j, k, l, m} linear={0}
  %odd = dtc.reshape %s : tensor<6x4xf32> to tensor<4x6xf32>
  // No elements: no factor shared (the sharding conformance suite found a
  // division by zero here, ONNX's test_reshape_allowzero_reordered).
  // CHECK-NEXT: dtc.reshape: ([i, j, k]) -> ([l, m, n]) {i=0, j=3, k=4, l=3, m=4, n=0} need_replication={i, j, k, l, m, n} linear={0}
  %empty = dtc.reshape %nothing : tensor<0x3x4xf32> to tensor<3x4x0xf32>
  // CHECK-NEXT: dtc.transpose: ([i, k, j]) -> ([i, j, k]) {i=2, j=24, k=4} linear={0}
  %tr = dtc.transpose %q permutation = [0, 2, 1]
      : tensor<2x4x24xf32> -> tensor<2x24x4xf32>
  // CHECK-NEXT: dtc.broadcast: ([j]) -> ([i, j]) {i=4, j=8} linear={0}
  %br = dtc.broadcast %v : tensor<8xf32> to tensor<4x8xf32>

  // Equal pieces make [pieces, piece]: a split piece is a split in blocks.
  // CHECK-NEXT: dtc.concat: ([i, k], [i, k]) -> ([i, jk]) {i=4, j=2, k=8} need_replication={j} linear={0, 1}
  %ce = dtc.concat %x, %x dim = 1
      : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  // CHECK-NEXT: dtc.concat: ([i, j], [i, k]) -> ([i, l]) {i=4, j=8, k=2, l=10} need_replication={j, k, l} linear={0, 1}
  %cu = dtc.concat %x, %y dim = 1
      : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x10xf32>
  // CHECK-NEXT: dtc.slice: ([i, j]) -> ([i, k]) {i=4, j=8, k=3} need_replication={j, k} linear={0}
  %sl = dtc.slice %x starts = [0, 2] sizes = [4, 3] strides = [1, 2]
      : tensor<4x8xf32> -> tensor<4x3xf32>
  // CHECK-NEXT: dtc.split: ([i, j, kl]) -> ([i, j, l], [i, j, l], [i, j, l]) {i=2, j=4, k=3, l=8} need_replication={k} linear={0}
  %p:3 = dtc.split %q dim = 2 sizes = [8, 8, 8]
      : tensor<2x4x24xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
  // CHECK-NEXT: dtc.split: ([i, j, k]) -> ([i, j, l], [i, j, m]) {i=2, j=4, k=24, l=16, m=8} need_replication={k, l, m} linear={0}
  %pu:2 = dtc.split %q dim = 2 sizes = [16, 8]
      : tensor<2x4x24xf32> -> tensor<2x4x16xf32>, tensor<2x4x8xf32>
  // CHECK-NEXT: dtc.update_slice: ([i, j], [i, k]) -> ([i, k]) {i=4, j=3, k=8} need_replication={j, k}{{$}}
  %us = dtc.update_slice %u into %x starts = [0, 2] strides = [1, 2]
      : (tensor<4x3xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>

  // Collectives (over other axes) keep the dimensions they do not touch.
  // CHECK-NEXT: dtc.all_reduce: ([i, j]) -> ([i, j]) {i=4, j=8}{{$}}
  %ar = dtc.all_reduce %x on @mesh axes = ["tp"] kind = sum : tensor<4x8xf32>
  // CHECK-NEXT: dtc.all_gather: ([i, j]) -> ([i, k]) {i=4, j=8, k=16} need_replication={j, k}{{$}}
  %ag = dtc.all_gather %x on @mesh axes = ["tp"] dim = 1
      : tensor<4x8xf32> -> tensor<4x16xf32>
  // CHECK-NEXT: dtc.reduce_scatter: ([i, j]) -> ([i, k]) {i=4, j=8, k=4} need_replication={j, k}{{$}}
  %rsc = dtc.reduce_scatter %x on @mesh axes = ["tp"] dim = 1
      : tensor<4x8xf32> -> tensor<4x4xf32>
  // CHECK-NEXT: dtc.shard: ([i, j]) -> ([i, k]) {i=4, j=8, k=4} need_replication={j, k}{{$}}
  %sh = dtc.shard %x on @mesh axes = ["tp"] dim = 1
      : tensor<4x8xf32> -> tensor<4x4xf32>
  // CHECK-NEXT: dtc.collective_broadcast: ([i, j]) -> ([i, j]) {i=4, j=8}{{$}}
  %cb = dtc.collective_broadcast %x on @mesh axes = ["tp"] root = 0
      : tensor<4x8xf32>
  // CHECK-NEXT: dtc.send_recv: ([i, j]) -> ([i, j]) {i=4, j=8}{{$}}
  %sr = dtc.send_recv %x on @mesh axis = "tp" shift = 1 : tensor<4x8xf32>
  // CHECK-NEXT: dtc.all_to_all: ([i, k]) -> ([j, l]) {i=4, j=2, k=8, l=16} need_replication={i, j, k, l}{{$}}
  %aa = dtc.all_to_all %x on @mesh axes = ["tp"] split_dim = 0 concat_dim = 1
      : tensor<4x8xf32> -> tensor<2x16xf32>
  return
}

