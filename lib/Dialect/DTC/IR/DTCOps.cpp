//===- DTCOps.cpp - dtc op type inference, verifiers, folders -------------===//
//
// Result types are inferred wherever the operands and attributes determine
// them, so the generic verifier rejects any disagreeing result type; the
// checks here are the invariants type inference alone cannot state.
//
//===----------------------------------------------------------------------===//

#include "dtc/Dialect/DTC/IR/DTCOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::dtc;

#include "dtc/Dialect/DTC/IR/DTCInterfaces.cpp.inc"
#include "dtc/Dialect/DTC/IR/DTCOpsEnums.cpp.inc"

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

int64_t mlir::dtc::tensorByteSize(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return tensor.getNumElements() * ((tensor.getElementTypeBitWidth() + 7) / 8);
}

SmallVector<Value>
mlir::dtc::allReducePacked(OpBuilder &b, Location loc, ValueRange values,
                           FlatSymbolRefAttr mesh, ArrayAttr axes,
                           CollectiveReductionAttr kind, StringAttr reason) {
  SmallVector<Value> flat;
  for (Value value : values) {
    auto type = cast<RankedTensorType>(value.getType());
    flat.push_back(ReshapeOp::create(
        b, loc,
        RankedTensorType::get({type.getNumElements()}, type.getElementType()),
        value));
  }
  Value all = flat.size() == 1 ? flat[0]
                               : ConcatOp::create(b, loc, flat, 0).getResult();
  Value sums =
      AllReduceOp::create(b, loc, all.getType(), all, mesh, axes, kind, reason);
  SmallVector<Value> results;
  int64_t offset = 0;
  for (Value value : values) {
    int64_t size = cast<RankedTensorType>(value.getType()).getNumElements();
    Value part = SliceOp::create(b, loc, sums, {offset}, {size}, {1});
    results.push_back(ReshapeOp::create(b, loc, value.getType(), part));
    offset += size;
  }
  return results;
}

bool mlir::dtc::isElementwise(Operation *op) {
  return op->getNumResults() == 1 &&
         (op->hasTrait<OpTrait::Elementwise>() ||
          op->hasTrait<OpTrait::dtc::BroadcastingElementwise>());
}

bool mlir::dtc::isFloatZeros(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  auto splat = constant ? dyn_cast<SplatElementsAttr>(constant.getValue())
                        : SplatElementsAttr();
  return splat && isa<FloatType>(splat.getElementType()) &&
         splat.getSplatValue<APFloat>().isZero();
}

FailureOr<SmallVector<int64_t>>
mlir::dtc::broadcastShapes(ArrayRef<ArrayRef<int64_t>> shapes) {
  size_t rank = 0;
  for (ArrayRef<int64_t> shape : shapes)
    rank = std::max(rank, shape.size());
  SmallVector<int64_t> result(rank, 1);
  for (ArrayRef<int64_t> shape : shapes) {
    size_t offset = rank - shape.size();
    for (auto [i, dim] : llvm::enumerate(shape)) {
      int64_t &out = result[offset + i];
      if (dim == out || dim == 1)
        continue;
      if (out != 1)
        return failure();
      out = dim;
    }
  }
  return result;
}

static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

static Type elementTypeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

static LogicalResult inferBroadcastTypes(std::optional<Location> loc,
                                         ValueRange operands, Type elementType,
                                         SmallVectorImpl<Type> &inferred) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value operand : operands)
    shapes.push_back(shapeOf(operand));
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes(shapes);
  if (failed(shape))
    return emitOptionalError(loc, "operand shapes are not broadcastable");
  inferred.push_back(RankedTensorType::get(*shape, elementType));
  return success();
}

/// Checks `dim` against `rank` for ops whose dimension attribute must name an
/// existing dimension.
static LogicalResult checkDim(std::optional<Location> loc, int64_t dim,
                              int64_t rank) {
  if (dim < 0 || dim >= rank)
    return emitOptionalError(loc, "dim ", dim, " is out of range for rank ",
                             rank);
  return success();
}

