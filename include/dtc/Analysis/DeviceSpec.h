//===- DeviceSpec.h - what an accelerator can do ----------------*- C++ -*-===//
//
// A minimal description of a device and its links, enough for a roofline
// estimate (Roofline.h) before anything runs: peak FLOP/s per element type
// (tensor-core matmuls and other arithmetic apart), memory bandwidth and
// capacity, and per link a latency (alpha) and a bandwidth (1/beta) for the
// alpha-beta cost of a collective, and what dtc-plan needs beyond the
// roofline: the memory a program can use and the fraction of the matmul
// peak large GEMMs reach. The built-in entries are data/devices.json,
// compiled in; a copy edited by the user is read with loadDeviceSpecs.
// docs/CostModel.md lists the figures with their sources.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_ANALYSIS_DEVICESPEC_H
#define DTC_ANALYSIS_DEVICESPEC_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

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
  std::string name;
  std::string description;
  PeakFlops f64, f32, bf16, f16, i8;
  double memoryBytesPerSecond = 0;
  /// The datasheet's capacity.
  int64_t memoryBytes = 0;
  /// What a program can allocate: the total the driver reports
  /// (nvidia-smi), which for an "80 GB" part is more than 80 * 10^9 B.
  int64_t usableMemoryBytes = 0;
  /// The fraction of the matmul peak large GEMMs reach, and of the memory
  /// bandwidth streaming kernels reach (dtc-plan's step times).
  double matmulEfficiency = 1;
  double memoryEfficiency = 1;
  /// Devices joined by `intraNode` links; groups spanning more go over
  /// `interNode`.
  int64_t devicesPerNode = 1;
  LinkSpec intraNode, interNode;

  /// The peak for computing in `elementType` (f32's for the integer types
  /// without one of their own).
  const PeakFlops &peak(Type elementType) const;
};

/// The built-in devices (data/devices.json).
llvm::ArrayRef<DeviceSpec> getDeviceSpecs();
/// Reads devices in data/devices.json's format from `path` into `specs`;
/// an error naming the file and the entry, or "".
std::string loadDeviceSpecs(llvm::StringRef path,
                            std::vector<DeviceSpec> &specs);
/// Parses `json` (named `source` in errors) into `specs`.
std::string parseDeviceSpecs(llvm::StringRef json, llvm::StringRef source,
                             std::vector<DeviceSpec> &specs);
/// The built-in device named `name`, or null.
const DeviceSpec *lookupDeviceSpec(llvm::StringRef name);
/// The device named `name`: a built-in one, or, when `file` is not empty,
/// one of the devices it lists (read into `storage`). Null, with `error`
/// set, when the file does not read or has no such device (the error lists
/// the names it has).
const DeviceSpec *findDeviceSpec(llvm::StringRef name, llvm::StringRef file,
                                 std::vector<DeviceSpec> &storage,
                                 std::string &error);
/// The device reports use unless told otherwise: "h100-80gb".
const DeviceSpec &getDefaultDeviceSpec();

} // namespace mlir::dtc

#endif // DTC_ANALYSIS_DEVICESPEC_H
