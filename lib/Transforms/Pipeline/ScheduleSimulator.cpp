//===- ScheduleSimulator.cpp - timing a pipeline schedule -----------------===//
//
// Each rank runs its list in order; an action starts once its rank is free
// and what it reads is there (a transfer's time after its producer ends
// where the producer is on another rank). Activations are counted from a
// forward's start to the end of the input gradient that reads them last.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Pipeline/Schedule.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <tuple>

using namespace mlir::dtc::pipeline;

FragmentCosts FragmentCosts::uniform(int64_t stages, double forward,
                                     double backwardInput,
                                     double backwardWeight,
                                     double activationBytes) {
  FragmentCosts costs;
  costs.forward.assign(stages, forward);
  costs.backwardInput.assign(stages, backwardInput);
  costs.backwardWeight.assign(stages, backwardWeight);
  costs.activationBytes.assign(stages, activationBytes);
  return costs;
}

double Timeline::getBubbleFraction(int64_t rank) const {
  return makespan > 0 ? (makespan - busy[rank]) / makespan : 0;
}

double Timeline::getMaxBubbleFraction() const {
  double most = 0;
  for (int64_t r = 0, e = busy.size(); r < e; ++r)
    most = std::max(most, getBubbleFraction(r));
  return most;
}

static double getCost(const FragmentCosts &costs, const Action &a) {
  switch (a.kind) {
  case ActionKind::Forward:
    return costs.forward[a.stage];
  case ActionKind::Backward:
    return costs.backwardInput[a.stage] + costs.backwardWeight[a.stage];
  case ActionKind::BackwardInput:
    return costs.backwardInput[a.stage];
  case ActionKind::BackwardWeight:
    return costs.backwardWeight[a.stage];
  }
  llvm_unreachable("unknown action kind");
}

Timeline mlir::dtc::pipeline::simulateSchedule(const Schedule &schedule,
                                               const FragmentCosts &costs) {
  using Key = std::tuple<int, int64_t, int64_t>;
  auto key = [](ActionKind kind, int64_t stage, int64_t microbatch) {
    return Key{static_cast<int>(kind), stage, microbatch};
  };
  int64_t p = schedule.ranks;
  Timeline timeline;
  timeline.ranks.assign(p, {});
  timeline.busy.assign(p, 0);
  timeline.peakActivationBytes.assign(p, 0);
  timeline.peakDeferredWeights.assign(p, 0);
  std::map<Key, double> ends;
  std::vector<double> freeAt(p, 0), held(p, 0);
  std::vector<int64_t> deferred(p, 0);

  // When what `a` reads from stage `from` is on `a`'s rank, or nullopt if
  // it has not been computed yet.
  auto arrival = [&](const Action &a, ActionKind kind,
                     int64_t from) -> std::optional<double> {
    auto it = ends.find(key(kind, from, a.microbatch));
    if (it == ends.end())
      return std::nullopt;
    bool remote = schedule.getRank(from) != schedule.getRank(a.stage);
    return it->second + (remote ? costs.transfer : 0);
  };
  ActionKind gradientKind = schedule.splitsBackward()
                                ? ActionKind::BackwardInput
                                : ActionKind::Backward;

  std::vector<size_t> next(p, 0);
  for (bool progress = true; progress;) {
    progress = false;
    // Each rank runs its actions in order as far as their inputs have
    // been computed (the times do not depend on the order ranks are
    // visited in: an action starts when its rank is free and its inputs
    // have arrived).
    for (int64_t r = 0; r < p; ++r) {
      while (next[r] < schedule.actions[r].size()) {
        const Action &a = schedule.actions[r][next[r]];
        std::vector<Action> reads = getReads(schedule, a);
        double start = freeAt[r];
        bool isReady = true;
        for (const Action &read : reads) {
          std::optional<double> at = arrival(a, read.kind, read.stage);
          isReady &= at.has_value();
          start = std::max(start, at.value_or(0));
        }
        if (!isReady)
          break;
        for (const Action &read : reads)
          timeline.transfers += schedule.getRank(read.stage) != r;
        double cost = getCost(costs, a), end = start + cost;
        ends[key(a.kind, a.stage, a.microbatch)] = end;
        timeline.ranks[r].push_back({a, start, end});
        timeline.busy[r] += cost;
        timeline.makespan = std::max(timeline.makespan, end);
        // (An action with nothing to compute -- the first stage's input
        // gradient under the zero-bubble schedules -- holds up nothing: its
        // rank goes on, and what reads it waits for what it reads, as a
        // runtime that has no ops to run for it behaves.)
        if (cost > 0)
          freeAt[r] = end;
        if (a.kind == ActionKind::Forward)
          held[r] += costs.activationBytes[a.stage];
        timeline.peakActivationBytes[r] =
            std::max(timeline.peakActivationBytes[r], held[r]);
        if (a.kind == gradientKind)
          held[r] -= costs.activationBytes[a.stage];
        if (a.kind == ActionKind::BackwardInput)
          ++deferred[r];
        if (a.kind == ActionKind::BackwardWeight)
          --deferred[r];
        timeline.peakDeferredWeights[r] =
            std::max(timeline.peakDeferredWeights[r], deferred[r]);
        ++next[r];
        progress = true;
      }
    }
  }
  return timeline;
}

void mlir::dtc::pipeline::writeChromeTrace(const Schedule &schedule,
                                           const Timeline &timeline,
                                           llvm::raw_ostream &os) {
  llvm::json::OStream json(os, 1);
  json.object([&] {
    json.attribute("displayTimeUnit", "ms");
    json.attributeArray("traceEvents", [&] {
      for (int64_t r = 0, e = timeline.ranks.size(); r < e; ++r) {
        json.object([&] {
          json.attribute("name", "thread_name");
          json.attribute("ph", "M");
          json.attribute("pid", 0);
          json.attribute("tid", r);
          json.attributeObject("args", [&] {
            json.attribute("name", "rank " + std::to_string(r));
          });
        });
        for (const TimedAction &t : timeline.ranks[r]) {
          json.object([&] {
            json.attribute("name", getActionName(t.action));
            json.attribute("cat", getActionKindName(t.action.kind));
            json.attribute("ph", "X");
            json.attribute("pid", 0);
            json.attribute("tid", r);
            json.attribute("ts", t.start * 1e6);
            json.attribute("dur", (t.end - t.start) * 1e6);
            json.attributeObject("args", [&] {
              json.attribute("microbatch", t.action.microbatch);
              json.attribute("stage", t.action.stage);
              json.attribute("schedule", getScheduleName(schedule.kind));
            });
          });
        }
      }
    });
  });
}
