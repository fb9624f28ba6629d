//===- Signature.h - growing a training function's signature ----*- C++ -*-===//
//
// Internal to the training passes: they add arguments (labels, optimizer
// state) and results (loss, gradients, updates) to the function they build.
// Arguments and results are only ever appended, so that the indices the
// step ABI records (the loss, aliases, the RNG counter) stay valid.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_LIB_TRANSFORMS_TRAINING_SIGNATURE_H
#define DTC_LIB_TRANSFORMS_TRAINING_SIGNATURE_H

#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::dtc {

/// Appends an argument of `type` carrying `attrs`.
BlockArgument appendArgument(func::FuncOp func, Type type,
                             ArrayRef<NamedAttribute> attrs);
/// Appends `value` to the returned values, as a result carrying `attrs`.
void appendResult(func::FuncOp func, Value value,
                  ArrayRef<NamedAttribute> attrs);
/// Replaces all results by `values`, each with its attributes.
void setResults(func::FuncOp func, ArrayRef<Value> values,
                ArrayRef<DictionaryAttr> attrs);
/// The arguments marked `dtc.param` and not `dtc.trainable = false`.
SmallVector<BlockArgument> trainableParameters(func::FuncOp func);
/// The `dtc.param` name of a parameter argument.
StringRef parameterName(BlockArgument param);

} // namespace mlir::dtc

#endif // DTC_LIB_TRANSFORMS_TRAINING_SIGNATURE_H
