//===- BuildProgram.cpp - a training step as a thunk program --------------===//
//
// The step is cloned, its f32 log-softmaxes expanded (so the cross-entropy
// stores no [tokens, vocab] value beyond the logits), fused (dtc-fuse with
// row-reductions=rows: reductions that fold rows of one shape share a
// row kernel with the elementwise ops feeding them and reading their
// results; softmax and norms have kernels of their own), and every
// elementwise op left alone wrapped in a loop group of its own. Then, in the
// order the arena was planned for (programOrder), each op becomes a thunk: a
// kernel (the target's), a GEMM or a collective, each operand and
// result named by where it lives (an argument's buffer, a result's buffer, an
// arena offset). A collective with thunks between it and its first reader is
// started asynchronously and waited for before that reader (startCollectives
// says which, and how long their operands then live).
//
//===----------------------------------------------------------------------===//

#include "dtc/Target/Program/BuildProgram.h"

#include "dtc/Analysis/ArenaPlan.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/PipelineStages.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "dtc/Interpreter/TensorAttr.h"
#include "dtc/Runtime/StepSignature.h"
#include "dtc/Runtime/TensorIO.h"
#include "dtc/Transforms/Codegen/Passes.h"
#include "dtc/Transforms/Training/Passes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// Whether `op` is computed by a loop kernel once wrapped in a group of its
/// own. (A lone dropout keeps its op kernel.)
bool isLoopOp(Operation *op) {
  if (isa<DropoutOp>(op))
    return false;
  if (isElementwise(op) || isa<BroadcastOp, ReshapeOp, IotaOp>(op))
    return true;
  auto constant = dyn_cast<ConstantOp>(op);
  auto value =
      constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
  return value && value.isSplat();
}

