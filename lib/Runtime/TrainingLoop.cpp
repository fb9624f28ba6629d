//===- TrainingLoop.cpp - training with any engine ------------------------===//

#include "dtc/Runtime/TrainingLoop.h"

#include "dtc/Runtime/Checkpoint.h"
#include "dtc/Runtime/Communicator.h"
#include "dtc/Runtime/StepBinding.h"
#include "dtc/Runtime/TensorIO.h"
#include "dtc/Runtime/TokenData.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
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

/// The global L2 norm of the step's gradients, as
/// torch.nn.utils.clip_grad_norm_ computes it: each rank sums the squares
/// of its parts, summed over the axes each gradient is split over (its
/// replicas, on the other axes, hold the same values).
double gradientNorm(const StepSignature &signature, const StepEngine &engine,
                    Communicator *comm) {
  std::map<std::vector<std::string>, double> sums;
  for (size_t r = 0; r < signature.results.size(); ++r) {
    const StepResult &result = signature.results[r];
    if (result.role != ResultRole::Gradient)
      continue;
    std::vector<std::string> axes;
    for (const std::vector<std::string> &dim : result.layout.dims)
      axes.insert(axes.end(), dim.begin(), dim.end());
    std::sort(axes.begin(), axes.end());
    Tensor part = engine.result(r);
    double sum = 0;
    for (int64_t i = 0, e = part.numElements(); i < e; ++i)
      sum += part.at(i) * part.at(i);
    sums[axes] += sum;
  }
  double total = 0;
  for (auto &[axes, sum] : sums) {
    std::vector<double> value{sum};
    if (comm)
      comm->sumOver(value, axes);
    total += value[0];
  }
  return std::sqrt(total);
}

/// The first of this rank's step results but the loss (in the signature's
/// order: gradients, updates, outputs) holding a NaN or an infinity,
/// described; "" if none does.
std::string firstNonFinite(const StepSignature &signature,
                           const StepEngine &engine) {
  for (size_t r = 0; r < signature.results.size(); ++r) {
    const StepResult &result = signature.results[r];
    if (!isFloatDType(result.dtype) || result.role == ResultRole::Loss)
      continue;
    Tensor value = engine.result(r);
    for (int64_t i = 0, e = value.numElements(); i < e; ++i) {
      if (std::isfinite(value.at(i)))
        continue;
      std::string what = result.role == ResultRole::Gradient
                             ? "the gradient of '" + result.name + "'"
                         : result.role == ResultRole::Update
                             ? "the update of '" + result.name + "'"
                             : "the output '" + result.name + "'";
      return what + " (" + (std::isnan(value.at(i)) ? "nan" : "inf") +
             " at element " + std::to_string(i) + " of this rank's part)";
    }
  }
  return "";
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
  std::string open(const std::string &path, const std::string &rawType,
                   const StepSignature &signature, Communicator *comm) {
    if (std::string error = tokens.open(path, rawType); !error.empty())
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

  /// Batch k's whole ids and labels (windows drawn from `seed`; none: in
  /// order) into `into`, by input name.
  std::string wholeBatch(int64_t k, std::optional<uint64_t> seed,
                         const StepSignature &signature,
                         std::map<std::string, Tensor> &into) {
    Tensor idsValue, labelsValue;
    std::string error =
        tokens.batch(k, rows, sequence, seed, classes, idsValue, labelsValue);
    into[signature.arguments[ids].name] = std::move(idsValue);
    into[signature.arguments[labels].name] = std::move(labelsValue);
    return error;
  }

  /// Gives `engine` this rank's parts of batch k.
  std::string feed(int64_t k, std::optional<uint64_t> seed,
                   const StepSignature &signature, const StepBinding &binding,
                   StepEngine &engine) {
    std::map<std::string, Tensor> next;
    std::string error = wholeBatch(k, seed, signature, next);
    for (size_t i : {ids, labels}) {
      Tensor part;
      if (error.empty())
        error = binding.partOf(i, next[signature.arguments[i].name], part);
      if (error.empty())
        error = engine.setArgument(i, part);
    }
    return error;
  }
};

} // namespace

