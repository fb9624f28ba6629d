//===- RingAttention.cpp - attention over a ring of token blocks ----------===//
//
// Context parallelism's ring attention (Liu et al., 2023): each rank keeps
// its queries and passes its keys and values around the ring of cp ranks
// (dtc.send_recv, shift 1), so that after cp - 1 steps its queries have met
// every key. Softmax is online (FlashAttention's running maximum and sum),
// so no rank holds more than its rows of the scores of one block; the
// forward keeps each query's log-sum-exp for the backward, which recomputes
// the probabilities block by block, passes the keys and values around again
// and sends each block's key and value gradients on with them, back to
// their rank after a full turn. Each step's next block is sent before the
// step computes, so the transfer overlaps the work.
//
// The tokens are in zigzag order (AxisPartitioner::setZigzag): rank r holds
// chunks r ("a") and 2 cp - 1 - r ("b") of 2 cp. Under a causal mask, at
// step 0 the rank's own block needs tiles (a, a) and (b, b) on the diagonal
// and (b, a) whole; at a later step, the block of rank s = r - step holds
// only keys every one of the rank's "b" queries sees, and its "a" keys are
// seen by all its queries when s < r, its "b" queries see all its keys when
// s > r: two whole tiles of the four, the others fully masked and skipped.
// Every rank does the same 2 cp + 1 tiles. Without a causal mask every
// query meets every key; a mask is then read at the keys' positions, which
// travel with them.
//
//===----------------------------------------------------------------------===//

#include "RingAttention.h"

#include "dtc/Dialect/DTC/IR/DTCLocations.h"
#include "dtc/Dialect/DTC/IR/DTCOpEmitter.h"
#include "dtc/Interpreter/TensorAttr.h"
#include "mlir/IR/Matchers.h"

#include <limits>

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// Whether `mask` (an attention's, right-aligned against the scores) is a
/// constant causal mask of `tokens` queries and keys: key j visible to
/// query i exactly when j <= i, masked ones -inf (or the lowest finite
/// values an exporter writes).
bool isCausalMask(Value mask, std::optional<APFloat> maskedValue,
                  int64_t tokens) {
  ElementsAttr attr;
  if (!mask || !matchPattern(mask, m_Constant(&attr)))
    return false;
  auto type = cast<RankedTensorType>(mask.getType());
  ArrayRef<int64_t> shape = type.getShape();
  if (type.getRank() < 2 || shape.back() != tokens ||
      shape[shape.size() - 2] != tokens ||
      type.getNumElements() != tokens * tokens)
    return false;
  FailureOr<Tensor> values = tensorFromAttr(attr);
  if (failed(values))
    return false;
  auto hidden = [](double x) { return x <= -1e30; };
  bool bits = type.getElementType().isInteger(1);
  if (bits && maskedValue && !hidden(maskedValue->convertToDouble()))
    return false;
  for (int64_t i = 0; i < tokens; ++i)
    for (int64_t j = 0; j < tokens; ++j) {
      int64_t at = i * tokens + j;
      bool visible = bits ? values->ints()[at] != 0 : values->floats()[at] == 0;
      bool masked = bits ? !visible : hidden(values->floats()[at]);
      if (j <= i ? !visible : !masked)
        return false;
    }
  return true;
}

/// The ops of one attention's ring at one rank. (The forward and its
/// gradient share the attention's facts: the forward's pattern state keeps
/// what the gradient reads, found through its probabilities operand.)
class Ring {
public:
  Ring(AxisPartitioner &p, Operation *op)
      : p(p), e(p.builder(), op->getLoc()), loc(op->getLoc()) {}

  /// The forward of `op`, whose q, k and v are this rank's tokens: its
  /// result replaces op's, and the pattern state keeps what the backward
  /// reads (KeptValue).
  LogicalResult forward(AttentionOp op);
  /// The gradient `op` from what its forward `kept`.
  LogicalResult backward(AttentionGradOp op, ArrayRef<Value> kept);

private:
  /// The gradients of one tile's queries, keys and values.
  struct TileGrads {
    Value q, k, v;
  };
  /// The facts of the attention (or its gradient) `op`, and, without a
  /// causal mask, its mask's rows of this rank's queries.
  template <typename OpTy> LogicalResult setUp(OpTy op);
  TileGrads tileGrads(Value q, Value dOut, Value logSumExp, Value delta,
                      Value k, Value v, Value mask);
  /// A query's running maximum and sum, and its unnormalized result.
  struct Rows {
    Value max, sum, out;
  };
  enum class Half { A, B };

