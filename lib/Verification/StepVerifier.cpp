//===- StepVerifier.cpp - a per-rank program against one device -----------===//
//
// Runs both programs from one set of starting values, compares what a
// training step returns, and, on a mismatch, finds the first op whose
// ranks' parts disagree with the single-device value. See StepVerifier.h.
//
//===----------------------------------------------------------------------===//

#include "dtc/Verification/StepVerifier.h"

#include "dtc/Dialect/DTC/IR/DTCLocations.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "dtc/Interpreter/Interpreter.h"
#include "dtc/Interpreter/TensorAttr.h"
#include "dtc/Runtime/Simulated/SimulatedCommunicator.h"
#include "dtc/Runtime/StepBinding.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <random>

using namespace mlir;
using namespace mlir::dtc;

//===----------------------------------------------------------------------===//
// Tags
//===----------------------------------------------------------------------===//

void mlir::dtc::tagOps(ModuleOp module) {
  int64_t next = 0;
  module.walk([&](Operation *op) {
    if (isa<ModuleOp, func::FuncOp>(op))
      return;
    op->setLoc(NameLoc::get(
        StringAttr::get(op->getContext(), kVerifyTagPrefix + Twine(next++)),
        op->getLoc()));
  });
}

/// `loc` without tags (also inside the locations that canonicalization
/// fuses).
static Location untagged(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    Location child = untagged(name.getChildLoc());
    if (name.getName().getValue().starts_with(kVerifyTagPrefix))
      return child;
    return child == name.getChildLoc() ? loc
                                       : NameLoc::get(name.getName(), child);
  }
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    SmallVector<Location> parts;
    for (Location part : fused.getLocations())
      parts.push_back(untagged(part));
    return FusedLoc::get(loc.getContext(), parts, fused.getMetadata());
  }
  return loc;
}

void mlir::dtc::stripTags(ModuleOp module) {
  module.walk([](Operation *op) { op->setLoc(untagged(op->getLoc())); });
}

/// The tag of `op`, or -1.
static int64_t tagOf(Operation *op) {
  auto name = dyn_cast<NameLoc>(op->getLoc());
  if (!name)
    return -1;
  StringRef text = name.getName().getValue();
  int64_t tag;
  if (!text.consume_front(kVerifyTagPrefix) || text.getAsInteger(10, tag))
    return -1;
  return tag;
}

//===----------------------------------------------------------------------===//
// Starting values
//===----------------------------------------------------------------------===//

/// How an integer input is used: the rows of the tables it indexes
/// (through views of it; a padded parameter's real rows; 0 when it indexes
/// none), and whether it does nothing else (then ids may be negative,
/// counting from the end, as ONNX's Gather allows).
struct IndexUse {
  int64_t bound = 0;
  bool onlyIndexes = true;
};

static IndexUse indexUse(Value input, const StepSignature &signature) {
  IndexUse found;
  SmallVector<Value> work{input};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value value = work.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto gather = dyn_cast<GatherOp>(user);
          gather && use.getOperandNumber() == 1) {
        int64_t rows = gather.getInput().getType().getDimSize(gather.getDim());
        Value table = gather.getInput();
        while (auto cast = table.getDefiningOp<CastOp>())
          table = cast.getInput();
        if (auto arg = dyn_cast<BlockArgument>(table))
          if (const StepArgument &table =
                  signature.arguments[arg.getArgNumber()];
              table.unpaddedRows && table.layout.paddedDim == gather.getDim())
            rows = *table.unpaddedRows;
        found.bound = found.bound ? std::min(found.bound, rows) : rows;
      } else if (auto scatter = dyn_cast<ScatterAddOp>(user);
                 scatter && &use == &scatter.getIndicesMutable()) {
        // (The lookup's gradient, reading the same ids.)
      } else if (isa<ReshapeOp, SliceOp, BroadcastOp, TransposeOp, CastOp,
                     ConcatOp>(user)) {
        work.push_back(user->getResult(0));
      } else {
        found.onlyIndexes = false;
      }
    }
  }
  if (!found.bound)
    found.onlyIndexes = false;
  return found;
}