//===----------------------------------------------------------------------===//
// ConstantOp, IotaOp
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location>,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &inferred) {
  inferred.push_back(adaptor.getValue().getType());
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult IotaOp::verify() {
  return checkDim(getLoc(), getDim(), getType().getRank());
}

//===----------------------------------------------------------------------===//
// Broadcasting elementwise ops
//===----------------------------------------------------------------------===//

LogicalResult CompareOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  return inferBroadcastTypes(loc, {adaptor.getLhs(), adaptor.getRhs()},
                             IntegerType::get(context, 1), inferred);
}

LogicalResult SelectOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  return inferBroadcastTypes(loc, adaptor.getOperands(),
                             elementTypeOf(adaptor.getOnTrue()), inferred);
}

LogicalResult DropoutOp::verify() {
  double ratio = getRatio().convertToDouble();
  if (!(ratio >= 0 && ratio < 1))
    return emitOpError("ratio must be in [0, 1)");
  if (getStep().getType().getRank() != 0)
    return emitOpError("step must be a scalar");
  if (!getOffset() && !getGlobalShape())
    return success();
  auto type = getInput().getType();
  if (!getOffset() || !getGlobalShape())
    return emitOpError("offset and global_shape go together");
  if (getOffset().getType().getShape() != ArrayRef<int64_t>{type.getRank()})
    return emitOpError("offset must hold one index per dimension of the "
                       "input, ")
           << type.getRank();
  ArrayRef<int64_t> whole = *getGlobalShape();
  if (static_cast<int64_t>(whole.size()) != type.getRank())
    return emitOpError("global_shape must have the input's rank");
  for (auto [part, all] : llvm::zip(type.getShape(), whole))
    if (part > all)
      return emitOpError("the input ")
             << type << " is larger than its global shape";
  return success();
}

LogicalResult SelectOp::verify() {
  if (elementTypeOf(getOnTrue()) != elementTypeOf(getOnFalse()))
    return emitOpError("on_true and on_false must have the same element type");
  return success();
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // Back from a wider float type to the one it came from: the widening
  // lost nothing (bf16 -> f32 -> bf16 is the bf16 value).
  if (auto wider = getInput().getDefiningOp<CastOp>()) {
    Value original = wider.getInput();
    auto from = dyn_cast<FloatType>(getElementTypeOrSelf(original.getType()));
    auto mid = dyn_cast<FloatType>(getElementTypeOrSelf(wider.getType()));
    // (f32 and f64 hold every value of the narrower float types.)
    if (original.getType() == getType() && from && mid &&
        (mid.isF32() || mid.isF64()) && mid.getWidth() > from.getWidth())
      return original;
  }
  return {};
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> lhs = shapeOf(adaptor.getLhs());
  ArrayRef<int64_t> rhs = shapeOf(adaptor.getRhs());
  if (lhs.size() < 2 || rhs.size() < 2)
    return emitOptionalError(loc, "operands must have rank >= 2");
  int64_t m = lhs[lhs.size() - 2], kl = lhs.back();
  if (adaptor.getTransposeLhs())
    std::swap(m, kl);
  int64_t kr = rhs[rhs.size() - 2], n = rhs.back();
  if (adaptor.getTransposeRhs())
    std::swap(kr, n);
  if (kl != kr)
    return emitOptionalError(loc, "contracting dimensions differ (", kl, " vs ",
                             kr, ")");
  FailureOr<SmallVector<int64_t>> batch =
      broadcastShapes({lhs.drop_back(2), rhs.drop_back(2)});
  if (failed(batch))
    return emitOptionalError(loc, "batch dimensions are not broadcastable");
  batch->append({m, n});
  inferred.push_back(
      RankedTensorType::get(*batch, elementTypeOf(adaptor.getLhs())));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions and normalizations
//===----------------------------------------------------------------------===//

static LogicalResult inferReduceTypes(std::optional<Location> loc, Value input,
                                      ArrayRef<int64_t> dims, bool keepDims,
                                      SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> shape = shapeOf(input);
  for (auto [i, dim] : llvm::enumerate(dims)) {
    if (failed(checkDim(loc, dim, shape.size())))
      return failure();
    if (i > 0 && dims[i - 1] >= dim)
      return emitOptionalError(loc, "dims must be strictly ascending");
  }
  SmallVector<int64_t> result;
  for (auto [i, size] : llvm::enumerate(shape)) {
    if (!llvm::is_contained(dims, static_cast<int64_t>(i)))
      result.push_back(size);
    else if (keepDims)
      result.push_back(1);
  }
  inferred.push_back(RankedTensorType::get(result, elementTypeOf(input)));
  return success();
}

LogicalResult ArgMaxOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  SmallVector<Type> reduced;
  if (failed(inferReduceTypes(loc, adaptor.getInput(),
                              {static_cast<int64_t>(adaptor.getDim())},
                              adaptor.getKeepDims(), reduced)))
    return failure();
  inferred.push_back(
      cast<RankedTensorType>(reduced[0]).clone(IntegerType::get(context, 64)));
  return success();
}

