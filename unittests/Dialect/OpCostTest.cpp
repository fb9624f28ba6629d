//===- OpCostTest.cpp - each op's FLOPs and bytes against hand counts -----===//
//
// Each case is one op on small tensors of some element type; the expected
// FLOPs and bytes are written out from the conventions of OpCost.h
// (2*m*n*k per matmul, one FLOP per element, n - 1 per reduced output, ...)
// and the element sizes, not taken from the implementation.
//
//===----------------------------------------------------------------------===//

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::dtc;

namespace {

struct CostCase {
  const char *name;
  /// The function's argument types, named %a0, %a1, ...
  std::vector<const char *> args;
  /// The op under test, the first op of the body, defining %y.
  const char *op;
  double matmul, elementwise, transcendental;
  int64_t read, written;
};

void PrintTo(const CostCase &c, std::ostream *os) { *os << c.name; }

// Element sizes: f64/i64 8, f32/i32 4, bf16/f16 2, i1 1.
const CostCase kCases[] = {
    // 2*m*n*k per batch element.
    {"matmul_f32_broadcast_rhs",
     {"tensor<3x4x5xf32>", "tensor<5x6xf32>"},
     "%y = dtc.matmul %a0, %a1 : (tensor<3x4x5xf32>, tensor<5x6xf32>) -> "
     "tensor<3x4x6xf32>",
     2.0 * 3 * 4 * 6 * 5,
     0,
     0,
     4 * (3 * 4 * 5 + 5 * 6),
     4 * (3 * 4 * 6)},
    {"matmul_bf16_transpose_lhs_broadcast_batch",
     {"tensor<2x1x5x4xbf16>", "tensor<3x5x6xbf16>"},
     "%y = dtc.matmul %a0, %a1 transpose_lhs : (tensor<2x1x5x4xbf16>, "
     "tensor<3x5x6xbf16>) -> tensor<2x3x4x6xbf16>",
     2.0 * (2 * 3) * 4 * 6 * 5,
     0,
     0,
     2 * (2 * 5 * 4 + 3 * 5 * 6),
     2 * (2 * 3 * 4 * 6)},
    {"matmul_i32_transpose_rhs",
     {"tensor<4x5xi32>", "tensor<6x5xi32>"},
     "%y = dtc.matmul %a0, %a1 transpose_rhs : (tensor<4x5xi32>, "
     "tensor<6x5xi32>) -> tensor<4x6xi32>",
     2.0 * 4 * 6 * 5,
     0,
     0,
     4 * (20 + 30),
     4 * 24},
    // One arithmetic FLOP per result element (from the traits).
    {"add_f16_broadcast",
     {"tensor<4x1xf16>", "tensor<3xf16>"},
     "%y = dtc.add %a0, %a1 : (tensor<4x1xf16>, tensor<3xf16>) -> "
     "tensor<4x3xf16>",
     0,
     12,
     0,
     2 * (4 + 3),
     2 * 12},
    {"compare_to_i1",
     {"tensor<4xf32>", "tensor<4xf32>"},
     "%y = dtc.compare lt, %a0, %a1 : (tensor<4xf32>, tensor<4xf32>) -> "
     "tensor<4xi1>",
     0,
     4,
     0,
     4 * 8,
     1 * 4},
    {"select_f64",
     {"tensor<4xi1>", "tensor<4xf64>", "tensor<f64>"},
     "%y = dtc.select %a0, %a1, %a2 : (tensor<4xi1>, tensor<4xf64>, "
     "tensor<f64>) -> tensor<4xf64>",
     0,
     4,
     0,
     4 + 8 * 4 + 8,
     8 * 4},
    {"cast_f32_to_bf16",
     {"tensor<2x3xf32>"},
     "%y = dtc.cast %a0 : tensor<2x3xf32> to tensor<2x3xbf16>",
     0,
     6,
     0,
     4 * 6,
     2 * 6},
    {"neg_i64",
     {"tensor<3xi64>"},
     "%y = dtc.neg %a0 : tensor<3xi64>",
     0,
     3,
     0,
     24,
     24},
    // Transcendental functions apart from the arithmetic around them.
    {"exp_f32",
     {"tensor<2x3xf32>"},
     "%y = dtc.exp %a0 : tensor<2x3xf32>",
     0,
     0,
     6,
     24,
     24},
    {"rsqrt_bf16",
     {"tensor<8xbf16>"},
     "%y = dtc.rsqrt %a0 : tensor<8xbf16>",
     0,
     0,
     8,
     16,
     16},
    {"sigmoid_f32",
     {"tensor<5xf32>"},
     "%y = dtc.sigmoid %a0 : tensor<5xf32>",
     0,
     0,
     5,
     20,
     20},
    {"pow_broadcast",
     {"tensor<2x3xf32>", "tensor<f32>"},
     "%y = dtc.pow %a0, %a1 : (tensor<2x3xf32>, tensor<f32>) -> "
     "tensor<2x3xf32>",
     0,
     0,
     6,
     4 * 7,
     4 * 6},
    // x * sigmoid(x).
    {"silu",
     {"tensor<5xf32>"},
     "%y = dtc.silu %a0 : tensor<5xf32>",
     0,
     5,
     5,
     20,
     20},
    // log(1 + exp(x)).
    {"softplus",
     {"tensor<5xf32>"},
     "%y = dtc.softplus %a0 : tensor<5xf32>",
     0,
     5,
     10,
     20,
     20},
    // x * (1 + erf(x / sqrt 2)) / 2.
    {"gelu_exact",
     {"tensor<5xf32>"},
     "%y = dtc.gelu %a0 approximate = none : tensor<5xf32>",
     0,
     4 * 5,
     5,
     20,
     20},
    // x * (1 + tanh(c * (x + 0.044715 x^3))) / 2.
    {"gelu_tanh",
     {"tensor<5xf16>"},
     "%y = dtc.gelu %a0 approximate = tanh : tensor<5xf16>",
     0,
     8 * 5,
     5,
     10,
     10},
    // The kept test and the scaling per element.
    {"dropout",
     {"tensor<8xf32>", "tensor<i64>"},
     "%y = dtc.dropout %a0, %a1 ratio = 1.0e-01 seed = 0 stream = 0 : "
     "(tensor<8xf32>, tensor<i64>) -> tensor<8xf32>",
     0,
     2 * 8,
     0,
     32 + 8,
     32},
    // n - 1 per output; a mean also divides once per output.
    {"reduce_sum_rows",
     {"tensor<4x6xf32>"},
     "%y = dtc.reduce_sum %a0 dims = [1] : tensor<4x6xf32> -> tensor<4xf32>",
     0,
     4 * (6 - 1),
     0,
     96,
     16},
    {"reduce_mean_all",
     {"tensor<4x6xf32>"},
     "%y = dtc.reduce_mean %a0 dims = [0, 1] : tensor<4x6xf32> -> "
     "tensor<f32>",
     0,
     (24 - 1) + 1,
     0,
     96,
     4},
    {"reduce_max_keep_dims",
     {"tensor<4x6xf64>"},
     "%y = dtc.reduce_max %a0 dims = [0] keep_dims : tensor<4x6xf64> -> "
     "tensor<1x6xf64>",
     0,
     6 * (4 - 1),
     0,
     8 * 24,
     8 * 6},
    {"arg_max",
     {"tensor<4x6xf32>"},
     "%y = dtc.arg_max %a0 dim = 1 : tensor<4x6xf32> -> tensor<4xi64>",
     0,
     4 * (6 - 1),
     0,
     96,
     32},
    {"cumsum",
     {"tensor<4x6xf32>"},
     "%y = dtc.cumsum %a0 dim = 1 : tensor<4x6xf32>",
     0,
     4 * (6 - 1),
     0,
     96,
     96},
    // Per row of n: max n-1, subtract n, exp n, sum n-1, divide n.
    {"softmax",
     {"tensor<4x6xf32>"},
     "%y = dtc.softmax %a0 dim = 1 : tensor<4x6xf32>",
     0,
     4 * ((6 - 1) + 6 + (6 - 1) + 6),
     4 * 6,
     96,
     96},
    // Per row: max, subtract, exp, sum, log (one), subtract.
    {"log_softmax_rows_of_dim0",
     {"tensor<6x4xf32>"},
     "%y = dtc.log_softmax %a0 dim = 0 : tensor<6x4xf32>",
     0,
     4 * ((6 - 1) + 6 + (6 - 1) + 6),
     4 * (6 + 1),
     96,
     96},
    // Per row of n: mean n, center n, variance 2n, + eps 1, normalize n,
    // scale n, bias n; one rsqrt.
    {"layer_norm_bias",
     {"tensor<2x3x4xf32>", "tensor<4xf32>", "tensor<4xf32>"},
     "%y, %m, %r = dtc.layer_norm %a0, %a1, %a2 dim = 2 epsilon = 1.0e-05 : "
     "(tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> "
     "(tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>)",
     0,
     6 * (4 + 4 + 2 * 4 + 1 + 4 + 4 + 4),
     6,
     4 * (24 + 4 + 4),
     4 * (24 + 6 + 6)},
    {"layer_norm_two_dims",
     {"tensor<2x3x4xf32>", "tensor<3x4xf32>"},
     "%y, %m, %r = dtc.layer_norm %a0, %a1 dim = 1 epsilon = 1.0e-05 : "
     "(tensor<2x3x4xf32>, tensor<3x4xf32>) -> (tensor<2x3x4xf32>, "
     "tensor<2x1x1xf32>, tensor<2x1x1xf32>)",
     0,
     2 * (12 + 12 + 2 * 12 + 1 + 12 + 12),
     2,
     4 * (24 + 12),
     4 * (24 + 2 + 2)},
    // Per row: squares n, mean n, + eps 1, normalize n, scale n; one rsqrt.
    {"rms_norm_bf16",
     {"tensor<2x3x4xbf16>", "tensor<4xbf16>"},
     "%y = dtc.rms_norm %a0, %a1 dim = 2 epsilon = 1.0e-06 : "
     "(tensor<2x3x4xbf16>, tensor<4xbf16>) -> tensor<2x3x4xbf16>",
     0,
     6 * (4 + 4 + 1 + 4 + 4),
     6,
     2 * (24 + 4),
     2 * 24},
    // Data movement: bytes only; a gather or slice reads what it returns.
    {"gather_rows",
     {"tensor<10x4xf32>", "tensor<2x3xi64>"},
     "%y = dtc.gather %a0[%a1] dim = 0 : (tensor<10x4xf32>, tensor<2x3xi64>) "
     "-> tensor<2x3x4xf32>",
     0,
     0,
     0,
     8 * 6 + 4 * 24,
     4 * 24},
    {"slice",
     {"tensor<4x8xf32>"},
     "%y = dtc.slice %a0 starts = [0, 2] sizes = [4, 3] strides = [1, 2] : "
     "tensor<4x8xf32> -> tensor<4x3xf32>",
     0,
     0,
     0,
     48,
     48},
    {"transpose_bf16",
     {"tensor<2x3xbf16>"},
     "%y = dtc.transpose %a0 permutation = [1, 0] : tensor<2x3xbf16> -> "
     "tensor<3x2xbf16>",
     0,
     0,
     0,
     12,
     12},
    {"reshape_i1",
     {"tensor<2x3xi1>"},
     "%y = dtc.reshape %a0 : tensor<2x3xi1> to tensor<6xi1>",
     0,
     0,
     0,
     6,
     6},
    {"broadcast",
     {"tensor<4xf32>"},
     "%y = dtc.broadcast %a0 : tensor<4xf32> to tensor<3x4xf32>",
     0,
     0,
     0,
     16,
     48},
    // One addition per update.
    {"scatter_add",
     {"tensor<10x4xf32>", "tensor<2x3xi64>", "tensor<2x3x4xf32>"},
     "%y = dtc.scatter_add %a2 into %a0[%a1] dim = 0 : (tensor<10x4xf32>, "
     "tensor<2x3xi64>, tensor<2x3x4xf32>) -> tensor<10x4xf32>",
     0,
     24,
     0,
     160 + 48 + 96,
     160},
    // k passes of n - 1 comparisons per row.
    {"top_k",
     {"tensor<4x6xf32>"},
     "%y, %i = dtc.top_k %a0 k = 2 dim = 1 : tensor<4x6xf32> -> "
     "(tensor<4x2xf32>, tensor<4x2xi64>)",
     0,
     4 * 2 * (6 - 1),
     0,
     96,
     4 * 8 + 8 * 8},
    // A constant is data of the program.
    {"constant",
     {},
     "%y = dtc.constant dense<1.0> : tensor<4x4xf32>",
     0,
     0,
     0,
     0,
     0},
    // Collectives move bytes and compute nothing.
    {"all_reduce",
     {"tensor<4x4xf32>"},
     "%y = dtc.all_reduce %a0 on @mesh axes = [\"dp\"] kind = sum : "
     "tensor<4x4xf32>",
     0,
     0,
     0,
     64,
     64},
};

class OpCostTest : public ::testing::TestWithParam<CostCase> {};

TEST_P(OpCostTest, MatchesHandCount) {
  const CostCase &c = GetParam();
  MLIRContext context;
  context.loadDialect<DTCDialect, func::FuncDialect>();
  std::string source = "dtc.mesh @mesh [\"dp\" = 2]\nfunc.func @f(";
  for (size_t i = 0; i < c.args.size(); ++i)
    source += (i ? ", %a" : "%a") + std::to_string(i) + ": " + c.args[i];
  source += ") {\n  " + std::string(c.op) + "\n  return\n}\n";
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(source, ParserConfig(&context));
  ASSERT_TRUE(module) << source;
  auto func = *module->getOps<func::FuncOp>().begin();
  Operation *op = &func.getBody().front().front();
  ASSERT_TRUE(isa<CostOpInterface>(op)) << c.name;
  OpCost cost = getOpCost(op);
  EXPECT_EQ(cost.matmulFlops, c.matmul);
  EXPECT_EQ(cost.elementwiseFlops, c.elementwise);
  EXPECT_EQ(cost.transcendentalFlops, c.transcendental);
  EXPECT_EQ(cost.bytesRead, c.read);
  EXPECT_EQ(cost.bytesWritten, c.written);
}

INSTANTIATE_TEST_SUITE_P(Ops, OpCostTest, ::testing::ValuesIn(kCases),
                         [](const auto &info) { return info.param.name; });

TEST(OpCostTest, EveryDTCOpHasACost) {
  MLIRContext context;
  context.loadDialect<DTCDialect>();
  int64_t ops = 0;
  for (RegisteredOperationName name : context.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "dtc")
      continue;
    ++ops;
    EXPECT_TRUE(name.hasInterface<CostOpInterface>())
        << name.getStringRef().str();
  }
  EXPECT_GT(ops, 60);
}

