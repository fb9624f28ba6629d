//===- DTCOps.h - dtc core tensor ops ---------------------------*- C++ -*-===//
//
// The ODS-generated op classes of the dtc dialect and the shape helpers their
// type inference shares with the importer.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECT_DTC_IR_DTCOPS_H
#define DTC_DIALECT_DTC_IR_DTCOPS_H

#include "dtc/Dialect/DTC/IR/DTCDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dtc/Dialect/DTC/IR/DTCTraits.h"
#include "dtc/Dialect/DTC/IR/OpCost.h"
#include "dtc/Dialect/DTC/IR/ShardingRule.h"

namespace mlir::dtc {
/// The bytes a tensor of `type` (a ranked tensor) holds: what collectives
/// move and reports count (i1 as one byte per element).
int64_t tensorByteSize(Type type);
/// ShardingRuleOpInterface's default: the elementwise rule for ops with
/// MLIR's `Elementwise` or dtc's `BroadcastingElementwise` trait, else one
/// that needs every dimension whole.
OpShardingRule defaultShardingRule(Operation *op,
                                   ArrayRef<RankedTensorType> operandTypes,
                                   ArrayRef<RankedTensorType> resultTypes);
} // namespace mlir::dtc

#include "dtc/Dialect/DTC/IR/DTCInterfaces.h.inc"
#include "dtc/Dialect/DTC/IR/DTCOpsEnums.h.inc"

#define GET_OP_CLASSES
#include "dtc/Dialect/DTC/IR/DTCOps.h.inc"

namespace mlir::dtc {

/// The numpy broadcast of `shapes`, or failure when two dimensions differ and
/// neither is 1.
FailureOr<SmallVector<int64_t>>
broadcastShapes(ArrayRef<ArrayRef<int64_t>> shapes);

/// One all-reduce of `values` packed together (each flattened, concatenated
/// in order) over `axes` of `mesh`, with `reason`; returns each value's
/// reduction, in its own type. Many small collectives as one call.
SmallVector<Value> allReducePacked(OpBuilder &b, Location loc,
                                   ValueRange values, FlatSymbolRefAttr mesh,
                                   ArrayAttr axes, CollectiveReductionAttr kind,
                                   StringAttr reason);

/// Whether `op` computes each element of its one result from the elements
/// at the same index of its operands (numpy-broadcast): an op with MLIR's
/// `Elementwise` trait (unary math, cast) or dtc's `BroadcastingElementwise`
/// (arithmetic, comparisons, logic, select).
bool isElementwise(Operation *op);

/// Whether `value` is a dtc.constant of float zeros (+0 or -0).
bool isFloatZeros(Value value);

} // namespace mlir::dtc

#endif // DTC_DIALECT_DTC_IR_DTCOPS_H
