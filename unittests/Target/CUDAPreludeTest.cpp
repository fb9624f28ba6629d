//===- CUDAPreludeTest.cpp - the CUDA kernels' helpers against the runtime
//-===//
//
// The generated kernels convert 16-bit floats and draw dropout with the
// prelude's own code (the GPU has no libgcc _Float16 or runtime Philox).
// Compiled here as host C++ (-DDTC_CUDA_EMULATE, as --cuda-emulation
// does), each helper is checked against the runtime's independent
// implementation: every bf16 and f16 bit pattern widened, every f16 value
// and the f32 values between and around them narrowed (ties, subnormals,
// overflow, infinities, NaN), a million f32 bit patterns narrowed, and
// dropout's draw on 100,000 elements.
//
//===----------------------------------------------------------------------===//

#include "dtc/Runtime/Philox.h"
#include "dtc/Runtime/Tensor.h"
#include "dtc/Target/CUDA/CUDATarget.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <random>
#include <string>
#include <unistd.h>

using namespace mlir::dtc;

namespace {

/// The prelude compiled as host C++ with C entry points to its helpers.
class Prelude : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/dtc-prelude-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir = pattern;
    std::ofstream(dir + "/probe.cpp") << cudaKernelPrelude() << R"(
extern "C" float to_f32_from_f16(uint16_t h) { return dtc_f16_to_f32(h); }
extern "C" float to_f32_from_bf16(uint16_t h) { return dtc_bf16_to_f32(h); }
extern "C" uint16_t to_f16(float v) { return dtc_f32_to_f16(v); }
extern "C" uint16_t to_bf16(float v) { return dtc_f32_to_bf16(v); }
extern "C" double dropout(double x, uint64_t element, int64_t step,
                          uint32_t seed, uint32_t stream, double ratio) {
  return dtc_dropout(x, element, step, seed, stream, ratio);
}
)";
    std::string command = "c++ -x c++ -std=c++17 -O1 -fPIC -shared "
                          "-DDTC_CUDA_EMULATE " +
                          dir + "/probe.cpp -o " + dir + "/probe.so";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    library = dlopen((dir + "/probe.so").c_str(), RTLD_NOW);
    ASSERT_NE(library, nullptr) << dlerror();
  }
  void TearDown() override {
    if (library)
      dlclose(library);
    std::system(("rm -rf " + dir).c_str());
  }
  template <typename F> F entry(const char *name) {
    return reinterpret_cast<F>(dlsym(library, name));
  }

  std::string dir;
  void *library = nullptr;
};

uint32_t bitsOf(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return bits;
}

/// Equal bits, or both NaN.
void expectSameFloat(float got, float want, uint32_t input) {
  if (std::isnan(want))
    EXPECT_TRUE(std::isnan(got)) << std::hex << input;
  else
    EXPECT_EQ(bitsOf(got), bitsOf(want)) << std::hex << input;
}

/// Equal 16-bit patterns, or both NaN of that format.
void expectSameHalf(uint16_t got, uint16_t want, DType dtype, float input) {
  if (std::isnan(floatFromHalfBits(want, dtype)))
    EXPECT_TRUE(std::isnan(floatFromHalfBits(got, dtype)))
        << std::hex << bitsOf(input);
  else
    EXPECT_EQ(got, want) << std::hex << bitsOf(input);
}

TEST_F(Prelude, WidensEvery16BitPatternAsTheRuntime) {
  auto fromF16 = entry<float (*)(uint16_t)>("to_f32_from_f16");
  auto fromBF16 = entry<float (*)(uint16_t)>("to_f32_from_bf16");
  for (uint32_t h = 0; h < 65536; ++h) {
    expectSameFloat(fromF16(h), floatFromHalfBits(h, DType::F16), h);
    expectSameFloat(fromBF16(h), floatFromHalfBits(h, DType::BF16), h);
  }
}

TEST_F(Prelude, NarrowsToF16AndBF16AsTheRuntime) {
  auto toF16 = entry<uint16_t (*)(float)>("to_f16");
  auto toBF16 = entry<uint16_t (*)(float)>("to_bf16");
  auto check = [&](float v) {
    expectSameHalf(toF16(v), halfBitsFromFloat(v, DType::F16), DType::F16, v);
    expectSameHalf(toBF16(v), halfBitsFromFloat(v, DType::BF16), DType::BF16,
                   v);
  };
  // Every f16 value, the midpoints between neighbours (ties) and the
  // floats just beside them, subnormals and overflow included.
  for (uint32_t h = 0; h < 65536; ++h) {
    float v = floatFromHalfBits(h, DType::F16);
    float next = floatFromHalfBits(h + 1, DType::F16);
    check(v);
    if (std::isfinite(v) && std::isfinite(next) && (h & 0x7fff) != 0x7bff) {
      float mid = (v + next) / 2; // (exact in f32)
      check(mid);
      check(std::nextafter(mid, v));
      check(std::nextafter(mid, next));
    }
  }
  std::mt19937 random(7);
  for (int i = 0; i < 1000000; ++i) {
    uint32_t bits = random();
    float v;
    std::memcpy(&v, &bits, 4);
    check(v);
  }
}

TEST_F(Prelude, DrawsDropoutAsTheRuntime) {
  auto draw =
      entry<double (*)(double, uint64_t, int64_t, uint32_t, uint32_t, double)>(
          "dropout");
  const double ratio = 0.3;
  int64_t kept = 0;
  for (uint64_t element = 0; element < 100000; ++element) {
    uint64_t big = element * 0x9E3779B97F4A7C15ull; // (high words too)
    for (uint64_t at : {element, big}) {
      bool keep = dropoutUniform(at, 5, 7, 3) >= ratio;
      double got = draw(1.0, at, 5, 7, 3, ratio);
      EXPECT_EQ(got, keep ? 1.0 / (1.0 - ratio) : 0.0) << at;
      kept += keep;
    }
  }
  // (And the draws are the uniform they should be.)
  EXPECT_NEAR(kept / 200000.0, 1 - ratio, 0.01);
}

} // namespace
