//===- Fuse.cpp - fusion groups decided in the dtc dialect ----------------===//
//
// Groups the per-rank program's ops into dtc.fusion regions, one kernel
// each, above any target (as XLA's instruction fusion and IREE's dispatch
// regions do). From the program's end, an op that can lead a group absorbs
// the producers of the group's operands, latest first, while a producer is
// fusible and every use of its results lies inside the group: no costly op
// is computed twice and a group's only results are its leader's. Latest
// first, so that a producer is judged after every group member that could
// read it. One reduction per group at most: it is the group's hero; under
// `row-reductions=rows` (the CPU target's), several reductions that fold
// rows of one shape share a group with the ops that read their results (a
// softmax's maximum and sum and its division, a norm's backward), as long
// as each such op reads its own row (keepsToRows).
// Producers cheaper to recompute than to store (index grids, broadcasts of
// smaller values, elementwise ops of those and scalars, cheap elementwise
// ops reading one stored value of their size) are copied into each group
// that reads them. On a training step the optimizer's
// elementwise groups then merge into multi-tensor groups (horizontal
// fusion), one per latest collective they read (so that a gradient
// bucket's updates need not wait for the buckets reduced after it), where
// no outside reader of their results comes before the last of them.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Codegen/Passes.h"

#include "dtc/Analysis/Phases.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

#include <functional>
#include <map>
#include <queue>

namespace mlir::dtc {
#define GEN_PASS_DEF_FUSE
#include "dtc/Transforms/Codegen/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

enum class Role { None, Loop, Reduction };

/// Which row-reduction groups form (the pass's `row-reductions`).
enum class RowReductions { All, Rows, None };

/// Whether `dims` are the trailing dimensions of a rank-`rank` value.
bool trailing(ArrayRef<int64_t> dims, int64_t rank) {
  SmallVector<int64_t> sorted(dims);
  llvm::sort(sorted);
  for (auto [i, dim] : llvm::enumerate(sorted))
    if (dim !=
        rank - static_cast<int64_t>(sorted.size()) + static_cast<int64_t>(i))
      return false;
  return true;
}

int64_t rankOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank();
}

/// How `op` can take part in a group: as an elementwise loop op, as a
/// reduction along the trailing dimensions (as `mode` allows), or not at
/// all.
Role roleOf(Operation *op, RowReductions mode = RowReductions::All) {
  if (isElementwise(op) || isa<BroadcastOp, ReshapeOp>(op))
    return Role::Loop;
  auto rowReduction = [&](bool alongRows) {
    return alongRows && mode == RowReductions::All ? Role::Reduction
                                                   : Role::None;
  };
  return TypeSwitch<Operation *, Role>(op)
      .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp>(
          [&](auto reduce) {
            bool alongRows =
                trailing(reduce.getDims(), rankOf(reduce.getInput()));
            Type element = reduce.getType().getElementType();
            if (mode == RowReductions::Rows)
              return alongRows && (element.isF32() || element.isF64())
                         ? Role::Reduction
                         : Role::None;
            return rowReduction(alongRows);
          })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](auto softmax) {
        return rowReduction(static_cast<int64_t>(softmax.getDim()) + 1 ==
                            rankOf(softmax.getInput()));
      })
      .Case<LayerNormOp, RMSNormOp>([&](auto) { return rowReduction(true); })
      .Default([](Operation *) { return Role::None; });
}

/// The rows a reduction along trailing dimensions folds: the shape of its
/// input's other (leading) dimensions.
ArrayRef<int64_t> rowsOf(Operation *reduce) {
  auto input = cast<RankedTensorType>(reduce->getOperand(0).getType());
  auto dims = reduce->getAttrOfType<DenseI64ArrayAttr>("dims");
  return input.getShape().drop_back(dims.size());
}

/// A scalar or splat constant or an index grid (iota), which each group
/// that reads it copies: it is never an input.
bool isCopiedIntoGroups(Operation *op) {
  if (isa_and_nonnull<IotaOp>(op))
    return true;
  auto constant = dyn_cast_or_null<ConstantOp>(op);
  if (!constant)
    return false;
  auto value = dyn_cast<DenseElementsAttr>(constant.getValue());
  return value && (value.isSplat() || value.getNumElements() == 1);
}

