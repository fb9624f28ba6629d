//===- PipelineParallel.cpp - pipeline stages over a pp axis --------------===//
//
// The step of one microbatch is cut into stages: the batch-dependent ops
// the loss reads, in program order, at the points the fewest activation
// bytes cross, balanced by their roofline time; each backward op joins the
// stage of the forward op it differentiates (it carries that op's
// location), and never a stage above a backward value it reads, so
// gradients only flow down. What reads no batch value (parameters' casts,
// constants) belongs to no stage: it runs where what it reads is held. A
// parameter is held by the ranks whose stages read it (dtc.pp_ranks). The
// program is then unrolled over the microbatches, as gradient accumulation
// does, and its ops are ordered as the schedule runs the fragments (stage,
// microbatch, forward / backward / input and weight gradient) when every
// fragment takes unit time: each rank's ops come in its action list's
// order. A value read on another rank is broadcast over pp after the
// fragment that made it: an activation to the stages that read it, a
// gradient to the other ranks holding its parameter, the loss and the
// outputs to every rank. The optimizer after this pass updates each
// parameter where it is held.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Parallel/Passes.h"

#include "Partitioner.h"
#include "dtc/Analysis/DeviceSpec.h"
#include "dtc/Analysis/Layers.h"
#include "dtc/Analysis/Phases.h"
#include "dtc/Analysis/Roofline.h"
#include "dtc/Dialect/DTC/IR/DeadOps.h"
#include "dtc/Dialect/DTC/IR/PipelineStages.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "dtc/Transforms/Pipeline/Schedule.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

#include <limits>
#include <map>
#include <numeric>
#include <set>

