//===- PipelineTrace.cpp - a pipelined step's measured timeline -----------===//

#include "PipelineTrace.h"

#include "dtc/Analysis/PipelineRanks.h"
#include "dtc/Transforms/Pipeline/Schedule.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <limits>

using namespace mlir;
using namespace mlir::dtc;
namespace pp = mlir::dtc::pipeline;

namespace {
/// A span as a row of the gathered table.
enum Field { Stage, Microbatch, Kind, Start, End, NumFields };
} // namespace

std::string
mlir::dtc::reportMeasuredPipeline(func::FuncOp step,
                                  const std::vector<FragmentSpan> &spans,
                                  Communicator &comm, const std::string &path) {
  std::optional<PipelineInfo> info = getPipelineInfo(step);
  if (!info)
    return "--trace times the fragments of a pipelined step (dtc-compile "
           "--mesh pp=P); this step has no pipeline stages";
  pp::Schedule schedule;
  if (std::string error = pp::buildRecordedSchedule(
          info->schedule, info->getRanks(), info->microbatches,
          info->virtualStages, schedule);
      !error.empty())
    return error;

  // Every rank's spans, padded to the most any rank has.
  Tensor count(DType::F64, {1, 1});
  count.floats()[0] = static_cast<double>(spans.size());
  const std::vector<std::string> &axes = comm.mesh().axes;
  Tensor counts = comm.allGather(count, axes, 0);
  int64_t most = static_cast<int64_t>(
      *std::max_element(counts.floats().begin(), counts.floats().end()));
  Tensor rows(DType::F64, {1, std::max<int64_t>(most, 1) * NumFields});
  for (size_t i = 0; i < spans.size(); ++i) {
    double *row = rows.floats().data() + i * NumFields;
    std::optional<pp::ActionKind> kind = pp::parseActionKind(spans[i].kind);
    row[Stage] = static_cast<double>(spans[i].stage);
    row[Microbatch] = static_cast<double>(spans[i].microbatch);
    row[Kind] = kind ? static_cast<double>(*kind) : -1;
    row[Start] = spans[i].start;
    row[End] = spans[i].end;
  }
  Tensor all = comm.allGather(rows, axes, 0);
  if (comm.rank() != 0)
    return "";

  // One track per pp coordinate: the rank at 0 on every other axis (the
  // others run the same fragments on other parts of the batch).
  int64_t ppRanks = info->getRanks(), stages = schedule.getNumStages();
  int64_t ppAxis = comm.mesh().axisIndex(info->axis);
  pp::Timeline measured;
  measured.ranks.assign(ppRanks, {});
  measured.busy.assign(ppRanks, 0);
  // Per kind and stage: the seconds measured and the spans.
  std::vector<std::vector<double>> seconds(4, std::vector<double>(stages, 0)),
      instances(4, std::vector<double>(stages, 0));
  double first = std::numeric_limits<double>::infinity(), last = -first;
  int64_t width = all.shape()[1];
  for (int64_t r = 0, e = all.shape()[0]; r < e; ++r) {
    std::vector<int64_t> at = comm.mesh().coordinates(r);
    bool representative = true;
    for (size_t a = 0; a < at.size(); ++a)
      representative &= static_cast<int64_t>(a) == ppAxis || at[a] == 0;
    if (!representative)
      continue;
    int64_t track = at[ppAxis];
    for (int64_t i = 0, n = counts.floats()[r]; i < n; ++i) {
      const double *row = all.floats().data() + r * width + i * NumFields;
      int64_t kind = static_cast<int64_t>(row[Kind]);
      int64_t stage = static_cast<int64_t>(row[Stage]);
      if (kind < 0 || stage < 0 || stage >= stages)
        continue;
      pp::Action action{static_cast<pp::ActionKind>(kind), stage,
                        static_cast<int64_t>(row[Microbatch])};
      measured.ranks[track].push_back({action, row[Start], row[End]});
      measured.busy[track] += row[End] - row[Start];
      seconds[kind][stage] += row[End] - row[Start];
      instances[kind][stage] += 1;
      first = std::min(first, row[Start]);
      last = std::max(last, row[End]);
    }
  }
  if (!(last > first))
    return "--trace: no fragment was timed";
  for (auto &track : measured.ranks)
    for (pp::TimedAction &timed : track) {
      timed.start -= first;
      timed.end -= first;
    }
  measured.makespan = last - first;

  // The simulator on the measured means (a backward unsplit is the input
  // gradient's; transfers cost nothing, as in the compile-time report).
  auto mean = [&](pp::ActionKind kind, int64_t stage) {
    int k = static_cast<int>(kind);
    return instances[k][stage] ? seconds[k][stage] / instances[k][stage] : 0;
  };
  pp::FragmentCosts costs = pp::FragmentCosts::uniform(stages, 0, 0, 0, 0);
  for (int64_t s = 0; s < stages; ++s) {
    costs.forward[s] = mean(pp::ActionKind::Forward, s);
    costs.backwardInput[s] = mean(pp::ActionKind::Backward, s) +
                             mean(pp::ActionKind::BackwardInput, s);
    costs.backwardWeight[s] = mean(pp::ActionKind::BackwardWeight, s);
  }
  pp::Timeline simulated = pp::simulateSchedule(schedule, costs);

  std::fflush(stdout); // (after the training loop's lines)
  auto bubbles = [&](const pp::Timeline &timeline) {
    std::string text;
    for (int64_t r = 0; r < ppRanks; ++r)
      text +=
          (r ? ", " : "") +
          llvm::formatv("{0:F1}%", 100 * timeline.getBubbleFraction(r)).str();
    return text;
  };
  llvm::outs() << llvm::format(
      "pipeline %s over pp=%lld, %lld microbatches, measured (last step): "
      "%.4g s from the first fragment's start to the last one's end, bubble "
      "per pp rank %s\n",
      info->schedule.c_str(), static_cast<long long>(ppRanks),
      static_cast<long long>(info->microbatches), measured.makespan,
      bubbles(measured).c_str());
  llvm::outs() << llvm::format(
      "pipeline simulated on the measured mean fragment times: %.4g s, "
      "bubble per pp rank %s\n",
      simulated.makespan, bubbles(simulated).c_str());
  for (int64_t s = 0; s < stages; ++s)
    llvm::outs() << llvm::format(
        "pipeline stage %lld: forward %.4g s, backward (input) %.4g s, "
        "weight gradients %.4g s (means)\n",
        static_cast<long long>(s), costs.forward[s], costs.backwardInput[s],
        costs.backwardWeight[s]);
  std::error_code error;
  llvm::raw_fd_ostream trace(path, error);
  if (error)
    return "cannot write '" + path + "': " + error.message();
  pp::writeChromeTrace(schedule, measured, trace);
  llvm::outs() << "pipeline timeline (measured) in " << path << "\n";
  llvm::outs().flush();
  return "";
}
