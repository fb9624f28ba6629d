//===- TrainingLoop.cpp - training with any engine ------------------------===//

#include "dtc/Runtime/TrainingLoop.h"

#include "dtc/Runtime/Checkpoint.h"
#include "dtc/Runtime/Communicator.h"
#include "dtc/Runtime/StepBinding.h"
#include "dtc/Runtime/TensorIO.h"
#include "dtc/Runtime/TokenData.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>

using namespace mlir::dtc;

StepEngine::~StepEngine() = default;

namespace {

/// Set by SIGTERM: finish the step, agree, checkpoint, stop.
volatile std::sig_atomic_t stopRequested = 0;
void requestStop(int) { stopRequested = 1; }

bool fail(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return false;
}

/// Writes `tensor` as DIR/SUBDIR/<encoded name>.npy.
bool dump(const std::string &dir, const std::string &subdir,
          const std::string &name, const Tensor &tensor) {
  std::string folder = subdir.empty() ? dir : dir + "/" + subdir;
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec)
    return fail("cannot create '" + folder + "': " + ec.message());
  std::string error;
  if (!writeNpy(folder + "/" + encodeFileName(name) + ".npy", tensor, error))
    return fail(error);
  return true;
}

/// The whole starting value of every argument the step has one for: the
/// inputs from the batch, the parameters from --init or the step's own,
/// state from the step's own (a loss scale). The binding derives the rest.
std::vector<std::optional<Tensor>>
startingValues(const StepSignature &signature,
               const std::map<std::string, Tensor> &batch,
               const std::map<std::string, Tensor> &init,
               const BuiltinValue &builtinValue) {
  std::vector<std::optional<Tensor>> start(signature.arguments.size());
  for (size_t i = 0; i < signature.arguments.size(); ++i) {
    const StepArgument &arg = signature.arguments[i];
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
    start[i] = builtinValue(i);
  }
  return start;
}

/// Prints, on rank 0, one line per rank: its time and the collectives it
/// ran per step, as its Communicator counted them; then one line per rank
/// with its measured peak of intermediate memory. Every rank runs the same
/// program, so the counted kinds line up across ranks.
void reportPerRank(Communicator &comm, int64_t steps, double secondsPerStep,
                   int64_t tokensPerStep, int64_t peakBytes,
                   const std::string &planned, bool lead) {
  std::map<CollectiveKind, CollectiveCount> counts = comm.counts();
  std::vector<double> mine{secondsPerStep, static_cast<double>(peakBytes),
                           tokensPerStep / secondsPerStep};
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
    std::printf("rank %lld per step: %.4f s", static_cast<long long>(r),
                values[0]);
    size_t i = 3;
    for (const auto &entry : counts) {
      std::printf(", %s %.0f calls, %.0f bus bytes",
                  collectiveName(entry.first), values[i], values[i + 1]);
      i += 2;
    }
    std::printf("\n");
  }
  for (int64_t r = 0, e = all.shape()[0]; r < e; ++r)
    std::printf("rank %lld peak intermediate memory: %.0f B%s\n",
                static_cast<long long>(r), all.floats()[r * mine.size() + 1],
                planned.c_str());
  if (tokensPerStep > 0)
    for (int64_t r = 0, e = all.shape()[0]; r < e; ++r)
      std::printf("rank %lld throughput: %.0f tokens/s\n",
                  static_cast<long long>(r), all.floats()[r * mine.size() + 2]);
}

/// The tokens one rank trains on per step: the elements of its first
/// integer input (the token ids), or 0 without one.
int64_t tokensPerStep(const StepSignature &signature) {
  for (const StepArgument &arg : signature.arguments)
    if (arg.role == ArgumentRole::Input && !isFloatDType(arg.dtype)) {
      int64_t n = 1;
      for (int64_t d : arg.shape)
        n *= d;
      return n;
    }
  return 0;
}

} // namespace

namespace {

/// The whole shape of argument `arg` (its parts' shape times the splits).
Shape wholeShapeOf(const StepArgument &arg, Communicator *comm) {
  Shape shape = arg.shape;
  if (comm)
    for (size_t d = 0; d < arg.layout.dims.size() && d < shape.size(); ++d)
      for (const std::string &axis : arg.layout.dims[d])
        shape[d] *= comm->groupSize({axis});
  return shape;
}

/// Where a step's ids and labels come from with --data.
struct DataFeed {
  TokenData tokens;
  size_t ids = 0, labels = 0;
  int64_t rows = 0, sequence = 0, classes = 0;

