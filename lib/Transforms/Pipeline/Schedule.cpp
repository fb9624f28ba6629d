//===- Schedule.cpp - building and checking pipeline schedules ------------===//
//
// GPipe, 1F1B and interleaved 1F1B are written down as their papers and
// Megatron-LM order them. The zero-bubble schedules are found by running
// the ranks on unit costs and letting each free rank take, in order of
// preference, an input gradient (the ranks below wait for it), a forward
// (while the activations it keeps stay within 1F1B's), or a weight
// gradient (nobody waits for it, so it fills what would be idle time).
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Pipeline/Schedule.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

using namespace mlir::dtc::pipeline;

std::optional<ScheduleKind>
mlir::dtc::pipeline::parseScheduleKind(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ScheduleKind>>(name)
      .Case("gpipe", ScheduleKind::GPipe)
      .Case("1f1b", ScheduleKind::OneFOneB)
      .Case("interleaved", ScheduleKind::Interleaved)
      .Case("zb-h1", ScheduleKind::ZeroBubbleH1)
      .Case("zbv", ScheduleKind::ZeroBubbleV)
      .Default(std::nullopt);
}

llvm::StringRef mlir::dtc::pipeline::getScheduleName(ScheduleKind kind) {
  switch (kind) {
  case ScheduleKind::GPipe:
    return "gpipe";
  case ScheduleKind::OneFOneB:
    return "1f1b";
  case ScheduleKind::Interleaved:
    return "interleaved";
  case ScheduleKind::ZeroBubbleH1:
    return "zb-h1";
  case ScheduleKind::ZeroBubbleV:
    return "zbv";
  }
  llvm_unreachable("unknown schedule kind");
}

static const char *const kActionKindNames[] = {
    "forward", "backward", "backward-input", "backward-weight"};

llvm::StringRef mlir::dtc::pipeline::getActionKindName(ActionKind kind) {
  return kActionKindNames[static_cast<int>(kind)];
}

std::optional<ActionKind>
mlir::dtc::pipeline::parseActionKind(llvm::StringRef name) {
  for (int kind = 0; kind < 4; ++kind)
    if (name == kActionKindNames[kind])
      return static_cast<ActionKind>(kind);
  return std::nullopt;
}

std::string mlir::dtc::pipeline::getActionName(const Action &action) {
  static const char letters[] = {'F', 'B', 'I', 'W'};
  return std::string(1, letters[static_cast<int>(action.kind)]) +
         std::to_string(action.microbatch) + "@s" +
         std::to_string(action.stage);
}

int64_t Schedule::getRank(int64_t stage) const {
  if (kind == ScheduleKind::ZeroBubbleV && stage >= ranks)
    return 2 * ranks - 1 - stage;
  return stage % ranks;
}

std::vector<Action> mlir::dtc::pipeline::getReads(const Schedule &schedule,
                                                  const Action &action) {
  int64_t m = action.microbatch, s = action.stage;
  ActionKind gradient = schedule.splitsBackward() ? ActionKind::BackwardInput
                                                  : ActionKind::Backward;
  std::vector<Action> reads;
  switch (action.kind) {
  case ActionKind::Forward:
    if (s > 0)
      reads.push_back({ActionKind::Forward, s - 1, m});
    break;
  case ActionKind::Backward:
  case ActionKind::BackwardInput:
    reads.push_back({ActionKind::Forward, s, m});
    if (s + 1 < schedule.getNumStages())
      reads.push_back({gradient, s + 1, m});
    break;
  case ActionKind::BackwardWeight:
    reads.push_back({ActionKind::BackwardInput, s, m});
    break;
  }
  return reads;
}

//===----------------------------------------------------------------------===//
// Building
//===----------------------------------------------------------------------===//

static Action forward(int64_t stage, int64_t microbatch) {
  return {ActionKind::Forward, stage, microbatch};
}
static Action backward(int64_t stage, int64_t microbatch) {
  return {ActionKind::Backward, stage, microbatch};
}

/// All forwards, then all backwards (Huang et al., 2019).
static void buildGPipe(Schedule &schedule) {
  for (int64_t r = 0; r < schedule.ranks; ++r) {
    for (int64_t m = 0; m < schedule.microbatches; ++m)
      schedule.actions[r].push_back(forward(r, m));
    for (int64_t m = 0; m < schedule.microbatches; ++m)
      schedule.actions[r].push_back(backward(r, m));
  }
}

