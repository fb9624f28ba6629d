//===- Report.cpp - what a compiled step needs per rank -------------------===//
//
// Prints what lib/Analysis computes for a rank's step: memory by category,
// the collectives (what the Communicator counts at run time, so that the two
// can be checked against each other), FLOPs and bytes per step and phase,
// and a roofline estimate on a device.
//
//===----------------------------------------------------------------------===//

#include "Report.h"

#include "dtc/Analysis/ArenaPlan.h"
#include "dtc/Analysis/Collectives.h"
#include "dtc/Analysis/Memory.h"
#include "dtc/Analysis/Phases.h"
#include "dtc/Analysis/PipelineRanks.h"
#include "dtc/Analysis/Roofline.h"
#include "dtc/Analysis/StepCost.h"
#include "dtc/Dialect/DTC/IR/DTCLocations.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/PipelineStages.h"
#include "dtc/Import/ONNX/ONNXImporter.h"
#include "dtc/Runtime/StepSignature.h"
#include "dtc/Transforms/Pipeline/Schedule.h"
#include "dtc/Transforms/Remat/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::dtc;

/// "parameters P B, gradients G B, [master weights M B, ]optimizer state S
/// B, activation peak A B".
static std::string describeMemory(int64_t params, int64_t grads,
                                  int64_t masters, int64_t state,
                                  int64_t activations) {
  std::string text = "parameters " + std::to_string(params) + " B, gradients " +
                     std::to_string(grads) + " B, ";
  if (masters)
    text += "master weights " + std::to_string(masters) + " B, ";
  return text + "optimizer state " + std::to_string(state) +
         " B, activation peak " + std::to_string(activations) + " B";
}

static llvm::json::Object flopsObject(const OpCost &cost) {
  return llvm::json::Object{{"total", cost.flops()},
                            {"matmul", cost.matmulFlops},
                            {"elementwise", cost.elementwiseFlops},
                            {"transcendental", cost.transcendentalFlops}};
}

static llvm::json::Object bytesObject(const OpCost &cost) {
  return llvm::json::Object{{"read", cost.bytesRead},
                            {"written", cost.bytesWritten}};
}

/// What dtc-remat's recomputation costs and saves: the activation peak
/// with and without it, the FLOPs of the copies (and their share of the
/// step without them), and the collectives they issue again.
static std::optional<llvm::json::Object>
reportRemat(func::FuncOp step, ArrayRef<ScheduledOp> order,
            const StepMemory &memory, const StepCost &cost,
            const StepCollectives &collectives) {
  auto remat = step->getAttrOfType<DictionaryAttr>(kRematAttrName);
  if (!remat)
    return std::nullopt;
  auto text = [&](StringRef key) {
    auto value = remat.getAs<StringAttr>(key);
    return value ? value.getValue().str() : std::string();
  };
  auto integer = [&](StringRef key, int64_t otherwise) {
    auto value = remat.getAs<IntegerAttr>(key);
    return value ? value.getInt() : otherwise;
  };
  int64_t peakWithout =
      integer("activation_peak_without", memory.activationPeak);
  int64_t units = integer("transformer_units", 0);
  OpCost recomputed;
  int64_t ops = 0;
  for (const ScheduledOp &entry : order)
    if (entry.op->hasAttr(kRecomputeAttrName)) {
      recomputed += getOpCost(entry.op);
      ++ops;
    }
  std::map<std::string, CollectiveTotal> byKind;
  CollectiveTotal reissued;
  for (const CollectiveCall &call : collectives.calls)
    if (call.op->hasAttr(kRecomputeAttrName))
      for (CollectiveTotal *total : {&byKind[call.kind], &reissued}) {
        ++total->calls;
        total->busBytes += call.busBytes;
      }
  llvm::json::Object perKind;
  for (const auto &[kind, total] : byKind)
    perKind[kind] = llvm::json::Object{{"calls", total.calls},
                                       {"bus_bytes", total.busBytes}};
  double baseFlops = cost.total.flops() - recomputed.flops();
  double share = baseFlops > 0 ? recomputed.flops() / baseFlops : 0;
  llvm::errs() << llvm::format(
      "dtc-compile: per rank: remat %s (%s, %lld transformer units): "
      "activation peak %lld B against "
      "%lld B without (%lld B saved); %lld ops recomputed, %.4g FLOPs "
      "(+%.1f%% of the step's), %lld collectives issued again (%.0f bus "
      "bytes)\n",
      text("policy").c_str(), text("plan").c_str(),
      static_cast<long long>(units),
      static_cast<long long>(memory.activationPeak),
      static_cast<long long>(peakWithout),
      static_cast<long long>(peakWithout - memory.activationPeak),
      static_cast<long long>(ops), recomputed.flops(), 100 * share,
      static_cast<long long>(reissued.calls), reissued.busBytes);
  return llvm::json::Object{
      {"policy", text("policy")},
      {"plan", text("plan")},
      {"transformer_units", units},
      {"activation_peak", memory.activationPeak},
      {"activation_peak_without", peakWithout},
      {"activation_bytes_saved", peakWithout - memory.activationPeak},
      {"recomputed_ops", ops},
      {"recompute_flops", flopsObject(recomputed)},
      {"recompute_flops_share", share},
      {"collectives", std::move(perKind)},
      {"collective_calls", reissued.calls},
      {"collective_bus_bytes", reissued.busBytes}};
}