  Value i64Constant(ArrayRef<int64_t> shape, ArrayRef<int64_t> values);
  Value splat(RankedTensorType type, double value);
  Value half(Value x, Half which);
  Value regroup(Value x);
  Value ungroup(Value x, int64_t rowsPerHead);
  Value scores(Value q, Value k);
  Value maskScores(Value scores, Value mask);
  Value causalTile();
  Value visibleKeysMask(Value keys);
  Value ringStep(Value x, const std::string &why);
  /// The key and value block at hand and its keys' positions (if any);
  /// with `more`, `keys`, `values` and `positions` become the next
  /// block's, sent on now (before the step computes on this one, so that
  /// the transfer overlaps it).
  struct Block {
    Value k, v, at;
  };
  Block takeBlock(Value &keys, Value &values, Value &positions, bool more,
                  const std::string &why);
  Value rankAtOrAbove(int64_t step);
  Rows emptyRows(Value q, int64_t dv);
  Rows update(Rows rows, Value scores, Value v);
  Value select(Value cond, Value x, Value y) {
    return SelectOp::create(e.b, loc, cond, x, y);
  }
  Value concatTokens(Value a, Value b) {
    return ConcatOp::create(e.b, loc, ValueRange{a, b}, 2);
  }

  AxisPartitioner &p;
  OpEmitter e;
  Location loc;
  /// Per attention: heads, key/value heads, this rank's tokens, a chunk's.
  int64_t heads = 0, kvHeads = 0, tokens = 0, chunk = 0;
  double scale = 1;
  bool causal = false;
  /// Without a causal mask: the mask's rows of this rank's queries [..,
  /// tokens, all tokens], read at the keys' positions.
  Value maskRows;
  Type elementType;
};

/// The forward keeps, for the backward (which reads q, k and v as its
/// operands): the normalized result, the log-sum-exp of each query's
/// scores, and (a mask read at the keys' positions) this rank's positions.
enum KeptValue : unsigned { kOut, kLogSumExp, kPositions };

Value Ring::i64Constant(ArrayRef<int64_t> shape, ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get(shape, e.b.getI64Type());
  return ConstantOp::create(e.b, loc, DenseElementsAttr::get(type, values));
}

Value Ring::splat(RankedTensorType type, double value) {
  return ConstantOp::create(
      e.b, loc,
      DenseElementsAttr::get(type,
                             FloatAttr::get(type.getElementType(), value)));
}

/// Chunk "a" (the first half of this rank's tokens) or "b".
Value Ring::half(Value x, Half which) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> starts(type.getRank(), 0), sizes(type.getShape()),
      strides(type.getRank(), 1);
  sizes[2] /= 2;
  starts[2] = which == Half::A ? 0 : sizes[2];
  return SliceOp::create(e.b, loc, x, starts, sizes, strides);
}

/// [batch, heads, n, z] as [batch, kv_heads, group * n, z]: each key/value
/// head's query heads as one block of rows (heads are kv-major).
Value Ring::regroup(Value x) {
  ArrayRef<int64_t> s = cast<RankedTensorType>(x.getType()).getShape();
  return e.reshape(x, {s[0], kvHeads, s[1] / kvHeads * s[2], s[3]});
}

Value Ring::ungroup(Value x, int64_t rowsPerHead) {
  ArrayRef<int64_t> s = cast<RankedTensorType>(x.getType()).getShape();
  return e.reshape(x, {s[0], heads, rowsPerHead, s[3]});
}