/// Seeded starting values by argument name: every input without a value
/// random (integer ids within the rows of what they index, counting from
/// the end too where that is all they do; elsewhere, as labels, below the
/// smallest such table), every parameter its value perturbed by
/// `options.noise` of its RMS (random, without one), fp16's loss scale 1.
static LogicalResult
startingValues(func::FuncOp func, const StepSignature &signature,
               const StepVerifyOptions &options,
               std::map<std::string, Tensor> &values) {
  std::mt19937_64 rng(options.seed);
  std::normal_distribution<double> normal;
  int64_t smallestTable = 0;
  for (auto [i, arg] : llvm::enumerate(signature.arguments))
    if (arg.role == ArgumentRole::Input && !isFloatDType(arg.dtype))
      if (int64_t bound = indexUse(func.getArgument(i), signature).bound)
        smallestTable = smallestTable ? std::min(smallestTable, bound) : bound;
  for (auto [i, arg] : llvm::enumerate(signature.arguments)) {
    Tensor value(arg.dtype, arg.shape);
    if (auto attr = func.getArgAttrOfType<ElementsAttr>(i, kValueAttrName)) {
      FailureOr<Tensor> decoded = tensorFromAttr(attr);
      if (failed(decoded))
        return func.emitError("--verify: cannot decode the value of '")
               << arg.name << "'";
      value = std::move(*decoded);
    } else if (arg.role == ArgumentRole::State) {
      continue;
    }
    if (arg.role == ArgumentRole::State &&
        arg.stateKind == StepStateKind::LossScale) {
      // fp16: a first step at GradScaler's scale overflows, on one device
      // or on the ranks depending on the order of the sums, and is
      // skipped; at scale 1 both compute.
      for (double &x : value.floats())
        x = 1.0;
    }
    // (An input with a `dtc.value`, as the sharding conformance suite
    // writes, starts from it like a parameter.)
    bool given = func.getArgAttr(i, kValueAttrName) != nullptr;
    if (arg.role == ArgumentRole::Input && !value.isFloat() && !given) {
      IndexUse use = indexUse(func.getArgument(i), signature);
      int64_t bound = use.bound ? use.bound : smallestTable ? smallestTable : 2;
      std::uniform_int_distribution<int64_t> ids(use.onlyIndexes ? -bound : 0,
                                                 bound - 1);
      for (int64_t &id : value.ints())
        id = ids(rng);
    } else if (arg.role != ArgumentRole::State && value.isFloat()) {
      double sumSquares = 0;
      for (double x : value.floats())
        sumSquares += x * x;
      // Without a value: N(0, 1) for an input, N(0, 1/4) for a parameter
      // (tiny parameters make softmaxes uniform, whose gradients cancel
      // to rounding noise, and no comparison means anything).
      double rms = std::sqrt(sumSquares /
                             std::max<int64_t>(1, value.numElements()));
      double scale = !given ? (arg.role == ArgumentRole::Input ? 1.0 : 0.5)
                            : options.noise * std::max(rms, 0.02);
      for (double &x : value.floats())
        x += scale * normal(rng);
    }
    value.roundToElementType();
    values[arg.name] = std::move(value);
  }
  return success();
}

/// The starting values of `signature`'s arguments, by index.
static std::vector<std::optional<Tensor>>
bindByName(const StepSignature &signature,
           const std::map<std::string, Tensor> &values) {
  std::vector<std::optional<Tensor>> start(signature.arguments.size());
  for (auto [i, arg] : llvm::enumerate(signature.arguments))
    if (auto it = values.find(arg.name); it != values.end())
      start[i] = it->second;
  return start;
}

//===----------------------------------------------------------------------===//
// Running both programs
//===----------------------------------------------------------------------===//

