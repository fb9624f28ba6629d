//===- TrainingLoop.cpp - dtc-run's training mode -------------------------===//

#include "TrainingLoop.h"

#include "dtc/Dialect/DTC/IR/DTCDialect.h"
#include "dtc/Interpreter/Interpreter.h"
#include "dtc/Interpreter/TensorAttr.h"
#include "dtc/Runtime/Communicator.h"
#include "dtc/Runtime/ONNX/TensorProto.h"
#include "dtc/Runtime/TensorIO.h"
#include "llvm/ADT/StringMap.h"
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

/// `tensor` with zero rows appended, or its last rows dropped, to make
/// `rows` (dtc.unpadded_rows: padding added and stripped).
Tensor withRows(const Tensor &tensor, int64_t rows) {
  Shape shape = tensor.shape();
  std::vector<char> bytes = tensor.toBytes();
  bytes.resize(bytes.size() / shape[0] * rows, 0);
  shape[0] = rows;
  return Tensor::fromBytes(tensor.dtype(), shape, bytes.data());
}

/// This rank's part of `whole`, laid out as `sharding` says. A dimension
/// split over several axes is split by each in turn (the first with the
/// dimension's blocks): tp's part of a weight, then dp's part of that.
std::optional<Tensor> localPart(const Tensor &whole, ShardingAttr sharding,
                                Communicator &comm, const std::string &name) {
  Tensor part = whole;
  for (unsigned d = 0, e = sharding.getDims().size(); d < e; ++d) {
    int64_t blocks = sharding.blocksOf(d);
    for (StringRef axis : sharding.axesOf(d)) {
      std::vector<std::string> group{axis.str()};
      int64_t n = comm.groupSize(group);
      if (d >= part.shape().size() || part.shape()[d] % (n * blocks) != 0) {
        fail("'" + name + "' (" + describe(whole.shape(), whole.dtype()) +
             ") does not split into " + std::to_string(n) +
             " equal shares along dimension " + std::to_string(d));
        return std::nullopt;
      }
      part = chunkOf(part, d, n, comm.groupRank(group), blocks);
      blocks = 1;
    }
  }
  return part;
}