/// q k^T scale, [batch, heads, queries, keys], for q [batch, heads,
/// queries, d] and k [batch, kv_heads, keys, d].
Value Ring::scores(Value q, Value k) {
  int64_t queries = cast<RankedTensorType>(q.getType()).getDimSize(2);
  Value s = MatmulOp::create(e.b, loc, regroup(q), k, false, true);
  return e.mul(ungroup(s, queries), e.scalar(scale, q));
}

Value Ring::maskScores(Value s, Value mask) {
  if (!mask)
    return s;
  if (cast<RankedTensorType>(mask.getType()).getElementType().isInteger(1))
    return select(mask, s,
                  e.scalar(-std::numeric_limits<double>::infinity(), s));
  return e.add(s, mask);
}

/// The causal mask within one chunk (a diagonal tile): key j <= query i.
Value Ring::causalTile() {
  SmallVector<bool> bits;
  for (int64_t i = 0; i < chunk; ++i)
    for (int64_t j = 0; j < chunk; ++j)
      bits.push_back(j <= i);
  auto type = RankedTensorType::get({chunk, chunk}, e.b.getI1Type());
  return ConstantOp::create(e.b, loc, DenseElementsAttr::get(type, bits));
}

/// The mask's rows of this rank's queries at the positions `keys` of the
/// block at hand.
Value Ring::visibleKeysMask(Value keys) {
  if (!maskRows)
    return Value();
  auto type = cast<RankedTensorType>(maskRows.getType());
  int64_t last = type.getRank() - 1;
  SmallVector<int64_t> shape(type.getShape());
  shape[last] = tokens;
  return GatherOp::create(e.b, loc, type.clone(shape), maskRows, keys,
                          e.b.getI64IntegerAttr(last));
}

/// `x` from the previous rank of the ring, `x` to the next.
Value Ring::ringStep(Value x, const std::string &why) {
  auto op = SendRecvOp::create(
      e.b, loc, x.getType(), x, p.getMeshAttr(), e.b.getStringAttr(p.getAxis()),
      e.b.getI64IntegerAttr(1), e.b.getStringAttr(why));
  return op.getResult();
}

Ring::Block Ring::takeBlock(Value &keys, Value &values, Value &positions,
                            bool more, const std::string &why) {
  Block block{keys, values, positions};
  if (more) {
    keys = ringStep(keys, why);
    values = ringStep(values, why);
    if (positions)
      positions = ringStep(positions, why);
  }
  return block;
}

/// Whether this rank's index is at least `step` (then the block `step`
/// ranks behind it came from a lower rank: its "a" keys are seen by all
/// this rank's queries), a scalar i1.
Value Ring::rankAtOrAbove(int64_t step) {
  Value rank = p.chunkStart(1, e.b.getI64Type(), loc);
  return CompareOp::create(e.b, loc, ComparisonPredicate::GE, rank,
                           i64Constant({}, {step}));
}

Ring::Rows Ring::emptyRows(Value q, int64_t dv) {
  auto type = cast<RankedTensorType>(q.getType());
  ArrayRef<int64_t> s = type.getShape();
  auto column = type.clone({s[0], s[1], s[2], 1});
  // The lowest finite value, not -inf: a row every key so far masks keeps
  // a zero sum rather than make exp(-inf - -inf).
  double lowest =
      APFloat::getLargest(cast<FloatType>(elementType).getFloatSemantics(),
                          /*Negative=*/true)
          .convertToDouble();
  return {splat(column, lowest), splat(column, 0),
          splat(type.clone({s[0], s[1], s[2], dv}), 0)};
}

/// The online softmax's step: `rows` after the (masked) `scores` of one
/// block of keys, whose values are `v`.
Ring::Rows Ring::update(Rows rows, Value s, Value v) {
  int64_t queries = cast<RankedTensorType>(s.getType()).getDimSize(2);
  Value max = e.max(rows.max, e.reduceMax(s, {3}));
  Value probs = e.exp(e.sub(s, max));
  Value rescale = e.exp(e.sub(rows.max, max));
  Value sum = e.add(e.mul(rows.sum, rescale),
                    e.reduceSum(probs, {3}, /*keepDims=*/true));
  Value weighted = ungroup(
      MatmulOp::create(e.b, loc, regroup(probs), v, false, false), queries);
  return {max, sum, e.add(e.mul(rows.out, rescale), weighted)};
}