namespace mlir::dtc {
#define GEN_PASS_DEF_PIPELINEPARALLEL
#include "dtc/Transforms/Parallel/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;
namespace pp = mlir::dtc::pipeline;

namespace {

/// The stage of an op every rank runs.
constexpr int64_t kEveryStage = -1;

int64_t getStage(Operation *op) {
  auto stage =
      op->getDiscardableAttrDictionary().getAs<IntegerAttr>(kStageAttrName);
  return stage ? stage.getInt() : kEveryStage;
}

void setStage(Operation *op, int64_t stage) {
  if (stage == kEveryStage)
    op->removeDiscardableAttr(kStageAttrName);
  else
    op->setDiscardableAttr(
        kStageAttrName,
        IntegerAttr::get(IntegerType::get(op->getContext(), 64), stage));
}

std::optional<int64_t> getMicrobatch(Operation *op) {
  auto k = op->getDiscardableAttrDictionary().getAs<IntegerAttr>(
      kMicrobatchAttrName);
  return k ? std::optional<int64_t>(k.getInt()) : std::nullopt;
}

/// The ops of the backward: those classifyStepPhases puts there, and those
/// of no phase (feeding neither the loss nor a gradient) that read them.
llvm::DenseSet<Operation *> getBackwardOps(func::FuncOp func) {
  llvm::DenseMap<Operation *, StepPhase> phases = classifyStepPhases(func);
  llvm::DenseSet<Operation *> backward;
  for (Operation &op : func.getBody().front().without_terminator()) {
    StepPhase phase = phases.lookup(&op);
    if (phase == StepPhase::Backward ||
        (phase == StepPhase::Optimizer &&
         llvm::any_of(op.getOperands(), [&](Value v) {
           Operation *def = v.getDefiningOp();
           return def && backward.contains(def);
         })))
      backward.insert(&op);
  }
  return backward;
}

int64_t byteSize(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return 0;
  return type.getNumElements() *
         std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
}

/// The cuts among `cuts` (spine positions, a stage ends after the op a cut
/// follows) that minimize the slowest of `stages` stages, by the spine's
/// prefix sums of seconds.
static std::vector<int64_t>
balanceStages(int64_t stages, ArrayRef<int64_t> cuts, ArrayRef<double> prefix) {
  int64_t c = cuts.size(), n = prefix.size() - 1;
  double inf = std::numeric_limits<double>::infinity();
  auto segment = [&](int64_t from, int64_t to) { // spine ops (from, to]
    return prefix[to + 1] - prefix[from + 1];
  };
  // best[k][j]: the slowest of the first k+1 stages when cut k is cuts[j].
  std::vector<std::vector<double>> best(stages - 1,
                                        std::vector<double>(c, inf));
  std::vector<std::vector<int64_t>> from(stages - 1,
                                         std::vector<int64_t>(c, -1));
  for (int64_t j = 0; j < c; ++j)
    best[0][j] = segment(-1, cuts[j]);
  for (int64_t k = 1; k < stages - 1; ++k)
    for (int64_t j = 0; j < c; ++j)
      for (int64_t i = 0; i < j; ++i) {
        double t = std::max(best[k - 1][i], segment(cuts[i], cuts[j]));
        if (t < best[k][j]) {
          best[k][j] = t;
          from[k][j] = i;
        }
      }
  int64_t end = -1;
  double slowest = inf;
  for (int64_t j = 0; j < c; ++j) {
    double t = std::max(best[stages - 2][j], segment(cuts[j], n - 1));
    if (t < slowest) {
      slowest = t;
      end = j;
    }
  }
  std::vector<int64_t> chosen(stages - 1);
  for (int64_t k = stages - 2; k >= 0; --k) {
    chosen[k] = cuts[end];
    end = from[k][end];
  }
  return chosen;
}

/// The ops among `forward` (program order) where the model's transformer
/// layers start (getLayerStarts); without layer units (steps written by
/// hand), its attention ops.
static llvm::DenseSet<Operation *>
getLayerStartOps(func::FuncOp func, ArrayRef<Operation *> forward) {
  llvm::DenseSet<Operation *> starts;
  for (auto [unit, op] : getLayerStarts(func, forward))
    starts.insert(op);
  if (starts.empty())
    for (Operation *op : forward)
      if (isa<AttentionOp>(op))
        starts.insert(op);
  return starts;
}

/// The stage boundaries of `spine` (forward ops in program order) for
/// `stages` stages: chosen[k] is the spine index stage k ends at. Where
/// `layersPerStage` says (transformer layers per stage), or balanced.
FailureOr<std::vector<int64_t>>
chooseCuts(func::FuncOp func, ArrayRef<Operation *> spine, int64_t stages,
           ArrayRef<int64_t> layersPerStage,
           const llvm::DenseSet<Operation *> &backward) {
  int64_t n = spine.size();
  // Bytes of forward values live across the cut after each spine op, and
  // the ops' roofline times with their backward's (the backward ops of the
  // same location, where one spine op has it: many share the model's file
  // location, the loss's ops among them).
  const DeviceSpec &device = getDefaultDeviceSpec();
  llvm::DenseMap<Location, int64_t> spineOpsAt;
  for (Operation *op : spine)
    ++spineOpsAt[op->getLoc()];
  llvm::DenseMap<Location, double> backwardSeconds;
  for (Operation *op : backward)
    if (spineOpsAt.lookup(op->getLoc()) == 1)
      backwardSeconds[op->getLoc()] += getRooflineTime(op, device).seconds();
  llvm::DenseMap<Operation *, int64_t> position;
  for (int64_t i = 0; i < n; ++i)
    position[spine[i]] = i;
  std::vector<int64_t> delta(n + 1, 0);
  std::vector<double> prefix(n + 1, 0);
  for (int64_t i = 0; i < n; ++i) {
    for (Value result : spine[i]->getResults()) {
      int64_t last = i;
      for (Operation *user : result.getUsers())
        if (position.count(user))
          last = std::max(last, position[user]);
      delta[i] += byteSize(result);
      delta[last] -= byteSize(result);
    }
    prefix[i + 1] = prefix[i] + getRooflineTime(spine[i], device).seconds() +
                    backwardSeconds.lookup(spine[i]->getLoc());
  }
  std::vector<int64_t> crossing(n, 0);
  int64_t live = 0;
  for (int64_t i = 0; i + 1 < n; ++i) {
    live += delta[i];
    crossing[i] = live;
  }
  // Cuts where the fewest bytes cross (between transformer blocks: the
  // residual stream, perhaps a mask), counted away from the ends (where the
  // tokens or the loss alone cross); up to twice as many where too few
  // places have the fewest.
  constexpr int64_t none = std::numeric_limits<int64_t>::max();
  int64_t least = none, leastAnywhere = none;
  for (int64_t i = 0; i + 1 < n; ++i) {
    double done = prefix[i + 1] / prefix[n];
    leastAnywhere = std::min(leastAnywhere, crossing[i]);
    if (done >= 0.5 / stages && done <= 1 - 0.5 / stages)
      least = std::min(least, crossing[i]);
  }
  if (least == none)
    least = leastAnywhere;
  SmallVector<int64_t> cuts;
  for (double slack : {1.0, 1.25, 1.5, 2.0}) {
    cuts.clear();
    for (int64_t i = 0; i + 1 < n; ++i)
      if (crossing[i] <= slack * least)
        cuts.push_back(i);
    if (static_cast<int64_t>(cuts.size()) >= stages - 1)
      break;
  }
  if (static_cast<int64_t>(cuts.size()) < stages - 1)
    return func.emitError("pipeline: the forward has ")
           << cuts.size() << " points to cut between stages, too few for "
           << stages << " stages";

  std::vector<int64_t> chosen(stages - 1);
  if (!layersPerStage.empty()) {
    // Stage k ends where layer L_k starts (L_k: the layers of stages
    // 0..k): at the last cut point before that layer's attention.
    llvm::DenseSet<Operation *> layerStarts = getLayerStartOps(func, spine);
    SmallVector<int64_t> boundaries; // before each layer but the first
    bool first = true;
    for (int64_t i = 0, j = 0; i < n; ++i) {
      if (!layerStarts.contains(spine[i]))
        continue;
      while (j < static_cast<int64_t>(cuts.size()) && cuts[j] < i)
        ++j;
      if (!first && j > 0)
        boundaries.push_back(cuts[j - 1]);
      first = false;
    }
    int64_t layers = std::accumulate(layersPerStage.begin(),
                                     layersPerStage.end(), int64_t(0));
    if (layers != static_cast<int64_t>(boundaries.size()) + 1 ||
        boundaries.empty())
      return func.emitError("pipeline: --pipeline-split names ")
             << layers << " transformer layers; the model has "
             << (boundaries.empty() ? 0 : boundaries.size() + 1)
             << " (the blocks the stages can be cut between)";
    for (int64_t k = 0, done = 0; k + 1 < stages; ++k) {
      done += layersPerStage[k];
      chosen[k] = boundaries[done - 1];
    }
  } else {
    chosen = balanceStages(stages, cuts, prefix);
  }
  return chosen;
}

/// Cuts the program of one microbatch into `stages` stages (see the file
/// comment), marking each op with its stage or none (every stage): where
/// `layersPerStage` says (transformer layers per stage), or balanced.
LogicalResult splitStages(func::FuncOp func, int64_t stages,
                          ArrayRef<int64_t> layersPerStage) {
  Block &body = func.getBody().front();
  llvm::DenseMap<Operation *, StepPhase> phases = classifyStepPhases(func);
  llvm::DenseSet<Operation *> backward = getBackwardOps(func);
  llvm::DenseSet<Value> batch = getBatchDependentValues(func);
  SmallVector<Operation *> spine;
  llvm::DenseSet<Operation *> readsBatch;
  for (Operation &op : body.without_terminator()) {
    if (llvm::none_of(op.getOperands(),
                      [&](Value v) { return batch.contains(v); }))
      continue;
    readsBatch.insert(&op);
    if (phases.lookup(&op) == StepPhase::Forward)
      spine.push_back(&op);
  }
  // A distillation teacher's forward (what its parameters, `teacher/...`,
  // reach and the student's do not) is cut on its own, so that each stage
  // runs its share of both models.
  llvm::DenseSet<Value> teacher, student;
  for (BlockArgument arg : func.getArguments()) {
    auto name =
        func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kParamAttrName);
    if (name && name.getValue().starts_with("teacher/"))
      teacher.insert(arg);
    else if (name)
      student.insert(arg);
  }
  for (Operation &op : body.without_terminator())
    for (llvm::DenseSet<Value> *reached : {&teacher, &student})
      if (llvm::any_of(op.getOperands(),
                       [&](Value v) { return reached->contains(v); }))
        reached->insert(op.getResults().begin(), op.getResults().end());
  SmallVector<Operation *> studentSpine, teacherSpine;
  for (Operation *op : spine)
    (llvm::any_of(
         op->getResults(),
         [&](Value v) { return teacher.contains(v) && !student.contains(v); })
         ? teacherSpine
         : studentSpine)
        .push_back(op);
  int64_t n = studentSpine.size();
  if (n < stages)
    return func.emitError("pipeline: the forward has ")
           << n << " ops that read the batch, too few for " << stages
           << " stages";
  FailureOr<std::vector<int64_t>> chosen =
      chooseCuts(func, studentSpine, stages, layersPerStage, backward);
  if (failed(chosen))
    return failure();
  std::vector<int64_t> teacherCuts;
  if (static_cast<int64_t>(teacherSpine.size()) >= stages) {
    FailureOr<std::vector<int64_t>> cuts =
        chooseCuts(func, teacherSpine, stages, {}, backward);
    if (failed(cuts))
      return failure();
    teacherCuts = std::move(*cuts);
  }