//===----------------------------------------------------------------------===//
// Ops of another dialect: a trait suffices, and an op may say its own cost.
//===----------------------------------------------------------------------===//

/// A broadcasting binary op with no cost code at all.
class HypotOp : public Op<HypotOp, OpTrait::OneResult,
                          OpTrait::OneTypedResult<RankedTensorType>::Impl,
                          OpTrait::ZeroSuccessors, OpTrait::NOperands<2>::Impl,
                          OpTrait::dtc::BroadcastingElementwise> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(HypotOp)
  using Op::Op;
  static StringRef getOperationName() { return "dtc_test.hypot"; }
  static ArrayRef<StringRef> getAttributeNames() { return {}; }
};

/// An op that attaches CostOpInterface with a cost of its own.
class FusedOp : public Op<FusedOp, OpTrait::OneResult,
                          OpTrait::OneTypedResult<RankedTensorType>::Impl,
                          OpTrait::ZeroSuccessors, OpTrait::OneOperand,
                          OpTrait::Elementwise> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FusedOp)
  using Op::Op;
  static StringRef getOperationName() { return "dtc_test.fused"; }
  static ArrayRef<StringRef> getAttributeNames() { return {}; }
};

/// An op with neither: bytes only.
class OpaqueOp : public Op<OpaqueOp, OpTrait::OneResult,
                           OpTrait::OneTypedResult<RankedTensorType>::Impl,
                           OpTrait::ZeroSuccessors, OpTrait::OneOperand> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(OpaqueOp)
  using Op::Op;
  static StringRef getOperationName() { return "dtc_test.opaque"; }
  static ArrayRef<StringRef> getAttributeNames() { return {}; }
};