template <typename OpTy> LogicalResult Ring::setUp(OpTy op) {
  auto q = op.getQ().getType();
  heads = q.getDimSize(1);
  kvHeads = op.getK().getType().getDimSize(1);
  tokens = q.getDimSize(2);
  chunk = tokens / 2;
  scale = op.getScale().convertToDouble();
  elementType = q.getElementType();
  int64_t all = tokens * p.getRanks();
  causal = isCausalMask(op.getMask(), op.getMaskedValue(), all);
  if (!causal && op.getMask()) {
    // This rank's query rows of the mask (cut from the zigzag order by the
    // engine), read at the keys' positions; a mask made from split inputs
    // (a padding mask) is gathered first.
    OpOperand &mask = op.getMaskMutable()[0];
    if (p.layoutOf(mask).isSplit())
      p.gatherOperand(mask, p.getPurpose() + ": ring attention reads " +
                                describeOp(op) + "'s mask at every key");
    auto maskType = cast<RankedTensorType>(mask.get().getType());
    int64_t queryDim = maskType.getRank() - 2;
    if (queryDim >= 0 && maskType.getDimSize(queryDim) == all &&
        failed(p.localize(mask, queryDim)))
      return failure();
    maskRows = mask.get();
  }
  e.b.setInsertionPoint(op);
  return success();
}

LogicalResult Ring::forward(AttentionOp op) {
  if (failed(setUp(op)))
    return failure();
  int64_t all = tokens * p.getRanks();
  int64_t dv = op.getV().getType().getDimSize(3);
  std::string why = p.getPurpose() + ": ring attention passes " +
                    describeOp(op) + "'s keys and values on";
  OpBuilder &b = e.b;
  Value queries = op.getQ(), keys = op.getK(), values = op.getV();
  Value positions;
  if (maskRows) {
    // This rank's tokens' positions, to read the keys' columns at.
    Value order = i64Constant({all}, zigzagOrder(all, p.getRanks()));
    positions = ShardOp::create(
        b, loc, RankedTensorType::get({tokens}, b.getI64Type()), order,
        p.getMeshAttr(), b.getStrArrayAttr({p.getAxis()}),
        b.getI64IntegerAttr(0), b.getI64IntegerAttr(1),
        b.getStringAttr("this rank's token positions"));
  }

  Value result, logSumExp;
  int64_t ranks = p.getRanks();
  if (causal) {
    Value qa = half(queries, Half::A), qb = half(queries, Half::B);
    Rows a = emptyRows(qa, dv), rowsB = emptyRows(qb, dv);
    Value diagonal = causalTile();
    for (int64_t step = 0; step < ranks; ++step) {
      Block block = takeBlock(keys, values, positions, step + 1 < ranks, why);
      Value ka = half(block.k, Half::A), kb = half(block.k, Half::B);
      Value va = half(block.v, Half::A), vb = half(block.v, Half::B);
      // Every "b" query sees every "a" key of every block.
      if (step == 0) {
        a = update(a, maskScores(scores(qa, ka), diagonal), va);
        rowsB = update(rowsB, scores(qb, ka), va);
        rowsB = update(rowsB, maskScores(scores(qb, kb), diagonal), vb);
        continue;
      }
      rowsB = update(rowsB, scores(qb, ka), va);
      // The other whole tile: (a, a) from a lower rank, else (b, b).
      Value lower = rankAtOrAbove(step);
      Rows picked = {select(lower, a.max, rowsB.max),
                     select(lower, a.sum, rowsB.sum),
                     select(lower, a.out, rowsB.out)};
      Rows next =
          update(picked, scores(select(lower, qa, qb), select(lower, ka, kb)),
                 select(lower, va, vb));
      a = {select(lower, next.max, a.max), select(lower, next.sum, a.sum),
           select(lower, next.out, a.out)};
      rowsB = {select(lower, rowsB.max, next.max),
               select(lower, rowsB.sum, next.sum),
               select(lower, rowsB.out, next.out)};
    }
    result = concatTokens(e.div(a.out, a.sum), e.div(rowsB.out, rowsB.sum));
    logSumExp = concatTokens(e.add(a.max, e.log(a.sum)),
                             e.add(rowsB.max, e.log(rowsB.sum)));
  } else {
    Rows rows = emptyRows(queries, dv);
    Value blockPositions = positions;
    for (int64_t step = 0; step < ranks; ++step) {
      Block block =
          takeBlock(keys, values, blockPositions, step + 1 < ranks, why);
      Value s = scores(queries, block.k);
      rows =
          update(rows, block.at ? maskScores(s, visibleKeysMask(block.at)) : s,
                 block.v);
    }
    result = e.div(rows.out, rows.sum);
    logSumExp = e.add(rows.max, e.log(rows.sum));
  }
  op.getResult().replaceAllUsesWith(result);
  p.setLayout(result, AxisLayout::split(2));
  p.patternState(op) = {result, logSumExp, positions};
  if (op.getProbs().use_empty())
    p.eraseLater(op);
  return success();
}

