//===- Remat.cpp - recompute saved activations in the backward ------------===//
//
// dtc-remat (Passes.td says what each policy keeps). A plan is a list of
// segments of the forward pass, each with the values it recomputes; it is
// carried out by cloning, before the segment's first backward reader, the
// forward ops those values need from what stays available, and undone by
// pointing the readers back and erasing the copies. The budget policy
// tries plans that way, measuring each one's activation peak with the
// liveness analysis the report uses, so that the plan it keeps is checked
// against the budget exactly rather than estimated.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Remat/Passes.h"

#include "dtc/Analysis/Liveness.h"
#include "dtc/Analysis/Memory.h"
#include "dtc/Analysis/Phases.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/OpCost.h"
#include "dtc/Dialect/DTC/IR/PipelineStages.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <numeric>

namespace mlir::dtc {
#define GEN_PASS_DEF_REMAT
#include "dtc/Transforms/Remat/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// A stretch of the forward pass, [begin, end) in ForwardPass::ops, and the
/// values of it the backward reads from copies.
struct Segment {
  size_t begin = 0, end = 0;
  llvm::SetVector<Value> recomputed;
  /// Values of the segment held for its recomputation although the
  /// backward does not read them (a widening cast's narrow operand).
  llvm::DenseSet<Value> kept;
};

/// What carrying out a plan did, to measure and to undo it.
struct Applied {
  /// The copies, in the order they were made, with their originals.
  SmallVector<std::pair<Operation *, Operation *>> copies;
};

/// The forward pass of a step, cut into units.
class ForwardPass {
public:
  explicit ForwardPass(func::FuncOp step);

  /// The step-dependent forward ops in program order.
  SmallVector<Operation *> ops;
  /// Where each unit starts in `ops`, and its name.
  SmallVector<size_t> unitStarts;
  SmallVector<StringAttr> unitNames;
  /// The units holding an attention op, as [begin, end) in `ops`.
  SmallVector<std::pair<size_t, size_t>> transformerUnits;
  /// The forward ops that compute from parameters and constants alone.
  llvm::DenseSet<Operation *> fromParameters;

  bool isForward(Operation *op) const { return index.contains(op); }
  /// Whether `value` is computed in `segment`.
  bool inSegment(Value value, const Segment &segment) const {
    auto it = index.find(value.getDefiningOp());
    return it != index.end() && it->second >= segment.begin &&
           it->second < segment.end;
  }
  /// Whether a backward (or optimizer) op of the original step reads it.
  bool readByBackward(Value value) const;
  /// Whether a forward op after `segment` reads it (a later unit's input).
  bool readAfter(Value value, const Segment &segment) const;
  /// The values of `segment` the backward reads.
  SmallVector<Value> saved(const Segment &segment) const;
  /// Whether a copy of `op` computes the same as `op` (pure, or a
  /// collective issued again by every rank in the same place).
  static bool canRecompute(Operation *op) {
    return op->getNumRegions() == 0 &&
           (isMemoryEffectFree(op) || isa<CollectiveOpInterface>(op));
  }
  /// Whether the backward can read `value` as is under `segment`'s plan:
  /// computed outside it, or kept.
  bool available(Value value, const Segment &segment) const {
    // What parameters alone make, a copy makes again from them, wherever
    // it is (a weight's cast or ZeRO-3 gather is not held for it).
    if (Operation *def = value.getDefiningOp();
        def && fromParameters.contains(def) && canRecompute(def))
      return false;
    if (!inSegment(value, segment))
      return true;
    if (segment.recomputed.contains(value))
      return false;
    return segment.kept.contains(value) || readByBackward(value) ||
           readAfter(value, segment) || !canRecompute(value.getDefiningOp());
  }
  /// The ops a segment's recomputation runs, in program order.
  SmallVector<Operation *> recomputation(const Segment &segment) const;

  Applied apply(ArrayRef<Segment> plan) const;
  static void undo(Applied &applied);

  /// The original ops' phases.
  llvm::DenseMap<Operation *, StepPhase> phases;

private:
  llvm::DenseMap<Operation *, size_t> index;
};

} // namespace

