//===- VJPTest.cpp - every op's VJP against finite differences ------------===//
//
// For each differentiable op: a function of f64 parameters computing
// loss = sum(op(params...) * c) for a fixed random c is differentiated by
// dtc-autodiff and run on the reference executor; the gradient must match
// central finite differences of the loss (also run on the executor) at a
// random point.
//
//===----------------------------------------------------------------------===//

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Interpreter/Interpreter.h"
#include "dtc/Transforms/Training/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <random>

using namespace mlir;
using namespace mlir::dtc;

namespace {

struct VJPCase {
  const char *name;
  /// Parameter types; the parameters are %p0, %p1, ...
  std::vector<std::string> params;
  /// Ops computing %y from the parameters (may define constants).
  const char *body;
  /// Shape of %y, e.g. "2x3" ("" for a scalar).
  const char *resultShape;
  /// Parameter values are drawn from [low, high].
  double low = -1.5, high = 1.5;
  /// (parameter, element) pairs set to exactly zero after drawing.
  std::vector<std::pair<size_t, int64_t>> zeros = {};
};

// gtest prints a failing case by name rather than as bytes.
void PrintTo(const VJPCase &c, std::ostream *os) { *os << c.name; }

std::string tensorType(const std::string &shape) {
  return "tensor<" + (shape.empty() ? "" : shape + "x") + "f64>";
}

std::vector<int64_t> parseShape(const std::string &shape) {
  std::vector<int64_t> dims;
  size_t start = 0;
  while (start < shape.size()) {
    size_t end = shape.find('x', start);
    dims.push_back(std::stoll(shape.substr(start, end - start)));
    start = end == std::string::npos ? shape.size() : end + 1;
  }
  return dims;
}

/// The module: @f(params) -> sum(y * c).
std::string buildModule(const VJPCase &c, std::mt19937 &rng) {
  std::string out = "func.func @f(";
  for (size_t i = 0; i < c.params.size(); ++i)
    out += (i ? ", %p" : "%p") + std::to_string(i) + ": " +
           tensorType(c.params[i]) + " {dtc.param = \"p" + std::to_string(i) +
           "\"}";
  std::vector<int64_t> shape = parseShape(c.resultShape);
  std::string type = tensorType(c.resultShape);
  std::uniform_real_distribution<double> weight(-1.0, 1.0);
  std::string weights;
  int64_t count = numElementsOf(shape);
  for (int64_t i = 0; i < count; ++i)
    weights += (i ? ", " : "") + std::to_string(weight(rng));
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i)
    dims += (i ? ", " : "") + std::to_string(i);
  // A training step whose loss is its one result.
  out += ") -> tensor<f64> attributes {dtc.step = #dtc.step<abi = 1, loss = "
         "0>} {\n" +
         std::string(c.body) + "\n" + "  %c = dtc.constant dense<" +
         (shape.empty() ? weights : "[" + weights + "]") + "> : tensor<" +
         std::to_string(count) + "xf64>\n" +
         "  %cs = dtc.reshape %c : tensor<" + std::to_string(count) +
         "xf64> to " + type + "\n" + "  %m = dtc.mul %y, %cs : (" + type +
         ", " + type + ") -> " + type + "\n" +
         "  %l = dtc.reduce_sum %m dims = [" + dims + "] : " + type +
         " -> tensor<f64>\n  return %l : tensor<f64>\n}\n";
  return out;
}

double lossAt(func::FuncOp func, const SmallVector<Tensor> &args) {
  FailureOr<SmallVector<Tensor>> results = interpretFunction(func, args);
  EXPECT_TRUE(succeeded(results));
  return succeeded(results) ? (*results)[0].floats()[0] : NAN;
}

class VJPTest : public testing::TestWithParam<VJPCase> {};

