//===- Interpreter.cpp - the dtc reference executor -----------------------===//

#include "dtc/Interpreter/Interpreter.h"

#include "Kernels.h"
#include "dtc/Analysis/Liveness.h"
#include "dtc/Analysis/PipelineRanks.h"
#include "dtc/Dialect/DTC/IR/DTCDialect.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/PipelineStages.h"
#include "dtc/Interpreter/TensorAttr.h"
#include "dtc/Runtime/Communicator.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseSet.h"

#include <chrono>
#include <memory>

using namespace mlir;
using namespace mlir::dtc;

Tensor mlir::dtc::makeTensor(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return Tensor(*dtypeOf(type.getElementType()), Shape(type.getShape()));
}

std::vector<int64_t> mlir::dtc::stridedOffsets(const Shape &out, int64_t origin,
                                               const Shape &step) {
  std::vector<int64_t> offsets(numElementsOf(out));
  Shape index(out.size(), 0);
  int64_t offset = origin;
  for (int64_t &slot : offsets) {
    slot = offset;
    for (int64_t d = static_cast<int64_t>(out.size()) - 1; d >= 0; --d) {
      offset += step[d];
      if (++index[d] < out[d])
        break;
      offset -= step[d] * out[d];
      index[d] = 0;
    }
  }
  return offsets;
}

std::vector<int64_t> mlir::dtc::broadcastOffsets(const Shape &operand,
                                                 const Shape &out) {
  // Step 0 along broadcast dimensions, row-major strides elsewhere.
  size_t lead = out.size() - operand.size();
  Shape step(out.size(), 0);
  Shape operandStrides = stridesOf(operand);
  for (size_t i = 0; i < operand.size(); ++i)
    if (operand[i] != 1)
      step[lead + i] = operandStrides[i];
  return stridedOffsets(out, 0, step);
}

DimSplit mlir::dtc::splitAt(const Shape &shape, int64_t dim) {
  DimSplit split{1, shape[dim], 1};
  for (int64_t i = 0; i < dim; ++i)
    split.outer *= shape[i];
  for (size_t i = dim + 1; i < shape.size(); ++i)
    split.inner *= shape[i];
  return split;
}

static thread_local Communicator *activeCommunicator = nullptr;

Communicator *mlir::dtc::currentCommunicator() { return activeCommunicator; }

static KernelTable &kernelTable() {
  static KernelTable table = [] {
    KernelTable t;
    addAttentionKernels(t);
    addCollectiveKernels(t);
    addElementwiseKernels(t);
    addReductionKernels(t);
    addDataMovementKernels(t);
    addFusionKernels(t);
    return t;
  }();
  return table;
}

void mlir::dtc::registerReferenceKernel(TypeID op, ReferenceKernel kernel) {
  kernelTable().add(op, std::move(kernel));
}

LogicalResult mlir::dtc::evaluateOp(Operation *op,
                                    ArrayRef<const Tensor *> operands,
                                    SmallVectorImpl<Tensor> &results) {
  const Kernel *kernel = kernelTable().lookup(op);
  if (!kernel)
    return op->emitError("the reference executor has no kernel for '")
           << op->getName() << "'";
  for (Type type : op->getResultTypes())
    if (cast<RankedTensorType>(type).getNumElements() > kMaxElements)
      return op->emitError("a result of ")
             << cast<RankedTensorType>(type).getNumElements()
             << " elements is beyond the reference executor's limit of "
             << kMaxElements;
  results.clear();
  if (failed((*kernel)(op, operands, results)))
    return failure();
  for (Tensor &result : results)
    result.roundToElementType();
  return success();
}

/// Seconds on the steady clock.
static double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Adds `op`, which ran from `start` to `end`, to the fragment spans: an op
/// of a fragment extends the last span if it is that fragment's, else opens
/// one. (What runs between two ops of a span -- ops a later pass made from
/// the fragment's, the executor's own work -- is the fragment's time.)
static void recordFragment(Operation &op, double start, double end,
                           std::vector<FragmentSpan> &spans) {
  auto kind = op.getAttrOfType<StringAttr>(kFragmentAttrName);
  auto stage = op.getAttrOfType<IntegerAttr>(kStageAttrName);
  auto microbatch = op.getAttrOfType<IntegerAttr>(kMicrobatchAttrName);
  if (!kind || !stage || !microbatch)
    return;
  if (spans.empty() || spans.back().stage != stage.getInt() ||
      spans.back().microbatch != microbatch.getInt() ||
      spans.back().kind != kind.getValue())
    spans.push_back(FragmentSpan{stage.getInt(), microbatch.getInt(),
                                 kind.getValue().str(), start, end});
  spans.back().end = end;
}