int64_t numElementsOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getNumElements();
}

/// A cheap elementwise op: an add, a comparison, a division by a scalar
/// (GELU's x / sqrt(2), attention's scale) or the like, nothing
/// transcendental.
bool isCheap(Operation *op) {
  if (auto div = dyn_cast<DivOp>(op))
    return numElementsOf(div.getRhs()) == 1;
  return isa<AddOp, SubOp, MulOp, NegOp, MaxOp, MinOp, AbsOp, SelectOp,
             CompareOp, CastOp, NotOp, AndOp, OrOp>(op);
}

/// Whether the value an op computes is cheaper to recompute in each group
/// that reads it than to store and load: an index grid (iota), a broadcast
/// of a smaller value, elementwise ops of such values and scalars (a
/// one-hot mask from the labels, which would otherwise be a [tokens, vocab]
/// temporary), or cheap elementwise ops that read, besides those and
/// smaller values, at most one stored value of their size (each reader then
/// reads that value instead, and nothing is written: the cross-entropy's
/// log-probabilities `x - max - log(sum)` from the logits). Memoized: the
/// program does not change while groups grow.
class Recomputation {
public:
  bool isRecomputable(Operation *op) { return op && lookup(op).recomputable; }

private:
  struct Answer {
    bool recomputable = false;
    /// The stored values of the op's size its recomputation reads.
    SmallVector<Value, 1> stored;
  };

  const Answer &lookup(Operation *op) {
    if (auto it = answers.find(op); it != answers.end())
      return it->second;
    Answer answer = compute(op);
    return answers[op] = std::move(answer);
  }

  Answer compute(Operation *op) {
    Answer answer;
    if (isCopiedIntoGroups(op)) {
      answer.recomputable = true;
      return answer;
    }
    if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
      answer.recomputable = broadcast.getInput().getType().getNumElements() <
                            broadcast.getType().getNumElements();
      return answer;
    }
    if (!isElementwise(op) || isa<DropoutOp>(op))
      return answer;
    int64_t size = numElementsOf(op->getResult(0));
    llvm::SmallSetVector<Value, 2> stored;
    for (Value operand : op->getOperands()) {
      int64_t elements = numElementsOf(operand);
      if (elements == 1)
        continue;
      if (Operation *def = operand.getDefiningOp()) {
        const Answer &inner = lookup(def);
        if (inner.recomputable) {
          stored.insert(inner.stored.begin(), inner.stored.end());
          continue;
        }
      }
      if (!isCheap(op))
        return answer;
      if (elements == size)
        stored.insert(operand);
    }
    // (Only cheap ops are recomputed from a stored value: an exp of a
    // recomputed x - max stays one stored value.)
    answer.recomputable = stored.empty() || (isCheap(op) && stored.size() == 1);
    answer.stored.assign(stored.begin(), stored.end());
    return answer;
  }

  llvm::DenseMap<Operation *, Answer> answers;
};

struct Group {
  SmallVector<Operation *> ops; // leader first
  /// Producers recomputed inside the group, which others read too.
  SmallVector<Operation *> copies;
  bool hasReduction = false;
  /// Whether a neighbour joined (see growGroup).
  bool tookNeighbours = false;
};