namespace {

/// What one run of a program gave: each result whole (loss, gradients,
/// updates), and the values of the recorded ops (per rank).
struct Run {
  std::vector<Tensor> results;
  /// A recorded op -> its first result, per world rank.
  llvm::DenseMap<Operation *, std::vector<Tensor>> values;
  bool ok = false;
};

/// The ops of `ranks` that stand for one op of `single`, paired: the op
/// of `single` a tag names, if it names one (accumulation's copies of an
/// op share a tag), and the one op of `ranks` of the same name with that
/// tag (the partitioners give the ops they insert around an op its
/// location, and so its tag).
llvm::DenseMap<Operation *, Operation *> pairOps(func::FuncOp single,
                                                 func::FuncOp ranks) {
  auto byTag = [](func::FuncOp func) {
    llvm::DenseMap<int64_t, SmallVector<Operation *, 1>> ops;
    func.walk([&](Operation *op) {
      if (int64_t tag = tagOf(op); tag >= 0 && op->getNumResults() > 0)
        ops[tag].push_back(op);
    });
    return ops;
  };
  auto inSingle = byTag(single), inRanks = byTag(ranks);
  llvm::DenseMap<Operation *, Operation *> pairs;
  for (auto &[tag, ops] : inSingle) {
    if (ops.size() != 1)
      continue;
    SmallVector<Operation *> same;
    for (Operation *op : inRanks.lookup(tag))
      if (op->getName() == ops.front()->getName())
        same.push_back(op);
    if (same.size() == 1)
      pairs[same.front()] = ops.front();
  }
  return pairs;
}

class Verifier {
public:
  Verifier(func::FuncOp single, func::FuncOp ranks,
           const StepVerifyOptions &options, llvm::raw_ostream &log)
      : single(single), ranks(ranks), options(options), log(log) {}

  LogicalResult run();

private:
  Run execute(func::FuncOp func, const StepSignature &sig,
              const llvm::DenseSet<Operation *> *record);
  /// The mismatches of the step's results; none: they agree.
  std::vector<std::string> compare(const Run &one, const Run &mesh,
                                   double &worstLoss, double &worstGrad,
                                   double &worstUpdate);
  void findFirstWrongOp();

  func::FuncOp single, ranks;
  const StepVerifyOptions &options;
  llvm::raw_ostream &log;
  StepSignature oneSig, meshSig;
  std::map<std::string, Tensor> start;
};

} // namespace

/// Runs `func` (of `sig`) from the starting values: on one device, or on
/// its mesh with every rank a thread.
Run Verifier::execute(func::FuncOp func, const StepSignature &sig,
                      const llvm::DenseSet<Operation *> *record) {
  Run run;
  int64_t n = sig.mesh.numDevices();
  std::mutex mutex;
  std::vector<std::string> errors;
  bool ok = true;
  run.results.resize(sig.results.size());
  std::vector<std::optional<Tensor>> first = bindByName(sig, start);
  auto rankBody = [&](Communicator *comm) {
    int64_t rank = comm ? comm->rank() : 0;
    auto fail = [&](const std::string &error) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!error.empty())
        errors.push_back(comm ? "rank " + std::to_string(rank) + ": " + error
                              : error);
      ok = false;
      if (comm)
        abortSimulatedWorld(*comm);
    };
    StepBinding binding(sig, comm);
    std::vector<Tensor> args;
    if (std::string error = binding.bind(first, args); !error.empty())
      return fail(error);
    OpObserver observe;
    if (record)
      observe = [&](Operation *op, ArrayRef<Tensor> results) {
        if (!record->contains(op))
          return;
        std::lock_guard<std::mutex> lock(mutex);
        std::vector<Tensor> &parts = run.values[op];
        parts.resize(n);
        parts[rank] = results.front();
      };
    FailureOr<SmallVector<Tensor>> out = interpretFunction(
        func, SmallVector<Tensor>(args.begin(), args.end()), comm, nullptr,
        observe);
    if (failed(out))
      return fail("");
    // Whole (padding stripped) on every rank; rank 0's kept.
    for (size_t i = 0; i < sig.results.size(); ++i) {
      Tensor whole = binding.wholeResult(i, (*out)[i]);
      if (rank == 0)
        run.results[i] = std::move(whole);
    }
  };
  if (sig.mesh.axes.empty())
    rankBody(nullptr);
  else
    runSimulatedRanks(sig.mesh, [&](Communicator &comm) { rankBody(&comm); });
  for (const std::string &error : errors)
    func.emitError("--verify: ") << error;
  run.ok = ok;
  return run;
}