FailureOr<SmallVector<Tensor>>
mlir::dtc::interpretFunction(func::FuncOp func, SmallVector<Tensor> arguments,
                             Communicator *communicator,
                             InterpretStats *stats,
                             const OpObserver &observe) {
  struct Scope { // the communicator of this interpretation
    Communicator *previous = activeCommunicator;
    ~Scope() { activeCommunicator = previous; }
  } scope;
  activeCommunicator = communicator;
  Block &body = func.getBody().front();

  // In the order the memory plan assumes: step-invariant values first. A
  // pipelined step: this rank runs the ops of its stages, those of no
  // stage whose operands it holds and the pp broadcasts it sends or
  // receives (receivers pass zeros): pipelineRankOrders', as the report
  // plans.
  std::vector<Operation *> order;
  std::string pipelineAxis; // (none: not pipelined)
  int64_t pipelineCoordinate = 0;
  PipelineHolders holders; // (what this rank holds of arguments and results)
  if (func->hasAttr(kPipelineAttrName)) {
    std::optional<PipelineInfo> pipeline = getPipelineInfo(func);
    int64_t index = communicator && pipeline
                        ? communicator->mesh().axisIndex(pipeline->axis)
                        : -1;
    if (index < 0)
      return func.emitError("a pipelined step runs on the ranks of its pp "
                            "axis: run it with dtc-run under mpirun");
    pipelineAxis = pipeline->axis;
    pipelineCoordinate =
        communicator->mesh().coordinates(communicator->rank())[index];
    holders = getPipelineHolders(func);
    std::vector<Schedule> orders = pipelineRankOrders(func);
    for (const ScheduledOp &entry : orders[pipelineCoordinate])
      order.push_back(entry.op);
    func.walk([&](CollectiveOpInterface collective) {
      std::vector<std::string> axes;
      for (StringRef axis : collective.getGroupAxes())
        axes.push_back(axis.str());
      communicator->prepareGroup(axes);
    });
  } else {
    for (const ScheduledOp &entry : programOrder(body))
      order.push_back(entry.op);
  }
  order.push_back(body.getTerminator());
  // Values stay alive until their last user here has run (a value no op of
  // this rank reads is not kept).
  llvm::DenseSet<Operation *> runs(order.begin(), order.end());
  auto usesHere = [&](Value value) {
    return static_cast<unsigned>(
        llvm::count_if(value.getUses(), [&](OpOperand &use) {
          return runs.contains(use.getOwner());
        }));
  };
  llvm::DenseMap<Value, std::shared_ptr<const Tensor>> values;
  llvm::DenseMap<Value, unsigned> pendingUses;
  auto define = [&](Value value, Tensor tensor) {
    unsigned uses = usesHere(value);
    if (uses == 0)
      return;
    pendingUses[value] = uses;
    values[value] = std::make_shared<const Tensor>(std::move(tensor));
  };
  for (auto [arg, tensor] : llvm::zip(body.getArguments(), arguments))
    if (holders.holdsArgument(arg.getArgNumber(), pipelineCoordinate))
      define(arg, std::move(tensor));
  arguments.clear();

  // Bytes of intermediate tensors held, for `stats`.
  llvm::DenseSet<Value> returned(body.getTerminator()->operand_begin(),
                                 body.getTerminator()->operand_end());
  auto intermediate = [&](Value value) {
    return !isa<BlockArgument>(value) && !returned.contains(value);
  };
  int64_t live = 0, peak = 0;

  // A pipelined step's broadcasts over pp start where the program has them
  // and complete where an op first reads them (or at the return): a stage
  // sends and goes on, as a point-to-point runtime posts its sends, rather
  // than wait for the receivers to get there. (Every rank starts them in
  // the same order, and a rank waits for one only after starting every one
  // before the op that reads it: no cycle of waits.)
  struct InFlight {
    Value value;
    std::vector<char> bytes;
    DType dtype;
    Shape shape;
    std::vector<std::unique_ptr<PendingCollective>> handles;
  };
  std::vector<InFlight> inFlight;
  auto complete = [&](Value value) {
    auto it = llvm::find_if(inFlight, [&](const InFlight &pending) {
      return pending.value == value;
    });
    if (it == inFlight.end())
      return;
    for (auto &handle : it->handles)
      handle->wait();
    define(value, Tensor::fromBytes(it->dtype, it->shape, it->bytes.data()));
    inFlight.erase(it);
  };

  for (Operation *opPtr : order) {
    Operation &op = *opPtr;
    SmallVector<std::shared_ptr<const Tensor>> held;
    SmallVector<const Tensor *> operands;
    int64_t freed = 0;
    int64_t absent = 0;
    for (Value operand : op.getOperands()) {
      complete(operand);
      held.push_back(values.lookup(operand));
      operands.push_back(held.back().get());
      if (!held.back()) {
        ++absent;
        continue;
      }
      if (--pendingUses[operand] == 0) {
        values.erase(operand);
        if (intermediate(operand))
          freed += held.back()->byteSize();
      }
    }
    if (absent > 0 && isa<CollectiveBroadcastOp>(op)) {
      held[0] = std::make_shared<const Tensor>(makeTensor(op.getOperand(0)));
      operands[0] = held[0].get();
    }
    if (isa<func::ReturnOp>(op)) {
      for (InFlight &pending : inFlight)
        for (auto &handle : pending.handles)
          handle->wait();
      // (Results held by other pp ranks: empty here.)
      SmallVector<Tensor> results;
      for (auto [index, operand] : llvm::enumerate(operands)) {
        if (!operand && holders.holdsResult(index, pipelineCoordinate))
          return op.emitError("pipeline: result ")
                 << index << " of the step is not on this rank";
        results.push_back(operand ? *operand : Tensor());
      }
      return results;
    }
    auto broadcast = dyn_cast<CollectiveBroadcastOp>(op);
    if (broadcast && !pipelineAxis.empty() && broadcast.getAxes().size() == 1 &&
        cast<StringAttr>(broadcast.getAxes()[0]).getValue() == pipelineAxis) {
      const Tensor &sent = *operands[0];
      InFlight pending{broadcast.getResult(),
                       sent.toBytes(),
                       sent.dtype(),
                       sent.shape(),
                       {}};
      int64_t root = broadcast.getRoot(), bytes = pending.bytes.size();
      if (auto receivers =
              broadcast->getAttrOfType<DenseI64ArrayAttr>(kReceiversAttrName)) {
        // Point to point, from the root to each receiver.
        pending.handles = communicator->transferStart(
            pending.bytes.data(), bytes, {pipelineAxis}, root,
            std::vector<int64_t>(receivers.asArrayRef().begin(),
                                 receivers.asArrayRef().end()));
      } else {
        pending.handles.push_back(communicator->broadcastStart(
            pending.bytes.data(), bytes, {pipelineAxis}, root));
      }
      // Its buffer is held from here, as the plan counts it.
      int64_t made = intermediate(broadcast.getResult()) ? sent.byteSize() : 0;
      peak = std::max(peak, live + made);
      live += (usesHere(broadcast.getResult()) > 0 ? made : 0) - freed;
      if (stats)
        stats->peakIntermediateBytes = peak;
      inFlight.push_back(std::move(pending));
      continue;
    }
    SmallVector<Tensor> results;
    double started = stats && stats->recordFragments ? now() : 0;
    if (failed(evaluateOp(&op, operands, results)))
      return failure();
    if (stats && stats->recordFragments)
      recordFragment(op, started, now(), stats->fragments);
    if (observe)
      observe(&op, results);
    int64_t made = 0, kept = 0;
    for (auto [value, tensor] : llvm::zip(op.getResults(), results)) {
      if (!intermediate(value))
        continue;
      made += tensor.byteSize();
      if (usesHere(value) > 0)
        kept += tensor.byteSize();
    }
    peak = std::max(peak, live + made);
    live += kept - freed;
    if (stats)
      stats->peakIntermediateBytes = peak;
    for (auto [value, tensor] : llvm::zip(op.getResults(), results))
      define(value, std::move(tensor));
    // (Engines without asynchronous progress move data inside such calls.)
    for (InFlight &pending : inFlight)
      for (auto &handle : pending.handles)
        handle->test();
  }
  return func.emitError("function body has no return");
}