LogicalResult CumSumOp::verify() {
  return checkDim(getLoc(), getDim(), getType().getRank());
}

LogicalResult SoftmaxOp::verify() {
  return checkDim(getLoc(), getDim(), getType().getRank());
}

LogicalResult LogSoftmaxOp::verify() {
  return checkDim(getLoc(), getDim(), getType().getRank());
}

/// Checks that `scale` (and `bias`) have the normalized shape of a norm over
/// `[dim, rank)` of `input`.
static LogicalResult checkNormOperands(std::optional<Location> loc, Value input,
                                       Value scale, Value bias, int64_t dim) {
  ArrayRef<int64_t> shape = shapeOf(input);
  if (failed(checkDim(loc, dim, shape.size())))
    return failure();
  for (Value operand : {scale, bias}) {
    if (operand && shapeOf(operand) != shape.drop_front(dim))
      return emitOptionalError(
          loc, "scale and bias must have the normalized shape input.shape[",
          dim, ":]");
    if (operand && elementTypeOf(operand) != elementTypeOf(input))
      return emitOptionalError(
          loc, "scale and bias must have the input's element type");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

/// An attention's result type, [batch, heads, queries, dv], into
/// `inferred`, after checking the ranks of q, k and v.
static LogicalResult inferAttentionResult(std::optional<Location> loc,
                                          Value qValue, Value k, Value vValue,
                                          SmallVectorImpl<Type> &inferred) {
  auto q = cast<RankedTensorType>(qValue.getType());
  auto v = cast<RankedTensorType>(vValue.getType());
  if (q.getRank() != 4 || v.getRank() != 4)
    return emitOptionalError(loc, "q and v must be [batch, heads, tokens, d]");
  if (cast<RankedTensorType>(k.getType()).getRank() != 4)
    return emitOptionalError(loc, "k must be [batch, kv_heads, keys, d]");
  inferred.push_back(q.clone(
      {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2), v.getDimSize(3)}));
  return success();
}

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  if (failed(inferAttentionResult(loc, adaptor.getQ(), adaptor.getK(),
                                  adaptor.getV(), inferred)))
    return failure();
  auto q = cast<RankedTensorType>(adaptor.getQ().getType());
  auto k = cast<RankedTensorType>(adaptor.getK().getType());
  inferred.push_back(q.clone(
      {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2), k.getDimSize(2)}));
  return success();
}

