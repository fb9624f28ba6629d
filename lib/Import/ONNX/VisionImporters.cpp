//===- VisionImporters.cpp - convolutions, pools, batch norms -------------===//
//
// Conv, ConvTranspose, the pools, BatchNormalization, InstanceNormalization
// and the activations vision models use have no dtc op of their own, as Pad
// and Tile have none: a convolution is a GEMM of its weights with the
// input's windows (im2col: one strided slice per kernel offset, or, where
// the windows tile the input, as a ViT's patch embedding, only a reshape
// and a transpose), a transposed convolution the GEMM followed by strided
// accumulation (col2im), a pool the maximum or the sum of the window
// slices, a norm its reductions. Autodiff, the sharding rules (a
// convolution's output channels are its GEMM's rows, its input channels the
// contraction) and the backends' GEMMs then apply unchanged; docs/Vision.md
// says what that costs.
//
//===----------------------------------------------------------------------===//

#include "NodeImporter.h"

#include "dtc/Import/ONNX/ONNXImporter.h"
#include "dtc/Interpreter/TensorAttr.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::dtc;

namespace {

int64_t product(ArrayRef<int64_t> values) {
  int64_t result = 1;
  for (int64_t v : values)
    result *= v;
  return result;
}

/// Where the windows of a convolution or pool lie on the spatial dimensions
/// (2, 3, ...) of an [N, C, spatial...] input.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, padBegin, padEnd, out;
  /// The input positions one window spans along spatial dimension i.
  int64_t span(size_t i) const { return (kernel[i] - 1) * dilations[i] + 1; }
};

/// An ints attribute of `count` entries (per spatial dimension, or twice
/// that for pads), or `fallback` for each when absent.
FailureOr<SmallVector<int64_t>> spatialInts(NodeImporter &n, StringRef name,
                                            int64_t fallback, size_t count) {
  std::optional<SmallVector<int64_t>> given = n.intsAttr(name);
  if (!given)
    return SmallVector<int64_t>(count, fallback);
  if (given->size() != count) {
    n.error() << name << " has " << given->size() << " entries where " << count
              << " are needed";
    return failure();
  }
  return *given;
}

/// The auto_pad attribute (NOTSET when absent or empty), checked.
FailureOr<std::string> readAutoPad(NodeImporter &n) {
  const onnx::AttributeProto *attr = n.attribute("auto_pad");
  std::string autoPad = attr && !attr->s().empty() ? attr->s() : "NOTSET";
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER") {
    n.error() << "unsupported auto_pad '" << autoPad << "'";
    return failure();
  }
  return autoPad;
}

/// Reads strides, dilations, pads and auto_pad for a window of `kernel` over
/// `spatial`. In ceil mode a partial last window counts, unless it would
/// start in the end padding (ONNX's reference and PyTorch drop it).
FailureOr<Window> readWindow(NodeImporter &n, ArrayRef<int64_t> spatial,
                             ArrayRef<int64_t> kernel, bool ceilMode) {
  size_t rank = spatial.size();
  Window w;
  w.kernel.assign(kernel.begin(), kernel.end());
  FailureOr<SmallVector<int64_t>> strides = spatialInts(n, "strides", 1, rank),
                                  dilations =
                                      spatialInts(n, "dilations", 1, rank),
                                  pads = spatialInts(n, "pads", 0, 2 * rank);
  if (failed(strides) || failed(dilations) || failed(pads))
    return failure();
  FailureOr<std::string> autoPad = readAutoPad(n);
  if (failed(autoPad))
    return failure();
  w.strides = *strides;
  w.dilations = *dilations;
  for (size_t i = 0; i < rank; ++i) {
    if (w.kernel[i] < 1 || w.strides[i] < 1 || w.dilations[i] < 1) {
      n.error() << "kernel_shape, strides and dilations must be positive";
      return failure();
    }
    int64_t in = spatial[i], stride = w.strides[i];
    int64_t begin = (*pads)[i], end = (*pads)[i + rank], out;
    if (*autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER") {
      out = (in + stride - 1) / stride;
      int64_t total = std::max<int64_t>((out - 1) * stride + w.span(i) - in, 0);
      begin = *autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end = total - begin;
    } else {
      if (*autoPad == "VALID")
        begin = end = 0;
      if (begin < 0 || end < 0) {
        n.error() << "pads must be non-negative";
        return failure();
      }
      int64_t room = in + begin + end - w.span(i);
      if (room < 0) {
        n.error() << "the window spans " << w.span(i)
                  << " positions of spatial dimension " << i
                  << ", larger than its padded size " << in + begin + end;
        return failure();
      }
      out = (ceilMode ? (room + stride - 1) / stride : room / stride) + 1;
      if (ceilMode && (out - 1) * stride >= in + begin)
        --out;
    }
    w.padBegin.push_back(begin);
    w.padEnd.push_back(end);
    w.out.push_back(out);
  }
  return w;
}

/// The kernel offset (row-major over `kernel`) numbered `index`.
SmallVector<int64_t> kernelOffset(ArrayRef<int64_t> kernel, int64_t index) {
  SmallVector<int64_t> offset(kernel.size());
  for (size_t i = kernel.size(); i-- > 0;) {
    offset[i] = index % kernel[i];
    index /= kernel[i];
  }
  return offset;
}