ForwardPass::ForwardPass(func::FuncOp step) {
  phases = classifyStepPhases(step);
  for (const ScheduledOp &entry : programOrder(step.getBody().front())) {
    auto phase = phases.find(entry.op);
    if (!entry.stepInvariant && phase != phases.end() &&
        phase->second == StepPhase::Forward) {
      index[entry.op] = ops.size();
      ops.push_back(entry.op);
    }
  }

  // Each value computed from trainable parameters alone (their casts,
  // gathers, transposes) has the unit of those parameters; a unit starts
  // at the first op that combines one with an activation.
  llvm::DenseMap<Value, StringAttr> unitOf;
  for (BlockArgument arg : step.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto trainable = step.getArgAttrOfType<BoolAttr>(i, kTrainableAttrName);
    if (!step.getArgAttr(i, kParamAttrName) ||
        (trainable && !trainable.getValue()))
      continue;
    auto unit = step.getArgAttrOfType<StringAttr>(i, kUnitAttrName);
    unitOf[arg] =
        unit ? unit : step.getArgAttrOfType<StringAttr>(i, kParamAttrName);
  }
  llvm::DenseSet<StringAttr> seen;
  for (auto [position, op] : llvm::enumerate(ops)) {
    StringAttr unit;
    bool activation = false;
    for (Value operand : op->getOperands()) {
      if (StringAttr u = unitOf.lookup(operand)) {
        unit = unit ? unit : u;
        continue;
      }
      // Constants and frozen parameters are neither.
      if (auto arg = dyn_cast<BlockArgument>(operand))
        activation |= !step.getArgAttr(arg.getArgNumber(), kParamAttrName);
      else
        activation |= isForward(operand.getDefiningOp());
    }
    if (!unit)
      continue;
    if (!activation) {
      fromParameters.insert(op);
      for (Value result : op->getResults())
        unitOf[result] = unit;
      continue;
    }
    // The first unit met again starts the model over: the next
    // microbatch under gradient accumulation (or a tied head, a unit of
    // its own).
    if (!unitNames.empty() && unit == unitNames.front() &&
        unit != unitNames.back())
      seen.clear();
    if (seen.insert(unit).second) {
      unitStarts.push_back(position);
      unitNames.push_back(unit);
    }
  }
  for (auto [u, begin] : llvm::enumerate(unitStarts)) {
    size_t end = u + 1 < unitStarts.size() ? unitStarts[u + 1] : ops.size();
    if (llvm::any_of(ArrayRef(ops).slice(begin, end - begin),
                     [](Operation *op) { return isa<AttentionOp>(op); }))
      transformerUnits.push_back({begin, end});
  }
}

bool ForwardPass::readByBackward(Value value) const {
  return llvm::any_of(value.getUsers(), [&](Operation *user) {
    auto it = phases.find(user);
    return it != phases.end() && it->second != StepPhase::Forward;
  });
}

bool ForwardPass::readAfter(Value value, const Segment &segment) const {
  return llvm::any_of(value.getUsers(), [&](Operation *user) {
    auto it = index.find(user);
    return it != index.end() && it->second >= segment.end;
  });
}

SmallVector<Value> ForwardPass::saved(const Segment &segment) const {
  SmallVector<Value> values;
  for (Operation *op :
       ArrayRef(ops).slice(segment.begin, segment.end - segment.begin))
    for (Value result : op->getResults())
      if (readByBackward(result))
        values.push_back(result);
  return values;
}

SmallVector<Operation *>
ForwardPass::recomputation(const Segment &segment) const {
  llvm::DenseSet<Operation *> needed;
  SmallVector<Operation *> worklist;
  for (Value value : segment.recomputed)
    if (needed.insert(value.getDefiningOp()).second)
      worklist.push_back(value.getDefiningOp());
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Value operand : op->getOperands())
      if (!available(operand, segment) &&
          needed.insert(operand.getDefiningOp()).second)
        worklist.push_back(operand.getDefiningOp());
  }
  SmallVector<Operation *> order(needed.begin(), needed.end());
  llvm::sort(order, [&](Operation *a, Operation *b) {
    return index.lookup(a) < index.lookup(b);
  });
  return order;
}

