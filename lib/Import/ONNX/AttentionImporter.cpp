//===- AttentionImporter.cpp - ONNX Attention and RotaryEmbedding ---------===//
//
// ONNX's Attention becomes dtc.attention, the op fused kernels, sharding and
// recomputation key on (not its decomposition): 3-D inputs are split into
// heads, `is_causal`, the attention windows and `attn_mask` become one mask
// (bool masks are intersected, float masks added), and rows no key may
// attend give zeros, as ONNX specifies (without a NaN in forward or
// gradients); nonpad_kv_seqlen masks each batch
// element's padding keys and aligns the causal mask and the windows to its
// valid ones; softcap becomes dtc.attention's. A KV cache inside the op
// (past_key/past_value) is concatenated before this step's keys and values,
// which are the present_key/present_value outputs; it is inference state,
// refused in training. qk_matmul_output is dtc.attention's probabilities
// (mode 3) or the scores computed beside it (modes 0-2). RotaryEmbedding
// (opset 23) becomes dtc.rotary.
//
//===----------------------------------------------------------------------===//

#include "NodeImporter.h"

#include "dtc/Import/ONNX/ONNXImporter.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// [batch, seq, heads * d] -> [batch, heads, seq, d].
Value splitHeads(NodeImporter &n, Value x, int64_t heads) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t b = type.getDimSize(0), s = type.getDimSize(1),
          d = type.getDimSize(2) / heads;
  return TransposeOp::create(n.builder, n.loc, n.reshape(x, {b, s, heads, d}),
                             ArrayRef<int64_t>{0, 2, 1, 3});
}

/// The scores qk_matmul_output_mode 0-2 exposes: scale * Q K^T (each query
/// head against its key head), soft-capped, and in mode 2 with the
/// additive form of `mask` added.
Value attentionScores(NodeImporter &n, Value q, Value k, double scale,
                      double softcap, Value mask, bool withMask) {
  auto qType = cast<RankedTensorType>(q.getType());
  auto kType = cast<RankedTensorType>(k.getType());
  int64_t batch = qType.getDimSize(0), heads = qType.getDimSize(1),
          kvHeads = kType.getDimSize(1), queries = qType.getDimSize(2),
          keys = kType.getDimSize(2), d = qType.getDimSize(3);
  Type element = qType.getElementType();
  // Query head h reads key head h / (heads / kvHeads).
  Value grouped = n.reshape(q, {batch, kvHeads, heads / kvHeads, queries, d});
  Value keysT = n.reshape(
      TransposeOp::create(n.builder, n.loc, k, ArrayRef<int64_t>{0, 1, 3, 2}),
      {batch, kvHeads, 1, d, keys});
  Value scores = n.reshape(
      MatmulOp::create(n.builder, n.loc, grouped, keysT, false, false),
      {batch, heads, queries, keys});
  scores = MulOp::create(n.builder, n.loc, scores, n.scalar(scale, element));
  if (softcap > 0) {
    Value capped = TanhOp::create(
        n.builder, n.loc,
        DivOp::create(n.builder, n.loc, scores, n.scalar(softcap, element)));
    scores =
        MulOp::create(n.builder, n.loc, capped, n.scalar(softcap, element));
  }
  if (withMask && mask) {
    if (getElementTypeOrSelf(mask).isInteger(1))
      mask = SelectOp::create(
          n.builder, n.loc, mask, n.scalar(0, element),
          n.scalar(-std::numeric_limits<double>::infinity(), element));
    scores = AddOp::create(n.builder, n.loc, scores, mask);
  }
  return scores;
}

