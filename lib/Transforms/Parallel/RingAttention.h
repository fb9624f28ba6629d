//===- RingAttention.h - attention over a ring of token blocks -*- C++ -*-===//

#ifndef DTC_LIB_TRANSFORMS_PARALLEL_RINGATTENTION_H
#define DTC_LIB_TRANSFORMS_PARALLEL_RINGATTENTION_H

#include "AxisPartitioner.h"

namespace mlir::dtc {

/// Why ring attention cannot take `op` (empty when it can).
std::string whyNoRingAttention(AxisPartitioner &p, AttentionOp op);
/// Context parallelism's ring attention for `op`, whose q, k and v are
/// this rank's tokens in zigzag order: its result as the ring computes it.
LogicalResult partitionRingAttention(AxisPartitioner &p, AttentionOp op);
/// The gradient of an attention partitionRingAttention rewrote (its
/// probabilities operand is that attention's).
LogicalResult partitionRingAttentionGrad(AxisPartitioner &p,
                                         AttentionGradOp op);

} // namespace mlir::dtc

#endif // DTC_LIB_TRANSFORMS_PARALLEL_RINGATTENTION_H
