//===- Philox.h - the counter-based generator behind dropout ----*- C++ -*-===//
//
// Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as
// easy as 1, 2, 3", SC 2011): 128 random bits from a 128-bit counter and a
// 64-bit key, with no state. dtc draws dropout masks from it keyed on
// (seed, stream) with counter (element index, step), so any device that
// knows an element's global index draws the same bit.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_PHILOX_H
#define DTC_RUNTIME_PHILOX_H

#include <array>
#include <cstdint>

namespace mlir::dtc {

std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter,
                                   std::array<uint32_t, 2> key);

/// The uniform number in [0, 1) that dropout compares with its ratio.
double dropoutUniform(uint64_t element, uint64_t step, uint64_t seed,
                      uint64_t stream);

} // namespace mlir::dtc

#endif // DTC_RUNTIME_PHILOX_H