/// `x` padded with `fill` as far as the windows reach, then one strided
/// slice per kernel offset (row-major), each [N, C, out...]: slice k holds
/// the input position every window reads at offset k.
FailureOr<SmallVector<Value>> windowSlices(NodeImporter &n, Value x,
                                           const Window &w, Value fill) {
  auto type = cast<RankedTensorType>(x.getType());
  size_t rank = w.kernel.size();
  for (size_t i = 0; i < rank; ++i) {
    int64_t reach = (w.out[i] - 1) * w.strides[i] + w.span(i);
    int64_t after =
        std::max<int64_t>(reach - type.getDimSize(i + 2) - w.padBegin[i], 0);
    FailureOr<Value> padded = n.padWith(x, i + 2, w.padBegin[i], after, fill);
    if (failed(padded))
      return failure();
    x = *padded;
  }
  SmallVector<Value> slices;
  for (int64_t k = 0, e = product(w.kernel); k < e; ++k) {
    SmallVector<int64_t> offset = kernelOffset(w.kernel, k);
    SmallVector<int64_t> starts = {0, 0}, strides = {1, 1},
                         sizes = {type.getDimSize(0), type.getDimSize(1)};
    for (size_t i = 0; i < rank; ++i) {
      starts.push_back(offset[i] * w.dilations[i]);
      sizes.push_back(w.out[i]);
      strides.push_back(w.strides[i]);
    }
    slices.push_back(
        SliceOp::create(n.builder, n.loc, x, starts, sizes, strides));
  }
  return slices;
}

/// A per-channel vector [C] shaped to broadcast against [N, C, spatial...]
/// of rank `rank`: [C, 1, ...].
Value perChannel(NodeImporter &n, Value vector, int64_t rank, Type element) {
  auto type = cast<RankedTensorType>(vector.getType());
  SmallVector<int64_t> shape = {type.getNumElements()};
  shape.append(rank - 2, 1);
  return n.convertElementType(n.reshape(vector, shape), element);
}

/// Checks for an [N, C, spatial...] input of rank 3 or more (`minRank`).
LogicalResult checkImageInput(NodeImporter &n, int64_t minRank = 3) {
  if (n.inputType(0).getRank() < minRank) {
    n.error() << "input must be [N, C" << (minRank > 2 ? ", spatial..." : "")
              << "], not " << n.inputType(0);
    return failure();
  }
  return success();
}

/// Records a convolution's result `y` [N, O, spatial...], plus its bias
/// (input 2) per output channel where the node has one.
LogicalResult setBiasedResult(NodeImporter &n, Value y) {
  if (!n.hasInput(2))
    return n.setResult(y);
  auto type = cast<RankedTensorType>(y.getType());
  return n.setResult(n.create<AddOp>(
      y, perChannel(n, n.input(2), type.getRank(), type.getElementType())));
}

/// Checks the kernel_shape attribute, where given, against the kernel of
/// the weights (their dimensions 2, 3, ...).
LogicalResult checkKernelShape(NodeImporter &n, RankedTensorType weights) {
  std::optional<SmallVector<int64_t>> given = n.intsAttr("kernel_shape");
  if (given && ArrayRef<int64_t>(*given) != weights.getShape().drop_front(2)) {
    n.error() << "kernel_shape disagrees with the weights " << weights;
    return failure();
  }
  return success();
}