static double norm(const Tensor &t) {
  double sum = 0;
  for (int64_t i = 0; i < t.numElements(); ++i)
    sum += t.at(i) * t.at(i);
  return std::sqrt(sum);
}

/// ||a - b|| (over `mask`'s elements where given), or infinity when the
/// shapes differ.
static double distance(const Tensor &a, const Tensor &b,
                       const std::vector<bool> *mask = nullptr) {
  if (a.shape() != b.shape())
    return INFINITY;
  double sum = 0;
  for (int64_t i = 0; i < a.numElements(); ++i)
    if (!mask || (*mask)[i])
      sum += (a.at(i) - b.at(i)) * (a.at(i) - b.at(i));
  return std::sqrt(sum);
}

std::vector<std::string> Verifier::compare(const Run &one, const Run &mesh,
                                           double &worstLoss,
                                           double &worstGrad,
                                           double &worstUpdate) {
  std::vector<std::string> mismatches;
  auto result = [](const StepSignature &sig, ResultRole role,
                   const std::string &name) -> std::optional<size_t> {
    for (auto [i, r] : llvm::enumerate(sig.results))
      if (r.role == role && r.name == name)
        return i;
    return std::nullopt;
  };
  double loss = one.results[oneSig.loss].at(0);
  double meshLoss = mesh.results[meshSig.loss].at(0);
  worstLoss = std::abs(meshLoss - loss) / std::max(std::abs(loss), 1e-30);
  if (!(worstLoss <= options.lossRtol))
    mismatches.push_back(llvm::formatv("loss {0:e7} vs {1:e7} on one device "
                                       "(relative error {2:e2})",
                                       meshLoss, loss, worstLoss)
                             .str());
  // The gradients, and the parameters' updates over the elements whose
  // gradient matters (Adam turns gradients that are zero in exact
  // arithmetic into steps of arbitrary sign).
  double largest = 0;
  for (const StepResult &r : oneSig.results)
    if (r.role == ResultRole::Gradient)
      if (std::optional<size_t> i = result(oneSig, r.role, r.name))
        largest = std::max(largest, norm(one.results[*i]));
  worstGrad = worstUpdate = 0;
  for (const StepResult &r : oneSig.results) {
    if (r.role != ResultRole::Gradient)
      continue;
    const Tensor &grad = one.results[*result(oneSig, r.role, r.name)];
    std::optional<size_t> theirs = result(meshSig, r.role, r.name);
    if (!theirs) {
      mismatches.push_back("no gradient of '" + r.name + "'");
      continue;
    }
    const Tensor &meshGrad = mesh.results[*theirs];
    double gradNorm = norm(grad);
    // (All zero: an op without a derivative, ArgMax.)
    bool zero = gradNorm <= 1e-6 * largest;
    double err = zero ? norm(meshGrad) / std::max(largest, 1e-30)
                      : distance(meshGrad, grad) / gradNorm;
    if (!zero)
      worstGrad = std::max(worstGrad, err);
    if (!(zero ? err < 1e-6 : err <= options.gradRl2))
      mismatches.push_back(llvm::formatv("gradient of '{0}': relative L2 "
                                         "error {1:e2}",
                                         r.name, err)
                               .str());
    if (zero)
      continue;
    // Its update: the result that is the parameter's next value.
    // (Of its f32 master copy where it has one: a bf16 parameter's own
    // update is rounded to steps of its magnitude / 128.)
    auto update = [&](const StepSignature &sig, const Run &run)
        -> const Tensor * {
      std::optional<size_t> master =
          sig.stateArgument(StepStateKind::Master, r.name);
      for (auto [i, res] : llvm::enumerate(sig.results)) {
        if (res.role != ResultRole::Update || !res.updatedArgument)
          continue;
        const StepArgument &arg = sig.arguments[*res.updatedArgument];
        if (master ? *res.updatedArgument == *master
                   : arg.role == ArgumentRole::Parameter && arg.name == r.name)
          return &run.results[i];
      }
      return nullptr;
    };
    const Tensor *after = update(oneSig, one), *meshAfter = update(meshSig, mesh);
    auto before = start.find(r.name);
    if (!after || !meshAfter || before == start.end())
      continue;
    // Over the elements whose gradient is not negligible and that the two
    // gradients agree on (to half its size: in bf16 a gradient that is
    // zero in exact arithmetic is noise, and Adam's step of noise has
    // either sign); a wrong gradient fails the check above.
    double rms = gradNorm / std::sqrt(double(grad.numElements()));
    std::vector<bool> mask(grad.numElements());
    Tensor delta = *after, meshDelta = *meshAfter;
    for (int64_t i = 0; i < grad.numElements(); ++i) {
      double g = std::abs(grad.at(i));
      mask[i] = g >= 1e-4 * rms &&
                (i >= meshGrad.numElements() ||
                 std::abs(meshGrad.at(i) - grad.at(i)) <= 0.5 * g);
      if (delta.isFloat()) {
        delta.floats()[i] -= before->second.at(i);
        if (i < meshDelta.numElements())
          meshDelta.floats()[i] -= before->second.at(i);
      }
    }
    Tensor zeros = delta;
    for (double &x : zeros.floats())
      x = 0;
    double size = distance(delta, zeros, &mask);
    double updateErr =
        distance(meshDelta, delta, &mask) / std::max(size, 1e-30);
    worstUpdate = std::max(worstUpdate, updateErr);
    if (!(updateErr <= options.updateRl2))
      mismatches.push_back(llvm::formatv("update of '{0}': relative L2 "
                                         "error {1:e2}",
                                         r.name, updateErr)
                               .str());
  }
  return mismatches;
}