/// Gives every constant a dense value (a resource blob's too), which the
/// kernels embed as a global.
LogicalResult densifyConstants(func::FuncOp step) {
  WalkResult walk = step.walk([](ConstantOp constant) {
    if (isa<DenseElementsAttr>(constant.getValue()))
      return WalkResult::advance();
    FailureOr<Tensor> value = tensorFromAttr(constant.getValue());
    if (failed(value)) {
      constant.emitError("cannot read this constant's value");
      return WalkResult::interrupt();
    }
    constant.setValueAttr(denseAttrFromTensor(constant.getContext(), *value));
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// The first op of `body` that reads one of `values` or holds such a
/// reader; null when none does.
Operation *firstReader(Block &body, ValueRange values) {
  Operation *first = nullptr;
  for (Value value : values)
    for (Operation *user : value.getUsers())
      if (Operation *top = body.findAncestorOpInBlock(*user);
          top && (!first || top->isBeforeInBlock(first)))
        first = top;
  return first;
}

/// Moves the pure ops that read an all-reduce's or a reduce-scatter's
/// result (bucket unpacking: slices, reshapes), and those reading theirs,
/// down to just before their first reader, so that the collective has work
/// to overlap: typically the rest of the backward pass, up to the
/// optimizer.
void sinkGradientReductionReaders(func::FuncOp step) {
  Block &body = step.getBody().front();
  llvm::SmallPtrSet<Operation *, 16> sinkable;
  SmallVector<Operation *> order;
  auto isReduction = [](Operation *op) {
    return isa<AllReduceOp, ReduceScatterOp>(op);
  };
  for (Operation &op : body.without_terminator()) {
    if (isReduction(&op) || !isMemoryEffectFree(&op))
      continue;
    bool readsReduction = llvm::any_of(op.getOperands(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && (isReduction(def) || sinkable.count(def));
    });
    if (readsReduction) {
      sinkable.insert(&op);
      order.push_back(&op);
    }
  }
  // Last first, so that a chain moves down together; ops with one first
  // reader keep their order before it.
  llvm::DenseMap<Operation *, Operation *> earliestMovedBefore;
  for (Operation *op : llvm::reverse(order))
    if (Operation *first = firstReader(body, op->getResults())) {
      Operation *&at = earliestMovedBefore[first];
      op->moveBefore(at ? at : first);
      at = op;
    }
}

/// The pure ops computing `value` from the step's arguments and constants
/// alone (a ZeRO-3 bucket packed from parameter shards), in program order,
/// or none when it reads anything else.
std::optional<SmallVector<Operation *>> fromArgumentsAlone(Value value) {
  SmallVector<Operation *> ops;
  llvm::SmallPtrSet<Operation *, 16> seen;
  SmallVector<Value> pending{value};
  while (!pending.empty()) {
    Operation *op = pending.pop_back_val().getDefiningOp();
    if (!op || !seen.insert(op).second)
      continue;
    if (!isMemoryEffectFree(op) || op->getNumRegions() || seen.size() > 256)
      return std::nullopt;
    ops.push_back(op);
    llvm::append_range(pending, op->getOperands());
  }
  llvm::sort(ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ops;
}

/// ZeRO-3's prefetch: each all-gather of parameters (of a value computed
/// from the step's arguments alone) moves up, with the ops packing its
/// operand, to just after the first reader of the all-gather before it.
/// startCollectives then starts it there and waits for it before its own
/// first reader: it runs during the compute of the bucket before, one
/// bucket ahead, as DeepSpeed's prefetch does (at the cost of one more
/// gathered bucket alive).
void prefetchParameterGathers(func::FuncOp step) {
  Block &body = step.getBody().front();
  SmallVector<AllGatherOp> gathers(body.getOps<AllGatherOp>());
  for (auto [previous, gather] :
       llvm::zip(gathers, llvm::drop_begin(gathers))) {
    Operation *after = firstReader(body, previous->getResults());
    if (!after || !after->isBeforeInBlock(gather))
      continue;
    std::optional<SmallVector<Operation *>> packing =
        fromArgumentsAlone(gather.getInput());
    if (!packing)
      continue;
    // (Ops already before the new place stay: others may read them there.)
    for (Operation *op : *packing)
      if (after->isBeforeInBlock(op)) {
        op->moveAfter(after);
        after = op;
      }
    gather->moveAfter(after);
  }
}

/// The collectives started without blocking, and what that costs the
/// arena.
struct StartedCollectives {
  /// Per schedule entry: its request number (-1 when it blocks) and the
  /// entry before which it is waited for (the schedule's size: at the end).
  std::vector<std::pair<int, size_t>> entries;
  /// Operands that started collectives read until their waits: each lives
  /// through that entry.
  llvm::DenseMap<Value, size_t> heldUntil;
  int count = 0;
};

/// A collective whose result is first read later than by the next thunk is
/// started and waited for just before that reader: the thunks between
/// overlap it. An all-reduce runs in place on its result's buffer (its
/// operand's, where it alone reads that: ReshapesInPlace), its operand
/// copied there when it starts, so that the operand may die at once. An
/// all-gather or reduce-scatter reads its operand until its wait, which then
/// lives until then; it is started when operand and result are arena values,
/// split along the outermost dimension (nothing to rearrange), and waited for
/// before its first reader or the next all-gather or reduce-scatter, whichever
/// comes first: at most one such operand is held at a time (one gradient bucket
/// in flight, as DeepSpeed's overlap_comm keeps).
StartedCollectives startCollectives(ArrayRef<ScheduledOp> schedule,
                                    func::FuncOp step,
                                    const std::function<bool(Value)> &inArena) {
  Block &body = step.getBody().front();
  DenseMap<Operation *, size_t> indexOf;
  for (auto [index, entry] : llvm::enumerate(schedule))
    indexOf[entry.op] = index;
  auto splitDim = [](Operation *op) -> std::optional<int64_t> {
    if (auto gather = dyn_cast<AllGatherOp>(op))
      return gather.getDim();
    if (auto scatter = dyn_cast<ReduceScatterOp>(op))
      return scatter.getDim();
    return std::nullopt;
  };
  // The next all-gather or reduce-scatter, and the next pipeline transfer
  // (a broadcast), after each entry.
  std::vector<size_t> nextSplit(schedule.size()), nextTransfer(schedule.size());
  for (size_t i = schedule.size(), next = schedule.size(),
              transfer = schedule.size();
       i-- > 0;) {
    nextSplit[i] = next;
    nextTransfer[i] = transfer;
    if (splitDim(schedule[i].op))
      next = i;
    if (isa<CollectiveBroadcastOp>(schedule[i].op))
      transfer = i;
  }
  StartedCollectives started;
  started.entries.assign(schedule.size(), {-1, schedule.size()});
  for (auto [index, entry] : llvm::enumerate(schedule)) {
    Operation *op = entry.op;
    std::optional<int64_t> dim = splitDim(op);
    // A send/receive (ring attention's next block) reads its operand until
    // its wait, as a gather does, but holds no more than one block; so does
    // a pipeline stage's transfer (a broadcast, point to point or not),
    // waited for by its first reader or the next transfer, whichever comes
    // first (a sent activation is held no longer).
    bool pointToPoint = isa<SendRecvOp>(op);
    bool transfer = isa<CollectiveBroadcastOp>(op);
    bool readsOperand = dim || pointToPoint || transfer;
    if (!isa<AllReduceOp>(op) && !readsOperand)
      continue;
    Operation *reader = firstReader(body, op->getResults());
    size_t wait =
        reader && indexOf.count(reader) ? indexOf[reader] : schedule.size();
    Value operand = op->getOperand(0);
    if (readsOperand) {
      auto shape = cast<RankedTensorType>(operand.getType()).getShape();
      if ((dim && !llvm::all_of(shape.take_front(*dim),
                                [](int64_t size) { return size == 1; })) ||
          !operand.getDefiningOp() || !inArena(operand) ||
          !inArena(op->getResult(0)))
        continue;
      // (Waited for before the last thunk at the latest: its operand's
      // slot dies after that thunk.)
      wait = std::min(wait, schedule.size() - 1);
      if (dim)
        wait = std::min(wait, nextSplit[index]);
      if (transfer)
        wait = std::min(wait, nextTransfer[index]);
    }
    if (wait <= index + 1)
      continue;
    started.entries[index] = {started.count++, wait};
    if (readsOperand)
      started.heldUntil[operand] = wait;
  }
  return started;
}

/// The values that live in another's buffer. The lone reshapes need no
/// thunk: row-major, a reshape's result is its operand's bytes (as XLA's
/// bitcasts). A view reads its operand's buffer; a reshape that is a step
/// result has its operand computed into that result's buffer (a bias
/// gradient's [1, n] sum returned as [n]), unless the operand is an
/// argument, another result or a view (then it is a copy). An all-reduce
/// whose operand it alone reads (a gradient bucket, packed for it) reduces
/// in that operand's buffer: its result is a view too, but has its thunk;
/// or, where its result is a step result, the operand is computed into
/// that result's buffer. Either way nothing is copied on the step's
/// thread.
struct ReshapesInPlace {
  /// The views, and the reshapes that are step results in place or views
  /// (no thunk).
  llvm::DenseSet<Operation *> views, ops;
  /// A reshaped step result's operand → that result's index.
  llvm::DenseMap<Value, unsigned> resultIndex;

  explicit ReshapesInPlace(func::FuncOp step) {
    Block &body = step.getBody().front();
    llvm::DenseMap<Value, unsigned> firstIndex;
    for (auto [i, value] : llvm::enumerate(body.getTerminator()->getOperands()))
      firstIndex.try_emplace(value, i);
    for (Operation &op : body.without_terminator()) {
      if (isa<AllReduceOp>(op)) {
        Value source = op.getOperand(0), result = op.getResult(0);
        if (isa<BlockArgument>(source) || !source.hasOneUse() ||
            firstIndex.count(source) || isView(source))
          continue;
        if (firstIndex.count(result))
          resultIndex.try_emplace(source, firstIndex[result]);
        else if (!result.use_empty())
          views.insert(&op);
        continue;
      }
      if (!isa<ReshapeOp>(op))
        continue;
      Value source = op.getOperand(0), result = op.getResult(0);
      if (!firstIndex.count(result)) {
        views.insert(&op);
        ops.insert(&op);
      } else if (!isa<BlockArgument>(source) && !firstIndex.count(source) &&
                 !isView(source) &&
                 resultIndex.try_emplace(source, firstIndex[result]).second) {
        ops.insert(&op);
      }
    }
  }
  bool isView(Value value) const {
    return views.contains(value.getDefiningOp());
  }
  /// The value whose buffer a view reads (found when asked: wrapping ops
  /// in groups replaces values).
  Value sourceOf(Value view) const {
    while (isView(view))
      view = view.getDefiningOp()->getOperand(0);
    return view;
  }
  /// Whether `value` has no buffer of its own in the arena.
  bool placedElsewhere(Value value) const {
    return isView(value) || resultIndex.count(value);
  }
};

/// Wraps each loop op outside a group in a `loop` group of its own, but
/// those `skip` selects.
void wrapLoneLoopOps(func::FuncOp step,
                     llvm::function_ref<bool(Operation *)> skip) {
  SmallVector<Operation *> lone;
  for (Operation &op : step.getBody().front().without_terminator())
    if (isLoopOp(&op) && !skip(&op))
      lone.push_back(&op);
  for (Operation *op : lone) {
    OpBuilder b(op);
    auto fusion = FusionOp::create(b, op->getLoc(), op->getResultTypes(),
                                   op->getOperands(), FusionKind::Loop);
    Block *body = b.createBlock(&fusion.getBody());
    IRMapping mapping;
    for (Value operand : op->getOperands())
      mapping.map(operand, body->addArgument(operand.getType(), op->getLoc()));
    Operation *clone = b.clone(*op, mapping);
    YieldOp::create(b, op->getLoc(), clone->getResults());
    op->replaceAllUsesWith(fusion.getResults());
    op->erase();
  }
}

/// Where each value of the step lives.
class Placement {
public:
  Placement(func::FuncOp step, const ArenaPlan &plan,
            const ReshapesInPlace &reshapes) {
    for (BlockArgument arg : step.getArguments())
      where[arg] = "a" + std::to_string(arg.getArgNumber());
    Operation *terminator = step.getBody().front().getTerminator();
    for (auto [i, value] : llvm::enumerate(terminator->getOperands()))
      if (!where.count(value))
        where[value] = "r" + std::to_string(i);
    for (const ArenaPlan::Slot &slot : plan.slots)
      where[slot.buffer.value] = "m" + std::to_string(slot.offset);
    for (auto [source, index] : reshapes.resultIndex)
      where[source] = "r" + std::to_string(index);
    for (Operation *view : reshapes.views)
      where[view->getResult(0)] =
          where.lookup(reshapes.sourceOf(view->getResult(0)));
  }
  /// `loc`, or `loc:dtype:shape` with `typed`.
  std::string operator()(Value value, bool typed = false) const {
    std::string text = where.lookup(value);
    if (!typed)
      return text;
    auto type = cast<RankedTensorType>(value.getType());
    std::optional<DType> dtype = dtypeOf(type.getElementType());
    text += std::string(":") + (dtype ? dtypeName(*dtype) : "?") + ":";
    for (auto [i, size] : llvm::enumerate(type.getShape()))
      text += (i ? "x" : "") + std::to_string(size);
    if (type.getRank() == 0)
      text += "-";
    return text;
  }

private:
  llvm::DenseMap<Value, std::string> where;
};

std::string joined(ArrayAttr axes) {
  std::string out;
  for (Attribute axis : axes)
    out += (out.empty() ? "" : ",") + cast<StringAttr>(axis).str();
  return out;
}

const char *reductionName(CollectiveReduction kind) {
  switch (kind) {
  case CollectiveReduction::Sum:
    return "sum";
  case CollectiveReduction::Max:
    return "max";
  case CollectiveReduction::Min:
    return "min";
  }
  return "sum";
}

/// The thunk of a collective, or "" for another op.
std::string collectiveThunk(Operation *op, const Placement &at) {
  if (!isa<AllReduceOp, AllGatherOp, ReduceScatterOp, CollectiveBroadcastOp,
           SendRecvOp, ShardOp, AllToAllOp>(op))
    return "";
  std::string io = " in=" + at(op->getOperand(0), true) +
                   " out=" + at(op->getResult(0), true);
  // Why the partitioner placed it, for the runtime's errors (escaped:
  // fields are split on spaces).
  if (auto reason = op->getAttrOfType<StringAttr>("reason"))
    io += " reason=" + encodeFileName(reason.getValue().str());
  return TypeSwitch<Operation *, std::string>(op)
      .Case([&](AllReduceOp op) {
        return std::string("all_reduce kind=") + reductionName(op.getKind()) +
               " axes=" + joined(op.getAxes()) + io;
      })
      .Case([&](AllGatherOp op) {
        return "all_gather axes=" + joined(op.getAxes()) +
               " dim=" + std::to_string(op.getDim()) + io;
      })
      .Case([&](ReduceScatterOp op) {
        return "reduce_scatter axes=" + joined(op.getAxes()) +
               " dim=" + std::to_string(op.getDim()) + io;
      })
      .Case([&](CollectiveBroadcastOp op) {
        std::string receivers;
        if (auto list =
                op->getAttrOfType<DenseI64ArrayAttr>(kReceiversAttrName))
          for (int64_t receiver : list.asArrayRef())
            receivers += (receivers.empty() ? " receivers=" : ",") +
                         std::to_string(receiver);
        return "broadcast axes=" + joined(op.getAxes()) +
               " root=" + std::to_string(op.getRoot()) + receivers + io;
      })
      .Case([&](SendRecvOp op) {
        return "send_recv axis=" + op.getAxis().str() +
               " shift=" + std::to_string(op.getShift()) + io;
      })
      .Case([&](ShardOp op) {
        return "shard axes=" + joined(op.getAxes()) +
               " dim=" + std::to_string(op.getDim()) +
               " blocks=" + std::to_string(op.getBlocks()) + io;
      })
      .Case([&](AllToAllOp op) {
        std::optional<uint64_t> rows = op.getRowsDim();
        return "all_to_all axes=" + joined(op.getAxes()) +
               " split=" + std::to_string(op.getSplitDim()) +
               " concat=" + std::to_string(op.getConcatDim()) +
               (rows ? " rows=" + std::to_string(*rows) : "") + io;
      })
      .Default([](Operation *) { return std::string(); });
}

/// What a kernel computes, for traces: the op's name, or a group's kind
/// and its first ops ("loop:add+gelu+mul").
std::string describe(Operation *op) {
  auto shortName = [](Operation *op) {
    return op->getName().getStringRef().drop_front(strlen("dtc.")).str();
  };
  auto fusion = dyn_cast<FusionOp>(op);
  if (!fusion)
    return shortName(op);
  std::string text = stringifyFusionKind(fusion.getKind()).str() + ":";
  int shown = 0;
  for (Operation &inner : fusion.getBody().front().without_terminator()) {
    if (isa<ConstantOp>(inner))
      continue;
    if (shown++ == 4) {
      text += "+...";
      break;
    }
    text += (shown > 1 ? "+" : "") + shortName(&inner);
  }
  return shown ? text : text + "constant";
}

/// The thunk line computing `op` ("" for an op without results), adding
/// its kernel, if any, to `target`.
FailureOr<std::string> thunkOf(Operation *op, const Placement &at,
                               KernelTarget &target, int &kernelCount) {
  if (!isa<FusionOp>(op) && op->getNumResults() == 0)
    return std::string();
  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    if (!isa<FloatType>(matmul.getType().getElementType()))
      return op->emitError("a compiled program multiplies float matrices "
                           "only");
    return std::string("gemm ta=") + (matmul.getTransposeLhs() ? "1" : "0") +
           " tb=" + (matmul.getTransposeRhs() ? "1" : "0") +
           " lhs=" + at(matmul.getLhs(), true) +
           " rhs=" + at(matmul.getRhs(), true) +
           " out=" + at(matmul.getResult(), true) + "\n";
  }
  if (std::string collective = collectiveThunk(op, at); !collective.empty())
    return collective + "\n";
  std::string name = "dtc_kernel_" + std::to_string(kernelCount++);
  FailureOr<std::string> fields = target.addKernel(op, name);
  if (failed(fields))
    return failure();
  std::string line = "kernel sym=" + name + " op=" + describe(op) + *fields;
  line += " args=";
  bool first = true;
  for (Value value : llvm::concat<Value>(op->getOperands(), op->getResults())) {
    line += (first ? "" : ",") + at(value);
    first = false;
  }
  return line + "\n";
}

bool writeText(const std::string &path, const std::string &text,
               Operation *where) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (!ec) {
    os << text;
    os.close();
    ec = os.error();
  }
  if (ec)
    where->emitError("cannot write '") << path << "': " << ec.message();
  return !ec;
}

} // namespace

FailureOr<ProgramSummary>
mlir::dtc::buildProgram(func::FuncOp original, const StepSignature &signature,
                        const std::string &dir, KernelTarget &target) {
  MLIRContext *context = original.getContext();
  // The step as the kernels compute it, on a copy of its module (which
  // holds its mesh).
  auto module = original->getParentOfType<ModuleOp>();
  OwningOpRef<ModuleOp> owned(module.clone());
  auto step = owned->lookupSymbol<func::FuncOp>(original.getSymName());
  {
    PassManager pm(context, func::FuncOp::getOperationName());
    // (A step keeps attention's backward one op for a target that fuses
    // it, --fused-attention; what is not fused is expanded here.)
    if (target.fusesAttention())
      pm.addPass(createFuseAttention());
    pm.addPass(createExpandAttentionGrad());
    pm.addPass(createExpandAttention());
    pm.addPass(createFoldIntoMatmuls());
    pm.addPass(createAccumulateScatters());
    pm.addPass(createExpandRowOps());
    FuseOptions fuseOptions;
    fuseOptions.rowReductions = "rows";
    pm.addPass(createFuse(fuseOptions));
    if (failed(pm.run(step)))
      return failure();
  }
  if (failed(densifyConstants(step)))
    return failure();
  // (Reshapes are wrapped once their values are final: wrapping replaces
  // the values it wraps.)
  wrapLoneLoopOps(step, [](Operation *op) { return isa<ReshapeOp>(op); });
  sinkGradientReductionReaders(step);
  prefetchParameterGathers(step);
  ReshapesInPlace reshapes(step);
  wrapLoneLoopOps(step,
                  [&](Operation *op) { return reshapes.ops.contains(op); });
  Schedule schedule = programOrder(step.getBody().front());
  std::function<bool(Value)> intermediate = intermediatesOf(step);
  std::function<bool(Value)> inArena = [&](Value value) {
    return !reshapes.placedElsewhere(value) && intermediate(value);
  };
  StartedCollectives started = startCollectives(schedule, step, inArena);
  // A view's readers read its source's buffer, which lives until the last.
  llvm::DenseMap<Value, size_t> heldUntil = started.heldUntil;
  for (auto [index, entry] : llvm::enumerate(schedule))
    for (Value operand : entry.op->getOperands())
      if (reshapes.isView(operand)) {
        Value source = reshapes.sourceOf(operand);
        heldUntil[source] = std::max(heldUntil.lookup(source), index);
      }
  ArenaPlan plan = planArena(schedule, inArena, heldUntil);
  Placement at(step, plan, reshapes);

  // Each slot's death: after the last thunk reading it.
  std::vector<SmallVector<const ArenaPlan::Slot *>> deaths(schedule.size());
  for (const ArenaPlan::Slot &slot : plan.slots)
    deaths[slot.buffer.last].push_back(&slot);
  std::vector<std::string> waitsBefore(schedule.size() + 1);
  for (auto [request, wait] : started.entries)
    if (request >= 0)
      waitsBefore[wait] += "wait req=" + std::to_string(request) + "\n";
  std::string thunks;
  int kernelCount = 0;
  ProgramSummary summary;
  for (auto [index, entry] : llvm::enumerate(schedule)) {
    FailureOr<std::string> thunk =
        reshapes.ops.contains(entry.op)
            ? std::string()
            : thunkOf(entry.op, at, target, kernelCount);
    if (failed(thunk))
      return failure();
    StringRef line(*thunk);
    summary.gemms += line.starts_with("gemm ");
    summary.collectives += !line.empty() && !line.starts_with("gemm ") &&
                           !line.starts_with("kernel ");
    thunks += waitsBefore[index];
    if (int request = started.entries[index].first; request >= 0)
      thunk->insert(thunk->size() - 1, " async=" + std::to_string(request));
    thunks += *thunk;
    for (const ArenaPlan::Slot *slot : deaths[index])
      thunks += "dead at=" + at(slot->buffer.value) +
                " bytes=" + std::to_string(slot->buffer.bytes) + "\n";
  }
  thunks += waitsBefore[schedule.size()];
  // Results that are arguments, or repeat an earlier result, are copies
  // (but those of a pipelined step that other pp ranks hold).
  Operation *terminator = step.getBody().front().getTerminator();
  auto coordinate = step->getAttrOfType<IntegerAttr>(kPipelineCoordinateAttr);
  for (auto [i, value] : llvm::enumerate(terminator->getOperands()))
    if (at(value) != "r" + std::to_string(i) &&
        (!coordinate ||
         signature.results[i].layout.heldAt(coordinate.getInt())))
      thunks += "copy in=" + at(value, true) + " out=r" + std::to_string(i) +
                at(value, true).substr(at(value).size()) + "\n";

  if (std::error_code ec = llvm::sys::fs::create_directories(dir + "/init"))
    return original.emitError("cannot create '")
           << dir << "/init': " << ec.message();
  if (failed(target.writeKernels(dir, original)))
    return failure();
  // The starting values the step carries (parameters, a loss scale).
  for (unsigned i = 0; i < original.getNumArguments(); ++i) {
    auto value = original.getArgAttrOfType<ElementsAttr>(i, kValueAttrName);
    if (!value)
      continue;
    FailureOr<Tensor> tensor = tensorFromAttr(value);
    std::string error, path = dir + "/init/arg" + std::to_string(i) + ".npy";
    if (failed(tensor) || !writeNpy(path, *tensor, error))
      return original.emitError("cannot write the starting value of "
                                "argument ")
             << i << " to '" << path << "': " << error;
  }
  std::string program =
      target.programKind() + " " + std::to_string(kProgramVersion) + "\n" +
      signature.toText() + "arena " + std::to_string(plan.size) + "\n" + thunks;
  if (!writeText(dir + "/program.txt", program, original))
    return failure();
  summary.kernels = kernelCount;
  summary.asyncCollectives = started.count;
  summary.arenaBytes = plan.size;
  summary.arenaLowerBound = plan.lowerBound;
  return summary;
}
