//===- DataMovementKernels.cpp - reference kernels: data movement ---------===//
//
// Gather, reshape, transpose, broadcast, concat, slice, split: each output
// element is copied from exactly one input element. Their adjoints
// scatter_add and update_slice, and scatter_reduce, write into a copy of
// their input.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"

#include <cmath>
#include <type_traits>

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// result[i] = input[offsets[i]] for every element of `result`.
void copyFrom(const Tensor &input, const std::vector<int64_t> &offsets,
              Tensor &result) {
  for (size_t i = 0; i < offsets.size(); ++i) {
    if (result.isFloat())
      result.floats()[i] = input.floats()[offsets[i]];
    else
      result.ints()[i] = input.ints()[offsets[i]];
  }
}

/// Offsets of the elements of a strided window of `input`: output element
/// (i0, i1, ...) reads input (base[0] + i0 * step[0], ...).
std::vector<int64_t> windowOffsets(const Shape &inputShape,
                                   const Shape &outShape,
                                   ArrayRef<int64_t> base,
                                   ArrayRef<int64_t> step) {
  Shape strides = stridesOf(inputShape);
  int64_t origin = 0;
  Shape delta(outShape.size());
  for (size_t d = 0; d < outShape.size(); ++d) {
    origin += base[d] * strides[d];
    delta[d] = step[d] * strides[d];
  }
  return stridedOffsets(outShape, origin, delta);
}

/// For gather and scatter_add: the offset in a tensor of `shape` of each
/// element of a gather result (`indices` replacing dimension `dim`).
FailureOr<std::vector<int64_t>> gatherOffsets(Operation *op, const Shape &shape,
                                              const Tensor &indices,
                                              int64_t dim) {
  DimSplit split = splitAt(shape, dim);
  std::vector<int64_t> offsets;
  offsets.reserve(split.outer * indices.numElements() * split.inner);
  for (int64_t o = 0; o < split.outer; ++o) {
    for (int64_t index : indices.ints()) {
      if (index < -split.size || index >= split.size)
        return op->emitError("index ")
               << index << " is out of range for dimension of size "
               << split.size;
      if (index < 0)
        index += split.size;
      for (int64_t k = 0; k < split.inner; ++k)
        offsets.push_back((o * split.size + index) * split.inner + k);
    }
  }
  return offsets;
}

LogicalResult gather(GatherOp op, Operands in, Results &out) {
  Tensor result = makeTensor(op.getResult());
  FailureOr<std::vector<int64_t>> offsets =
      gatherOffsets(op, in[0]->shape(), *in[1], op.getDim());
  if (failed(offsets))
    return failure();
  copyFrom(*in[0], *offsets, result);
  out.push_back(std::move(result));
  return success();
}

/// A copy of the input with each update combined into the element its
/// index addresses, in order (repeated indices combine).
template <typename ScatterOp, typename Combine>
LogicalResult scatterInto(ScatterOp op, Operands in, Results &out,
                          Combine combine) {
  const Tensor &updates = *in[2];
  Tensor result = *in[0];
  FailureOr<std::vector<int64_t>> offsets =
      gatherOffsets(op, result.shape(), *in[1], op.getDim());
  if (failed(offsets))
    return failure();
  for (size_t i = 0; i < offsets->size(); ++i) {
    int64_t at = (*offsets)[i];
    if (result.isFloat())
      result.floats()[at] = combine(result.floats()[at], updates.floats()[i]);
    else
      result.ints()[at] = combine(result.ints()[at], updates.ints()[i]);
  }
  out.push_back(std::move(result));
  return success();
}

LogicalResult scatterAdd(ScatterAddOp op, Operands in, Results &out) {
  return scatterInto(op, in, out, [](auto a, auto b) { return a + b; });
}

LogicalResult scatterReduce(ScatterReduceOp op, Operands in, Results &out) {
  ScatterReduction kind = op.getKind();
  return scatterInto(op, in, out, [kind](auto a, auto b) -> decltype(a) {
    if constexpr (std::is_floating_point_v<decltype(a)>)
      if (kind != ScatterReduction::Mul && (std::isnan(a) || std::isnan(b)))
        return NAN;
    if (kind == ScatterReduction::Mul)
      return a * b;
    if (kind == ScatterReduction::Max)
      return a < b ? b : a;
    return b < a ? b : a;
  });
}

/// For gather_elements and scatter_elements_add: calls `visit(from, to)`
/// with, for each element of `indices`, its own offset and the offset in a
/// tensor of `shape` it addresses along `dim`.
template <typename Visit>
LogicalResult forEachElementIndex(Operation *op, const Shape &shape,
                                  const Tensor &indices, int64_t dim,
                                  Visit visit) {
  Shape strides = ::mlir::dtc::stridesOf(shape);
  const Shape &ishape = indices.shape();
  Shape index(ishape.size(), 0);
  for (int64_t i = 0, e = indices.numElements(); i < e; ++i) {
    int64_t target = indices.ints()[i], size = shape[dim];
    if (target < -size || target >= size)
      return op->emitError("index ")
             << target << " is out of range for dimension of size " << size;
    if (target < 0)
      target += size;
    int64_t offset = 0;
    for (size_t d = 0; d < ishape.size(); ++d)
      offset +=
          (static_cast<int64_t>(d) == dim ? target : index[d]) * strides[d];
    visit(i, offset);
    for (int64_t d = static_cast<int64_t>(ishape.size()) - 1; d >= 0; --d) {
      if (++index[d] < ishape[d])
        break;
      index[d] = 0;
    }
  }
  return success();
}

