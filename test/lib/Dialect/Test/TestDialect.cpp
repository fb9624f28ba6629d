//===- TestDialect.cpp - the dtc_test dialect -----------------------------===//
//
// What the test ops need beyond their definitions: hypot's result type,
// the vector-Jacobian products and reference kernels, and the sharding
// rules of take (dtc.slice's) and place (wrong, on purpose). hypot's and
// mirror's rules and costs come from the BroadcastingElementwise trait
// (mirror's wrongly, on purpose).
//
//===----------------------------------------------------------------------===//

#include "TestDialect.h"

#include "dtc/Dialect/DTC/IR/DTCOpEmitter.h"
#include "dtc/Dialect/DTC/IR/ShardingRule.h"
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

/// A dimension taken whole is parallel; one cut is whole.
OpShardingRule TakeOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                       ArrayRef<RankedTensorType> results) {
  OpShardingRule rule(operands, results);
  for (int64_t d = 0; d < operands[0].getRank(); ++d) {
    if (operands[0].getDimSize(d) == results[0].getDimSize(d)) {
      rule.addShared(operands[0].getDimSize(d), FactorKind::Parallel, {{0, d}},
                     {{0, d}});
      continue;
    }
    rule.addShared(operands[0].getDimSize(d), FactorKind::NeedReplication,
                   {{0, d}}, {});
    rule.addShared(results[0].getDimSize(d), FactorKind::NeedReplication, {},
                   {{0, d}});
  }
  return rule;
}

/// The gradient placed into zeros of the input's shape.
LogicalResult TakeOp::buildVJP(OpBuilder &builder, ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) {
  auto type = cast<RankedTensorType>(getInput().getType());
  Value zeros = dtc::ConstantOp::create(
      builder, getLoc(),
      DenseElementsAttr::get(type, builder.getZeroAttr(type.getElementType())));
  operandGrads.push_back(PlaceOp::create(builder, getLoc(), type,
                                         resultGrads[0], zeros, getStarts()));
  return success();
}

/// Wrong on purpose: every dimension parallel (dtc.update_slice's rule
/// keeps a dimension the update does not fill whole).
OpShardingRule PlaceOp::getShardingRule(ArrayRef<RankedTensorType> operands,
                                        ArrayRef<RankedTensorType> results) {
  OpShardingRule rule(operands, results);
  for (int64_t d = 0; d < operands[1].getRank(); ++d)
    rule.addShared(operands[1].getDimSize(d), FactorKind::Parallel,
                   {{0, d}, {1, d}}, {{0, d}});
  return rule;
}

/// Calls `f(outer, inner)` for each element of a window of shape `shape`:
/// its offset and the offset of the element `starts` away in a tensor of
/// shape `big`. Fails, calling nothing, when the window does not fit.
static LogicalResult forWindow(Operation *op, const Shape &shape,
                               const Shape &big, ArrayRef<int64_t> starts,
                               llvm::function_ref<void(int64_t, int64_t)> f) {
  for (size_t d = 0; d < shape.size(); ++d)
    if (starts[d] < 0 || starts[d] + shape[d] > big[d])
      return op->emitError("the window does not fit along dimension ") << d;
  Shape index(shape.size(), 0);
  Shape strides = stridesOf(big);
  for (int64_t i = 0, e = numElementsOf(shape); i < e; ++i) {
    int64_t offset = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      offset += (index[d] + starts[d]) * strides[d];
    f(i, offset);
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return success();
}

void mlir::dtc::test::registerTestKernels() {
  registerReferenceKernel(
      TypeID::get<TakeOp>(),
      [](Operation *op, ArrayRef<const Tensor *> in,
         SmallVectorImpl<Tensor> &out) -> LogicalResult {
        auto type = cast<RankedTensorType>(op->getResult(0).getType());
        Tensor result(in[0]->dtype(), Shape(type.getShape()));
        if (failed(forWindow(op, result.shape(), in[0]->shape(),
                             cast<TakeOp>(op).getStarts(),
                             [&](int64_t i, int64_t from) {
                               result.floats()[i] = in[0]->floats()[from];
                             })))
          return failure();
        out.push_back(std::move(result));
        return success();
      });
  registerReferenceKernel(
      TypeID::get<PlaceOp>(),
      [](Operation *op, ArrayRef<const Tensor *> in,
         SmallVectorImpl<Tensor> &out) -> LogicalResult {
        Tensor result = *in[1];
        if (failed(forWindow(op, in[0]->shape(), result.shape(),
                             cast<PlaceOp>(op).getStarts(),
                             [&](int64_t i, int64_t to) {
                               result.floats()[to] = in[0]->floats()[i];
                             })))
          return failure();
        out.push_back(std::move(result));
        return success();
      });
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