Applied ForwardPass::apply(ArrayRef<Segment> plan) const {
  Applied applied;
  // Whether `user` reads a value after the forward: a backward op, or a
  // later segment's copy (made first, so that this segment's copies serve
  // it too: a widened norm input the next unit's recomputed norm reads).
  auto afterForward = [&](Operation *user) {
    return !isForward(user) && !user->hasTrait<OpTrait::IsTerminator>();
  };
  auto placeFragment = [&](const Segment &segment) {
    // Before the first op after the forward that reads a recomputed value.
    Operation *first = nullptr;
    for (Value value : segment.recomputed)
      for (Operation *user : value.getUsers())
        if (afterForward(user) && (!first || user->isBeforeInBlock(first)))
          first = user;
    OpBuilder builder(first);
    IRMapping mapping;
    for (Operation *op : recomputation(segment)) {
      Operation *copy = builder.clone(*op, mapping);
      copy->setAttr(kRecomputeAttrName, builder.getUnitAttr());
      // (Run in the fragment of the backward that reads it.)
      if (Attribute fragment = first->getAttr(kFragmentAttrName))
        copy->setAttr(kFragmentAttrName, fragment);
      applied.copies.push_back({copy, op});
    }
    for (Value value : segment.recomputed)
      value.replaceUsesWithIf(mapping.lookup(value), [&](OpOperand &use) {
        return afterForward(use.getOwner());
      });
  };
  // Under pipeline stages a unit's forward ops span microbatches (and
  // stages) whose backwards run far apart: each fragment's copies go
  // before its own backward.
  auto place = [&](const Segment &segment) {
    llvm::MapVector<std::pair<int64_t, int64_t>, Segment> fragments;
    for (Value value : segment.recomputed) {
      auto attribute = [&](StringRef name) -> int64_t {
        auto found = value.getDefiningOp()->getAttrOfType<IntegerAttr>(name);
        return found ? found.getInt() : -1;
      };
      Segment &fragment = fragments[{attribute(kStageAttrName),
                                     attribute(kMicrobatchAttrName)}];
      if (fragment.recomputed.empty()) {
        fragment.begin = segment.begin;
        fragment.end = segment.end;
        fragment.kept = segment.kept;
      }
      fragment.recomputed.insert(value);
    }
    for (auto &[key, fragment] : fragments)
      placeFragment(fragment);
  };
  for (const Segment &segment : llvm::reverse(plan)) {
    // What a later segment's copies read is made on its own, before them;
    // the rest before this segment's own backward, not that early.
    Segment early = segment, rest = segment;
    early.recomputed.clear();
    rest.recomputed.clear();
    for (Value value : segment.recomputed) {
      bool readByCopy = llvm::any_of(value.getUsers(), [&](Operation *user) {
        return afterForward(user) && !phases.contains(user);
      });
      (readByCopy ? early : rest).recomputed.insert(value);
    }
    place(early);
    place(rest);
  }
  return applied;
}

void ForwardPass::undo(Applied &applied) {
  for (auto [copy, original] : llvm::reverse(applied.copies)) {
    copy->replaceAllUsesWith(original->getResults());
    copy->erase();
  }
  applied.copies.clear();
}

/// What the copies of `applied` cost.
static OpCost recomputedCost(const Applied &applied) {
  OpCost cost;
  for (auto [copy, original] : applied.copies)
    cost += getOpCost(copy);
  return cost;
}

/// Adds to `segment` the values every policy recomputes because holding
/// them costs memory and recomputing them next to nothing: those computed
/// from parameters alone (casts and gathers of weights), sequence
/// parallelism's all-gathers of activations (gathered again from the rank's
/// part, which is held, as Megatron-LM does), and casts to a wider type
/// (cast again from the narrow value, which is held: a bf16 step's f32
/// norm inputs).
static void addFreeRecomputation(const ForwardPass &forward, Segment &segment,
                                 bool keepOperands = true) {
  for (Value value : forward.saved(segment)) {
    Operation *def = value.getDefiningOp();
    if (!ForwardPass::canRecompute(def))
      continue;
    bool free = forward.fromParameters.contains(def) || isa<AllGatherOp>(def);
    if (auto cast = dyn_cast<CastOp>(def))
      free = getElementTypeOrSelf(cast.getType()).getIntOrFloatBitWidth() >
             getElementTypeOrSelf(cast.getInput().getType())
                 .getIntOrFloatBitWidth();
    if (!free)
      continue;
    segment.recomputed.insert(value);
    if (keepOperands && !forward.fromParameters.contains(def))
      for (Value operand : def->getOperands())
        if (forward.inSegment(operand, segment))
          segment.kept.insert(operand);
  }
}

