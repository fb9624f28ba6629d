//===- TrainingLoop.cpp - dtc-run's training mode -------------------------===//

#include "TrainingLoop.h"

#include "dtc/Interpreter/Interpreter.h"
#include "dtc/Interpreter/TensorAttr.h"
#include "dtc/Runtime/Communicator.h"
#include "dtc/Runtime/ONNX/TensorProto.h"
#include "dtc/Runtime/StepBinding.h"
#include "dtc/Runtime/TensorIO.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace mlir;
using namespace mlir::dtc;

namespace {

bool fail(const std::string &message) {
  llvm::errs() << "error: " << message << "\n";
  return false;
}

/// Writes `tensor` as DIR/SUBDIR/<encoded name>.npy.
bool dump(const std::string &dir, const std::string &subdir,
          const std::string &name, const Tensor &tensor) {
  std::string folder = subdir.empty() ? dir : dir + "/" + subdir;
  if (std::error_code ec = llvm::sys::fs::create_directories(folder))
    return fail("cannot create '" + folder + "': " + ec.message());
  std::string error;
  if (!writeNpy(folder + "/" + encodeFileName(name) + ".npy", tensor, error))
    return fail(error);
  return true;
}

/// The whole starting value of every argument the step has one for: the
/// inputs from the batch, the parameters from --init or their `dtc.value`,
/// state from its `dtc.value` (a loss scale). The binding derives the rest.
bool startingValues(const TrainingStep &step, const StepSignature &signature,
                    const std::map<std::string, Tensor> &batch,
                    const std::map<std::string, Tensor> &init,
                    std::vector<std::optional<Tensor>> &start) {
  func::FuncOp func = step.getFunction();
  start.assign(signature.arguments.size(), std::nullopt);
  for (auto [i, arg] : llvm::enumerate(signature.arguments)) {
    if (arg.role == ArgumentRole::Input) {
      if (auto it = batch.find(arg.name); it != batch.end())
        start[i] = it->second;
      continue;
    }
    if (arg.role == ArgumentRole::Parameter) {
      if (auto it = init.find(encodeFileName(arg.name)); it != init.end()) {
        start[i] = it->second;
        continue;
      }
    }
    auto value = func.getArgAttrOfType<ElementsAttr>(i, kValueAttrName);
    if (!value)
      continue;
    FailureOr<Tensor> decoded = tensorFromAttr(value);
    if (failed(decoded))
      return fail("cannot decode the value of '" + arg.name + "'");
    start[i] = std::move(*decoded);
  }
  return true;
}

} // namespace

/// Prints, on rank 0, one line per rank: its time and the collectives it
/// ran per step, as its Communicator counted them; then one line per rank
/// with its measured peak of intermediate memory. Every rank runs the same
/// program, so the counted kinds line up across ranks.
static void reportPerRank(Communicator &comm, int64_t steps,
                          double secondsPerStep, int64_t peakBytes,
                          const std::string &planned, bool lead) {
  std::map<CollectiveKind, CollectiveCount> counts = comm.counts();
  std::vector<double> mine{secondsPerStep, static_cast<double>(peakBytes)};
  for (const auto &[kind, count] : counts) {
    mine.push_back(static_cast<double>(count.calls) / steps);
    mine.push_back(count.busBytes / steps);
  }
  Tensor row(DType::F64, {1, static_cast<int64_t>(mine.size())});
  row.floats() = mine;
  Tensor all = comm.allGather(row, comm.mesh().axes, 0);
  if (!lead)
    return;
  for (int64_t r = 0, e = all.shape()[0]; r < e; ++r) {
    const double *values = all.floats().data() + r * mine.size();
    llvm::outs() << llvm::format("rank %lld per step: %.4f s",
                                 static_cast<long long>(r), values[0]);
    size_t i = 2;
    for (const auto &entry : counts) {
      llvm::outs() << llvm::format(", %s %.0f calls, %.0f bus bytes",
                                   collectiveName(entry.first), values[i],
                                   values[i + 1]);
      i += 2;
    }
    llvm::outs() << "\n";
  }
  for (int64_t r = 0, e = all.shape()[0]; r < e; ++r)
    llvm::outs() << llvm::format("rank %lld peak intermediate memory: %.0f B",
                                 static_cast<long long>(r),
                                 all.floats()[r * mine.size() + 1])
                 << planned << "\n";
}

