//===- KernelTest.cpp - compiled CPU kernels against the reference --------===//
//
// The differential harness of the CPU route: each loop fusion group below is
// lowered to one linalg kernel, each other op to its scf kernel, and on to
// LLVM, compiled in process (MLIR's ExecutionEngine, in tests only: the
// launcher does not link LLVM), and run on random inputs with infinities
// and NaNs mixed in, three draws each; its results must equal the
// reference executor's for the same op (test/lib/Transforms/KernelCheck.h).
// An op with no kernel is refused by name.
// test/Conversion/kernels-of-steps.mlir checks every kernel of whole fused
// steps the same way.
//
//===----------------------------------------------------------------------===//

#include "../../test/lib/Transforms/KernelCheck.h"
#include "dtc/Conversion/DTCToSCF.h"
#include "dtc/Conversion/FusionToLinalg.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::dtc;

namespace {

struct KernelCase {
  const char *name;
  /// A function whose body's ops (dtc.fusion groups or single ops) each
  /// have a kernel.
  const char *function;
};

void PrintTo(const KernelCase &c, std::ostream *os) { *os << c.name; }

const KernelCase kCases[] = {
    {"bias_gelu_scale", R"mlir(
func.func @f(%x: tensor<8x32xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %y = dtc.fusion loop(%x, %b) : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32> {
  ^bb0(%a: tensor<8x32xf32>, %c: tensor<32xf32>):
    %s = dtc.add %a, %c : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
    %g = dtc.gelu %s approximate = none : tensor<8x32xf32>
    %h = dtc.constant dense<0.5> : tensor<f32>
    %m = dtc.mul %g, %h : (tensor<8x32xf32>, tensor<f32>) -> tensor<8x32xf32>
    dtc.yield %m : tensor<8x32xf32>
  }
  return %y : tensor<8x32xf32>
})mlir"},
    {"activations_broadcast_columns", R"mlir(
func.func @f(%x: tensor<4x1xf32>, %z: tensor<4x13xf32>) -> tensor<4x13xf32> {
  %y = dtc.fusion loop(%x, %z) : (tensor<4x1xf32>, tensor<4x13xf32>) -> tensor<4x13xf32> {
  ^bb0(%a: tensor<4x1xf32>, %c: tensor<4x13xf32>):
    %t = dtc.gelu %c approximate = tanh : tensor<4x13xf32>
    %s = dtc.sigmoid %a : tensor<4x1xf32>
    %u = dtc.silu %t : tensor<4x13xf32>
    %p = dtc.softplus %u : tensor<4x13xf32>
    %b = dtc.broadcast %s : tensor<4x1xf32> to tensor<4x13xf32>
    %m = dtc.mul %p, %b : (tensor<4x13xf32>, tensor<4x13xf32>) -> tensor<4x13xf32>
    %r = dtc.tanh %m : tensor<4x13xf32>
    dtc.yield %r : tensor<4x13xf32>
  }
  return %y : tensor<4x13xf32>
})mlir"},
    {"arithmetic_and_masks", R"mlir(
func.func @f(%x: tensor<5x19xf32>, %w: tensor<5x19xf32>) -> tensor<5x19xf32> {
  %y = dtc.fusion loop(%x, %w) : (tensor<5x19xf32>, tensor<5x19xf32>) -> tensor<5x19xf32> {
  ^bb0(%a: tensor<5x19xf32>, %c: tensor<5x19xf32>):
    %d = dtc.div %a, %c : (tensor<5x19xf32>, tensor<5x19xf32>) -> tensor<5x19xf32>
    %e = dtc.sub %d, %a : (tensor<5x19xf32>, tensor<5x19xf32>) -> tensor<5x19xf32>
    %mx = dtc.max %e, %c : (tensor<5x19xf32>, tensor<5x19xf32>) -> tensor<5x19xf32>
    %mn = dtc.min %mx, %a : (tensor<5x19xf32>, tensor<5x19xf32>) -> tensor<5x19xf32>
    %r = dtc.relu %mn : tensor<5x19xf32>
    %ab = dtc.abs %c : tensor<5x19xf32>
    %sq = dtc.sqrt %ab : tensor<5x19xf32>
    %rs = dtc.rsqrt %ab : tensor<5x19xf32>
    %lg = dtc.log %ab : tensor<5x19xf32>
    %ex = dtc.exp %a : tensor<5x19xf32>
    %rc = dtc.reciprocal %ex : tensor<5x19xf32>
    %md = dtc.mod %a, %c : (tensor<5x19xf32>, tensor<5x19xf32>) -> tensor<5x19xf32>
    %mt = dtc.mod %a, %c {truncated} : (tensor<5x19xf32>, tensor<5x19xf32>) -> tensor<5x19xf32>
    %two = dtc.constant dense<2.0> : tensor<f32>
    %pw = dtc.pow %ab, %two : (tensor<5x19xf32>, tensor<f32>) -> tensor<5x19xf32>
    %k = dtc.compare gt, %a, %c : (tensor<5x19xf32>, tensor<5x19xf32>) -> tensor<5x19xi1>
    %nk = dtc.not %k : tensor<5x19xi1>
    %s1 = dtc.select %nk, %sq, %rs : (tensor<5x19xi1>, tensor<5x19xf32>, tensor<5x19xf32>) -> tensor<5x19xf32>
    %t1 = dtc.add %s1, %lg : (tensor<5x19xf32>, tensor<5x19xf32>) -> tensor<5x19xf32>
    %t2 = dtc.add %t1, %rc : (tensor<5x19xf32>, tensor<5x19xf32>) -> tensor<5x19xf32>
    %t3 = dtc.add %t2, %md : (tensor<5x19xf32>, tensor<5x19xf32>) -> tensor<5x19xf32>
    %t4 = dtc.add %t3, %mt : (tensor<5x19xf32>, tensor<5x19xf32>) -> tensor<5x19xf32>
    %t5 = dtc.add %t4, %pw : (tensor<5x19xf32>, tensor<5x19xf32>) -> tensor<5x19xf32>
    %t6 = dtc.add %t5, %r : (tensor<5x19xf32>, tensor<5x19xf32>) -> tensor<5x19xf32>
    %n = dtc.neg %t6 : tensor<5x19xf32>
    dtc.yield %n : tensor<5x19xf32>
  }
  return %y : tensor<5x19xf32>
})mlir"},
    // Bool buffers (a byte per element) read and written, 19 columns.
    {"bool_buffers", R"mlir(
func.func @f(%x: tensor<2x19xi64>, %m: tensor<2x19xi1>) -> tensor<2x19xi1> {
  %y = dtc.fusion loop(%x, %m) : (tensor<2x19xi64>, tensor<2x19xi1>) -> tensor<2x19xi1> {
  ^bb0(%a: tensor<2x19xi64>, %b: tensor<2x19xi1>):
    %z = dtc.constant dense<3> : tensor<i64>
    %k = dtc.compare gt, %a, %z : (tensor<2x19xi64>, tensor<i64>) -> tensor<2x19xi1>
    %r = dtc.and %k, %b : (tensor<2x19xi1>, tensor<2x19xi1>) -> tensor<2x19xi1>
    dtc.yield %r : tensor<2x19xi1>
  }
  return %y : tensor<2x19xi1>
})mlir"},
    // Reshapes between elementwise ops: each value is read at its own
    // index (heads split and merged, a bias broadcast over the split
    // shape), one input read at two indexes.
    {"reshapes", R"mlir(
func.func @f(%x: tensor<6x8xf32>, %b: tensor<2x4xf32>) -> tensor<48xf32> {
  %y = dtc.fusion loop(%x, %b) : (tensor<6x8xf32>, tensor<2x4xf32>) -> tensor<48xf32> {
  ^bb0(%a: tensor<6x8xf32>, %c: tensor<2x4xf32>):
    %e = dtc.exp %a : tensor<6x8xf32>
    %r = dtc.reshape %e : tensor<6x8xf32> to tensor<3x2x2x4xf32>
    %s = dtc.add %r, %c : (tensor<3x2x2x4xf32>, tensor<2x4xf32>) -> tensor<3x2x2x4xf32>
    %f = dtc.reshape %s : tensor<3x2x2x4xf32> to tensor<48xf32>
    %g = dtc.reshape %a : tensor<6x8xf32> to tensor<48xf32>
    %m = dtc.mul %f, %g : (tensor<48xf32>, tensor<48xf32>) -> tensor<48xf32>
    dtc.yield %m : tensor<48xf32>
  }
  return %y : tensor<48xf32>
})mlir"},
    // Two parameters' SGD updates in one multi-tensor group: a loop nest
    // per result, the learning rate shared.
    {"multi_tensor_updates", R"mlir(
func.func @f(%w: tensor<4x11xf32>, %g: tensor<4x11xf32>, %b: tensor<21xf32>, %h: tensor<21xf32>, %lr: tensor<f32>) -> (tensor<4x11xf32>, tensor<21xf32>, tensor<f32>) {
  %y:3 = dtc.fusion multi_tensor(%w, %g, %b, %h, %lr) : (tensor<4x11xf32>, tensor<4x11xf32>, tensor<21xf32>, tensor<21xf32>, tensor<f32>) -> (tensor<4x11xf32>, tensor<21xf32>, tensor<f32>) {
  ^bb0(%w0: tensor<4x11xf32>, %g0: tensor<4x11xf32>, %b0: tensor<21xf32>, %h0: tensor<21xf32>, %l: tensor<f32>):
    %s = dtc.mul %g0, %l : (tensor<4x11xf32>, tensor<f32>) -> tensor<4x11xf32>
    %n = dtc.sub %w0, %s : (tensor<4x11xf32>, tensor<4x11xf32>) -> tensor<4x11xf32>
    %t = dtc.mul %h0, %l : (tensor<21xf32>, tensor<f32>) -> tensor<21xf32>
    %m = dtc.sub %b0, %t : (tensor<21xf32>, tensor<21xf32>) -> tensor<21xf32>
    %one = dtc.constant dense<1.0> : tensor<f32>
    %c = dtc.add %l, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
    dtc.yield %n, %m, %c : tensor<4x11xf32>, tensor<21xf32>, tensor<f32>
  }
  return %y#0, %y#1, %y#2 : tensor<4x11xf32>, tensor<21xf32>, tensor<f32>
})mlir"},
    {"f64_erf_sin_cos", R"mlir(
func.func @f(%x: tensor<3x4x9xf64>, %v: tensor<9xf64>) -> tensor<3x4x9xf64> {
  %y = dtc.fusion loop(%x, %v) : (tensor<3x4x9xf64>, tensor<9xf64>) -> tensor<3x4x9xf64> {
  ^bb0(%a: tensor<3x4x9xf64>, %c: tensor<9xf64>):
    %s = dtc.sin %a : tensor<3x4x9xf64>
    %k = dtc.cos %c : tensor<9xf64>
    %e = dtc.erf %s : tensor<3x4x9xf64>
    %m = dtc.mul %e, %k : (tensor<3x4x9xf64>, tensor<9xf64>) -> tensor<3x4x9xf64>
    dtc.yield %m : tensor<3x4x9xf64>
  }
  return %y : tensor<3x4x9xf64>
})mlir"},
    {"dropout_in_a_group", R"mlir(
func.func @f(%x: tensor<4x8xf32>, %s: tensor<i64>, %o: tensor<2xi64>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %y:2 = dtc.fusion loop(%x, %s, %o) : (tensor<4x8xf32>, tensor<i64>, tensor<2xi64>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%a: tensor<4x8xf32>, %step: tensor<i64>, %off: tensor<2xi64>):
    %d = dtc.dropout %a, %step ratio = 0.3 seed = 7 stream = 2 : (tensor<4x8xf32>, tensor<i64>) -> tensor<4x8xf32>
    %n = dtc.neg %d : tensor<4x8xf32>
    %p = dtc.dropout %a, %step at %off in [8, 16] ratio = 0.5 seed = 1 stream = 0 : (tensor<4x8xf32>, tensor<i64>, tensor<2xi64>) -> tensor<4x8xf32>
    dtc.yield %n, %p : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %y#0, %y#1 : tensor<4x8xf32>, tensor<4x8xf32>
})mlir"},
    {"bf16_group", R"mlir(
func.func @f(%x: tensor<4x8xbf16>, %b: tensor<8xbf16>) -> tensor<4x8xbf16> {
  %y = dtc.fusion loop(%x, %b) : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16> {
  ^bb0(%a: tensor<4x8xbf16>, %c: tensor<8xbf16>):
    %s = dtc.add %a, %c : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
    %g = dtc.gelu %s approximate = none : tensor<4x8xbf16>
    %e = dtc.exp %g : tensor<4x8xbf16>
    dtc.yield %e : tensor<4x8xbf16>
  }
  return %y : tensor<4x8xbf16>
})mlir"},
    {"data_movement", R"mlir(
func.func @f(%x: tensor<4x6x5xf32>, %u: tensor<4x3xf32>, %w: tensor<4x8xf32>, %c: tensor<4x2x5xf32>) -> tensor<4x6x5xf32> {
  %t = dtc.transpose %x permutation = [2, 0, 1] : tensor<4x6x5xf32> -> tensor<5x4x6xf32>
  %s = dtc.slice %x starts = [1, 0, 2] sizes = [2, 3, 2] strides = [2, 2, 1] : tensor<4x6x5xf32> -> tensor<2x3x2xf32>
  %p:2 = dtc.split %x dim = 1 sizes = [2, 4] : tensor<4x6x5xf32> -> tensor<4x2x5xf32>, tensor<4x4x5xf32>
  %k = dtc.concat %c, %x, %c dim = 1 : (tensor<4x2x5xf32>, tensor<4x6x5xf32>, tensor<4x2x5xf32>) -> tensor<4x10x5xf32>
  %us = dtc.update_slice %u into %w starts = [0, 2] strides = [1, 2] : (tensor<4x3xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = dtc.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  return %x : tensor<4x6x5xf32>
})mlir"},
    // Transposes that move the innermost dimension, copied by tiles: a
    // weight's, one of four dimensions (tiles along dims 3 and 2), bf16.
    {"tiled_transposes", R"mlir(
func.func @f(%x: tensor<48x32xf32>, %y: tensor<2x16x3x32xf32>, %z: tensor<16x32xbf16>) -> (tensor<32x48xf32>, tensor<2x3x32x16xf32>, tensor<32x16xbf16>) {
  %a = dtc.transpose %x permutation = [1, 0] : tensor<48x32xf32> -> tensor<32x48xf32>
  %b = dtc.transpose %y permutation = [0, 2, 3, 1] : tensor<2x16x3x32xf32> -> tensor<2x3x32x16xf32>
  %c = dtc.transpose %z permutation = [1, 0] : tensor<16x32xbf16> -> tensor<32x16xbf16>
  return %a, %b, %c : tensor<32x48xf32>, tensor<2x3x32x16xf32>, tensor<32x16xbf16>
})mlir"},
    {"gathers_and_scatters", R"mlir(
func.func @f(%w: tensor<6x8xf32>, %ids: tensor<4x3xi64>, %upd: tensor<4x3x8xf32>, %x: tensor<4x8xf32>, %idx: tensor<4x2xi64>, %dy: tensor<4x2xf32>) -> tensor<6x8xf32> {
  %g = dtc.gather %w[%ids] dim = 0 : (tensor<6x8xf32>, tensor<4x3xi64>) -> tensor<4x3x8xf32>
  %sa = dtc.scatter_add %upd into %w[%ids] dim = 0 : (tensor<6x8xf32>, tensor<4x3xi64>, tensor<4x3x8xf32>) -> tensor<6x8xf32>
  %sm = dtc.scatter_reduce %upd into %w[%ids] dim = 0 kind = max : (tensor<6x8xf32>, tensor<4x3xi64>, tensor<4x3x8xf32>) -> tensor<6x8xf32>
  %sp = dtc.scatter_reduce %upd into %w[%ids] dim = 0 kind = mul : (tensor<6x8xf32>, tensor<4x3xi64>, tensor<4x3x8xf32>) -> tensor<6x8xf32>
  %ge = dtc.gather_elements %x[%idx] dim = 1 : (tensor<4x8xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
  %sea = dtc.scatter_elements_add %dy into %x[%idx] dim = 1 : (tensor<4x8xf32>, tensor<4x2xi64>, tensor<4x2xf32>) -> tensor<4x8xf32>
  return %sa : tensor<6x8xf32>
})mlir"},
    {"reductions", R"mlir(
func.func @f(%x: tensor<3x4x5xf32>, %i: tensor<3x4xi64>) -> tensor<4xf32> {
  %s = dtc.reduce_sum %x dims = [0, 2] : tensor<3x4x5xf32> -> tensor<4xf32>
  %m = dtc.reduce_mean %x dims = [1] keep_dims : tensor<3x4x5xf32> -> tensor<3x1x5xf32>
  %mx = dtc.reduce_max %x dims = [2] : tensor<3x4x5xf32> -> tensor<3x4xf32>
  %mn = dtc.reduce_min %x dims = [0] : tensor<3x4x5xf32> -> tensor<4x5xf32>
  %is = dtc.reduce_sum %i dims = [1] : tensor<3x4xi64> -> tensor<3xi64>
  %am = dtc.arg_max %x dim = 1 : tensor<3x4x5xf32> -> tensor<3x5xi64>
  %cs = dtc.cumsum %x dim = 1 : tensor<3x4x5xf32>
  %ce = dtc.cumsum %x dim = 2 exclusive reverse : tensor<3x4x5xf32>
  return %s : tensor<4xf32>
})mlir"},
    {"top_k", R"mlir(
func.func @f(%x: tensor<3x7x5xf32>, %i: tensor<4x6xi64>, %h: tensor<2x9xbf16>) -> tensor<3x3x5xf32> {
  %v, %p = dtc.top_k %x k = 3 dim = 1 : tensor<3x7x5xf32> -> (tensor<3x3x5xf32>, tensor<3x3x5xi64>)
  %sv, %sp = dtc.top_k %x k = 5 dim = 2 smallest : tensor<3x7x5xf32> -> (tensor<3x7x5xf32>, tensor<3x7x5xi64>)
  %iv, %ip = dtc.top_k %i k = 2 dim = 1 : tensor<4x6xi64> -> (tensor<4x2xi64>, tensor<4x2xi64>)
  %hv, %hp = dtc.top_k %h k = 1 dim = 1 : tensor<2x9xbf16> -> (tensor<2x1xbf16>, tensor<2x1xi64>)
  return %v : tensor<3x3x5xf32>
})mlir"},
    {"softmax_and_norms", R"mlir(
func.func @f(%x: tensor<3x4x6xf32>, %g: tensor<6xf32>, %b: tensor<6xf32>, %h: tensor<4x6xf32>) -> tensor<3x4x6xf32> {
  %s = dtc.softmax %x dim = 2 : tensor<3x4x6xf32>
  %t = dtc.softmax %x dim = 1 : tensor<3x4x6xf32>
  %l = dtc.log_softmax %x dim = 2 : tensor<3x4x6xf32>
  %y, %mu, %r = dtc.layer_norm %x, %g, %b dim = 2 epsilon = 1.0e-05 : (tensor<3x4x6xf32>, tensor<6xf32>, tensor<6xf32>) -> (tensor<3x4x6xf32>, tensor<3x4x1xf32>, tensor<3x4x1xf32>)
  %z, %mu2, %r2 = dtc.layer_norm %x, %h dim = 1 epsilon = 1.0e-05 : (tensor<3x4x6xf32>, tensor<4x6xf32>) -> (tensor<3x4x6xf32>, tensor<3x1x1xf32>, tensor<3x1x1xf32>)
  %n = dtc.rms_norm %x, %g dim = 2 epsilon = 1.0e-06 : (tensor<3x4x6xf32>, tensor<6xf32>) -> tensor<3x4x6xf32>
  return %s : tensor<3x4x6xf32>
})mlir"},
    {"bf16_reductions_and_norms", R"mlir(
func.func @f(%x: tensor<3x4x64xbf16>, %g: tensor<64xbf16>) -> tensor<3x4x64xbf16> {
  %s = dtc.softmax %x dim = 2 : tensor<3x4x64xbf16>
  %m = dtc.reduce_sum %x dims = [2] : tensor<3x4x64xbf16> -> tensor<3x4xbf16>
  %n = dtc.rms_norm %x, %g dim = 2 epsilon = 1.0e-06 : (tensor<3x4x64xbf16>, tensor<64xbf16>) -> tensor<3x4x64xbf16>
  return %s : tensor<3x4x64xbf16>
})mlir"},
    // Folds in 8 lanes with a tail (37 = 4 x 8 + 5; 19 keys, 21 features),
    // and one below the lanes' minimum of 16 (15).
    {"lane_folds", R"mlir(
func.func @f(%x: tensor<3x37xf32>, %g: tensor<37xf32>, %y: tensor<2x15xf32>, %q: tensor<1x2x3x21xf32>, %k: tensor<1x2x19x21xf32>) -> tensor<3xf32> {
  %s = dtc.reduce_sum %x dims = [1] : tensor<3x37xf32> -> tensor<3xf32>
  %m = dtc.reduce_max %x dims = [1] : tensor<3x37xf32> -> tensor<3xf32>
  %sm = dtc.softmax %x dim = 1 : tensor<3x37xf32>
  %n, %mu, %r = dtc.layer_norm %x, %g dim = 1 epsilon = 1.0e-05 : (tensor<3x37xf32>, tensor<37xf32>) -> (tensor<3x37xf32>, tensor<3x1xf32>, tensor<3x1xf32>)
  %t = dtc.reduce_mean %y dims = [1] : tensor<2x15xf32> -> tensor<2xf32>
  %a, %p = dtc.attention %q, %k, %k scale = 0.2 : (tensor<1x2x3x21xf32>, tensor<1x2x19x21xf32>, tensor<1x2x19x21xf32>) -> (tensor<1x2x3x21xf32>, tensor<1x2x3x19xf32>)
  %f:2 = dtc.fusion row_reduction(%x) : (tensor<3x37xf32>) -> (tensor<3x1xf32>, tensor<3x1xf32>) {
  ^bb0(%b: tensor<3x37xf32>):
    %mx = dtc.reduce_max %b dims = [1] keep_dims : tensor<3x37xf32> -> tensor<3x1xf32>
    %d = dtc.sub %b, %mx : (tensor<3x37xf32>, tensor<3x1xf32>) -> tensor<3x37xf32>
    %e = dtc.exp %d : tensor<3x37xf32>
    %se = dtc.reduce_sum %e dims = [1] keep_dims : tensor<3x37xf32> -> tensor<3x1xf32>
    dtc.yield %mx, %se : tensor<3x1xf32>, tensor<3x1xf32>
  }
  return %s : tensor<3xf32>
})mlir"},
    {"rotary", R"mlir(
func.func @f(%q: tensor<2x4x3x8xf32>, %c: tensor<2x1x3x3xf32>, %s: tensor<2x1x3x3xf32>) -> tensor<2x4x3x8xf32> {
  %r = dtc.rotary %q, %c, %s rotary_dim = 6 : (tensor<2x4x3x8xf32>, tensor<2x1x3x3xf32>, tensor<2x1x3x3xf32>) -> tensor<2x4x3x8xf32>
  %i = dtc.rotary %q, %c, %s rotary_dim = 6 interleaved : (tensor<2x4x3x8xf32>, tensor<2x1x3x3xf32>, tensor<2x1x3x3xf32>) -> tensor<2x4x3x8xf32>
  return %r : tensor<2x4x3x8xf32>
})mlir"},
    {"attention", R"mlir(
func.func @f(%q: tensor<2x4x5x8xf32>, %k: tensor<2x2x6x8xf32>, %v: tensor<2x2x6x8xf32>, %fm: tensor<2x4x5x6xf32>, %bm: tensor<1x1x5x6xi1>, %step: tensor<i64>, %off: tensor<4xi64>) -> tensor<2x4x5x8xf32> {
  %y, %p = dtc.attention %q, %k, %v mask %fm scale = 0.35 : (tensor<2x4x5x8xf32>, tensor<2x2x6x8xf32>, tensor<2x2x6x8xf32>, tensor<2x4x5x6xf32>) -> (tensor<2x4x5x8xf32>, tensor<2x4x5x6xf32>)
  %y2, %p2 = dtc.attention %q, %k, %v mask %bm scale = 0.35 {masked_value = -1.0e+04 : f64, softcap = 5.0 : f64} : (tensor<2x4x5x8xf32>, tensor<2x2x6x8xf32>, tensor<2x2x6x8xf32>, tensor<1x1x5x6xi1>) -> (tensor<2x4x5x8xf32>, tensor<2x4x5x6xf32>)
  %y3, %p3 = dtc.attention %q, %k, %v mask %bm dropout step %step scale = 0.35 {dropout_ratio = 0.2 : f64, seed = 3 : i64, stream = 5 : i64} : (tensor<2x4x5x8xf32>, tensor<2x2x6x8xf32>, tensor<2x2x6x8xf32>, tensor<1x1x5x6xi1>, tensor<i64>) -> (tensor<2x4x5x8xf32>, tensor<2x4x5x6xf32>)
  %y4, %p4 = dtc.attention %q, %k, %v dropout step %step at %off scale = 0.35 {dropout_ratio = 0.2 : f64, seed = 3 : i64, stream = 5 : i64, global_shape = array<i64: 4, 8, 5, 6>} : (tensor<2x4x5x8xf32>, tensor<2x2x6x8xf32>, tensor<2x2x6x8xf32>, tensor<i64>, tensor<4xi64>) -> (tensor<2x4x5x8xf32>, tensor<2x4x5x6xf32>)
  return %y : tensor<2x4x5x8xf32>
})mlir"},
    {"dropout", R"mlir(
func.func @f(%x: tensor<4x8xf32>, %s: tensor<i64>, %o: tensor<2xi64>) -> tensor<4x8xf32> {
  %d = dtc.dropout %x, %s ratio = 0.25 seed = 7 stream = 0 : (tensor<4x8xf32>, tensor<i64>) -> tensor<4x8xf32>
  %p = dtc.dropout %x, %s at %o in [8, 16] ratio = 0.5 seed = 1 stream = 3 : (tensor<4x8xf32>, tensor<i64>, tensor<2xi64>) -> tensor<4x8xf32>
  return %d : tensor<4x8xf32>
})mlir"},
    // Scalars computed once before the loops: AdamW's bias correction
    // from the step counter (f64), a constant exponent (x^3 as products);
    // a [1] value reshaped to a scalar stays in the loop.
    {"scalars_hoisted", R"mlir(
func.func @f(%x: tensor<4x3xf32>, %t: tensor<i64>, %one: tensor<1xf32>) -> tensor<4x3xf32> {
  %y = dtc.fusion loop(%x, %t, %one) : (tensor<4x3xf32>, tensor<i64>, tensor<1xf32>) -> tensor<4x3xf32> {
  ^bb0(%a: tensor<4x3xf32>, %s: tensor<i64>, %o: tensor<1xf32>):
    %tf = dtc.cast %s : tensor<i64> to tensor<f64>
    %beta = dtc.constant dense<0.9> : tensor<f64>
    %p = dtc.pow %beta, %tf : (tensor<f64>, tensor<f64>) -> tensor<f64>
    %c = dtc.cast %p : tensor<f64> to tensor<f32>
    %three = dtc.constant dense<3.0> : tensor<f32>
    %cube = dtc.pow %a, %three : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
    %m = dtc.mul %cube, %c : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
    %r = dtc.reshape %o : tensor<1xf32> to tensor<f32>
    %n = dtc.add %m, %r : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
    dtc.yield %n : tensor<4x3xf32>
  }
  return %y : tensor<4x3xf32>
})mlir"},
    // Row-reduction groups of a reduction fed by elementwise ops: the
    // cross-entropy's pick of the label's log-probability (a one-hot mask
    // from an index grid, never stored), a max of exponentials kept as
    // [rows, 1], a whole-tensor min, an f64 sum.
    {"reduction_of_a_prologue", R"mlir(
func.func @f(%x: tensor<2x3x8xf32>, %lse: tensor<2x3x1xf32>, %labels: tensor<2x3x1xi64>) -> tensor<2x3xf32> {
  %y = dtc.fusion row_reduction(%x, %lse, %labels) : (tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<2x3x1xi64>) -> tensor<2x3xf32> {
  ^bb0(%a: tensor<2x3x8xf32>, %l: tensor<2x3x1xf32>, %t: tensor<2x3x1xi64>):
    %i = dtc.iota dim = 2 : tensor<1x1x8xi64>
    %ib = dtc.broadcast %i : tensor<1x1x8xi64> to tensor<2x3x8xi64>
    %hot = dtc.compare eq, %ib, %t : (tensor<2x3x8xi64>, tensor<2x3x1xi64>) -> tensor<2x3x8xi1>
    %lp = dtc.sub %a, %l : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
    %zero = dtc.constant dense<0.0> : tensor<f32>
    %pick = dtc.select %hot, %lp, %zero : (tensor<2x3x8xi1>, tensor<2x3x8xf32>, tensor<f32>) -> tensor<2x3x8xf32>
    %s = dtc.reduce_sum %pick dims = [2] : tensor<2x3x8xf32> -> tensor<2x3xf32>
    dtc.yield %s : tensor<2x3xf32>
  }
  return %y : tensor<2x3xf32>
}
func.func @g(%x: tensor<4x6xf32>, %b: tensor<6xf32>) -> tensor<4x1xf32> {
  %y = dtc.fusion row_reduction(%x, %b) : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x1xf32> {
  ^bb0(%a: tensor<4x6xf32>, %c: tensor<6xf32>):
    %s = dtc.add %a, %c : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
    %e = dtc.exp %s : tensor<4x6xf32>
    %m = dtc.reduce_max %e dims = [1] keep_dims : tensor<4x6xf32> -> tensor<4x1xf32>
    dtc.yield %m : tensor<4x1xf32>
  }
  return %y : tensor<4x1xf32>
}
func.func @h(%x: tensor<3x5xf32>, %w: tensor<3x5xf64>) -> (tensor<f32>, tensor<3xf64>) {
  %y = dtc.fusion row_reduction(%x) : (tensor<3x5xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<3x5xf32>):
    %n = dtc.neg %a : tensor<3x5xf32>
    %m = dtc.reduce_min %n dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
    dtc.yield %m : tensor<f32>
  }
  %z = dtc.fusion row_reduction(%w) : (tensor<3x5xf64>) -> tensor<3xf64> {
  ^bb0(%a: tensor<3x5xf64>):
    %q = dtc.mul %a, %a : (tensor<3x5xf64>, tensor<3x5xf64>) -> tensor<3x5xf64>
    %s = dtc.reduce_sum %q dims = [1] : tensor<3x5xf64> -> tensor<3xf64>
    dtc.yield %s : tensor<3xf64>
  }
  return %y, %z : tensor<f32>, tensor<3xf64>
})mlir"},
    // Row kernels with several reductions and the ops reading their
    // results: a softmax (max, sum of exponentials, division), a layer
    // norm's backward (two means over 3-D rows, read back as [rows, 1] and
    // through a reshape of a dropped dimension), and a whole-tensor sum
    // scaled after it (one row).
    {"rows_with_epilogues", R"mlir(
func.func @softmax(%x: tensor<6x10xf32>) -> (tensor<6x1xf32>, tensor<6x1xf32>, tensor<6x10xf32>) {
  %y:3 = dtc.fusion row_reduction(%x) : (tensor<6x10xf32>) -> (tensor<6x1xf32>, tensor<6x1xf32>, tensor<6x10xf32>) {
  ^bb0(%a: tensor<6x10xf32>):
    %m = dtc.reduce_max %a dims = [1] keep_dims : tensor<6x10xf32> -> tensor<6x1xf32>
    %d = dtc.sub %a, %m : (tensor<6x10xf32>, tensor<6x1xf32>) -> tensor<6x10xf32>
    %e = dtc.exp %d : tensor<6x10xf32>
    %s = dtc.reduce_sum %e dims = [1] keep_dims : tensor<6x10xf32> -> tensor<6x1xf32>
    %p = dtc.div %e, %s : (tensor<6x10xf32>, tensor<6x1xf32>) -> tensor<6x10xf32>
    dtc.yield %m, %s, %p : tensor<6x1xf32>, tensor<6x1xf32>, tensor<6x10xf32>
  }
  return %y#0, %y#1, %y#2 : tensor<6x1xf32>, tensor<6x1xf32>, tensor<6x10xf32>
}
func.func @norm_backward(%g: tensor<2x3x8xf32>, %xhat: tensor<2x3x8xf32>, %rstd: tensor<2x3x1xf32>, %w: tensor<8xf32>) -> (tensor<2x3x1xf32>, tensor<2x3xf32>, tensor<2x3x8xf32>) {
  %y:3 = dtc.fusion row_reduction(%g, %xhat, %rstd, %w) : (tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<8xf32>) -> (tensor<2x3x1xf32>, tensor<2x3xf32>, tensor<2x3x8xf32>) {
  ^bb0(%a: tensor<2x3x8xf32>, %h: tensor<2x3x8xf32>, %r: tensor<2x3x1xf32>, %c: tensor<8xf32>):
    %gh = dtc.mul %a, %c : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
    %m1 = dtc.reduce_mean %gh dims = [2] keep_dims : tensor<2x3x8xf32> -> tensor<2x3x1xf32>
    %q = dtc.mul %gh, %h : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
    %m2 = dtc.reduce_mean %q dims = [2] : tensor<2x3x8xf32> -> tensor<2x3xf32>
    %m2k = dtc.reshape %m2 : tensor<2x3xf32> to tensor<2x3x1xf32>
    %t1 = dtc.sub %gh, %m1 : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
    %t2 = dtc.mul %h, %m2k : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
    %t3 = dtc.sub %t1, %t2 : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
    %dx = dtc.mul %r, %t3 : (tensor<2x3x1xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
    dtc.yield %m1, %m2, %dx : tensor<2x3x1xf32>, tensor<2x3xf32>, tensor<2x3x8xf32>
  }
  return %y#0, %y#1, %y#2 : tensor<2x3x1xf32>, tensor<2x3xf32>, tensor<2x3x8xf32>
}
func.func @scaled_total(%x: tensor<4x5xf32>) -> (tensor<f32>, tensor<f32>) {
  %y:2 = dtc.fusion row_reduction(%x) : (tensor<4x5xf32>) -> (tensor<f32>, tensor<f32>) {
  ^bb0(%a: tensor<4x5xf32>):
    %s = dtc.reduce_sum %a dims = [0, 1] : tensor<4x5xf32> -> tensor<f32>
    %k = dtc.constant dense<-0.05> : tensor<f32>
    %l = dtc.mul %s, %k : (tensor<f32>, tensor<f32>) -> tensor<f32>
    dtc.yield %s, %l : tensor<f32>, tensor<f32>
  }
  return %y#0, %y#1 : tensor<f32>, tensor<f32>
})mlir"},
    // Reductions over leading dimensions (a bias gradient's sum over the
    // tokens): their kept columns are the rows threads share.
    {"leading_reductions", R"mlir(
func.func @f(%x: tensor<6x10xf32>, %y: tensor<3x4x5xf32>) -> (tensor<10xf32>, tensor<1x1x5xf32>, tensor<4xf32>) {
  %a = dtc.reduce_sum %x dims = [0] : tensor<6x10xf32> -> tensor<10xf32>
  %b = dtc.reduce_max %y dims = [0, 1] keep_dims : tensor<3x4x5xf32> -> tensor<1x1x5xf32>
  %c = dtc.reduce_mean %y dims = [0, 2] : tensor<3x4x5xf32> -> tensor<4xf32>
  return %a, %b, %c : tensor<10xf32>, tensor<1x1x5xf32>, tensor<4xf32>
})mlir"},
    // ... folded in blocks of columns: 3 of 32, 5 of 16 (in f32 for bf16),
    // and 300 columns (no block width divides them) one at a time.
    {"column_blocks", R"mlir(
func.func @f(%x: tensor<7x96xf32>, %y: tensor<3x2x80xbf16>, %z: tensor<4x300xf32>) -> (tensor<96xf32>, tensor<1x1x80xbf16>, tensor<300xf32>) {
  %a = dtc.reduce_sum %x dims = [0] : tensor<7x96xf32> -> tensor<96xf32>
  %b = dtc.reduce_mean %y dims = [0, 1] keep_dims : tensor<3x2x80xbf16> -> tensor<1x1x80xbf16>
  %c = dtc.reduce_max %z dims = [0] : tensor<4x300xf32> -> tensor<300xf32>
  return %a, %b, %c : tensor<96xf32>, tensor<1x1x80xbf16>, tensor<300xf32>
})mlir"},
    // Row kernels on vectors of columns (rows of 20 and 37: whole lanes and
    // a rest): a causal softmax, whose mask comes from index grids and
    // whose sum's exponentials are kept in the result and divided there;
    // one-hot picks (a label's log-probability, a gradient's one-hot, the
    // index grid on either side, labels beyond the row and below it), one
    // of them also read by a result.
    {"row_lanes", R"mlir(
func.func @causal_softmax(%x: tensor<2x20x20xf32>) -> (tensor<2x20x1xf32>, tensor<2x20x1xf32>, tensor<2x20x20xf32>) {
  %y:3 = dtc.fusion row_reduction(%x) : (tensor<2x20x20xf32>) -> (tensor<2x20x1xf32>, tensor<2x20x1xf32>, tensor<2x20x20xf32>) {
  ^bb0(%a: tensor<2x20x20xf32>):
    %k = dtc.constant dense<8.0> : tensor<f32>
    %s = dtc.div %a, %k : (tensor<2x20x20xf32>, tensor<f32>) -> tensor<2x20x20xf32>
    %c = dtc.iota dim = 1 : tensor<1x20xi64>
    %r = dtc.iota dim = 0 : tensor<20x1xi64>
    %d = dtc.sub %c, %r : (tensor<1x20xi64>, tensor<20x1xi64>) -> tensor<20x20xi64>
    %zero = dtc.constant dense<0> : tensor<i64>
    %keep = dtc.compare le, %d, %zero : (tensor<20x20xi64>, tensor<i64>) -> tensor<20x20xi1>
    %ninf = dtc.constant dense<0xFF800000> : tensor<f32>
    %m = dtc.select %keep, %s, %ninf : (tensor<20x20xi1>, tensor<2x20x20xf32>, tensor<f32>) -> tensor<2x20x20xf32>
    %mx = dtc.reduce_max %m dims = [2] keep_dims : tensor<2x20x20xf32> -> tensor<2x20x1xf32>
    %sh = dtc.sub %m, %mx : (tensor<2x20x20xf32>, tensor<2x20x1xf32>) -> tensor<2x20x20xf32>
    %e = dtc.exp %sh : tensor<2x20x20xf32>
    %sum = dtc.reduce_sum %e dims = [2] keep_dims : tensor<2x20x20xf32> -> tensor<2x20x1xf32>
    %p = dtc.div %e, %sum : (tensor<2x20x20xf32>, tensor<2x20x1xf32>) -> tensor<2x20x20xf32>
    dtc.yield %mx, %sum, %p : tensor<2x20x1xf32>, tensor<2x20x1xf32>, tensor<2x20x20xf32>
  }
  return %y#0, %y#1, %y#2 : tensor<2x20x1xf32>, tensor<2x20x1xf32>, tensor<2x20x20xf32>
}
func.func @picks(%x: tensor<3x4x37xf32>, %lse: tensor<3x4x1xf32>, %labels: tensor<3x4x1xi64>) -> (tensor<3x4xf32>, tensor<3x4x1xf32>, tensor<3x4x37xf32>) {
  %y:3 = dtc.fusion row_reduction(%x, %lse, %labels) : (tensor<3x4x37xf32>, tensor<3x4x1xf32>, tensor<3x4x1xi64>) -> (tensor<3x4xf32>, tensor<3x4x1xf32>, tensor<3x4x37xf32>) {
  ^bb0(%a: tensor<3x4x37xf32>, %l: tensor<3x4x1xf32>, %t: tensor<3x4x1xi64>):
    %i = dtc.iota dim = 2 : tensor<1x1x37xi64>
    %hi = dtc.constant dense<33> : tensor<i64>
    %t1 = dtc.add %t, %hi : (tensor<3x4x1xi64>, tensor<i64>) -> tensor<3x4x1xi64>
    %hot1 = dtc.compare eq, %i, %t1 : (tensor<1x1x37xi64>, tensor<3x4x1xi64>) -> tensor<3x4x37xi1>
    %lp = dtc.sub %a, %l : (tensor<3x4x37xf32>, tensor<3x4x1xf32>) -> tensor<3x4x37xf32>
    %zero = dtc.constant dense<0.0> : tensor<f32>
    %pick1 = dtc.select %hot1, %lp, %zero : (tensor<3x4x37xi1>, tensor<3x4x37xf32>, tensor<f32>) -> tensor<3x4x37xf32>
    %s1 = dtc.reduce_sum %pick1 dims = [2] : tensor<3x4x37xf32> -> tensor<3x4xf32>
    %lo = dtc.constant dense<4> : tensor<i64>
    %t2 = dtc.sub %t, %lo : (tensor<3x4x1xi64>, tensor<i64>) -> tensor<3x4x1xi64>
    %hot2 = dtc.compare eq, %t2, %i : (tensor<3x4x1xi64>, tensor<1x1x37xi64>) -> tensor<3x4x37xi1>
    %pick2 = dtc.select %hot2, %l, %zero : (tensor<3x4x37xi1>, tensor<3x4x1xf32>, tensor<f32>) -> tensor<3x4x37xf32>
    %s2 = dtc.reduce_mean %pick2 dims = [2] keep_dims : tensor<3x4x37xf32> -> tensor<3x4x1xf32>
    %ex = dtc.exp %lp : tensor<3x4x37xf32>
    %sc = dtc.mul %ex, %s2 : (tensor<3x4x37xf32>, tensor<3x4x1xf32>) -> tensor<3x4x37xf32>
    %g = dtc.sub %sc, %pick2 : (tensor<3x4x37xf32>, tensor<3x4x37xf32>) -> tensor<3x4x37xf32>
    dtc.yield %s1, %s2, %g : tensor<3x4xf32>, tensor<3x4x1xf32>, tensor<3x4x37xf32>
  }
  return %y#0, %y#1, %y#2 : tensor<3x4xf32>, tensor<3x4x1xf32>, tensor<3x4x37xf32>
})mlir"},
};

class KernelTest : public testing::TestWithParam<KernelCase> {};

TEST_P(KernelTest, MatchesReferenceExecutor) {
  DialectRegistry registry;
  registerKernelDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  const KernelCase &c = GetParam();
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(c.function, ParserConfig(&context));
  ASSERT_TRUE(module);
  int checked = 0;
  for (auto func : module->getOps<func::FuncOp>())
    for (Operation &op : func.getBody().getOps()) {
      if (isa<func::ReturnOp>(op))
        continue;
      ASSERT_TRUE(test::hasCheckableKernel(&op)) << c.name;
      ++checked;
      for (unsigned seed : {1u, 2u, 3u})
        EXPECT_EQ(test::checkKernel(&op, seed), "")
            << c.name << ": " << op.getName().getStringRef().str();
    }
  EXPECT_GT(checked, 0) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Kernels, KernelTest, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<KernelCase> &info) {
                           return std::string(info.param.name);
                         });

TEST(OpKernel, RefusesWhatItDoesNotComputeByName) {
  DialectRegistry registry;
  registerKernelDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  const char *text = R"mlir(
func.func @f(%x: tensor<4x8xi32>, %y: tensor<8x2xi32>) -> tensor<4x2xi32> {
  %z = dtc.matmul %x, %y : (tensor<4x8xi32>, tensor<8x2xi32>) -> tensor<4x2xi32>
  return %z : tensor<4x2xi32>
})mlir";
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, ParserConfig(&context));
  ASSERT_TRUE(module);
  // (Float matmuls are OpenBLAS calls, never kernels.)
  Operation *matmul = nullptr;
  module->walk([&](MatmulOp op) { matmul = op; });
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  OwningOpRef<ModuleOp> kernels = ModuleOp::create(UnknownLoc::get(&context));
  EXPECT_FALSE(hasOpKernel(matmul));
  EXPECT_TRUE(failed(buildOpKernel(matmul, *kernels, "kernel")));
  EXPECT_EQ(message, "the CPU backend has no kernel for 'dtc.matmul' yet; "
                     "compile with --target reference");
}

} // namespace