LogicalResult importAttention(NodeImporter &n) {
  bool cache = n.hasInput(4) || n.hasInput(5);
  if (cache && !(n.hasInput(4) && n.hasInput(5))) {
    n.error() << "past_key and past_value must be given together";
    return failure();
  }
  if (cache && n.model.options.training) {
    n.error() << "past_key/past_value (a KV cache) are inference state, "
                 "not trained: export the model without a cache "
                 "(use_cache=False)";
    return failure();
  }
  if (cache && n.hasInput(6)) {
    n.error() << "nonpad_kv_seqlen cannot be combined with past_key";
    return failure();
  }
  int64_t qkMode = n.intAttr("qk_matmul_output_mode", 0);
  if (qkMode < 0 || qkMode > 3) {
    n.error() << "qk_matmul_output_mode " << qkMode << " is not 0-3";
    return failure();
  }
  bool wantScores = n.node.output_size() > 3 && !n.node.output(3).empty();

  double softcap = n.floatAttr("softcap", 0);
  Value q = n.input(0), k = n.input(1), v = n.input(2);
  int64_t rank = n.inputType(0).getRank();
  if (rank != 3 && rank != 4) {
    n.error() << "Q must have rank 3 or 4";
    return failure();
  }
  if (rank == 3) {
    int64_t qHeads = n.intAttr("q_num_heads", 0);
    int64_t kvHeads = n.intAttr("kv_num_heads", 0);
    if (qHeads <= 0 || kvHeads <= 0 ||
        n.inputType(0).getDimSize(2) % qHeads ||
        n.inputType(1).getDimSize(2) % kvHeads ||
        n.inputType(2).getDimSize(2) % kvHeads) {
      n.error() << "3-D inputs need q_num_heads and kv_num_heads dividing "
                   "their hidden sizes";
      return failure();
    }
    q = splitHeads(n, q, qHeads);
    k = splitHeads(n, k, kvHeads);
    v = splitHeads(n, v, kvHeads);
  }
  // The cache holds the earlier keys and values: the present ones are it
  // followed by this step's.
  if (cache) {
    FailureOr<Value> keys = n.create<ConcatOp>(ValueRange{n.input(4), k}, 2);
    if (failed(keys))
      return failure();
    FailureOr<Value> values = n.create<ConcatOp>(ValueRange{n.input(5), v}, 2);
    if (failed(values))
      return failure();
    k = *keys;
    v = *values;
  }
  auto qType = cast<RankedTensorType>(q.getType());
  auto kType = cast<RankedTensorType>(k.getType());
  Type element = qType.getElementType();
  int64_t queries = qType.getDimSize(2), keys = kType.getDimSize(2);
  double scale = 1.0 / std::sqrt(static_cast<double>(qType.getDimSize(3)));
  if (n.attribute("scale"))
    scale = n.floatAttr("scale", scale);

  // The positions query i may attend, from is_causal (keys j <= i) and the
  // windows (i - left <= j <= i + right, opset 25); attn_mask is
  // intersected with them (bool) or has -inf added outside them (float).
  int64_t left = n.intAttr("left_window_size", -1);
  int64_t right = n.intAttr("right_window_size", -1);
  if (n.intAttr("is_causal", 0))
    right = right < 0 ? 0 : std::min<int64_t>(right, 0);
  // The queries are the last keys: query i sits at i + offset, offset the
  // cached keys' count, or with nonpad_kv_seqlen (keys past it per batch
  // element are padding) nonpad - queries ([batch, 1, 1, 1]; else 0).
  Type i64 = n.builder.getI64Type();
  Value nonpad = n.hasInput(6) ? n.input(6) : Value();
  int64_t batch = qType.getDimSize(0);
  Value offset = n.scalar(cache ? n.inputType(4).getDimSize(2) : 0, i64);
  if (nonpad) {
    if (n.inputType(6).getShape() != ArrayRef<int64_t>{batch}) {
      n.error() << "nonpad_kv_seqlen must have shape [" << batch << "]";
      return failure();
    }
    nonpad = n.reshape(nonpad, {batch, 1, 1, 1});
    offset = SubOp::create(n.builder, n.loc, nonpad, n.scalar(queries, i64));
  }
  Value allowed;
  auto intersect = [&](Value condition) {
    allowed = allowed
                  ? AndOp::create(n.builder, n.loc, allowed, condition).getResult()
                  : condition;
  };
  if (left >= 0 || right >= 0) {
    auto indexType = RankedTensorType::get({queries, keys}, i64);
    Value row = IotaOp::create(n.builder, n.loc, indexType, 0);
    Value col = IotaOp::create(n.builder, n.loc, indexType, 1);
    // The key's distance right of the query's position: col - row - offset.
    Value distance = SubOp::create(
        n.builder, n.loc, SubOp::create(n.builder, n.loc, col, row), offset);
    auto within = [&](ComparisonPredicate predicate, int64_t bound) -> Value {
      return CompareOp::create(n.builder, n.loc, predicate, distance,
                               n.scalar(bound, i64));
    };
    if (right >= 0)
      intersect(within(ComparisonPredicate::LE, right));
    if (left >= 0)
      intersect(within(ComparisonPredicate::GE, -left));
  }
  if (nonpad) {
    Value key = IotaOp::create(
        n.builder, n.loc, RankedTensorType::get({1, 1, 1, keys}, i64), 3);
    intersect(CompareOp::create(n.builder, n.loc, ComparisonPredicate::LT, key,
                                nonpad));
  }
  Value mask = n.hasInput(3) ? n.input(3) : Value();
  // A mask over fewer keys (the valid ones, with nonpad_kv_seqlen) is
  // extended with masked keys.
  if (mask) {
    auto maskType = cast<RankedTensorType>(mask.getType());
    int64_t given = maskType.getShape().empty() ? 1 : maskType.getShape().back();
    if (given < keys && given != 1) {
      SmallVector<int64_t> padShape(maskType.getShape());
      padShape.back() = keys - given;
      Type maskElement = maskType.getElementType();
      Attribute fill =
          maskElement.isInteger(1)
              ? Attribute(n.builder.getBoolAttr(false))
              : Attribute(FloatAttr::get(
                    maskElement, -std::numeric_limits<double>::infinity()));
      Value pad = ConstantOp::create(
          n.builder, n.loc,
          DenseElementsAttr::get(maskType.clone(padShape), fill));
      FailureOr<Value> whole =
          n.create<ConcatOp>(ValueRange{mask, pad}, maskType.getRank() - 1);
      if (failed(whole))
        return failure();
      mask = *whole;
    }
  }
  if (allowed && !mask) {
    mask = allowed;
  } else if (allowed && getElementTypeOrSelf(mask).isInteger(1)) {
    FailureOr<Value> both = n.create<AndOp>(mask, allowed);
    if (failed(both))
      return failure();
    mask = *both;
  } else if (allowed) {
    Type maskElement = getElementTypeOrSelf(mask);
    Value bias = SelectOp::create(
        n.builder, n.loc, allowed, n.scalar(0, maskElement),
        n.scalar(-std::numeric_limits<double>::infinity(), maskElement));
    FailureOr<Value> sum = n.create<AddOp>(mask, bias);
    if (failed(sum))
      return failure();
    mask = *sum;
  }
  // A row no key may attend (a bool mask false throughout, a float mask
  // -inf throughout) gives zeros, as ONNX specifies. The attention sees a
  // large finite score, not -inf, where the mask excludes a key: the same
  // probabilities wherever a row attends some key (exp underflows to 0), and
  // finite ones, not NaN, in a row that attends none, which is zeroed
  // below, so that no NaN reaches the gradients either.
  Value attends, scoresMask = mask;
  bool boolMask = mask && getElementTypeOrSelf(mask).isInteger(1);
  if (mask) {
    auto maskType = cast<RankedTensorType>(mask.getType());
    Type maskElement = maskType.getElementType();
    FailureOr<Value> most = n.create<ReduceMaxOp>(
        boolMask ? n.convertElementType(mask, element) : mask,
        ArrayRef<int64_t>{maskType.getRank() - 1}, true);
    if (failed(most))
      return failure();
    attends = CompareOp::create(
        n.builder, n.loc, ComparisonPredicate::GT, *most,
        boolMask
            ? n.scalar(0, element)
            : n.scalar(-std::numeric_limits<double>::infinity(), maskElement));
    if (!boolMask) {
      // The most negative finite value of the mask's type.
      double lowest =
          APFloat::getLargest(cast<FloatType>(maskElement).getFloatSemantics(),
                              /*Negative=*/true)
              .convertToDouble();
      FailureOr<Value> finite =
          n.create<MaxOp>(mask, n.scalar(lowest, maskElement));
      if (failed(finite))
        return failure();
      mask = *finite;
    }
  }
  FailureOr<Operation *> attention = n.createInferred<AttentionOp>(
      2, q, k, v, mask, Value(), Value(), n.builder.getF64FloatAttr(scale),
      boolMask ? n.builder.getF64FloatAttr(-1e30) : FloatAttr(), FloatAttr(),
      IntegerAttr(), IntegerAttr(), DenseI64ArrayAttr(),
      softcap > 0 ? n.builder.getF64FloatAttr(softcap) : FloatAttr());
  if (failed(attention))
    return failure();
  Value y = (*attention)->getResult(0);
  Value scores;
  if (wantScores)
    scores = qkMode == 3 ? (*attention)->getResult(1)
                         : attentionScores(n, q, k, scale, softcap, scoresMask,
                                           qkMode == 2);
  if (attends) {
    auto zeroRows = [&](Value &x) {
      FailureOr<Value> zeroed =
          n.create<SelectOp>(attends, x, n.scalar(0, element));
      if (succeeded(zeroed))
        x = *zeroed;
      return zeroed;
    };
    if (failed(zeroRows(y)) ||
        (wantScores && qkMode == 3 && failed(zeroRows(scores))))
      return failure();
  }
  if (rank == 3) {
    auto yType = cast<RankedTensorType>(y.getType());
    y = TransposeOp::create(n.builder, n.loc, y, ArrayRef<int64_t>{0, 2, 1, 3});
    y = n.reshape(y, {yType.getDimSize(0), queries,
                      yType.getDimSize(1) * yType.getDimSize(3)});
  }
  n.results = {y, cache ? k : Value(), cache ? v : Value(), scores};
  return success();
}

