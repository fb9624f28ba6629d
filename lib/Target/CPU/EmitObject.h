//===- EmitObject.h - kernels to a shared library ---------------*- C++ -*-===//

#ifndef DTC_LIB_TARGET_CPU_EMITOBJECT_H
#define DTC_LIB_TARGET_CPU_EMITOBJECT_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::dtc {

/// Lowers `kernels` (functions of memrefs) to LLVM, adds to each kernel K a
/// `K_packed(void **args)` entry the runtime calls with its buffers,
/// optimises the module for this host (-O2, no fast-math) and emits it in
/// process, split by function into one part per hardware thread (up to 8),
/// and links the objects into DIR/kernels.so with the system's `cc`.
LogicalResult emitKernelLibrary(ModuleOp kernels, const std::string &dir);

} // namespace mlir::dtc

#endif // DTC_LIB_TARGET_CPU_EMITOBJECT_H