/// Full over groups of `k` transformer units: every value the backward
/// reads is recomputed but the groups' inputs (and what later units read).
static SmallVector<Segment> everyPlan(const ForwardPass &forward, int64_t k) {
  SmallVector<Segment> plan;
  const auto &units = forward.transformerUnits;
  for (size_t first = 0; first < units.size(); first += k) {
    Segment segment;
    segment.begin = units[first].first;
    segment.end = units[std::min(first + k, units.size()) - 1].second;
    for (Value value : forward.saved(segment))
      if (!forward.readAfter(value, segment) &&
          ForwardPass::canRecompute(value.getDefiningOp()))
        segment.recomputed.insert(value);
    // (Those read after the segment too: its recomputation makes them.)
    addFreeRecomputation(forward, segment, /*keepOperands=*/false);
    plan.push_back(std::move(segment));
  }
  return plan;
}

/// What every policy recomputes (addFreeRecomputation), nothing else.
static SmallVector<Segment> freePlan(const ForwardPass &forward) {
  SmallVector<Segment> plan;
  for (auto [begin, end] : forward.transformerUnits) {
    Segment segment{begin, end, {}, {}};
    addFreeRecomputation(forward, segment);
    plan.push_back(std::move(segment));
  }
  return plan;
}

/// The attention ops' results recomputed too, everything else kept.
static SmallVector<Segment> selectivePlan(const ForwardPass &forward) {
  SmallVector<Segment> plan = freePlan(forward);
  for (Segment &segment : plan)
    for (Value value : forward.saved(segment))
      if (isa<AttentionOp>(value.getDefiningOp()) &&
          !forward.readAfter(value, segment))
        segment.recomputed.insert(value);
  return plan;
}

namespace {
/// A value full recomputation drops, as the knapsack weighs it: its bytes,
/// and the FLOPs of recomputing it alone with the others kept.
struct KnapsackItem {
  Value value;
  int64_t bytes;
  double flops;
};
} // namespace

static SmallVector<SmallVector<KnapsackItem>>
knapsackItems(const ForwardPass &forward) {
  SmallVector<SmallVector<KnapsackItem>> units;
  for (const Segment &full : everyPlan(forward, 1)) {
    SmallVector<KnapsackItem> items;
    for (Value value : full.recomputed) {
      Segment alone{full.begin, full.end, {}, {}};
      alone.recomputed.insert(value);
      double flops = 0;
      for (Operation *op : forward.recomputation(alone))
        flops += getOpCost(op).flops();
      items.push_back({value, tensorByteSize(value.getType()), flops});
    }
    units.push_back(std::move(items));
  }
  return units;
}

/// 0/1 knapsack: the items to keep, with at most `capacity` bytes, of the
/// most FLOPs; exact over the bytes in units of their greatest common
/// divisor (rounded up to at most 2^16 units per capacity).
static llvm::DenseSet<Value> solveKnapsack(ArrayRef<KnapsackItem> items,
                                           int64_t capacity) {
  llvm::DenseSet<Value> keep;
  if (items.empty() || capacity <= 0)
    return keep;
  int64_t unit = 0;
  for (const KnapsackItem &item : items)
    unit = std::gcd(unit, item.bytes);
  unit = std::max<int64_t>({unit, 1, capacity / 65536});
  int64_t slots = capacity / unit;
  auto weight = [&](const KnapsackItem &item) {
    return (item.bytes + unit - 1) / unit;
  };
  // best[i][c]: the most FLOPs of the first i items in c units.
  std::vector<std::vector<double>> best(items.size() + 1,
                                        std::vector<double>(slots + 1, 0));
  for (size_t i = 0; i < items.size(); ++i)
    for (int64_t c = 0; c <= slots; ++c) {
      best[i + 1][c] = best[i][c];
      if (int64_t w = weight(items[i]); w <= c)
        best[i + 1][c] =
            std::max(best[i + 1][c], best[i][c - w] + items[i].flops);
    }
  for (size_t i = items.size(), c = slots; i > 0; --i)
    if (best[i][c] != best[i - 1][c]) {
      keep.insert(items[i - 1].value);
      c -= weight(items[i - 1]);
    }
  return keep;
}

