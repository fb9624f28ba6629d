//===- AttentionKernels.cpp - reference kernels: attention, rotary -------===//
//
// dtc.attention computed directly, one query row at a time in f64: scores,
// mask, a stable softmax (the probabilities, a result too), dropout drawn
// as dtc.dropout draws on the [batch, heads, queries, keys] probabilities,
// then the weighted values. dtc.rotary, the rotary position embedding of
// queries and keys, pair by pair.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Runtime/Philox.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// Attention's dropout of its [batch, heads, queries, keys] probabilities,
/// drawn by the element's index in the whole tensor, as dtc.dropout draws.
struct ProbsDropout {
  double ratio = 0;
  uint64_t step = 0, seed = 0, stream = 0;
  Shape whole;
  int64_t offset[4] = {0, 0, 0, 0};

  /// `first` is the operand after the mask: the step, then the offset.
  template <typename OpTy>
  ProbsDropout(OpTy op, Operands in, unsigned first, const Shape &scores)
      : whole(scores) {
    if (!op.getDropoutRatio())
      return;
    ratio = op.getDropoutRatio()->convertToDouble();
    step = static_cast<uint64_t>(in[first]->ints()[0]);
    seed = *op.getSeed();
    stream = *op.getStream();
    if (auto global = op.getGlobalShape()) {
      whole.assign(global->begin(), global->end());
      for (int64_t dim = 0; dim < 4; ++dim)
        offset[dim] = in[first + 1]->ints()[dim];
    }
  }

  /// `x` at [b, h, i, j], dropped (and the kept ones scaled).
  double apply(double x, int64_t b, int64_t h, int64_t i, int64_t j) const {
    if (ratio == 0)
      return x;
    int64_t index[4] = {b, h, i, j}, global = 0;
    for (int64_t dim = 0; dim < 4; ++dim)
      global = global * whole[dim] + index[dim] + offset[dim];
    bool keep = dropoutUniform(global, step, seed, stream) >= ratio;
    return keep ? x / (1.0 - ratio) : 0.0;
  }
};

} // namespace

