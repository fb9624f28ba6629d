//===- OpKernels.cpp - ops outside fusion groups as scf loop kernels ------===//
//
// Every buffer is flat (`memref<N x T>`): offsets are computed as the
// reference kernels compute them (outer x size x inner splits around a
// dimension, row-major strides), so each kernel reads like its reference
// counterpart. Float arithmetic is in the element type. Out-of-range
// indices are wrapped once (negative, as ONNX allows) and then clamped, so
// a bad index reads or writes a wrong element of the right tensor, never
// outside it; the reference executor names such an index.
//
//===----------------------------------------------------------------------===//

#include "dtc/Conversion/DTCToSCF.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

#include <functional>
#include <limits>

using namespace mlir;
using namespace mlir::dtc;

namespace {

using Shape = SmallVector<int64_t>;

Shape shapeOf(Value v) {
  return Shape(cast<RankedTensorType>(v.getType()).getShape());
}
Type elementOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}
/// The type a kernel computes `v`'s elements in (Emitter::loadC).
Type computeTypeOf(Value v) {
  Type t = elementOf(v);
  return isa<BFloat16Type, Float16Type>(t) ? Float32Type::get(v.getContext())
                                           : t;
}
int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}
Shape stridesOf(ArrayRef<int64_t> shape) {
  Shape strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// Loops, index arithmetic and flat loads and stores at one location.
struct Emitter {
  OpBuilder &b;
  Location loc;

  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value add(Value x, int64_t y) { return y ? add(x, c(y)) : x; }
  Value mul(Value x, int64_t y) { return y == 1 ? x : mul(x, c(y)); }
  Value load(Value buffer, Value at) {
    return memref::LoadOp::create(b, loc, buffer, ValueRange{at});
  }
  void store(Value value, Value buffer, Value at) {
    memref::StoreOp::create(b, loc, value, buffer, ValueRange{at});
  }
  /// A load for arithmetic: bf16 and f16 widened to f32, in which the
  /// kernels compute and accumulate (the reference accumulates in f64).
  Value loadC(Value buffer, Value at) {
    Value v = load(buffer, at);
    if (isa<BFloat16Type, Float16Type>(v.getType()))
      return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
    return v;
  }
  /// A store of a value computed by loadC's rule, rounded to the buffer's
  /// element type.
  void storeC(Value value, Value buffer, Value at) {
    Type element = cast<MemRefType>(buffer.getType()).getElementType();
    if (value.getType() != element)
      value = arith::TruncFOp::create(b, loc, element, value);
    store(value, buffer, at);
  }
  Value fconst(double v, Type t) {
    if (isa<FloatType>(t))
      return arith::ConstantOp::create(b, loc, t, b.getFloatAttr(t, v));
    return arith::ConstantOp::create(b, loc, t,
                                     b.getIntegerAttr(t, int64_t(v)));
  }
  Value fadd(Value x, Value y) {
    return isa<FloatType>(x.getType())
               ? Value(arith::AddFOp::create(b, loc, x, y))
               : Value(arith::AddIOp::create(b, loc, x, y));
  }
  Value fsub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value fmul(Value x, Value y) {
    return isa<FloatType>(x.getType())
               ? Value(arith::MulFOp::create(b, loc, x, y))
               : Value(arith::MulIOp::create(b, loc, x, y));
  }
  Value fdiv(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value exp(Value x) { return math::ExpOp::create(b, loc, x); }

  /// for (i = 0; i < n; ++i) body(i).
  void loop(int64_t n, function_ref<void(Value)> body) {
    emitFor(b, loc, 0, n, 1, {}, [&](Value i, ValueRange) {
      body(i);
      return SmallVector<Value>();
    });
  }
  /// accs = inits; for (i = from; i < to; ++i) accs = body(i, accs);
  /// returns accs.
  SmallVector<Value>
  foldAll(int64_t from, int64_t to, ValueRange inits,
          function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    return emitFor(b, loc, from, to, 1, inits, body);
  }
  /// init + term(0) + ... + term(n - 1), and the largest of init and the
  /// terms (NaN if any is), folded in lanes (emitLaneFold).
  Value sum(int64_t n, Value init, function_ref<Value(Value)> term) {
    return emitLaneFold(
        b, loc, n, init, [&](Value i, Value acc) { return fadd(acc, term(i)); },
        [&](Value x, Value y) { return fadd(x, y); });
  }
  Value maximum(int64_t n, Value init, function_ref<Value(Value)> term) {
    auto max = [&](Value x, Value y) { return emitMax(b, loc, x, y); };
    return emitLaneFold(
        b, loc, n, init, [&](Value i, Value acc) { return max(acc, term(i)); },
        max);
  }
  /// acc = init; for (i = 0; i < n; ++i) acc = body(i, acc); returns acc.
  Value fold(int64_t n, Value init, function_ref<Value(Value, Value)> body) {
    return foldAll(0, n, init, [&](Value i, ValueRange acc) {
      return SmallVector<Value>{body(i, acc[0])};
    })[0];
  }
  /// `when ? yes : no`, value by value.
  SmallVector<Value> select(Value when, ValueRange yes, ValueRange no) {
    SmallVector<Value> out;
    for (auto [y, n] : llvm::zip(yes, no))
      out.push_back(arith::SelectOp::create(b, loc, when, y, n));
    return out;
  }
  /// Loops over every index of `shape`, row-major; body(indexes).
  void forEach(ArrayRef<int64_t> shape, function_ref<void(ValueRange)> body,
               SmallVector<Value> outer = {}) {
    if (outer.size() == shape.size())
      return body(outer);
    loop(shape[outer.size()], [&](Value i) {
      SmallVector<Value> indexes(outer);
      indexes.push_back(i);
      forEach(shape, body, indexes);
    });
  }
  /// The flat offset of `indexes` under `strides`.
  Value offset(ValueRange indexes, ArrayRef<int64_t> strides,
               int64_t base = 0) {
    Value at = c(base);
    for (auto [index, stride] : llvm::zip(indexes, strides))
      if (stride)
        at = add(at, mul(index, stride));
    return at;
  }
  /// copies n elements from[fromAt + i] to to[toAt + i].
  void copy(Value from, Value fromAt, Value to, Value toAt, int64_t n) {
    loop(n,
         [&](Value i) { store(load(from, add(fromAt, i)), to, add(toAt, i)); });
  }
  /// An index tensor's element as an index in [0, size): negative ones
  /// wrapped once, then clamped.
  Value wrapIndex(Value raw, int64_t size) {
    Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
    Value negative =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, c(0));
    i = arith::SelectOp::create(b, loc, negative, add(i, c(size)), i);
    i = arith::MaxSIOp::create(b, loc, i, c(0));
    return arith::MinSIOp::create(b, loc, i, c(size - 1));
  }
};

/// The offset in a tensor of `from` that element `indexes` of its
/// broadcast to `to` reads (numpy broadcasting).
Value broadcastOffset(Emitter &e, ValueRange indexes, ArrayRef<int64_t> from,
                      ArrayRef<int64_t> to) {
  Shape strides = stridesOf(from);
  int64_t lead = to.size() - from.size();
  Value at = e.c(0);
  for (size_t d = 0; d < from.size(); ++d)
    if (from[d] != 1)
      at = e.add(at, e.mul(indexes[lead + d], strides[d]));
  return at;
}

/// The kernels' arguments: operands then results.
struct Buffers {
  SmallVector<Value> in, out;
};

/// A transpose that moves the input's innermost dimension (a weight's
/// [n, k] -> [k, n]) copies tiles of kTransposeTile x kTransposeTile
/// elements, so that both its reads and its writes stay within a few
/// cache lines; one that keeps it copies in the output's order.
constexpr int64_t kTransposeTile = 16;

void transposeKernel(Emitter &e, TransposeOp op, Buffers &buf) {
  Shape inStrides = stridesOf(shapeOf(op.getInput()));
  Shape out = shapeOf(op.getResult());
  ArrayRef<int64_t> permutation = op.getPermutation();
  Shape step;
  for (int64_t p : permutation)
    step.push_back(inStrides[p]);
  Shape outStrides = stridesOf(out);
  auto copy = [&](ValueRange idx) {
    e.store(e.load(buf.in[0], e.offset(idx, step)), buf.out[0],
            e.offset(idx, outStrides));
  };
  // The output dimensions that are the input's innermost (a) and its own
  // (b).
  auto rank = static_cast<int64_t>(out.size());
  int64_t b = rank - 1, a = llvm::find(permutation, b) - permutation.begin();
  if (rank < 2 || a == b || out[a] % kTransposeTile ||
      out[b] % kTransposeTile) {
    e.forEach(out, copy);
    return;
  }
  // Every dimension in order, a and b by tiles, then within a tile.
  Shape loops(out);
  loops[a] /= kTransposeTile;
  loops[b] /= kTransposeTile;
  loops.append({kTransposeTile, kTransposeTile});
  e.forEach(loops, [&](ValueRange at) {
    SmallVector<Value> idx(at.take_front(rank));
    idx[a] = e.add(e.mul(at[a], kTransposeTile), at[rank]);
    idx[b] = e.add(e.mul(at[b], kTransposeTile), at[rank + 1]);
    copy(idx);
  });
}

/// out[idx] = in[base + idx * step] over `out`'s shape (slices, splits).
void windowRead(Emitter &e, Value in, ArrayRef<int64_t> inShape, Value out,
                ArrayRef<int64_t> outShape, ArrayRef<int64_t> base,
                ArrayRef<int64_t> step) {
  Shape inStrides = stridesOf(inShape), outStrides = stridesOf(outShape);
  int64_t origin = 0;
  Shape delta;
  for (size_t d = 0; d < outShape.size(); ++d) {
    origin += base[d] * inStrides[d];
    delta.push_back(step[d] * inStrides[d]);
  }
  e.forEach(outShape, [&](ValueRange idx) {
    e.store(e.load(in, e.offset(idx, delta, origin)), out,
            e.offset(idx, outStrides));
  });
}

void concatKernel(Emitter &e, ConcatOp op, Buffers &buf) {
  DimSplit outSplit = splitAt(shapeOf(op.getResult()), op.getDim());
  int64_t position = 0;
  for (auto [input, buffer] : llvm::zip(op.getInputs(), buf.in)) {
    DimSplit split = splitAt(shapeOf(input), op.getDim());
    e.loop(split.outer, [&](Value o) {
      e.copy(buffer, e.mul(o, split.size * split.inner), buf.out[0],
             e.add(e.mul(o, outSplit.size * outSplit.inner),
                   position * outSplit.inner),
             split.size * split.inner);
    });
    position += split.size;
  }
}

/// For gather and the scatters: calls visit(offset in the big tensor,
/// offset in the gathered one) for every element of a gather of `shape`
/// along `dim` by `indices`.
void forEachGathered(Emitter &e, ArrayRef<int64_t> shape, Value indices,
                     int64_t numIndices, int64_t dim,
                     function_ref<void(Value, Value)> visit) {
  DimSplit split = splitAt(shape, dim);
  e.loop(split.outer, [&](Value o) {
    e.loop(numIndices, [&](Value n) {
      Value index = e.wrapIndex(e.load(indices, n), split.size);
      Value big = e.mul(e.add(e.mul(o, split.size), index), split.inner);
      Value small = e.mul(e.add(e.mul(o, numIndices), n), split.inner);
      e.loop(split.inner,
             [&](Value k) { visit(e.add(big, k), e.add(small, k)); });
    });
  });
}

/// How a scatter combines an update into an element.
Value combine(Emitter &e, Operation *op, Value old, Value update) {
  auto scatter = dyn_cast<ScatterReduceOp>(op);
  if (!scatter)
    return e.fadd(old, update);
  switch (scatter.getKind()) {
  case ScatterReduction::Mul:
    return e.fmul(old, update);
  case ScatterReduction::Max:
    return emitMax(e.b, e.loc, old, update);
  case ScatterReduction::Min:
    return emitMin(e.b, e.loc, old, update);
  }
  return old;
}

/// gather_elements / scatter_elements_add: visit(offset in the big tensor,
/// offset in indices).
void forEachElementIndex(Emitter &e, ArrayRef<int64_t> shape, Value indices,
                         ArrayRef<int64_t> indexShape, int64_t dim,
                         function_ref<void(Value, Value)> visit) {
  Shape strides = stridesOf(shape), indexStrides = stridesOf(indexShape);
  e.forEach(indexShape, [&](ValueRange idx) {
    Value own = e.offset(idx, indexStrides);
    Value target = e.wrapIndex(e.load(indices, own), shape[dim]);
    SmallVector<Value> at(idx);
    at[dim] = target;
    visit(e.offset(at, strides), own);
  });
}

enum class ReduceKind { Sum, Mean, Max, Min };

ReduceKind reduceKindOf(ReduceSumOp) { return ReduceKind::Sum; }
ReduceKind reduceKindOf(ReduceMeanOp) { return ReduceKind::Mean; }
ReduceKind reduceKindOf(ReduceMaxOp) { return ReduceKind::Max; }
ReduceKind reduceKindOf(ReduceMinOp) { return ReduceKind::Min; }

/// The width of the blocks of columns a reduction over the leading
/// dimensions of `shape` (every reduced dimension before every kept one,
/// size-1 dimensions aside) folds at once: 64, 32 or 16 where that divides
/// the columns into several blocks (for threads), else all its columns up
/// to 256; none for another reduction.
std::optional<int64_t> columnBlock(ArrayRef<int64_t> shape,
                                   ArrayRef<int64_t> dims) {
  int64_t lastReduced = -1, firstKept = static_cast<int64_t>(shape.size()),
          columns = 1;
  for (auto [d, size] : llvm::enumerate(shape)) {
    auto dim = static_cast<int64_t>(d);
    if (size == 1)
      continue;
    if (llvm::is_contained(dims, dim)) {
      lastReduced = dim;
    } else {
      firstKept = std::min(firstKept, dim);
      columns *= size;
    }
  }
  if (lastReduced < 0 || lastReduced > firstKept || columns < 2)
    return std::nullopt;
  for (int64_t width : {64, 32, 16})
    if (columns % width == 0 && columns > width)
      return width;
  if (columns <= 256)
    return columns;
  return std::nullopt;
}

void reduceKernel(Emitter &e, Operation *op, ArrayRef<int64_t> dims,
                  ReduceKind kind, Buffers &buf) {
  Value input = op->getOperand(0);
  Shape shape = shapeOf(input), kept = shape;
  int64_t count = 1;
  for (int64_t d : dims) {
    count *= kept[d];
    kept[d] = 1;
  }
  Type t = computeTypeOf(input);
  bool isFloat = isa<FloatType>(t);
  double inf = std::numeric_limits<double>::infinity();
  Value init;
  if (kind == ReduceKind::Sum || kind == ReduceKind::Mean)
    init = e.fconst(0, t);
  else if (isFloat)
    init = e.fconst(kind == ReduceKind::Max ? -inf : inf, t);
  else {
    unsigned width = t.getIntOrFloatBitWidth();
    APInt bound = kind == ReduceKind::Max ? APInt::getSignedMinValue(width)
                                          : APInt::getSignedMaxValue(width);
    init =
        arith::ConstantOp::create(e.b, e.loc, t, e.b.getIntegerAttr(t, bound));
  }
  // Each result element folds its reduced elements in registers, in the
  // compute type (a bf16 sum is not rounded at each step).
  SmallVector<int64_t> sortedDims(dims);
  llvm::sort(sortedDims);
  Shape reduced;
  for (int64_t d : sortedDims)
    reduced.push_back(shape[d]);
  Shape inStrides = stridesOf(shape), outStrides = stridesOf(kept);
  // Size-1 dimensions of the result (the reduced ones among them) get no
  // loop, so that the outermost loop runs over a kept dimension threads can
  // share: a bias gradient's sum over the tokens is one row of many
  // columns.
  SmallVector<int64_t> loopDims;
  Shape loopShape;
  for (auto [d, size] : llvm::enumerate(kept))
    if (size != 1) {
      loopDims.push_back(d);
      loopShape.push_back(size);
    }
  auto combine = [&](Value acc, Value x) -> Value {
    if (kind == ReduceKind::Max)
      return emitMax(e.b, e.loc, acc, x);
    if (kind == ReduceKind::Min)
      return emitMin(e.b, e.loc, acc, x);
    return e.fadd(acc, x);
  };
  auto finish = [&](Value acc) {
    if (kind != ReduceKind::Mean)
      return acc;
    Value n = e.fconst(count, t);
    return isFloat ? e.fdiv(acc, n)
                   : Value(arith::DivSIOp::create(e.b, e.loc, acc, n));
  };
  if (std::optional<int64_t> width = columnBlock(shape, dims)) {
    // Over leading dimensions (a bias gradient's sum over the tokens):
    // blocks of columns outermost, for threads to share; in each, the rows
    // fold into a stack row of partial results, columns innermost, so that
    // loads are contiguous and vectorize, and each column folds its rows in
    // order as a loop per column would.
    int64_t columns = product(kept), rows = product(shape) / columns;
    Value partial =
        memref::AllocaOp::create(e.b, e.loc, MemRefType::get({*width}, t));
    e.loop(columns / *width, [&](Value block) {
      Value first = e.mul(block, *width);
      e.loop(*width, [&](Value c) { e.store(init, partial, c); });
      e.loop(rows, [&](Value r) {
        Value row = e.add(e.mul(r, columns), first);
        e.loop(*width, [&](Value c) {
          e.store(
              combine(e.load(partial, c), e.loadC(buf.in[0], e.add(row, c))),
              partial, c);
        });
      });
      e.loop(*width, [&](Value c) {
        e.storeC(finish(e.load(partial, c)), buf.out[0], e.add(first, c));
      });
    });
    return;
  }
  e.forEach(loopShape, [&](ValueRange loopIdx) {
    SmallVector<Value> outIdx(kept.size(), e.c(0));
    for (auto [d, index] : llvm::zip(loopDims, loopIdx))
      outIdx[d] = index;
    auto element = [&](ValueRange r) {
      SmallVector<Value> idx(outIdx);
      for (auto [d, index] : llvm::zip(sortedDims, r))
        idx[d] = index;
      return e.loadC(buf.in[0], e.offset(idx, inStrides));
    };
    Value acc = emitFoldOver(
        e.b, e.loc, reduced, init,
        [&](ValueRange r, Value acc) { return combine(acc, element(r)); },
        combine);
    e.storeC(finish(acc), buf.out[0], e.offset(outIdx, outStrides));
  });
}

/// Softmax or log-softmax along `dim`, the maximum subtracted first.
void softmaxKernel(Emitter &e, Operation *op, int64_t dim, bool logarithm,
                   Buffers &buf) {
  DimSplit s = splitAt(shapeOf(op->getOperand(0)), dim);
  Type t = computeTypeOf(op->getOperand(0));
  double inf = std::numeric_limits<double>::infinity();
  e.loop(s.outer, [&](Value o) {
    e.loop(s.inner, [&](Value k) {
      Value base = e.add(e.mul(o, s.size * s.inner), k);
      auto at = [&](Value j) { return e.add(base, e.mul(j, s.inner)); };
      Value max = e.maximum(s.size, e.fconst(-inf, t),
                            [&](Value j) { return e.loadC(buf.in[0], at(j)); });
      Value sum = e.sum(s.size, e.fconst(0, t), [&](Value j) {
        return e.exp(e.fsub(e.loadC(buf.in[0], at(j)), max));
      });
      Value logSum =
          logarithm ? Value(math::LogOp::create(e.b, e.loc, sum)) : Value();
      e.loop(s.size, [&](Value j) {
        Value shifted = e.fsub(e.loadC(buf.in[0], at(j)), max);
        e.storeC(logarithm ? e.fsub(shifted, logSum)
                           : e.fdiv(e.exp(shifted), sum),
                 buf.out[0], at(j));
      });
    });
  });
}

/// Layer norm (`withMean`: its mean and 1/stddev too) or RMS norm over
/// the trailing dimensions from `dim`.
void normKernel(Emitter &e, Operation *op, int64_t dim, double epsilon,
                bool withMean, Buffers &buf) {
  Shape shape = shapeOf(op->getOperand(0));
  int64_t rows = product(ArrayRef<int64_t>(shape).take_front(dim));
  int64_t width = product(ArrayRef<int64_t>(shape).drop_front(dim));
  Type t = computeTypeOf(op->getOperand(0));
  bool hasBias = op->getNumOperands() > 2;
  e.loop(rows, [&](Value r) {
    Value base = e.mul(r, width);
    auto x = [&](Value j) { return e.loadC(buf.in[0], e.add(base, j)); };
    Value mu = e.fconst(0, t);
    if (withMean)
      mu = e.fdiv(e.sum(width, mu, x), e.fconst(width, t));
    Value var = e.fdiv(e.sum(width, e.fconst(0, t),
                             [&](Value j) {
                               Value d = e.fsub(x(j), mu);
                               return e.fmul(d, d);
                             }),
                       e.fconst(width, t));
    Value inv =
        math::RsqrtOp::create(e.b, e.loc, e.fadd(var, e.fconst(epsilon, t)));
    e.loop(width, [&](Value j) {
      Value y = e.fmul(e.fmul(e.fsub(x(j), mu), inv), e.loadC(buf.in[1], j));
      if (hasBias)
        y = e.fadd(y, e.loadC(buf.in[2], j));
      e.storeC(y, buf.out[0], e.add(base, j));
    });
    if (withMean) {
      e.storeC(mu, buf.out[1], r);
      e.storeC(inv, buf.out[2], r);
    }
  });
}

void rotaryKernel(Emitter &e, RotaryOp op, Buffers &buf) {
  Shape shape = shapeOf(op.getInput());
  int64_t half = op.getRotaryDim() / 2;
  Shape pairs = shape;
  pairs.back() = half;
  Shape cosShape = shapeOf(op.getCos()), sinShape = shapeOf(op.getSin());
  bool interleaved = op.getInterleaved();
  int64_t n = product(shape);
  e.copy(buf.in[0], e.c(0), buf.out[0], e.c(0), n);
  Shape strides = stridesOf(shape);
  e.forEach(pairs, [&](ValueRange idx) {
    SmallVector<Value> row(idx.drop_back());
    row.push_back(e.c(0));
    Value base = e.offset(row, strides);
    Value i = idx.back();
    Value first = e.add(base, interleaved ? e.mul(i, 2) : i);
    Value second = interleaved ? e.add(first, e.c(1)) : e.add(first, e.c(half));
    Value c = e.loadC(buf.in[1], broadcastOffset(e, idx, cosShape, pairs));
    Value s = e.loadC(buf.in[2], broadcastOffset(e, idx, sinShape, pairs));
    Value x1 = e.loadC(buf.in[0], first), x2 = e.loadC(buf.in[0], second);
    e.storeC(e.fsub(e.fmul(x1, c), e.fmul(x2, s)), buf.out[0], first);
    e.storeC(e.fadd(e.fmul(x2, c), e.fmul(x1, s)), buf.out[0], second);
  });
}

/// One query row at a time: scores into the probabilities' row, a stable
/// softmax there, then the weighted values.
LogicalResult attentionKernel(Emitter &e, AttentionOp op, Buffers &buf) {
  Shape q = shapeOf(op.getQ()), k = shapeOf(op.getK()), v = shapeOf(op.getV());
  int64_t batch = q[0], heads = q[1], queries = q[2], d = q[3], kvHeads = k[1],
          keys = k[2], dv = v[3], group = heads / kvHeads;
  Shape scores{batch, heads, queries, keys};
  Type t = computeTypeOf(op.getQ());
  Value mask = op.getMask() ? buf.in[3] : Value();
  // Dropout on the probabilities: its step and, for a part of a larger
  // tensor, the part's offset follow the mask among the operands.
  unsigned next = op.getMask() ? 4 : 3;
  Value dropStep = op.getDropoutRatio() ? buf.in[next++] : Value();
  Value dropOffset = op.getOffset() ? buf.in[next] : Value();
  Shape whole = scores;
  if (auto global = op.getGlobalShape())
    whole.assign(global->begin(), global->end());
  Shape maskShape = mask ? shapeOf(op.getMask()) : Shape();
  bool floatMask = mask && isa<FloatType>(elementOf(op.getMask()));
  double inf = std::numeric_limits<double>::infinity();
  Value masked = e.fconst(
      op.getMaskedValue() ? op.getMaskedValue()->convertToDouble() : -inf, t);
  Value scale = e.fconst(op.getScale().convertToDouble(), t);
  std::optional<double> softcap;
  if (op.getSoftcap())
    softcap = op.getSoftcap()->convertToDouble();
  Value out = buf.out[0], probs = buf.out[1];
  // One row of scores, then weights, in the compute type (f32 for bf16):
  // the stored probabilities are rounded, the weights that multiply V not.
  Value scratch =
      memref::AllocaOp::create(e.b, e.loc, MemRefType::get({keys}, t));
  e.forEach({batch, heads, queries}, [&](ValueRange bhi) {
    Value b = bhi[0], h = bhi[1], i = bhi[2];
    Value qRow = e.mul(e.add(e.mul(e.add(e.mul(b, heads), h), queries), i), d);
    Value kv = e.add(e.mul(b, kvHeads),
                     arith::DivUIOp::create(e.b, e.loc, h, e.c(group)));
    Value row =
        e.mul(e.add(e.mul(e.add(e.mul(b, heads), h), queries), i), keys);
    Value max = e.fold(keys, e.fconst(-inf, t), [&](Value j, Value acc) {
      Value kRow = e.mul(e.add(e.mul(kv, keys), j), d);
      Value s = e.sum(d, e.fconst(0, t), [&](Value c) {
        return e.fmul(e.loadC(buf.in[0], e.add(qRow, c)),
                      e.loadC(buf.in[1], e.add(kRow, c)));
      });
      s = e.fmul(s, scale);
      if (softcap) {
        Value cap = e.fconst(*softcap, t);
        s = e.fmul(cap, math::TanhOp::create(e.b, e.loc, e.fdiv(s, cap)));
      }
      if (mask) {
        Value at = broadcastOffset(e, {b, h, i, j}, maskShape, scores);
        Value m = e.loadC(mask, at);
        s = floatMask
                ? e.fadd(s, m)
                : Value(arith::SelectOp::create(e.b, e.loc, m, s, masked));
      }
      e.store(s, scratch, j);
      return emitMax(e.b, e.loc, acc, s);
    });
    Value sum = e.sum(keys, e.fconst(0, t), [&](Value j) {
      Value p = e.exp(e.fsub(e.load(scratch, j), max));
      e.store(p, scratch, j);
      return p;
    });
    e.loop(keys, [&](Value j) {
      Value weight = e.fdiv(e.load(scratch, j), sum);
      e.storeC(weight, probs, e.add(row, j));
      if (dropStep)
        weight = emitDropout(
            e.b, e.loc, weight,
            emitWholeIndex(e.b, e.loc, {b, h, i, j}, whole, dropOffset),
            e.load(dropStep, e.c(0)), *op.getSeed(), *op.getStream(),
            op.getDropoutRatio()->convertToDouble());
      e.store(weight, scratch, j);
    });
    Value oRow = e.mul(e.add(e.mul(e.add(e.mul(b, heads), h), queries), i), dv);
    e.loop(dv, [&](Value c) {
      Value o = e.sum(keys, e.fconst(0, t), [&](Value j) {
        Value vAt = e.add(e.mul(e.add(e.mul(kv, keys), j), dv), c);
        return e.fmul(e.load(scratch, j), e.loadC(buf.in[2], vAt));
      });
      e.storeC(o, out, e.add(oRow, c));
    });
  });
  return success();
}

/// Each element's draw by its index in the whole tensor: the local index
/// plus this part's offset (an operand), row-major over the global shape.
void dropoutKernel(Emitter &e, DropoutOp op, Buffers &buf) {
  Shape local = shapeOf(op.getResult()), whole = local;
  if (auto global = op.getGlobalShape())
    whole.assign(global->begin(), global->end());
  Value step = e.load(buf.in[1], e.c(0));
  Value offsets = op.getOffset() ? buf.in[2] : Value();
  Shape strides = stridesOf(local);
  e.forEach(local, [&](ValueRange idx) {
    Value flat = e.offset(idx, strides);
    e.store(emitDropout(e.b, e.loc, e.load(buf.in[0], flat),
                        emitWholeIndex(e.b, e.loc, idx, whole, offsets), step,
                        op.getSeed(), op.getStream(),
                        op.getRatio().convertToDouble()),
            buf.out[0], flat);
  });
}

void argMaxKernel(Emitter &e, ArgMaxOp op, Buffers &buf) {
  DimSplit s = splitAt(shapeOf(op.getInput()), op.getDim());
  bool last = op.getSelectLastIndex();
  Type t = computeTypeOf(op.getInput());
  bool isFloat = isa<FloatType>(t);
  e.loop(s.outer, [&](Value o) {
    e.loop(s.inner, [&](Value k) {
      Value base = e.add(e.mul(o, s.size * s.inner), k);
      SmallVector<Value> found = e.foldAll(
          1, s.size, ValueRange{e.c(0), e.loadC(buf.in[0], base)},
          [&](Value j, ValueRange acc) {
            Value bestValue = acc[1];
            Value x = e.loadC(buf.in[0], e.add(base, e.mul(j, s.inner)));
            Value better;
            if (isFloat) {
              // NaN wins (the first, or the last with select_last_index).
              auto cmp = [&](arith::CmpFPredicate p, Value a, Value b2) {
                return arith::CmpFOp::create(e.b, e.loc, p, a, b2);
              };
              Value xNaN = cmp(arith::CmpFPredicate::UNO, x, x);
              Value bestNaN =
                  cmp(arith::CmpFPredicate::UNO, bestValue, bestValue);
              Value lastC = arith::ConstantIntOp::create(e.b, e.loc, last, 1);
              Value ifNaN = arith::OrIOp::create(
                  e.b, e.loc,
                  arith::XOrIOp::create(
                      e.b, e.loc, bestNaN,
                      arith::ConstantIntOp::create(e.b, e.loc, 1, 1)),
                  lastC);
              Value greater = cmp(last ? arith::CmpFPredicate::OGE
                                       : arith::CmpFPredicate::OGT,
                                  x, bestValue);
              Value notBestNaN = arith::XOrIOp::create(
                  e.b, e.loc, bestNaN,
                  arith::ConstantIntOp::create(e.b, e.loc, 1, 1));
              Value ifNumber =
                  arith::AndIOp::create(e.b, e.loc, notBestNaN, greater);
              better =
                  arith::SelectOp::create(e.b, e.loc, xNaN, ifNaN, ifNumber);
            } else {
              better = arith::CmpIOp::create(e.b, e.loc,
                                             last ? arith::CmpIPredicate::sge
                                                  : arith::CmpIPredicate::sgt,
                                             x, bestValue);
            }
            return e.select(better, {j, x}, acc);
          });
      Value index =
          arith::IndexCastOp::create(e.b, e.loc, e.b.getI64Type(), found[0]);
      e.storeC(index, buf.out[0], e.add(e.mul(o, s.inner), k));
    });
  });
}

/// top_k by k selection passes over each row, without scratch: pass j
/// takes the first element, in the order (value, then lower index), that
/// comes after pass j-1's. NaN orders above every number, as torch.topk
/// orders it (the reference's sort leaves NaN unordered).
void topKKernel(Emitter &e, TopKOp op, Buffers &buf) {
  DimSplit s = splitAt(shapeOf(op.getInput()), op.getDim());
  int64_t k = op.getK();
  bool smallest = op.getSmallest();
  Type t = computeTypeOf(op.getInput());
  bool isFloat = isa<FloatType>(t);
  auto orOf = [&](Value a, Value b) {
    return arith::OrIOp::create(e.b, e.loc, a, b);
  };
  auto andOf = [&](Value a, Value b) {
    return arith::AndIOp::create(e.b, e.loc, a, b);
  };
  auto fcmp = [&](arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(e.b, e.loc, p, x, y);
  };
  auto icmp = [&](arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(e.b, e.loc, p, x, y);
  };
  // a > b, NaN above every number.
  auto greater = [&](Value a, Value b) -> Value {
    if (!isFloat)
      return icmp(arith::CmpIPredicate::sgt, a, b);
    return orOf(andOf(fcmp(arith::CmpFPredicate::UNO, a, a),
                      fcmp(arith::CmpFPredicate::ORD, b, b)),
                fcmp(arith::CmpFPredicate::OGT, a, b));
  };
  auto equal = [&](Value a, Value b) -> Value {
    if (!isFloat)
      return icmp(arith::CmpIPredicate::eq, a, b);
    return orOf(fcmp(arith::CmpFPredicate::OEQ, a, b),
                andOf(fcmp(arith::CmpFPredicate::UNO, a, a),
                      fcmp(arith::CmpFPredicate::UNO, b, b)));
  };
  // Whether value a is taken before value b.
  auto before = [&](Value a, Value b) {
    return smallest ? greater(b, a) : greater(a, b);
  };
  Value none = e.c(-1);
  e.loop(s.outer, [&](Value o) {
    e.loop(s.inner, [&](Value i) {
      Value row = e.add(e.mul(o, s.size * s.inner), i);
      auto at = [&](Value j) { return e.add(row, e.mul(j, s.inner)); };
      // Each pass: (the index taken, its value), from the previous pass's.
      e.foldAll(
          0, k, ValueRange{none, e.fconst(0, t)},
          [&](Value pass, ValueRange previous) {
            Value prev = previous[0], prevValue = previous[1];
            Value first = icmp(arith::CmpIPredicate::eq, prev, none);
            SmallVector<Value> taken = e.foldAll(
                0, s.size, ValueRange{none, e.fconst(0, t)},
                [&](Value j, ValueRange best) {
                  Value x = e.loadC(buf.in[0], at(j));
                  Value after = orOf(
                      first,
                      orOf(before(prevValue, x),
                           andOf(equal(x, prevValue),
                                 icmp(arith::CmpIPredicate::sgt, j, prev))));
                  Value better = andOf(
                      after, orOf(icmp(arith::CmpIPredicate::eq, best[0], none),
                                  before(x, best[1])));
                  return e.select(better, {j, x}, best);
                });
            Value to = e.add(e.mul(e.add(e.mul(o, k), pass), s.inner), i);
            e.store(e.load(buf.in[0], at(taken[0])), buf.out[0], to);
            e.store(arith::IndexCastOp::create(e.b, e.loc, e.b.getI64Type(),
                                               taken[0]),
                    buf.out[1], to);
            return taken;
          });
    });
  });
}

void cumSumKernel(Emitter &e, CumSumOp op, Buffers &buf) {
  DimSplit s = splitAt(shapeOf(op.getInput()), op.getDim());
  bool exclusive = op.getExclusive(), reverse = op.getReverse();
  Type t = computeTypeOf(op.getInput());
  e.loop(s.outer, [&](Value o) {
    e.loop(s.inner, [&](Value k) {
      e.fold(s.size, e.fconst(0, t), [&](Value step, Value acc) {
        Value j = reverse
                      ? arith::SubIOp::create(e.b, e.loc, e.c(s.size - 1), step)
                      : step;
        Value at = e.add(e.mul(e.add(e.mul(o, s.size), j), s.inner), k);
        Value next = e.fadd(acc, e.loadC(buf.in[0], at));
        e.storeC(exclusive ? acc : next, buf.out[0], at);
        return next;
      });
    });
  });
}

/// A dense constant: a private global copied into the result.
void constantKernel(Emitter &e, ConstantOp op, ModuleOp kernels, StringRef name,
                    Buffers &buf) {
  auto value = cast<DenseElementsAttr>(op.getValue());
  auto type = MemRefType::get({value.getNumElements()},
                              value.getType().getElementType());
  auto flat = value.reshape(
      RankedTensorType::get(type.getShape(), type.getElementType()));
  {
    OpBuilder::InsertionGuard guard(e.b);
    e.b.setInsertionPointToStart(kernels.getBody());
    memref::GlobalOp::create(e.b, e.loc, (name + "_value").str(),
                             e.b.getStringAttr("private"), type, flat,
                             /*constant=*/true, /*alignment=*/nullptr);
  }
  Value global =
      memref::GetGlobalOp::create(e.b, e.loc, type, (name + "_value").str());
  e.copy(global, e.c(0), buf.out[0], e.c(0), value.getNumElements());
}

LogicalResult emitBody(Emitter &e, Operation *op, ModuleOp kernels,
                       StringRef name, Buffers &buf) {
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](TransposeOp op) {
        return transposeKernel(e, op, buf), success();
      })
      .Case([&](SliceOp op) {
        windowRead(e, buf.in[0], shapeOf(op.getInput()), buf.out[0],
                   shapeOf(op.getResult()), op.getStarts(), op.getStrides());
        return success();
      })
      .Case([&](SplitOp op) {
        int64_t start = 0, dim = op.getDim();
        for (auto [result, buffer] : llvm::zip(op.getResults(), buf.out)) {
          Shape shape = shapeOf(result);
          Shape base(shape.size(), 0), step(shape.size(), 1);
          base[dim] = start;
          start += shape[dim];
          windowRead(e, buf.in[0], shapeOf(op.getInput()), buffer, shape, base,
                     step);
        }
        return success();
      })
      .Case([&](ConcatOp op) { return concatKernel(e, op, buf), success(); })
      .Case([&](UpdateSliceOp op) {
        Shape shape = shapeOf(op.getInput()), update = shapeOf(op.getUpdate());
        e.copy(buf.in[1], e.c(0), buf.out[0], e.c(0), product(shape));
        Shape strides = stridesOf(shape), updateStrides = stridesOf(update);
        int64_t origin = 0;
        Shape delta;
        for (size_t d = 0; d < update.size(); ++d) {
          origin += op.getStarts()[d] * strides[d];
          delta.push_back(op.getStrides()[d] * strides[d]);
        }
        e.forEach(update, [&](ValueRange idx) {
          e.store(e.load(buf.in[0], e.offset(idx, updateStrides)), buf.out[0],
                  e.offset(idx, delta, origin));
        });
        return success();
      })
      .Case([&](GatherOp op) {
        forEachGathered(e, shapeOf(op.getInput()), buf.in[1],
                        product(shapeOf(op.getIndices())), op.getDim(),
                        [&](Value big, Value small) {
                          e.store(e.load(buf.in[0], big), buf.out[0], small);
                        });
        return success();
      })
      .Case<ScatterAddOp, ScatterReduceOp>([&](auto op) {
        Shape shape = shapeOf(op.getInput());
        e.copy(buf.in[0], e.c(0), buf.out[0], e.c(0), product(shape));
        forEachGathered(e, shape, buf.in[1], product(shapeOf(op.getIndices())),
                        op.getDim(), [&](Value big, Value small) {
                          e.storeC(combine(e, op, e.loadC(buf.out[0], big),
                                           e.loadC(buf.in[2], small)),
                                   buf.out[0], big);
                        });
        return success();
      })
      .Case([&](GatherElementsOp op) {
        forEachElementIndex(e, shapeOf(op.getInput()), buf.in[1],
                            shapeOf(op.getIndices()), op.getDim(),
                            [&](Value from, Value own) {
                              e.store(e.load(buf.in[0], from), buf.out[0], own);
                            });
        return success();
      })
      .Case([&](ScatterElementsAddOp op) {
        Shape shape = shapeOf(op.getInput());
        e.copy(buf.in[0], e.c(0), buf.out[0], e.c(0), product(shape));
        forEachElementIndex(
            e, shape, buf.in[1], shapeOf(op.getIndices()), op.getDim(),
            [&](Value to, Value own) {
              e.storeC(e.fadd(e.loadC(buf.out[0], to), e.loadC(buf.in[2], own)),
                       buf.out[0], to);
            });
        return success();
      })
      .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp>([&](auto op) {
        return reduceKernel(e, op, op.getDims(), reduceKindOf(op), buf),
               success();
      })
      .Case([&](SoftmaxOp op) {
        return softmaxKernel(e, op, op.getDim(), false, buf), success();
      })
      .Case([&](LogSoftmaxOp op) {
        return softmaxKernel(e, op, op.getDim(), true, buf), success();
      })
      .Case([&](LayerNormOp op) {
        normKernel(e, op, op.getDim(), op.getEpsilon().convertToDouble(),
                   /*withMean=*/true, buf);
        return success();
      })
      .Case([&](RMSNormOp op) {
        normKernel(e, op, op.getDim(), op.getEpsilon().convertToDouble(),
                   /*withMean=*/false, buf);
        return success();
      })
      .Case([&](RotaryOp op) { return rotaryKernel(e, op, buf), success(); })
      .Case([&](AttentionOp op) { return attentionKernel(e, op, buf); })
      .Case([&](ArgMaxOp op) { return argMaxKernel(e, op, buf), success(); })
      .Case([&](DropoutOp op) { return dropoutKernel(e, op, buf), success(); })
      .Case([&](CumSumOp op) { return cumSumKernel(e, op, buf), success(); })
      .Case([&](TopKOp op) { return topKKernel(e, op, buf), success(); })
      .Case([&](ConstantOp op) {
        return constantKernel(e, op, kernels, name, buf), success();
      })
      .Default([&](Operation *op) {
        return op->emitError("the CPU backend has no kernel for '")
               << op->getName() << "' yet; compile with --target reference";
      });
}

} // namespace

