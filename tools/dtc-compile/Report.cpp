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
#include "dtc/Analysis/Roofline.h"
#include "dtc/Analysis/StepCost.h"
#include "llvm/Support/Format.h"
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

llvm::json::Object mlir::dtc::reportStep(func::FuncOp step,
                                         const DeviceSpec &device) {
  StepMemory memory = analyzeMemory(step);
  ArenaPlan arena = planArena(step);
  StepCollectives collectives = analyzeCollectives(step);
  StepCost cost = analyzeCost(step);
  StepTime time = estimateStepTime(step, device);

  llvm::json::Array calls;
  for (const CollectiveCall &call : collectives.calls) {
    llvm::json::Object entry{{"kind", call.kind},
                             {"axes", llvm::json::Array(call.axes)},
                             {"bus_bytes", call.busBytes},
                             {"reason", call.reason}};
    if (call.resharding)
      entry["resharding"] = true;
    calls.push_back(std::move(entry));
  }

  llvm::errs() << "dtc-compile: per rank: "
               << describeMemory(memory.parameters, memory.gradients,
                                 memory.masterWeights, memory.optimizerState,
                                 memory.activationPeak)
               << "\n";
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
      device.name.str().c_str(), time.seconds());

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

  return llvm::json::Object{
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
}

/// "80GB" (10^9), "512MiB" (2^20), "1e6" (bytes) as bytes; -1 if malformed.
static double parseSize(StringRef text) {
  static const std::pair<StringRef, double> units[] = {{"KiB", 1024.0},
                                                       {"MiB", 1048576.0},
                                                       {"GiB", 1073741824.0},
                                                       {"TiB", 1099511627776.0},
                                                       {"KB", 1e3},
                                                       {"MB", 1e6},
                                                       {"GB", 1e9},
                                                       {"TB", 1e12},
                                                       {"B", 1}};
  double scale = 1;
  text = text.trim();
  for (auto [unit, factor] : units)
    if (text.consume_back_insensitive(unit)) {
      scale = factor;
      break;
    }
  double value;
  if (text.trim().getAsDouble(value) || value < 0)
    return -1;
  return value * scale;
}

bool mlir::dtc::fitsMemoryLimit(const llvm::json::Object &report,
                                StringRef limit) {
  double bytes = parseSize(limit);
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
