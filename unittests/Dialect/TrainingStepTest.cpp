//===- TrainingStepTest.cpp - the typed view of a training step -----------===//
//
// TrainingStep::get on small steps: parameters with their gradients and
// state, the step's own state, aliases both ways, layouts resolved for
// gradients and updates, the plain-C++ signature; and the error each
// inconsistency gets, naming the argument or result.
//
//===----------------------------------------------------------------------===//

#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::dtc;

namespace {

class TrainingStepTest : public testing::Test {
protected:
  TrainingStepTest() {
    context.loadDialect<DTCDialect, func::FuncDialect>();
    handler.emplace(&context, [&](Diagnostic &diag) {
      errors += diag.str() + "\n";
      return success();
    });
  }

  /// The module's @step (parsed without verification, so that a step the
  /// verifier would refuse reaches TrainingStep::get).
  func::FuncOp parse(StringRef source) {
    ParserConfig config(&context, /*verifyAfterParse=*/false);
    module = parseSourceString<ModuleOp>(source, config);
    EXPECT_TRUE(module) << errors;
    return module ? module->lookupSymbol<func::FuncOp>("step") : func::FuncOp();
  }

  /// The error TrainingStep::get gives for `source`.
  std::string errorOf(StringRef source) {
    func::FuncOp func = parse(source);
    if (!func)
      return "(no @step)";
    errors.clear();
    EXPECT_TRUE(failed(TrainingStep::get(func)));
    return errors;
  }