llvm::json::Object mlir::dtc::reportStep(func::FuncOp step,
                                         const DeviceSpec &device) {
  // What a rank runs: the whole step, or under pipeline stages the ops of
  // one pp coordinate; the figures per rank are then those of the pp rank
  // with the highest activation peak, each pp rank's listed apart.
  llvm::DenseMap<Operation *, StepPhase> phases = classifyStepPhases(step);
  std::function<bool(Value)> intermediates = intermediatesOf(step);
  struct RankFigures {
    Schedule order;
    StepMemory memory;
    ArenaPlan arena;
    StepCost cost;
    StepTime time;
    /// A pp rank's (its order's); else the step's, below.
    StepCollectives collectives;
  };
  auto figuresOf = [&](Schedule order, int64_t pipelineCoordinate) {
    RankFigures figures{{},
                        analyzeMemory(step, order, pipelineCoordinate),
                        planArena(order, intermediates),
                        sumCosts(order, phases),
                        estimateStepTime(order, phases, device)};
    figures.order = std::move(order);
    return figures;
  };
  RankFigures rank;
  llvm::json::Array perPipelineRank, peakPerPipelineRank;
  std::optional<int64_t> busiest;
  if (getPipelineRanks(step)) {
    std::vector<Schedule> orders = pipelineRankOrders(step);
    for (int64_t coordinate = 0, e = orders.size(); coordinate < e;
         ++coordinate) {
      RankFigures mine = figuresOf(std::move(orders[coordinate]), coordinate);
      mine.collectives = analyzeCollectives(mine.order);
      peakPerPipelineRank.push_back(mine.memory.activationPeak);
      // Its bus bytes by the axes they go over (and of them, those sent
      // point to point), so that each pp rank's communication can be
      // checked, not only the listed rank's.
      llvm::json::Object busBytes, sendRecvBytes;
      auto add = [](llvm::json::Object &sums, const CollectiveCall &call) {
        std::string axes = llvm::join(call.axes, ",");
        const llvm::json::Value *sum = sums.get(axes);
        sums[axes] = (sum ? *sum->getAsNumber() : 0) + call.busBytes;
      };
      for (const CollectiveCall &call : mine.collectives.calls) {
        add(busBytes, call);
        if (call.kind == "send_recv")
          add(sendRecvBytes, call);
      }
      perPipelineRank.push_back(llvm::json::Object{
          {"pp_rank", coordinate},
          {"bus_bytes_by_axes", std::move(busBytes)},
          {"send_recv_bus_bytes_by_axes", std::move(sendRecvBytes)},
          {"parameters", mine.memory.parameters},
          {"gradients", mine.memory.gradients},
          {"master_weights", mine.memory.masterWeights},
          {"optimizer_state", mine.memory.optimizerState},
          {"activation_peak", mine.memory.activationPeak},
          {"arena", mine.arena.size},
          {"flops", mine.cost.total.flops()},
          {"roofline_seconds", mine.time.seconds()}});
      if (!busiest || mine.memory.activationPeak > rank.memory.activationPeak) {
        busiest = coordinate;
        rank = std::move(mine);
      }
    }
  } else {
    rank = figuresOf(programOrder(step.getBody().front()), -1);
  }
  const Schedule &order = rank.order;
  const StepMemory &memory = rank.memory;
  const ArenaPlan &arena = rank.arena;
  const StepCost &cost = rank.cost;
  const StepTime &time = rank.time;
  StepCollectives collectives =
      busiest ? std::move(rank.collectives) : analyzeCollectives(step);

  llvm::json::Array calls;
  for (const CollectiveCall &call : collectives.calls) {
    llvm::json::Object entry{{"kind", call.kind},
                             {"axes", llvm::json::Array(call.axes)},
                             {"bus_bytes", call.busBytes},
                             {"reason", call.reason}};
    if (call.resharding)
      entry["resharding"] = true;
    // Sends the filled rows only (dtc-send-filled-rows): the bytes above
    // are its bound, what dtc-run counts depends on the routing.
    if (auto exchange = dyn_cast_or_null<AllToAllOp>(call.op);
        exchange && exchange.getRowsDim())
      entry["filled_rows_only"] = true;
    calls.push_back(std::move(entry));
  }

  if (busiest)
    llvm::errs() << "dtc-compile: per rank: the figures of pp rank " << *busiest
                 << ", the one with the highest activation peak (each pp "
                    "rank's in report.json's pp_ranks)\n";
  llvm::errs() << "dtc-compile: per rank: "
               << describeMemory(memory.parameters, memory.gradients,
                                 memory.masterWeights, memory.optimizerState,
                                 memory.activationPeak)
               << "\n";
  std::string peakAt;
  if (memory.peakOp) {
    auto phase = phases.find(memory.peakOp);
    peakAt = describeOp(memory.peakOp) + " in the " +
             (phase == phases.end() ? "optimizer"
                                    : getStepPhaseName(phase->second).str()) +
             " pass";
    llvm::errs() << "dtc-compile: per rank: the activation peak is reached at "
                 << peakAt << "\n";
  }
  llvm::errs() << llvm::format(
      "dtc-compile: per rank: one arena of %lld B for the intermediate values "
      "(%zu buffers; the most live at once, aligned to %lld B: %lld B, "
      "+%.1f%%)\n",
      static_cast<long long>(arena.size), arena.slots.size(),
      static_cast<long long>(kArenaAlignment),
      static_cast<long long>(arena.lowerBound),
      arena.lowerBound
          ? 100.0 * (arena.size - arena.lowerBound) / arena.lowerBound
          : 0.0);
  llvm::json::Object perKind;
  for (const auto &[kind, total] : collectives.totals) {
    llvm::errs() << llvm::format(
        "dtc-compile: per rank per step: %s %lld calls, %.0f bus bytes\n",
        kind.c_str(), static_cast<long long>(total.calls), total.busBytes);
    perKind[kind] = llvm::json::Object{{"calls", total.calls},
                                       {"bus_bytes", total.busBytes}};
  }
  if (collectives.resharding.calls > 0)
    llvm::errs() << llvm::format(
        "dtc-compile: per rank per step: of which resharding %lld calls, "
        "%.0f bus bytes (report.json lists them)\n",
        static_cast<long long>(collectives.resharding.calls),
        collectives.resharding.busBytes);
  llvm::errs() << llvm::format(
      "dtc-compile: per rank per step: %.4g FLOPs (matmul %.4g, elementwise "
      "%.4g, transcendental %.4g), %.4g bytes moved; roofline on %s: "
      "%.4g s\n",
      cost.total.flops(), cost.total.matmulFlops, cost.total.elementwiseFlops,
      cost.total.transcendentalFlops, static_cast<double>(cost.total.bytes()),
      device.name.c_str(), time.seconds());

  llvm::json::Object flops = flopsObject(cost.total);
  llvm::json::Object bytes = bytesObject(cost.total);
  llvm::json::Object roofline{{"device", device.name},
                              {"seconds", time.seconds()},
                              {"op_seconds", time.opSeconds},
                              {"compute_seconds", time.computeSeconds},
                              {"memory_seconds", time.memorySeconds},
                              {"collective_seconds", time.collectiveSeconds},
                              {"compute_bound_ops", time.computeBoundOps},
                              {"memory_bound_ops", time.memoryBoundOps}};
  llvm::json::Object phaseSeconds;
  for (unsigned p = 0; p < kNumStepPhases; ++p) {
    StringRef name = getStepPhaseName(static_cast<StepPhase>(p));
    flops[name] = flopsObject(cost.phases[p]);
    bytes[name] = bytesObject(cost.phases[p]);
    phaseSeconds[name] = time.phaseSeconds[p];
  }
  roofline["phase_seconds"] = std::move(phaseSeconds);

  llvm::json::Object report{
      {"memory_bytes_per_rank",
       llvm::json::Object{{"parameters", memory.parameters},
                          {"gradients", memory.gradients},
                          {"master_weights", memory.masterWeights},
                          {"optimizer_state", memory.optimizerState},
                          {"activation_peak", memory.activationPeak},
                          {"arena", arena.size},
                          {"arena_lower_bound", arena.lowerBound}}},
      {"collectives_per_step", std::move(calls)},
      {"collective_totals_per_step", std::move(perKind)},
      {"resharding_per_step",
       llvm::json::Object{{"calls", collectives.resharding.calls},
                          {"bus_bytes", collectives.resharding.busBytes}}},
      {"flops_per_step", std::move(flops)},
      {"bytes_per_step", std::move(bytes)},
      {"roofline_per_step", std::move(roofline)}};
  if (!peakAt.empty())
    report["activation_peak_reached_at"] = peakAt;
  if (busiest) {
    report["pp_rank"] = *busiest;
    report["pp_ranks"] = std::move(perPipelineRank);
    // (Flat, for dtc-run to print beside each rank's measured peak.)
    report["activation_peak_per_pp_rank"] = std::move(peakPerPipelineRank);
  }
  if (auto remat = reportRemat(step, order, memory, cost, collectives))
    report["remat"] = std::move(*remat);
  // NonZero's static form: every position is a row of the buffers, the
  // real ones only those nonzero (a mixture's routed (token, choice)
  // pairs, the step's expert_tokens).
  if (auto positions =
          step->getAttrOfType<DictionaryAttr>(kStaticPositionsAttrName)) {
    auto get = [&](StringRef key) {
      return positions.getAs<IntegerAttr>(key).getInt();
    };
    llvm::errs() << llvm::format(
        "dtc-compile: NonZero's static form (global step): %lld nodes, "
        "%lld positions each a buffer row (the real ones: those nonzero), "
        "%lld B of rows gathered at them\n",
        static_cast<long long>(get("nodes")),
        static_cast<long long>(get("positions")),
        static_cast<long long>(get("gathered_bytes")));
    report["static_positions"] =
        llvm::json::Object{{"nodes", get("nodes")},
                           {"positions", get("positions")},
                           {"gathered_bytes", get("gathered_bytes")}};
  }
  // dtc-sort-experts' buffers: the rows gathered for the experts, padded
  // to the bound, against the routed (token, choice) rows they hold.
  if (auto buffers =
          step->getAttrOfType<DictionaryAttr>(kExpertBuffersAttrName)) {
    llvm::json::Object object;
    for (NamedAttribute entry : buffers)
      object[entry.getName().strref()] =
          cast<IntegerAttr>(entry.getValue()).getInt();
    auto get = [&](StringRef key) {
      return static_cast<long long>(*object.getInteger(key));
    };
    llvm::errs() << llvm::format(
        "dtc-compile: experts' sorted buffers (global step): %lld rows for "
        "%lld routed (token, choice) rows; %lld B gathered into them, %lld B "
        "of them routed rows\n",
        get("buffer_rows"), get("routed_rows"), get("padded_bytes"),
        get("useful_bytes"));
    report["expert_buffers"] = std::move(object);
  }
  std::vector<int64_t> perUnit = savedBytesPerTransformerUnit(step);
  if (!perUnit.empty()) {
    auto [least, most] = std::minmax_element(perUnit.begin(), perUnit.end());
    llvm::errs() << llvm::format(
        "dtc-compile: per rank: %zu transformer units each hold %lld to %lld "
        "B of activations from their forward to their backward\n",
        perUnit.size(), static_cast<long long>(*least),
        static_cast<long long>(*most));
    report["saved_activation_bytes_per_transformer_unit"] =
        llvm::json::Array(perUnit);
  }
  return report;
}