/// Rank r runs P-1-r forwards ahead, then alternates one forward with one
/// backward, then drains (PipeDream-flush, Narayanan et al., 2021).
static void buildOneFOneB(Schedule &schedule) {
  int64_t p = schedule.ranks, m = schedule.microbatches;
  for (int64_t r = 0; r < p; ++r) {
    auto &list = schedule.actions[r];
    int64_t warmup = std::min(p - r - 1, m);
    for (int64_t i = 0; i < warmup; ++i)
      list.push_back(forward(r, i));
    for (int64_t i = 0; i < m - warmup; ++i) {
      list.push_back(forward(r, warmup + i));
      list.push_back(backward(r, i));
    }
    for (int64_t i = m - warmup; i < m; ++i)
      list.push_back(backward(r, i));
  }
}

/// Megatron-LM's interleaved 1F1B: rank r holds stages r, r+P, ...; the
/// microbatches go through a rank's chunks in groups of P.
static void buildInterleaved(Schedule &schedule) {
  int64_t p = schedule.ranks, v = schedule.stagesPerRank,
          m = schedule.microbatches, total = m * v;
  auto chunkAction = [&](int64_t r, int64_t k, bool isForward) {
    int64_t chunk = (k / p) % v;
    if (!isForward)
      chunk = v - 1 - chunk;
    int64_t microbatch = (k / (p * v)) * p + k % p;
    return isForward ? forward(chunk * p + r, microbatch)
                     : backward(chunk * p + r, microbatch);
  };
  for (int64_t r = 0; r < p; ++r) {
    auto &list = schedule.actions[r];
    int64_t warmup =
        m == p ? total : std::min((p - r - 1) * 2 + (v - 1) * p, total);
    for (int64_t k = 0; k < warmup; ++k)
      list.push_back(chunkAction(r, k, true));
    for (int64_t k = 0; k < total - warmup; ++k) {
      list.push_back(chunkAction(r, warmup + k, true));
      list.push_back(chunkAction(r, k, false));
    }
    for (int64_t k = total - warmup; k < total; ++k)
      list.push_back(chunkAction(r, k, false));
  }
}

namespace {
/// Runs the ranks on unit costs and lets each free rank pick its next
/// action (the zero-bubble schedules).
class GreedyBuilder {
public:
  GreedyBuilder(Schedule &schedule)
      : schedule(schedule),
        done(4 * schedule.getNumStages() * schedule.microbatches, kNotYet) {}

  void run() {
    int64_t stages = schedule.getNumStages(), m = schedule.microbatches;
    int64_t remaining = 3 * stages * m;
    std::vector<int64_t> freeAt(schedule.ranks, 0);
    for (int64_t time = 0; remaining > 0 && time < 100 * stages * m; ++time) {
      for (int64_t r = 0; r < schedule.ranks; ++r) {
        if (freeAt[r] > time)
          continue;
        std::optional<Action> next = pick(r, time);
        if (!next)
          continue;
        schedule.actions[r].push_back(*next);
        done[index(*next)] = time + 1;
        freeAt[r] = time + 1;
        --remaining;
      }
    }
  }

private:
  static constexpr int64_t kNotYet = -1;
  /// Where `done` keeps `a`'s end.
  size_t index(const Action &a) const {
    return (static_cast<size_t>(a.kind) * schedule.getNumStages() + a.stage) *
               schedule.microbatches +
           a.microbatch;
  }
  bool started(const Action &a) const { return done[index(a)] != kNotYet; }

  bool ready(const Action &a, int64_t time) const {
    return llvm::all_of(getReads(schedule, a), [&](const Action &read) {
      int64_t end = done[index(read)];
      return end != kNotYet && end <= time;
    });
  }

  /// The stages of rank `r`, those nearer the loss first.
  std::vector<int64_t> stagesOf(int64_t r) const {
    std::vector<int64_t> stages;
    for (int64_t s = schedule.getNumStages() - 1; s >= 0; --s)
      if (schedule.getRank(s) == r)
        stages.push_back(s);
    return stages;
  }

  /// Microbatches rank `r` holds activations of (forward started, input
  /// gradient not), in stage units.
  int64_t inFlight(int64_t r) const {
    int64_t count = 0;
    for (int64_t s : stagesOf(r))
      for (int64_t mb = 0; mb < schedule.microbatches; ++mb)
        count += started(forward(s, mb)) &&
                 !started({ActionKind::BackwardInput, s, mb});
    return count;
  }
  /// Weight gradients rank `r` has left for later.
  int64_t deferred(int64_t r) const {
    int64_t count = 0;
    for (int64_t s : stagesOf(r))
      for (int64_t mb = 0; mb < schedule.microbatches; ++mb)
        count += started({ActionKind::BackwardInput, s, mb}) &&
                 !started({ActionKind::BackwardWeight, s, mb});
    return count;
  }

