//===- LoopKernelTest.cpp - compiled loop kernels against the reference ---===//
//
// The differential harness of the CPU route: each loop fusion group below is
// lowered to one linalg kernel and to LLVM, compiled in process (MLIR's
// ExecutionEngine, in tests only; the runtime will not link LLVM), and run
// on random inputs with infinities and NaNs mixed in, three draws each; its
// results must equal the reference executor's for the same group
// (test/lib/Transforms/LoopKernelCheck.h). An op it does not compute yet
// (dropout) is refused by name. test/Conversion/loop-kernels-of-steps.mlir
// checks every loop group of whole fused steps the same way.
//
//===----------------------------------------------------------------------===//

#include "../../test/lib/Transforms/LoopKernelCheck.h"
#include "dtc/Conversion/FusionToLinalg.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::dtc;

namespace {

struct KernelCase {
  const char *name;
  /// A function whose body is one dtc.fusion and its return.
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
func.func @f(%x: tensor<4x1xf32>, %z: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %y = dtc.fusion loop(%x, %z) : (tensor<4x1xf32>, tensor<4x6xf32>) -> tensor<4x6xf32> {
  ^bb0(%a: tensor<4x1xf32>, %c: tensor<4x6xf32>):
    %t = dtc.gelu %c approximate = tanh : tensor<4x6xf32>
    %s = dtc.sigmoid %a : tensor<4x1xf32>
    %u = dtc.silu %t : tensor<4x6xf32>
    %p = dtc.softplus %u : tensor<4x6xf32>
    %b = dtc.broadcast %s : tensor<4x1xf32> to tensor<4x6xf32>
    %m = dtc.mul %p, %b : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    %r = dtc.tanh %m : tensor<4x6xf32>
    dtc.yield %r : tensor<4x6xf32>
  }
  return %y : tensor<4x6xf32>
})mlir"},
    {"arithmetic_and_masks", R"mlir(
func.func @f(%x: tensor<5x7xf32>, %w: tensor<5x7xf32>) -> tensor<5x7xf32> {
  %y = dtc.fusion loop(%x, %w) : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32> {
  ^bb0(%a: tensor<5x7xf32>, %c: tensor<5x7xf32>):
    %d = dtc.div %a, %c : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
    %e = dtc.sub %d, %a : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
    %mx = dtc.max %e, %c : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
    %mn = dtc.min %mx, %a : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
    %r = dtc.relu %mn : tensor<5x7xf32>
    %ab = dtc.abs %c : tensor<5x7xf32>
    %sq = dtc.sqrt %ab : tensor<5x7xf32>
    %rs = dtc.rsqrt %ab : tensor<5x7xf32>
    %lg = dtc.log %ab : tensor<5x7xf32>
    %ex = dtc.exp %a : tensor<5x7xf32>
    %rc = dtc.reciprocal %ex : tensor<5x7xf32>
    %md = dtc.mod %a, %c : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
    %mt = dtc.mod %a, %c {truncated} : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
    %two = dtc.constant dense<2.0> : tensor<f32>
    %pw = dtc.pow %ab, %two : (tensor<5x7xf32>, tensor<f32>) -> tensor<5x7xf32>
    %k = dtc.compare gt, %a, %c : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xi1>
    %nk = dtc.not %k : tensor<5x7xi1>
    %s1 = dtc.select %nk, %sq, %rs : (tensor<5x7xi1>, tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
    %t1 = dtc.add %s1, %lg : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
    %t2 = dtc.add %t1, %rc : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
    %t3 = dtc.add %t2, %md : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
    %t4 = dtc.add %t3, %mt : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
    %t5 = dtc.add %t4, %pw : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
    %t6 = dtc.add %t5, %r : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
    %n = dtc.neg %t6 : tensor<5x7xf32>
    dtc.yield %n : tensor<5x7xf32>
  }
  return %y : tensor<5x7xf32>
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
func.func @f(%w: tensor<4x3xf32>, %g: tensor<4x3xf32>, %b: tensor<5xf32>, %h: tensor<5xf32>, %lr: tensor<f32>) -> (tensor<4x3xf32>, tensor<5xf32>) {
  %y:2 = dtc.fusion multi_tensor(%w, %g, %b, %h, %lr) : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<5xf32>, tensor<5xf32>, tensor<f32>) -> (tensor<4x3xf32>, tensor<5xf32>) {
  ^bb0(%w0: tensor<4x3xf32>, %g0: tensor<4x3xf32>, %b0: tensor<5xf32>, %h0: tensor<5xf32>, %l: tensor<f32>):
    %s = dtc.mul %g0, %l : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
    %n = dtc.sub %w0, %s : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
    %t = dtc.mul %h0, %l : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
    %m = dtc.sub %b0, %t : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
    dtc.yield %n, %m : tensor<4x3xf32>, tensor<5xf32>
  }
  return %y#0, %y#1 : tensor<4x3xf32>, tensor<5xf32>
})mlir"},
    {"f64_erf_sin_cos", R"mlir(
func.func @f(%x: tensor<3x4x5xf64>, %v: tensor<5xf64>) -> tensor<3x4x5xf64> {
  %y = dtc.fusion loop(%x, %v) : (tensor<3x4x5xf64>, tensor<5xf64>) -> tensor<3x4x5xf64> {
  ^bb0(%a: tensor<3x4x5xf64>, %c: tensor<5xf64>):
    %s = dtc.sin %a : tensor<3x4x5xf64>
    %k = dtc.cos %c : tensor<5xf64>
    %e = dtc.erf %s : tensor<3x4x5xf64>
    %m = dtc.mul %e, %k : (tensor<3x4x5xf64>, tensor<5xf64>) -> tensor<3x4x5xf64>
    dtc.yield %m : tensor<3x4x5xf64>
  }
  return %y : tensor<3x4x5xf64>
})mlir"},
};

class LoopKernelTest : public testing::TestWithParam<KernelCase> {};

TEST_P(LoopKernelTest, MatchesReferenceExecutor) {
  DialectRegistry registry;
  registerKernelDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  const KernelCase &c = GetParam();
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(c.function, ParserConfig(&context));
  ASSERT_TRUE(module);
  FusionOp fusion;
  module->walk([&](FusionOp op) { fusion = op; });
  ASSERT_TRUE(fusion);
  for (unsigned seed : {1u, 2u, 3u})
    EXPECT_EQ(test::checkLoopKernel(fusion, seed), "") << c.name;
}

INSTANTIATE_TEST_SUITE_P(Groups, LoopKernelTest, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<KernelCase> &info) {
                           return std::string(info.param.name);
                         });

TEST(LoopKernel, RefusesWhatItDoesNotComputeByName) {
  DialectRegistry registry;
  registerKernelDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  const char *text = R"mlir(
func.func @f(%x: tensor<8xf32>, %s: tensor<i64>) -> tensor<8xf32> {
  %y = dtc.fusion loop(%x, %s) : (tensor<8xf32>, tensor<i64>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8xf32>, %step: tensor<i64>):
    %d = dtc.dropout %a, %step ratio = 0.1 seed = 7 stream = 2 : (tensor<8xf32>, tensor<i64>) -> tensor<8xf32>
    %n = dtc.neg %d : tensor<8xf32>
    dtc.yield %n : tensor<8xf32>
  }
  return %y : tensor<8xf32>
})mlir";
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, ParserConfig(&context));
  ASSERT_TRUE(module);
  FusionOp fusion;
  module->walk([&](FusionOp op) { fusion = op; });
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  OwningOpRef<ModuleOp> kernels = ModuleOp::create(UnknownLoc::get(&context));
  EXPECT_TRUE(failed(buildLoopKernel(fusion, *kernels, "kernel")));
  EXPECT_EQ(message, "a loop kernel does not compute 'dtc.dropout' yet");
}

} // namespace