/// Conv: Y[n, o, p] = sum over c, k of W[o, c, k] * X[n, c, window(p) at k]
/// (within o's group), as a GEMM of W [G, O/G, C/G * K] with the columns
/// [N, G, C/G * K, P].
LogicalResult importConv(NodeImporter &n) {
  if (failed(checkImageInput(n)))
    return failure();
  auto xType = n.inputType(0), wType = n.inputType(1);
  int64_t rank = xType.getRank() - 2;
  if (wType.getRank() != xType.getRank()) {
    n.error() << "weights " << wType << " do not match the input " << xType
              << " (expected [out channels, in channels / group, kernel...])";
    return failure();
  }
  int64_t batch = xType.getDimSize(0), channels = xType.getDimSize(1),
          outChannels = wType.getDimSize(0), groups = n.intAttr("group", 1);
  if (groups < 1 || channels % groups || outChannels % groups ||
      wType.getDimSize(1) * groups != channels) {
    n.error() << "group " << groups << " does not fit " << channels
              << " input channels and weights " << wType;
    return failure();
  }
  if (failed(checkKernelShape(n, wType)))
    return failure();
  SmallVector<int64_t> kernel(wType.getShape().drop_front(2));
  FailureOr<Window> w =
      readWindow(n, xType.getShape().drop_front(2), kernel, false);
  if (failed(w))
    return failure();
  Type element = xType.getElementType();
  int64_t positions = product(w->out),
          rows = channels / groups * product(kernel);
  // The windows tile the input (a patch embedding): the columns are the
  // input's [N, C, out_i, kernel_i, ...] blocks, transposed.
  bool tiles = true;
  for (int64_t i = 0; i < rank; ++i)
    tiles &= w->strides[i] == kernel[i] && w->dilations[i] == 1 &&
             w->padBegin[i] == 0 &&
             w->out[i] * kernel[i] <= xType.getDimSize(i + 2);
  Value columns;
  if (tiles) {
    Value x = n.input(0);
    SmallVector<int64_t> blocks = {batch, channels}, perm = {0, 1};
    for (int64_t i = 0; i < rank; ++i) {
      if (w->out[i] * kernel[i] < xType.getDimSize(i + 2))
        x = n.slice(x, i + 2, 0, w->out[i] * kernel[i]);
      blocks.append({w->out[i], kernel[i]});
    }
    for (int64_t i = 0; i < rank; ++i)
      perm.push_back(3 + 2 * i);
    for (int64_t i = 0; i < rank; ++i)
      perm.push_back(2 + 2 * i);
    FailureOr<Value> moved = n.create<TransposeOp>(n.reshape(x, blocks), perm);
    if (failed(moved))
      return failure();
    columns = *moved;
  } else {
    FailureOr<SmallVector<Value>> slices =
        windowSlices(n, n.input(0), *w, n.scalar(0, element));
    if (failed(slices))
      return failure();
    for (Value &slice : *slices)
      slice = n.reshape(slice, {batch, channels, 1, positions});
    if (slices->size() == 1) {
      columns = slices->front();
    } else {
      FailureOr<Value> joined = n.create<ConcatOp>(*slices, 2);
      if (failed(joined))
        return failure();
      columns = *joined;
    }
  }
  Value weights;
  if (groups == 1) {
    columns = n.reshape(columns, {batch, rows, positions});
    weights = n.reshape(n.input(1), {outChannels, rows});
  } else {
    columns = n.reshape(columns, {batch, groups, rows, positions});
    weights = n.reshape(n.input(1), {groups, outChannels / groups, rows});
  }
  FailureOr<Value> product = n.create<MatmulOp>(weights, columns, false, false);
  if (failed(product))
    return failure();
  SmallVector<int64_t> shape = {batch, outChannels};
  shape.append(w->out);
  Value y = n.reshape(*product, shape);
  return setBiasedResult(n, y);
}