/// What dtc.attention and its gradient check alike: q, k, v, the mask and
/// the dropout and softcap attributes.
template <typename OpTy> static LogicalResult verifyAttention(OpTy op) {
  RankedTensorType q = op.getQ().getType(), k = op.getK().getType(),
                   v = op.getV().getType();
  if (q.getElementType() != k.getElementType() ||
      q.getElementType() != v.getElementType())
    return op.emitOpError("q, k and v must have one element type");
  if (k.getDimSize(0) != q.getDimSize(0) || v.getDimSize(0) != q.getDimSize(0))
    return op.emitOpError("q, k and v must have the same batch");
  if (k.getDimSize(1) != v.getDimSize(1) ||
      q.getDimSize(1) % k.getDimSize(1) != 0)
    return op.emitOpError("k and v must have the same heads, which divide "
                          "q's ")
           << q.getDimSize(1);
  if (k.getDimSize(2) != v.getDimSize(2))
    return op.emitOpError("k and v must have the same keys");
  if (k.getDimSize(3) != q.getDimSize(3))
    return op.emitOpError("q and k must have the same d");
  if (Value mask = op.getMask()) {
    SmallVector<int64_t> scores{q.getDimSize(0), q.getDimSize(1),
                                q.getDimSize(2), k.getDimSize(2)};
    ArrayRef<int64_t> shape = cast<RankedTensorType>(mask.getType()).getShape();
    FailureOr<SmallVector<int64_t>> both = broadcastShapes({shape, scores});
    if (failed(both) || ArrayRef<int64_t>(*both) != ArrayRef<int64_t>(scores))
      return op.emitOpError("the mask must broadcast to the scores ")
             << RankedTensorType::get(scores, q.getElementType());
  }
  bool dropout = op.getDropoutRatio().has_value();
  if (dropout != static_cast<bool>(op.getStep()) ||
      dropout != op.getSeed().has_value() ||
      dropout != op.getStream().has_value())
    return op.emitOpError("dropout needs dropout_ratio, step, seed and stream");
  if (dropout) {
    double ratio = op.getDropoutRatio()->convertToDouble();
    if (!(ratio >= 0 && ratio < 1))
      return op.emitOpError("dropout_ratio must be in [0, 1)");
    if (op.getStep().getType().getRank() != 0)
      return op.emitOpError("step must be a scalar");
  }
  if (std::optional<APFloat> softcap = op.getSoftcap();
      softcap && !(softcap->convertToDouble() > 0))
    return op.emitOpError("softcap must be positive");
  if (static_cast<bool>(op.getOffset()) != op.getGlobalShape().has_value())
    return op.emitOpError("offset and global_shape go together");
  if (op.getOffset() &&
      (!dropout || op.getGlobalShape()->size() != 4 ||
       op.getOffset().getType().getShape() != ArrayRef<int64_t>{4}))
    return op.emitOpError("offset and global_shape place the dropped "
                          "probabilities, [batch, heads, queries, keys], in a "
                          "larger tensor");
  return success();
}

LogicalResult AttentionOp::verify() { return verifyAttention(*this); }

LogicalResult
AttentionGradOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                  Adaptor adaptor,
                                  SmallVectorImpl<Type> &inferred) {
  inferred.append({adaptor.getQ().getType(), adaptor.getK().getType(),
                   adaptor.getV().getType()});
  return success();
}

LogicalResult AttentionGradOp::verify() {
  if (failed(verifyAttention(*this)))
    return failure();
  RankedTensorType q = getQ().getType(), k = getK().getType(),
                   v = getV().getType();
  auto expected = [&](int64_t last) {
    return q.clone({q.getDimSize(0), q.getDimSize(1), q.getDimSize(2), last});
  };
  if (getProbs().getType() != expected(k.getDimSize(2)))
    return emitOpError("probs must be ") << expected(k.getDimSize(2));
  if (getResultGrad().getType() != expected(v.getDimSize(3)))
    return emitOpError("result_grad must be ") << expected(v.getDimSize(3));
  return success();
}

LogicalResult
FusedAttentionOp::inferReturnTypes(MLIRContext *context,
                                   std::optional<Location> loc, Adaptor adaptor,
                                   SmallVectorImpl<Type> &inferred) {
  if (failed(inferAttentionResult(loc, adaptor.getQ(), adaptor.getK(),
                                  adaptor.getV(), inferred)))
    return failure();
  auto q = cast<RankedTensorType>(adaptor.getQ().getType());
  inferred.push_back(RankedTensorType::get(q.getShape().drop_back(),
                                           Float32Type::get(context)));
  return success();
}

LogicalResult FusedAttentionOp::verify() { return verifyAttention(*this); }