/// A row kernel writes its results row by row: a part of a row group
/// whose value another group or op reads, not shaped as the rows (the
/// scalar offset of this rank's classes, a padding mask [batch, 1, 1, keys]
/// beside attention scores), stays outside it and is read as an input,
/// together with what it reads of the group -- when that reads nothing
/// else the group computes (it is all made from the group's inputs, so it
/// can be computed before the group).
void evictForeignOutputs(Group &group, llvm::DenseSet<Operation *> &grouped) {
  if (!group.hasReduction)
    return;
  auto reduction = llvm::find_if(group.ops, [](Operation *op) {
    return roleOf(op, RowReductions::Rows) == Role::Reduction;
  });
  if (reduction == group.ops.end())
    return;
  ArrayRef<int64_t> rows = rowsOf(*reduction);
  llvm::DenseSet<Operation *> members(group.ops.begin(), group.ops.end());
  llvm::SetVector<Operation *> evicted;
  for (Operation *op : group.ops) {
    if (op == group.ops.front() || op->getNumResults() != 1 ||
        evicted.contains(op))
      continue;
    auto shape = cast<RankedTensorType>(op->getResult(0).getType()).getShape();
    bool readOutside = llvm::any_of(op->getUsers(), [&](Operation *user) {
      return !members.contains(user);
    });
    if (!readOutside || shape.take_front(rows.size()) == rows)
      continue;
    // It and the members it is made from, none of them the group's
    // leader or a reduction.
    llvm::SetVector<Operation *> upstream;
    SmallVector<Operation *> work{op};
    bool movable = true;
    while (movable && !work.empty()) {
      Operation *next = work.pop_back_val();
      if (!upstream.insert(next))
        continue;
      movable = next != group.ops.front() &&
                roleOf(next, RowReductions::Rows) != Role::Reduction;
      for (Value operand : next->getOperands())
        if (Operation *def = operand.getDefiningOp(); members.contains(def))
          work.push_back(def);
    }
    if (movable)
      evicted.insert(upstream.begin(), upstream.end());
  }
  for (Operation *op : evicted) {
    llvm::erase(group.ops, op);
    grouped.erase(op);
  }
}

/// Whether `value` is shaped as a statistic of rows of `like`: `like`'s
/// leading dimensions, then size-1 ones (a norm's 1 / stddev beside the
/// normalized value).
bool isRowStatisticOf(Value value, Value like) {
  auto shape = cast<RankedTensorType>(value.getType()).getShape();
  auto of = cast<RankedTensorType>(like.getType()).getShape();
  if (shape.size() != of.size() || shape == of)
    return false;
  size_t same = 0;
  while (shape[same] == of[same])
    ++same;
  return llvm::all_of(shape.drop_front(same),
                      [](int64_t size) { return size == 1; });
}

