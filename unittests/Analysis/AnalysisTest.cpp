//===- AnalysisTest.cpp - phases, costs, memory and liveness of a step ----===//
//
// A hand-written step small enough to count by hand: its phases, its FLOPs
// per phase, its memory by category, and the live bytes along schedules
// that run ops more than once (microbatches in flight, a recomputation).
//
//===----------------------------------------------------------------------===//

#include "dtc/Analysis/Memory.h"
#include "dtc/Analysis/StepCost.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// loss = sum(x @ w); its gradient x^T @ ones; SGD on w with momentum-free
/// state that the step does not touch.
const char *kStep = R"mlir(
func.func @step(%x: tensor<4x8xf32> {dtc.input = "x"},
                %w: tensor<8x2xf32> {dtc.param = "w", dtc.aliasing_output = 2 : i64},
                %m: tensor<8x2xf32> {dtc.state = #dtc.state<exp_avg of "w">},
                %mw: tensor<8x2xf32> {dtc.state = #dtc.state<master of "w">})
    -> (tensor<f32>, tensor<8x2xf32> {dtc.grad = "w"}, tensor<8x2xf32>)
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %y = dtc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %loss = dtc.reduce_sum %y dims = [0, 1] : tensor<4x2xf32> -> tensor<f32>
  %ones = dtc.constant dense<1.0> : tensor<4x2xf32>
  %g = dtc.matmul %x, %ones transpose_lhs : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  %lr = dtc.constant dense<0.1> : tensor<f32>
  %s = dtc.mul %g, %lr : (tensor<8x2xf32>, tensor<f32>) -> tensor<8x2xf32>
  %new = dtc.sub %w, %s : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<8x2xf32>
  return %loss, %g, %new : tensor<f32>, tensor<8x2xf32>, tensor<8x2xf32>
}
)mlir";

class StepTest : public ::testing::Test {
protected:
  void SetUp() override {
    context.loadDialect<DTCDialect, func::FuncDialect>();
    module = parseSourceString<ModuleOp>(kStep, ParserConfig(&context));
    ASSERT_TRUE(module);
    step = *module->getOps<func::FuncOp>().begin();
  }
  /// The body's op at `index`.
  Operation *op(unsigned index) {
    return &*std::next(step.getBody().front().begin(), index);
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  func::FuncOp step;
};

TEST_F(StepTest, Phases) {
  auto phases = classifyStepPhases(step);
  StepPhase expected[] = {StepPhase::Forward,   StepPhase::Forward,
                          StepPhase::Backward,  StepPhase::Backward,
                          StepPhase::Optimizer, StepPhase::Optimizer,
                          StepPhase::Optimizer};
  ASSERT_EQ(phases.size(), 7u);
  for (unsigned i = 0; i < 7; ++i)
    EXPECT_EQ(phases.lookup(op(i)), expected[i]) << "op " << i;
}

TEST_F(StepTest, CostPerPhase) {
  StepCost cost = analyzeCost(step);
  // Forward: 2*4*2*8 for the matmul, 8 - 1 additions for the sum.
  const OpCost &forward = cost.phase(StepPhase::Forward);
  EXPECT_EQ(forward.matmulFlops, 2.0 * 4 * 2 * 8);
  EXPECT_EQ(forward.elementwiseFlops, 7);
  EXPECT_EQ(forward.bytesRead, 4 * (32 + 16) + 4 * 8);
  EXPECT_EQ(forward.bytesWritten, 4 * 8 + 4);
  // Backward: 2*8*2*4 for x^T @ ones; the constant costs nothing.
  const OpCost &backward = cost.phase(StepPhase::Backward);
  EXPECT_EQ(backward.matmulFlops, 2.0 * 8 * 2 * 4);
  EXPECT_EQ(backward.elementwiseFlops, 0);
  // Optimizer: 16 multiplications, 16 subtractions.
  const OpCost &optimizer = cost.phase(StepPhase::Optimizer);
  EXPECT_EQ(optimizer.matmulFlops, 0);
  EXPECT_EQ(optimizer.elementwiseFlops, 32);
  EXPECT_EQ(optimizer.bytesRead, 4 * (16 + 1) + 4 * (16 + 16));
  EXPECT_EQ(cost.total.matmulFlops, 256);
  EXPECT_EQ(cost.total.elementwiseFlops, 39);
  EXPECT_EQ(cost.total.transcendentalFlops, 0);
}

TEST_F(StepTest, MemoryByCategory) {
  StepMemory memory = analyzeMemory(step);
  EXPECT_EQ(memory.parameters, 64);
  EXPECT_EQ(memory.gradients, 64);
  EXPECT_EQ(memory.masterWeights, 64);
  EXPECT_EQ(memory.optimizerState, 64);
  // Intermediates (not returned): %y 32 B, %ones 32, %lr 4, %s 64; %lr
  // and %s are live together.
  EXPECT_EQ(memory.activationPeak, 68);
  EXPECT_EQ(memory.total(), 4 * 64 + 68);
}

/// A chain of three ops of 16 bytes each on one input, run per microbatch,
/// and a value computed once that every microbatch reads.
const char *kChain = R"mlir(
func.func @chain(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %v = dtc.neg %w : tensor<4xf32>
  %a = dtc.mul %x, %v : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = dtc.exp %a : tensor<4xf32>
  %c = dtc.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}
)mlir";

class LivenessTest : public ::testing::Test {
protected:
  void SetUp() override {
    context.loadDialect<DTCDialect, func::FuncDialect>();
    module = parseSourceString<ModuleOp>(kChain, ParserConfig(&context));
    ASSERT_TRUE(module);
    func = *module->getOps<func::FuncOp>().begin();
    for (Operation &op : func.getBody().front().without_terminator())
      ops.push_back(&op);
  }
  MemoryTimeline run(const Schedule &schedule) {
    // Every result counts, the returned one too, to see every allocation.
    return computeLiveness(schedule, [](Value) { return true; });
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
  std::vector<Operation *> ops; // v, a, b, c
};

TEST_F(LivenessTest, ProgramOrder) {
  MemoryTimeline timeline = run(programOrder(func.getBody().front()));
  // v; a (v freed: its last reader); b; c (a, b freed; c never read).
  EXPECT_EQ(timeline.live, (std::vector<int64_t>{16, 32, 32, 48}));
  EXPECT_EQ(timeline.peak, 48);
  EXPECT_EQ(timeline.peakIndex, 3);
  // Returned values are not activations: the peak of a and b.
  EXPECT_EQ(activationPeak(func), 32);
}

TEST_F(LivenessTest, MicrobatchesInFlight) {
  Operation *v = ops[0], *a = ops[1], *b = ops[2], *c = ops[3];
  // GPipe-like: both microbatches' a and b are live before either's c.
  // Instance 1 reads v's instance 0, the only one.
  Schedule allForward = {{v, 0, {}}, {a, 0, {}}, {a, 1, {}}, {b, 0, {}},
                         {b, 1, {}}, {c, 0, {}}, {c, 1, {}}};
  MemoryTimeline gpipe = run(allForward);
  // v 16; a0 32; a1 48 (then v freed: 32); b0 48; b1 64; c0 80 (then c0,
  // a0, b0 freed: 32); c1 48.
  EXPECT_EQ(gpipe.live, (std::vector<int64_t>{16, 32, 48, 48, 64, 80, 48}));
  EXPECT_EQ(gpipe.peak, 80);
  EXPECT_EQ(gpipe.peakIndex, 5);
  // One microbatch after the other holds one's values at a time (and v
  // until the second has read it).
  Schedule inTurn = {{v, 0, {}}, {a, 0, {}}, {b, 0, {}}, {c, 0, {}},
                     {a, 1, {}}, {b, 1, {}}, {c, 1, {}}};
  MemoryTimeline oneByOne = run(inTurn);
  EXPECT_EQ(oneByOne.live, (std::vector<int64_t>{16, 32, 48, 64, 32, 32, 48}));
  EXPECT_EQ(oneByOne.peak, 64);
  EXPECT_EQ(oneByOne.peakIndex, 3);
}

TEST_F(LivenessTest, Recomputation) {
  Operation *v = ops[0], *a = ops[1], *b = ops[2], *c = ops[3];
  // a is dropped after b reads it and recomputed (instance 1) for c, which
  // names it: the first a is freed after b, the copy after c.
  Schedule remat = {
      {v, 0, {}}, {a, 0, {}}, {b, 0, {}}, {a, 1, {0, 0}}, {c, 0, {1, 0}}};
  MemoryTimeline timeline = run(remat);
  // v 16; a0 32; b0 48 (then a0 freed: 32); a1 48 (then v freed: 32);
  // c 48.
  EXPECT_EQ(timeline.live, (std::vector<int64_t>{16, 32, 48, 48, 48}));
  // Had c read the first a, it would have been live beside its copy.
  Schedule keep = {
      {v, 0, {}}, {a, 0, {}}, {b, 0, {}}, {a, 1, {0, 0}}, {c, 0, {0, 0}}};
  // ... a1 64 (never read: freed, and v: 32) ... c 48.
  EXPECT_EQ(run(keep).live, (std::vector<int64_t>{16, 32, 48, 64, 48}));
}

/// A table computed from constants alone (a rotary table, a mask), read by
/// the step after an op that depends on its input.
const char *kInvariant = R"mlir(
func.func @invariant(%x: tensor<8xf32>) -> tensor<8xf32> {
  %a = dtc.exp %x : tensor<8xf32>
  %i = dtc.iota dim = 0 : tensor<8xi64>
  %f = dtc.cast %i : tensor<8xi64> to tensor<8xf32>
  %t = dtc.cos %f : tensor<8xf32>
  %y = dtc.mul %a, %t : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}
)mlir";

TEST(StepInvariance, ComputedOnceAtLoad) {
  MLIRContext context;
  context.loadDialect<DTCDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(kInvariant, ParserConfig(&context));
  ASSERT_TRUE(module);
  auto func = *module->getOps<func::FuncOp>().begin();
  // iota, cast and cos first (at load), then exp and mul, each once.
  Schedule schedule = programOrder(func.getBody().front());
  std::vector<StringRef> names;
  std::vector<bool> invariant;
  for (const ScheduledOp &entry : schedule) {
    names.push_back(entry.op->getName().stripDialect());
    invariant.push_back(entry.stepInvariant);
  }
  EXPECT_EQ(names,
            (std::vector<StringRef>{"iota", "cast", "cos", "exp", "mul"}));
  EXPECT_EQ(invariant,
            (std::vector<bool>{true, true, true, false, false}));
  // Per step: exp (8 transcendental) and mul (8 elementwise) only.
  StepCost cost = analyzeCost(func);
  EXPECT_EQ(cost.total.transcendentalFlops, 8);
  EXPECT_EQ(cost.total.elementwiseFlops, 8);
  // Memory counts them where they run, as the executor holds them: the i64
  // iota (64 B) beside its cast (32 B); the table (32 B) is then held from
  // the start to the mul, beside exp's result and the mul's (32 B each).
  MemoryTimeline timeline = computeLiveness(
      schedule, [](Value value) { return !isa<BlockArgument>(value); });
  EXPECT_EQ(timeline.live, (std::vector<int64_t>{64, 96, 64, 64, 96}));
}

} // namespace