/// FlashAttention's backward for one tile: the probabilities again from
/// the scores and the query's log-sum-exp, dV = P^T dO, dS = P (dO v^T -
/// delta) scale (delta = rowsum(dO out)), dQ = dS k, dK = dS^T q.
Ring::TileGrads Ring::tileGrads(Value q, Value dOut, Value logSumExp,
                                Value delta, Value k, Value v, Value mask) {
  int64_t queries = cast<RankedTensorType>(q.getType()).getDimSize(2);
  Value probs = e.exp(e.sub(maskScores(scores(q, k), mask), logSumExp));
  Value dV =
      MatmulOp::create(e.b, loc, regroup(probs), regroup(dOut), true, false);
  Value dProbs = ungroup(
      MatmulOp::create(e.b, loc, regroup(dOut), v, false, true), queries);
  Value dScores = e.mul(e.mul(probs, e.sub(dProbs, delta)), e.scalar(scale, q));
  Value dQ = ungroup(
      MatmulOp::create(e.b, loc, regroup(dScores), k, false, false), queries);
  Value dK =
      MatmulOp::create(e.b, loc, regroup(dScores), regroup(q), true, false);
  return {dQ, dK, dV};
}

LogicalResult Ring::backward(AttentionGradOp op, ArrayRef<Value> kept) {
  if (failed(setUp(op)))
    return failure();
  std::string keysWhy = p.getPurpose() + ": ring attention passes " +
                        describeOp(op) + "'s keys and values on",
              gradsWhy = p.getPurpose() + ": ring attention passes " +
                         describeOp(op) +
                         "'s key and value gradients on with their block";
  Value queries = op.getQ(), keys = op.getK(), values = op.getV();
  Value positions = kept[kPositions];
  Value dOut = op.getResultGrad(), logSumExp = kept[kLogSumExp];
  Value delta = e.reduceSum(e.mul(dOut, kept[kOut]), {3}, /*keepDims=*/true);
  auto zerosLike = [&](Value x) {
    return splat(cast<RankedTensorType>(x.getType()), 0);
  };
  int64_t ranks = p.getRanks();
  Value dQ, dK, dV;
  if (causal) {
    Value qa = half(queries, Half::A), qb = half(queries, Half::B);
    Value oa = half(dOut, Half::A), ob = half(dOut, Half::B);
    Value la = half(logSumExp, Half::A), lb = half(logSumExp, Half::B);
    Value da = half(delta, Half::A), db = half(delta, Half::B);
    Value dqa = zerosLike(qa), dqb = zerosLike(qb);
    // The gradients of the keys and values at hand, which travel with them.
    Value dka = zerosLike(half(keys, Half::A)), dkb = dka;
    Value dva = zerosLike(half(values, Half::A)), dvb = dva;
    Value diagonal = causalTile();
    for (int64_t step = 0; step < ranks; ++step) {
      Block block =
          takeBlock(keys, values, positions, step + 1 < ranks, keysWhy);
      Value ka = half(block.k, Half::A), kb = half(block.k, Half::B);
      Value va = half(block.v, Half::A), vb = half(block.v, Half::B);
      auto add = [&](Value &acc, Value grad) { acc = e.add(acc, grad); };
      TileGrads t = tileGrads(qb, ob, lb, db, ka, va, Value());
      add(dqb, t.q);
      add(dka, t.k);
      add(dva, t.v);
      if (step == 0) {
        t = tileGrads(qa, oa, la, da, ka, va, diagonal);
        add(dqa, t.q);
        add(dka, t.k);
        add(dva, t.v);
        t = tileGrads(qb, ob, lb, db, kb, vb, diagonal);
        add(dqb, t.q);
        add(dkb, t.k);
        add(dvb, t.v);
      } else {
        Value lower = rankAtOrAbove(step);
        auto pick = [&](Value x, Value y) { return select(lower, x, y); };
        t = tileGrads(pick(qa, qb), pick(oa, ob), pick(la, lb), pick(da, db),
                      pick(ka, kb), pick(va, vb), Value());
        // Into (a, a) from a lower rank, else into (b, b).
        auto addPicked = [&](Value &x, Value &y, Value grad) {
          x = pick(e.add(x, grad), x);
          y = pick(y, e.add(y, grad));
        };
        addPicked(dqa, dqb, t.q);
        addPicked(dka, dkb, t.k);
        addPicked(dva, dvb, t.v);
      }
      dK = ringStep(concatTokens(dka, dkb), gradsWhy);
      dV = ringStep(concatTokens(dva, dvb), gradsWhy);
      if (step + 1 < ranks) {
        dka = half(dK, Half::A), dkb = half(dK, Half::B);
        dva = half(dV, Half::A), dvb = half(dV, Half::B);
      }
    }
    dQ = concatTokens(dqa, dqb);
  } else {
    dQ = zerosLike(queries);
    dK = zerosLike(keys);
    dV = zerosLike(values);
    for (int64_t step = 0; step < ranks; ++step) {
      Block block =
          takeBlock(keys, values, positions, step + 1 < ranks, keysWhy);
      TileGrads t = tileGrads(queries, dOut, logSumExp, delta, block.k, block.v,
                              block.at ? visibleKeysMask(block.at) : Value());
      dQ = e.add(dQ, t.q);
      dK = ringStep(e.add(dK, t.k), gradsWhy);
      dV = ringStep(e.add(dV, t.v), gradsWhy);
    }
  }
  Value grads[] = {dQ, dK, dV};
  for (auto [result, grad] : llvm::zip(op->getResults(), grads)) {
    result.replaceAllUsesWith(grad);
    p.setLayout(grad, AxisLayout::split(2));
  }
  return success();
}

} // namespace