/// ConvTranspose: every input position scatters W[c, o, k] * X[n, c, p] to
/// output position p * stride + k * dilation - pad: the GEMM W^T X gives
/// [N, O, K, in...], whose K slices are added into the output at strided
/// windows (col2im), before the pads are cropped.
LogicalResult importConvTranspose(NodeImporter &n) {
  if (failed(checkImageInput(n)))
    return failure();
  auto xType = n.inputType(0), wType = n.inputType(1);
  int64_t rank = xType.getRank() - 2;
  int64_t batch = xType.getDimSize(0), channels = xType.getDimSize(1),
          groups = n.intAttr("group", 1);
  if (wType.getRank() != xType.getRank() || groups < 1 || channels % groups ||
      wType.getDimSize(0) != channels) {
    n.error() << "weights " << wType << " and group " << groups
              << " do not fit the input " << xType
              << " (expected [in channels, out channels / group, kernel...])";
    return failure();
  }
  int64_t outChannels = wType.getDimSize(1) * groups;
  if (failed(checkKernelShape(n, wType)))
    return failure();
  SmallVector<int64_t> kernel(wType.getShape().drop_front(2));
  FailureOr<SmallVector<int64_t>> strides = spatialInts(n, "strides", 1, rank),
                                  dilations =
                                      spatialInts(n, "dilations", 1, rank),
                                  pads = spatialInts(n, "pads", 0, 2 * rank),
                                  outputPadding =
                                      spatialInts(n, "output_padding", 0, rank);
  if (failed(strides) || failed(dilations) || failed(pads) ||
      failed(outputPadding))
    return failure();
  FailureOr<std::string> autoPad = readAutoPad(n);
  if (failed(autoPad))
    return failure();
  std::optional<SmallVector<int64_t>> outputShape = n.intsAttr("output_shape");
  if (outputShape && outputShape->size() > static_cast<size_t>(rank))
    outputShape->erase(outputShape->begin(),
                       outputShape->end() - rank); // given as [N, C, ...]
  // The full extent every input position writes into, and its crop.
  SmallVector<int64_t> full, begin, out, in(xType.getShape().drop_front(2));
  for (int64_t i = 0; i < rank; ++i) {
    int64_t stride = (*strides)[i], dilation = (*dilations)[i];
    if (stride < 1 || dilation < 1 || (*outputPadding)[i] < 0) {
      n.error() << "strides and dilations must be positive and "
                   "output_padding non-negative";
      return failure();
    }
    full.push_back((in[i] - 1) * stride + (kernel[i] - 1) * dilation + 1 +
                   (*outputPadding)[i]);
    int64_t lead = (*pads)[i], trail = (*pads)[i + rank];
    std::optional<int64_t> target;
    if (outputShape && static_cast<int64_t>(outputShape->size()) == rank)
      target = (*outputShape)[i];
    else if (*autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER")
      target = in[i] * stride;
    if (target) {
      // A target beyond the full extent adds zeros at the end.
      int64_t total = full[i] - *target;
      if (total < 0) {
        full[i] = *target;
        total = 0;
      }
      lead = *autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      trail = total - lead;
    } else if (*autoPad == "VALID") {
      lead = trail = 0;
    }
    if (lead < 0 || trail < 0 || full[i] - lead - trail < 1) {
      n.error() << "pads (" << lead << ", " << trail
                << ") do not fit the output extent " << full[i]
                << " of spatial dimension " << i;
      return failure();
    }
    begin.push_back(lead);
    out.push_back(full[i] - lead - trail);
  }
  int64_t kernelSize = product(kernel), positions = product(in);
  Type element = xType.getElementType();
  Value x =
      n.reshape(n.input(0), {batch, groups, channels / groups, positions});
  Value weights = n.reshape(n.input(1), {groups, channels / groups,
                                         outChannels / groups * kernelSize});
  FailureOr<Value> columns = n.create<MatmulOp>(weights, x, true, false);
  if (failed(columns))
    return failure();
  SmallVector<int64_t> perOffset = {batch, outChannels, kernelSize};
  perOffset.append(in);
  Value spread = n.reshape(*columns, perOffset);
  SmallVector<int64_t> fullShape = {batch, outChannels};
  fullShape.append(full);
  Value y = BroadcastOp::create(n.builder, n.loc, xType.clone(fullShape),
                                n.scalar(0, element));
  SmallVector<int64_t> written = {batch, outChannels};
  written.append(in);
  for (int64_t k = 0; k < kernelSize; ++k) {
    SmallVector<int64_t> offset = kernelOffset(kernel, k);
    SmallVector<int64_t> starts = {0, 0}, steps = {1, 1};
    for (int64_t i = 0; i < rank; ++i) {
      starts.push_back(offset[i] * (*dilations)[i]);
      steps.push_back((*strides)[i]);
    }
    Value contribution = n.reshape(n.slice(spread, 2, k, 1), written);
    Value current =
        SliceOp::create(n.builder, n.loc, y, starts, written, steps);
    FailureOr<Value> sum = n.create<AddOp>(current, contribution);
    if (failed(sum))
      return failure();
    y = UpdateSliceOp::create(n.builder, n.loc, *sum, y, starts, steps);
  }
  SmallVector<int64_t> cropStarts = {0, 0}, cropSizes = {batch, outChannels},
                       ones(rank + 2, 1);
  cropStarts.append(begin);
  cropSizes.append(out);
  if (cropSizes != fullShape)
    y = SliceOp::create(n.builder, n.loc, y, cropStarts, cropSizes, ones);
  return setBiasedResult(n, y);
}

/// A pool's window over its [N, C, spatial...] input: kernel_shape (one
/// entry per spatial dimension), strides, dilations, pads, ceil_mode.
FailureOr<Window> poolWindow(NodeImporter &n) {
  if (failed(checkImageInput(n)))
    return failure();
  auto type = n.inputType(0);
  std::optional<SmallVector<int64_t>> kernel = n.intsAttr("kernel_shape");
  if (!kernel || static_cast<int64_t>(kernel->size()) != type.getRank() - 2) {
    n.error() << "needs a kernel_shape with one entry per spatial dimension";
    return failure();
  }
  return readWindow(n, type.getShape().drop_front(2), *kernel,
                    n.intAttr("ceil_mode", 0) != 0);
}

/// For MaxPool's Indices: the flat index into the input [N, C, D...] of the
/// position each window reads at kernel offset `k` (spatial dimensions
/// row-major, or column-major with storage_order = 1), an i64 constant.
Value windowIndices(NodeImporter &n, const Window &w, int64_t k,
                    bool columnMajor) {
  auto type = n.inputType(0);
  SmallVector<int64_t> offset = kernelOffset(w.kernel, k);
  ArrayRef<int64_t> spatial = type.getShape().drop_front(2);
  size_t rank = spatial.size();
  int64_t planes = type.getDimSize(0) * type.getDimSize(1),
          plane = product(spatial), windows = product(w.out);
  Shape shape = {type.getDimSize(0), type.getDimSize(1)};
  shape.insert(shape.end(), w.out.begin(), w.out.end());
  Tensor indices(DType::I64, shape);
  for (int64_t j = 0; j < windows; ++j) {
    SmallVector<int64_t> out = kernelOffset(w.out, j);
    int64_t index = 0, stride = 1;
    for (size_t step = 0; step < rank; ++step) {
      size_t i = columnMajor ? step : rank - 1 - step;
      index +=
          (out[i] * w.strides[i] + offset[i] * w.dilations[i] - w.padBegin[i]) *
          stride;
      stride *= spatial[i];
    }
    for (int64_t p = 0; p < planes; ++p)
      indices.ints()[p * windows + j] = p * plane + index;
  }
  return n.constant(indices);
}

/// MaxPool: the maximum of the window slices, padded with the lowest value;
/// Indices, where used, the index of the first maximum of each window.
LogicalResult importMaxPool(NodeImporter &n) {
  bool withIndices = n.node.output_size() > 1 && !n.node.output(1).empty();
  FailureOr<Window> w = poolWindow(n);
  if (failed(w))
    return failure();
  Type element = n.inputType(0).getElementType();
  double lowest = -std::numeric_limits<double>::infinity();
  if (auto integer = dyn_cast<IntegerType>(element))
    lowest =
        integer.isUnsigned() ? 0 : -std::ldexp(1.0, integer.getWidth() - 1);
  FailureOr<SmallVector<Value>> slices =
      windowSlices(n, n.input(0), *w, n.scalar(lowest, element));
  if (failed(slices))
    return failure();
  bool columnMajor = n.intAttr("storage_order", 0) != 0;
  Value result = slices->front(), indices;
  if (withIndices)
    indices = windowIndices(n, *w, 0, columnMajor);
  // A later position wins when it is larger or NaN (as PyTorch's kernel
  // scans a window): the gradient goes to the first maximum alone.
  for (auto [k, slice] : llvm::enumerate(*slices)) {
    if (k == 0)
      continue;
    FailureOr<Value> larger =
        n.create<CompareOp>(ComparisonPredicate::GT, slice, result);
    FailureOr<Value> nan =
        n.create<CompareOp>(ComparisonPredicate::NE, slice, slice);
    if (failed(larger) || failed(nan))
      return failure();
    FailureOr<Value> wins = n.create<OrOp>(*larger, *nan);
    if (failed(wins))
      return failure();
    FailureOr<Value> chosen = n.create<SelectOp>(*wins, slice, result);
    if (failed(chosen))
      return failure();
    result = *chosen;
    if (withIndices) {
      chosen = n.create<SelectOp>(*wins, windowIndices(n, *w, k, columnMajor),
                                  indices);
      if (failed(chosen))
        return failure();
      indices = *chosen;
    }
  }
  n.results = {result};
  if (withIndices)
    n.results.push_back(indices);
  return success();
}

/// AveragePool: the sum of the window slices (zero-padded) over the number
/// of positions each window covers: of the input alone, or of the input and
/// its pads with count_include_pad.
LogicalResult importAveragePool(NodeImporter &n) {
  FailureOr<Window> w = poolWindow(n);
  if (failed(w))
    return failure();
  auto type = n.inputType(0);
  Type element = type.getElementType();
  if (!isa<FloatType>(element)) {
    n.error() << "input must be a float tensor, not " << type;
    return failure();
  }
  FailureOr<SmallVector<Value>> slices =
      windowSlices(n, n.input(0), *w, n.scalar(0, element));
  if (failed(slices))
    return failure();
  Value sum = slices->front();
  for (Value slice : ArrayRef<Value>(*slices).drop_front()) {
    FailureOr<Value> added = n.create<AddOp>(sum, slice);
    if (failed(added))
      return failure();
    sum = *added;
  }
  // Positions counted per window, a product over the spatial dimensions.
  bool includePad = n.intAttr("count_include_pad", 0) != 0;
  size_t rank = w->kernel.size();
  SmallVector<SmallVector<int64_t>> counts(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t size = type.getDimSize(i + 2);
    int64_t lo = includePad ? -w->padBegin[i] : 0,
            hi = includePad ? size + w->padEnd[i] : size;
    for (int64_t o = 0; o < w->out[i]; ++o) {
      int64_t count = 0;
      for (int64_t k = 0; k < w->kernel[i]; ++k) {
        int64_t p = o * w->strides[i] + k * w->dilations[i] - w->padBegin[i];
        count += p >= lo && p < hi;
      }
      counts[i].push_back(count);
    }
  }
  SmallVector<int64_t> shape = {1, 1};
  shape.append(w->out);
  Tensor divisor(*dtypeOf(element), Shape(shape.begin(), shape.end()));
  for (int64_t j = 0, e = divisor.numElements(); j < e; ++j) {
    SmallVector<int64_t> position = kernelOffset(w->out, j);
    double count = 1;
    for (size_t i = 0; i < rank; ++i)
      count *= counts[i][position[i]];
    divisor.floats()[j] = count;
  }
  return n.setResult(n.create<DivOp>(sum, n.constant(divisor)));
}

/// GlobalAveragePool, GlobalMaxPool: a reduction over the spatial dims.
template <typename ReduceOpTy> LogicalResult importGlobalPool(NodeImporter &n) {
  if (failed(checkImageInput(n)))
    return failure();
  SmallVector<int64_t> dims =
      llvm::to_vector(llvm::seq<int64_t>(2, n.inputType(0).getRank()));
  return n.setResult(n.create<ReduceOpTy>(n.input(0), dims, true));
}

/// Marks the ops a node's importer creates while it lives to compute in f32
/// under mixed precision (kComputeInF32AttrName): a norm's statistics and
/// normalization, whose cancellations 16-bit arithmetic would ruin.
class ComputedInF32 {
public:
  explicit ComputedInF32(NodeImporter &n)
      : block(n.builder.getInsertionBlock()),
        before(block->empty() ? nullptr : &block->back()) {}
  ~ComputedInF32() {
    auto begin = before ? std::next(before->getIterator()) : block->begin();
    UnitAttr unit = UnitAttr::get(block->getParentOp()->getContext());
    for (Operation &op : llvm::make_range(begin, block->end()))
      op.setAttr(kComputeInF32AttrName, unit);
  }

private:
  Block *block;
  Operation *before;
};

/// `centered` (x - mean) / sqrt(variance + epsilon) * scale + bias, the
/// variance with the normalized dimensions kept as size 1, the per-channel
/// scale and bias shaped to broadcast.
FailureOr<Value> normalize(NodeImporter &n, Value centered, Value variance,
                           Value scale, Value bias, double epsilon) {
  Type element = getElementTypeOrSelf(centered.getType());
  FailureOr<Value> padded =
      n.create<AddOp>(variance, n.scalar(epsilon, element));
  if (failed(padded))
    return failure();
  FailureOr<Value> scaled = n.create<MulOp>(
      centered, RsqrtOp::create(n.builder, n.loc, *padded).getResult());
  if (failed(scaled))
    return failure();
  FailureOr<Value> weighted = n.create<MulOp>(*scaled, scale);
  if (failed(weighted))
    return failure();
  return n.create<AddOp>(*weighted, bias);
}

/// The statistics of `x` over `dims` (kept as size-1 dimensions).
struct Moments {
  Value mean, variance, centered; // centered: x - mean
};

/// The mean and population variance of `x` over `dims`.
FailureOr<Moments> moments(NodeImporter &n, Value x, ArrayRef<int64_t> dims) {
  FailureOr<Value> mean = n.create<ReduceMeanOp>(x, dims, true);
  if (failed(mean))
    return failure();
  FailureOr<Value> centered = n.create<SubOp>(x, *mean);
  if (failed(centered))
    return failure();
  FailureOr<Value> squared = n.create<MulOp>(*centered, *centered);
  if (failed(squared))
    return failure();
  FailureOr<Value> variance = n.create<ReduceMeanOp>(*squared, dims, true);
  if (failed(variance))
    return failure();
  return Moments{*mean, *variance, *centered};
}

/// `running * momentum + batch * (1 - momentum)` in `running`'s type.
FailureOr<Value> runningUpdate(NodeImporter &n, Value running, Value batch,
                               double momentum) {
  Type element = getElementTypeOrSelf(running.getType());
  Value batchValue = n.convertElementType(
      n.reshape(batch, cast<RankedTensorType>(running.getType()).getShape()),
      element);
  FailureOr<Value> kept = n.create<MulOp>(running, n.scalar(momentum, element));
  FailureOr<Value> taken =
      n.create<MulOp>(batchValue, n.scalar(1 - momentum, element));
  if (failed(kept) || failed(taken))
    return failure();
  return n.create<AddOp>(*kept, *taken);
}

/// BatchNormalization: with the running statistics (inference), or in
/// training mode with the batch's, also returning the running mean and
/// variance updated by `momentum` (the variance unbiased as PyTorch's, or
/// the population variance of ONNX's reference: see ModelContext).
LogicalResult importBatchNormalization(NodeImporter &n) {
  if (failed(checkImageInput(n, 2)))
    return failure();
  ComputedInF32 precision(n);
  if (n.intAttr("spatial", 1) != 1) {
    n.error() << "unsupported BatchNormalization attribute spatial = 0 "
                 "(per-activation statistics, opset < 9)";
    return failure();
  }
  auto type = n.inputType(0);
  int64_t rank = type.getRank(), channels = type.getDimSize(1);
  for (unsigned i = 1; i < 5; ++i)
    if (n.inputType(i).getNumElements() != channels) {
      n.error() << "input " << i << " has " << n.inputType(i).getNumElements()
                << " elements for " << channels << " channels";
      return failure();
    }
  auto outputUsed = [&](int i) {
    return n.node.output_size() > i && !n.node.output(i).empty();
  };
  bool training = isTrainingBatchNorm(n.node, n.opset);
  if (outputUsed(3) || outputUsed(4)) {
    n.error() << "unsupported BatchNormalization output saved_mean/saved_var "
                 "(opset < 14)";
    return failure();
  }
  Type element = type.getElementType();
  double epsilon = n.floatAttr("epsilon", 1e-5f);
  Value scale = perChannel(n, n.input(1), rank, element),
        bias = perChannel(n, n.input(2), rank, element);
  if (!training) {
    FailureOr<Value> centered =
        n.create<SubOp>(n.input(0), perChannel(n, n.input(3), rank, element));
    if (failed(centered))
      return failure();
    return n.setResult(normalize(n, *centered,
                                 perChannel(n, n.input(4), rank, element),
                                 scale, bias, epsilon));
  }
  // The statistics over the batch and the spatial dimensions; with
  // groups, of each group's rows apart ([groups, batch / groups, C,
  // spatial...] reduced over all but the group and the channel).
  int64_t groups = n.model.options.batchNormGroups, batch = type.getDimSize(0);
  if (groups < 1 || batch % groups) {
    n.error() << "a batch of " << batch << " does not split into " << groups
              << " groups for per-rank batch statistics";
    return failure();
  }
  Value x = n.input(0);
  SmallVector<int64_t> dims = {0};
  llvm::append_range(dims, llvm::seq<int64_t>(2, rank));
  if (groups > 1) {
    SmallVector<int64_t> grouped = {groups, batch / groups};
    llvm::append_range(grouped, type.getShape().drop_front());
    x = n.reshape(x, grouped);
    for (int64_t &dim : dims)
      ++dim;
  }
  FailureOr<Moments> stats = moments(n, x, dims);
  if (failed(stats))
    return failure();
  Value mean = stats->mean, variance = stats->variance;
  FailureOr<Value> normalized =
      normalize(n, stats->centered, variance, scale, bias, epsilon);
  if (failed(normalized))
    return failure();
  Value y = n.reshape(*normalized, type.getShape());
  if (groups > 1) {
    // The first group's statistics, as a sum over the groups of the first
    // one's alone: where the groups are ranks, a sum of C values the
    // partitioner all-reduces (DDP broadcasts rank 0's buffers).
    auto firstGroup = [&](Value stat) -> FailureOr<Value> {
      auto statType = cast<RankedTensorType>(stat.getType());
      Type i64 = n.builder.getI64Type();
      Value group = IotaOp::create(n.builder, n.loc, statType.clone(i64), 0);
      FailureOr<Value> first =
          n.create<CompareOp>(ComparisonPredicate::EQ, group, n.scalar(0, i64));
      if (failed(first))
        return failure();
      FailureOr<Value> kept =
          n.create<SelectOp>(*first, stat, n.scalar(0, element));
      if (failed(kept))
        return failure();
      return n.create<ReduceSumOp>(*kept, ArrayRef<int64_t>{0}, true);
    };
    FailureOr<Value> firstMean = firstGroup(mean),
                     firstVariance = firstGroup(variance);
    if (failed(firstMean) || failed(firstVariance))
      return failure();
    mean = *firstMean;
    variance = *firstVariance;
  }
  int64_t count = type.getNumElements() / channels / groups;
  Value runningVariance = variance;
  if (n.model.unbiasedRunningVariance) {
    if (count < 2) {
      n.error() << "training-mode batch statistics need more than one value "
                   "per channel (the input is "
                << type << ")";
      return failure();
    }
    FailureOr<Value> corrected = n.create<MulOp>(
        variance, n.scalar(double(count) / double(count - 1), element));
    if (failed(corrected))
      return failure();
    runningVariance = *corrected;
  }
  double momentum = n.floatAttr("momentum", 0.9f);
  FailureOr<Value> newMean = runningUpdate(n, n.input(3), mean, momentum);
  FailureOr<Value> newVariance =
      runningUpdate(n, n.input(4), runningVariance, momentum);
  if (failed(newMean) || failed(newVariance))
    return failure();
  n.results = {y, *newMean, *newVariance};
  // Running statistics held in initializers are the model's buffers: the
  // step returns their next values.
  for (auto [input, next] :
       {std::pair(3, *newMean), std::pair(4, *newVariance)}) {
    const std::string &name = n.node.input(input);
    if (!n.model.buffers.contains(name))
      continue;
    if (!n.model.bufferUpdates.try_emplace(name, next).second) {
      n.error() << "the running statistic '" << name
                << "' is updated by two BatchNormalization nodes";
      return failure();
    }
  }
  return success();
}

/// InstanceNormalization: each (sample, channel)'s spatial statistics.
LogicalResult importInstanceNormalization(NodeImporter &n) {
  if (failed(checkImageInput(n)))
    return failure();
  ComputedInF32 precision(n);
  auto type = n.inputType(0);
  int64_t rank = type.getRank();
  for (unsigned i = 1; i < 3; ++i)
    if (n.inputType(i).getNumElements() != type.getDimSize(1)) {
      n.error() << "input " << i << " must have one element per channel";
      return failure();
    }
  SmallVector<int64_t> dims = llvm::to_vector(llvm::seq<int64_t>(2, rank));
  FailureOr<Moments> stats = moments(n, n.input(0), dims);
  if (failed(stats))
    return failure();
  Type element = type.getElementType();
  return n.setResult(normalize(n, stats->centered, stats->variance,
                               perChannel(n, n.input(1), rank, element),
                               perChannel(n, n.input(2), rank, element),
                               n.floatAttr("epsilon", 1e-5f)));
}

/// x where x > 0, else `negative` (a function of x); the gradient at 0 is
/// the negative side's, as PyTorch's.
LogicalResult importPiecewise(NodeImporter &n,
                              function_ref<FailureOr<Value>(Value)> negative,
                              double outerScale = 1) {
  Value x = n.input(0);
  Type element = getElementTypeOrSelf(x.getType());
  FailureOr<Value> other = negative(x);
  if (failed(other))
    return failure();
  FailureOr<Value> positive =
      n.create<CompareOp>(ComparisonPredicate::GT, x, n.scalar(0, element));
  if (failed(positive))
    return failure();
  FailureOr<Value> y = n.create<SelectOp>(*positive, x, *other);
  if (failed(y) || outerScale == 1)
    return n.setResult(y);
  return n.setResult(n.create<MulOp>(*y, n.scalar(outerScale, element)));
}

/// alpha * (e^x - 1), the negative side of Elu and Selu.
FailureOr<Value> expMinusOne(NodeImporter &n, Value x, double alpha) {
  Type element = getElementTypeOrSelf(x.getType());
  FailureOr<Value> shifted = n.create<SubOp>(
      ExpOp::create(n.builder, n.loc, x).getResult(), n.scalar(1, element));
  if (failed(shifted))
    return failure();
  return n.create<MulOp>(*shifted, n.scalar(alpha, element));
}

/// PRelu's slope, broadcast against x; before opset 7 a [C] slope is per
/// channel (dimension 1).
Value preluSlope(NodeImporter &n) {
  auto x = n.inputType(0), slope = n.inputType(1);
  if (n.opset < 7 && slope.getRank() == 1 && x.getRank() > 2 &&
      slope.getDimSize(0) == x.getDimSize(1))
    return perChannel(n, n.input(1), x.getRank(), x.getElementType());
  return n.input(1);
}

/// Sign: (x > 0) - (x < 0), in x's type.
LogicalResult importSign(NodeImporter &n) {
  Value x = n.input(0);
  Type element = getElementTypeOrSelf(x.getType());
  Value zero = n.scalar(0, element);
  FailureOr<Value> above =
                       n.create<CompareOp>(ComparisonPredicate::GT, x, zero),
                   below =
                       n.create<CompareOp>(ComparisonPredicate::LT, x, zero);
  if (failed(above) || failed(below))
    return failure();
  return n.setResult(n.create<SubOp>(n.convertElementType(*above, element),
                                     n.convertElementType(*below, element)));
}

/// Shrink: x + bias below -lambd, x - bias above lambd, 0 between.
LogicalResult importShrink(NodeImporter &n) {
  Value x = n.input(0);
  Type element = getElementTypeOrSelf(x.getType());
  double lambd = n.floatAttr("lambd", 0.5f), bias = n.floatAttr("bias", 0);
  FailureOr<Value> low = n.create<CompareOp>(ComparisonPredicate::LT, x,
                                             n.scalar(-lambd, element)),
                   high = n.create<CompareOp>(ComparisonPredicate::GT, x,
                                              n.scalar(lambd, element)),
                   up = n.create<AddOp>(x, n.scalar(bias, element)),
                   down = n.create<SubOp>(x, n.scalar(bias, element));
  if (failed(low) || failed(high) || failed(up) || failed(down))
    return failure();
  FailureOr<Value> inner =
      n.create<SelectOp>(*high, *down, n.scalar(0, element));
  if (failed(inner))
    return failure();
  return n.setResult(n.create<SelectOp>(*low, *up, *inner));
}

} // namespace