int mlir::dtc::runTraining(const TrainingStep &step,
                           const StepSignature &signature,
                           const TrainingOptions &options, Communicator *comm) {
  std::map<std::string, Tensor> batch, init;
  std::string error;
  if (options.batchDir.empty())
    return fail("training needs --batch DIR (the inputs and labels)"), 1;
  if (!readTensorDir(options.batchDir, batch, error) ||
      (!options.initDir.empty() &&
       !readTensorDir(options.initDir, init, error)))
    return fail(error), 1;
  bool lead = !comm || comm->rank() == 0;

  std::vector<std::optional<Tensor>> start;
  if (!startingValues(step, signature, batch, init, start))
    return 1;
  StepBinding binding(signature, comm);
  std::vector<Tensor> args;
  if (error = binding.bind(start, args); !error.empty())
    return fail(error), 1;
  start.clear();

  int64_t logEvery = options.logEvery > 0
                         ? options.logEvery
                         : std::max<int64_t>(1, options.steps / 10);
  Tensor losses(DType::F32, {options.steps});
  int64_t peakBytes = 0;
  std::vector<Tensor> results;
  auto startTime = std::chrono::steady_clock::now();
  auto secondsSinceStart = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         startTime)
        .count();
  };
  for (int64_t k = 0; k < options.steps; ++k) {
    // The step's arguments are donated to it: parameters and state are
    // freed once used, and their updates become the next step's arguments.
    InterpretStats stats;
    SmallVector<Tensor> donated(std::make_move_iterator(args.begin()),
                                std::make_move_iterator(args.end()));
    FailureOr<SmallVector<Tensor>> out =
        interpretFunction(step.getFunction(), std::move(donated), comm, &stats);
    peakBytes = std::max(peakBytes, stats.peakIntermediateBytes);
    if (failed(out))
      return 1;
    results.assign(std::make_move_iterator(out->begin()),
                   std::make_move_iterator(out->end()));
    double loss = results[signature.loss].at(0);
    args = binding.next(results);
    losses.floats()[k] = loss;
    if (lead && ((k + 1) % logEvery == 0 || k + 1 == options.steps)) {
      double seconds = secondsSinceStart();
      llvm::outs() << llvm::format("step %5lld/%lld  loss %.6f  %.3f s/step\n",
                                   static_cast<long long>(k + 1),
                                   static_cast<long long>(options.steps), loss,
                                   seconds / (k + 1));
      llvm::outs().flush();
    }
  }
  losses.roundToElementType();
  // The measured peak beside the plan (the same rule: every rank runs the
  // same program, so one planned figure stands for all).
  std::string planned =
      options.plannedPeak >= 0
          ? " (planned " + std::to_string(options.plannedPeak) + " B)"
          : std::string();
  if (comm)
    reportPerRank(*comm, options.steps, secondsSinceStart() / options.steps,
                  peakBytes, planned, lead);
  else
    llvm::outs() << "peak intermediate memory: " << peakBytes << " B" << planned
                 << "\n";

  if (options.dumpDir.empty())
    return 0;
  // Dumps hold whole tensors, gathered by every rank and written by the
  // first: the last step's gradients, the parameters after it.
  if (lead && !dump(options.dumpDir, "", "loss", losses))
    return 1;
  for (auto [r, result] : llvm::enumerate(signature.results)) {
    if (result.role != ResultRole::Gradient)
      continue;
    Tensor grad = binding.wholeResult(r, results[r]);
    if (lead && !dump(options.dumpDir, "grad", result.name, grad))
      return 1;
  }
  for (auto [i, arg] : llvm::enumerate(signature.arguments)) {
    if (arg.role != ArgumentRole::Parameter)
      continue;
    Tensor param = binding.wholeParameter(i, args);
    if (lead && !dump(options.dumpDir, "param", arg.name, param))
      return 1;
  }
  return 0;
}