std::string mlir::dtc::whyNoRingAttention(AxisPartitioner &p, AttentionOp op) {
  if (p.isAnalysis())
    return "ring attention has no analysis yet";
  if (op.getDropoutRatio() || op.getSoftcap())
    return "ring attention does not take attention dropout or a softcap yet";
  if (op.getQ().getType().getDimSize(2) % 2 != 0)
    return "ring attention's zigzag order needs " +
           std::to_string(2 * p.getRanks()) + " equal chunks of the sequence";
  for (Operation *user : op.getProbs().getUsers())
    if (!isa<AttentionGradOp>(user))
      return "its probabilities are read (by " + describeOp(user) +
             "), which ring attention never holds whole";
  return "";
}

LogicalResult mlir::dtc::partitionRingAttention(AxisPartitioner &p,
                                                AttentionOp op) {
  return Ring(p, op).forward(op);
}

LogicalResult mlir::dtc::partitionRingAttentionGrad(AxisPartitioner &p,
                                                    AttentionGradOp op) {
  auto forward = op.getProbs().getDefiningOp<AttentionOp>();
  SmallVector<Value> kept = p.patternState(forward);
  if (failed(Ring(p, op).backward(op, kept)))
    return failure();
  p.eraseLater(op);
  if (llvm::all_of(forward.getProbs().getUsers(),
                   [&](Operation *user) { return user == op.getOperation(); }))
    p.eraseLater(forward);
  return success();
}