int mlir::dtc::runTraining(const StepSignature &signature,
                           const RunOptions &options, StepEngine &engine,
                           const BuiltinValue &builtinValue,
                           const TensorDirReader &readDir,
                           const ModelWriter &writeModel, Communicator *comm) {
  std::map<std::string, Tensor> batch, init;
  std::string error;
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
    if (first >= options.steps && options.exportDir.empty() &&
        options.exportONNXPath.empty())
      return fail("the checkpoint '" + checkpoint.path + "' is at step " +
                  std::to_string(first) + ": --steps " +
                  std::to_string(options.steps) +
                  " leaves nothing to train (--steps counts from the start "
                  "of the run)"),
             1;
  }
  // A checkpoint with no steps left to train is only exported (and
  // evaluated): its step needs no data.
  bool nothingToTrain = first >= options.steps;
  if (options.batchDir.empty() && options.dataPath.empty() && !nothingToTrain)
    return fail("training needs --data FILE (a token file) or --batch DIR "
                "(the inputs and labels of every step)"),
           1;
  if (nothingToTrain)
    for (const StepArgument &arg : signature.arguments)
      if (arg.role == ArgumentRole::Input && !batch.count(arg.name))
        batch[arg.name] = Tensor(arg.dtype, wholeShapeOf(arg, comm));
  std::optional<DataFeed> data, evalData;
  if (!options.dataPath.empty()) {
    data.emplace();
    if (error = data->open(options.dataPath, options.dataType, signature, comm);
        !error.empty())
      return fail(error), 1;
    if (error = data->wholeBatch(first, dataSeed, signature, batch);
        !error.empty())
      return fail(error), 1;
  }
  if (!options.evalDataPath.empty()) {
    evalData.emplace();
    if (error = evalData->open(options.evalDataPath, options.dataType,
                               signature, comm);
        !error.empty())
      return fail("--eval-data: " + error), 1;
    if (signature.rng && lead)
      std::fprintf(stderr, "warning: --eval-data: this step has dropout, which "
                           "evaluation applies as training does (it runs the "
                           "training step with its update discarded)\n");
  }

  StepBinding binding(signature, comm);
  {
    std::vector<std::optional<Tensor>> start =
        startingValues(signature, batch, init, builtinValue);
    std::vector<Tensor> args;
    if (!options.resumeDir.empty()) {
      // This rank's own parts as they were (the run continues bit for bit),
      // or on another mesh or layout its new parts cut from the writers'.
      int64_t rank = comm ? comm->rank() : 0;
      std::vector<std::optional<Tensor>> parts;
      if (error = sameLayout(checkpoint, signature)
                      ? readOwnParts(checkpoint, signature, rank, parts)
                      : readPartsForLayout(checkpoint, signature, rank, parts);
          !error.empty())
        return fail(error), 1;
      // What the checkpoint lacks: inputs from the batch, state from the
      // step's own value or else zeros.
      std::vector<Tensor> ready(signature.arguments.size());
      for (size_t i = 0; i < parts.size() && error.empty(); ++i) {
        const StepArgument &arg = signature.arguments[i];
        if (parts[i])
          ready[i] = std::move(*parts[i]);
        else if (start[i] && arg.role != ArgumentRole::Parameter)
          error = binding.partOf(i, *start[i], ready[i]);
        else if (arg.role == ArgumentRole::State)
          ready[i] = Tensor(arg.dtype, arg.shape);
        else if (arg.role == ArgumentRole::Input)
          error = "no tensor given for input '" + arg.name + "'";
        else
          error = "the checkpoint '" + checkpoint.path +
                  "' holds no parameter '" + arg.name + "'";
      }
      if (error.empty())
        error = binding.bindParts(std::move(ready), args);
    } else {
      error = binding.bind(std::move(start), args);
    }
    if (!error.empty())
      return fail(error), 1;
    if (error = engine.start(std::move(args)); !error.empty())
      return fail(error), 1;
  }
  auto save = [&](int64_t step) {
    if (comm)
      comm->setActivity("writing the checkpoint of step " +
                        std::to_string(step));
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
  // The whole trained parameters by name (collective).
  auto wholeParameters = [&] {
    std::vector<Tensor> args;
    for (size_t i = 0; i < signature.arguments.size(); ++i)
      args.push_back(engine.argument(i));
    std::map<std::string, Tensor> params;
    for (size_t i = 0; i < signature.arguments.size(); ++i)
      if (signature.arguments[i].role == ArgumentRole::Parameter)
        params[signature.arguments[i].name] = binding.wholeParameter(i, args);
    return params;
  };
  // ... as DIR[/SUBDIR]/<name>.npy (the first rank writes).
  auto writeParameters = [&](const std::string &dir,
                             const std::string &subdir) {
    for (const auto &[name, param] : wholeParameters())
      if (lead && !dump(dir, subdir, name, param))
        return false;
    return true;
  };
  // The mean loss over the evaluation batches: the step runs on each with
  // its update discarded (every argument restored after each).
  double asideSeconds = 0; // evaluating and metrics, not training
  auto evaluate = [&](int64_t after) {
    auto evalStart = std::chrono::steady_clock::now();
    if (comm)
      comm->setActivity("evaluating after step " + std::to_string(after));
    std::vector<Tensor> kept;
    for (size_t i = 0; i < signature.arguments.size(); ++i)
      kept.push_back(engine.argument(i));
    double sum = 0;
    for (int64_t b = 0; b < options.evalBatches; ++b) {
      if (error = evalData->feed(b, std::nullopt, signature, binding, engine);
          !error.empty())
        return fail("--eval-data: " + error);
      if (!engine.step())
        return false;
      sum += engine.result(signature.loss).at(0);
      for (size_t i = 0; i < kept.size(); ++i)
        if (error = engine.setArgument(i, kept[i]); !error.empty())
          return fail(error);
    }
    double loss = sum / options.evalBatches;
    asideSeconds += std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - evalStart)
                        .count();
    if (lead) {
      std::printf("eval after step %lld: loss %.6f  perplexity %.4f  (%lld "
                  "windows)\n",
                  static_cast<long long>(after), loss, std::exp(loss),
                  static_cast<long long>(options.evalBatches * evalData->rows));
      std::fflush(stdout);
    }
    return true;
  };

  std::FILE *metrics = nullptr;
  if (lead && !options.metricsPath.empty() &&
      !(metrics = std::fopen(options.metricsPath.c_str(), "a")))
    return fail("cannot write --metrics '" + options.metricsPath +
                "': " + std::strerror(errno)),
           1;
  struct CloseMetrics {
    std::FILE *file;
    ~CloseMetrics() {
      if (file)
        std::fclose(file);
    }
  } closeMetrics{metrics};
  std::optional<size_t> lossScale =
      signature.stateArgument(StepStateKind::LossScale, "");
  std::optional<size_t> learningRate;
  for (size_t r = 0; r < signature.results.size(); ++r)
    if (signature.results[r].role == ResultRole::Output &&
        signature.results[r].name == "learning_rate")
      learningRate = r;
  int64_t ranks = comm ? comm->worldSize() : 1;
  int64_t globalTokens = 0;
  for (const StepArgument &arg : signature.arguments)
    if (!globalTokens && arg.role == ArgumentRole::Input &&
        !isFloatDType(arg.dtype))
      globalTokens = numElementsOf(wholeShapeOf(arg, comm));

  if (comm)
    comm->setCollectiveTimeout(options.collectiveTimeout);
  stopRequested = 0;
  std::signal(SIGTERM, requestStop);
  int64_t steps = std::max<int64_t>(0, options.steps - first);
  int64_t logEvery = options.logEvery > 0 ? options.logEvery
                                          : std::max<int64_t>(1, steps / 10);
  Tensor losses(DType::F32, {steps});
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point since) {
    return std::chrono::duration<double>(Clock::now() - since).count();
  };
  auto startTime = Clock::now();
  for (int64_t k = first; k < options.steps; ++k) {
    auto stepStart = Clock::now();
    if (comm)
      comm->setActivity("step " + std::to_string(k + 1));
    if (data && k > first)
      if (error = data->feed(k, dataSeed, signature, binding, engine);
          !error.empty())
        return fail(error), 1;
    double scale = lossScale ? engine.argument(*lossScale).at(0) : 0;
    if (!engine.step())
      return 1;
    double loss = engine.result(signature.loss).at(0);
    losses.floats()[k - first] = loss;
    // Every rank holds the same loss, so all stop here together. (fp16's
    // loss scaling skips such steps by itself.)
    if (!std::isfinite(loss) && !signature.growthInterval) {
      std::string mine = firstNonFinite(signature, engine);
      std::vector<double> found =
          comm ? comm->everyRank({mine.empty() ? 0.0 : 1.0})
               : std::vector<double>{1.0};
      size_t at = std::find(found.begin(), found.end(), 1.0) - found.begin();
      bool none = at == found.size();
      if (comm && !none)
        mine += " on rank " + std::to_string(at);
      if (none ? lead : !comm || comm->rank() == static_cast<int64_t>(at))
        fail("step " + std::to_string(k + 1) + ": the loss is " +
             (std::isnan(loss) ? "nan" : "inf") + "; " +
             (none ? "every gradient and update is finite"
                   : "the first non-finite result: " + mine));
      return comm ? kEveryRankFailed : 1;
    }
    double stepSeconds = seconds(stepStart);
    if (!options.metricsPath.empty()) {
      auto metricsStart = Clock::now();
      double norm = gradientNorm(signature, engine, comm);
      double peak = static_cast<double>(engine.peakIntermediateBytes());
      std::vector<double> peaks =
          comm ? comm->everyRank({peak}) : std::vector<double>{peak};
      if (metrics) {
        std::fprintf(metrics, "{\"step\": %lld, \"loss\": %.9g",
                     static_cast<long long>(k + 1), loss);
        if (learningRate)
          std::fprintf(metrics, ", \"lr\": %.9g",
                       engine.result(*learningRate).at(0));
        std::fprintf(metrics, ", \"grad_norm\": %.9g", norm);
        if (lossScale)
          std::fprintf(metrics, ", \"loss_scale\": %.9g", scale);
        std::fprintf(metrics, ", \"step_seconds\": %.6g", stepSeconds);
        if (globalTokens)
          std::fprintf(metrics, ", \"tokens_per_second\": %.6g",
                       globalTokens / stepSeconds);
        if (options.flopsPerStep > 0) {
          double flops = options.flopsPerStep * ranks / stepSeconds;
          std::fprintf(metrics, ", \"flops_per_second\": %.6g", flops);
          if (options.peakTflops > 0)
            std::fprintf(metrics, ", \"mfu\": %.6g",
                         flops / (options.peakTflops * 1e12 * ranks));
        }
        std::fprintf(metrics, ", \"peak_intermediate_bytes\": [");
        for (size_t r = 0; r < peaks.size(); ++r)
          std::fprintf(metrics, "%s%.0f", r ? ", " : "", peaks[r]);
        std::fprintf(metrics, "]}\n");
        std::fflush(metrics);
      }
      asideSeconds += seconds(metricsStart);
    }
    if (lead && ((k + 1 - first) % logEvery == 0 || k + 1 == options.steps)) {
      std::printf("step %5lld/%lld  loss %.6f  %.3f ms/step\n",
                  static_cast<long long>(k + 1),
                  static_cast<long long>(options.steps), loss,
                  1e3 * (seconds(startTime) - asideSeconds) / (k + 1 - first));
      std::fflush(stdout);
    }
    if (evalData && options.evalEvery > 0 && (k + 1) % options.evalEvery == 0 &&
        k + 1 != options.steps && !evaluate(k + 1))
      return 1;
    // A SIGTERM on any rank stops every rank after this step (the ranks
    // agree here, where none is inside a collective).
    if (comm)
      comm->setActivity("the ranks agreeing whether to stop after step " +
                        std::to_string(k + 1));
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
  if (evalData && !evaluate(std::max(first, options.steps)))
    return 1;
  if (steps > 0) {
    // The measured peak beside the plan (the same rule: every rank runs the
    // same program, so one planned figure stands for all).
    std::string planned =
        options.plannedPeak >= 0
            ? " (planned " + std::to_string(options.plannedPeak) + " B)"
            : std::string();
    int64_t peakBytes = engine.peakIntermediateBytes();
    double secondsPerStep = (seconds(startTime) - asideSeconds) / steps;
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
  }
  int64_t trainedSteps = std::max(first, options.steps);
  if (!options.exportDir.empty()) {
    if (!writeParameters(options.exportDir, ""))
      return 1;
    if (lead)
      std::printf("exported the parameters of step %lld to %s\n",
                  static_cast<long long>(trainedSteps),
                  options.exportDir.c_str());
  }
  if (!options.exportONNXPath.empty()) {
    std::map<std::string, Tensor> params = wholeParameters();
    if (lead) {
      if (options.modelPath.empty())
        return fail("--export-onnx: the compiled directory's manifest.json "
                    "names no model"),
               1;
      if (error = writeModel(options.modelPath, options.exportONNXPath, params);
          !error.empty())
        return fail("--export-onnx: " + error), 1;
      std::printf("exported the model with the parameters of step %lld to "
                  "%s\n",
                  static_cast<long long>(trainedSteps),
                  options.exportONNXPath.c_str());
    }
  }

  if (options.dumpDir.empty() || steps == 0)
    return 0;
  // Dumps hold whole tensors, gathered by every rank and written by the
  // first: the last step's gradients, the parameters after it.
  losses.roundToElementType();
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
  if (!writeParameters(options.dumpDir, "param"))
    return 1;
  std::fflush(stdout);
  return 0;
}
