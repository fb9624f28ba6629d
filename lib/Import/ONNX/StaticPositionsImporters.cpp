//===- StaticPositionsImporters.cpp - NonZero and ScatterElements ---------===//
//
// NonZero's result has as many positions as its input has nonzero elements,
// known only at run time; dtc's shapes are static. Where the positions serve
// to gather rows and scatter them back (Hugging Face's mixture-of-experts
// loop: per expert, `torch.where` of its routing mask, its tokens gathered,
// its MLP, `index_add_` of the results), the static form takes every
// position of the input and masks the rows of the positions that are not
// nonzero when they are scattered back: each expert's buffer is padded to
// the static bound (all tokens for each of the k choices) and the padding
// contributes exact zeros, to the forward and to every gradient.
//
// The positions are enumerated with the input's largest dimension outermost
// (the tokens, in a router's [k, tokens] mask), so that a split of the
// tokens over ranks keeps each rank's positions together. A NonZero whose
// positions reach no scatter that masks them, or reach a reduction (which
// would count the padding), is an error naming the node.
//
//===----------------------------------------------------------------------===//

#include "NodeImporter.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/IR/Matchers.h"

#include <numeric>

using namespace mlir;
using namespace mlir::dtc;

namespace {

LogicalResult importNonZero(NodeImporter &n) {
  RankedTensorType type = n.inputType(0);
  int64_t rank = type.getRank(), count = type.getNumElements();
  if (rank == 0) {
    n.error() << "a scalar input is not supported";
    return failure();
  }
  SmallVector<int64_t> order(rank);
  std::iota(order.begin(), order.end(), 0);
  llvm::stable_sort(order, [&](int64_t a, int64_t b) {
    return type.getDimSize(a) > type.getDimSize(b);
  });
  // Column j is the j-th position in `order` (the first dimension of it
  // outermost).
  Tensor positions(DType::I64, {rank, count});
  SmallVector<int64_t> index(rank, 0);
  for (int64_t j = 0; j < count; ++j) {
    for (int64_t d = 0; d < rank; ++d)
      positions.ints()[d * count + j] = index[d];
    for (int64_t k = rank - 1; k >= 0; --k) {
      int64_t d = order[k];
      if (++index[d] < type.getDimSize(d))
        break;
      index[d] = 0;
    }
  }
  Value result = n.constant(positions);
  n.model.positions[result] = {n.input(0), order, n.node.name()};
  return n.setResult(result);
}

/// The indices of a scatter along `dim`, one per row, when they are the
/// same across every other dimension (broadcast, as index_add_'s are): a
/// known constant.
std::optional<Tensor> rowIndices(NodeImporter &n, Value indices, int64_t dim) {
  while (auto broadcast = indices.getDefiningOp<BroadcastOp>())
    indices = broadcast.getInput();
  auto type = cast<RankedTensorType>(indices.getType());
  int64_t rank = n.inputType(1).getRank();
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (d + rank - type.getRank() != dim && type.getDimSize(d) != 1)
      return std::nullopt;
  if (dim < rank - type.getRank())
    return std::nullopt;
  return n.knownConstant(indices);
}

/// Whether input `i` is a constant of zeros.
bool isZeros(NodeImporter &n, unsigned i) {
  return matchPattern(n.input(i), m_AnyZeroFloat()) ||
         matchPattern(n.input(i), m_Zero());
}

/// ScatterElements' `mul`, `max` and `min`: a scatter_reduce of the data's
/// elements, flattened, at each update's linear index.
FailureOr<Value> scatterElementsReduce(NodeImporter &n, Value indices,
                                       int64_t axis, ScatterReduction kind) {
  RankedTensorType dataType = n.inputType(0), indexType = n.inputType(1);
  Type i64 = n.builder.getI64Type();
  auto indexShape = indexType.clone(i64);
  Value axisIndex = n.convertElementType(indices, i64), linear;
  int64_t stride = 1;
  for (int64_t d = dataType.getRank() - 1; d >= 0; --d) {
    Value coordinate =
        d == axis ? axisIndex
                  : Value(IotaOp::create(n.builder, n.loc, indexShape, d));
    Value term = stride == 1 ? coordinate
                             : Value(MulOp::create(n.builder, n.loc, coordinate,
                                                   n.scalar(stride, i64)));
    linear =
        linear ? Value(AddOp::create(n.builder, n.loc, linear, term)) : term;
    stride *= dataType.getDimSize(d);
  }
  int64_t count = indexType.getNumElements();
  Value table = n.reshape(n.input(0), {dataType.getNumElements()});
  FailureOr<Operation *> op = n.verified(ScatterReduceOp::create(
      n.builder, n.loc, table.getType(), table, n.reshape(linear, {count}),
      n.reshape(n.input(2), {count}), 0, kind));
  if (failed(op))
    return failure();
  return n.reshape((*op)->getResult(0), dataType.getShape());
}

/// ScatterElements. Where the indices come from NonZero's static form, the
/// updates' rows of positions that are not nonzero are zeroed and added
/// into the data, which must be zeros (the positions are distinct, so
/// writing them is adding them).
LogicalResult importScatterElements(NodeImporter &n) {
  std::string reduction = "none";
  if (const onnx::AttributeProto *attr = n.attribute("reduction"))
    reduction = attr->s();
  std::optional<ScatterReduction> kind = symbolizeScatterReduction(reduction);
  if (reduction != "none" && reduction != "add" && !kind) {
    n.error() << "unsupported reduction '" << reduction
              << "' (none, add, mul, max or min)";
    return failure();
  }
  RankedTensorType dataType = n.inputType(0);
  Type element = dataType.getElementType();
  if (!element.isIntOrFloat() || element.isInteger(1)) {
    n.error() << "data of " << element << " is not supported";
    return failure();
  }
  FailureOr<int64_t> axis =
      n.normalizeAxis(n.intAttr("axis", 0), dataType.getRank());
  if (failed(axis))
    return failure();
  if (n.inputType(1).getShape() != n.inputType(2).getShape()) {
    n.error() << "indices " << n.inputType(1) << " and updates "
              << n.inputType(2) << " differ in shape";
    return failure();
  }
  // Negative indices count from the end.
  Value indices = n.input(1);
  Type indexType = n.inputType(1).getElementType();
  Value negative = CompareOp::create(n.builder, n.loc, ComparisonPredicate::LT,
                                     indices, n.scalar(0, indexType));
  indices = SelectOp::create(
      n.builder, n.loc, negative,
      AddOp::create(n.builder, n.loc, indices,
                    n.scalar(dataType.getDimSize(*axis), indexType))
          .getResult(),
      indices);
  auto scatterAdd = [&](Value into, Value updates) -> FailureOr<Value> {
    FailureOr<Operation *> op = n.verified(ScatterElementsAddOp::create(
        n.builder, n.loc, dataType, into, indices, updates, *axis));
    if (failed(op))
      return failure();
    return (*op)->getResult(0);
  };
  Value updates = n.input(2);
  if (PositionsForm *read = positionsRead(n)) {
    PositionsForm &positions = *read;
    if (kind) {
      n.error() << "its indices come from NonZero node '" << positions.node
                << "' and it combines by '" << reduction
                << "': the static form can only add";
      return failure();
    }
    auto updatesType = n.inputType(2);
    int64_t count =
        cast<RankedTensorType>(positions.mask.getType()).getNumElements();
    if (updatesType.getDimSize(*axis) != count) {
      n.error() << "its indices come from NonZero node '" << positions.node
                << "' but its updates " << updatesType
                << " are not one row per position along axis " << *axis << " ("
                << count << " positions in the static form)";
      return failure();
    }
    if (reduction == "none" && !isZeros(n, 0)) {
      n.error() << "its indices come from NonZero node '" << positions.node
                << "' and it writes into data that is not zeros: the static "
                   "form can only add the rows of real positions";
      return failure();
    }
    // Which positions are real, in the order of the static form.
    Value mask = positions.mask;
    auto maskType = cast<RankedTensorType>(mask.getType());
    if (!llvm::is_sorted(positions.order))
      mask = TransposeOp::create(n.builder, n.loc, mask, positions.order);
    Value real = n.convertElementType(
        CompareOp::create(n.builder, n.loc, ComparisonPredicate::NE, mask,
                          n.scalar(0, maskType.getElementType())),
        element);
    SmallVector<int64_t> rows(updatesType.getRank(), 1);
    rows[*axis] = count;
    updates = MulOp::create(n.builder, n.loc, updates, n.reshape(real, rows));
    positions.scatters.insert(updates.getDefiningOp());
    // Rows put back in order, each the same number of times, are summed
    // without indices (index_add_ of the positions in the static order).
    std::optional<int64_t> repeats;
    if (updatesType.getShape().drop_front(*axis + 1) ==
            dataType.getShape().drop_front(*axis + 1) &&
        updatesType.getShape().take_front(*axis) ==
            dataType.getShape().take_front(*axis))
      if (std::optional<Tensor> index = rowIndices(n, n.input(1), *axis))
        repeats = repeatedRows(*index, dataType.getDimSize(*axis));
    FailureOr<Value> result;
    if (repeats) {
      Value sum = sumRepeatedRows(n, updates, *axis, *repeats);
      result = isZeros(n, 0)
                   ? sum
                   : Value(AddOp::create(n.builder, n.loc, n.input(0), sum));
    } else {
      result = scatterAdd(n.input(0), updates);
    }
    if (failed(result))
      return failure();
    positions.scatters.insert(result->getDefiningOp());
    return n.setResult(result);
  }
  if (reduction == "add")
    return n.setResult(scatterAdd(n.input(0), updates));
  if (kind)
    return n.setResult(scatterElementsReduce(n, indices, *axis, *kind));
  return n.setResult(scatterReplacing(n, n.input(0), updates, scatterAdd));
}

} // namespace

