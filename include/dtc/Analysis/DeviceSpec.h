//===- DeviceSpec.h - what an accelerator can do ----------------*- C++ -*-===//
//
// A minimal description of a device and its links, enough for a roofline
// estimate (Roofline.h) before anything runs: peak FLOP/s per element type
// (tensor-core matmuls and other arithmetic apart), memory bandwidth and
// capacity, and per link a latency (alpha) and a bandwidth (1/beta) for the
// alpha-beta cost of a collective. Built-in entries carry public datasheet
// figures; docs/CostModel.md lists them with their sources.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_ANALYSIS_DEVICESPEC_H
#define DTC_ANALYSIS_DEVICESPEC_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::dtc {

/// A link's alpha-beta model: a call moving b bytes over it takes
/// `latencySeconds + b / bytesPerSecond`.
struct LinkSpec {
  double latencySeconds = 0;
  /// Per direction, per device: what nccl-tests' bus bandwidth approaches.
  double bytesPerSecond = 0;

  double seconds(double bytes) const {
    return latencySeconds + bytes / bytesPerSecond;
  }
};

/// Peak FLOP/s of one element type.
struct PeakFlops {
  /// Contractions (tensor cores where the type has them).
  double matmul = 0;
  /// Every other operation.
  double vector = 0;
};

struct DeviceSpec {
  llvm::StringRef name;
  llvm::StringRef description;
  PeakFlops f64, f32, bf16, f16, i8;
  double memoryBytesPerSecond = 0;
  int64_t memoryBytes = 0;
  /// Devices joined by `intraNode` links; groups spanning more go over
  /// `interNode`.
  int64_t devicesPerNode = 1;
  LinkSpec intraNode, interNode;

  /// The peak for computing in `elementType` (f32's for the integer types
  /// without one of their own).
  const PeakFlops &peak(Type elementType) const;
};

/// The built-in devices.
llvm::ArrayRef<DeviceSpec> getDeviceSpecs();
/// The built-in device named `name`, or null.
const DeviceSpec *lookupDeviceSpec(llvm::StringRef name);
/// The device reports use unless told otherwise: "h100-80gb".
const DeviceSpec &getDefaultDeviceSpec();

} // namespace mlir::dtc

#endif // DTC_ANALYSIS_DEVICESPEC_H
