//===- NCCLDataType.h - dtc's element types as NCCL's -----------*- C++ -*-===//
//
// Shared by the NCCL engine of the Communicator (host tensors) and the CUDA
// engine's collectives (device buffers); the includer has nccl.h.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_NCCL_NCCLDATATYPE_H
#define DTC_RUNTIME_NCCL_NCCLDATATYPE_H

#include "dtc/Runtime/Tensor.h"

#include <nccl.h>

#include <optional>

namespace mlir::dtc {

/// NCCL's type of `dtype`'s elements, to reduce them (u8 for bool); none
/// for i16, which NCCL has no type for (it moves only as bytes).
inline std::optional<ncclDataType_t> ncclTypeOf(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return ncclFloat32;
  case DType::F64:
    return ncclFloat64;
  case DType::BF16:
    return ncclBfloat16;
  case DType::F16:
    return ncclFloat16;
  case DType::I64:
    return ncclInt64;
  case DType::I32:
    return ncclInt32;
  case DType::I8:
    return ncclInt8;
  case DType::U8:
  case DType::Bool:
    return ncclUint8;
  case DType::I16:
    return std::nullopt;
  }
  return std::nullopt;
}

} // namespace mlir::dtc

#endif // DTC_RUNTIME_NCCL_NCCLDATATYPE_H
