//===- FusionKernel.cpp - reference kernel: fusion groups -----------------===//
//
// A dtc.fusion runs its body op by op on the body's own values, each op
// rounded to its element type as outside a group: fusion changes where
// values live, not what is computed.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"

using namespace mlir;
using namespace mlir::dtc;

void mlir::dtc::addFusionKernels(KernelTable &table) {
  table.add<FusionOp>(
      [](FusionOp op, Operands in, Results &out) -> LogicalResult {
        Block &body = op.getBody().front();
        llvm::DenseMap<Value, Tensor> values;
        for (auto [arg, tensor] : llvm::zip(body.getArguments(), in))
          values[arg] = *tensor;
        for (Operation &inner : body.without_terminator()) {
          SmallVector<const Tensor *> operands;
          for (Value operand : inner.getOperands())
            operands.push_back(&values[operand]);
          SmallVector<Tensor> results;
          if (failed(evaluateOp(&inner, operands, results)))
            return failure();
          for (auto [value, tensor] : llvm::zip(inner.getResults(), results))
            values[value] = std::move(tensor);
        }
        for (Value yielded : body.getTerminator()->getOperands())
          out.push_back(values[yielded]);
        return success();
      });
}
