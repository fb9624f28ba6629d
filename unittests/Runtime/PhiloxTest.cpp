//===- PhiloxTest.cpp - Philox4x32-10 known answers and dropout draws -----===//
//
// The known-answer vectors are those published with Random123 (the
// generator's reference implementation, kat_vectors).
//
//===----------------------------------------------------------------------===//

#include "dtc/Runtime/Philox.h"

#include "gtest/gtest.h"

using namespace mlir::dtc;

namespace {

TEST(PhiloxTest, KnownAnswers) {
  EXPECT_EQ(philox4x32({0, 0, 0, 0}, {0, 0}),
            (std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c,
                                     0x9b00dbd8}));
  EXPECT_EQ(philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                       {0xffffffff, 0xffffffff}),
            (std::array<uint32_t, 4>{0x408f276d, 0x41c83b0e, 0xa20bc7c6,
                                     0x6d5451fd}));
  EXPECT_EQ(philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                       {0xa4093822, 0x299f31d0}),
            (std::array<uint32_t, 4>{0xd16cfe09, 0x94fdcceb, 0x5001e420,
                                     0x24126ea1}));
}

TEST(PhiloxTest, DropoutDrawsAreUniformAndKeyed) {
  // Mean of 100000 draws: 0.5 within 5 standard errors (0.0046).
  double sum = 0;
  for (uint64_t i = 0; i < 100000; ++i)
    sum += dropoutUniform(i, 7, 1, 2);
  EXPECT_NEAR(sum / 100000, 0.5, 0.0046);
  EXPECT_EQ(dropoutUniform(5, 3, 1, 2), dropoutUniform(5, 3, 1, 2));
  EXPECT_NE(dropoutUniform(5, 3, 1, 2), dropoutUniform(5, 4, 1, 2)); // step
  EXPECT_NE(dropoutUniform(5, 3, 1, 2), dropoutUniform(5, 3, 1, 3)); // stream
  EXPECT_NE(dropoutUniform(5, 3, 1, 2), dropoutUniform(6, 3, 1, 2)); // index
}

} // namespace
