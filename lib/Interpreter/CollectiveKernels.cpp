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
  if (Communicator *comm = currentCommunicator())
    return comm;
  return op->emitError("a collective needs ranks to talk to: run the "
                       "module with dtc-run (under mpirun for several ranks)");
}

ReduceKind reduceKind(CollectiveReduction kind) {
  switch (kind) {
  case CollectiveReduction::Sum: return ReduceKind::Sum;
  case CollectiveReduction::Max: return ReduceKind::Max;
  case CollectiveReduction::Min: return ReduceKind::Min;
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
  table.add<AllGatherOp>([](AllGatherOp op, Operands in,
                            Results &out) -> LogicalResult {
    FailureOr<Communicator *> comm = communicatorFor(op);
    if (failed(comm))
      return failure();
    out.push_back((*comm)->allGather(*in[0], axesOf(op.getAxes()), op.getDim()));
    return success();
  });
  table.add<ReduceScatterOp>([](ReduceScatterOp op, Operands in,
                                Results &out) -> LogicalResult {
    FailureOr<Communicator *> comm = communicatorFor(op);
    if (failed(comm))
      return failure();
    out.push_back(
        (*comm)->reduceScatter(*in[0], axesOf(op.getAxes()), op.getDim()));
    return success();
  });
  table.add<ShardOp>([](ShardOp op, Operands in,
                        Results &out) -> LogicalResult {
    FailureOr<Communicator *> comm = communicatorFor(op);
    if (failed(comm))
      return failure();
    std::vector<std::string> axes = axesOf(op.getAxes());
    out.push_back(chunkOf(*in[0], op.getDim(), (*comm)->groupSize(axes),
                          (*comm)->groupRank(axes), op.getBlocks()));
    return success();
  });
  table.add<AllToAllOp>([](AllToAllOp op, Operands in,
                           Results &out) -> LogicalResult {
    FailureOr<Communicator *> comm = communicatorFor(op);
    if (failed(comm))
      return failure();
    out.push_back((*comm)->allToAll(*in[0], axesOf(op.getAxes()),
                                    op.getSplitDim(), op.getConcatDim()));
    return success();
  });
}