FailureOr<SmallVector<Tensor>>
mlir::dtc::bindArguments(func::FuncOp func,
                         const std::map<std::string, Tensor> &provided) {
  SmallVector<Tensor> arguments;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    std::string name = getArgumentName(func, i);
    auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
    std::optional<DType> dtype =
        type ? dtypeOf(type.getElementType()) : std::nullopt;
    if (!dtype || !type.hasStaticShape())
      return func.emitError("argument '")
             << name << "' has type " << func.getArgument(i).getType()
             << "; the reference executor takes statically shaped tensors of "
                "dtc element types";
    auto it = provided.find(name);
    Tensor tensor;
    if (it != provided.end()) {
      tensor = it->second;
    } else if (auto value =
                   func.getArgAttrOfType<ElementsAttr>(i, kValueAttrName)) {
      FailureOr<Tensor> decoded = tensorFromAttr(value);
      if (failed(decoded))
        return func.emitError("cannot decode the value of parameter '")
               << name << "'";
      tensor = std::move(*decoded);
    } else {
      return func.emitError("no tensor given for input '") << name << "'";
    }
    // .npy has no bf16, and a parameter kept in bf16 has an f32 value: f32
    // feeds a bf16 argument, rounded.
    if (*dtype == DType::BF16 && tensor.dtype() == DType::F32) {
      Tensor rounded(DType::BF16, tensor.shape());
      rounded.floats() = tensor.floats();
      rounded.roundToElementType();
      tensor = std::move(rounded);
    }
    if (tensor.shape() != Shape(type.getShape()) || tensor.dtype() != *dtype)
      return func.emitError("input '")
             << name << "' has type "
             << describe(tensor.shape(), tensor.dtype())
             << " but the function expects " << type;
    arguments.push_back(std::move(tensor));
  }
  return arguments;
}