std::optional<int64_t> mlir::dtc::repeatedRows(const Tensor &indices,
                                               int64_t size) {
  int64_t count = indices.numElements();
  if (indices.isFloat() || size < 1 || count % size != 0 || count == 0)
    return std::nullopt;
  int64_t repeats = count / size;
  for (int64_t j = 0; j < count; ++j)
    if (indices.ints()[j] != j / repeats)
      return std::nullopt;
  return repeats;
}

Value mlir::dtc::gatherRepeatedRows(NodeImporter &n, Value table, int64_t dim,
                                    int64_t repeats,
                                    ArrayRef<int64_t> resultShape) {
  auto type = cast<RankedTensorType>(table.getType());
  SmallVector<int64_t> single(type.getShape()), repeated(type.getShape());
  single.insert(single.begin() + dim + 1, 1);
  repeated.insert(repeated.begin() + dim + 1, repeats);
  Value spread = n.reshape(table, single);
  if (repeats > 1)
    spread =
        BroadcastOp::create(n.builder, n.loc, type.clone(repeated), spread);
  return n.reshape(spread, resultShape);
}

Value mlir::dtc::sumRepeatedRows(NodeImporter &n, Value updates, int64_t dim,
                                 int64_t repeats) {
  auto type = cast<RankedTensorType>(updates.getType());
  SmallVector<int64_t> split(type.getShape());
  split[dim] /= repeats;
  split.insert(split.begin() + dim + 1, repeats);
  Value rows = n.reshape(updates, split);
  if (repeats == 1)
    return n.reshape(rows, type.getShape());
  return ReduceSumOp::create(n.builder, n.loc, rows, ArrayRef<int64_t>{dim + 1},
                             /*keepDims=*/false);
}

