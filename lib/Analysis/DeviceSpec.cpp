//===- DeviceSpec.cpp - built-in devices ----------------------------------===//
//
// Figures from NVIDIA's datasheets (SXM parts, dense, i.e. without
// structured sparsity, which the datasheets' starred figures double):
//  - H100: "NVIDIA H100 Tensor Core GPU" datasheet: FP64 34, FP64 Tensor
//    Core 67, FP32 67 TFLOP/s; BF16 and FP16 Tensor Core 1,979, INT8 3,958
//    (with sparsity, so 989.5 and 1,979 dense); 80 GB at 3.35 TB/s; NVLink
//    900 GB/s.
//  - H200: "NVIDIA H200 Tensor Core GPU" datasheet: the H100's compute;
//    141 GB at 4.8 TB/s; NVLink 900 GB/s.
//  - A100 80GB: "NVIDIA A100 Tensor Core GPU" datasheet: FP64 9.7, FP64
//    Tensor Core 19.5, FP32 19.5 TFLOP/s; BF16 and FP16 Tensor Core 312,
//    INT8 624 TOPS (dense); 80 GB HBM2e at 2,039 GB/s; NVLink 600 GB/s.
// NVLink's figure is both directions together: a device sends at half of
// it. Across nodes, one InfiniBand adapter per GPU as in NVIDIA's DGX
// systems: ConnectX-7 NDR 400 Gb/s (DGX H100/H200), ConnectX-6 HDR 200 Gb/s
// (DGX A100). f32 matmuls run at the FP32 rate, not TF32's: PyTorch's
// default (torch.backends.cuda.matmul.allow_tf32 = False) and dtc's exact
// f32 semantics. Operations other than matmuls run at the FP32 (FP64)
// CUDA-core rate whatever their 16-bit type.
//
// The latencies (alpha) are not datasheet figures: round numbers of the
// order of NCCL's own tuning model (src/graph/tuning.cc: a ring call's base
// latency of 6.6 to 14 us, plus per-hop hardware latency, more over the
// network).
//
//===----------------------------------------------------------------------===//

#include "dtc/Analysis/DeviceSpec.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::dtc;

static constexpr double kTera = 1e12, kGiga = 1e9, kMicro = 1e-6;

static const DeviceSpec kDevices[] = {
    {"h100-80gb",
     "NVIDIA H100 SXM 80GB, NVLink 4 within 8-GPU nodes, NDR InfiniBand "
     "across",
     /*f64=*/{67 * kTera, 34 * kTera},
     /*f32=*/{67 * kTera, 67 * kTera},
     /*bf16=*/{989.5 * kTera, 67 * kTera},
     /*f16=*/{989.5 * kTera, 67 * kTera},
     /*i8=*/{1979 * kTera, 67 * kTera},
     /*memoryBytesPerSecond=*/3.35e12,
     /*memoryBytes=*/80 * 1000 * 1000 * 1000LL,
     /*devicesPerNode=*/8,
     /*intraNode=*/{10 * kMicro, 450 * kGiga},
     /*interNode=*/{20 * kMicro, 50 * kGiga}},
    {"h200-141gb",
     "NVIDIA H200 SXM 141GB, NVLink 4 within 8-GPU nodes, NDR InfiniBand "
     "across",
     /*f64=*/{67 * kTera, 34 * kTera},
     /*f32=*/{67 * kTera, 67 * kTera},
     /*bf16=*/{989.5 * kTera, 67 * kTera},
     /*f16=*/{989.5 * kTera, 67 * kTera},
     /*i8=*/{1979 * kTera, 67 * kTera},
     /*memoryBytesPerSecond=*/4.8e12,
     /*memoryBytes=*/141 * 1000 * 1000 * 1000LL,
     /*devicesPerNode=*/8,
     /*intraNode=*/{10 * kMicro, 450 * kGiga},
     /*interNode=*/{20 * kMicro, 50 * kGiga}},
    {"a100-80gb",
     "NVIDIA A100 SXM 80GB, NVLink 3 within 8-GPU nodes, HDR InfiniBand "
     "across",
     /*f64=*/{19.5 * kTera, 9.7 * kTera},
     /*f32=*/{19.5 * kTera, 19.5 * kTera},
     /*bf16=*/{312 * kTera, 19.5 * kTera},
     /*f16=*/{312 * kTera, 19.5 * kTera},
     /*i8=*/{624 * kTera, 19.5 * kTera},
     /*memoryBytesPerSecond=*/2.039e12,
     /*memoryBytes=*/80 * 1000 * 1000 * 1000LL,
     /*devicesPerNode=*/8,
     /*intraNode=*/{10 * kMicro, 300 * kGiga},
     /*interNode=*/{20 * kMicro, 25 * kGiga}},
};

const PeakFlops &DeviceSpec::peak(Type elementType) const {
  if (elementType.isF64())
    return f64;
  if (elementType.isBF16())
    return bf16;
  if (elementType.isF16())
    return f16;
  if (elementType.isInteger(8))
    return i8;
  return f32;
}

ArrayRef<DeviceSpec> mlir::dtc::getDeviceSpecs() { return kDevices; }

const DeviceSpec *mlir::dtc::lookupDeviceSpec(StringRef name) {
  for (const DeviceSpec &spec : kDevices)
    if (spec.name == name)
      return &spec;
  return nullptr;
}

const DeviceSpec &mlir::dtc::getDefaultDeviceSpec() { return kDevices[0]; }