LogicalResult
FusedAttentionGradOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  inferred.append({adaptor.getQ().getType(), adaptor.getK().getType(),
                   adaptor.getV().getType()});
  return success();
}

LogicalResult FusedAttentionGradOp::verify() {
  if (failed(verifyAttention(*this)))
    return failure();
  RankedTensorType q = getQ().getType(), v = getV().getType();
  auto expected = q.clone(
      {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2), v.getDimSize(3)});
  if (getResult().getType() != expected ||
      getResultGrad().getType() != expected)
    return emitOpError("result and result_grad must be ") << expected;
  if (getLse().getType().getShape() != q.getShape().drop_back())
    return emitOpError("lse must be [batch, heads, queries]");
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  Value input = adaptor.getInput();
  int64_t dim = adaptor.getDim();
  if (failed(checkNormOperands(loc, input, adaptor.getScale(),
                               adaptor.getBias(), dim)))
    return failure();
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> statShape(type.getShape().take_front(dim));
  statShape.resize(type.getRank(), 1);
  auto statType = RankedTensorType::get(statShape, type.getElementType());
  inferred.append({type, statType, statType});
  return success();
}

LogicalResult RMSNormOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  if (failed(checkNormOperands(loc, adaptor.getInput(), adaptor.getScale(),
                               Value(), adaptor.getDim())))
    return failure();
  inferred.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult RotaryOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> shape = shapeOf(adaptor.getInput());
  int64_t rotary = adaptor.getRotaryDim();
  if (shape.empty() || rotary <= 0 || rotary % 2 || rotary > shape.back())
    return emitOptionalError(loc, "rotary_dim ", rotary,
                             " must be even, positive and at most the last "
                             "dimension of the input");
  // The shape of the angles: one per pair.
  SmallVector<int64_t> pairs(shape);
  pairs.back() = rotary / 2;
  for (Value angles : {adaptor.getCos(), adaptor.getSin()}) {
    ArrayRef<int64_t> given = shapeOf(angles);
    bool fits = given.size() <= pairs.size() && !given.empty() &&
                given.back() == pairs.back();
    for (size_t i = 1; fits && i < given.size(); ++i) {
      int64_t dim = given[given.size() - 1 - i],
              want = pairs[pairs.size() - 1 - i];
      fits = dim == want || dim == 1;
    }
    if (!fits)
      return emitOptionalError(
          loc, "cos and sin must broadcast to input.shape[:-1] + [", rotary / 2,
          "] (one angle per pair)");
    if (elementTypeOf(angles) != elementTypeOf(adaptor.getInput()))
      return emitOptionalError(
          loc, "cos and sin must have the input's element type");
  }
  inferred.push_back(adaptor.getInput().getType());
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> shape = shapeOf(adaptor.getInput());
  int64_t dim = adaptor.getDim();
  if (failed(checkDim(loc, dim, shape.size())))
    return failure();
  SmallVector<int64_t> result(shape.take_front(dim));
  llvm::append_range(result, shapeOf(adaptor.getIndices()));
  llvm::append_range(result, shape.drop_front(dim + 1));
  inferred.push_back(
      RankedTensorType::get(result, elementTypeOf(adaptor.getInput())));
  return success();
}

/// Checks a scatter's updates: the type gather would read at the indices.
template <typename ScatterOp> static LogicalResult verifyScatter(ScatterOp op) {
  ArrayRef<int64_t> shape = op.getInput().getType().getShape();
  int64_t dim = op.getDim();
  if (failed(checkDim(op.getLoc(), dim, shape.size())))
    return failure();
  SmallVector<int64_t> expected(shape.take_front(dim));
  llvm::append_range(expected, op.getIndices().getType().getShape());
  llvm::append_range(expected, shape.drop_front(dim + 1));
  Type element = op.getType().getElementType();
  if (op.getUpdates().getType().getShape() != ArrayRef<int64_t>(expected) ||
      op.getUpdates().getType().getElementType() != element)
    return op.emitOpError("updates must have the type gather would produce: ")
           << RankedTensorType::get(expected, element);
  return success();
}

