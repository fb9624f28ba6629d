//===- DTCTraits.h - dtc op traits ------------------------------*- C++ -*-===//
//
// Traits that classify dtc ops for the passes that treat a whole class
// alike (the partitioner, the canonicalizer, mixed precision), so that no
// pass keeps its own list of op names.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECT_DTC_IR_DTCTRAITS_H
#define DTC_DIALECT_DTC_IR_DTCTRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace mlir::OpTrait::dtc {

/// An op that computes each element of its one result from the elements at
/// the same index of its operands after numpy broadcasting: the binary
/// arithmetic and logic ops, `compare` and `select`. (Ops whose operands
/// all have the result's shape carry MLIR's `Elementwise` instead.)
template <typename ConcreteType>
class BroadcastingElementwise
    : public ::mlir::OpTrait::TraitBase<ConcreteType, BroadcastingElementwise> {
};

/// An op that accumulates or normalizes (sums, means, softmax, layer and
/// RMS norms) or counts (iota), whose result loses too much in a 16-bit
/// float: dtc-mixed-precision keeps it in f32. Attention is not one: like
/// fused attention kernels it takes and gives 16-bit tensors and keeps its
/// softmax's accumulation internal.
template <typename ConcreteType>
class ComputesInF32
    : public ::mlir::OpTrait::TraitBase<ConcreteType, ComputesInF32> {};

} // namespace mlir::OpTrait::dtc

#endif // DTC_DIALECT_DTC_IR_DTCTRAITS_H
