//===- SequenceImporters.cpp - ONNX sequence ops, resolved at import ------===//
//
// Exporters write sequences with static lengths (torch's split of a fused
// QKV projection is SplitToSequence, then SequenceAt per part). dtc has no
// sequence type: a sequence is a list of tensor values that the importer
// keeps by ONNX name (ModelContext::sequences), so positions and lengths
// must be constants, and every tensor read from a sequence is a plain value
// that autodiff and sharding see as any other.
//
//===----------------------------------------------------------------------===//

#include "NodeImporter.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// A constant position into a sequence of `length` (negative ones count from
/// the end); `inclusiveEnd` admits `length` itself (an insertion at the end).
FailureOr<int64_t> position(NodeImporter &n, unsigned input, int64_t length,
                            bool inclusiveEnd) {
  FailureOr<SmallVector<int64_t>> values = n.constantInts(input, "position");
  if (failed(values))
    return failure();
  if (values->size() != 1) {
    n.error() << "position must be a single integer";
    return failure();
  }
  int64_t p = values->front();
  int64_t limit = inclusiveEnd ? length : length - 1;
  if (p < -length || p > limit) {
    n.error() << "position " << p << " is outside a sequence of length "
              << length;
    return failure();
  }
  return p < 0 ? p + length : p;
}

LogicalResult importSequenceConstruct(NodeImporter &n) {
  SmallVector<Value> tensors;
  for (unsigned i = 0, e = n.inputs.size(); i < e; ++i) {
    if (!n.hasInput(i)) {
      n.error() << "input " << i << " must be a tensor";
      return failure();
    }
    tensors.push_back(n.input(i));
  }
  n.setSequenceResult(0, std::move(tensors));
  return success();
}

LogicalResult importSequenceEmpty(NodeImporter &n) {
  n.setSequenceResult(0, {});
  return success();
}

LogicalResult importSequenceAt(NodeImporter &n) {
  FailureOr<ArrayRef<Value>> sequence = n.sequenceInput(0);
  if (failed(sequence))
    return failure();
  FailureOr<int64_t> at = position(n, 1, sequence->size(), false);
  if (failed(at))
    return failure();
  return n.setResult((*sequence)[*at]);
}

LogicalResult importSequenceLength(NodeImporter &n) {
  FailureOr<ArrayRef<Value>> sequence = n.sequenceInput(0);
  if (failed(sequence))
    return failure();
  Tensor length(DType::I64, {});
  length.ints()[0] = sequence->size();
  return n.setResult(n.constant(length));
}

/// SequenceInsert (at `position`, the end by default) and SequenceErase (at
/// `position`, the last by default).
LogicalResult importSequenceInsert(NodeImporter &n) {
  FailureOr<ArrayRef<Value>> sequence = n.sequenceInput(0);
  if (failed(sequence))
    return failure();
  SmallVector<Value> tensors(sequence->begin(), sequence->end());
  int64_t at = tensors.size();
  if (n.hasInput(2)) {
    FailureOr<int64_t> p = position(n, 2, tensors.size(), true);
    if (failed(p))
      return failure();
    at = *p;
  }
  tensors.insert(tensors.begin() + at, n.input(1));
  n.setSequenceResult(0, std::move(tensors));
  return success();
}

LogicalResult importSequenceErase(NodeImporter &n) {
  FailureOr<ArrayRef<Value>> sequence = n.sequenceInput(0);
  if (failed(sequence))
    return failure();
  SmallVector<Value> tensors(sequence->begin(), sequence->end());
  if (tensors.empty()) {
    n.error() << "cannot erase from an empty sequence";
    return failure();
  }
  int64_t at = tensors.size() - 1;
  if (n.hasInput(1)) {
    FailureOr<int64_t> p = position(n, 1, tensors.size(), false);
    if (failed(p))
      return failure();
    at = *p;
  }
  tensors.erase(tensors.begin() + at);
  n.setSequenceResult(0, std::move(tensors));
  return success();
}

