//===- TrainingLoop.cpp - training with any engine ------------------------===//

#include "dtc/Runtime/TrainingLoop.h"

#include "dtc/Runtime/Checkpoint.h"
#include "dtc/Runtime/Communicator.h"
#include "dtc/Runtime/Philox.h"
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
#include <iterator>
#include <unistd.h>

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

/// A parameter's starting value drawn from `seed` (--init-random), for a
/// step compiled from shapes alone: matrices uniform with GPT-2's std 0.02
/// (Philox on the element's index, keyed on the seed and a hash of the
/// name), biases zero, other vectors (norm scales) one.
Tensor randomParameter(const std::string &name, const Shape &shape,
                       uint64_t seed) {
  Tensor value(DType::F32, shape);
  std::vector<double> &x = value.floats();
  if (shape.size() < 2) {
    bool bias =
        name.size() >= 4 && name.compare(name.size() - 4, 4, "bias") == 0;
    std::fill(x.begin(), x.end(), bias ? 0.0 : 1.0);
    return value;
  }
  uint64_t stream = 14695981039346656037ull; // (FNV-1a: the same everywhere)
  for (unsigned char c : name)
    stream = (stream ^ c) * 1099511628211ull;
  double half = 0.02 * std::sqrt(3.0);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] =
        static_cast<float>((2 * dropoutUniform(i, 0, seed, stream) - 1) * half);
  return value;
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

/// " (planned N B)" after a measured peak, or nothing without a plan.
std::string describePlanned(double plannedPeak) {
  return plannedPeak >= 0
             ? " (planned " +
                   std::to_string(static_cast<long long>(plannedPeak)) + " B)"
             : std::string();
}

/// Prints, on rank 0, one line per rank: its time and the collectives it
/// ran per step, as its Communicator counted them; then one line per rank
/// with its measured peak of intermediate memory, its tokens/s, and the
/// communication no computation hid (where the engine counts it, else
/// `exposedPerStep` is negative).
void reportPerRank(Communicator &comm, int64_t steps, double secondsPerStep,
                   double exposedPerStep, int64_t tokensPerStep,
                   int64_t peakBytes, int64_t plannedPeak, bool lead) {
  std::map<CollectiveKind, CollectiveCount> counts = comm.counts();
  std::vector<double> mine{secondsPerStep, static_cast<double>(peakBytes),
                           tokensPerStep / secondsPerStep, exposedPerStep,
                           static_cast<double>(plannedPeak)};
  // Every kind, in one layout on every rank (the ranks of a pipelined step
  // run different collectives).
  static constexpr CollectiveKind kinds[] = {
      CollectiveKind::AllReduce,     CollectiveKind::AllGather,
      CollectiveKind::ReduceScatter, CollectiveKind::AllToAll,
      CollectiveKind::Broadcast,     CollectiveKind::SendRecv};
  for (CollectiveKind kind : kinds) {
    auto count = counts.find(kind);
    mine.push_back(count == counts.end()
                       ? 0.0
                       : static_cast<double>(count->second.calls) / steps);
    mine.push_back(count == counts.end() ? 0.0
                                         : count->second.busBytes / steps);
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
    for (size_t k = 0, i = 5; k < std::size(kinds); ++k, i += 2)
      if (values[i] > 0)
        std::printf(", %s %.0f calls, %.0f bus bytes", collectiveName(kinds[k]),
                    values[i], values[i + 1]);
    std::printf("\n");
  }
  for (int64_t r = 0, e = all.shape()[0]; r < e; ++r)
    std::printf("rank %lld peak intermediate memory: %.0f B%s\n",
                static_cast<long long>(r), all.floats()[r * mine.size() + 1],
                describePlanned(all.floats()[r * mine.size() + 4]).c_str());
  if (tokensPerStep > 0)
    for (int64_t r = 0, e = all.shape()[0]; r < e; ++r)
      std::printf("rank %lld throughput: %.0f tokens/s\n",
                  static_cast<long long>(r), all.floats()[r * mine.size() + 2]);
  if (exposedPerStep >= 0)
    for (int64_t r = 0, e = all.shape()[0]; r < e; ++r)
      std::printf("rank %lld exposed communication: %.4f s per step\n",
                  static_cast<long long>(r), all.floats()[r * mine.size() + 3]);
}