  MLIRContext context;
  std::optional<ScopedDiagnosticHandler> handler;
  OwningOpRef<ModuleOp> module;
  std::string errors;
};

// A partitioned bf16 AdamW step as the passes build it: the gradient of w
// is split like w (no dtc.sharding of its own), the moments over dp too.
constexpr const char *kStep = R"mlir(
dtc.mesh @mesh ["dp" = 2]
func.func @step(
    %ids: tensor<1x3xi64> {dtc.input = "ids", dtc.sharding = #dtc.sharding<@mesh, [["dp"], []]>},
    %w: tensor<2x4xbf16> {dtc.param = "w", dtc.aliasing_output = 3,
                          dtc.sharding = #dtc.sharding<@mesh, [["dp"], []]>, dtc.unpadded_rows = 3},
    %t: tensor<4xf32> {dtc.param = "teacher/t", dtc.trainable = false},
    %step: tensor<i64> {dtc.state = #dtc.state<step>, dtc.aliasing_output = 6},
    %master: tensor<2x4xf32> {dtc.state = #dtc.state<master of "w">, dtc.aliasing_output = 4,
                              dtc.sharding = #dtc.sharding<@mesh, [["dp"], []]>, dtc.unpadded_rows = 3},
    %m: tensor<2x4xf32> {dtc.state = #dtc.state<exp_avg of "w">, dtc.aliasing_output = 5,
                         dtc.sharding = #dtc.sharding<@mesh, [["dp"], []]>, dtc.unpadded_rows = 3})
    -> (tensor<f32>, tensor<2x4xbf16> {dtc.grad = "w"}, tensor<4xf32> {dtc.output = "probe"},
        tensor<2x4xbf16>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<i64>)
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0, microbatches = 2, mesh = @mesh,
                                     rng = <seed = 7, counter = 3>>} {
  %l = dtc.constant dense<0.0> : tensor<f32>
  return %l, %w, %t, %w, %master, %m, %step
      : tensor<f32>, tensor<2x4xbf16>, tensor<4xf32>, tensor<2x4xbf16>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<i64>
}
)mlir";

TEST_F(TrainingStepTest, ReadsTheStep) {
  func::FuncOp func = parse(kStep);
  ASSERT_TRUE(func);
  FailureOr<TrainingStep> step = TrainingStep::get(func);
  ASSERT_TRUE(succeeded(step)) << errors;
  EXPECT_EQ(step->getLossResult(), 0u);
  ASSERT_EQ(step->getParameters().size(), 2u);
  const TrainingStep::Parameter *w = step->getParameter("w");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->argument, 1u);
  EXPECT_TRUE(w->trainable);
  EXPECT_EQ(w->gradient, 1u);
  EXPECT_EQ(w->stateOf(StateKind::Master), 4u);
  EXPECT_EQ(w->stateOf(StateKind::ExpAvg), 5u);
  EXPECT_EQ(w->stateOf(StateKind::ExpAvgSq), std::nullopt);
  EXPECT_FALSE(step->getParameter("teacher/t")->trainable);
  EXPECT_EQ(step->getGradientParameter(1), w);
  EXPECT_EQ(step->getInputs(), ArrayRef<unsigned>{0});
  EXPECT_EQ(step->getStepState(StateKind::Step), 3u);
  EXPECT_EQ(step->getStepState(StateKind::LossScale), std::nullopt);
  // Donation both ways; the frozen parameter is not donated.
  EXPECT_EQ(step->getUpdate(1), 3u);
  EXPECT_EQ(step->getUpdatedArgument(3), 1u);
  EXPECT_EQ(step->getUpdatedArgument(6), 3u);
  EXPECT_EQ(step->getUpdate(2), std::nullopt);
  // Layouts: a gradient's is its parameter's, an update's its argument's.
  EXPECT_EQ(step->getResultSharding(1), step->getArgumentSharding(1));
  EXPECT_EQ(step->getResultSharding(4), step->getArgumentSharding(4));
  EXPECT_FALSE(step->getResultSharding(2));
  EXPECT_EQ(step->getResultUnpaddedRows(1), 3);
  EXPECT_TRUE(step->getMesh());

  FailureOr<StepSignature> sig = step->getSignature();
  ASSERT_TRUE(succeeded(sig)) << errors;
  EXPECT_EQ(sig->check(), "");
  EXPECT_EQ(sig->microbatches, 2);
  EXPECT_EQ(sig->mesh.axes, std::vector<std::string>{"dp"});
  ASSERT_TRUE(sig->rng);
  EXPECT_EQ(sig->rng->seed, 7);
  EXPECT_EQ(sig->rng->counter, 3u);
  const StepArgument &master = sig->arguments[4];
  EXPECT_EQ(master.role, ArgumentRole::State);
  EXPECT_EQ(master.stateKind, StepStateKind::Master);
  EXPECT_EQ(master.parameter, "w");
  EXPECT_EQ(master.name, "master/w");
  EXPECT_EQ(master.shape, (Shape{2, 4}));
  EXPECT_EQ(master.layout.dims,
            (std::vector<std::vector<std::string>>{{"dp"}, {}}));
  EXPECT_EQ(master.unpaddedRows, 3);
  EXPECT_EQ(master.aliasedResult, 4u);
  EXPECT_EQ(sig->arguments[1].dtype, DType::BF16);
  EXPECT_FALSE(sig->arguments[2].trainable);
  EXPECT_EQ(sig->results[0].role, ResultRole::Loss);
  EXPECT_EQ(sig->results[1].role, ResultRole::Gradient);
  EXPECT_EQ(sig->results[1].name, "w");
  EXPECT_EQ(sig->results[1].layout.dims.size(), 2u);
  EXPECT_EQ(sig->results[2].role, ResultRole::Output);
  EXPECT_EQ(sig->results[2].name, "probe");
  EXPECT_EQ(sig->results[5].role, ResultRole::Update);
  EXPECT_EQ(sig->results[5].updatedArgument, 5u);
  EXPECT_EQ(getResultName(func, 0), "loss");
  EXPECT_EQ(getResultName(func, 5), "update/exp_avg/w");
}

TEST_F(TrainingStepTest, SettersKeepTheOtherFields) {
  func::FuncOp func = parse(kStep);
  ASSERT_TRUE(func);
  setStepLossScaling(func, 100);
  setStepMicrobatches(func, 4);
  StepAttr attr = getStepAttr(func);
  EXPECT_EQ(attr.getAbi(), kStepABIVersion);
  EXPECT_EQ(attr.getLoss(), 0);
  EXPECT_EQ(attr.getMicrobatches(), 4);
  EXPECT_EQ(attr.getRng().getSeed(), 7);
  EXPECT_EQ(attr.getLossScaling().getGrowthInterval(), 100);
  // A function without one gets one of the current version.
  func::FuncOp fresh = parse("func.func @step() { return }");
  ASSERT_TRUE(fresh);
  setStepLoss(fresh, 0);
  EXPECT_EQ(getStepAttr(fresh).getAbi(), kStepABIVersion);
}

/// kStep with `from` replaced by `to`.
std::string variant(StringRef from, StringRef to) {
  std::string source = kStep;
  size_t at = source.find(from.str());
  EXPECT_NE(at, std::string::npos) << from.str();
  if (at != std::string::npos)
    source.replace(at, from.size(), to.str());
  return source;
}

TEST_F(TrainingStepTest, NamesWhatIsInconsistent) {
  EXPECT_EQ(errorOf("func.func @step() { return }"),
            "@step is not a training step: it has no dtc.step attribute "
            "(dtc-attach-loss makes one)\n");
  EXPECT_EQ(errorOf(variant("dtc.param = \"teacher/t\"",
                            "dtc.param = \"teacher/t\", dtc.input = \"t\"")),
            "argument 2 has more than one role of dtc.param, dtc.input and "
            "dtc.state\n");
  EXPECT_EQ(errorOf(variant("dtc.param = \"teacher/t\"", "dtc.param = \"w\"")),
            "arguments 1 and 2 are both the parameter 'w'\n");
  EXPECT_EQ(errorOf(variant("#dtc.state<exp_avg of \"w\">",
                            "#dtc.state<exp_avg of \"v\">")),
            "argument 5 (#dtc.state<exp_avg of \"v\">) is state of no "
            "parameter: there is no dtc.param = \"v\"\n");
  EXPECT_EQ(errorOf(variant("#dtc.state<exp_avg of \"w\">",
                            "#dtc.state<master of \"w\">")),
            "arguments 4 and 5 are both #dtc.state<master of \"w\">\n");
  EXPECT_EQ(
      errorOf(variant("dtc.state = #dtc.state<step>", "dtc.state = \"step\"")),
      "argument 3: dtc.state must be a #dtc.state, not \"step\"\n");
  EXPECT_EQ(errorOf(variant("{dtc.output = \"probe\"}", "{dtc.grad = \"x\"}")),
            "result 2 is the gradient of 'x', which is no parameter\n");
  EXPECT_EQ(errorOf(variant("{dtc.output = \"probe\"}", "{dtc.grad = \"w\"}")),
            "results 1 and 2 are both the gradient of 'w'\n");
  EXPECT_EQ(
      errorOf(variant("dtc.aliasing_output = 3,", "dtc.aliasing_output = 9,")),
      "argument 1: dtc.aliasing_output 9 : i64 is not a result index "
      "(the function has 7 results)\n");
  EXPECT_EQ(
      errorOf(variant("dtc.aliasing_output = 3,", "dtc.aliasing_output = 4,")),
      "argument 1 of type 'tensor<2x4xbf16>' aliases result 4 of "
      "another type, 'tensor<2x4xf32>'\n");
  EXPECT_EQ(
      errorOf(variant("dtc.aliasing_output = 5,", "dtc.aliasing_output = 4,")),
      "result 4 is the next value of arguments 4 and 5\n");
  EXPECT_EQ(
      errorOf(variant("dtc.aliasing_output = 3,", "dtc.aliasing_output = 1,")),
      "argument 1 aliases result 1, a gradient\n");
  EXPECT_EQ(errorOf(variant("loss = 0,", "loss = 7,")),
            "dtc.step: the loss is result 7, but the function has 7\n");
  EXPECT_EQ(errorOf(variant("loss = 0,", "loss = 3,")),
            "dtc.step: the loss, result 3, is also a gradient or an update\n");
  EXPECT_EQ(errorOf(variant("counter = 3", "counter = 0")),
            "dtc.step: the RNG counter, argument 0, is not the step state\n");
}

TEST_F(TrainingStepTest, SignatureNeedsRolesAndALoss) {
  func::FuncOp func = parse(variant("loss = 0, ", ""));
  ASSERT_TRUE(func);
  FailureOr<TrainingStep> step = TrainingStep::get(func);
  ASSERT_TRUE(succeeded(step)) << errors;
  errors.clear();
  EXPECT_TRUE(failed(step->getSignature()));
  EXPECT_EQ(errors, "@step has no loss (dtc.step names none): it is no step "
                    "a runner can train with\n");

  func = parse(
      variant("{dtc.param = \"teacher/t\", dtc.trainable = false}", "{}"));
  ASSERT_TRUE(func);
  step = TrainingStep::get(func);
  ASSERT_TRUE(succeeded(step)) << errors;
  errors.clear();
  EXPECT_TRUE(failed(step->getSignature()));
  EXPECT_EQ(errors, "argument 2 has no role (dtc.input, dtc.param or "
                    "dtc.state): a runner cannot bind it\n");
}

} // namespace
