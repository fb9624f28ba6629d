//===- DTCTraits.h - dtc op traits ------------------------------*- C++ -*-===//
//
// Traits that classify dtc ops for the passes that treat a whole class
// alike (the partitioner, the canonicalizer, ZeRO's padding), so that no
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

} // namespace mlir::OpTrait::dtc

#endif // DTC_DIALECT_DTC_IR_DTCTRAITS_H