  /// Whether rank `r` may start another forward. ZB-H1 keeps 1F1B's
  /// activations (P - r microbatches between forward and input gradient on
  /// rank r); ZBV keeps rank 0's P microbatches of a whole rank's share (2P
  /// of its half-share stages) on every rank, weight-gradient inputs
  /// included.
  bool mayStartForward(int64_t r) const {
    int64_t p = schedule.ranks, m = schedule.microbatches;
    if (schedule.kind == ScheduleKind::ZeroBubbleV)
      return inFlight(r) + deferred(r) < 2 * std::min(p, m);
    return inFlight(r) < std::min(p - r, m);
  }

  /// ZB-H1 leaves at most P weight gradients for later (enough to fill the
  /// drain's gaps); ZBV's cap above bounds them.
  bool mustRunWeight(int64_t r) const {
    return schedule.kind == ScheduleKind::ZeroBubbleH1 &&
           deferred(r) >= schedule.ranks;
  }

  std::optional<Action> pick(int64_t r, int64_t time) const {
    std::vector<int64_t> stages = stagesOf(r);
    auto first = [&](ActionKind kind) -> std::optional<Action> {
      for (int64_t mb = 0; mb < schedule.microbatches; ++mb)
        for (int64_t s : stages) {
          Action a{kind, s, mb};
          if (!started(a) && ready(a, time))
            return a;
        }
      return std::nullopt;
    };
    if (auto a = first(ActionKind::BackwardInput))
      return a;
    if (mustRunWeight(r))
      if (auto a = first(ActionKind::BackwardWeight))
        return a;
    if (mayStartForward(r))
      if (auto a = first(ActionKind::Forward))
        return a;
    return first(ActionKind::BackwardWeight);
  }

  Schedule &schedule;
  /// Per action, the time it ends (kNotYet before it starts).
  std::vector<int64_t> done;
};
} // namespace

std::string
mlir::dtc::pipeline::parsePipelineSplit(llvm::StringRef text,
                                        std::vector<int64_t> &layersPerStage) {
  layersPerStage.clear();
  if (text == "auto")
    return "";
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, ',');
  int64_t next = 0; // the first layer of the next range
  for (llvm::StringRef part : parts) {
    auto [first, last] = part.trim().split('-');
    int64_t from, to;
    if (last.empty()) { // a count
      if (first.getAsInteger(10, to) || to < 1)
        return "'" + part.str() +
               "' is not a number of layers (1 or more) or a range of them";
      layersPerStage.push_back(to);
      continue;
    }
    if (first.getAsInteger(10, from) || last.getAsInteger(10, to) || to < from)
      return "'" + part.str() + "' is not a range of layers (FIRST-LAST)";
    if (from != next)
      return "the ranges must follow each other from layer 0: '" + part.str() +
             "' should start at layer " + std::to_string(next);
    layersPerStage.push_back(to - from + 1);
    next = to + 1;
  }
  return "";
}

std::string mlir::dtc::pipeline::buildRecordedSchedule(llvm::StringRef name,
                                                       int64_t ranks,
                                                       int64_t microbatches,
                                                       int64_t stagesPerRank,
                                                       Schedule &schedule) {
  std::optional<ScheduleKind> kind = parseScheduleKind(name);
  if (!kind)
    return "unknown pipeline schedule '" + name.str() + "'";
  return buildSchedule(*kind, ranks, microbatches,
                       *kind == ScheduleKind::Interleaved ? stagesPerRank : 1,
                       schedule);
}

