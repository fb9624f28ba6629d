// RUN: dtc-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of the dtc dialect.

func.func @add_not_broadcastable(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{operand shapes are not broadcastable}}
  %0 = dtc.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @add_wrong_result(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  %0 = dtc.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @add_mixed_types(%a: tensor<3xf32>, %b: tensor<3xf16>) {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = dtc.add %a, %b : (tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  return
}

// -----

func.func @exp_of_integers(%a: tensor<3xi32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of}}
  %0 = dtc.exp %a : tensor<3xi32>
  return
}

// -----

func.func @dynamic_shape(%a: tensor<?xf32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of}}
  %0 = dtc.neg %a : tensor<?xf32>
  return
}

// -----

func.func @iota_dim(%a: tensor<3xf32>) {
  // expected-error @+1 {{dim 1 is out of range for rank 1}}
  %0 = dtc.iota dim = 1 : tensor<3xi64>
  return
}

// -----

func.func @select_types(%c: tensor<3xi1>, %a: tensor<3xf32>, %b: tensor<3xf16>) {
  // expected-error @+1 {{on_true and on_false must have the same element type}}
  %0 = dtc.select %c, %a, %b : (tensor<3xi1>, tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  return
}

// -----

func.func @cast_shape(%a: tensor<3xf32>) {
  // expected-error @+1 {{all non-scalar operands/results must have the same shape}}
  %0 = dtc.cast %a : tensor<3xf32> to tensor<4xf16>
  return
}

// -----

func.func @matmul_rank(%a: tensor<3xf32>, %b: tensor<3x4xf32>) {
  // expected-error @+1 {{operands must have rank >= 2}}
  %0 = dtc.matmul %a, %b : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @matmul_contracting(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{contracting dimensions differ (3 vs 4)}}
  %0 = dtc.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x2x3xf32>, %b: tensor<3x3x4xf32>) {
  // expected-error @+1 {{batch dimensions are not broadcastable}}
  %0 = dtc.matmul %a, %b : (tensor<2x2x3xf32>, tensor<3x3x4xf32>) -> tensor<2x2x4xf32>
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @reduce_order(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{dims must be strictly ascending}}
  %0 = dtc.reduce_sum %a dims = [1, 0] : tensor<2x3xf32> -> tensor<f32>
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @reduce_range(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %0 = dtc.reduce_max %a dims = [2] : tensor<2x3xf32> -> tensor<2x3xf32>
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @softmax_dim(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %0 = dtc.softmax %a dim = 2 : tensor<2x3xf32>
  return
}

// -----

func.func @log_softmax_dim(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{dim -1 is out of range for rank 2}}
  %0 = dtc.log_softmax %a dim = -1 : tensor<2x3xf32>
  return
}

// -----

func.func @layer_norm_scale(%x: tensor<2x3xf32>, %g: tensor<2xf32>) {
  // expected-error @+1 {{scale and bias must have the normalized shape input.shape[1:]}}
  %0:3 = dtc.layer_norm %x, %g dim = 1 epsilon = 1.0e-05 : (tensor<2x3xf32>, tensor<2xf32>) -> (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @rms_norm_type(%x: tensor<2x3xf32>, %g: tensor<3xf16>) {
  // expected-error @+1 {{scale and bias must have the input's element type}}
  %0 = dtc.rms_norm %x, %g dim = 1 epsilon = 1.0e-05 : (tensor<2x3xf32>, tensor<3xf16>) -> tensor<2x3xf32>
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @gather_dim(%x: tensor<2x3xf32>, %i: tensor<4xi64>) {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %0 = dtc.gather %x[%i] dim = 2 : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<4xf32>
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{input has 6 elements but the result type has 8}}
  %0 = dtc.reshape %x : tensor<2x3xf32> to tensor<2x4xf32>
  return
}

// -----

func.func @transpose_length(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{permutation has 1 entries for an input of rank 2}}
  %0 = dtc.transpose %x permutation = [0] : tensor<2x3xf32> -> tensor<2xf32>
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @transpose_repeat(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{permutation is not a permutation of [0, 2)}}
  %0 = dtc.transpose %x permutation = [1, 1] : tensor<2x3xf32> -> tensor<3x3xf32>
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @broadcast_rank(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{result rank must be at least the input rank}}
  %0 = dtc.broadcast %x : tensor<2x3xf32> to tensor<3xf32>
  return
}

// -----

func.func @broadcast_dim(%x: tensor<3xf32>) {
  // expected-error @+1 {{input dimension 0 (3) cannot broadcast to 4}}
  %0 = dtc.broadcast %x : tensor<3xf32> to tensor<2x4xf32>
  return
}

// -----

func.func @concat_empty() {
  // expected-error @+1 {{expected 1 or more operands, but found 0}}
  %0 = "dtc.concat"() <{dim = 0 : i64}> : () -> tensor<2xf32>
  return
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{operands must have the same rank}}
  %0 = dtc.concat %a, %b dim = 0 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @concat_other_dim(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{operands differ in dimension 1, which is not the concatenated one}}
  %0 = dtc.concat %a, %b dim = 0 : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @concat_dim(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %0 = dtc.concat %a dim = 2 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @slice_entries(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{starts, sizes and strides need one entry per input dimension}}
  %0 = dtc.slice %x starts = [0] sizes = [4] strides = [1] : tensor<4x8xf32> -> tensor<4xf32>
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @slice_zero_stride(%x: tensor<4xf32>) {
  // expected-error @+1 {{stride of dimension 0 is zero}}
  %0 = dtc.slice %x starts = [0] sizes = [2] strides = [0] : tensor<4xf32> -> tensor<2xf32>
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @slice_negative_size(%x: tensor<4xf32>) {
  // expected-error @+1 {{size of dimension 0 is negative}}
  %0 = "dtc.slice"(%x) <{starts = array<i64: 0>, sizes = array<i64: -1>, strides = array<i64: 1>}> : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @slice_bounds(%x: tensor<4xf32>) {
  // expected-error @+1 {{dimension 0 reads outside the input}}
  %0 = dtc.slice %x starts = [1] sizes = [2] strides = [3] : tensor<4xf32> -> tensor<2xf32>
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @split_negative(%x: tensor<4xf32>) {
  // expected-error @+1 {{sizes must be non-negative}}
  %0:2 = dtc.split %x dim = 0 sizes = [5, -1] : tensor<4xf32> -> tensor<5xf32>, tensor<4xf32>
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @split_sum(%x: tensor<4xf32>) {
  // expected-error @+1 {{sizes add up to 5 but dimension 0 has 4}}
  %0:2 = dtc.split %x dim = 0 sizes = [2, 3] : tensor<4xf32> -> tensor<2xf32>, tensor<3xf32>
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @split_dim(%x: tensor<4xf32>) {
  // expected-error @+1 {{dim 1 is out of range for rank 1}}
  %0 = dtc.split %x dim = 1 sizes = [4] : tensor<4xf32> -> tensor<4xf32>
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @scatter_add_updates(%x: tensor<10x3xf32>, %i: tensor<4xi64>, %u: tensor<4x2xf32>) {
  // expected-error @+1 {{updates must have the type gather would produce: 'tensor<4x3xf32>'}}
  %0 = dtc.scatter_add %u into %x[%i] dim = 0 : (tensor<10x3xf32>, tensor<4xi64>, tensor<4x2xf32>) -> tensor<10x3xf32>
  return
}

// -----

func.func @scatter_reduce_updates(%x: tensor<10x3xf32>, %i: tensor<4xi64>, %u: tensor<4x2xf32>) {
  // expected-error @+1 {{updates must have the type gather would produce: 'tensor<4x3xf32>'}}
  %0 = dtc.scatter_reduce %u into %x[%i] dim = 0 kind = min : (tensor<10x3xf32>, tensor<4xi64>, tensor<4x2xf32>) -> tensor<10x3xf32>
  return
}

// -----

func.func @scatter_add_dim(%x: tensor<10x3xf32>, %i: tensor<4xi64>, %u: tensor<4x2xf32>) {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %0 = dtc.scatter_add %u into %x[%i] dim = 2 : (tensor<10x3xf32>, tensor<4xi64>, tensor<4x2xf32>) -> tensor<10x3xf32>
  return
}

// -----

func.func @update_slice_type(%u: tensor<2xf16>, %x: tensor<4xf32>) {
  // expected-error @+1 {{update and input must have the same element type}}
  %0 = dtc.update_slice %u into %x starts = [0] strides = [1] : (tensor<2xf16>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @update_slice_rank(%u: tensor<2x1xf32>, %x: tensor<4xf32>) {
  // expected-error @+1 {{update and input must have the same rank}}
  %0 = dtc.update_slice %u into %x starts = [0] strides = [1] : (tensor<2x1xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @update_slice_bounds(%u: tensor<3xf32>, %x: tensor<4xf32>) {
  // expected-error @+1 {{dimension 0 reads outside the input}}
  %0 = dtc.update_slice %u into %x starts = [2] strides = [1] : (tensor<3xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @cumsum_dim(%x: tensor<4xf32>) {
  // expected-error @+1 {{dim 1 is out of range for rank 1}}
  %0 = dtc.cumsum %x dim = 1 : tensor<4xf32>
  return
}

// -----

func.func @arg_max_dim(%x: tensor<4xf32>) {
  // expected-error @+1 {{dim 1 is out of range for rank 1}}
  %0 = dtc.arg_max %x dim = 1 : tensor<4xf32> -> tensor<4xi64>
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @gather_elements_rank(%x: tensor<4x8xf32>, %i: tensor<4xi64>) {
  // expected-error @+1 {{indices must have the input's rank}}
  %0 = dtc.gather_elements %x[%i] dim = 1 : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<4xf32>
  return
}

// -----

func.func @gather_elements_size(%x: tensor<4x8xf32>, %i: tensor<5x2xi64>) {
  // expected-error @+1 {{indices dimension 0 is larger than the input's}}
  %0 = dtc.gather_elements %x[%i] dim = 1 : (tensor<4x8xf32>, tensor<5x2xi64>) -> tensor<5x2xf32>
  return
}

// -----

func.func @gather_elements_result(%x: tensor<4x8xf32>, %i: tensor<4x2xi64>) {
  // expected-error @+1 {{result must have the shape of the indices and the element type of the input}}
  %0 = dtc.gather_elements %x[%i] dim = 1 : (tensor<4x8xf32>, tensor<4x2xi64>) -> tensor<4x3xf32>
  return
}

// -----

func.func @scatter_elements_updates(%x: tensor<4x8xf32>, %i: tensor<4x2xi64>, %u: tensor<4x3xf32>) {
  // expected-error @+1 {{updates must have the shape of the indices and the element type of the input}}
  %0 = dtc.scatter_elements_add %u into %x[%i] dim = 1 : (tensor<4x8xf32>, tensor<4x2xi64>, tensor<4x3xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @top_k_k(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{k = 9 is not in [0, 8]}}
  %v, %i = dtc.top_k %x k = 9 dim = 1 : tensor<4x8xf32> -> (tensor<4x9xf32>, tensor<4x9xi64>)
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @dropout_ratio(%x: tensor<4xf32>, %s: tensor<i64>) {
  // expected-error @+1 {{ratio must be in [0, 1)}}
  %0 = dtc.dropout %x, %s ratio = 1.0 seed = 0 stream = 0 : (tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
  return
}

// -----

func.func @dropout_step(%x: tensor<4xf32>, %s: tensor<2xi64>) {
  // expected-error @+1 {{step must be a scalar}}
  %0 = dtc.dropout %x, %s ratio = 0.5 seed = 0 stream = 0 : (tensor<4xf32>, tensor<2xi64>) -> tensor<4xf32>
  return
}

// -----

func.func @dropout_offset(%x: tensor<4x2xf32>, %s: tensor<i64>, %o: tensor<1xi64>) {
  // expected-error @+1 {{offset must hold one index per dimension of the input, 2}}
  %0 = dtc.dropout %x, %s at %o in [8, 2] ratio = 0.5 seed = 0 stream = 0 : (tensor<4x2xf32>, tensor<i64>, tensor<1xi64>) -> tensor<4x2xf32>
  return
}

// -----

func.func @dropout_global(%x: tensor<4x2xf32>, %s: tensor<i64>, %o: tensor<2xi64>) {
  // expected-error @+1 {{the input 'tensor<4x2xf32>' is larger than its global shape}}
  %0 = dtc.dropout %x, %s at %o in [2, 2] ratio = 0.5 seed = 0 stream = 0 : (tensor<4x2xf32>, tensor<i64>, tensor<2xi64>) -> tensor<4x2xf32>
  return
}

// -----

func.func @attention_heads(%q: tensor<1x3x4x8xf32>, %k: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{k and v must have the same heads, which divide q's 3}}
  %0:2 = dtc.attention %q, %k, %k scale = 1.0 : (tensor<1x3x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x3x4x8xf32>, tensor<1x3x4x4xf32>)
  return
}

// -----

func.func @attention_d(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x6xf32>) {
  // expected-error @+1 {{q and k must have the same d}}
  %0:2 = dtc.attention %q, %k, %k scale = 1.0 : (tensor<1x2x4x8xf32>, tensor<1x2x4x6xf32>, tensor<1x2x4x6xf32>) -> (tensor<1x2x4x6xf32>, tensor<1x2x4x4xf32>)
  return
}

// -----

func.func @attention_mask(%q: tensor<1x2x4x8xf32>, %m: tensor<4x5xf32>) {
  // expected-error @+1 {{the mask must broadcast to the scores 'tensor<1x2x4x4xf32>'}}
  %0:2 = dtc.attention %q, %q, %q mask %m scale = 1.0 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<4x5xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>)
  return
}

// -----

func.func @attention_dropout(%q: tensor<1x2x4x8xf32>, %s: tensor<i64>) {
  // expected-error @+1 {{dropout needs dropout_ratio, step, seed and stream}}
  %0:2 = dtc.attention %q, %q, %q dropout step %s scale = 1.0 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<i64>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>)
  return
}

// -----

func.func @attention_grad_probs(%q: tensor<1x2x4x8xf32>, %p: tensor<1x2x4x5xf32>) {
  // expected-error @+1 {{probs must be 'tensor<1x2x4x4xf32>'}}
  %0:3 = dtc.attention_grad %q, %q, %q, %p, %q scale = 1.0 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x5xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
  return
}

// -----

func.func @attention_grad_result_grad(%q: tensor<1x2x4x8xf32>, %p: tensor<1x2x4x4xf32>, %g: tensor<1x2x4x6xf32>) {
  // expected-error @+1 {{result_grad must be 'tensor<1x2x4x8xf32>'}}
  %0:3 = dtc.attention_grad %q, %q, %q, %p, %g scale = 1.0 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x6xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
  return
}

// -----

func.func @fused_attention_grad_lse(%q: tensor<1x2x4x16xbf16>, %lse: tensor<1x2x5xf32>) {
  // expected-error @+1 {{lse must be [batch, heads, queries]}}
  %0:3 = dtc.fused_attention_grad %q, %q, %q, %q, %lse, %q scale = 1.0 : (tensor<1x2x4x16xbf16>, tensor<1x2x4x16xbf16>, tensor<1x2x4x16xbf16>, tensor<1x2x4x16xbf16>, tensor<1x2x5xf32>, tensor<1x2x4x16xbf16>) -> (tensor<1x2x4x16xbf16>, tensor<1x2x4x16xbf16>, tensor<1x2x4x16xbf16>)
  return
}

// -----

func.func @fused_attention_grad_result(%q: tensor<1x2x4x16xbf16>, %y: tensor<1x2x4x8xbf16>, %lse: tensor<1x2x4xf32>) {
  // expected-error @+1 {{result and result_grad must be 'tensor<1x2x4x16xbf16>'}}
  %0:3 = dtc.fused_attention_grad %q, %q, %q, %y, %lse, %q scale = 1.0 : (tensor<1x2x4x16xbf16>, tensor<1x2x4x16xbf16>, tensor<1x2x4x16xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4xf32>, tensor<1x2x4x16xbf16>) -> (tensor<1x2x4x16xbf16>, tensor<1x2x4x16xbf16>, tensor<1x2x4x16xbf16>)
  return
}

// -----

func.func @attention_grad_heads(%q: tensor<1x3x4x8xf32>, %k: tensor<1x2x4x8xf32>, %p: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{k and v must have the same heads, which divide q's 3}}
  %0:3 = dtc.attention_grad %q, %k, %k, %p, %q scale = 1.0 : (tensor<1x3x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4x8xf32>) -> (tensor<1x3x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
  return
}

// -----

func.func @attention_ratio(%q: tensor<1x2x4x8xf32>, %s: tensor<i64>) {
  // expected-error @+1 {{dropout_ratio must be in [0, 1)}}
  %0:2 = dtc.attention %q, %q, %q dropout step %s scale = 1.0 {dropout_ratio = 1.0 : f64, seed = 0 : i64, stream = 0 : i64} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<i64>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>)
  return
}

// -----

func.func @attention_softcap(%q: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{softcap must be positive}}
  %0:2 = dtc.attention %q, %q, %q scale = 1.0 {softcap = 0.0 : f64} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>)
  return
}

// -----

func.func @rotary_odd(%x: tensor<2x4x8xf32>, %a: tensor<4x2xf32>) {
  // expected-error @+1 {{rotary_dim 3 must be even, positive and at most the last dimension of the input}}
  %0 = dtc.rotary %x, %a, %a rotary_dim = 3 : (tensor<2x4x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<2x4x8xf32>
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @rotary_angles(%x: tensor<2x4x8xf32>, %a: tensor<3x2xf32>) {
  // expected-error @+1 {{cos and sin must broadcast to input.shape[:-1] + [2] (one angle per pair)}}
  %0 = dtc.rotary %x, %a, %a rotary_dim = 4 : (tensor<2x4x8xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<2x4x8xf32>
  // expected-error @-1 {{failed to infer returned types}}
  return
}

// -----

func.func @fusion_arguments(%x: tensor<4xf32>) {
  // expected-error @+1 {{body arguments must have the inputs' types}}
  %0 = dtc.fusion loop(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<8xf32>):
    %n = dtc.neg %a : tensor<8xf32>
    dtc.yield %n : tensor<8xf32>
  }
  return
}

// -----

func.func @fusion_results(%x: tensor<4xf32>) {
  // expected-error @+1 {{dtc.yield must give the results' types}}
  %0 = dtc.fusion loop(%x) : (tensor<4xf32>) -> tensor<4xf64> {
  ^bb0(%a: tensor<4xf32>):
    %n = dtc.neg %a : tensor<4xf32>
    dtc.yield %n : tensor<4xf32>
  }
  return
}