  /// Finds the step's labels input (the one with classes) and its ids (the
  /// other integer input of the same shape).
  std::string open(const TrainingOptions &options,
                   const StepSignature &signature, Communicator *comm) {
    if (std::string error = tokens.open(options.dataPath, options.dataType);
        !error.empty())
      return error;
    std::optional<size_t> labelsAt, idsAt;
    for (size_t i = 0; i < signature.arguments.size(); ++i)
      if (signature.arguments[i].role == ArgumentRole::Input &&
          signature.arguments[i].classes)
        labelsAt = i;
    if (!labelsAt)
      return "--data feeds a cross-entropy's ids and labels, but this step "
             "has no labels input (its loss is no cross-entropy): give its "
             "inputs with --batch DIR";
    Shape shape = wholeShapeOf(signature.arguments[*labelsAt], comm);
    for (size_t i = 0; i < signature.arguments.size(); ++i) {
      const StepArgument &arg = signature.arguments[i];
      if (i != *labelsAt && arg.role == ArgumentRole::Input &&
          !isFloatDType(arg.dtype) && wholeShapeOf(arg, comm) == shape) {
        if (idsAt)
          return "--data cannot tell the token ids among the inputs '" +
                 signature.arguments[*idsAt].name + "' and '" + arg.name + "'";
        idsAt = i;
      }
    }
    if (!idsAt || shape.size() != 2)
      return "--data feeds token ids and labels of shape [batch, sequence], "
             "but the step's labels '" +
             signature.arguments[*labelsAt].name + "' are " +
             describe(shape, DType::I64) +
             (idsAt ? "" : " and no integer input of that shape holds ids");
    ids = *idsAt;
    labels = *labelsAt;
    rows = shape[0];
    sequence = shape[1];
    classes = *signature.arguments[*labelsAt].classes;
    return "";
  }
};

} // namespace

