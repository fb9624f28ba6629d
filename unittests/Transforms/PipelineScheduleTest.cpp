//===- PipelineScheduleTest.cpp - schedules, checker and simulator --------===//
//
// The expected bubbles and activation counts are the papers' closed forms
// (GPipe, PipeDream-flush 1F1B, Megatron-LM's interleaved 1F1B, Qi et al.'s
// zero-bubble ZB-H1), not figures the simulator printed.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Pipeline/Schedule.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

using namespace mlir::dtc::pipeline;

namespace {

Schedule build(ScheduleKind kind, int64_t p, int64_t m, int64_t v = 1) {
  Schedule schedule;
  EXPECT_EQ(buildSchedule(kind, p, m, v, schedule), "");
  EXPECT_EQ(checkSchedule(schedule), "")
      << getScheduleName(kind).str() << " p=" << p << " m=" << m;
  return schedule;
}

/// A rank's whole share of the model costs F = B = W = 1 and keeps one
/// unit of activations per microbatch; a stage is 1/V of it.
Timeline simulateUnit(const Schedule &s) {
  double share = 1.0 / s.stagesPerRank;
  return simulateSchedule(
      s, FragmentCosts::uniform(s.getNumStages(), share, share, share, share));
}

struct Shape {
  int64_t p, m;
};
std::vector<Shape> shapes() {
  std::vector<Shape> out;
  for (int64_t p : {2, 3, 4, 8})
    for (int64_t factor : {1, 2, 4})
      out.push_back({p, factor * p});
  return out;
}

TEST(PipelineSchedule, GPipeAndOneFOneBBubble) {
  for (ScheduleKind kind : {ScheduleKind::GPipe, ScheduleKind::OneFOneB})
    for (Shape s : shapes()) {
      Timeline t = simulateUnit(build(kind, s.p, s.m));
      double expected = double(s.p - 1) / (s.m + s.p - 1);
      for (int64_t r = 0; r < s.p; ++r)
        EXPECT_NEAR(t.getBubbleFraction(r), expected, 1e-12)
            << getScheduleName(kind).str() << " p=" << s.p << " m=" << s.m
            << " rank " << r;
      EXPECT_EQ(t.transfers, 2 * (s.p - 1) * s.m);
    }
}

TEST(PipelineSchedule, InterleavedBubble) {
  for (int64_t v : {2, 3})
    for (Shape s : shapes()) {
      Timeline t = simulateUnit(build(ScheduleKind::Interleaved, s.p, s.m, v));
      double expected = double(s.p - 1) / (v * s.m + s.p - 1);
      EXPECT_NEAR(t.getMaxBubbleFraction(), expected, 1e-12)
          << "p=" << s.p << " m=" << s.m << " v=" << v;
    }
}

TEST(PipelineSchedule, ZeroBubbleH1Bubble) {
  for (Shape s : shapes()) {
    Timeline t = simulateUnit(build(ScheduleKind::ZeroBubbleH1, s.p, s.m));
    double expected = double(s.p - 1) / (3 * s.m + s.p - 1);
    EXPECT_NEAR(t.getMaxBubbleFraction(), expected, 1e-12)
        << "p=" << s.p << " m=" << s.m;
  }
}

TEST(PipelineSchedule, ActivationsInFlight) {
  for (Shape s : shapes()) {
    Timeline gpipe = simulateUnit(build(ScheduleKind::GPipe, s.p, s.m));
    Timeline oneFOneB = simulateUnit(build(ScheduleKind::OneFOneB, s.p, s.m));
    Timeline zbh1 = simulateUnit(build(ScheduleKind::ZeroBubbleH1, s.p, s.m));
    EXPECT_EQ(gpipe.peakActivationBytes[0], s.m);
    for (int64_t r = 0; r < s.p; ++r) {
      EXPECT_EQ(oneFOneB.peakActivationBytes[r], std::min(s.p - r, s.m));
      EXPECT_LE(zbh1.peakActivationBytes[r], oneFOneB.peakActivationBytes[r]);
      EXPECT_LE(zbh1.peakDeferredWeights[r], s.p);
    }
    // Interleaved: P (1 + (P-1)/(P V)) microbatches' worth on rank 0.
    for (int64_t v : {2, 3}) {
      if (s.m == s.p)
        continue; // all warm-up: every microbatch's forward first
      Timeline t = simulateUnit(build(ScheduleKind::Interleaved, s.p, s.m, v));
      EXPECT_NEAR(t.peakActivationBytes[0],
                  s.p * (1 + double(s.p - 1) / (s.p * v)), 1e-12)
          << "p=" << s.p << " m=" << s.m << " v=" << v;
    }
  }
}

TEST(PipelineSchedule, ZeroBubbleV) {
  for (Shape s : shapes()) {
    Schedule zbv = build(ScheduleKind::ZeroBubbleV, s.p, s.m);
    Timeline t = simulateUnit(zbv);
    Timeline oneFOneB = simulateUnit(build(ScheduleKind::OneFOneB, s.p, s.m));
    // The first and the last stage on rank 0; the V's turn on rank P-1.
    EXPECT_EQ(zbv.getRank(0), 0);
    EXPECT_EQ(zbv.getRank(2 * s.p - 1), 0);
    EXPECT_EQ(zbv.getRank(s.p), s.p - 1);
    EXPECT_EQ(t.transfers, 2 * oneFOneB.transfers);
    for (int64_t r = 0; r < s.p; ++r)
      EXPECT_LE(t.peakActivationBytes[r], oneFOneB.peakActivationBytes[0]);
    // The least any schedule can idle: rank P-1 waits for P-1 half-share
    // forwards before its first, then works 3M units.
    double warmup = (s.p - 1) / 2.0;
    EXPECT_NEAR(t.getMaxBubbleFraction(), warmup / (3 * s.m + warmup), 1e-12)
        << "p=" << s.p << " m=" << s.m;
  }
}

TEST(PipelineSchedule, CheckerRejectsDeadlock) {
  // Rank 1 waits for microbatch 1 while rank 0 can only send microbatch 0.
  Schedule s = build(ScheduleKind::GPipe, 2, 2);
  std::swap(s.actions[1][0], s.actions[1][1]);
  std::string error = checkSchedule(s);
  EXPECT_NE(error.find("deadlocks"), std::string::npos) << error;
  EXPECT_NE(error.find("rank 1 waits before F1@s1"), std::string::npos)
      << error;
}

TEST(PipelineSchedule, CheckerRejectsBadLists) {
  Schedule s = build(ScheduleKind::OneFOneB, 2, 4);
  Schedule missing = s;
  missing.actions[0].pop_back();
  EXPECT_NE(checkSchedule(missing).find("runs 15 of the 16"),
            std::string::npos);
  Schedule wrongRank = s;
  wrongRank.actions[0][0].stage = 1;
  EXPECT_NE(checkSchedule(wrongRank).find("stage 1 is on rank 1"),
            std::string::npos);
  Schedule early = s;
  // Rank 1's first backward before its forward.
  std::swap(early.actions[1][0], early.actions[1][1]);
  EXPECT_NE(checkSchedule(early).find("B0@s1 on rank 1 runs before what it "
                                      "reads"),
            std::string::npos)
      << checkSchedule(early);
  Schedule zb = build(ScheduleKind::ZeroBubbleH1, 2, 2);
  for (Action &a : zb.actions[0])
    if (a.kind == ActionKind::BackwardWeight)
      a.kind = ActionKind::Backward;
  EXPECT_NE(checkSchedule(zb).find("splits the backward"), std::string::npos);
}

TEST(PipelineSchedule, ShapeErrors) {
  Schedule s;
  EXPECT_NE(buildSchedule(ScheduleKind::Interleaved, 4, 6, 2, s)
                .find("not a multiple of pp=4"),
            std::string::npos);
  EXPECT_NE(buildSchedule(ScheduleKind::OneFOneB, 4, 8, 2, s)
                .find("interleaved schedule only"),
            std::string::npos);
  EXPECT_FALSE(parseScheduleKind("1f2b"));
  for (ScheduleKind kind :
       {ScheduleKind::GPipe, ScheduleKind::OneFOneB, ScheduleKind::Interleaved,
        ScheduleKind::ZeroBubbleH1, ScheduleKind::ZeroBubbleV})
    EXPECT_EQ(parseScheduleKind(getScheduleName(kind)), kind);
}

TEST(PipelineSchedule, ChromeTrace) {
  Schedule s = build(ScheduleKind::OneFOneB, 3, 6);
  Timeline t = simulateUnit(s);
  std::string text;
  llvm::raw_string_ostream os(text);
  writeChromeTrace(s, t, os);
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  const llvm::json::Array *events =
      parsed->getAsObject()->getArray("traceEvents");
  ASSERT_TRUE(events);
  int64_t tracks = 0, spans = 0;
  for (const llvm::json::Value &e : *events) {
    llvm::StringRef ph = *e.getAsObject()->getString("ph");
    tracks += ph == "M";
    spans += ph == "X";
  }
  EXPECT_EQ(tracks, 3);
  EXPECT_EQ(spans, 2 * 3 * 6);
}

} // namespace