//===----------------------------------------------------------------------===//
// The first wrong op
//===----------------------------------------------------------------------===//

namespace {

/// How the ranks' parts of a value relate to the whole: a split of some
/// dimensions over some axes, and over the other axes either the same
/// value or a partial sum.
struct LayoutMatch {
  std::string description;
  /// The largest distance of a rank's part (or group's sum) from what the
  /// layout says it should be, relative to the whole's norm.
  double error = INFINITY;
};

class LayoutSearch {
public:
  LayoutSearch(const MeshShape &mesh, const Tensor &whole,
               const std::vector<Tensor> &parts)
      : mesh(mesh), whole(whole), parts(parts), scale(norm(whole)) {}

  /// The layout that fits the parts best.
  LayoutMatch best() {
    const Shape &local = parts.front().shape();
    LayoutMatch found;
    if (local.size() != whole.shape().size()) {
      found.description = "a part of another rank";
      return found;
    }
    dimAxes.assign(local.size(), {});
    blocks.assign(local.size(), 1);
    assign(0, std::vector<bool>(mesh.axes.size(), false), found);
    return found;
  }

private:
  /// Chooses the axes (and blocks) of dimension `dim` onwards.
  void assign(size_t dim, std::vector<bool> used, LayoutMatch &found) {
    const Shape &local = parts.front().shape();
    if (dim == local.size())
      return evaluate(used, found);
    int64_t ratio = whole.shape()[dim] / std::max<int64_t>(local[dim], 1);
    if (ratio * local[dim] != whole.shape()[dim])
      return;
    if (ratio == 1) {
      dimAxes[dim].clear();
      blocks[dim] = 1;
      return assign(dim + 1, used, found);
    }
    // One axis, or two in either order, whose sizes multiply to the ratio.
    for (size_t a = 0; a < mesh.axes.size(); ++a) {
      if (used[a])
        continue;
      std::vector<std::vector<size_t>> choices;
      if (mesh.sizes[a] == ratio)
        choices.push_back({a});
      for (size_t b = 0; b < mesh.axes.size(); ++b)
        if (b != a && !used[b] && mesh.sizes[a] * mesh.sizes[b] == ratio)
          choices.push_back({a, b});
      for (const std::vector<size_t> &axes : choices)
        for (int64_t n : {1, 2, 3}) {
          if (local[dim] % n != 0)
            continue;
          dimAxes[dim] = axes;
          blocks[dim] = n;
          std::vector<bool> now = used;
          for (size_t axis : axes)
            now[axis] = true;
          assign(dim + 1, now, found);
        }
    }
  }