bool mlir::dtc::isTrainingBatchNorm(const onnx::NodeProto &node,
                                    int64_t opset) {
  if (node.op_type() != "BatchNormalization")
    return false;
  if (opset >= 14) {
    for (const onnx::AttributeProto &attr : node.attribute())
      if (attr.name() == "training_mode")
        return attr.i() != 0;
    return false;
  }
  // Before opset 14, training mode is a node that returns the statistics.
  for (int i : {1, 2})
    if (node.output_size() > i && !node.output(i).empty())
      return true;
  return false;
}

void mlir::dtc::addVisionImporters(OpImporterTable &table) {
  table.add("Conv", 2, importConv);
  table.add("ConvTranspose", 2, importConvTranspose);
  table.add("MaxPool", 1, importMaxPool);
  table.add("AveragePool", 1, importAveragePool);
  table.add("GlobalAveragePool", 1, importGlobalPool<ReduceMeanOp>);
  table.add("GlobalMaxPool", 1, importGlobalPool<ReduceMaxOp>);
  table.add("BatchNormalization", 5, importBatchNormalization);
  table.add("InstanceNormalization", 3, importInstanceNormalization);
  table.add("LeakyRelu", 1, [](NodeImporter &n) {
    double alpha = n.floatAttr("alpha", 0.01f);
    return importPiecewise(n, [&](Value x) {
      return n.create<MulOp>(x, n.scalar(alpha, getElementTypeOrSelf(x)));
    });
  });
  table.add("PRelu", 2, [](NodeImporter &n) {
    Value slope = preluSlope(n);
    return importPiecewise(n,
                           [&](Value x) { return n.create<MulOp>(x, slope); });
  });
  table.add("Elu", 1, [](NodeImporter &n) {
    double alpha = n.floatAttr("alpha", 1);
    return importPiecewise(n,
                           [&](Value x) { return expMinusOne(n, x, alpha); });
  });
  table.add("Selu", 1, [](NodeImporter &n) {
    double alpha = n.floatAttr("alpha", 1.67326319217681884765625f),
           gamma = n.floatAttr("gamma", 1.05070102214813232421875f);
    return importPiecewise(
        n, [&](Value x) { return expMinusOne(n, x, alpha); }, gamma);
  });
  table.add("Sign", 1, importSign);
  table.add("Shrink", 1, importShrink);
}