PositionsForm *mlir::dtc::positionsRead(NodeImporter &n) {
  // Most models have no NonZero: no walk back through their indices.
  if (n.model.positions.empty())
    return nullptr;
  SmallVector<Value> work{n.input(1)};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value value = work.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    if (auto form = n.model.positions.find(value);
        form != n.model.positions.end())
      return &form->second;
    if (Operation *def = value.getDefiningOp())
      llvm::append_range(work, def->getOperands());
  }
  return nullptr;
}

DictionaryAttr mlir::dtc::describeStaticPositions(ModelContext &model,
                                                  MLIRContext *context) {
  int64_t positions = 0, bytes = 0;
  for (auto &[value, form] : model.positions) {
    positions += cast<RankedTensorType>(form.mask.getType()).getNumElements();
    for (Value rows : form.rows) {
      auto type = cast<RankedTensorType>(rows.getType());
      bytes +=
          type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
    }
  }
  Builder b(context);
  return b.getDictionaryAttr(
      {b.getNamedAttr("nodes", b.getI64IntegerAttr(model.positions.size())),
       b.getNamedAttr("positions", b.getI64IntegerAttr(positions)),
       b.getNamedAttr("gathered_bytes", b.getI64IntegerAttr(bytes))});
}

LogicalResult mlir::dtc::checkStaticPositions(ModelContext &model) {
  for (auto &[value, positions] : model.positions) {
    auto fail = [&, &positions = positions]() {
      return emitError(value.getLoc())
             << "NonZero node '" << positions.node << "': ";
    };
    if (positions.scatters.empty())
      return fail() << "its positions (as many as the nonzero elements, "
                       "known only at run time) are not scattered back by a "
                       "ScatterElements into zeros (index_add_), the one use "
                       "the static form of every position can express";
    // The padded positions must not be counted: no reduction reads the
    // rows between the positions and the masking scatters.
    SmallVector<Value> work(positions.rows);
    work.push_back(value);
    llvm::DenseSet<Operation *> seen;
    while (!work.empty()) {
      Value current = work.pop_back_val();
      for (Operation *user : current.getUsers()) {
        if (positions.scatters.contains(user) || !seen.insert(user).second)
          continue;
        if (isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, CumSumOp,
                ArgMaxOp, TopKOp>(user))
          return fail() << "its positions reach '"
                        << user->getName().getStringRef()
                        << "', which would count the padding of the static "
                           "form (every position, the others masked)";
        llvm::append_range(work, user->getResults());
      }
    }
  }
  return success();
}

void mlir::dtc::addStaticPositionsImporters(OpImporterTable &table) {
  table.add("NonZero", 1, importNonZero);
  table.add("ScatterElements", 3, importScatterElements);
}
