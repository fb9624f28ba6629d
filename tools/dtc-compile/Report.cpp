//===- Report.cpp - what a compiled step needs per rank -------------------===//
//
// Counts from the IR what the Communicator counts at run time, so that the
// two can be checked against each other.
//
//===----------------------------------------------------------------------===//

#include "Report.h"

#include "dtc/Dialect/DTC/IR/DTCDialect.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

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

/// The most bytes of intermediate values -- neither arguments nor results,
/// which the other categories count -- live at once when the step runs in
/// program order and each value is freed after its last use, as the
/// reference executor frees them.
static int64_t activationPeak(func::FuncOp step) {
  Block &body = step.getBody().front();
  llvm::DenseSet<Value> results(body.getTerminator()->operand_begin(),
                                body.getTerminator()->operand_end());
  llvm::DenseMap<Value, Operation *> lastUse;
  for (Operation &op : body.without_terminator())
    for (Value operand : op.getOperands())
      lastUse[operand] = &op;
  auto counted = [&](Value v) {
    return !isa<BlockArgument>(v) && !results.contains(v);
  };
  int64_t live = 0, peak = 0;
  for (Operation &op : body.without_terminator()) {
    for (Value result : op.getResults())
      if (counted(result))
        live += tensorByteSize(result.getType());
    peak = std::max(peak, live);
    llvm::DenseSet<Value> freed;
    for (Value result : op.getResults())
      if (counted(result) && result.use_empty() && freed.insert(result).second)
        live -= tensorByteSize(result.getType());
    for (Value operand : op.getOperands())
      if (counted(operand) && lastUse.lookup(operand) == &op &&
          freed.insert(operand).second)
        live -= tensorByteSize(operand.getType());
  }
  return peak;
}

llvm::json::Object mlir::dtc::reportStep(func::FuncOp step) {
  int64_t params = 0, state = 0, masters = 0, grads = 0;
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i) {
    int64_t bytes = tensorByteSize(step.getArgument(i).getType());
    if (step.getArgAttr(i, kParamAttrName))
      params += bytes;
    if (StateAttr kind = getStateAttr(step, i))
      (kind.getKind() == StateKind::Master ? masters : state) += bytes;
  }
  // The gradient buffer: ZeRO stage 1 keeps it whole (its results are the
  // rank's shards of it), stage 2 only the shard.
  auto zero = step->getAttrOfType<IntegerAttr>(kZeroStageAttrName);
  MeshOp mesh = getStepMesh(step);
  for (unsigned i = 0, e = step.getNumResults(); i < e; ++i) {
    if (!step.getResultAttr(i, kGradAttrName))
      continue;
    int64_t bytes = tensorByteSize(step.getResultTypes()[i]);
    auto sharding =
        step.getResultAttrOfType<ShardingAttr>(i, kShardingAttrName);
    if (zero && zero.getInt() == 1 && sharding && mesh)
      for (unsigned d = 0, r = sharding.getDims().size(); d < r; ++d)
        if (llvm::is_contained(sharding.axesOf(d), "dp"))
          bytes *= mesh.axisSize("dp");
    grads += bytes;
  }

  llvm::json::Array collectives;
  struct Total {
    int64_t calls = 0;
    double busBytes = 0;
  };
  std::map<std::string, Total> totals;
  step.walk([&](CollectiveOpInterface op) {
    int64_t n = op.getGroupSize();
    llvm::json::Array axisNames;
    for (StringRef axis : op.getGroupAxes())
      axisNames.push_back(axis.str());
    std::string kind = op.getCollectiveKind().str();
    double bytes = op.getBusBytes(n);
    StringAttr reason = op.getReasonAttr();
    collectives.push_back(
        llvm::json::Object{{"kind", kind},
                           {"axes", std::move(axisNames)},
                           {"bus_bytes", bytes},
                           {"reason", reason ? reason.str() : std::string()}});
    Total &total = totals[kind];
    ++total.calls;
    total.busBytes += bytes;
  });

  int64_t activations = activationPeak(step);
  llvm::errs() << "dtc-compile: per rank: "
               << describeMemory(params, grads, masters, state, activations)
               << "\n";
  llvm::json::Object perKind;
  for (const auto &[kind, total] : totals) {
    llvm::errs() << llvm::format(
        "dtc-compile: per rank per step: %s %lld calls, %.0f bus bytes\n",
        kind.c_str(), static_cast<long long>(total.calls), total.busBytes);
    perKind[kind] = llvm::json::Object{{"calls", total.calls},
                                       {"bus_bytes", total.busBytes}};
  }
  return llvm::json::Object{
      {"memory_bytes_per_rank",
       llvm::json::Object{{"parameters", params},
                          {"gradients", grads},
                          {"master_weights", masters},
                          {"optimizer_state", state},
                          {"activation_peak", activations}}},
      {"collectives_per_step", std::move(collectives)},
      {"collective_totals_per_step", std::move(perKind)}};
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