  // Forward: by the cuts. Backward: the stage of the forward op of the
  // same location, at most that of the backward values it reads. What
  // reads forward values alone outside the loss (a mask a VJP makes): the
  // last stage of what it reads.
  llvm::DenseMap<Location, int64_t> stageOfLocation;
  auto cutSpine = [&](ArrayRef<Operation *> ops, ArrayRef<int64_t> cuts,
                      bool locate) {
    int64_t stage = 0;
    for (int64_t i = 0, e = ops.size(); i < e; ++i) {
      setStage(ops[i], stage);
      if (locate)
        stageOfLocation[ops[i]->getLoc()] = stage;
      if (stage < static_cast<int64_t>(cuts.size()) && cuts[stage] == i)
        ++stage;
    }
  };
  cutSpine(studentSpine, *chosen, /*locate=*/true);
  cutSpine(teacherSpine, teacherCuts, /*locate=*/false);
  llvm::DenseSet<Operation *> onSpine(spine.begin(), spine.end());
  llvm::DenseSet<Operation *> unanchored;
  for (Operation &op : body.without_terminator()) {
    if (!readsBatch.contains(&op) || onSpine.contains(&op))
      continue;
    int64_t limit = stages - 1, latest = -1;
    for (Value operand : op.getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || getStage(def) == kEveryStage)
        continue;
      latest = std::max(latest, getStage(def));
      if (backward.contains(def))
        limit = std::min(limit, getStage(def));
    }
    auto it = stageOfLocation.find(op.getLoc());
    if (!backward.contains(&op))
      setStage(&op, latest);
    else
      setStage(&op, std::min(it != stageOfLocation.end() ? it->second : limit,
                             limit));
    if (latest < 0 && (!backward.contains(&op) || it == stageOfLocation.end()))
      unanchored.insert(&op);
  }
  // What reads the batch alone (a one-hot of the labels) goes to the last
  // stage that reads it, so that what it feeds flows down.
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (!unanchored.contains(&op))
      continue;
    int64_t last = 0;
    for (Operation *user : op.getUsers())
      last = std::max(last, getStage(user));
    setStage(&op, last);
  }
  return success();
}