/// Grows a group from `leader` over the producers it may absorb; with
/// `oneReduction`, no reduction joins as a producer. Under `rows` (and not
/// `oneReduction`), reductions join when they fold rows of the shape the
/// group's first one folds, and some producers join even when read outside
/// the group, provided every such reader comes after the leader: they are
/// then also group results. These are reductions, values no larger than a
/// member reduction's result or shaped as a statistic of the leader's rows
/// (the cross-entropy's maximum and log-sum, a norm's mean and 1 / stddev,
/// which the backward reads again), and, with `neighbours`, cheap ops of
/// the leader's shape that are stored anyway (a residual add before a
/// norm, which the norm's output leads).
Group growGroup(Operation *leader,
                const llvm::DenseMap<Operation *, unsigned> &position,
                const llvm::DenseSet<Operation *> &grouped,
                const llvm::DenseSet<Operation *> &recomputed,
                RowReductions mode, Recomputation &recomputation,
                bool oneReduction, bool neighbours) {
  Group group;
  group.ops.push_back(leader);
  group.hasReduction = roleOf(leader, mode) == Role::Reduction;
  bool shareRows = mode == RowReductions::Rows && !oneReduction;
  std::optional<ArrayRef<int64_t>> rows;
  int64_t statisticSize = 0; // the largest member reduction's result
  auto joinReduction = [&](Operation *reduce) {
    if (!shareRows)
      return;
    rows = rowsOf(reduce);
    statisticSize =
        std::max(statisticSize, numElementsOf(reduce->getResult(0)));
  };
  if (group.hasReduction)
    joinReduction(leader);
  llvm::SmallPtrSet<Operation *, 16> members{leader};
  std::priority_queue<std::pair<unsigned, Operation *>> candidates;
  llvm::SmallPtrSet<Operation *, 16> seen;
  auto pushProducers = [&](Operation *op) {
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (producer && position.count(producer) && seen.insert(producer).second)
        candidates.push({position.lookup(producer), producer});
    }
  };
  // Whether each reader of `op` outside the group comes after the leader
  // (the fusion takes the leader's place), or is a producer the group
  // recomputes, itself read so (its original, if other readers keep it,
  // moves after the fusion).
  std::function<bool(Operation *)> readLater = [&](Operation *op) {
    return llvm::all_of(op->getUsers(), [&](Operation *user) {
      return members.contains(user) || !position.count(user) ||
             position.lookup(user) > position.lookup(leader) ||
             (llvm::is_contained(group.copies, user) && readLater(user));
    });
  };
  pushProducers(leader);
  while (!candidates.empty()) {
    Operation *producer = candidates.top().second;
    candidates.pop();
    if (grouped.contains(producer) || isCopiedIntoGroups(producer))
      continue;
    Role role = roleOf(producer, mode);
    if (role == Role::None)
      continue;
    if (role == Role::Reduction &&
        !(shareRows ? !rows || *rows == rowsOf(producer)
                    : !oneReduction && !group.hasReduction))
      continue;
    bool onlyInside = llvm::all_of(producer->getUsers(), [&](Operation *user) {
      return members.contains(user);
    });
    // (A cheap value the group's readers could recompute is copied rather
    // than stored: the log-probabilities.)
    bool alsoResult =
        !onlyInside && shareRows && !recomputed.contains(producer) &&
        readLater(producer) &&
        (role == Role::Reduction ||
         numElementsOf(producer->getResult(0)) <= statisticSize ||
         (neighbours &&
          (isRowStatisticOf(producer->getResult(0), leader->getResult(0)) ||
           (isCheap(producer) &&
            producer->getResult(0).getType() ==
                leader->getResult(0).getType() &&
            !recomputation.isRecomputable(producer)))));
    if (!onlyInside && !alsoResult) {
      // (Not a member: the original stays for its other readers, and so
      // must what it reads.)
      if (role == Role::Loop && recomputation.isRecomputable(producer)) {
        group.copies.push_back(producer);
        pushProducers(producer);
      }
      continue;
    }
    group.tookNeighbours |=
        alsoResult && role == Role::Loop &&
        numElementsOf(producer->getResult(0)) > statisticSize;
    members.insert(producer);
    group.ops.push_back(producer);
    if (role == Role::Reduction) {
      group.hasReduction = true;
      joinReduction(producer);
    }
    pushProducers(producer);
  }
  return group;
}

/// Under `rows`, whether a group computes each row of what it reads from a
/// member reduction from that row alone, as a row kernel does (each
/// reduction folds a row, the ops after it read that row's result): its
/// reductions fold rows of one shape, and every op computed from one keeps
/// those rows as its leading dimensions, reading such values at its own
/// rank (numpy broadcasting aligns trailing dimensions). Ops computed from
/// inputs alone are read wherever their readers need them.
bool keepsToRows(const Group &group,
                 const llvm::DenseMap<Operation *, unsigned> &position) {
  SmallVector<Operation *> ops(group.ops);
  llvm::sort(ops, [&](Operation *a, Operation *b) {
    return position.lookup(a) < position.lookup(b);
  });
  std::optional<ArrayRef<int64_t>> rows;
  llvm::DenseSet<Value> fromReductions;
  for (Operation *op : ops) {
    bool reduction = roleOf(op, RowReductions::Rows) == Role::Reduction;
    if (reduction) {
      if (rows && *rows != rowsOf(op))
        return false;
      rows = rowsOf(op);
    }
    bool readsRows = false;
    for (Value operand : op->getOperands())
      if (fromReductions.contains(operand)) {
        readsRows = true;
        if (!reduction && !isa<ReshapeOp>(op) &&
            rankOf(operand) != rankOf(op->getResult(0)))
          return false;
      }
    if (!reduction && !readsRows)
      continue;
    for (Value result : op->getResults()) {
      auto shape = cast<RankedTensorType>(result.getType()).getShape();
      if (shape.size() < rows->size() ||
          shape.take_front(rows->size()) != *rows)
        return false;
      fromReductions.insert(result);
    }
  }
  if (!rows)
    return true;
  // What the kernel writes (the leader's results, and those read outside
  // the group) has the rows leading too.
  llvm::DenseSet<Operation *> members(group.ops.begin(), group.ops.end());
  members.insert(group.copies.begin(), group.copies.end());
  return llvm::all_of(ops, [&](Operation *op) {
    return llvm::all_of(op->getResults(), [&](Value result) {
      bool written = op == group.ops.front() ||
                     llvm::any_of(result.getUsers(), [&](Operation *user) {
                       return !members.contains(user);
                     });
      auto shape = cast<RankedTensorType>(result.getType()).getShape();
      return !written || shape.take_front(rows->size()) == *rows;
    });
  });
}

