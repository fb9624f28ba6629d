//===- Layers.h - Where a step's transformer layers start -------*- C++ -*-===//
//
// The transformer layers of a training step, as the planner counts them and
// --pipeline-split splits them: the units (kUnitAttrName) named by an index.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_ANALYSIS_LAYERS_H
#define DTC_ANALYSIS_LAYERS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::dtc {

/// Whether a parameter's unit is a transformer layer: its module path ends
/// in an index (`layers.3`, `h.0`), as the importer names a stack's blocks.
bool isLayerUnit(StringRef unit);

/// Per parameter (its argument number), the first op among `forward`
/// (forward ops in program order) to combine it, or a value computed from
/// it alone (a cast, a transpose, a gather), with a value computed from
/// the step's inputs: where the forward first uses it. Not its first read:
/// an exporter may transpose every weight up front.
llvm::DenseMap<unsigned, Operation *>
getFirstUses(func::FuncOp func, ArrayRef<Operation *> forward);

/// The layers of `func` (of trainable parameters) in the order they start
/// among `forward`, each with the op it starts at: the first use of any of
/// its parameters.
SmallVector<std::pair<StringAttr, Operation *>>
getLayerStarts(func::FuncOp func, ArrayRef<Operation *> forward);

} // namespace mlir::dtc

#endif // DTC_ANALYSIS_LAYERS_H