/// The whole tensor from every rank's `part` (all ranks call it): the
/// splits undone in reverse order.
Tensor wholeOf(const Tensor &part, ShardingAttr sharding, Communicator &comm) {
  Tensor whole = part;
  for (unsigned d = 0, e = sharding.getDims().size(); d < e; ++d) {
    SmallVector<StringRef> axes = sharding.axesOf(d);
    for (auto [k, axis] : llvm::enumerate(llvm::reverse(axes))) {
      std::vector<std::string> group{axis.str()};
      bool outermost = k + 1 == axes.size();
      whole = wholeFromChunks(comm.allGather(whole, group, d), d,
                              comm.groupSize(group),
                              outermost ? sharding.blocksOf(d) : 1);
    }
  }
  return whole;
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

int mlir::dtc::runTraining(func::FuncOp step, const TrainingOptions &options,
                           Communicator *comm) {
  std::map<std::string, Tensor> batch, init, provided;
  std::string error;
  if (options.batchDir.empty())
    return fail("training needs --batch DIR (the inputs and labels)"), 1;
  if (!readTensorDir(options.batchDir, batch, error) ||
      (!options.initDir.empty() &&
       !readTensorDir(options.initDir, init, error)))
    return fail(error), 1;
  bool lead = !comm || comm->rank() == 0;

  // Inputs from the batch, parameters from --init or the module, optimizer
  // state zero unless the module gives its start (a loss scale), master
  // weights (`master/<name>`) their parameter's f32 value. A rank takes its
  // part of what the module says is split.
  provided = batch;
  llvm::StringMap<unsigned> masterIndex; // parameter name -> master copy
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i) {
    std::string name = getArgumentName(step, i);
    auto type = cast<RankedTensorType>(step.getArgument(i).getType());
    if (step.getArgAttr(i, kParamAttrName)) {
      auto it = init.find(encodeFileName(name));
      if (it != init.end())
        provided[name] = it->second;
    }
    auto sharding = step.getArgAttrOfType<ShardingAttr>(i, kShardingAttrName);
    if (sharding && !comm)
      sharding = {};
    auto rows = step.getArgAttrOfType<IntegerAttr>(i, kUnpaddedRowsAttrName);
    bool state = step.getArgAttr(i, kStateAttrName) != nullptr;
    bool master = state && StringRef(name).starts_with(kMasterStatePrefix);
    if (master) {
      StringRef paramName =
          StringRef(name).drop_front(kMasterStatePrefix.size());
      masterIndex[paramName] = i;
      BlockArgument param = getParameterArgument(step, paramName);
      auto it = init.find(encodeFileName(paramName.str()));
      auto value = param ? step.getArgAttrOfType<ElementsAttr>(
                               param.getArgNumber(), kValueAttrName)
                         : ElementsAttr();
      FailureOr<Tensor> whole = it != init.end() ? FailureOr<Tensor>(it->second)
                                : value          ? tensorFromAttr(value)
                                                 : FailureOr<Tensor>(failure());
      if (failed(whole))
        return fail("no value for parameter '" + paramName.str() +
                    "', whose master copy '" + name + "' starts from it"),
               1;
      provided[name] = std::move(*whole);
    }
    // Optimizer state starts at zero in its per-rank shape; parameters,
    // master copies and inputs are cut from the whole.
    if ((sharding || rows) && (!state || master)) {
      auto it = provided.find(name);
      if (it == provided.end()) {
        auto value = step.getArgAttrOfType<ElementsAttr>(i, kValueAttrName);
        FailureOr<Tensor> decoded =
            value ? tensorFromAttr(value) : FailureOr<Tensor>(failure());
        if (failed(decoded))
          continue; // bindArguments reports it
        it = provided.emplace(name, std::move(*decoded)).first;
      }
      // Vocabulary padding: the model's rows, then zeros.
      if (rows && it->second.rank() > 0 &&
          it->second.shape()[0] == rows.getInt()) {
        int64_t padded = type.getDimSize(0);
        if (sharding)
          for (StringRef axis : sharding.axesOf(0))
            padded *= comm->groupSize({axis.str()});
        it->second = withRows(it->second, padded);
      }
      if (!sharding)
        continue;
      std::optional<Tensor> part = localPart(it->second, sharding, *comm, name);
      if (!part)
        return 1;
      it->second = std::move(*part);
    } else if (state && !master && !step.getArgAttr(i, kValueAttrName)) {
      provided[name] =
          Tensor(*dtypeOf(type.getElementType()), Shape(type.getShape()));
    }
  }
  FailureOr<SmallVector<Tensor>> bound = bindArguments(step, provided);
  if (failed(bound))
    return 1;
  SmallVector<Tensor> args = std::move(*bound);

  // Where each result goes.
  llvm::StringMap<unsigned> argIndex;
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i)
    argIndex[getArgumentName(step, i)] = i;
  std::optional<unsigned> lossIndex;
  SmallVector<std::pair<unsigned, unsigned>> feedBack; // result -> argument
  SmallVector<std::pair<unsigned, std::string>> grads;
  for (unsigned i = 0, e = step.getNumResults(); i < e; ++i) {
    if (auto out = step.getResultAttrOfType<StringAttr>(i, kOutputAttrName);
        out && out.getValue() == "loss")
      lossIndex = i;
    if (auto grad = step.getResultAttrOfType<StringAttr>(i, kGradAttrName))
      grads.emplace_back(i, grad.str());
    if (auto update =
            step.getResultAttrOfType<StringAttr>(i, kUpdateAttrName)) {
      auto it = argIndex.find(update.getValue());
      if (it == argIndex.end())
        return fail("result " + std::to_string(i) + " updates '" +
                    update.str() + "', which is no argument"),
               1;
      feedBack.emplace_back(i, it->second);
    }
  }
  if (!lossIndex)
    return fail("the function returns no 'loss'; compile it with dtc-compile"),
           1;

  // Arguments no result updates (inputs, frozen parameters) are the same
  // every step.
  SmallVector<bool> updated(step.getNumArguments(), false);
  for (auto [result, arg] : feedBack)
    updated[arg] = true;
  SmallVector<Tensor> fixed(step.getNumArguments());
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i)
    if (!updated[i])
      fixed[i] = args[i];

  int64_t logEvery = options.logEvery > 0
                         ? options.logEvery
                         : std::max<int64_t>(1, options.steps / 10);
  Tensor losses(DType::F32, {options.steps});
  int64_t peakBytes = 0;
  SmallVector<Tensor> results;
  auto start = std::chrono::steady_clock::now();
  auto secondsSinceStart = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  for (int64_t k = 0; k < options.steps; ++k) {
    // The step's arguments are donated to it: parameters and state are
    // freed once used, and their updates become the next step's arguments.
    InterpretStats stats;
    FailureOr<SmallVector<Tensor>> out =
        interpretFunction(step, std::move(args), comm, &stats);
    peakBytes = std::max(peakBytes, stats.peakIntermediateBytes);
    if (failed(out))
      return 1;
    results = std::move(*out);
    args = fixed;
    for (auto [result, arg] : feedBack)
      args[arg] = std::move(results[result]);
    double loss = results[*lossIndex].at(0);
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
  // Dumps hold whole tensors: split parameters and their gradients are
  // gathered (by every rank) and written by the first.
  auto whole = [&](const Tensor &part, ShardingAttr sharding,
                   IntegerAttr rows) {
    Tensor all = sharding && comm ? wholeOf(part, sharding, *comm) : part;
    return rows ? withRows(all, rows.getInt()) : all;
  };
  if (lead && !dump(options.dumpDir, "", "loss", losses))
    return 1;
  for (auto &[index, name] : grads) {
    // A gradient split or padded unlike its parameter (ZeRO) says so itself.
    unsigned arg = argIndex[name];
    auto sharding =
        step.getResultAttrOfType<ShardingAttr>(index, kShardingAttrName);
    if (!sharding)
      sharding = step.getArgAttrOfType<ShardingAttr>(arg, kShardingAttrName);
    auto rows =
        step.getResultAttrOfType<IntegerAttr>(index, kUnpaddedRowsAttrName);
    if (!rows)
      rows = step.getArgAttrOfType<IntegerAttr>(arg, kUnpaddedRowsAttrName);
    Tensor grad = whole(results[index], sharding, rows);
    if (lead && !dump(options.dumpDir, "grad", name, grad))
      return 1;
  }
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i) {
    if (!step.getArgAttr(i, kParamAttrName))
      continue;
    // A parameter kept in bf16 is dumped as its f32 master copy.
    std::string name = getArgumentName(step, i);
    auto it = masterIndex.find(name);
    unsigned from = it != masterIndex.end() ? it->second : i;
    Tensor param =
        whole(args[from],
              step.getArgAttrOfType<ShardingAttr>(from, kShardingAttrName),
              step.getArgAttrOfType<IntegerAttr>(from, kUnpaddedRowsAttrName));
    if (lead && !dump(options.dumpDir, "param", name, param))
      return 1;
  }
  return 0;
}