/// Replaces the group's ops with one dtc.fusion at its last op, whose
/// results are those of its ops' results read outside it (and the
/// leader's, and under `rows` each reduction's: a row kernel keeps them
/// there); adds the ops it copied (constants, index grids, recomputed
/// producers) to `copied`, to be erased once no one reads them.
void outline(Group &group, FusionKind kind, RowReductions mode,
             const llvm::DenseMap<Operation *, unsigned> &position,
             const llvm::DenseSet<Operation *> &copiedByAny,
             llvm::SetVector<Operation *> &copied) {
  // (A merged group may copy one producer for several of its parts, or hold
  // as a part one that another part copies.)
  llvm::DenseSet<Operation *> copies(group.copies.begin(), group.copies.end());
  for (Operation *op : group.ops)
    copies.erase(op);
  SmallVector<Operation *> ops(group.ops);
  llvm::append_range(ops, copies);
  llvm::sort(ops, [&](Operation *a, Operation *b) {
    return position.lookup(a) < position.lookup(b);
  });
  llvm::DenseSet<Operation *> members(ops.begin(), ops.end());
  // Copies also read outside the group stay where they are, reading what
  // the group then gives (an output), as do the copies they read.
  llvm::DenseSet<Operation *> escaping;
  for (Operation *op : llvm::reverse(ops))
    if (copies.contains(op) &&
        llvm::any_of(op->getUsers(), [&](Operation *user) {
          return !members.contains(user) || escaping.contains(user);
        }))
      escaping.insert(op);
  // The inputs: values from outside, but for copied constants and index
  // grids.
  llvm::SetVector<Value> inputs;
  SmallVector<Value> outputs;
  Operation *last = nullptr;
  for (Operation *op : ops) {
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (!members.contains(producer) && !isCopiedIntoGroups(producer))
        inputs.insert(operand);
    }
    if (copies.contains(op))
      continue;
    last = op;
    for (Value result : op->getResults())
      if (op == group.ops.front() ||
          (mode == RowReductions::Rows &&
           roleOf(op, mode) == Role::Reduction) ||
          llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !members.contains(user) || escaping.contains(user);
          }))
        outputs.push_back(result);
  }
  OpBuilder b(last);
  auto fusion =
      FusionOp::create(b, last->getLoc(), ValueRange(outputs).getTypes(),
                       inputs.getArrayRef(), kind);
  Block *body = b.createBlock(&fusion.getBody());
  IRMapping mapping;
  for (Value input : inputs)
    mapping.map(input, body->addArgument(input.getType(), input.getLoc()));
  for (Operation *op : ops) {
    for (Value operand : op->getOperands())
      if (!mapping.contains(operand)) {
        copied.insert(operand.getDefiningOp());
        b.clone(*operand.getDefiningOp(), mapping);
      }
    b.clone(*op, mapping);
  }
  SmallVector<Value> yielded;
  for (Value output : outputs)
    yielded.push_back(mapping.lookup(output));
  YieldOp::create(b, last->getLoc(), yielded);
  for (auto [output, result] : llvm::zip(outputs, fusion.getResults()))
    output.replaceAllUsesWith(result);
  copied.insert(copies.begin(), copies.end());
  // A part here that another group copies stays until every group is
  // outlined (with what it reads); the others go now.
  for (Operation *op : llvm::reverse(ops))
    if (!copies.contains(op)) {
      if (copiedByAny.contains(op) || !op->use_empty())
        copied.insert(op);
      else
        op->erase();
    }
}