TEST_P(VJPTest, MatchesFiniteDifferences) {
  const VJPCase &c = GetParam();
  std::mt19937 rng(1234);
  MLIRContext context;
  context.loadDialect<DTCDialect, func::FuncDialect>();
  std::string text = buildModule(c, rng);
  OwningOpRef<ModuleOp> forward = parseSourceString<ModuleOp>(text, &context);
  ASSERT_TRUE(forward) << text;
  OwningOpRef<ModuleOp> backward = forward->clone();
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(createAutodiff());
  ASSERT_TRUE(succeeded(pm.run(*backward))) << text;
  auto f = forward->lookupSymbol<func::FuncOp>("f");
  auto df = backward->lookupSymbol<func::FuncOp>("f");

  std::uniform_real_distribution<double> value(c.low, c.high);
  SmallVector<Tensor> args;
  for (const std::string &shape : c.params) {
    Tensor t(DType::F64, parseShape(shape));
    for (double &x : t.floats())
      x = value(rng);
    args.push_back(t);
  }
  for (auto [param, element] : c.zeros)
    args[param].floats()[element] = 0.0;
  FailureOr<SmallVector<Tensor>> results = interpretFunction(df, args);
  ASSERT_TRUE(succeeded(results));
  ASSERT_EQ(results->size(), 1 + args.size());

  const double h = 1e-6;
  for (size_t p = 0; p < args.size(); ++p) {
    const Tensor &grad = (*results)[1 + p];
    ASSERT_EQ(grad.shape(), args[p].shape());
    for (int64_t i = 0; i < args[p].numElements(); ++i) {
      SmallVector<Tensor> plus = args, minus = args;
      plus[p].floats()[i] += h;
      minus[p].floats()[i] -= h;
      double fd = (lossAt(f, plus) - lossAt(f, minus)) / (2 * h);
      EXPECT_NEAR(grad.floats()[i], fd, 1e-6 + 1e-5 * std::fabs(fd))
          << c.name << ": d loss / d p" << p << "[" << i << "]";
    }
  }
}

#define UNARY(OP, ...)                                                         \
  VJPCase {                                                                    \
    OP, {"2x3"}, "  %y = dtc." OP " %p0 : tensor<2x3xf64>", "2x3", __VA_ARGS__ \
  }
#define BINARY(OP, ...)                                                        \
  VJPCase {                                                                    \
    OP, {"2x3", "3"},                                                          \
        "  %y = dtc." OP " %p0, %p1 : (tensor<2x3xf64>, tensor<3xf64>) -> "    \
        "tensor<2x3xf64>",                                                     \
        "2x3", __VA_ARGS__                                                     \
  }