/// RotaryEmbedding (opset 23) becomes dtc.rotary on the input as given
/// ([batch, heads, seq, d], or [batch, seq, heads, d] for the 3-D form):
/// the caches, indexed by position_ids or given per token, become angles
/// [batch, 1, seq, half] or [batch, seq, 1, half] that broadcast over the
/// heads.
LogicalResult importRotaryEmbedding(NodeImporter &n) {
  Value x = n.input(0);
  auto type = n.inputType(0);
  int64_t rank = type.getRank();
  if (rank == 3) {
    int64_t heads = n.intAttr("num_heads", 0);
    if (heads <= 0 || type.getDimSize(2) % heads) {
      n.error() << "3-D input needs num_heads dividing its hidden size";
      return failure();
    }
    x = n.reshape(x, {type.getDimSize(0), type.getDimSize(1), heads,
                      type.getDimSize(2) / heads});
  } else if (rank != 4) {
    n.error() << "input must have rank 3 or 4";
    return failure();
  }
  auto xType = cast<RankedTensorType>(x.getType());
  // The batch and sequence dimensions of x: [b, h, s, d] or [b, s, h, d].
  int64_t seqDim = rank == 4 ? 2 : 1;
  int64_t batch = xType.getDimSize(0), seq = xType.getDimSize(seqDim),
          d = xType.getDimSize(3);
  int64_t rotary = n.intAttr("rotary_embedding_dim", 0);
  if (rotary == 0)
    rotary = d;
  if (rotary < 0 || rotary > d || rotary % 2) {
    n.error() << "rotary_embedding_dim " << rotary
              << " must be even and at most the head size " << d;
    return failure();
  }
  int64_t half = rotary / 2;
  auto perToken = [&](Value cache) -> FailureOr<Value> {
    if (n.hasInput(3)) {
      FailureOr<Value> rows = n.create<GatherOp>(cache, n.input(3), 0);
      if (failed(rows))
        return failure();
      cache = *rows;
    }
    // (A batch or sequence of 1 broadcasts.)
    auto cacheType = cast<RankedTensorType>(cache.getType());
    auto fits = [](int64_t dim, int64_t size) {
      return dim == size || dim == 1;
    };
    if (cacheType.getRank() != 3 || cacheType.getDimSize(2) != half ||
        !fits(cacheType.getDimSize(0), batch) ||
        !fits(cacheType.getDimSize(1), seq)) {
      n.error() << "the cos/sin caches give " << cacheType
                << " per token, not [batch, seq, " << half << "]";
      return failure();
    }
    SmallVector<int64_t> shape{cacheType.getDimSize(0), 1, 1, half};
    shape[seqDim] = cacheType.getDimSize(1);
    return n.reshape(cache, shape);
  };
  FailureOr<Value> cos = perToken(n.input(1));
  if (failed(cos))
    return failure();
  FailureOr<Value> sin = perToken(n.input(2));
  if (failed(sin))
    return failure();
  bool interleaved = n.intAttr("interleaved", 0) != 0;
  FailureOr<Value> y =
      n.create<RotaryOp>(x, *cos, *sin, n.builder.getI64IntegerAttr(rotary),
                         interleaved ? n.builder.getUnitAttr() : UnitAttr());
  if (failed(y))
    return failure();
  return n.setResult(n.reshape(*y, type.getShape()));
}

} // namespace

void mlir::dtc::addAttentionImporter(OpImporterTable &table) {
  table.add("Attention", 3, importAttention);
  table.add("RotaryEmbedding", 3, importRotaryEmbedding);
}
