//===- LoopKernelTest.cpp - compiled loop kernels against the reference ---===//
//
// The differential harness of the CPU route: each loop fusion group below is
// lowered to one linalg kernel and to LLVM, compiled in process (MLIR's
// ExecutionEngine, here only; the runtime will not link LLVM), and run on
// random inputs with infinities and NaNs mixed in; its results must equal
// the reference executor's for the same group (fp32: within 1e-5
// relative, NaN where it gives NaN). An op it does not compute yet is
// refused by name.
//
//===----------------------------------------------------------------------===//

#include "dtc/Conversion/FusionToLinalg.h"
#include "dtc/Interpreter/Interpreter.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/TargetSelect.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>

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

/// A memref descriptor of rank `rank` over `data` (row-major).
std::vector<int64_t> descriptor(void *data, ArrayRef<int64_t> shape) {
  std::vector<int64_t> d{reinterpret_cast<int64_t>(data),
                         reinterpret_cast<int64_t>(data), 0};
  d.insert(d.end(), shape.begin(), shape.end());
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  d.insert(d.end(), strides.begin(), strides.end());
  return d;
}

class LoopKernelTest : public testing::TestWithParam<KernelCase> {};

TEST_P(LoopKernelTest, MatchesReferenceExecutor) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
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

  OwningOpRef<ModuleOp> kernels = ModuleOp::create(UnknownLoc::get(&context));
  ASSERT_TRUE(succeeded(buildLoopKernel(fusion, *kernels, "kernel")));
  ASSERT_TRUE(succeeded(lowerKernelsToLLVM(*kernels)));
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = makeOptimizingTransformer(2, 0, nullptr);
  auto engine = ExecutionEngine::create(*kernels, engineOptions);
  ASSERT_TRUE(static_cast<bool>(engine)) << llvm::toString(engine.takeError());

  // Random inputs with infinities and NaNs mixed in.
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> value(-3, 3);
  std::vector<Tensor> inputs;
  for (Type type : fusion.getInputs().getTypes()) {
    auto tensorType = cast<RankedTensorType>(type);
    Tensor t(tensorType.getElementType().isF64() ? DType::F64 : DType::F32,
             Shape(tensorType.getShape()));
    for (double &x : t.floats()) {
      x = value(rng);
      if (rng() % 17 == 0)
        x = (rng() % 3 == 0) ? NAN : (rng() % 2 ? INFINITY : -INFINITY);
    }
    t.roundToElementType();
    inputs.push_back(std::move(t));
  }
  SmallVector<const Tensor *> operands;
  for (const Tensor &t : inputs)
    operands.push_back(&t);
  SmallVector<Tensor> expected;
  ASSERT_TRUE(succeeded(evaluateOp(fusion, operands, expected)));

  // The kernel on buffers of the element type.
  bool f64 = inputs.front().dtype() == DType::F64;
  std::vector<std::vector<double>> doubles;
  std::vector<std::vector<float>> floats;
  std::vector<std::vector<int64_t>> descriptors;
  auto addBuffer = [&](const Tensor *t, ArrayRef<int64_t> shape) {
    void *data;
    if (f64) {
      doubles.push_back(t ? t->floats()
                          : std::vector<double>(numElementsOf(Shape(shape))));
      data = doubles.back().data();
    } else {
      floats.emplace_back(numElementsOf(Shape(shape)));
      if (t)
        for (size_t i = 0; i < floats.back().size(); ++i)
          floats.back()[i] = static_cast<float>(t->floats()[i]);
      data = floats.back().data();
    }
    descriptors.push_back(descriptor(data, shape));
  };
  doubles.reserve(inputs.size() + 1);
  floats.reserve(inputs.size() + 1);
  for (const Tensor &t : inputs)
    addBuffer(&t, t.shape());
  auto resultShape =
      cast<RankedTensorType>(fusion.getResult(0).getType()).getShape();
  addBuffer(nullptr, resultShape);
  std::vector<void *> pointers, args;
  for (std::vector<int64_t> &d : descriptors)
    pointers.push_back(d.data());
  for (void *&p : pointers)
    args.push_back(&p);
  llvm::Error error = (*engine)->invokePacked("_mlir_ciface_kernel", args);
  ASSERT_FALSE(static_cast<bool>(error)) << llvm::toString(std::move(error));

  const std::vector<double> &want = expected.front().floats();
  for (size_t i = 0; i < want.size(); ++i) {
    double got = f64 ? doubles.back()[i] : floats.back()[i];
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got)) << c.name << " element " << i;
      continue;
    }
    if (want[i] == got)
      continue;
    double tolerance = f64 ? 1e-12 : 1e-5;
    EXPECT_NEAR(got, want[i], tolerance * std::fabs(want[i]) + tolerance)
        << c.name << " element " << i;
  }
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
func.func @f(%x: tensor<4x2xf32>) -> tensor<8xf32> {
  %y = dtc.fusion loop(%x) : (tensor<4x2xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<4x2xf32>):
    %r = dtc.reshape %a : tensor<4x2xf32> to tensor<8xf32>
    %n = dtc.neg %r : tensor<8xf32>
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
  EXPECT_EQ(message, "a loop kernel does not compute 'dtc.reshape' yet");
}

} // namespace