bool mlir::dtc::hasOpKernel(Operation *op) {
  if (auto constant = dyn_cast<ConstantOp>(op))
    return isa<DenseElementsAttr>(constant.getValue());
  return isa<TransposeOp, SliceOp, SplitOp, ConcatOp, UpdateSliceOp, GatherOp,
             ScatterAddOp, ScatterReduceOp, GatherElementsOp,
             ScatterElementsAddOp, ReduceSumOp, ReduceMeanOp, ReduceMaxOp,
             ReduceMinOp, SoftmaxOp, LogSoftmaxOp, LayerNormOp, RMSNormOp,
             RotaryOp, AttentionOp, ArgMaxOp, CumSumOp, DropoutOp, TopKOp>(op);
}

void mlir::dtc::addKernelParts(func::FuncOp kernel, int64_t rows,
                               int64_t work) {
  OpBuilder b(kernel);
  unsigned n = kernel.getNumArguments();
  Location loc = kernel.getLoc();
  (void)kernel.insertArguments({n, n}, {b.getIndexType(), b.getIndexType()},
                               {DictionaryAttr(), DictionaryAttr()},
                               {loc, loc});
  kernel->setAttr(kKernelRowsAttr, b.getI64IntegerAttr(rows));
  kernel->setAttr(kKernelWorkAttr, b.getI64IntegerAttr(work));
}

