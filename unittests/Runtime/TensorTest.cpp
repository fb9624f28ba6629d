//===- TensorTest.cpp - element-type rounding and packing
//------------------===//

#include "dtc/Runtime/Tensor.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>

using namespace mlir::dtc;

namespace {

// bf16 keeps 8 significant bits: between 1 and 2 its spacing is 2^-7.
TEST(TensorTest, BF16RoundsToNearestEven) {
  EXPECT_EQ(roundFloat(1.0 + std::ldexp(1.0, -8), DType::BF16),
            1.0); // tie: even
  EXPECT_EQ(roundFloat(1.0 + 3 * std::ldexp(1.0, -8), DType::BF16),
            1.0 + std::ldexp(1.0, -6)); // tie: rounds up to even
  EXPECT_EQ(
      roundFloat(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -12), DType::BF16),
      1.0 + std::ldexp(1.0, -7)); // above the tie
  EXPECT_TRUE(std::isnan(roundFloat(NAN, DType::BF16)));
  EXPECT_TRUE(std::isinf(roundFloat(INFINITY, DType::BF16)));
}

// f16 has 11 significant bits and a largest finite value of 65504.
TEST(TensorTest, F16Rounds) {
  EXPECT_EQ(roundFloat(1.0 + std::ldexp(1.0, -11), DType::F16), 1.0);
  EXPECT_EQ(roundFloat(65504.0, DType::F16), 65504.0);
  EXPECT_TRUE(std::isinf(roundFloat(70000.0, DType::F16)));
}

TEST(TensorTest, F32RoundsOnce) {
  EXPECT_EQ(roundFloat(0.1, DType::F32), static_cast<double>(0.1f));
  EXPECT_EQ(roundFloat(0.1, DType::F64), 0.1);
}

TEST(TensorTest, IntegersWrap) {
  EXPECT_EQ(wrapInt(200, DType::I8), -56);
  EXPECT_EQ(wrapInt(-1, DType::U8), 255);
  EXPECT_EQ(wrapInt(int64_t(1) << 32, DType::I32), 0);
  EXPECT_EQ(wrapInt(7, DType::Bool), 1);
}

TEST(TensorTest, BytesRoundTrip) {
  Tensor t(DType::BF16, {3});
  t.floats() = {1.0, -2.5, 0.15625};
  std::vector<char> bytes = t.toBytes();
  ASSERT_EQ(bytes.size(), 6u);
  uint16_t first;
  std::memcpy(&first, bytes.data(), 2);
  EXPECT_EQ(first, 0x3F80); // 1.0 in bf16
  Tensor back = Tensor::fromBytes(DType::BF16, {3}, bytes.data());
  EXPECT_EQ(back.floats(), t.floats());

  // i64 values beyond double's 53-bit mantissa survive.
  Tensor big(DType::I64, {2});
  big.ints() = {INT64_MAX, INT64_MIN + 1};
  Tensor bigBack = Tensor::fromBytes(DType::I64, {2}, big.toBytes().data());
  EXPECT_EQ(bigBack.ints(), big.ints());

  Tensor b(DType::Bool, {2});
  b.ints() = {1, 0};
  EXPECT_EQ(b.toBytes(), (std::vector<char>{1, 0}));
}

TEST(TensorTest, ShapesAndStrides) {
  EXPECT_EQ(numElementsOf({2, 3, 4}), 24);
  EXPECT_EQ(numElementsOf({}), 1);
  EXPECT_EQ(stridesOf({2, 3, 4}), (Shape{12, 4, 1}));
  EXPECT_EQ(describe({2, 3}, DType::U8), "2x3xui8");
  Tensor t(DType::I32, {2, 3});
  EXPECT_EQ(t.byteSize(), 24u);
  EXPECT_EQ(t.reshaped({6}).shape(), (Shape{6}));
}

} // namespace