const VJPCase kCases[] = {
    UNARY("neg"),
    UNARY("abs"),
    UNARY("relu"),
    UNARY("exp"),
    UNARY("log", 0.5, 2.0),
    UNARY("sqrt", 0.5, 2.0),
    UNARY("rsqrt", 0.5, 2.0),
    UNARY("reciprocal", 0.5, 2.0),
    UNARY("tanh"),
    UNARY("erf"),
    UNARY("sin"),
    UNARY("cos"),
    UNARY("sigmoid"),
    UNARY("silu"),
    UNARY("softplus"),
    {"gelu_none",
     {"2x3"},
     "  %y = dtc.gelu %p0 approximate = none : tensor<2x3xf64>",
     "2x3"},
    {"gelu_tanh",
     {"2x3"},
     "  %y = dtc.gelu %p0 approximate = tanh : tensor<2x3xf64>",
     "2x3"},
    BINARY("add"),
    BINARY("sub"),
    BINARY("mul"),
    BINARY("div", 0.5, 2.0),
    BINARY("pow", 0.5, 2.0),
    BINARY("max"),
    BINARY("min"),
    {"select",
     {"2x3", "3"},
     "  %k = dtc.constant dense<[[true, false, true], [false, false, true]]> : "
     "tensor<2x3xi1>\n"
     "  %y = dtc.select %k, %p0, %p1 : (tensor<2x3xi1>, tensor<2x3xf64>, "
     "tensor<3xf64>) -> tensor<2x3xf64>",
     "2x3"},
    {"matmul",
     {"2x1x3x4", "5x4x2"},
     "  %y = dtc.matmul %p0, %p1 : (tensor<2x1x3x4xf64>, tensor<5x4x2xf64>) -> "
     "tensor<2x5x3x2xf64>",
     "2x5x3x2"},
    {"matmul_transpose_lhs",
     {"4x3", "4x2"},
     "  %y = dtc.matmul %p0, %p1 transpose_lhs : (tensor<4x3xf64>, "
     "tensor<4x2xf64>) -> tensor<3x2xf64>",
     "3x2"},
    {"matmul_transpose_rhs",
     {"3x4", "2x4"},
     "  %y = dtc.matmul %p0, %p1 transpose_rhs : (tensor<3x4xf64>, "
     "tensor<2x4xf64>) -> tensor<3x2xf64>",
     "3x2"},
    {"matmul_transpose_both",
     {"2x4x3", "2x4"},
     "  %y = dtc.matmul %p0, %p1 transpose_lhs transpose_rhs : "
     "(tensor<2x4x3xf64>, tensor<2x4xf64>) -> tensor<2x3x2xf64>",
     "2x3x2"},
    {"reduce_sum",
     {"2x3x4"},
     "  %y = dtc.reduce_sum %p0 dims = [0, 2] : tensor<2x3x4xf64> -> "
     "tensor<3xf64>",
     "3"},
    {"reduce_mean",
     {"2x3x4"},
     "  %y = dtc.reduce_mean %p0 dims = [1] keep_dims : tensor<2x3x4xf64> -> "
     "tensor<2x1x4xf64>",
     "2x1x4"},
    {"reduce_max",
     {"2x3x4"},
     "  %y = dtc.reduce_max %p0 dims = [2] : tensor<2x3x4xf64> -> "
     "tensor<2x3xf64>",
     "2x3"},
    {"reduce_min",
     {"2x3x4"},
     "  %y = dtc.reduce_min %p0 dims = [0, 1] : tensor<2x3x4xf64> -> "
     "tensor<4xf64>",
     "4"},
    {"cumsum",
     {"2x5"},
     "  %y = dtc.cumsum %p0 dim = 1 : tensor<2x5xf64>",
     "2x5"},
    {"cumsum_exclusive_reverse",
     {"2x5"},
     "  %y = dtc.cumsum %p0 dim = 1 exclusive reverse : tensor<2x5xf64>",
     "2x5"},
    {"dropout",
     {"4x5"},
     "  %s = dtc.constant dense<3> : tensor<i64>\n"
     "  %y = dtc.dropout %p0, %s ratio = 0.3 seed = 1 stream = 2 : "
     "(tensor<4x5xf64>, tensor<i64>) -> tensor<4x5xf64>",
     "4x5"},
    {"softmax",
     {"2x5"},
     "  %y = dtc.softmax %p0 dim = 1 : tensor<2x5xf64>",
     "2x5"},
    {"log_softmax",
     {"3x4"},
     "  %y = dtc.log_softmax %p0 dim = 0 : tensor<3x4xf64>",
     "3x4"},
    {"layer_norm",
     {"2x3x4", "3x4", "3x4"},
     "  %y, %mu, %r = dtc.layer_norm %p0, %p1, %p2 dim = 1 epsilon = 1.0e-05 : "
     "(tensor<2x3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64>) -> "
     "(tensor<2x3x4xf64>, tensor<2x1x1xf64>, tensor<2x1x1xf64>)",
     "2x3x4"},
    {"layer_norm_no_bias",
     {"3x5", "5"},
     "  %y, %mu, %r = dtc.layer_norm %p0, %p1 dim = 1 epsilon = 1.0e-05 : "
     "(tensor<3x5xf64>, tensor<5xf64>) -> (tensor<3x5xf64>, tensor<3x1xf64>, "
     "tensor<3x1xf64>)",
     "3x5"},
    {"rms_norm",
     {"3x5", "5"},
     "  %y = dtc.rms_norm %p0, %p1 dim = 1 epsilon = 1.0e-06 : "
     "(tensor<3x5xf64>, tensor<5xf64>) -> tensor<3x5xf64>",
     "3x5"},
    {"gather",
     {"5x3"},
     "  %i = dtc.constant dense<[[0, 4], [4, -2]]> : tensor<2x2xi64>\n"
     "  %y = dtc.gather %p0[%i] dim = 0 : (tensor<5x3xf64>, tensor<2x2xi64>) "
     "-> tensor<2x2x3xf64>",
     "2x2x3"},
    {"scatter_add",
     {"5x3", "2x2x3"},
     "  %i = dtc.constant dense<[[0, 4], [4, -2]]> : tensor<2x2xi64>\n"
     "  %y = dtc.scatter_add %p1 into %p0[%i] dim = 0 : (tensor<5x3xf64>, "
     "tensor<2x2xi64>, tensor<2x2x3xf64>) -> tensor<5x3xf64>",
     "5x3"},
    {"gather_elements",
     {"3x5"},
     "  %i = dtc.constant dense<[[0, 4], [-1, 2], [3, 3]]> : tensor<3x2xi64>\n"
     "  %y = dtc.gather_elements %p0[%i] dim = 1 : (tensor<3x5xf64>, "
     "tensor<3x2xi64>) -> tensor<3x2xf64>",
     "3x2"},
    {"scatter_elements_add",
     {"3x5", "3x2"},
     "  %i = dtc.constant dense<[[0, 4], [-1, 2], [3, 3]]> : tensor<3x2xi64>\n"
     "  %y = dtc.scatter_elements_add %p1 into %p0[%i] dim = 1 : "
     "(tensor<3x5xf64>, tensor<3x2xi64>, tensor<3x2xf64>) -> tensor<3x5xf64>",
     "3x5"},
    {"top_k",
     {"3x5"},
     "  %y, %i = dtc.top_k %p0 k = 2 dim = 1 : tensor<3x5xf64> -> "
     "(tensor<3x2xf64>, tensor<3x2xi64>)",
     "3x2"},
    {"reshape",
     {"2x6"},
     "  %y = dtc.reshape %p0 : tensor<2x6xf64> to tensor<3x4xf64>",
     "3x4"},
    {"transpose",
     {"2x3x4"},
     "  %y = dtc.transpose %p0 permutation = [2, 0, 1] : tensor<2x3x4xf64> -> "
     "tensor<4x2x3xf64>",
     "4x2x3"},
    {"broadcast",
     {"3x1"},
     "  %y = dtc.broadcast %p0 : tensor<3x1xf64> to tensor<2x3x4xf64>",
     "2x3x4"},
    {"concat",
     {"2x3", "2x1"},
     "  %y = dtc.concat %p0, %p1, %p0 dim = 1 : (tensor<2x3xf64>, "
     "tensor<2x1xf64>, tensor<2x3xf64>) -> tensor<2x7xf64>",
     "2x7"},
    {"slice",
     {"3x5"},
     "  %y = dtc.slice %p0 starts = [2, 4] sizes = [2, 3] strides = [-1, -2] : "
     "tensor<3x5xf64> -> tensor<2x3xf64>",
     "2x3"},
    {"update_slice",
     {"2x2", "3x5"},
     "  %y = dtc.update_slice %p0 into %p1 starts = [0, 1] strides = [2, 3] : "
     "(tensor<2x2xf64>, tensor<3x5xf64>) -> tensor<3x5xf64>",
     "3x5"},
    {"split",
     {"2x5"},
     "  %a, %b = dtc.split %p0 dim = 1 sizes = [2, 3] : tensor<2x5xf64> -> "
     "tensor<2x2xf64>, tensor<2x3xf64>\n"
     "  %y = dtc.mul %b, %b : (tensor<2x3xf64>, tensor<2x3xf64>) -> "
     "tensor<2x3xf64>",
     "2x3"},
    {"attention",
     {"1x2x3x4", "1x2x5x4", "1x2x5x3"},
     "  %y, %probs = dtc.attention %p0, %p1, %p2 scale = 0.5 : "
     "(tensor<1x2x3x4xf64>, tensor<1x2x5x4xf64>, tensor<1x2x5x3xf64>) -> "
     "(tensor<1x2x3x3xf64>, tensor<1x2x3x5xf64>)",
     "1x2x3x3"},
    // Grouped-query heads (4 query heads read 2 key/value heads) and a
    // float mask, whose gradient is the scores'.
    {"attention_gqa_mask",
     {"2x4x3x2", "2x2x4x2", "2x2x4x3", "3x4"},
     "  %y, %probs = dtc.attention %p0, %p1, %p2 mask %p3 scale = 0.7 : "
     "(tensor<2x4x3x2xf64>, tensor<2x2x4x2xf64>, tensor<2x2x4x3xf64>, "
     "tensor<3x4xf64>) -> (tensor<2x4x3x3xf64>, tensor<2x4x3x4xf64>)",
     "2x4x3x3"},
    // Gemma 2's soft-capped scores (cap 1.5, small enough to bend the
    // scores) under a bool mask.
    {"attention_softcap",
     {"1x2x3x4", "1x2x5x4", "1x2x5x3"},
     "  %row = dtc.iota dim = 0 : tensor<3x5xi64>\n"
     "  %col = dtc.iota dim = 1 : tensor<3x5xi64>\n"
     "  %keep = dtc.compare ge, %col, %row : (tensor<3x5xi64>, "
     "tensor<3x5xi64>) -> tensor<3x5xi1>\n"
     "  %y, %probs = dtc.attention %p0, %p1, %p2 mask %keep scale = 0.9 "
     "{softcap = 1.5 : f64} : "
     "(tensor<1x2x3x4xf64>, tensor<1x2x5x4xf64>, tensor<1x2x5x3xf64>, "
     "tensor<3x5xi1>) -> (tensor<1x2x3x3xf64>, tensor<1x2x3x5xf64>)",
     "1x2x3x3"},
    {"attention_causal_dropout",
     {"1x2x4x3", "1x2x4x3", "1x2x4x3"},
     "  %row = dtc.iota dim = 0 : tensor<4x4xi64>\n"
     "  %col = dtc.iota dim = 1 : tensor<4x4xi64>\n"
     "  %causal = dtc.compare ge, %row, %col : (tensor<4x4xi64>, "
     "tensor<4x4xi64>) -> tensor<4x4xi1>\n"
     "  %s = dtc.constant dense<2> : tensor<i64>\n"
     "  %y, %probs = dtc.attention %p0, %p1, %p2 mask %causal dropout step "
     "%s scale = 0.6 "
     "{dropout_ratio = 0.25 : f64, seed = 3 : i64, stream = 1 : i64} : "
     "(tensor<1x2x4x3xf64>, tensor<1x2x4x3xf64>, tensor<1x2x4x3xf64>, "
     "tensor<4x4xi1>, tensor<i64>) -> (tensor<1x2x4x3xf64>, "
     "tensor<1x2x4x4xf64>)",
     "1x2x4x3"},
    // Rotary embedding: halves with a pass-through tail, and interleaved
    // pairs; the angles broadcast over the heads and get gradients too.
    {"rotary_partial",
     {"2x3x4x6", "2x1x4x2", "2x1x4x2"},
     "  %y = dtc.rotary %p0, %p1, %p2 rotary_dim = 4 : (tensor<2x3x4x6xf64>, "
     "tensor<2x1x4x2xf64>, tensor<2x1x4x2xf64>) -> tensor<2x3x4x6xf64>",
     "2x3x4x6"},
    {"rotary_interleaved",
     {"2x4x3x4", "4x1x2", "4x1x2"},
     "  %y = dtc.rotary %p0, %p1, %p2 rotary_dim = 4 interleaved : "
     "(tensor<2x4x3x4xf64>, tensor<4x1x2xf64>, tensor<4x1x2xf64>) -> "
     "tensor<2x4x3x4xf64>",
     "2x4x3x4"},
    // Scatter reductions with a repeated index. A product's zero updates:
    // one alone at an element (its cofactor is the other factors' product)
    // and two together (both cofactors zero).
    {"scatter_max",
     {"4x3", "3x3"},
     "  %i = dtc.constant dense<[1, 3, 1]> : tensor<3xi64>\n"
     "  %y = dtc.scatter_reduce %p1 into %p0[%i] dim = 0 kind = max : "
     "(tensor<4x3xf64>, tensor<3xi64>, tensor<3x3xf64>) -> tensor<4x3xf64>",
     "4x3"},
    {"scatter_min",
     {"4x3", "3x3"},
     "  %i = dtc.constant dense<[1, 3, 1]> : tensor<3xi64>\n"
     "  %y = dtc.scatter_reduce %p1 into %p0[%i] dim = 0 kind = min : "
     "(tensor<4x3xf64>, tensor<3xi64>, tensor<3x3xf64>) -> tensor<4x3xf64>",
     "4x3"},
    {"scatter_mul",
     {"4x3", "3x3"},
     "  %i = dtc.constant dense<[1, 3, 1]> : tensor<3xi64>\n"
     "  %y = dtc.scatter_reduce %p1 into %p0[%i] dim = 0 kind = mul : "
     "(tensor<4x3xf64>, tensor<3xi64>, tensor<3x3xf64>) -> tensor<4x3xf64>",
     "4x3"},
    {"scatter_mul_zeros",
     {"4x3", "3x3"},
     "  %i = dtc.constant dense<[1, 3, 1]> : tensor<3xi64>\n"
     "  %y = dtc.scatter_reduce %p1 into %p0[%i] dim = 0 kind = mul : "
     "(tensor<4x3xf64>, tensor<3xi64>, tensor<3x3xf64>) -> tensor<4x3xf64>",
     "4x3",
     -1.5,
     1.5,
     {{1, 0}, {1, 7}, {1, 1}}},
    // Floored and truncated remainders: d/dy is minus the quotient.
    {"mod_floored",
     {"2x3", "3"},
     "  %y = dtc.mod %p0, %p1 : (tensor<2x3xf64>, tensor<3xf64>) -> "
     "tensor<2x3xf64>",
     "2x3",
     -4.0,
     4.0},
    {"mod_truncated",
     {"2x3", "2x3"},
     "  %y = dtc.mod %p0, %p1 {truncated} : (tensor<2x3xf64>, "
     "tensor<2x3xf64>) -> tensor<2x3xf64>",
     "2x3",
     -4.0,
     4.0},
    {"reused_value",
     {"3"},
     "  %s = dtc.sin %p0 : tensor<3xf64>\n"
     "  %y = dtc.mul %s, %p0 : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>",
     "3"},
};

INSTANTIATE_TEST_SUITE_P(Ops, VJPTest, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<VJPCase> &info) {
                           return std::string(info.param.name);
                         });

} // namespace