std::optional<llvm::json::Object>
mlir::dtc::reportPipeline(func::FuncOp step, StringRef traceFile) {
  std::optional<PipelineInfo> info = getPipelineInfo(step);
  if (!info)
    return std::nullopt;
  const std::string &name = info->schedule;
  int64_t microbatches = info->microbatches;
  int64_t virtualStages = info->virtualStages;
  ArrayRef<int64_t> stageRanks = info->stageRanks;
  int64_t ranks = info->getRanks();
  pipeline::Schedule schedule;
  if (!pipeline::buildRecordedSchedule(name, ranks, microbatches, virtualStages,
                                       schedule)
           .empty())
    return std::nullopt;
  pipeline::FragmentCosts costs;
  costs.forward = info->forwardSeconds;
  costs.backwardInput = info->backwardInputSeconds;
  costs.backwardWeight = info->backwardWeightSeconds;
  for (int64_t bytes : info->activationBytes)
    costs.activationBytes.push_back(bytes);
  pipeline::Timeline timeline = pipeline::simulateSchedule(schedule, costs);

  llvm::json::Array stages;
  for (int64_t s = 0, e = stageRanks.size(); s < e; ++s)
    stages.push_back(llvm::json::Object{
        {"stage", s},
        {"rank", stageRanks[s]},
        {"forward_seconds", costs.forward[s]},
        {"backward_input_seconds", costs.backwardInput[s]},
        {"backward_weight_seconds", costs.backwardWeight[s]},
        {"activation_bytes_per_microbatch", info->activationBytes[s]},
        {"sent_bytes_per_microbatch", info->sentBytes[s]},
        {"layers", info->layers[s]}});
  llvm::json::Array bubbles;
  for (int64_t r = 0; r < ranks; ++r)
    bubbles.push_back(timeline.getBubbleFraction(r));
  auto worst = std::max_element(timeline.peakActivationBytes.begin(),
                                timeline.peakActivationBytes.end());
  llvm::errs() << llvm::format(
      "dtc-compile: pipeline %s over pp=%lld (%zu stages of %s transformer "
      "layers), %lld microbatches: predicted %.4g s a step (compute alone, "
      "roofline), "
      "bubble %.1f%% on the worst rank, up to %.0f B of activations in "
      "flight (rank %lld); timeline in %s\n",
      name.c_str(), static_cast<long long>(ranks), stageRanks.size(),
      llvm::join(llvm::map_range(info->layers,
                                 [](int64_t n) { return std::to_string(n); }),
                 ",")
          .c_str(),
      static_cast<long long>(microbatches), timeline.makespan,
      100 * timeline.getMaxBubbleFraction(), *worst,
      static_cast<long long>(worst - timeline.peakActivationBytes.begin()),
      traceFile.str().c_str());
  std::error_code error;
  llvm::raw_fd_ostream trace(traceFile, error);
  if (!error)
    pipeline::writeChromeTrace(schedule, timeline, trace);
  return llvm::json::Object{
      {"schedule", name},
      {"ranks", ranks},
      {"microbatches", microbatches},
      {"virtual_stages", virtualStages},
      {"stages", std::move(stages)},
      {"predicted",
       llvm::json::Object{
           {"step_seconds", timeline.makespan},
           {"bubble_fraction_per_rank", std::move(bubbles)},
           {"max_bubble_fraction", timeline.getMaxBubbleFraction()},
           {"peak_activation_bytes_per_rank",
            llvm::json::Array(timeline.peakActivationBytes)},
           {"deferred_weight_gradients_per_rank",
            llvm::json::Array(timeline.peakDeferredWeights)},
           {"transfers_per_step", timeline.transfers}}},
      {"trace", llvm::sys::path::filename(traceFile).str()}};
}

bool mlir::dtc::fitsMemoryLimit(const llvm::json::Object &report,
                                StringRef limit) {
  double bytes = parseByteSize(limit);
  if (bytes < 0) {
    llvm::errs() << "error: --memory-limit: cannot read '" << limit
                 << "' as a size (e.g. 80GB, 512MiB, 1000000)\n";
    return false;
  }
  const llvm::json::Object *memory = report.getObject("memory_bytes_per_rank");
  auto get = [&](StringRef key) { return memory->getInteger(key).value_or(0); };
  int64_t total = get("parameters") + get("gradients") + get("master_weights") +
                  get("optimizer_state") + get("activation_peak");
  if (total <= bytes)
    return true;
  llvm::errs() << "error: --memory-limit " << limit << ": a rank needs "
               << total << " B: "
               << describeMemory(get("parameters"), get("gradients"),
                                 get("master_weights"), get("optimizer_state"),
                                 get("activation_peak"))
               << "\n";
  return false;
}