/// For each op of `step`, the position of the latest collective it reads
/// the result of, directly or through other ops (-1: none).
llvm::DenseMap<Operation *, int>
latestCollectiveRead(func::FuncOp step,
                     const llvm::DenseMap<Operation *, unsigned> &position) {
  llvm::DenseMap<Operation *, int> latest;
  for (Operation &op : step.getBody().front().without_terminator()) {
    int read = -1;
    for (Value operand : op.getOperands())
      if (Operation *def = operand.getDefiningOp())
        read = std::max(read, isa<CollectiveOpInterface>(def)
                                  ? static_cast<int>(position.lookup(def))
                                  : latest.lookup(def));
    latest[&op] = read;
  }
  return latest;
}

/// Merges the optimizer's elementwise groups (and lone elementwise ops)
/// into multi-tensor groups where that is legal: one per latest collective
/// they read (a gradient bucket's all-reduce: its parameters' updates run
/// while the later buckets are still being reduced), placed at the last of
/// its ops, and needing every outside reader of their results after it.
/// Returns the merged groups.
SmallVector<Group>
mergeOptimizerGroups(func::FuncOp step, SmallVector<Group> &groups,
                     const llvm::DenseSet<Operation *> &grouped,
                     const llvm::DenseMap<Operation *, unsigned> &position) {
  llvm::DenseMap<Operation *, StepPhase> phases = classifyStepPhases(step);
  auto inOptimizer = [&](Operation *op) {
    return phases.lookup(op) == StepPhase::Optimizer;
  };
  // Candidates: loop groups wholly in the optimizer, and lone loop ops, by
  // the latest collective they read.
  llvm::DenseMap<Operation *, int> awaited =
      latestCollectiveRead(step, position);
  std::map<int, SmallVector<Group>> candidates;
  SmallVector<Group> kept;
  auto addCandidate = [&](Group group) {
    int key = -1;
    for (Operation *op : group.ops)
      key = std::max(key, awaited.lookup(op));
    candidates[key].push_back(std::move(group));
  };
  for (Group &group : groups) {
    if (!group.hasReduction && llvm::all_of(group.ops, inOptimizer))
      addCandidate(std::move(group));
    else
      kept.push_back(std::move(group));
  }
  for (Operation &op : step.getBody().front().without_terminator())
    if (!grouped.contains(&op) && inOptimizer(&op) &&
        roleOf(&op) == Role::Loop && !isCopiedIntoGroups(&op))
      addCandidate(Group{{&op}, {}, false});
  groups = std::move(kept);
  SmallVector<Group> mergedGroups;
  for (auto &[key, members] : candidates) {
    auto restore = [&, &members = members] {
      for (Group &group : members)
        if (group.ops.size() > 1)
          groups.push_back(std::move(group));
    };
    if (members.size() < 2) {
      restore();
      continue;
    }
    llvm::DenseSet<Operation *> inside;
    for (Group &group : members)
      inside.insert(group.ops.begin(), group.ops.end());
    unsigned last = 0, firstOutsideUse = ~0u;
    for (Operation *op : inside) {
      last = std::max(last, position.lookup(op));
      for (Operation *user : op->getUsers())
        if (!inside.contains(user))
          firstOutsideUse = std::min(
              firstOutsideUse,
              position.count(user) ? position.lookup(user) : ~0u); // the return
    }
    if (last >= firstOutsideUse) {
      restore();
      continue;
    }
    Group merged;
    for (Group &group : members) {
      llvm::append_range(merged.ops, group.ops);
      llvm::append_range(merged.copies, group.copies);
    }
    mergedGroups.push_back(std::move(merged));
  }
  return mergedGroups;
}