LogicalResult ScatterAddOp::verify() { return verifyScatter(*this); }
LogicalResult ScatterReduceOp::verify() { return verifyScatter(*this); }

/// Checks indices for gather_elements/scatter_elements_add: same rank as
/// the input, no larger in any dimension but `dim`.
static LogicalResult checkElementIndices(Operation *op, RankedTensorType input,
                                         RankedTensorType indices,
                                         int64_t dim) {
  if (failed(checkDim(op->getLoc(), dim, input.getRank())))
    return failure();
  if (indices.getRank() != input.getRank())
    return op->emitOpError("indices must have the input's rank");
  for (int64_t i = 0, e = input.getRank(); i < e; ++i)
    if (i != dim && indices.getDimSize(i) > input.getDimSize(i))
      return op->emitOpError("indices dimension ")
             << i << " is larger than the input's";
  return success();
}

LogicalResult GatherElementsOp::verify() {
  if (getType().getShape() != getIndices().getType().getShape() ||
      getType().getElementType() != getInput().getType().getElementType())
    return emitOpError("result must have the shape of the indices and the "
                       "element type of the input");
  return checkElementIndices(*this, getInput().getType(),
                             getIndices().getType(), getDim());
}

LogicalResult ScatterElementsAddOp::verify() {
  if (getUpdates().getType().getShape() != getIndices().getType().getShape() ||
      getUpdates().getType().getElementType() != getType().getElementType())
    return emitOpError("updates must have the shape of the indices and the "
                       "element type of the input");
  return checkElementIndices(*this, getInput().getType(),
                             getIndices().getType(), getDim());
}

LogicalResult TopKOp::inferReturnTypes(MLIRContext *context,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  auto type = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t dim = adaptor.getDim(), k = adaptor.getK();
  if (failed(checkDim(loc, dim, type.getRank())))
    return failure();
  if (k < 0 || k > type.getDimSize(dim))
    return emitOptionalError(loc, "k = ", k, " is not in [0, ",
                             type.getDimSize(dim), "]");
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = k;
  inferred.append(
      {type.clone(shape),
       RankedTensorType::get(shape, IntegerType::get(context, 64))});
  return success();
}

LogicalResult ReshapeOp::verify() {
  if (getInput().getType().getNumElements() != getType().getNumElements())
    return emitOpError("input has ") << getInput().getType().getNumElements()
                                     << " elements but the result type has "
                                     << getType().getNumElements();
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto dense = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput()))
    return dense.reshape(getType());
  return {};
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> shape = shapeOf(adaptor.getInput());
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  if (perm.size() != shape.size())
    return emitOptionalError(loc, "permutation has ", perm.size(),
                             " entries for an input of rank ", shape.size());
  SmallVector<bool> seen(shape.size(), false);
  SmallVector<int64_t> result;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(shape.size()) || seen[p])
      return emitOptionalError(loc, "permutation is not a permutation of [0, ",
                               shape.size(), ")");
    seen[p] = true;
    result.push_back(shape[p]);
  }
  inferred.push_back(
      RankedTensorType::get(result, elementTypeOf(adaptor.getInput())));
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  for (auto [i, p] : llvm::enumerate(getPermutation()))
    if (static_cast<int64_t>(i) != p)
      return {};
  return getInput();
}

LogicalResult BroadcastOp::verify() {
  ArrayRef<int64_t> in = getInput().getType().getShape();
  ArrayRef<int64_t> out = getType().getShape();
  if (in.size() > out.size())
    return emitOpError("result rank must be at least the input rank");
  ArrayRef<int64_t> aligned = out.take_back(in.size());
  for (auto [i, dim] : llvm::enumerate(in))
    if (dim != 1 && dim != aligned[i])
      return emitOpError("input dimension ")
             << i << " (" << dim << ") cannot broadcast to " << aligned[i];
  return success();
}