int mlir::dtc::runTraining(const StepSignature &signature,
                           const TrainingOptions &options, StepEngine &engine,
                           const BuiltinValue &builtinValue,
                           const TensorDirReader &readDir, Communicator *comm) {
  std::map<std::string, Tensor> batch, init;
  std::string error;
  if (options.batchDir.empty() && options.dataPath.empty())
    return fail("training needs --data FILE (a token file) or --batch DIR "
                "(the inputs and labels of every step)"),
           1;
  if ((!options.batchDir.empty() && !readDir(options.batchDir, batch, error)) ||
      (!options.initDir.empty() && !readDir(options.initDir, init, error)))
    return fail(error), 1;
  bool lead = !comm || comm->rank() == 0;

  // Resuming: the checkpoint's step, and its data order.
  Checkpoint checkpoint;
  int64_t first = 0;
  uint64_t dataSeed = options.dataSeed;
  if (!options.resumeDir.empty()) {
    if (error = openCheckpoint(options.resumeDir, checkpoint); !error.empty())
      return fail(error), 1;
    first = checkpoint.step;
    dataSeed = checkpoint.dataSeed;
    if (first >= options.steps)
      return fail("the checkpoint '" + checkpoint.path + "' is at step " +
                  std::to_string(first) + ": --steps " +
                  std::to_string(options.steps) +
                  " leaves nothing to train (--steps counts from the start "
                  "of the run)"),
             1;
  }
  std::optional<DataFeed> data;
  if (!options.dataPath.empty()) {
    data.emplace();
    if (error = data->open(options, signature, comm); !error.empty())
      return fail(error), 1;
  }
  // Step k's ids and labels (whole) into `into`, by input name.
  auto dataOf = [&](int64_t k, std::map<std::string, Tensor> &into) {
    Tensor ids, labels;
    std::string why = data->tokens.batch(k, data->rows, data->sequence,
                                         dataSeed, data->classes, ids, labels);
    into[signature.arguments[data->ids].name] = std::move(ids);
    into[signature.arguments[data->labels].name] = std::move(labels);
    return why;
  };
  if (data) {
    if (error = dataOf(first, batch); !error.empty())
      return fail(error), 1;
  }

  StepBinding binding(signature, comm);
  {
    std::vector<std::optional<Tensor>> start =
        startingValues(signature, batch, init, builtinValue);
    std::vector<Tensor> args;
    if (!options.resumeDir.empty() && sameLayout(checkpoint, signature)) {
      // This rank's own parts, as they were: the run continues bit for bit.
      std::vector<std::optional<Tensor>> parts;
      if (error = readOwnParts(checkpoint, signature, comm ? comm->rank() : 0,
                               parts);
          !error.empty())
        return fail(error), 1;
      std::vector<Tensor> ready(signature.arguments.size());
      for (size_t i = 0; i < parts.size() && error.empty(); ++i) {
        if (parts[i])
          ready[i] = std::move(*parts[i]);
        else if (!start[i])
          error =
              "no tensor given for input '" + signature.arguments[i].name + "'";
        else
          error = binding.partOf(i, *start[i], ready[i]);
      }
      if (error.empty())
        error = binding.bindParts(std::move(ready), args);
    } else {
      if (!options.resumeDir.empty()) {
        // Another mesh or layout: whole values, cut anew.
        std::vector<std::optional<Tensor>> whole;
        if (error = readWholeValues(checkpoint, signature, whole);
            !error.empty())
          return fail(error), 1;
        for (size_t i = 0; i < whole.size(); ++i) {
          if (whole[i])
            start[i] = std::move(whole[i]);
          else if (signature.arguments[i].role == ArgumentRole::Parameter)
            return fail("the checkpoint '" + checkpoint.path +
                        "' holds no parameter '" + signature.arguments[i].name +
                        "'"),
                   1;
        }
      }
      error = binding.bind(std::move(start), args);
    }
    if (!error.empty())
      return fail(error), 1;
    if (error = engine.start(std::move(args)); !error.empty())
      return fail(error), 1;
  }
  auto save = [&](int64_t step) {
    // (Inputs are not saved: the data's position is the step.)
    std::vector<Tensor> args(signature.arguments.size());
    for (size_t i = 0; i < signature.arguments.size(); ++i)
      if (signature.arguments[i].role != ArgumentRole::Input)
        args[i] = engine.argument(i);
    std::string why =
        saveCheckpoint(options.saveDir, step, dataSeed, signature, args, comm);
    if (why.empty() && lead) {
      std::printf("checkpoint: step %lld saved in %s\n",
                  static_cast<long long>(step), options.saveDir.c_str());
      std::fflush(stdout);
    }
    return why.empty() || fail(why);
  };

  stopRequested = 0;
  std::signal(SIGTERM, requestStop);
  int64_t steps = options.steps - first;
  int64_t logEvery = options.logEvery > 0 ? options.logEvery
                                          : std::max<int64_t>(1, steps / 10);
  Tensor losses(DType::F32, {steps});
  auto startTime = std::chrono::steady_clock::now();
  auto secondsSinceStart = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         startTime)
        .count();
  };
  for (int64_t k = first; k < options.steps; ++k) {
    if (data && k > first) {
      std::map<std::string, Tensor> next;
      if (error = dataOf(k, next); !error.empty())
        return fail(error), 1;
      for (size_t i : {data->ids, data->labels}) {
        Tensor part;
        if (error = binding.partOf(i, next[signature.arguments[i].name], part);
            error.empty())
          error = engine.setInput(i, part);
        if (!error.empty())
          return fail(error), 1;
      }
    }
    if (!engine.step())
      return 1;
    double loss = engine.result(signature.loss).at(0);
    losses.floats()[k - first] = loss;
    if (lead && ((k + 1 - first) % logEvery == 0 || k + 1 == options.steps)) {
      double seconds = secondsSinceStart();
      std::printf("step %5lld/%lld  loss %.6f  %.3f ms/step\n",
                  static_cast<long long>(k + 1),
                  static_cast<long long>(options.steps), loss,
                  1e3 * seconds / (k + 1 - first));
      std::fflush(stdout);
    }
    // A SIGTERM on any rank stops every rank after this step (the ranks
    // agree here, where none is inside a collective).
    bool stop = comm ? comm->anyRank(stopRequested) : stopRequested;
    if (!options.saveDir.empty() &&
        (stop || k + 1 == options.steps ||
         (options.saveEvery > 0 && (k + 1) % options.saveEvery == 0)) &&
        !save(k + 1))
      return 1;
    if (stop) {
      if (lead)
        std::printf("stopped by SIGTERM after step %lld%s\n",
                    static_cast<long long>(k + 1),
                    options.saveDir.empty() ? " (no --save: nothing kept)"
                                            : "");
      std::fflush(stdout);
      return 0;
    }
  }
  losses.roundToElementType();
  // The measured peak beside the plan (the same rule: every rank runs the
  // same program, so one planned figure stands for all).
  std::string planned =
      options.plannedPeak >= 0
          ? " (planned " + std::to_string(options.plannedPeak) + " B)"
          : std::string();
  int64_t peakBytes = engine.peakIntermediateBytes();
  double secondsPerStep = secondsSinceStart() / steps;
  int64_t tokens = tokensPerStep(signature);
  if (comm) {
    reportPerRank(*comm, steps, secondsPerStep, tokens, peakBytes, planned,
                  lead);
  } else {
    std::printf("peak intermediate memory: %lld B%s\n",
                static_cast<long long>(peakBytes), planned.c_str());
    if (tokens > 0)
      std::printf("throughput: %.0f tokens/s\n", tokens / secondsPerStep);
  }
  std::fflush(stdout);

  if (options.dumpDir.empty())
    return 0;
  // Dumps hold whole tensors, gathered by every rank and written by the
  // first: the last step's gradients, the parameters after it.
  if (lead && !dump(options.dumpDir, "", "loss", losses))
    return 1;
  for (size_t r = 0; r < signature.results.size(); ++r) {
    const StepResult &result = signature.results[r];
    if (result.role != ResultRole::Gradient)
      continue;
    Tensor grad = binding.wholeResult(r, engine.result(r));
    if (lead && !dump(options.dumpDir, "grad", result.name, grad))
      return 1;
  }
  std::vector<Tensor> args;
  for (size_t i = 0; i < signature.arguments.size(); ++i)
    args.push_back(engine.argument(i));
  for (size_t i = 0; i < signature.arguments.size(); ++i) {
    if (signature.arguments[i].role != ArgumentRole::Parameter)
      continue;
    Tensor param = binding.wholeParameter(i, args);
    if (lead &&
        !dump(options.dumpDir, "param", signature.arguments[i].name, param))
      return 1;
  }
  std::fflush(stdout);
  return 0;
}