/// The tokens one rank trains on per step: the elements of its token ids,
/// or 0 without them.
int64_t tokensPerStep(const StepSignature &signature) {
  std::optional<size_t> ids = signature.tokenInput();
  return ids ? numElementsOf(signature.arguments[*ids].shape) : 0;
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
    // (A pipelined step's gradient: counted by the first pp coordinate
    // holding it, and summed over pp.)
    bool counted = true;
    if (!result.layout.pipelineRanks.empty() && comm) {
      axes.push_back(kPipelineAxisName);
      int64_t pp = comm->mesh().axisIndex(kPipelineAxisName);
      counted = comm->mesh().coordinates(comm->rank())[pp] ==
                result.layout.pipelineRanks.front();
    }
    std::sort(axes.begin(), axes.end());
    double sum = 0;
    if (counted) {
      Tensor part = engine.result(r);
      for (int64_t i = 0, e = part.numElements(); i < e; ++i)
        sum += part.at(i) * part.at(i);
    }
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
                           const StepEngine &engine, const Communicator *comm) {
  for (size_t r = 0; r < signature.results.size(); ++r) {
    const StepResult &result = signature.results[r];
    if (!isFloatDType(result.dtype) || result.role == ResultRole::Loss ||
        !signature.heldBy(result.layout, comm))
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
  /// (`everyRank`: whether the error is the batch's, which every rank
  /// reads whole and finds alike.)
  std::string feed(int64_t k, std::optional<uint64_t> seed,
                   const StepSignature &signature, const StepBinding &binding,
                   StepEngine &engine, bool &everyRank) {
    std::map<std::string, Tensor> next;
    std::string error = wholeBatch(k, seed, signature, next);
    everyRank = !error.empty();
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

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

/// One call of runTraining: the run's state and its parts, each a method.
class TrainingRun {
public:
  TrainingRun(const StepSignature &signature, const RunOptions &options,
              StepEngine &engine, Communicator *comm)
      : signature(signature), options(options), engine(engine), comm(comm),
        lead(!comm || comm->rank() == 0), binding(signature, comm),
        dataSeed(options.dataSeed.value_or(0)) {}

  /// Prepares the run (prepare) on every rank and starts the engine; an
  /// exit status if the run ends there (the first rank that failed said
  /// why).
  std::optional<int> start(const BuiltinValue &builtinValue,
                           const TensorDirReader &readDir);
  /// Runs the steps; an exit status when the run ends there (a failure,
  /// SIGTERM), none once every step has run.
  std::optional<int> train();
  /// After the last step: evaluation, the report, exports and dumps; the
  /// exit status.
  int finish(const ModelWriter &writeModel);

private:
  /// Reads the batch, the checkpoint and the data and binds this rank's
  /// first arguments (no collective); "" or what is wrong.
  std::string prepare(const BuiltinValue &builtinValue,
                      const TensorDirReader &readDir,
                      std::vector<Tensor> &args);
  /// The first arguments from the checkpoint being resumed (this rank's
  /// own parts, or its new ones on another layout), `start` filling what
  /// it lacks.
  std::string resumedArguments(std::vector<std::optional<Tensor>> start,
                               std::vector<Tensor> &args);
  bool save(int64_t step);
  bool evaluate(int64_t after);
  /// The whole trained parameters by name (collective).
  std::map<std::string, Tensor> wholeParameters() const;
  /// ... written as DIR[/SUBDIR]/<name>.npy by the first rank.
  bool writeParameters(const std::string &dir, const std::string &subdir);
  /// Step `step`'s loss is not finite: says where, on one rank.
  int stopOnNonFinite(int64_t step, double loss);
  void writeMetrics(int64_t step, double loss, double lossScale,
                    double stepSeconds, double exposedComm);
  /// The per-rank report: time per step, collectives, memory, tokens/s.
  void report(int64_t steps);
  bool writeDumps();

  const StepSignature &signature;
  const RunOptions &options;
  StepEngine &engine;
  Communicator *comm;
  bool lead;
  StepBinding binding;
  Checkpoint checkpoint;
  /// The first step to run (a resumed run's checkpoint step), and the
  /// order of the data's windows.
  int64_t first = 0;
  uint64_t dataSeed;
  std::optional<DataFeed> data, evalData;
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> metrics{nullptr,
                                                           std::fclose};
  std::optional<size_t> lossScale, learningRate, expertTokens, expertOverflow;
  int64_t globalTokens = 0;
  /// Time spent evaluating and on metrics, not training; the time spent
  /// training.
  double asideSeconds = 0, trainingSeconds = 0;
  /// The training steps' exposed communication (StepEngine), if counted.
  double exposedCommSeconds = 0;
  Tensor losses;
  /// The steps in a row whose loss was not finite; with loss scaling, how
  /// many it skips before the run stops.
  int64_t nonFiniteLosses = 0;
  static constexpr int64_t kNonFiniteLossesSkipped = 16;
};

std::optional<int> TrainingRun::start(const BuiltinValue &builtinValue,
                                      const TensorDirReader &readDir) {
  std::vector<Tensor> args;
  std::string error = prepare(builtinValue, readDir, args);
  // The ranks agree before the engine starts (it makes the communicator
  // groups, collectively): the first rank that failed says why, once, and
  // all end without an abort.
  if (comm) {
    std::vector<double> failed = comm->everyRank({error.empty() ? 0.0 : 1.0});
    auto first = std::find(failed.begin(), failed.end(), 1.0);
    if (first != failed.end()) {
      if (comm->rank() == first - failed.begin())
        fail(error);
      return kEveryRankFailed;
    }
  } else if (!error.empty()) {
    return fail(error), 1;
  }
  if (error = engine.start(std::move(args)); !error.empty())
    return fail(error), 1;
  return std::nullopt;
}

std::string TrainingRun::prepare(const BuiltinValue &builtinValue,
                                 const TensorDirReader &readDir,
                                 std::vector<Tensor> &args) {
  std::map<std::string, Tensor> batch, init;
  std::string error;
  if ((!options.batchDir.empty() && !readDir(options.batchDir, batch, error)) ||
      (!options.initDir.empty() && !readDir(options.initDir, init, error)))
    return error;
  // Resuming: the checkpoint's step, and its data order.
  if (!options.resumeDir.empty()) {
    if (error = openCheckpoint(options.resumeDir, checkpoint); !error.empty())
      return error;
    first = checkpoint.step;
    dataSeed = checkpoint.dataSeed;
    if (options.dataSeed && *options.dataSeed != dataSeed)
      return "--data-seed " + std::to_string(*options.dataSeed) +
             ": the checkpoint '" + checkpoint.path +
             "' was trained on the windows of seed " +
             std::to_string(dataSeed) +
             ", which a resumed run goes on with (leave --data-seed out)";
    if (error = sameOptimizer(checkpoint, signature); !error.empty())
      return error;
    if (first >= options.steps && options.exportDir.empty() &&
        options.exportONNXPath.empty())
      return "the checkpoint '" + checkpoint.path + "' is at step " +
             std::to_string(first) + ": --steps " +
             std::to_string(options.steps) +
             " leaves nothing to train (--steps counts from the start of the "
             "run)";
  }
  // A checkpoint with no steps left to train is only exported (and
  // evaluated): its step needs no data.
  bool nothingToTrain = first >= options.steps;
  if (options.batchDir.empty() && options.dataPath.empty() && !nothingToTrain)
    return "training needs --data FILE (a token file) or --batch DIR (the "
           "inputs and labels of every step)";
  if (nothingToTrain)
    for (const StepArgument &arg : signature.arguments)
      if (arg.role == ArgumentRole::Input && !batch.count(arg.name))
        batch[arg.name] = Tensor(arg.dtype, wholeShapeOf(arg, comm));
  if (!options.dataPath.empty()) {
    data.emplace();
    if (error = data->open(options.dataPath, options.dataType, signature, comm);
        !error.empty())
      return error;
    if (error = data->wholeBatch(first, dataSeed, signature, batch);
        !error.empty())
      return error;
    if (lead && checkpoint.dataTokens >= 0 &&
        checkpoint.dataTokens != data->tokens.size())
      std::fprintf(stderr,
                   "warning: --data '%s' holds %lld tokens; the checkpoint "
                   "was trained on %lld: from step %lld on, the run reads "
                   "other windows than the uninterrupted one did\n",
                   options.dataPath.c_str(),
                   static_cast<long long>(data->tokens.size()),
                   static_cast<long long>(checkpoint.dataTokens),
                   static_cast<long long>(first + 1));
  }
  if (!options.evalDataPath.empty()) {
    evalData.emplace();
    if (error = evalData->open(options.evalDataPath, options.dataType,
                               signature, comm);
        !error.empty())
      return "--eval-data: " + error;
    // Its windows read now, not first after some training.
    std::map<std::string, Tensor> windows;
    for (int64_t b = 0; b < options.evalBatches; ++b)
      if (error = evalData->wholeBatch(b, std::nullopt, signature, windows);
          !error.empty())
        return "--eval-data: " + error;
    if (signature.rng && lead)
      std::fprintf(stderr, "warning: --eval-data: this step has dropout, which "
                           "evaluation applies as training does (it runs the "
                           "training step with its update discarded)\n");
  }
  // Where the trained model goes, made and checked before training.
  if (lead && !options.exportONNXPath.empty()) {
    std::filesystem::path folder =
        std::filesystem::path(options.exportONNXPath).parent_path();
    std::error_code ec;
    if (!folder.empty())
      std::filesystem::create_directories(folder, ec);
    if (ec || ::access(folder.empty() ? "." : folder.c_str(), W_OK) != 0)
      return "cannot write --export-onnx '" + options.exportONNXPath +
             "': " + (ec ? ec.message() : std::strerror(errno));
  }
  if (lead && !options.metricsPath.empty()) {
    metrics.reset(std::fopen(options.metricsPath.c_str(), "a"));
    if (!metrics)
      return "cannot write --metrics '" + options.metricsPath +
             "': " + std::strerror(errno);
  }
  lossScale = signature.stateArgument(StepStateKind::LossScale, "");
  learningRate = signature.outputResult(kLearningRateOutputName);
  expertTokens = signature.outputResult(kExpertTokensOutputName);
  expertOverflow = signature.outputResult(kExpertOverflowOutputName);
  if (std::optional<size_t> ids = signature.tokenInput())
    globalTokens = numElementsOf(wholeShapeOf(signature.arguments[*ids], comm));

  std::vector<std::optional<Tensor>> starting =
      startingValues(signature, batch, init, builtinValue);
  for (size_t i = 0; i < starting.size() && options.initRandom; ++i) {
    const StepArgument &arg = signature.arguments[i];
    if (arg.role == ArgumentRole::Parameter && !starting[i])
      starting[i] = randomParameter(arg.name, wholeShapeOf(arg, comm),
                                    *options.initRandom);
  }
  return options.resumeDir.empty()
             ? binding.bind(std::move(starting), args)
             : resumedArguments(std::move(starting), args);
}

std::string
TrainingRun::resumedArguments(std::vector<std::optional<Tensor>> start,
                              std::vector<Tensor> &args) {
  // This rank's own parts as they were (the run continues bit for bit), or
  // on another mesh or layout its new parts cut from the writers'.
  int64_t rank = comm ? comm->rank() : 0;
  if (std::string error =
          verifyCheckpoint(checkpoint, rank, comm ? comm->worldSize() : 1);
      !error.empty())
    return error;
  std::vector<std::optional<Tensor>> parts;
  if (std::string error =
          sameLayout(checkpoint, signature)
              ? readOwnParts(checkpoint, signature, rank, parts)
              : readPartsForLayout(checkpoint, signature, rank, parts);
      !error.empty())
    return error;
  // What the checkpoint lacks: inputs from the batch, state from the step's
  // own value or else zeros.
  std::vector<Tensor> ready(signature.arguments.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    const StepArgument &arg = signature.arguments[i];
    std::string error;
    if (!signature.heldBy(arg.layout, rank))
      continue; // (a pipelined step's parameter of another pp rank)
    if (parts[i])
      ready[i] = std::move(*parts[i]);
    else if (start[i] && arg.role != ArgumentRole::Parameter)
      error = binding.partOf(i, *start[i], ready[i]);
    else if (arg.role == ArgumentRole::State)
      ready[i] = Tensor(arg.dtype, arg.shape);
    else if (arg.role == ArgumentRole::Input)
      error = "no tensor given for input '" + arg.name + "'";
    else
      error = "the checkpoint '" + checkpoint.path + "' holds no parameter '" +
              arg.name + "'";
    if (!error.empty())
      return error;
  }
  return binding.bindParts(std::move(ready), args);
}

/// What a sorted mixture's overflow count [mixtures, experts] says, or
/// nothing when no pair went past a buffer.
static std::string expertsPastBound(const Tensor &overflow) {
  int64_t experts = overflow.shape().back();
  for (int64_t i = 0; i < overflow.numElements(); ++i)
    if (int64_t past = std::llround(overflow.at(i)); past > 0)
      return "mixture " + std::to_string(i / experts) + "'s expert " +
             std::to_string(i % experts) + " was chosen for " +
             std::to_string(past) +
             " (token, choice) pairs more than its buffers hold (the "
             "--expert-bound rows per routing group this step was compiled "
             "with); their rows were left out, which a dropless mixture "
             "must not do: compile with a larger --expert-bound";
  return "";
}

std::optional<int> TrainingRun::train() {
  if (comm)
    comm->setCollectiveTimeout(options.collectiveTimeout);
  stopRequested = 0;
  std::signal(SIGTERM, requestStop);
  int64_t steps = std::max<int64_t>(0, options.steps - first);
  int64_t logEvery = options.logEvery > 0 ? options.logEvery
                                          : std::max<int64_t>(1, steps / 10);
  losses = Tensor(DType::F32, {steps});
  auto startTime = Clock::now();
  for (int64_t k = first; k < options.steps; ++k) {
    auto stepStart = Clock::now();
    if (comm)
      comm->setActivity("step " + std::to_string(k + 1));
    bool everyRank = false;
    if (data && k > first)
      if (std::string error =
              data->feed(k, dataSeed, signature, binding, engine, everyRank);
          !error.empty()) {
        if (!comm || !everyRank)
          return fail(error), 1;
        if (lead)
          fail(error);
        return kEveryRankFailed;
      }
    double scale = lossScale ? engine.argument(*lossScale).at(0) : 0;
    double commBefore = engine.exposedCommunicationSeconds();
    if (!engine.step())
      return 1;
    double stepComm = engine.exposedCommunicationSeconds() - commBefore;
    exposedCommSeconds += stepComm;
    double loss = engine.result(signature.loss).at(0);
    losses.floats()[k - first] = loss;
    // (fp16's loss scaling skips a step whose loss or gradients are not
    // finite, keeping the parameters; but no scale mends a forward that
    // overflows on batch after batch.)
    nonFiniteLosses = std::isfinite(loss) ? 0 : nonFiniteLosses + 1;
    if (nonFiniteLosses && (!signature.growthInterval ||
                            nonFiniteLosses == kNonFiniteLossesSkipped))
      return stopOnNonFinite(k + 1, loss);
    // (Every rank holds the whole count: all stop together.)
    if (expertOverflow)
      if (std::string past = expertsPastBound(engine.result(*expertOverflow));
          !past.empty()) {
        if (lead)
          fail("step " + std::to_string(k + 1) + ": " + past);
        return comm ? kEveryRankFailed : 1;
      }
    double stepSeconds = secondsSince(stepStart);
    if (!options.metricsPath.empty()) {
      auto metricsStart = Clock::now();
      writeMetrics(k + 1, loss, scale, stepSeconds, stepComm);
      asideSeconds += secondsSince(metricsStart);
    }
    if (lead && ((k + 1 - first) % logEvery == 0 || k + 1 == options.steps)) {
      std::printf("step %5lld/%lld  loss %.6f  %.3f ms/step\n",
                  static_cast<long long>(k + 1),
                  static_cast<long long>(options.steps), loss,
                  1e3 * (secondsSince(startTime) - asideSeconds) /
                      (k + 1 - first));
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
  trainingSeconds = secondsSince(startTime) - asideSeconds;
  return std::nullopt;
}

int TrainingRun::stopOnNonFinite(int64_t step, double loss) {
  // Every rank holds the same loss, so all stop here together; the first
  // rank holding a non-finite result says which.
  std::string mine = firstNonFinite(signature, engine, comm);
  std::vector<double> found = comm ? comm->everyRank({mine.empty() ? 0.0 : 1.0})
                                   : std::vector<double>{1.0};
  size_t at = std::find(found.begin(), found.end(), 1.0) - found.begin();
  bool none = at == found.size();
  if (comm && !none)
    mine += " on rank " + std::to_string(at);
  if (none ? lead : !comm || comm->rank() == static_cast<int64_t>(at))
    fail("step " + std::to_string(step) + ": the loss is " +
         (std::isnan(loss) ? "nan" : "inf") +
         (nonFiniteLosses > 1 ? " on " + std::to_string(nonFiniteLosses) +
                                    " steps in a row, each skipped by loss "
                                    "scaling (the forward overflows)"
                              : "") +
         "; " +
         (none ? "every gradient and update is finite"
               : "the first non-finite result: " + mine));
  return comm ? kEveryRankFailed : 1;
}

/// A [routers, experts] count as JSON rows: [[30, 32], [24, 40]].
static std::string expertTokenRows(const Tensor &counts) {
  std::string text = "[";
  int64_t experts = counts.shape().back();
  for (int64_t i = 0; i < counts.numElements(); ++i)
    text += (i % experts ? ", "
             : i         ? "], ["
                         : "[") +
            std::to_string(std::llround(counts.at(i)));
  return text + "]]";
}

void TrainingRun::writeMetrics(int64_t step, double loss, double scale,
                               double stepSeconds, double exposedComm) {
  double norm = gradientNorm(signature, engine, comm);
  double peak = static_cast<double>(engine.peakIntermediateBytes());
  std::vector<double> perRank = comm ? comm->everyRank({peak, exposedComm})
                                     : std::vector<double>{peak, exposedComm};
  bool counted = comm && engine.exposedCommunicationSeconds() >= 0;
  if (!metrics)
    return;
  std::FILE *out = metrics.get();
  // (JSON has no NaN or infinity: a skipped fp16 step's loss is null.)
  auto number = [](double value) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.9g", value);
    return std::isfinite(value) ? std::string(text) : std::string("null");
  };
  std::fprintf(out, "{\"step\": %lld, \"loss\": %s",
               static_cast<long long>(step), number(loss).c_str());
  if (learningRate)
    std::fprintf(out, ", \"lr\": %s",
                 number(engine.result(*learningRate).at(0)).c_str());
  std::fprintf(out, ", \"grad_norm\": %s", number(norm).c_str());
  if (lossScale)
    std::fprintf(out, ", \"loss_scale\": %s", number(scale).c_str());
  std::fprintf(out, ", \"step_seconds\": %.6g", stepSeconds);
  if (globalTokens)
    std::fprintf(out, ", \"tokens_per_second\": %.6g",
                 globalTokens / stepSeconds);
  if (options.flopsPerStep > 0) {
    int64_t ranks = comm ? comm->worldSize() : 1;
    double flops = options.flopsPerStep * ranks / stepSeconds;
    std::fprintf(out, ", \"flops_per_second\": %.6g", flops);
    if (options.peakTflops > 0)
      std::fprintf(out, ", \"mfu\": %.6g",
                   flops / (options.peakTflops * 1e12 * ranks));
  }
  std::fprintf(out, ", \"peak_intermediate_bytes\": [");
  for (size_t r = 0; r < perRank.size(); r += 2)
    std::fprintf(out, "%s%.0f", r ? ", " : "", perRank[r]);
  if (counted) {
    std::fprintf(out, "], \"exposed_comm_seconds\": [");
    for (size_t r = 1; r < perRank.size(); r += 2)
      std::fprintf(out, "%s%.6g", r > 1 ? ", " : "", perRank[r]);
  }
  std::fprintf(out, "]");
  if (expertTokens)
    std::fprintf(out, ", \"expert_tokens\": %s",
                 expertTokenRows(engine.result(*expertTokens)).c_str());
  std::fprintf(out, "}\n");
  std::fflush(out);
}

bool TrainingRun::save(int64_t step) {
  if (comm)
    comm->setActivity("writing the checkpoint of step " + std::to_string(step));
  // (Inputs are not saved: the data's position is the step.)
  std::vector<Tensor> args(signature.arguments.size());
  for (size_t i = 0; i < signature.arguments.size(); ++i)
    if (signature.arguments[i].role != ArgumentRole::Input)
      args[i] = engine.argument(i);
  std::string why =
      saveCheckpoint(options.saveDir, step, dataSeed,
                     data ? data->tokens.size() : -1, signature, args, comm);
  if (why.empty() && lead) {
    std::printf("checkpoint: step %lld saved in %s\n",
                static_cast<long long>(step), options.saveDir.c_str());
    std::fflush(stdout);
  }
  return why.empty() || fail(why);
}

bool TrainingRun::evaluate(int64_t after) {
  // The step runs on each eval batch with its update discarded: every
  // argument is restored after each.
  auto evalStart = Clock::now();
  if (comm)
    comm->setActivity("evaluating after step " + std::to_string(after));
  std::vector<Tensor> kept;
  for (size_t i = 0; i < signature.arguments.size(); ++i)
    kept.push_back(engine.argument(i));
  double sum = 0;
  for (int64_t b = 0; b < options.evalBatches; ++b) {
    bool everyRank = false; // (its windows were read at the start)
    if (std::string error = evalData->feed(b, std::nullopt, signature, binding,
                                           engine, everyRank);
        !error.empty())
      return fail("--eval-data: " + error);
    if (!engine.step())
      return false;
    if (expertOverflow)
      if (std::string past = expertsPastBound(engine.result(*expertOverflow));
          !past.empty())
        return fail("evaluating after step " + std::to_string(after) + ": " +
                    past);
    sum += engine.result(signature.loss).at(0);
    for (size_t i = 0; i < kept.size(); ++i)
      if (signature.heldBy(signature.arguments[i].layout, comm))
        if (std::string error = engine.setArgument(i, kept[i]); !error.empty())
          return fail(error);
  }
  double loss = sum / options.evalBatches;
  asideSeconds += secondsSince(evalStart);
  if (lead) {
    std::printf("eval after step %lld: loss %.6f  perplexity %.4f  (%lld "
                "windows)\n",
                static_cast<long long>(after), loss, std::exp(loss),
                static_cast<long long>(options.evalBatches * evalData->rows));
    std::fflush(stdout);
  }
  return true;
}

void TrainingRun::report(int64_t steps) {
  // The measured peak beside the plan: one figure for every rank, or a
  // pipelined step's for this rank's pp coordinate.
  int64_t planned = options.plannedPeak;
  if (comm && !options.plannedPeakPerPipelineRank.empty()) {
    int64_t axis = comm->mesh().axisIndex("pp");
    size_t coordinate =
        axis < 0 ? 0 : comm->mesh().coordinates(comm->rank())[axis];
    if (coordinate < options.plannedPeakPerPipelineRank.size())
      planned = options.plannedPeakPerPipelineRank[coordinate];
  }
  int64_t peakBytes = engine.peakIntermediateBytes();
  double secondsPerStep = trainingSeconds / steps;
  int64_t tokens = tokensPerStep(signature);
  if (comm) {
    double exposed = engine.exposedCommunicationSeconds() >= 0
                         ? exposedCommSeconds / steps
                         : -1;
    reportPerRank(*comm, steps, secondsPerStep, exposed, tokens, peakBytes,
                  planned, lead);
  } else {
    std::printf("peak intermediate memory: %lld B%s\n",
                static_cast<long long>(peakBytes),
                describePlanned(planned).c_str());
    if (tokens > 0)
      std::printf("throughput: %.0f tokens/s\n", tokens / secondsPerStep);
  }
  // Every rank's result is the whole count.
  if (expertTokens && lead)
    std::printf("expert tokens in the last step (per router): %s\n",
                expertTokenRows(engine.result(*expertTokens)).c_str());
  std::fflush(stdout);
}

std::map<std::string, Tensor> TrainingRun::wholeParameters() const {
  std::vector<Tensor> args;
  for (size_t i = 0; i < signature.arguments.size(); ++i)
    args.push_back(engine.argument(i));
  std::map<std::string, Tensor> params;
  for (size_t i = 0; i < signature.arguments.size(); ++i)
    if (signature.arguments[i].role == ArgumentRole::Parameter)
      params[signature.arguments[i].name] = binding.wholeParameter(i, args);
  return params;
}

bool TrainingRun::writeParameters(const std::string &dir,
                                  const std::string &subdir) {
  for (const auto &[name, param] : wholeParameters())
    if (lead && !dump(dir, subdir, name, param))
      return false;
  return true;
}

bool TrainingRun::writeDumps() {
  // Whole tensors, gathered by every rank and written by the first: the
  // losses, the last step's gradients, the parameters after it.
  losses.roundToElementType();
  if (lead && !dump(options.dumpDir, "", "loss", losses))
    return false;
  for (size_t r = 0; r < signature.results.size(); ++r) {
    const StepResult &result = signature.results[r];
    if (result.role != ResultRole::Gradient)
      continue;
    Tensor grad = binding.wholeResult(r, engine.result(r));
    if (lead && !dump(options.dumpDir, "grad", result.name, grad))
      return false;
  }
  return writeParameters(options.dumpDir, "param");
}

int TrainingRun::finish(const ModelWriter &writeModel) {
  int64_t trained = std::max(first, options.steps);
  if (evalData && !evaluate(trained))
    return 1;
  if (options.steps > first)
    report(options.steps - first);
  if (!options.exportDir.empty()) {
    if (!writeParameters(options.exportDir, ""))
      return 1;
    if (lead)
      std::printf("exported the parameters of step %lld to %s\n",
                  static_cast<long long>(trained), options.exportDir.c_str());
  }
  if (!options.exportONNXPath.empty()) {
    std::map<std::string, Tensor> params = wholeParameters();
    if (lead) {
      std::string error =
          options.modelPath.empty()
              ? "the compiled directory's manifest.json names no model"
              : writeModel(options.modelPath, options.exportONNXPath, params);
      if (!error.empty())
        return fail("--export-onnx: " + error), 1;
      std::printf("exported the model with the parameters of step %lld to "
                  "%s\n",
                  static_cast<long long>(trained),
                  options.exportONNXPath.c_str());
    }
  }
  if (!options.dumpDir.empty() && options.steps > first && !writeDumps())
    return 1;
  std::fflush(stdout);
  return 0;
}

} // namespace

int mlir::dtc::runTraining(const StepSignature &signature,
                           const RunOptions &options, StepEngine &engine,
                           const BuiltinValue &builtinValue,
                           const TensorDirReader &readDir,
                           const ModelWriter &writeModel, Communicator *comm) {
  TrainingRun run(signature, options, engine, comm);
  if (std::optional<int> ended = run.start(builtinValue, readDir))
    return *ended;
  if (std::optional<int> ended = run.train())
    return *ended;
  return run.finish(writeModel);
}