OpFoldResult BroadcastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto splat = dyn_cast_if_present<SplatElementsAttr>(adaptor.getInput()))
    return SplatElementsAttr::get(getType(), splat.getSplatValue<Attribute>());
  return {};
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return emitOptionalError(loc, "needs at least one operand");
  SmallVector<int64_t> result(shapeOf(inputs.front()));
  int64_t dim = adaptor.getDim();
  if (failed(checkDim(loc, dim, result.size())))
    return failure();
  for (Value input : inputs.drop_front()) {
    ArrayRef<int64_t> shape = shapeOf(input);
    if (shape.size() != result.size())
      return emitOptionalError(loc, "operands must have the same rank");
    for (auto [i, size] : llvm::enumerate(shape))
      if (static_cast<int64_t>(i) != dim && size != result[i])
        return emitOptionalError(loc, "operands differ in dimension ", i,
                                 ", which is not the concatenated one");
    result[dim] += shape[dim];
  }
  inferred.push_back(RankedTensorType::get(result, elementTypeOf(inputs[0])));
  return success();
}

/// Checks a strided window of `shape` (as `dtc.slice` reads it and
/// `dtc.update_slice` writes it).
static LogicalResult checkWindow(std::optional<Location> loc,
                                 ArrayRef<int64_t> shape,
                                 ArrayRef<int64_t> starts,
                                 ArrayRef<int64_t> sizes,
                                 ArrayRef<int64_t> strides) {
  if (starts.size() != shape.size() || sizes.size() != shape.size() ||
      strides.size() != shape.size())
    return emitOptionalError(loc, "starts, sizes and strides need one entry "
                                  "per input dimension");
  for (auto [i, dim] : llvm::enumerate(shape)) {
    if (strides[i] == 0)
      return emitOptionalError(loc, "stride of dimension ", i, " is zero");
    if (sizes[i] < 0)
      return emitOptionalError(loc, "size of dimension ", i, " is negative");
    int64_t last = starts[i] + (sizes[i] - 1) * strides[i];
    if (sizes[i] > 0 &&
        (starts[i] < 0 || starts[i] >= dim || last < 0 || last >= dim))
      return emitOptionalError(loc, "dimension ", i,
                               " reads outside the input");
  }
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  if (failed(checkWindow(loc, shapeOf(adaptor.getInput()), adaptor.getStarts(),
                         adaptor.getSizes(), adaptor.getStrides())))
    return failure();
  inferred.push_back(RankedTensorType::get(adaptor.getSizes(),
                                           elementTypeOf(adaptor.getInput())));
  return success();
}

LogicalResult UpdateSliceOp::verify() {
  if (getUpdate().getType().getElementType() != getType().getElementType())
    return emitOpError("update and input must have the same element type");
  if (getUpdate().getType().getRank() != getType().getRank())
    return emitOpError("update and input must have the same rank");
  return checkWindow(getLoc(), getType().getShape(), getStarts(),
                     getUpdate().getType().getShape(), getStrides());
}

LogicalResult SplitOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  auto type = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t dim = adaptor.getDim();
  if (failed(checkDim(loc, dim, type.getRank())))
    return failure();
  int64_t total = 0;
  for (int64_t size : adaptor.getSizes()) {
    if (size < 0)
      return emitOptionalError(loc, "sizes must be non-negative");
    total += size;
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] = size;
    inferred.push_back(RankedTensorType::get(shape, type.getElementType()));
  }
  if (total != type.getDimSize(dim))
    return emitOptionalError(loc, "sizes add up to ", total, " but dimension ",
                             dim, " has ", type.getDimSize(dim));
  return success();
}

#define GET_OP_CLASSES
#include "dtc/Dialect/DTC/IR/DTCOps.cpp.inc"

//===----------------------------------------------------------------------===//
// FusionOp
//===----------------------------------------------------------------------===//

LogicalResult FusionOp::verify() {
  Block &body = getBody().front();
  if (body.getArgumentTypes() != getInputs().getTypes())
    return emitOpError("body arguments must have the inputs' types");
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("body must end in dtc.yield");
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("dtc.yield must give the results' types");
  return success();
}