/// Orders the unrolled step's ops as `schedule` runs their fragments and
/// broadcasts over pp what another rank reads.
class StageOrderer {
public:
  StageOrderer(func::FuncOp func, const pp::Schedule &schedule,
               FlatSymbolRefAttr mesh)
      : func(func), schedule(schedule), mesh(mesh), b(func.getContext()) {}

  LogicalResult run() {
    Block &body = func.getBody().front();
    Operation *terminator = body.getTerminator();
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    llvm::DenseSet<Operation *> backwardOps = getBackwardOps(func);

    // The prologue: what every microbatch's fragments read before they run
    // (a sum over the microbatches, such as the loss's count of labels,
    // and what it reads), and what every stage runs.
    llvm::DenseSet<Operation *> prologue;
    for (Operation *op : llvm::reverse(ops)) {
      bool feedsFragments =
          !getMicrobatch(op) &&
          llvm::any_of(op->getUsers(), [&](Operation *user) {
            return getMicrobatch(user) || prologue.contains(user);
          });
      if (feedsFragments || getStage(op) == kEveryStage)
        prologue.insert(op);
    }
    SmallVector<Operation *> worklist(prologue.begin(), prologue.end());
    while (!worklist.empty())
      for (Value operand : worklist.pop_back_val()->getOperands())
        if (Operation *def = operand.getDefiningOp())
          if (prologue.insert(def).second)
            worklist.push_back(def);

    // The fragments, in program order within each.
    std::map<FragmentKey, SmallVector<Operation *>> fragments;
    SmallVector<Operation *> epilogue;
    for (Operation *op : ops) {
      if (prologue.contains(op))
        continue;
      std::optional<int64_t> k = getMicrobatch(op);
      if (!k) {
        epilogue.push_back(op);
        continue;
      }
      bool backward = backwardOps.contains(op);
      FragmentKey key{getStage(op), *k,
                      backward ? pp::ActionKind::Backward
                               : pp::ActionKind::Forward};
      fragments[key].push_back(op);
    }
    if (schedule.splitsBackward())
      splitWeightGradients(fragments);

    // Each parameter on the ranks whose stages read it; its gradient (a
    // result) goes to them alone.
    std::vector<std::set<int64_t>> resultRanks = holdParameters(ops);

    // Broadcasts for the values read on another rank (or by every rank).
    llvm::DenseMap<Operation *, SmallVector<Operation *>> broadcastsAfter;
    for (Operation *op : ops) {
      if (getStage(op) == kEveryStage)
        continue;
      int64_t root = schedule.getRank(getStage(op));
      for (Value result : op->getResults()) {
        // Per use elsewhere, the ranks that read it (none: every rank).
        SmallVector<std::pair<OpOperand *, std::set<int64_t>>> remote;
        for (OpOperand &use : result.getUses()) {
          Operation *user = use.getOwner();
          std::set<int64_t> readers;
          if (isa<func::ReturnOp>(user))
            readers = resultRanks[use.getOperandNumber()];
          else if (getStage(user) != kEveryStage)
            readers.insert(schedule.getRank(getStage(user)));
          if (readers.empty() || readers != std::set<int64_t>{root})
            remote.emplace_back(&use, std::move(readers));
        }
        if (remote.empty())
          continue;
        b.setInsertionPointAfter(op);
        auto broadcast = CollectiveBroadcastOp::create(
            b, op->getLoc(), result, mesh, b.getStrArrayAttr({"pp"}),
            b.getI64IntegerAttr(root),
            b.getStringAttr("pipeline: stage " + std::to_string(getStage(op)) +
                            "'s value"));
        // Point to point where only some other ranks read it (not what
        // every rank runs or holds).
        std::set<int64_t> receivers;
        bool everyRank = false;
        for (auto &[use, readers] : remote) {
          everyRank |= readers.empty();
          receivers.insert(readers.begin(), readers.end());
        }
        receivers.erase(root);
        if (!everyRank &&
            static_cast<int64_t>(receivers.size()) < schedule.ranks - 1)
          broadcast->setAttr(kReceiversAttrName,
                             b.getDenseI64ArrayAttr(SmallVector<int64_t>(
                                 receivers.begin(), receivers.end())));
        for (auto &[use, readers] : remote)
          use->set(broadcast);
        broadcastsAfter[op].push_back(broadcast);
      }
    }

    measureStages(fragments, broadcastsAfter, backwardOps);

    // The order: the prologue, the fragments as the schedule runs them on
    // unit costs, the epilogue.
    SmallVector<Operation *> order;
    auto place = [&](Operation *op) {
      order.push_back(op);
      llvm::append_range(order, broadcastsAfter.lookup(op));
    };
    for (Operation *op : ops)
      if (prologue.contains(op))
        place(op);
    pp::Timeline timeline = pp::simulateSchedule(
        schedule, pp::FragmentCosts::uniform(schedule.getNumStages(), 1, 1, 1));
    std::vector<pp::TimedAction> actions;
    for (const auto &rank : timeline.ranks)
      llvm::append_range(actions, rank);
    llvm::stable_sort(actions, [&](const auto &a, const auto &c) {
      return std::make_pair(a.start, schedule.getRank(a.action.stage)) <
             std::make_pair(c.start, schedule.getRank(c.action.stage));
    });
    for (const pp::TimedAction &action : actions) {
      FragmentKey key{action.action.stage, action.action.microbatch,
                      action.action.kind};
      auto it = fragments.find(key);
      if (it == fragments.end())
        continue;
      StringAttr kind =
          b.getStringAttr(pp::getActionKindName(action.action.kind));
      for (Operation *op : it->second) {
        op->setAttr(kFragmentAttrName, kind);
        place(op);
      }
      fragments.erase(it);
    }
    if (!fragments.empty())
      return func.emitError("pipeline: stage ")
             << std::get<0>(fragments.begin()->first)
             << " has work the schedule does not run";
    for (Operation *op : epilogue)
      place(op);

    // Every value before its readers.
    llvm::DenseSet<Value> defined(func.getArguments().begin(),
                                  func.getArguments().end());
    for (Operation *op : order) {
      for (Value operand : op->getOperands())
        if (!defined.contains(operand)) {
          InFlightDiagnostic error =
              op->emitError("pipeline: in the order of the schedule, ")
              << describe(op) << " reads a value computed after it";
          if (Operation *def = operand.getDefiningOp())
            error.attachNote(def->getLoc())
                << "computed here, by " << describe(def);
          return failure();
        }
      defined.insert(op->getResults().begin(), op->getResults().end());
      op->moveBefore(terminator);
    }
    return success();
  }

