//===- FusionToLinalg.h - fusion groups as linalg kernels -------*- C++ -*-===//
//
// The CPU backend's first lowering step: a `loop` fusion group becomes one
// kernel function, a single linalg.generic over its result's elements
// whose body computes the group's ops on scalars (arith and math), its
// inputs read through affine indexing maps (broadcasts, reshapes), writing
// into a buffer the caller owns (destination passing); then the kernels of
// a module are lowered to the LLVM dialect, ready for in-process code
// generation, each contiguous nest computed in vectors of 8 elements
// (dtc-vectorize-kernels).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_CONVERSION_FUSIONTOLINALG_H
#define DTC_CONVERSION_FUSIONTOLINALG_H

#include "dtc/Conversion/DTCToSCF.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <memory>

namespace mlir {
class Pass;
} // namespace mlir

namespace mlir::dtc {

/// Adds to `kernels` `func.func @name(%input0: memref<...>, ...,
/// %result0: memref<...>, ...)` computing `fusion`: a `loop` or
/// `multi_tensor` group (one loop nest per result, or per results of one
/// shape that read a common tensor) whose ops are
/// elementwise (dropout included), broadcasts, row-major reshapes, index
/// grids or scalar constants, or a `row_reduction` group of such ops and
/// float reduce_sum, reduce_mean, reduce_max and reduce_min along the
/// trailing dimensions of rows of one shape, each a group result (dtc-fuse's
/// row-reductions=rows): one loop over the rows, each row folded by each
/// reduction in turn and then written. Fails with a diagnostic on the op it
/// cannot lower.
/// When every nest's outermost dimension is parallel, the kernel takes
/// parts (addKernelParts, DTCToSCF.h).
FailureOr<func::FuncOp> buildLoopKernel(FusionOp fusion, ModuleOp kernels,
                                        StringRef name);

/// How a group's kernel reads its values (shared with the CUDA target):
/// a group value and the index at which an element of the value being
/// computed needs it, an affine function of that element's index (a value
/// read at two indexes, through a reshape and beside it, is computed at
/// both).
using GroupAccess = std::pair<Value, AffineMap>;

/// Whether `op` is a reduce_sum, reduce_mean, reduce_max or reduce_min (a
/// row kernel's reductions).
bool isGroupReduction(Operation *op);

/// The index at which `op`, computing its result at `map`, reads `operand`:
/// the same linear position through a reshape, else as broadcasting reads.
AffineMap groupOperandMap(Operation *op, AffineMap map, Value operand);

/// The accesses `access` needs, its operands' before each op's, into
/// `ops`, and the values read (with their maps) into `inputs`: the group's
/// inputs and, in a row kernel, the reductions' results and the values in
/// `stored` (read back from their buffers).
void collectGroupAccesses(GroupAccess access, llvm::SetVector<GroupAccess> &ops,
                          llvm::SetVector<GroupAccess> &inputs,
                          const llvm::DenseSet<Value> *stored = nullptr);

/// The results `roots` of a loop or multi-tensor group, as the nests that
/// compute them: results of one shape (rank >= 1) that read a common input
/// tensor share a nest (an optimizer's new parameter, first and second
/// moments, which all read its gradient and moments: each read once per
/// element, the moments computed once); any other result is a nest of its
/// own.
SmallVector<SmallVector<unsigned>> groupNests(ArrayRef<Value> roots);

/// A row_reduction group as a row kernel computes it: its rows (the
/// leading dimensions its reductions keep) and its passes over a row, in
/// order: each reduction's operand (folded into the reduction's result,
/// which later passes read back), then each result that is not a
/// reduction's (written).
struct RowGroupPlan {
  SmallVector<int64_t> rows;
  /// A pass's root, and the reduction it folds into (null: a result).
  SmallVector<std::pair<Value, Operation *>> passes;
};

/// The plan of `fusion` (a row_reduction group), or an error on the op that
/// breaks it: a row kernel folds floats along the trailing dimensions of
/// rows of one shape, keeps each reduction's result in a group result and
/// writes results whose leading dimensions are its rows.
FailureOr<RowGroupPlan> planRowGroup(FusionOp fusion);

/// Registers the dialects and translations kernel modules need.
void registerKernelDialects(DialectRegistry &registry);

/// Lowers the kernels of `module` (linalg and scf on memrefs) to the LLVM
/// dialect, each with a C interface (`_mlir_ciface_NAME`) where it asks for
/// one; with `barePointers`, each memref argument becomes a plain pointer
/// to its first element (static shapes). No fast-math flags; f32 exp, tanh
/// and erf become polynomials (docs/Codegen.md states their error), other
/// math ops LLVM intrinsics or libm calls.
LogicalResult lowerKernelsToLLVM(ModuleOp module, bool barePointers = false);

/// dtc-vectorize-kernels: each linalg.generic of a kernel whose operands
/// read the innermost dimension contiguously (or not at all) computes all
/// but its last (columns mod 8) columns as vector<8xT> tiles, the rest
/// scalar. (lowerKernelsToLLVM runs it.)
std::unique_ptr<Pass> createVectorizeKernelsPass();

/// dtc-split-kernel-rows: in each kernel with kKernelRowsAttr, once its
/// linalg ops are loops, every outermost loop runs only iterations
/// [n * part / parts, n * (part + 1) / parts) of its n.
/// (lowerKernelsToLLVM runs it.)
std::unique_ptr<Pass> createSplitKernelRowsPass();

} // namespace mlir::dtc

#endif // DTC_CONVERSION_FUSIONTOLINALG_H