/// Moves the multi-tensor groups that only the return reads to the end of
/// `step`, in the order of the latest collective each reads: the step then
/// waits for its gradient buckets in the order it started them, the
/// earliest (most likely done) first.
void orderUpdatesByCollective(func::FuncOp step) {
  Block &block = step.getBody().front();
  llvm::DenseMap<Operation *, unsigned> position;
  for (Operation &op : block.without_terminator())
    position[&op] = position.size();
  llvm::DenseMap<Operation *, int> awaited =
      latestCollectiveRead(step, position);
  Operation *terminator = block.getTerminator();
  SmallVector<std::pair<int, Operation *>> updates;
  for (FusionOp fusion : block.getOps<FusionOp>())
    if (fusion.getKind() == FusionKind::MultiTensor &&
        llvm::all_of(fusion->getUsers(),
                     [&](Operation *user) { return user == terminator; }))
      updates.push_back({awaited.lookup(fusion), fusion});
  llvm::stable_sort(updates, llvm::less_first());
  for (auto [key, op] : updates)
    op->moveBefore(terminator);
}

/// The loop group formed earlier (later in the program) that `group`, a
/// loop group, may join: one reading the value `group`'s leader computes
/// (directly or through ops the readers recompute), of its shape, such
/// that every other reader of `group`'s values comes after it (the joined
/// group takes that reader's place). GELU's erf, read again by the
/// backward, and the product reading it then are one kernel writing both,
/// each input read once.
std::optional<size_t>
laterLoopReader(const Group &group, ArrayRef<Group> groups,
                const llvm::DenseMap<Operation *, size_t> &groupOf,
                const llvm::DenseMap<Operation *, unsigned> &position,
                const llvm::DenseSet<Operation *> &recomputed) {
  Operation *leader = group.ops.front();
  if (group.hasReduction || leader->getNumResults() != 1)
    return std::nullopt;
  llvm::SmallPtrSet<Operation *, 16> inGroup(group.ops.begin(),
                                             group.ops.end());
  // The groups reading `op`'s values, through recomputed ops.
  llvm::SetVector<size_t> readers;
  std::function<void(Operation *)> collect = [&](Operation *op) {
    for (Operation *user : op->getUsers()) {
      if (auto found = groupOf.find(user); found != groupOf.end())
        readers.insert(found->second);
      else if (recomputed.contains(user))
        collect(user);
    }
  };
  collect(leader);
  for (size_t index : readers) {
    const Group &reader = groups[index];
    Operation *place = reader.ops.front();
    if (reader.hasReduction || place->getNumResults() != 1 ||
        place->getResult(0).getType() != leader->getResult(0).getType())
      continue;
    std::function<bool(Operation *)> readAfter = [&](Operation *op) {
      return llvm::all_of(op->getUsers(), [&](Operation *user) {
        auto found = groupOf.find(user);
        if (inGroup.contains(user) ||
            (found != groupOf.end() && found->second == index))
          return true;
        if (recomputed.contains(user))
          return readAfter(user);
        return position.count(user) &&
               position.lookup(user) > position.lookup(place);
      });
    };
    if (llvm::all_of(group.ops, readAfter))
      return index;
  }
  return std::nullopt;
}