void mlir::dtc::addAttentionKernels(KernelTable &table) {
  table.add<AttentionOp>([](AttentionOp op, Operands in,
                            Results &out) -> LogicalResult {
    const Tensor &q = *in[0], &k = *in[1], &v = *in[2];
    Tensor result = makeTensor(op.getResult()), probs = makeTensor(op.getProbs());
    int64_t batch = q.shape()[0], heads = q.shape()[1], queries = q.shape()[2],
            d = q.shape()[3], kvHeads = k.shape()[1], keys = k.shape()[2],
            dv = v.shape()[3], group = heads / kvHeads;
    Shape scores{batch, heads, queries, keys};
    unsigned next = 3;
    const Tensor *mask = op.getMask() ? in[next++] : nullptr;
    std::vector<int64_t> maskAt;
    if (mask)
      maskAt = broadcastOffsets(mask->shape(), scores);
    double masked = op.getMaskedValue()
                        ? op.getMaskedValue()->convertToDouble()
                        : -std::numeric_limits<double>::infinity();
    ProbsDropout dropout(op, in, next, scores);
    double scale = op.getScale().convertToDouble();
    double softcap = op.getSoftcap() ? op.getSoftcap()->convertToDouble() : 0;
    std::vector<double> p(keys);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < queries; ++i) {
          const double *qRow = &q.floats()[((b * heads + h) * queries + i) * d];
          int64_t kv = b * kvHeads + h / group;
          int64_t row = ((b * heads + h) * queries + i) * keys;
          double max = -std::numeric_limits<double>::infinity();
          for (int64_t j = 0; j < keys; ++j) {
            const double *kRow = &k.floats()[(kv * keys + j) * d];
            double s = 0;
            for (int64_t c = 0; c < d; ++c)
              s += qRow[c] * kRow[c];
            s *= scale;
            if (softcap)
              s = softcap * std::tanh(s / softcap);
            if (mask && mask->isFloat())
              s += mask->floats()[maskAt[row + j]];
            else if (mask && mask->ints()[maskAt[row + j]] == 0)
              s = masked;
            p[j] = s;
            max = std::max(max, s);
          }
          double sum = 0;
          for (int64_t j = 0; j < keys; ++j)
            sum += p[j] = std::exp(p[j] - max);
          double *o = &result.floats()[((b * heads + h) * queries + i) * dv];
          for (int64_t j = 0; j < keys; ++j) {
            double weight = p[j] / sum;
            probs.floats()[row + j] = weight;
            weight = dropout.apply(weight, b, h, i, j);
            const double *vRow = &v.floats()[(kv * keys + j) * dv];
            for (int64_t c = 0; c < dv; ++c)
              o[c] += weight * vRow[c];
          }
        }
    out.push_back(std::move(result));
    out.push_back(std::move(probs));
    return success();
  });

  // dtc.attention_grad, one query row at a time: dP' = dO v^T, dropped
  // (dP), dS = P (dP - rowsum(dP P)) (zero where an i1 mask masks; times
  // the softcap's derivative), then dV += P' dO, dQ += dS k s, dK += dS q s.
  table.add<AttentionGradOp>([](AttentionGradOp op, Operands in,
                                Results &out) -> LogicalResult {
    const Tensor &q = *in[0], &k = *in[1], &v = *in[2], &probs = *in[3],
                 &dOut = *in[4];
    Tensor dQ = makeTensor(op.getQGrad()), dK = makeTensor(op.getKGrad()),
           dV = makeTensor(op.getVGrad());
    int64_t batch = q.shape()[0], heads = q.shape()[1], queries = q.shape()[2],
            d = q.shape()[3], kvHeads = k.shape()[1], keys = k.shape()[2],
            dv = v.shape()[3], group = heads / kvHeads;
    Shape scores{batch, heads, queries, keys};
    const Tensor *mask = op.getMask() ? in[5] : nullptr;
    bool keepMask = mask && !mask->isFloat();
    std::vector<int64_t> maskAt;
    if (keepMask)
      maskAt = broadcastOffsets(mask->shape(), scores);
    ProbsDropout dropout(op, in, mask ? 6 : 5, scores);
    double scale = op.getScale().convertToDouble();
    double softcap = op.getSoftcap() ? op.getSoftcap()->convertToDouble() : 0;
    std::vector<double> dProbs(keys);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < queries; ++i) {
          int64_t qAt = ((b * heads + h) * queries + i) * d;
          int64_t oAt = ((b * heads + h) * queries + i) * dv;
          int64_t row = ((b * heads + h) * queries + i) * keys;
          int64_t kv = b * kvHeads + h / group;
          double dot = 0;
          for (int64_t j = 0; j < keys; ++j) {
            const double *vRow = &v.floats()[(kv * keys + j) * dv];
            double dp = 0;
            for (int64_t c = 0; c < dv; ++c)
              dp += dOut.floats()[oAt + c] * vRow[c];
            dProbs[j] = dropout.apply(dp, b, h, i, j);
            dot += dProbs[j] * probs.floats()[row + j];
            double weight = dropout.apply(probs.floats()[row + j], b, h, i, j);
            double *dvRow = &dV.floats()[(kv * keys + j) * dv];
            for (int64_t c = 0; c < dv; ++c)
              dvRow[c] += weight * dOut.floats()[oAt + c];
          }
          for (int64_t j = 0; j < keys; ++j) {
            if (keepMask && mask->ints()[maskAt[row + j]] == 0)
              continue;
            double ds = probs.floats()[row + j] * (dProbs[j] - dot);
            const double *kRow = &k.floats()[(kv * keys + j) * d];
            if (softcap) {
              double raw = 0;
              for (int64_t c = 0; c < d; ++c)
                raw += q.floats()[qAt + c] * kRow[c];
              double t = std::tanh(raw * scale / softcap);
              ds *= 1 - t * t;
            }
            ds *= scale;
            double *dkRow = &dK.floats()[(kv * keys + j) * d];
            for (int64_t c = 0; c < d; ++c) {
              dQ.floats()[qAt + c] += ds * kRow[c];
              dkRow[c] += ds * q.floats()[qAt + c];
            }
          }
        }
    out.push_back(std::move(dQ));
    out.push_back(std::move(dK));
    out.push_back(std::move(dV));
    return success();
  });

  table.add<RotaryOp>([](RotaryOp op, Operands in,
                         Results &out) -> LogicalResult {
    const Tensor &x = *in[0];
    Tensor result = x;
    int64_t d = x.shape().back(), half = op.getRotaryDim() / 2;
    Shape pairs = x.shape();
    pairs.back() = half;
    std::vector<int64_t> cosAt = broadcastOffsets(in[1]->shape(), pairs);
    std::vector<int64_t> sinAt = broadcastOffsets(in[2]->shape(), pairs);
    bool interleaved = op.getInterleaved();
    for (int64_t p = 0, e = static_cast<int64_t>(cosAt.size()); p < e; ++p) {
      int64_t row = p / half * d, i = p % half;
      int64_t first = row + (interleaved ? 2 * i : i),
              second = row + (interleaved ? 2 * i + 1 : i + half);
      double c = in[1]->floats()[cosAt[p]], s = in[2]->floats()[sinAt[p]];
      double x1 = x.floats()[first], x2 = x.floats()[second];
      result.floats()[first] = x1 * c - x2 * s;
      result.floats()[second] = x2 * c + x1 * s;
    }
    out.push_back(std::move(result));
    return success();
  });
}