namespace {

/// The rows threads may share in op kernel `kernel`: those of its longest
/// outermost loop, when each row of every outermost loop is written from
/// that row alone (not for a kernel that copies, then writes over the
/// copy: scatters, update_slice, rotary) and nothing is stored outside
/// them; 0 otherwise.
int64_t rowsOf(Operation *op, func::FuncOp kernel) {
  if (!isa<TransposeOp, SliceOp, SplitOp, ConcatOp, GatherOp, GatherElementsOp,
           ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, SoftmaxOp,
           LogSoftmaxOp, LayerNormOp, RMSNormOp, AttentionOp, ArgMaxOp,
           CumSumOp, DropoutOp, TopKOp>(op))
    return 0;
  int64_t rows = 0;
  for (Operation &top : kernel.getBody().front()) {
    if (isa<memref::StoreOp>(top))
      return 0;
    auto loop = dyn_cast<scf::ForOp>(top);
    if (!loop)
      continue;
    std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
    if (!upper || !isConstantIntValue(loop.getLowerBound(), 0))
      return 0;
    rows = std::max(rows, *upper);
  }
  return rows;
}

} // namespace

FailureOr<func::FuncOp>
mlir::dtc::buildOpKernel(Operation *op, ModuleOp kernels, StringRef name) {
  auto flatOf = [](Type type) {
    auto tensor = cast<RankedTensorType>(type);
    return MemRefType::get({tensor.getNumElements()}, tensor.getElementType());
  };
  SmallVector<Type> argTypes;
  for (Type type : op->getOperandTypes())
    argTypes.push_back(flatOf(type));
  for (Type type : op->getResultTypes())
    argTypes.push_back(flatOf(type));
  OpBuilder b = OpBuilder::atBlockEnd(kernels.getBody());
  Location loc = op->getLoc();
  auto func =
      func::FuncOp::create(b, loc, name, b.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Buffers buf;
  unsigned numOperands = op->getNumOperands();
  llvm::append_range(buf.in, entry->getArguments().take_front(numOperands));
  llvm::append_range(buf.out, entry->getArguments().drop_front(numOperands));
  Emitter e{b, loc};
  if (failed(emitBody(e, op, kernels, name, buf))) {
    func.erase();
    return failure();
  }
  func::ReturnOp::create(b, loc);
  int64_t work = 0;
  for (Type type : op->getResultTypes())
    work += cast<RankedTensorType>(type).getNumElements();
  // (A reduction's work is what it reads.)
  if (isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp>(op))
    work = cast<RankedTensorType>(op->getOperand(0).getType()).getNumElements();
  // (An empty result, a slice of nothing, has no work to share.)
  if (int64_t rows = rowsOf(op, func); rows > 1 && work > 0)
    addKernelParts(func, rows, work);
  return func;
}

Value mlir::dtc::emitDropout(OpBuilder &b, Location loc, Value x, Value global,
                             Value step, uint64_t seed, uint64_t stream,
                             double ratio) {
  Type i32 = b.getI32Type(), i64 = b.getI64Type(), f64 = b.getF64Type();
  auto word = [&](uint32_t v) -> Value {
    return arith::ConstantOp::create(b, loc, i32, b.getIntegerAttr(i32, v));
  };
  auto low = [&](Value v) -> Value {
    return arith::TruncIOp::create(b, loc, i32, v);
  };
  auto high = [&](Value v) -> Value {
    Value shift =
        arith::ConstantOp::create(b, loc, i64, b.getIntegerAttr(i64, 32));
    return low(arith::ShRUIOp::create(b, loc, v, shift));
  };
  auto xor3 = [&](Value a, Value c, Value d) -> Value {
    return arith::XOrIOp::create(b, loc, arith::XOrIOp::create(b, loc, a, c),
                                 d);
  };
  // Philox4x32-10: the counter is (element, step), the key (seed, stream);
  // the key schedule is known here.
  Value ctr[4] = {low(global), high(global), low(step), high(step)};
  uint32_t key0 = static_cast<uint32_t>(seed),
           key1 = static_cast<uint32_t>(stream);
  for (int round = 0; round < 10; ++round) {
    auto p0 = arith::MulUIExtendedOp::create(b, loc, word(0xD2511F53), ctr[0]);
    auto p1 = arith::MulUIExtendedOp::create(b, loc, word(0xCD9E8D57), ctr[2]);
    Value next[4] = {xor3(p1.getHigh(), ctr[1], word(key0)), p1.getLow(),
                     xor3(p0.getHigh(), ctr[3], word(key1)), p0.getLow()};
    std::copy(std::begin(next), std::end(next), std::begin(ctr));
    key0 += 0x9E3779B9;
    key1 += 0xBB67AE85;
  }
  auto f64Const = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, f64, b.getF64FloatAttr(v));
  };
  Value uniform = arith::MulFOp::create(
      b, loc, arith::UIToFPOp::create(b, loc, f64, ctr[0]), f64Const(0x1p-32));
  Value keep = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, uniform,
                                     f64Const(ratio));
  Type type = x.getType();
  Value wide = x;
  if (type != f64) {
    if (type != b.getF32Type())
      wide = arith::ExtFOp::create(b, loc, b.getF32Type(), wide);
    wide = arith::ExtFOp::create(b, loc, f64, wide);
  }
  Value scaled = arith::DivFOp::create(b, loc, wide, f64Const(1.0 - ratio));
  Value y = arith::SelectOp::create(b, loc, keep, scaled, f64Const(0));
  if (type == f64)
    return y;
  // Through f32, as the reference executor rounds (a direct f64 -> bf16
  // truncation would also need a libgcc helper the kernels do not link).
  Value narrow = arith::TruncFOp::create(b, loc, b.getF32Type(), y);
  return type == narrow.getType()
             ? narrow
             : Value(arith::TruncFOp::create(b, loc, type, narrow));
}