std::string mlir::dtc::pipeline::buildSchedule(ScheduleKind kind, int64_t ranks,
                                               int64_t microbatches,
                                               int64_t virtualStages,
                                               Schedule &schedule) {
  if (ranks < 1 || microbatches < 1)
    return "a pipeline needs at least one stage and one microbatch";
  if (virtualStages < 1)
    return "--virtual-stages must be at least 1";
  if (kind != ScheduleKind::Interleaved && virtualStages != 1)
    return "--virtual-stages applies to the interleaved schedule only";
  if (kind == ScheduleKind::Interleaved && microbatches % ranks != 0)
    return "the interleaved schedule runs microbatches in groups of the "
           "pipeline's ranks: " +
           std::to_string(microbatches) +
           " microbatches is not a multiple "
           "of pp=" +
           std::to_string(ranks);
  schedule = Schedule();
  schedule.kind = kind;
  schedule.ranks = ranks;
  schedule.microbatches = microbatches;
  schedule.stagesPerRank = kind == ScheduleKind::Interleaved   ? virtualStages
                           : kind == ScheduleKind::ZeroBubbleV ? 2
                                                               : 1;
  schedule.actions.assign(ranks, {});
  switch (kind) {
  case ScheduleKind::GPipe:
    buildGPipe(schedule);
    break;
  case ScheduleKind::OneFOneB:
    buildOneFOneB(schedule);
    break;
  case ScheduleKind::Interleaved:
    buildInterleaved(schedule);
    break;
  case ScheduleKind::ZeroBubbleH1:
  case ScheduleKind::ZeroBubbleV:
    GreedyBuilder(schedule).run();
    break;
  }
  return "";
}

//===----------------------------------------------------------------------===//
// Checking
//===----------------------------------------------------------------------===//

namespace {
/// A point-to-point message: the activation (forward) or gradient
/// (backward) of `microbatch` leaving `stage`.
struct Message {
  bool isGradient;
  int64_t stage, microbatch;
  int64_t from, to;

  bool operator<(const Message &o) const {
    return std::tie(isGradient, stage, microbatch) <
           std::tie(o.isGradient, o.stage, o.microbatch);
  }
  std::string str() const {
    return std::string(isGradient ? "gradient" : "activation") + " of " +
           std::to_string(microbatch) + " from stage " + std::to_string(stage) +
           " (rank " + std::to_string(from) + " -> " + std::to_string(to) + ")";
  }
};
} // namespace

static bool isBackwardInput(ActionKind kind) {
  return kind == ActionKind::Backward || kind == ActionKind::BackwardInput;
}

/// What `action` receives from other ranks before it runs.
static std::vector<Message> receives(const Schedule &s, const Action &a) {
  int64_t rank = s.getRank(a.stage);
  std::vector<Message> out;
  for (const Action &read : getReads(s, a))
    if (s.getRank(read.stage) != rank)
      out.push_back({read.kind != ActionKind::Forward, read.stage,
                     read.microbatch, s.getRank(read.stage), rank});
  return out;
}

/// What `action` sends to other ranks after it runs.
static std::vector<Message> sends(const Schedule &s, const Action &a) {
  int64_t rank = s.getRank(a.stage), last = s.getNumStages() - 1;
  std::vector<Message> out;
  if (a.kind == ActionKind::Forward && a.stage < last &&
      s.getRank(a.stage + 1) != rank)
    out.push_back({false, a.stage, a.microbatch, rank, s.getRank(a.stage + 1)});
  if (isBackwardInput(a.kind) && a.stage > 0 && s.getRank(a.stage - 1) != rank)
    out.push_back({true, a.stage, a.microbatch, rank, s.getRank(a.stage - 1)});
  return out;
}

/// Every fragment instance once, on its stage's rank, after what it reads
/// there.
static std::string checkLists(const Schedule &s) {
  bool split = s.splitsBackward();
  std::set<std::tuple<int, int64_t, int64_t>> seen;
  int64_t last = s.getNumStages() - 1;
  for (int64_t r = 0; r < s.ranks; ++r) {
    for (const Action &a : s.actions[r]) {
      std::string name = getActionName(a) + " on rank " + std::to_string(r);
      if (a.stage < 0 || a.stage > last || a.microbatch < 0 ||
          a.microbatch >= s.microbatches)
        return name + " names no stage or microbatch of the pipeline";
      if (s.getRank(a.stage) != r)
        return name + ": stage " + std::to_string(a.stage) + " is on rank " +
               std::to_string(s.getRank(a.stage));
      if (a.kind != ActionKind::Forward &&
          split == (a.kind == ActionKind::Backward))
        return name + ": this schedule " +
               (split ? "splits" : "does not split") + " the backward";
      bool ordered = llvm::all_of(getReads(s, a), [&](const Action &read) {
        return s.getRank(read.stage) != r ||
               seen.count(
                   {static_cast<int>(read.kind), read.stage, read.microbatch});
      });
      if (!ordered)
        return name + " runs before what it reads on its rank";
      if (!seen.insert({static_cast<int>(a.kind), a.stage, a.microbatch})
               .second)
        return name + " runs twice";
    }
  }
  size_t expected = (split ? 3 : 2) * (last + 1) * s.microbatches;
  if (seen.size() != expected)
    return "the schedule runs " + std::to_string(seen.size()) + " of the " +
           std::to_string(expected) + " fragment instances";
  return "";
}

