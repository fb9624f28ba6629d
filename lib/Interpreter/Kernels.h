//===- Kernels.h - the reference kernel table -------------------*- C++ -*-===//
//
// Internal to the interpreter: the table from op to reference kernel, which
// each *Kernels.cpp file fills for one family of ops, and the index helpers
// the kernels share.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_LIB_INTERPRETER_KERNELS_H
#define DTC_LIB_INTERPRETER_KERNELS_H

#include "dtc/Interpreter/Interpreter.h"
#include "dtc/Runtime/Tensor.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/TypeID.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>

namespace mlir::dtc {

using Operands = ArrayRef<const Tensor *>;
using Results = SmallVectorImpl<Tensor>;
using Kernel = ReferenceKernel;

class KernelTable {
public:
  /// Registers `fn(OpTy, Operands, Results&) -> LogicalResult` for OpTy.
  template <typename OpTy, typename Fn> void add(Fn fn) {
    kernels[TypeID::get<OpTy>()] = [fn](Operation *op, Operands in,
                                        Results &out) {
      return fn(cast<OpTy>(op), in, out);
    };
  }
  void add(TypeID op, Kernel kernel) { kernels[op] = std::move(kernel); }
  const Kernel *lookup(Operation *op) const {
    auto it = kernels.find(op->getName().getTypeID());
    return it == kernels.end() ? nullptr : &it->second;
  }

private:
  llvm::DenseMap<TypeID, Kernel> kernels;
};

void addAttentionKernels(KernelTable &table);
void addCollectiveKernels(KernelTable &table);
void addElementwiseKernels(KernelTable &table);
void addReductionKernels(KernelTable &table);
void addDataMovementKernels(KernelTable &table);
void addFusionKernels(KernelTable &table);

/// A zero-filled tensor of the type of `value`.
Tensor makeTensor(Value value);

/// The offsets visited when walking a tensor of shape `out` in row-major
/// order, starting at `origin`, where a step along dimension d moves by
/// `step[d]`: the one index loop behind broadcasts, slices and transposes.
std::vector<int64_t> stridedOffsets(const Shape &out, int64_t origin,
                                    const Shape &step);

/// The extent of `shape` before, at and after dimension `dim`:
/// {prod(shape[:dim]), shape[dim], prod(shape[dim+1:])}.
struct DimSplit {
  int64_t outer, size, inner;
};
DimSplit splitAt(const Shape &shape, int64_t dim);

} // namespace mlir::dtc

#endif // DTC_LIB_INTERPRETER_KERNELS_H
