//===- Philox.cpp - the counter-based generator behind dropout ------------===//

#include "dtc/Runtime/Philox.h"

namespace mlir::dtc {

std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> ctr,
                                   std::array<uint32_t, 2> key) {
  constexpr uint32_t kM0 = 0xD2511F53, kM1 = 0xCD9E8D57;
  constexpr uint32_t kW0 = 0x9E3779B9, kW1 = 0xBB67AE85;
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t(kM0) * ctr[0], p1 = uint64_t(kM1) * ctr[2];
    ctr = {uint32_t(p1 >> 32) ^ ctr[1] ^ key[0], uint32_t(p1),
           uint32_t(p0 >> 32) ^ ctr[3] ^ key[1], uint32_t(p0)};
    key = {key[0] + kW0, key[1] + kW1};
  }
  return ctr;
}

double dropoutUniform(uint64_t element, uint64_t step, uint64_t seed,
                      uint64_t stream) {
  std::array<uint32_t, 4> bits =
      philox4x32({uint32_t(element), uint32_t(element >> 32), uint32_t(step),
                  uint32_t(step >> 32)},
                 {uint32_t(seed), uint32_t(stream)});
  return bits[0] * 0x1p-32;
}

} // namespace mlir::dtc