Value mlir::dtc::emitMax(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(getElementTypeOrSelf(x)))
    return arith::MaximumFOp::create(b, loc, x, y);
  return arith::MaxSIOp::create(b, loc, x, y);
}

Value mlir::dtc::emitMin(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(getElementTypeOrSelf(x)))
    return arith::MinimumFOp::create(b, loc, x, y);
  return arith::MinSIOp::create(b, loc, x, y);
}

SmallVector<Value>
mlir::dtc::emitFor(OpBuilder &b, Location loc, int64_t from, int64_t to,
                   int64_t step, ValueRange inits,
                   function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  auto index = [&](int64_t i) -> Value {
    return arith::ConstantIndexOp::create(b, loc, i);
  };
  // (With a body builder, scf.for adds no terminator of its own.)
  auto forOp = scf::ForOp::create(
      b, loc, index(from), index(to), index(step), inits,
      [&](OpBuilder &nested, Location, Value i, ValueRange carried) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nested.getInsertionBlock(),
                            nested.getInsertionPoint());
        scf::YieldOp::create(b, loc, body(i, carried));
      });
  return SmallVector<Value>(forOp.getResults());
}

Value mlir::dtc::emitLaneFold(OpBuilder &b, Location loc, int64_t n, Value init,
                              function_ref<Value(Value, Value)> body,
                              function_ref<Value(Value, Value)> combine) {
  auto index = [&](int64_t i) -> Value {
    return arith::ConstantIndexOp::create(b, loc, i);
  };
  auto single = [&](int64_t from, Value acc) {
    return emitFor(b, loc, from, n, 1, acc, [&](Value i, ValueRange carried) {
      return SmallVector<Value>{body(i, carried.front())};
    })[0];
  };
  if (n < 2 * kFoldLanes)
    return single(0, init);
  int64_t whole = n / kFoldLanes * kFoldLanes;
  SmallVector<Value> lanes = emitFor(
      b, loc, 0, whole, kFoldLanes, SmallVector<Value>(kFoldLanes, init),
      [&](Value i, ValueRange carried) {
        SmallVector<Value> next;
        for (int64_t l = 0; l < kFoldLanes; ++l)
          next.push_back(
              body(l ? Value(arith::AddIOp::create(b, loc, i, index(l))) : i,
                   carried[l]));
        return next;
      });
  if (whole < n)
    lanes.front() = single(whole, lanes.front());
  for (int64_t width = kFoldLanes; width > 1; width /= 2)
    for (int64_t l = 0; l < width / 2; ++l)
      lanes[l] = combine(lanes[2 * l], lanes[2 * l + 1]);
  return lanes.front();
}