/// SplitToSequence: parts of `split` sizes (a list), of `split` each with a
/// smaller last one (a scalar), or of 1 without `split`, in which case
/// keepdims = 0 drops the split dimension.
LogicalResult importSplitToSequence(NodeImporter &n) {
  auto type = n.inputType(0);
  FailureOr<int64_t> dim = n.normalizeAxis(n.intAttr("axis", 0), type.getRank());
  if (failed(dim))
    return failure();
  int64_t total = type.getDimSize(*dim);
  SmallVector<int64_t> sizes;
  bool unitParts = !n.hasInput(1);
  if (unitParts) {
    sizes.assign(total, 1);
  } else {
    FailureOr<Tensor> split = n.constantInput(1, "split");
    if (failed(split))
      return failure();
    if (split->isFloat() || split->shape().size() > 1) {
      n.error() << "split must be an integer scalar or list";
      return failure();
    }
    if (split->shape().empty()) {
      int64_t chunk = split->ints()[0];
      if (chunk <= 0) {
        n.error() << "split must be positive";
        return failure();
      }
      for (int64_t start = 0; start < total; start += chunk)
        sizes.push_back(std::min(chunk, total - start));
    } else {
      sizes.assign(split->ints().begin(), split->ints().end());
      int64_t sum = 0;
      for (int64_t size : sizes)
        sum += size < 0 ? total + 1 : size;
      if (sum != total) {
        n.error() << "the split sizes do not add up to dimension " << *dim
                  << " (" << total << ")";
        return failure();
      }
    }
  }
  // The parts as Split makes them (dtc.split).
  FailureOr<Operation *> split =
      n.createInferred<SplitOp>(sizes.size(), n.input(0), *dim, sizes);
  if (failed(split))
    return failure();
  SmallVector<Value> parts((*split)->getResults());
  if (unitParts && n.intAttr("keepdims", 1) == 0) {
    SmallVector<int64_t> shape(type.getShape());
    shape.erase(shape.begin() + *dim);
    for (Value &part : parts)
      part = n.reshape(part, shape);
  }
  n.setSequenceResult(0, std::move(parts));
  return success();
}

/// ConcatFromSequence: a concat along `axis`, or a stack along a new one
/// (new_axis = 1).
LogicalResult importConcatFromSequence(NodeImporter &n) {
  FailureOr<ArrayRef<Value>> sequence = n.sequenceInput(0);
  if (failed(sequence))
    return failure();
  if (sequence->empty()) {
    n.error() << "cannot concatenate an empty sequence";
    return failure();
  }
  auto type = cast<RankedTensorType>(sequence->front().getType());
  bool stack = n.intAttr("new_axis", 0) != 0;
  int64_t rank = type.getRank() + (stack ? 1 : 0);
  FailureOr<int64_t> dim = n.normalizeAxis(n.intAttr("axis", 0), rank);
  if (failed(dim))
    return failure();
  SmallVector<Value> parts;
  for (Value part : *sequence) {
    if (stack) {
      SmallVector<int64_t> shape(
          cast<RankedTensorType>(part.getType()).getShape());
      shape.insert(shape.begin() + *dim, 1);
      part = n.reshape(part, shape);
    }
    parts.push_back(part);
  }
  return n.setResult(n.create<ConcatOp>(ValueRange(parts), *dim));
}

} // namespace

void mlir::dtc::addSequenceImporters(OpImporterTable &table) {
  table.add("SequenceConstruct", 0, importSequenceConstruct);
  table.add("SequenceEmpty", 0, importSequenceEmpty);
  table.add("SequenceAt", 2, importSequenceAt);
  table.add("SequenceLength", 1, importSequenceLength);
  table.add("SequenceInsert", 2, importSequenceInsert);
  table.add("SequenceErase", 1, importSequenceErase);
  table.add("SplitToSequence", 1, importSplitToSequence);
  table.add("ConcatFromSequence", 1, importConcatFromSequence);
}
