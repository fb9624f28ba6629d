//===- ArenaPlanTest.cpp - the static arena against liveness --------------===//
//
// Random dataflow graphs of values of random sizes: the plan must keep
// apart every two values that live at the same time, stay inside its arena
// and be no smaller than the most bytes live at once; a slot moved onto
// another must be caught by the same check. A hand-counted case pins the
// lower bound.
//
//===----------------------------------------------------------------------===//

#include "dtc/Analysis/ArenaPlan.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <random>

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// A function of `count` negations and additions over values of the sizes
/// 1..`maxRows` rows of 16 f32 (one size per chain), each reading earlier
/// values of its size at random; the last few values are returned.
std::string randomGraph(std::mt19937 &rng, int count, int maxRows) {
  std::uniform_int_distribution<int> rowsOf(1, maxRows);
  std::vector<std::vector<int>> bySize(maxRows + 1);
  std::string body;
  auto type = [](int rows) {
    return "tensor<" + std::to_string(rows) + "x16xf32>";
  };
  std::string args;
  for (int rows = 1; rows <= maxRows; ++rows) {
    args += std::string(rows > 1 ? ", " : "") + "%a" + std::to_string(rows) +
            ": " + type(rows);
    bySize[rows].push_back(-rows); // the argument
  }
  auto name = [](int v) {
    return v < 0 ? "%a" + std::to_string(-v) : "%v" + std::to_string(v);
  };
  for (int v = 0; v < count; ++v) {
    int rows = rowsOf(rng);
    std::vector<int> &pool = bySize[rows];
    // Mostly recent values, sometimes old ones (long lives).
    auto pick = [&]() {
      int n = pool.size();
      std::uniform_int_distribution<int> any(0, n - 1),
          recent(std::max(0, n - 3), n - 1);
      return pool[(rng() % 4 == 0) ? any(rng) : recent(rng)];
    };
    if (rng() % 3 == 0)
      body += "  " + name(v) + " = dtc.neg " + name(pick()) + " : " +
              type(rows) + "\n";
    else
      body += "  " + name(v) + " = dtc.add " + name(pick()) + ", " +
              name(pick()) + " : (" + type(rows) + ", " + type(rows) + ") -> " +
              type(rows) + "\n";
    pool.push_back(v);
  }
  int last = bySize[1].back();
  return "func.func @f(" + args + ") -> " + type(1) + " {\n" + body +
         "  return " + name(last) + " : " + type(1) + "\n}\n";
}

TEST(ArenaPlan, RandomGraphsHaveNoOverlap) {
  MLIRContext context;
  context.loadDialect<DTCDialect, func::FuncDialect>();
  std::mt19937 rng(42);
  for (int trial = 0; trial < 40; ++trial) {
    std::string text = randomGraph(rng, 60 + trial * 5, 1 + trial % 7);
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(text, ParserConfig(&context));
    ASSERT_TRUE(module) << text;
    auto f = *module->getOps<func::FuncOp>().begin();
    ArenaPlan plan = planArena(f);
    EXPECT_FALSE(hasOverlap(plan)) << text;
    EXPECT_GE(plan.size, plan.lowerBound);
    EXPECT_GT(plan.lowerBound, 0);
    // Moving a slot onto another one that lives at the same time is caught.
    for (size_t i = 0; i + 1 < plan.slots.size(); ++i) {
      const LiveBuffer &a = plan.slots[i].buffer, &b = plan.slots[i + 1].buffer;
      if (a.first <= b.last && b.first <= a.last) {
        ArenaPlan broken = plan;
        broken.slots[i + 1].offset = broken.slots[i].offset;
        EXPECT_TRUE(hasOverlap(broken));
        break;
      }
    }
  }
}

TEST(ArenaPlan, LargeGraphsArePlacedInAllocationOrder) {
  // Over 10,000 buffers the plan is the heap allocator's (best fit in
  // allocation order, kept by hole size): still no overlap, near the bound.
  MLIRContext context;
  context.loadDialect<DTCDialect, func::FuncDialect>();
  std::mt19937 rng(7);
  for (int maxRows : {1, 5}) {
    std::string text = randomGraph(rng, 12000, maxRows);
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(text, ParserConfig(&context));
    ASSERT_TRUE(module);
    ArenaPlan plan = planArena(*module->getOps<func::FuncOp>().begin());
    ASSERT_GT(plan.slots.size(), 10000u);
    EXPECT_FALSE(hasOverlap(plan));
    EXPECT_GE(plan.size, plan.lowerBound);
    EXPECT_LE(plan.size, plan.lowerBound * 3 / 2);
    std::printf("%zu buffers: arena %lld B, bound %lld B\n", plan.slots.size(),
                static_cast<long long>(plan.size),
                static_cast<long long>(plan.lowerBound));
  }
}

TEST(ArenaPlan, LowerBoundCountedByHand) {
  // %a (64 B), %b (128 B) and %c (64 B) live at once while %c reads %a;
  // then %d (4 B, 64 aligned) takes %a's place beside %b and %c.
  const char *text = R"mlir(
func.func @f(%x: tensor<16xf32>, %y: tensor<32xf32>) -> tensor<16xf32> {
  %a = dtc.neg %x : tensor<16xf32>
  %b = dtc.neg %y : tensor<32xf32>
  %c = dtc.neg %a : tensor<16xf32>
  %d = dtc.reduce_sum %b dims = [0] keep_dims : tensor<32xf32> -> tensor<1xf32>
  %e = dtc.add %c, %d : (tensor<16xf32>, tensor<1xf32>) -> tensor<16xf32>
  return %e : tensor<16xf32>
}
)mlir";
  MLIRContext context;
  context.loadDialect<DTCDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, ParserConfig(&context));
  ASSERT_TRUE(module);
  ArenaPlan plan = planArena(*module->getOps<func::FuncOp>().begin());
  ASSERT_EQ(plan.slots.size(), 4u);
  EXPECT_EQ(plan.lowerBound, 128 + 64 + 64);
  EXPECT_EQ(plan.size, plan.lowerBound);
  EXPECT_FALSE(hasOverlap(plan));
}

} // namespace