std::string mlir::dtc::pipeline::checkSchedule(const Schedule &s) {
  if (static_cast<int64_t>(s.actions.size()) != s.ranks)
    return "the schedule lists actions for " +
           std::to_string(s.actions.size()) + " ranks, not " +
           std::to_string(s.ranks);
  if (std::string error = checkLists(s); !error.empty())
    return error;

  // The protocol (Megatron-LM's batched point-to-point, widened to V
  // chunks): before action i a rank posts the sends of action i-1 and the
  // receives of the next action of each of its lanes (a stage's forwards, a
  // stage's backwards), action i's among them, then waits until the sends
  // of i-1 and the receives of i have met their peers'. A receive posted
  // early stays posted until its message comes: at most one per lane.
  std::vector<size_t> next(s.ranks, 0);
  std::vector<std::set<Message>> posted(s.ranks);
  std::vector<std::set<size_t>> receivesPosted(s.ranks);
  auto isForward = [](const Action &a) {
    return a.kind == ActionKind::Forward;
  };
  auto postReceives = [&](int64_t r, size_t i) {
    if (receivesPosted[r].insert(i).second)
      for (const Message &m : receives(s, s.actions[r][i]))
        posted[r].insert(m);
  };
  auto post = [&](int64_t r) {
    size_t i = next[r];
    const auto &list = s.actions[r];
    if (i > 0)
      for (const Message &m : sends(s, list[i - 1]))
        posted[r].insert(m);
    if (i == list.size())
      return;
    // The next action of each of the rank's lanes (a stage's forwards or
    // its backwards) that receives.
    std::set<std::pair<int64_t, bool>> lanes;
    for (size_t j = i; j < list.size(); ++j)
      if (!receives(s, list[j]).empty() &&
          lanes.insert({list[j].stage, isForward(list[j])}).second)
        postReceives(r, j);
  };
  // What rank r waits for before its next action (or its end).
  auto waitsFor = [&](int64_t r) {
    size_t i = next[r];
    const auto &list = s.actions[r];
    std::vector<Message> messages;
    if (i > 0)
      messages = sends(s, list[i - 1]);
    if (i < list.size())
      for (const Message &m : receives(s, list[i]))
        messages.push_back(m);
    return messages;
  };
  for (int64_t r = 0; r < s.ranks; ++r)
    post(r);
  while (true) {
    bool progress = false, finished = true;
    for (int64_t r = 0; r < s.ranks; ++r) {
      // A send meets the receive its peer has posted.
      for (auto it = posted[r].begin(); it != posted[r].end();) {
        if (it->from == r && posted[it->to].erase(*it)) {
          it = posted[r].erase(it);
          progress = true;
        } else {
          ++it;
        }
      }
    }
    for (int64_t r = 0; r < s.ranks; ++r) {
      if (next[r] > s.actions[r].size() ||
          llvm::any_of(waitsFor(r),
                       [&](const Message &m) { return posted[r].count(m); }))
        continue;
      // What it waited for has come: run the action, post the next.
      ++next[r];
      progress = true;
      if (next[r] <= s.actions[r].size())
        post(r);
    }
    for (int64_t r = 0; r < s.ranks; ++r)
      finished &= next[r] > s.actions[r].size() && posted[r].empty();
    if (finished)
      return "";
    if (progress)
      continue;
    std::string report = "the schedule deadlocks under rendezvous "
                         "point-to-point:";
    for (int64_t r = 0; r < s.ranks; ++r) {
      std::vector<Message> waiting = waitsFor(r);
      if (next[r] > s.actions[r].size() || waiting.empty())
        continue;
      report += "\n  rank " + std::to_string(r) + " waits";
      if (next[r] < s.actions[r].size())
        report += " before " + getActionName(s.actions[r][next[r]]);
      report += " on:";
      for (const Message &m : waiting)
        if (posted[r].count(m))
          report += " " + std::string(m.from == r ? "send " : "receive ") +
                    m.str() + ";";
    }
    return report;
  }
}
