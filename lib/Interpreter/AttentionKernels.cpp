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
    // Dropout: the element's index in the whole probabilities tensor.
    double ratio = 0;
    uint64_t step = 0;
    Shape whole = scores;
    std::vector<int64_t> offset(4, 0);
    if (op.getDropoutRatio()) {
      ratio = op.getDropoutRatio()->convertToDouble();
      step = static_cast<uint64_t>(in[next++]->ints()[0]);
      if (auto global = op.getGlobalShape()) {
        whole.assign(global->begin(), global->end());
        for (int64_t dim = 0; dim < 4; ++dim)
          offset[dim] = in[next]->ints()[dim];
      }
    }
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
            if (ratio > 0) {
              int64_t index[4] = {b, h, i, j}, global = 0;
              for (int64_t dim = 0; dim < 4; ++dim)
                global = global * whole[dim] + index[dim] + offset[dim];
              bool keep = dropoutUniform(global, step, *op.getSeed(),
                                         *op.getStream()) >= ratio;
              weight = keep ? weight / (1.0 - ratio) : 0.0;
            }
            const double *vRow = &v.floats()[(kv * keys + j) * dv];
            for (int64_t c = 0; c < dv; ++c)
              o[c] += weight * vRow[c];
          }
        }
    out.push_back(std::move(result));
    out.push_back(std::move(probs));
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
