//===- CollectiveKernels.cpp - reference kernels: collectives -------------===//
//
// The collectives run on the communicator of the current interpretation
// (interpretFunction's `communicator`); without one they fail, which also
// keeps constant folding from evaluating them at compile time.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "dtc/Interpreter/Interpreter.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Runtime/Communicator.h"

using namespace mlir;
using namespace mlir::dtc;

namespace {

std::vector<std::string> axesOf(ArrayAttr axes) {
  std::vector<std::string> names;
  for (Attribute axis : axes)
    names.push_back(cast<StringAttr>(axis).str());
  return names;
}

/// The current communicator, or an error on `op`.
FailureOr<Communicator *> communicatorFor(Operation *op) {
  if (Communicator *comm = currentCommunicator()) {
    StringAttr reason = op->getAttrOfType<StringAttr>("reason");
    comm->setReason(reason ? std::string_view(reason.getValue().data(),
                                              reason.getValue().size())
                           : std::string_view());
    return comm;
  }
  return op->emitError("a collective needs ranks to talk to: run the "
                       "module with dtc-run (under mpirun for several ranks)");
}

ReduceKind reduceKind(CollectiveReduction kind) {
  switch (kind) {
  case CollectiveReduction::Sum:
    return ReduceKind::Sum;
  case CollectiveReduction::Max:
    return ReduceKind::Max;
  case CollectiveReduction::Min:
    return ReduceKind::Min;
  }
  return ReduceKind::Sum;
}

} // namespace

void mlir::dtc::addCollectiveKernels(KernelTable &table) {
  table.add<AllReduceOp>([](AllReduceOp op, Operands in,
                            Results &out) -> LogicalResult {
    FailureOr<Communicator *> comm = communicatorFor(op);
    if (failed(comm))
      return failure();
    Tensor result = *in[0];
    (*comm)->allReduce(result, axesOf(op.getAxes()), reduceKind(op.getKind()));
    out.push_back(std::move(result));
    return success();
  });
  table.add<AllGatherOp>(
      [](AllGatherOp op, Operands in, Results &out) -> LogicalResult {
        FailureOr<Communicator *> comm = communicatorFor(op);
        if (failed(comm))
          return failure();
        out.push_back(
            (*comm)->allGather(*in[0], axesOf(op.getAxes()), op.getDim()));
        return success();
      });
  table.add<ReduceScatterOp>(
      [](ReduceScatterOp op, Operands in, Results &out) -> LogicalResult {
        FailureOr<Communicator *> comm = communicatorFor(op);
        if (failed(comm))
          return failure();
        out.push_back(
            (*comm)->reduceScatter(*in[0], axesOf(op.getAxes()), op.getDim()));
        return success();
      });
  table.add<CollectiveBroadcastOp>(
      [](CollectiveBroadcastOp op, Operands in, Results &out) -> LogicalResult {
        FailureOr<Communicator *> comm = communicatorFor(op);
        if (failed(comm))
          return failure();
        Tensor result = *in[0];
        (*comm)->broadcast(result, axesOf(op.getAxes()), op.getRoot());
        out.push_back(std::move(result));
        return success();
      });
  table.add<SendRecvOp>(
      [](SendRecvOp op, Operands in, Results &out) -> LogicalResult {
        FailureOr<Communicator *> comm = communicatorFor(op);
        if (failed(comm))
          return failure();
        const MeshShape &mesh = (*comm)->mesh();
        int64_t axis = mesh.axisIndex(op.getAxis().str());
        int64_t n = mesh.sizes[axis];
        std::vector<int64_t> to = mesh.coordinates((*comm)->rank()), from = to;
        int64_t shift = ((op.getShift() % n) + n) % n;
        to[axis] = (to[axis] + shift) % n;
        from[axis] = (from[axis] + n - shift) % n;
        out.push_back(
            (*comm)->sendRecv(*in[0], mesh.rankAt(to), mesh.rankAt(from)));
        return success();
      });
  table.add<ShardOp>(
      [](ShardOp op, Operands in, Results &out) -> LogicalResult {
        FailureOr<Communicator *> comm = communicatorFor(op);
        if (failed(comm))
          return failure();
        std::vector<std::string> axes = axesOf(op.getAxes());
        out.push_back(chunkOf(*in[0], op.getDim(), (*comm)->groupSize(axes),
                              (*comm)->groupRank(axes), op.getBlocks()));
        return success();
      });
  table.add<AllToAllOp>(
      [](AllToAllOp op, Operands in, Results &out) -> LogicalResult {
        FailureOr<Communicator *> comm = communicatorFor(op);
        if (failed(comm))
          return failure();
        std::optional<uint64_t> rows = op.getRowsDim();
        out.push_back((*comm)->allToAll(*in[0], axesOf(op.getAxes()),
                                        op.getSplitDim(), op.getConcatDim(),
                                        rows ? int64_t(*rows) : -1));
        return success();
      });
}