Value mlir::dtc::emitFoldOver(OpBuilder &b, Location loc,
                              ArrayRef<int64_t> shape, Value init,
                              function_ref<Value(ValueRange, Value)> body,
                              function_ref<Value(Value, Value)> combine) {
  if (shape.size() == 1)
    return emitLaneFold(
        b, loc, shape.front(), init,
        [&](Value i, Value acc) { return body(i, acc); }, combine);
  // Nested loops, outermost first; `indexes` grows by one a level.
  std::function<Value(SmallVector<Value>, Value)> nest =
      [&](SmallVector<Value> indexes, Value acc) -> Value {
    if (indexes.size() == shape.size())
      return body(indexes, acc);
    return emitFor(b, loc, 0, shape[indexes.size()], 1, acc,
                   [&](Value i, ValueRange carried) {
                     SmallVector<Value> inner(indexes);
                     inner.push_back(i);
                     return SmallVector<Value>{nest(inner, carried.front())};
                   })
        .front();
  };
  return nest({}, init);
}

Value mlir::dtc::emitWholeIndex(OpBuilder &b, Location loc, ValueRange indexes,
                                ArrayRef<int64_t> whole, Value offsets) {
  Type i64 = b.getI64Type();
  Value global =
      arith::ConstantOp::create(b, loc, i64, b.getIntegerAttr(i64, 0));
  for (auto [d, index] : llvm::enumerate(indexes)) {
    Value at = arith::IndexCastOp::create(b, loc, i64, index);
    if (offsets) {
      Value position = arith::ConstantIndexOp::create(b, loc, d);
      at = arith::AddIOp::create(
          b, loc, at,
          memref::LoadOp::create(b, loc, offsets, ValueRange{position}));
    }
    Value size =
        arith::ConstantOp::create(b, loc, i64, b.getIntegerAttr(i64, whole[d]));
    global = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, global, size), at);
  }
  return global;
}