  /// Per stage, what microbatch 0's fragments take on the default device
  /// (roofline seconds; a Backward's all in `backwardInput`), the
  /// activation bytes its forward leaves for the backward, and the bytes
  /// it broadcasts to other ranks.
  pp::FragmentCosts costs;
  std::vector<int64_t> sentBytes;
  /// Per stage, its transformer layers (getLayerStartOps).
  std::vector<int64_t> layers;

private:
  using FragmentKey = std::tuple<int64_t, int64_t, pp::ActionKind>;

  void measureStages(
      const std::map<FragmentKey, SmallVector<Operation *>> &fragments,
      const llvm::DenseMap<Operation *, SmallVector<Operation *>> &broadcasts,
      const llvm::DenseSet<Operation *> &backwardOps) {
    int64_t stages = schedule.getNumStages();
    costs = pp::FragmentCosts::uniform(stages, 0, 0, 0, 0);
    sentBytes.assign(stages, 0);
    layers.assign(stages, 0);
    const DeviceSpec &device = getDefaultDeviceSpec();
    SmallVector<Operation *> forward; // microbatch 0's, stage by stage
    for (const auto &[key, members] : fragments)
      if (std::get<1>(key) == 0 && std::get<2>(key) == pp::ActionKind::Forward)
        forward.append(members.begin(), members.end());
    llvm::DenseSet<Operation *> layerStarts = getLayerStartOps(func, forward);
    for (const auto &[key, members] : fragments) {
      auto [stage, k, kind] = key;
      if (k != 0)
        continue;
      double seconds = 0;
      for (Operation *op : members) {
        seconds += getRooflineTime(op, device).seconds();
        for (Operation *sent : broadcasts.lookup(op))
          sentBytes[stage] += byteSize(sent->getResult(0));
        if (kind != pp::ActionKind::Forward)
          continue;
        layers[stage] += layerStarts.contains(op);
        for (Value result : op->getResults())
          if (llvm::any_of(result.getUsers(), [&](Operation *user) {
                return backwardOps.contains(user);
              }))
            costs.activationBytes[stage] += byteSize(result);
      }
      if (kind == pp::ActionKind::Forward)
        costs.forward[stage] += seconds;
      else if (kind == pp::ActionKind::BackwardWeight)
        costs.backwardWeight[stage] += seconds;
      else
        costs.backwardInput[stage] += seconds;
    }
  }