/// Full recomputation less, per transformer unit, what a knapsack of
/// `capacity` bytes keeps (the most FLOPs within the capacity).
static SmallVector<Segment>
knapsackPlan(const ForwardPass &forward,
             ArrayRef<SmallVector<KnapsackItem>> items, int64_t capacity) {
  SmallVector<Segment> plan = everyPlan(forward, 1);
  for (auto [segment, unitItems] : llvm::zip(plan, items)) {
    llvm::DenseSet<Value> keep = solveKnapsack(unitItems, capacity);
    segment.recomputed.remove_if(
        [&](Value value) { return keep.contains(value); });
  }
  return plan;
}

std::vector<int64_t> mlir::dtc::savedBytesPerTransformerUnit(
    func::FuncOp step, llvm::function_ref<bool(Value)> counts) {
  ForwardPass forward(step);
  std::vector<int64_t> bytes;

  for (auto [begin, end] : forward.transformerUnits) {
    int64_t sum = 0;
    for (Value value : forward.saved(Segment{begin, end, {}, {}}))
      if (!counts || counts(value))
        sum += tensorByteSize(value.getType());
    bytes.push_back(sum);
  }
  return bytes;
}

namespace {

struct RematPass : public dtc::impl::RematBase<RematPass> {
  using Base::Base;

  /// A plan tried: its peak and what it recomputes.
  struct Outcome {
    std::string name;
    SmallVector<Segment> plan;
    int64_t peak = 0;
    OpCost recomputed;

    /// Fewer FLOPs; then fewer bytes moved (copies of views cost no
    /// FLOPs); then a lower peak.
    bool cheaperThan(const Outcome &other) const {
      return std::make_tuple(recomputed.flops(), recomputed.bytes(), peak) <
             std::make_tuple(other.recomputed.flops(), other.recomputed.bytes(),
                             other.peak);
    }
  };

  Outcome measure(func::FuncOp step, const ForwardPass &forward,
                  std::string name, SmallVector<Segment> plan) {
    Applied applied = forward.apply(plan);
    Outcome outcome{std::move(name), std::move(plan), activationPeak(step),
                    recomputedCost(applied)};
    ForwardPass::undo(applied);
    return outcome;
  }