struct FusePass : public mlir::dtc::impl::FuseBase<FusePass> {
  using FuseBase::FuseBase;
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    Block &block = func.getBody().front();
    std::optional<RowReductions> mode =
        llvm::StringSwitch<std::optional<RowReductions>>(rowReductions)
            .Case("all", RowReductions::All)
            .Case("rows", RowReductions::Rows)
            .Case("none", RowReductions::None)
            .Default(std::nullopt);
    if (!mode) {
      func.emitError("dtc-fuse: unknown row-reductions '")
          << rowReductions << "' (all, rows, none)";
      return signalPassFailure();
    }
    llvm::DenseMap<Operation *, unsigned> position;
    for (Operation &op : block.without_terminator())
      position[&op] = position.size();
    // Ops in a group, and ops its readers recompute (which lead none: they
    // stay only for readers outside groups, if any).
    llvm::DenseSet<Operation *> grouped, recomputed;
    SmallVector<Group> groups;
    llvm::DenseMap<Operation *, size_t> groupOf;
    Recomputation recomputation;
    for (Operation &op : llvm::reverse(block.without_terminator())) {
      // (Under `rows`, a reshape leads no group: see the pass's
      // description.)
      if (grouped.contains(&op) || recomputed.contains(&op) ||
          roleOf(&op, *mode) == Role::None || isCopiedIntoGroups(&op) ||
          (*mode == RowReductions::Rows && isa<ReshapeOp>(op)))
        continue;
      auto grow = [&](bool oneReduction, bool neighbours) {
        return growGroup(&op, position, grouped, recomputed, *mode,
                         recomputation, oneReduction, neighbours);
      };
      Group group = grow(/*oneReduction=*/false, /*neighbours=*/true);
      // (Under `rows`, a group that took neighbours but no reduction grows
      // again without them: they are a row kernel's. One that would read
      // another row of a reduction grows again with its leader's reduction
      // only.)
      if (group.tookNeighbours && !group.hasReduction)
        group = grow(/*oneReduction=*/false, /*neighbours=*/false);
      if (*mode == RowReductions::Rows && group.hasReduction &&
          !keepsToRows(group, position))
        group = grow(/*oneReduction=*/true, /*neighbours=*/false);
      // (A lone op that recomputes its producers is a group: GELU's erf of
      // x / sqrt(2) reads x, and the division needs no kernel of its own.)
      std::optional<size_t> reader =
          *mode == RowReductions::Rows
              ? laterLoopReader(group, groups, groupOf, position, recomputed)
              : std::nullopt;
      if (group.ops.size() + group.copies.size() < 2 && !reader)
        continue;
      grouped.insert(group.ops.begin(), group.ops.end());
      recomputed.insert(group.copies.begin(), group.copies.end());
      if (reader) {
        Group &joined = groups[*reader];
        for (Operation *op : group.ops)
          groupOf[op] = *reader;
        llvm::append_range(joined.ops, group.ops);
        llvm::append_range(joined.copies, group.copies);
        continue;
      }
      for (Operation *op : group.ops)
        groupOf[op] = groups.size();
      groups.push_back(std::move(group));
    }
    if (*mode == RowReductions::Rows)
      for (Group &group : groups)
        evictForeignOutputs(group, grouped);
    SmallVector<Group> multiTensor;
    if (getLossResult(func))
      multiTensor = mergeOptimizerGroups(func, groups, grouped, position);
    llvm::DenseSet<Operation *> copiedByAny;
    for (const Group &group : llvm::concat<Group>(groups, multiTensor))
      copiedByAny.insert(group.copies.begin(), group.copies.end());
    llvm::SetVector<Operation *> copied;
    for (Group &group : groups)
      outline(group,
              group.hasReduction ? FusionKind::RowReduction : FusionKind::Loop,
              *mode, position, copiedByAny, copied);
    for (Group &group : multiTensor)
      outline(group, FusionKind::MultiTensor, *mode, position, copiedByAny,
              copied);
    // Latest first: a copied producer's own operands may be copied ones.
    SmallVector<Operation *> unread(copied.begin(), copied.end()), kept;
    llvm::sort(unread, [&](Operation *a, Operation *b) {
      return position.lookup(a) > position.lookup(b);
    });
    for (Operation *op : unread)
      if (op->use_empty())
        op->erase();
      else
        kept.push_back(op);
    // A copied op still read outside groups may read what a group under
    // `rows` now gives at its end: it moves after that (its readers come
    // later, as growGroup made sure), earliest first.
    for (Operation *op : llvm::reverse(kept)) {
      Operation *last = nullptr;
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && def->getBlock() == op->getBlock() &&
            op->isBeforeInBlock(def) && (!last || last->isBeforeInBlock(def)))
          last = def;
      if (last)
        op->moveAfter(last);
    }
    if (!multiTensor.empty())
      orderUpdatesByCollective(func);
  }
};

} // namespace
