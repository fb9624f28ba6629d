//===- TestDialect.cpp - the dtc_test dialect -----------------------------===//
//
// What dtc_test.hypot and dtc_test.mirror need beyond their definitions:
// hypot's result type, their vector-Jacobian products and reference
// kernels. Their sharding rules and costs come from the
// BroadcastingElementwise trait (mirror's wrongly, on purpose).
//
//===----------------------------------------------------------------------===//

#include "TestDialect.h"

#include "dtc/Dialect/DTC/IR/DTCOpEmitter.h"
#include "dtc/Interpreter/Interpreter.h"
#include "dtc/Interpreter/TensorAttr.h"
#include "mlir/IR/OpImplementation.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::test;

#include "TestOpsDialect.cpp.inc"

#define GET_OP_CLASSES
#include "TestOps.cpp.inc"

void TestDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "TestOps.cpp.inc"
      >();
}

void mlir::dtc::test::registerTestDialect(DialectRegistry &registry) {
  registry.insert<TestDialect>();
}

LogicalResult
HypotOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                          Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  auto lhs = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = cast<RankedTensorType>(adaptor.getRhs().getType());
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes({lhs.getShape(), rhs.getShape()});
  if (failed(shape))
    return emitOptionalError(loc, "operand shapes are not broadcastable");
  inferred.push_back(lhs.clone(*shape));
  return success();
}

/// d hypot(x, y) = (x dx + y dy) / hypot(x, y).
LogicalResult HypotOp::buildVJP(OpBuilder &builder, ValueRange resultGrads,
                                SmallVectorImpl<Value> &operandGrads) {
  OpEmitter e(builder, getLoc());
  Value g = e.div(resultGrads[0], getResult());
  operandGrads.push_back(e.sumTo(e.mul(g, getLhs()), getLhs().getType()));
  operandGrads.push_back(e.sumTo(e.mul(g, getRhs()), getRhs().getType()));
  return success();
}

/// The mirror of the gradient.
LogicalResult MirrorOp::buildVJP(OpBuilder &builder, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  operandGrads.push_back(MirrorOp::create(builder, getLoc(), resultGrads[0]));
  return success();
}

void mlir::dtc::test::registerTestKernels() {
  registerReferenceKernel(
      TypeID::get<MirrorOp>(),
      [](Operation *op, ArrayRef<const Tensor *> in,
         SmallVectorImpl<Tensor> &out) -> LogicalResult {
        Tensor result = *in[0];
        int64_t n = result.shape().back();
        for (int64_t i = 0, e = result.numElements(); i < e; ++i)
          result.floats()[i] = in[0]->floats()[i - i % n + (n - 1 - i % n)];
        out.push_back(std::move(result));
        return success();
      });
  registerReferenceKernel(
      TypeID::get<HypotOp>(),
      [](Operation *op, ArrayRef<const Tensor *> in,
         SmallVectorImpl<Tensor> &out) -> LogicalResult {
        auto type = cast<RankedTensorType>(op->getResult(0).getType());
        Tensor result(*dtypeOf(type.getElementType()), Shape(type.getShape()));
        std::vector<int64_t> lhs =
            broadcastOffsets(in[0]->shape(), result.shape());
        std::vector<int64_t> rhs =
            broadcastOffsets(in[1]->shape(), result.shape());
        for (int64_t i = 0, e = result.numElements(); i < e; ++i)
          result.floats()[i] =
              std::hypot(in[0]->floats()[lhs[i]], in[1]->floats()[rhs[i]]);
        out.push_back(std::move(result));
        return success();
      });
}