class TestDialect : public Dialect {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestDialect)
  explicit TestDialect(MLIRContext *context)
      : Dialect(getDialectNamespace(), context, TypeID::get<TestDialect>()) {
    addOperations<HypotOp, FusedOp, OpaqueOp>();
  }
  static StringRef getDialectNamespace() { return "dtc_test"; }
};

struct FusedCost : public CostOpInterface::ExternalModel<FusedCost, FusedOp> {
  OpCost getCost(Operation *op) const {
    OpCost cost = elementwiseCost(op, /*arithmetic=*/3, /*transcendental=*/2);
    cost.matmulFlops = 7;
    return cost;
  }
};

TEST(OpCostTest, OpsOfOtherDialects) {
  MLIRContext context;
  context.loadDialect<DTCDialect, func::FuncDialect, TestDialect>();
  FusedOp::attachInterface<FusedCost>(context);
  const char *source = R"mlir(
    func.func @f(%a: tensor<4x1xf32>, %b: tensor<3xf32>, %c: tensor<5xbf16>) {
      %h = "dtc_test.hypot"(%a, %b) : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
      %f = "dtc_test.fused"(%c) : (tensor<5xbf16>) -> tensor<5xbf16>
      %o = "dtc_test.opaque"(%c) : (tensor<5xbf16>) -> tensor<2xf64>
      return
    }
  )mlir";
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(source, ParserConfig(&context));
  ASSERT_TRUE(module);
  auto func = *module->getOps<func::FuncOp>().begin();
  auto ops = func.getBody().front().without_terminator();
  auto it = ops.begin();
  Operation *hypot = &*it++, *fused = &*it++, *opaque = &*it++;

  // The trait: one FLOP per element of the broadcast result.
  EXPECT_FALSE(isa<CostOpInterface>(hypot));
  OpCost h = getOpCost(hypot);
  EXPECT_EQ(h.elementwiseFlops, 12);
  EXPECT_EQ(h.matmulFlops + h.transcendentalFlops, 0);
  EXPECT_EQ(h.bytesRead, 4 * (4 + 3));
  EXPECT_EQ(h.bytesWritten, 4 * 12);

  // The op's own cost wins over its Elementwise trait.
  OpCost f = getOpCost(fused);
  EXPECT_EQ(f.matmulFlops, 7);
  EXPECT_EQ(f.elementwiseFlops, 3 * 5);
  EXPECT_EQ(f.transcendentalFlops, 2 * 5);
  EXPECT_EQ(f.bytesRead, 2 * 5);
  EXPECT_EQ(f.bytesWritten, 2 * 5);

  OpCost o = getOpCost(opaque);
  EXPECT_EQ(o.flops(), 0);
  EXPECT_EQ(o.bytesRead, 10);
  EXPECT_EQ(o.bytesWritten, 16);
}

} // namespace