  static std::string describe(Operation *op) {
    std::string text = op->getName().getStringRef().str() + " (stage " +
                       std::to_string(getStage(op));
    if (std::optional<int64_t> k = getMicrobatch(op))
      text += ", microbatch " + std::to_string(*k);
    return text + ")";
  }

  /// Gives each parameter the pp coordinates whose stages read it
  /// (through ops of no stage: a transpose, a cast), as `dtc.pp_ranks`
  /// where not every one, and returns per result of the step the
  /// coordinates that hold it: a gradient its parameter's, the rest every
  /// one (empty).
  std::vector<std::set<int64_t>> holdParameters(ArrayRef<Operation *> ops) {
    // Per op of no stage, the coordinates that read what it computes.
    llvm::DenseMap<Operation *, std::set<int64_t>> readersOf;
    auto readers = [&](Value value) {
      std::set<int64_t> ranks;
      for (Operation *user : value.getUsers()) {
        if (getStage(user) != kEveryStage)
          ranks.insert(schedule.getRank(getStage(user)));
        else if (auto it = readersOf.find(user); it != readersOf.end())
          ranks.insert(it->second.begin(), it->second.end());
      }
      return ranks;
    };
    for (Operation *op : llvm::reverse(ops))
      if (getStage(op) == kEveryStage)
        for (Value result : op->getResults())
          for (int64_t rank : readers(result))
            readersOf[op].insert(rank);
    llvm::StringMap<std::set<int64_t>> held;
    for (BlockArgument arg : func.getArguments()) {
      auto name =
          func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kParamAttrName);
      std::set<int64_t> ranks = readers(arg);
      if (!name || ranks.empty() ||
          static_cast<int64_t>(ranks.size()) == schedule.ranks)
        continue;
      func.setArgAttr(arg.getArgNumber(), kPipelineRanksAttrName,
                      b.getDenseI64ArrayAttr(
                          SmallVector<int64_t>(ranks.begin(), ranks.end())));
      held[name.getValue()] = std::move(ranks);
    }
    std::vector<std::set<int64_t>> resultRanks(func.getNumResults());
    for (unsigned r = 0, e = func.getNumResults(); r < e; ++r)
      if (auto grad = func.getResultAttrOfType<StringAttr>(r, kGradAttrName))
        resultRanks[r] = held.lookup(grad.getValue());
    return resultRanks;
  }

  /// Splits each backward fragment into its input gradient (what another
  /// stage reads, and what that needs) and its weight gradients (the rest).
  void splitWeightGradients(
      std::map<FragmentKey, SmallVector<Operation *>> &fragments) {
    std::map<FragmentKey, SmallVector<Operation *>> split;
    for (auto &[key, members] : fragments) {
      auto [stage, k, kind] = key;
      if (kind != pp::ActionKind::Backward) {
        split[key] = members;
        continue;
      }
      llvm::DenseSet<Operation *> input;
      for (Operation *op : llvm::reverse(members))
        for (Operation *user : op->getUsers())
          if (input.contains(user) ||
              (getStage(user) != kEveryStage && getStage(user) != stage &&
               !isa<func::ReturnOp>(user)))
            input.insert(op);
      FragmentKey inputKey{stage, k, pp::ActionKind::BackwardInput};
      FragmentKey weightKey{stage, k, pp::ActionKind::BackwardWeight};
      for (Operation *op : members)
        split[input.contains(op) ? inputKey : weightKey].push_back(op);
    }
    fragments = std::move(split);
  }

  func::FuncOp func;
  const pp::Schedule &schedule;
  FlatSymbolRefAttr mesh;
  OpBuilder b;
};