LogicalResult transpose(TransposeOp op, Operands in, Results &out) {
  const Tensor &input = *in[0];
  Tensor result = makeTensor(op.getResult());
  // Walking the output in order moves along input dimension perm[d].
  Shape inStrides = stridesOf(input.shape());
  Shape step(result.rank());
  for (int64_t d = 0; d < result.rank(); ++d)
    step[d] = inStrides[op.getPermutation()[d]];
  std::vector<int64_t> offsets = stridedOffsets(result.shape(), 0, step);
  copyFrom(input, offsets, result);
  out.push_back(std::move(result));
  return success();
}

} // namespace

void mlir::dtc::addDataMovementKernels(KernelTable &table) {
  table.add<GatherOp>(gather);
  table.add<TransposeOp>(transpose);
  table.add<ScatterAddOp>(scatterAdd);
  table.add<ScatterReduceOp>(scatterReduce);
  table.add<GatherElementsOp>([](GatherElementsOp op, Operands in,
                                 Results &out) -> LogicalResult {
    Tensor result = makeTensor(op.getResult());
    const Tensor &input = *in[0];
    if (failed(forEachElementIndex(op, input.shape(), *in[1], op.getDim(),
                                   [&](int64_t i, int64_t from) {
                                     if (result.isFloat())
                                       result.floats()[i] =
                                           input.floats()[from];
                                     else
                                       result.ints()[i] = input.ints()[from];
                                   })))
      return failure();
    out.push_back(std::move(result));
    return success();
  });
  table.add<ScatterElementsAddOp>([](ScatterElementsAddOp op, Operands in,
                                     Results &out) -> LogicalResult {
    Tensor result = *in[0];
    const Tensor &updates = *in[2];
    if (failed(forEachElementIndex(op, result.shape(), *in[1], op.getDim(),
                                   [&](int64_t i, int64_t to) {
                                     if (result.isFloat())
                                       result.floats()[to] +=
                                           updates.floats()[i];
                                     else
                                       result.ints()[to] += updates.ints()[i];
                                   })))
      return failure();
    out.push_back(std::move(result));
    return success();
  });
  table.add<UpdateSliceOp>(
      [](UpdateSliceOp op, Operands in, Results &out) -> LogicalResult {
        const Tensor &update = *in[0];
        Tensor result = *in[1];
        std::vector<int64_t> offsets = windowOffsets(
            result.shape(), update.shape(), op.getStarts(), op.getStrides());
        for (size_t i = 0; i < offsets.size(); ++i) {
          if (result.isFloat())
            result.floats()[offsets[i]] = update.floats()[i];
          else
            result.ints()[offsets[i]] = update.ints()[i];
        }
        out.push_back(std::move(result));
        return success();
      });
  table.add<ReshapeOp>(
      [](ReshapeOp op, Operands in, Results &out) -> LogicalResult {
        out.push_back(in[0]->reshaped(makeTensor(op.getResult()).shape()));
        return success();
      });
  table.add<BroadcastOp>([](BroadcastOp op, Operands in,
                            Results &out) -> LogicalResult {
    Tensor result = makeTensor(op.getResult());
    copyFrom(*in[0], broadcastOffsets(in[0]->shape(), result.shape()), result);
    out.push_back(std::move(result));
    return success();
  });
  table.add<SliceOp>(
      [](SliceOp op, Operands in, Results &out) -> LogicalResult {
        Tensor result = makeTensor(op.getResult());
        copyFrom(*in[0],
                 windowOffsets(in[0]->shape(), result.shape(), op.getStarts(),
                               op.getStrides()),
                 result);
        out.push_back(std::move(result));
        return success();
      });
  table.add<SplitOp>(
      [](SplitOp op, Operands in, Results &out) -> LogicalResult {
        int64_t dim = op.getDim(), start = 0;
        for (Value value : op.getResults()) {
          Tensor result = makeTensor(value);
          Shape base(result.rank(), 0), step(result.rank(), 1);
          base[dim] = start;
          start += result.shape()[dim];
          copyFrom(*in[0],
                   windowOffsets(in[0]->shape(), result.shape(), base, step),
                   result);
          out.push_back(std::move(result));
        }
        return success();
      });
  table.add<ConcatOp>(
      [](ConcatOp op, Operands in, Results &out) -> LogicalResult {
        Tensor result = makeTensor(op.getResult());
        DimSplit outSplit = splitAt(result.shape(), op.getDim());
        int64_t position = 0; // along dim, where the current operand starts
        for (const Tensor *input : in) {
          DimSplit split = splitAt(input->shape(), op.getDim());
          for (int64_t o = 0; o < split.outer; ++o) {
            for (int64_t j = 0; j < split.size * split.inner; ++j) {
              int64_t from = o * split.size * split.inner + j;
              int64_t to = (o * outSplit.size + position) * outSplit.inner + j;
              if (result.isFloat())
                result.floats()[to] = input->floats()[from];
              else
                result.ints()[to] = input->ints()[from];
            }
          }
          position += split.size;
        }
        out.push_back(std::move(result));
        return success();
      });
}
