//===- MathApproximationTest.cpp - the kernels' exp, tanh and erf ---------===//
//
// The compiled kernels compute f32 exp, tanh and erf as polynomials
// (LowerToLLVM.cpp). Their error is measured here against the f64 libm
// functions over a dense sweep of each function's interesting range, in
// units in the last place of the correctly rounded f32 result, and the
// special values (infinities, NaN, overflow and underflow) are checked
// exactly: fp16 loss scaling's overflow checks rely on them.
//
//===----------------------------------------------------------------------===//

#include "../../test/lib/Transforms/KernelCheck.h"
#include "dtc/Conversion/FusionToLinalg.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace mlir::dtc;

namespace {

constexpr int64_t kSweep = 1 << 16;

/// Runs a loop group applying `op` (a dtc unary op's name) to `inputs`.
std::vector<double> compiled(const std::string &op,
                             const std::vector<double> &inputs) {
  DialectRegistry registry;
  registerKernelDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  std::string n = std::to_string(inputs.size());
  std::string type = "tensor<" + n + "xf32>";
  std::string text = "func.func @f(%x: " + type + ") -> " + type +
                     " {\n  %y = dtc.fusion loop(%x) : (" + type + ") -> " +
                     type + " {\n  ^bb0(%a: " + type + "):\n    %r = dtc." +
                     op + " %a : " + type + "\n    dtc.yield %r : " + type +
                     "\n  }\n  return %y : " + type + "\n}";
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, ParserConfig(&context));
  if (!module)
    return {};
  Operation *group = nullptr;
  module->walk([&](FusionOp op) { group = op; });
  Tensor in(DType::F32, {static_cast<int64_t>(inputs.size())});
  in.floats() = inputs;
  in.roundToElementType();
  std::vector<Tensor> out;
  if (!test::runKernel(group, {in}, out).empty())
    return {};
  return out[0].floats();
}

/// Units in the last place of `exact` rounded to f32 that `got` is off by.
double ulps(double got, double exact) {
  float rounded = static_cast<float>(exact);
  float spacing =
      std::nextafter(std::fabs(rounded), INFINITY) - std::fabs(rounded);
  if (spacing == 0 || std::isinf(spacing))
    return got == exact ? 0 : INFINITY;
  return std::fabs(got - exact) / spacing;
}

struct Measured {
  double maxUlps = 0, maxAbs = 0;
};

/// The kernel against `exact` on kSweep inputs evenly spread over
/// [lo, hi].
Measured sweep(const std::string &op, double lo, double hi,
               const std::function<double(double)> &exact) {
  std::vector<double> xs;
  for (int64_t i = 0; i < kSweep; ++i)
    xs.push_back(static_cast<float>(lo + (hi - lo) * i / (kSweep - 1)));
  std::vector<double> ys = compiled(op, xs);
  Measured m;
  EXPECT_EQ(ys.size(), xs.size()) << op << ": the kernel did not run";
  for (size_t i = 0; i < ys.size(); ++i) {
    double want = exact(xs[i]);
    m.maxUlps = std::max(m.maxUlps, ulps(ys[i], want));
    m.maxAbs = std::max(m.maxAbs, std::fabs(ys[i] - want));
  }
  std::printf("%s over [%g, %g]: max error %.2f ulp, %.3g absolute\n",
              op.c_str(), lo, hi, m.maxUlps, m.maxAbs);
  return m;
}

// The bounds docs/Codegen.md states (measured here on x86-64 with FMA:
// exp 3.8 ulp, tanh 4.4 ulp (2.6e-7), erf 4.0 ulp (2.4e-7)), with room for
// another host's instruction selection.
TEST(MathApproximation, ErrorsWithinTheStatedBounds) {
  auto exp = [](double x) { return std::exp(x); };
  EXPECT_LE(sweep("exp", -87, 88.7, exp).maxUlps, 6);
  // Below -87.3 the result would be subnormal: it flushes to zero.
  EXPECT_LE(sweep("exp", -104, -87, exp).maxAbs, 1.2e-38);
  Measured tanh = sweep("tanh", -10, 10, [](double x) { return std::tanh(x); });
  EXPECT_LE(tanh.maxUlps, 6);
  EXPECT_LE(tanh.maxAbs, 5e-7);
  Measured erf = sweep("erf", -5, 5, [](double x) { return std::erf(x); });
  EXPECT_LE(erf.maxUlps, 6);
  EXPECT_LE(erf.maxAbs, 5e-7);
}

TEST(MathApproximation, SpecialValuesAsIEEESays) {
  double inf = INFINITY, nan = NAN;
  std::vector<double> xs = {inf, -inf, nan, 88.8, 100, -110, 0, -0.0};
  std::vector<double> e = compiled("exp", xs);
  ASSERT_EQ(e.size(), xs.size());
  EXPECT_EQ(e[0], inf);
  EXPECT_EQ(e[1], 0);
  EXPECT_TRUE(std::isnan(e[2]));
  EXPECT_EQ(e[3], inf); // overflows, as expf(88.8)
  EXPECT_EQ(e[4], inf);
  EXPECT_EQ(e[5], 0);
  EXPECT_EQ(e[6], 1);
  EXPECT_EQ(e[7], 1);
  for (const char *op : {"tanh", "erf"}) {
    std::vector<double> y = compiled(op, xs);
    ASSERT_EQ(y.size(), xs.size()) << op;
    EXPECT_EQ(y[0], 1) << op;
    EXPECT_EQ(y[1], -1) << op;
    EXPECT_TRUE(std::isnan(y[2])) << op;
    EXPECT_EQ(y[3], 1) << op;
    EXPECT_EQ(y[5], -1) << op;
    EXPECT_EQ(y[6], 0) << op;
  }
}

} // namespace