  /// Index of `rank` in the row-major order of `axes`' coordinates.
  int64_t indexAlong(int64_t rank, const std::vector<size_t> &axes) const {
    std::vector<int64_t> coords = mesh.coordinates(rank);
    int64_t index = 0;
    for (size_t axis : axes)
      index = index * mesh.sizes[axis] + coords[axis];
    return index;
  }

  void evaluate(const std::vector<bool> &used, LayoutMatch &found) {
    int64_t n = mesh.numDevices();
    std::vector<Tensor> expected;
    for (int64_t r = 0; r < n; ++r) {
      Tensor part = whole;
      for (size_t d = 0; d < dimAxes.size(); ++d) {
        if (dimAxes[d].empty())
          continue;
        int64_t count = 1;
        for (size_t axis : dimAxes[d])
          count *= mesh.sizes[axis];
        part = chunkOf(part, d, count, indexAlong(r, dimAxes[d]), blocks[d]);
      }
      expected.push_back(std::move(part));
    }
    std::string split;
    for (size_t d = 0; d < dimAxes.size(); ++d) {
      if (dimAxes[d].empty())
        continue;
      split += (split.empty() ? "split along " : ", ") + std::to_string(d) +
               " over ";
      for (size_t i = 0; i < dimAxes[d].size(); ++i)
        split += (i ? "," : "") + mesh.axes[dimAxes[d][i]];
      if (blocks[d] > 1)
        split += " in " + std::to_string(blocks[d]) + " blocks";
    }
    // The other axes: the same on each rank, or a partial sum over some.
    std::vector<size_t> rest;
    for (size_t a = 0; a < mesh.axes.size(); ++a)
      if (!used[a])
        rest.push_back(a);
    for (uint64_t subset = 0; subset < (uint64_t(1) << rest.size());
         ++subset) {
      std::vector<size_t> summed;
      for (size_t i = 0; i < rest.size(); ++i)
        if (subset & (uint64_t(1) << i))
          summed.push_back(rest[i]);
      double error = 0;
      for (int64_t r = 0; r < n; ++r) {
        Tensor value = parts[r];
        if (!summed.empty()) {
          // The sum over the ranks that differ from r only along `summed`.
          std::vector<int64_t> mine = mesh.coordinates(r);
          for (int64_t q = 0; q < n; ++q) {
            std::vector<int64_t> theirs = mesh.coordinates(q);
            bool member = q != r;
            for (size_t a = 0; a < mesh.axes.size() && member; ++a)
              if (theirs[a] != mine[a] &&
                  !llvm::is_contained(summed, a))
                member = false;
            if (member && value.isFloat())
              for (int64_t i = 0; i < value.numElements(); ++i)
                value.floats()[i] += parts[q].at(i);
          }
        }
        error = std::max(error, distance(value, expected[r]) /
                                    std::max(scale, 1e-30));
      }
      if (error < found.error) {
        found.error = error;
        std::string over;
        for (size_t a : summed)
          over += (over.empty() ? "" : ",") + mesh.axes[a];
        found.description =
            (split.empty() ? std::string("replicated") : split) +
            (summed.empty() ? "" : " (partial sums over " + over + ")");
      }
    }
  }