struct PipelineParallelPass
    : public dtc::impl::PipelineParallelBase<PipelineParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (size < 2) {
      module.emitError("dtc-pipeline-parallel needs a pp axis of 2 or more "
                       "ranks, not ")
          << static_cast<int64_t>(size);
      return signalPassFailure();
    }
    std::optional<pp::ScheduleKind> kind = pp::parseScheduleKind(schedule);
    pp::Schedule plan;
    std::string error =
        kind ? pp::buildSchedule(*kind, size, microbatches, virtualStages, plan)
             : "unknown schedule '" + schedule + "'";
    if (error.empty())
      error = pp::checkSchedule(plan);
    if (error.empty())
      error = pp::parsePipelineSplit(split, layersPerStage);
    if (error.empty() && !layersPerStage.empty() &&
        static_cast<int64_t>(layersPerStage.size()) != plan.getNumStages())
      error = "the split names " + std::to_string(layersPerStage.size()) +
              " stages, the schedule has " +
              std::to_string(plan.getNumStages());
    if (!error.empty()) {
      module.emitError("dtc-pipeline-parallel: ") << error;
      return signalPassFailure();
    }
    FlatSymbolRefAttr meshRef = meshWithAxis(module, "pp", size);
    if (!meshRef)
      return signalPassFailure();
    OpBuilder b(module.getBodyRegion());
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      if (func.isExternal())
        continue;
      // Autodiff's dead adjoints (a constant exponent's gradient, which
      // reads the log of the base) would otherwise be sent between stages
      // for nothing.
      eraseDeadOps(func.getBody().front());
      StageOrderer orderer(func, plan, meshRef);
      if (failed(pipeline(func, plan, orderer)))
        return signalPassFailure();
      SmallVector<int64_t> stageRanks, activationBytes;
      for (int64_t s = 0; s < plan.getNumStages(); ++s) {
        stageRanks.push_back(plan.getRank(s));
        activationBytes.push_back(orderer.costs.activationBytes[s]);
      }
      func->setAttr(
          kPipelineAttrName,
          b.getDictionaryAttr({
              b.getNamedAttr("axis", b.getStringAttr("pp")),
              b.getNamedAttr("stage_ranks", b.getDenseI64ArrayAttr(stageRanks)),
              b.getNamedAttr("schedule", b.getStringAttr(schedule)),
              b.getNamedAttr("microbatches", b.getI64IntegerAttr(microbatches)),
              b.getNamedAttr("virtual_stages",
                             b.getI64IntegerAttr(plan.stagesPerRank)),
              b.getNamedAttr("forward_seconds",
                             b.getDenseF64ArrayAttr(orderer.costs.forward)),
              b.getNamedAttr(
                  "backward_input_seconds",
                  b.getDenseF64ArrayAttr(orderer.costs.backwardInput)),
              b.getNamedAttr(
                  "backward_weight_seconds",
                  b.getDenseF64ArrayAttr(orderer.costs.backwardWeight)),
              b.getNamedAttr("activation_bytes",
                             b.getDenseI64ArrayAttr(activationBytes)),
              b.getNamedAttr("sent_bytes",
                             b.getDenseI64ArrayAttr(orderer.sentBytes)),
              b.getNamedAttr("layers", b.getDenseI64ArrayAttr(orderer.layers)),
          }));
      setStepMesh(func, meshRef);
      if (microbatches > 1)
        setStepMicrobatches(func, microbatches);
    }
  }

  /// --pipeline-split's transformer layers per stage (empty: auto).
  std::vector<int64_t> layersPerStage;

  LogicalResult pipeline(func::FuncOp func, const pp::Schedule &plan,
                         StageOrderer &orderer) {
    if (microbatches == 1) {
      // One microbatch: the step is its program.
      if (failed(splitStages(func, plan.getNumStages(), layersPerStage)))
        return failure();
      OpBuilder b(func.getContext());
      for (Operation &op : func.getBody().front().without_terminator())
        op.setDiscardableAttr(kMicrobatchAttrName, b.getI64IntegerAttr(0));
      return orderer.run();
    }
    return success(
        succeeded(unrollMicrobatches(
            func, microbatches, "pipeline microbatch", strictSharding,
            [&](func::FuncOp shard) {
              return splitStages(shard, plan.getNumStages(), layersPerStage);
            },
            kMicrobatchAttrName)) &&
        succeeded(orderer.run()));
  }
};

} // namespace
