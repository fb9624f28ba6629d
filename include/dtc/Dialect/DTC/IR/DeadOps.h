//===- DeadOps.h - erase what nothing reads ---------------------*- C++ -*-===//
//
// Rewrites that replace a computation (the importer's folded shapes, a
// mixture's batched or sorted form, autodiff's unused adjoints) leave the
// old ops behind with no readers.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECT_DTC_IR_DEADOPS_H
#define DTC_DIALECT_DTC_IR_DEADOPS_H

#include "mlir/IR/Block.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir::dtc {

/// Erases the ops of `body` that have no side effects and whose results
/// nothing reads, last first (so that what only they read goes too), but
/// those `keep` holds.
inline void eraseDeadOps(Block &body,
                         llvm::function_ref<bool(Operation *)> keep = nullptr) {
  for (Operation &op :
       llvm::make_early_inc_range(llvm::reverse(body.getOperations())))
    if ((!keep || !keep(&op)) && isOpTriviallyDead(&op))
      op.erase();
}

} // namespace mlir::dtc

#endif // DTC_DIALECT_DTC_IR_DEADOPS_H