  const MeshShape &mesh;
  const Tensor &whole;
  const std::vector<Tensor> &parts;
  double scale;
  std::vector<std::vector<size_t>> dimAxes;
  std::vector<int64_t> blocks;
};

} // namespace

/// The collectives (and rank-local cuts) that feed `op`, through the ops
/// the partitioners inserted around them.
static std::vector<std::string> feedingCollectives(Operation *op) {
  std::vector<std::string> found;
  SmallVector<std::pair<Value, int>> work;
  for (Value operand : op->getOperands())
    work.push_back({operand, 0});
  llvm::DenseSet<Operation *> seen;
  while (!work.empty()) {
    auto [value, depth] = work.pop_back_val();
    Operation *def = value.getDefiningOp();
    if (!def || !seen.insert(def).second)
      continue;
    if (auto collective = dyn_cast<CollectiveOpInterface>(def)) {
      std::string text = collective.getCollectiveKind().str();
      if (StringAttr reason = collective.getReasonAttr())
        text += " (" + reason.str() + ")";
      found.push_back(text);
      continue;
    }
    if (auto shard = dyn_cast<ShardOp>(def)) {
      found.push_back("shard along " + std::to_string(shard.getDim()) +
                      (shard.getReason() ? " (" + shard.getReason()->str() + ")"
                                         : std::string()));
      continue;
    }
    // Through what the partitioners made (no tag of their own) and views.
    if (depth < 4 && (tagOf(def) < 0 || isa<ReshapeOp, TransposeOp>(def)))
      for (Value operand : def->getOperands())
        work.push_back({operand, depth + 1});
  }
  return found;
}

void Verifier::findFirstWrongOp() {
  llvm::DenseMap<Operation *, Operation *> pairs = pairOps(single, ranks);
  llvm::DenseSet<Operation *> inSingle, inRanks;
  for (auto [rankOp, singleOp] : pairs) {
    inRanks.insert(rankOp);
    inSingle.insert(singleOp);
  }
  Run one = execute(single, oneSig, &inSingle),
      mesh = execute(ranks, meshSig, &inRanks);
  if (!one.ok || !mesh.ok)
    return;
  // An op is compared when what it reads is comparable too: arguments,
  // constants, paired ops, and the collectives and cuts that change only
  // layouts (through views). One whose operands a pattern made into
  // something else (a vocabulary-parallel lookup reads local, masked ids)
  // computes another thing by design; its readers are compared instead.
  std::function<bool(Value)> comparable = [&](Value value) {
    Operation *def = value.getDefiningOp();
    if (!def || pairs.count(def) ||
        isa<ConstantOp, ShardOp, CollectiveOpInterface>(def))
      return true;
    return isa<ReshapeOp, TransposeOp>(def) && comparable(def->getOperand(0));
  };
  for (Operation &op : ranks.getBody().front()) {
    auto pair = pairs.find(&op);
    if (pair == pairs.end() || !llvm::all_of(op.getOperands(), comparable))
      continue;
    auto wholeIt = one.values.find(pair->second);
    auto partsIt = mesh.values.find(&op);
    if (wholeIt == one.values.end() || partsIt == mesh.values.end())
      continue;
    const Tensor &whole = wholeIt->second.front();
    const std::vector<Tensor> &parts = partsIt->second;
    if (whole.numElements() == 0 ||
        llvm::any_of(parts, [&](const Tensor &part) {
          return part.shape() != parts.front().shape();
        }))
      continue;
    LayoutMatch match = LayoutSearch(meshSig.mesh, whole, parts).best();
    if (match.error <= options.valueRl2)
      continue;
    auto type = [](Type t) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << t;
      return text;
    };
    InFlightDiagnostic diag =
        op.emitError("--verify: the first op whose ranks' parts disagree "
                     "with the single-device step: ")
        << describeOp(&op) << ", result " << type(op.getResult(0).getType())
        << " per rank, "
        << type(pair->second->getResult(0).getType()) << " on one device; ";
    if (std::isinf(match.error))
      diag << "no layout of the whole gives the parts' shape";
    else
      diag << "closest layout: " << match.description << ", off by "
           << llvm::formatv("{0:e2}", match.error).str()
           << " (relative L2)";
    std::vector<std::string> feeding = feedingCollectives(&op);
    if (feeding.empty())
      diag << "; no collective feeds it";
    for (const std::string &text : feeding)
      diag << "; fed by " << text;
    return;
  }
  log << "dtc-verify-partition: no single op's values disagree (the "
         "results do): compare the collectives of the step's end\n";
}