  /// The plan of least recomputation whose peak fits the budget.
  FailureOr<Outcome> budgetPlan(func::FuncOp step, const ForwardPass &forward,
                                int64_t budget) {
    SmallVector<Outcome> tried;
    tried.push_back(measure(step, forward, "none", freePlan(forward)));
    tried.push_back(
        measure(step, forward, "selective", selectivePlan(forward)));
    Outcome full = measure(step, forward, "full", everyPlan(forward, 1));
    tried.push_back(full);
    // Groups of K units recompute more than full does: worth trying only
    // when full does not fit (for their lower peaks).
    int64_t units = forward.transformerUnits.size();
    if (full.peak > budget)
      for (int64_t k = 2; k <= units;
           k = k < units && 2 * k > units ? units : 2 * k)
        tried.push_back(measure(step, forward, "every=" + std::to_string(k),
                                everyPlan(forward, k)));
    // The largest per-unit capacity whose plan fits (more kept, less
    // recomputed), by bisection over [0, the bytes full drops per unit]
    // (capacity 0 is full's plan).
    if (full.peak <= budget) {
      auto items = knapsackItems(forward);
      int64_t low = 0, high = 0;
      for (const auto &unitItems : items) {
        int64_t bytes = 0;
        for (const KnapsackItem &item : unitItems)
          bytes += item.bytes;
        high = std::max(high, bytes);
      }
      Outcome fits = full;
      while (high - low > std::max<int64_t>(1, high / 128)) {
        int64_t middle = low + (high - low + 1) / 2;
        Outcome outcome = measure(step, forward, "knapsack",
                                  knapsackPlan(forward, items, middle));
        if (outcome.peak <= budget) {
          low = middle;
          fits = std::move(outcome);
        } else {
          high = middle;
        }
      }
      tried.push_back(std::move(fits));
    }
    const Outcome *chosen = nullptr, *smallest = nullptr;
    for (const Outcome &outcome : tried) {
      if (!smallest || outcome.peak < smallest->peak)
        smallest = &outcome;
      if (outcome.peak <= budget && (!chosen || outcome.cheaperThan(*chosen)))
        chosen = &outcome;
    }
    if (!chosen) {
      step.emitError() << "dtc-remat: no recomputation fits the activation "
                          "budget of "
                       << budget << " B: the smallest activation peak is "
                       << smallest->peak << " B (" << smallest->name
                       << "); give budget=" << smallest->peak << " or more";
      return failure();
    }
    step->emitRemark() << "dtc-remat: budget " << budget
                       << " B: " << chosen->name << ", activation peak "
                       << chosen->peak << " B, " << chosen->recomputed.flops()
                       << " FLOPs recomputed";
    return *chosen;
  }

  void runOnOperation() override {
    func::FuncOp step = getOperation();
    if (step.isExternal())
      return;
    RematPolicy parsed;
    if (std::string error = RematPolicy::parse(policy, parsed);
        !error.empty()) {
      step.emitError() << "dtc-remat: policy: " << error;
      return signalPassFailure();
    }
    ForwardPass forward(step);
    if (forward.transformerUnits.empty()) {
      if (parsed.kind != RematPolicy::Kind::None)
        step.emitWarning() << "dtc-remat: no transformer unit (a module "
                              "holding an attention op) to recompute; "
                              "policy '"
                           << policy << "' changes nothing";
      return;
    }
    int64_t peakWithout = activationPeak(step);
    SmallVector<Segment> plan;
    std::string chosenPlan = parsed.str();
    switch (parsed.kind) {
    case RematPolicy::Kind::None:
      plan = freePlan(forward);
      break;
    case RematPolicy::Kind::Full:
    case RematPolicy::Kind::Every:
      plan = everyPlan(forward, parsed.every);
      break;
    case RematPolicy::Kind::Selective:
      plan = selectivePlan(forward);
      break;
    case RematPolicy::Kind::Budget: {
      int64_t budget = parsed.budgetBytes;
      if (parsed.budgetAuto) {
        double limit = parseByteSize(memoryLimit);
        if (limit <= 0) {
          step.emitError() << "dtc-remat: budget=auto needs a memory limit "
                              "(--memory-limit SIZE), got '"
                           << memoryLimit << "'";
          return signalPassFailure();
        }
        StepMemory memory = analyzeMemory(step);
        budget = static_cast<int64_t>(limit) -
                 (memory.total() - memory.activationPeak);
        if (budget <= 0) {
          step.emitError() << "dtc-remat: the persistent state alone ("
                           << memory.total() - memory.activationPeak
                           << " B) exceeds the memory limit " << memoryLimit;
          return signalPassFailure();
        }
      }
      FailureOr<Outcome> chosen = budgetPlan(step, forward, budget);
      if (failed(chosen))
        return signalPassFailure();
      plan = std::move(chosen->plan);
      chosenPlan = chosen->name;
      break;
    }
    }
    forward.apply(plan);
    Builder b(step.getContext());
    step->setAttr(kRematAttrName,
                  b.getDictionaryAttr(
                      {b.getNamedAttr("policy", b.getStringAttr(policy)),
                       b.getNamedAttr("plan", b.getStringAttr(chosenPlan)),
                       b.getNamedAttr("transformer_units",
                                      b.getI64IntegerAttr(
                                          forward.transformerUnits.size())),
                       b.getNamedAttr("activation_peak_without",
                                      b.getI64IntegerAttr(peakWithout))}));
  }
};

} // namespace