LogicalResult Verifier::run() {
  FailureOr<TrainingStep> oneStep = TrainingStep::get(single);
  FailureOr<TrainingStep> meshStep = TrainingStep::get(ranks);
  if (failed(oneStep) || failed(meshStep))
    return failure();
  FailureOr<StepSignature> oneSignature = oneStep->getSignature();
  FailureOr<StepSignature> meshSignature = meshStep->getSignature();
  if (failed(oneSignature) || failed(meshSignature))
    return failure();
  oneSig = std::move(*oneSignature);
  meshSig = std::move(*meshSignature);
  if (failed(startingValues(single, oneSig, options, start)))
    return failure();

  auto clock = std::chrono::steady_clock::now;
  auto began = clock();
  Run one = execute(single, oneSig, nullptr);
  if (!one.ok)
    return failure();
  auto middle = clock();
  Run mesh = execute(ranks, meshSig, nullptr);
  if (!mesh.ok)
    return failure();
  auto seconds = [](auto from, auto to) {
    return std::chrono::duration<double>(to - from).count();
  };
  double worstLoss, worstGrad, worstUpdate;
  std::vector<std::string> mismatches =
      compare(one, mesh, worstLoss, worstGrad, worstUpdate);
  // "4 simulated ranks (dp=2,tp=2), 2 microbatches".
  std::string program;
  for (size_t a = 0; a < meshSig.mesh.axes.size(); ++a)
    program += (a ? "," : "") + meshSig.mesh.axes[a] + "=" +
               std::to_string(meshSig.mesh.sizes[a]);
  program = program.empty() ? "one device"
                            : std::to_string(meshSig.mesh.numDevices()) +
                                  " simulated ranks (" + program + ")";
  if (meshSig.microbatches > 1)
    program += ", " + std::to_string(meshSig.microbatches) + " microbatches";
  log << llvm::formatv(
      "dtc-verify-partition: single-device step {0:f2} s, per-rank program "
      "on {1} {2:f2} s; worst relative error: loss {3:e2}, gradients "
      "{4:e2}, updates {5:e2}\n",
      seconds(began, middle), program, seconds(middle, clock()), worstLoss,
      worstGrad, worstUpdate);
  if (mismatches.empty())
    return success();
  InFlightDiagnostic diag =
      ranks.emitError("--verify: the per-rank program does not compute the "
                      "single-device step: ");
  for (auto [i, text] : llvm::enumerate(mismatches)) {
    if (i == 3) {
      diag << "; and " << (mismatches.size() - 3) << " more";
      break;
    }
    diag << (i ? "; " : "") << text;
  }
  diag.report();
  findFirstWrongOp();
  return failure();
}

LogicalResult mlir::dtc::verifyRankProgram(func::FuncOp singleDevice,
                                           func::FuncOp rankProgram,
                                           const StepVerifyOptions &options,
                                           llvm::raw_ostream &log) {
  return Verifier(singleDevice, rankProgram, options, log).run();
}
