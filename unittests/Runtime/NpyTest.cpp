//===- NpyTest.cpp - .npy reading and writing
//------------------------------===//
//
// The expected bytes are numpy's format specification: magic, version 1.0,
// little-endian header length, a dict padded to a multiple of 64 bytes.
//
//===----------------------------------------------------------------------===//

#include "dtc/Runtime/TensorIO.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <fstream>

using namespace mlir::dtc;

namespace {

std::string tempPath(const char *name) {
  return (testing::TempDir() + "/") + name;
}

std::string slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

TEST(NpyTest, WritesNumpysFormat) {
  Tensor t(DType::I32, {2});
  t.ints() = {1, -1};
  std::string error, path = tempPath("w.npy");
  ASSERT_TRUE(writeNpy(path, t, error)) << error;
  // What numpy 1.24's np.save writes for np.array([1, -1], np.int32).
  std::string dict =
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }";
  std::string expected = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict +
                         std::string(128 - 10 - dict.size() - 1, ' ') + "\n" +
                         std::string("\x01\0\0\0\xff\xff\xff\xff", 8);
  EXPECT_EQ(slurp(path), expected);
}

TEST(NpyTest, RoundTripsEveryType) {
  for (DType dtype :
       {DType::F32, DType::F64, DType::F16, DType::I64, DType::I32, DType::I16,
        DType::I8, DType::U8, DType::Bool}) {
    Tensor t(dtype, {2, 3});
    for (int64_t i = 0; i < 6; ++i) {
      if (t.isFloat())
        t.floats()[i] = i * 0.5 - 1;
      else
        t.ints()[i] = dtype == DType::Bool ? i % 2 : i * 3 - 7;
    }
    t.roundToElementType();
    std::string error, path = tempPath("rt.npy");
    ASSERT_TRUE(writeNpy(path, t, error)) << error;
    std::optional<Tensor> back = readNpy(path, error);
    ASSERT_TRUE(back) << dtypeName(dtype) << ": " << error;
    EXPECT_EQ(back->dtype(), dtype);
    EXPECT_EQ(back->shape(), t.shape());
    EXPECT_EQ(back->floats(), t.floats());
    EXPECT_EQ(back->ints(), t.ints());
  }
}

TEST(NpyTest, ScalarsAndBF16) {
  Tensor s(DType::BF16, {});
  s.floats() = {1.5};
  std::string error, path = tempPath("s.npy");
  ASSERT_TRUE(writeNpy(path, s, error));
  EXPECT_NE(slurp(path).find("'descr': '<f4'"), std::string::npos);
  EXPECT_NE(slurp(path).find("'shape': ()"), std::string::npos);
  std::optional<Tensor> back = readNpy(path, error);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->dtype(), DType::F32); // bf16 travels as f32
  EXPECT_EQ(back->floats()[0], 1.5);
}

TEST(NpyTest, RejectsBadFiles) {
  std::string error;
  EXPECT_FALSE(readNpy(tempPath("does-not-exist.npy"), error));
  EXPECT_NE(error.find("cannot open"), std::string::npos);

  Tensor t(DType::F32, {4});
  std::string path = tempPath("cut.npy");
  ASSERT_TRUE(writeNpy(path, t, error));
  std::string bytes = slurp(path);
  std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() - 3);
  EXPECT_FALSE(readNpy(path, error));
  EXPECT_NE(error.find("expected 16 data bytes"), std::string::npos) << error;

  // A header claiming an absurd shape must fail without allocating it.
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': "
                       "(4000000000, 4000000000), }";
  header.append(128 - 10 - header.size() - 1, ' ');
  header += '\n';
  std::ofstream(path, std::ios::binary)
      << std::string("\x93NUMPY\x01\x00", 8) << char(header.size()) << '\0'
      << header << "abcd";
  EXPECT_FALSE(readNpy(path, error));
  EXPECT_NE(error.find("needs more data"), std::string::npos) << error;

  std::ofstream(path, std::ios::binary)
      << std::string("\x93NUMPY\x01\x00", 8) << char(header.size()) << '\0'
      << std::string(header).replace(header.find("<f4"), 3, "<c8");
  EXPECT_FALSE(readNpy(path, error));
  EXPECT_NE(error.find("unsupported dtype '<c8'"), std::string::npos) << error;
}

TEST(NpyTest, MapsElementsInPlace) {
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::I64,
                      DType::I32, DType::I16, DType::I8, DType::U8}) {
    Tensor t(dtype, {2, 3});
    for (int64_t i = 0; i < 6; ++i) {
      if (t.isFloat())
        t.floats()[i] = i * 0.75 - 2;
      else
        t.ints()[i] = dtype == DType::U8 ? 250 + i : i * 5 - 17;
    }
    t.roundToElementType();
    std::string error, path = tempPath("mapped.npy");
    ASSERT_TRUE(writeNpy(path, t, error)) << error;
    MappedArray mapped;
    ASSERT_EQ(mapped.open(path), "") << dtypeName(dtype);
    EXPECT_EQ(mapped.shape(), t.shape());
    EXPECT_EQ(mapped.size(), 6);
    for (int64_t i = 0; i < 6; ++i) {
      if (t.isFloat())
        EXPECT_EQ(mapped.at(i), t.floats()[i]) << dtypeName(dtype) << i;
      else
        EXPECT_EQ(mapped.intAt(i), t.ints()[i]) << dtypeName(dtype) << i;
    }
  }
}

TEST(NpyTest, MapsRawFilesAndRejectsBadOnes) {
  std::string path = tempPath("raw.bin");
  const uint16_t tokens[] = {0, 1, 65535};
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char *>(tokens), sizeof(tokens));
  MappedArray raw;
  ASSERT_EQ(raw.open(path, "<u2"), "");
  EXPECT_EQ(raw.shape(), Shape{3});
  EXPECT_EQ(raw.intAt(2), 65535);
  EXPECT_EQ(raw.byteOffset(2), 4u);
  MappedArray odd;
  EXPECT_NE(odd.open(path, "<i4").find("middle of an element"),
            std::string::npos);
  MappedArray bigEndian;
  EXPECT_NE(bigEndian.open(path, ">u2").find("unsupported element type"),
            std::string::npos);
  MappedArray missing;
  EXPECT_NE(missing.open(tempPath("absent.npy")), "");

  // A header claiming more than the file holds, even absurdly more.
  for (const char *shape : {"(5,)", "(4000000000, 4000000000)"}) {
    std::string header = std::string("{'descr': '<f4', 'fortran_order': "
                                     "False, 'shape': ") +
                         shape + ", }";
    header.append(128 - 10 - header.size() - 1, ' ');
    header += '\n';
    std::string npy = tempPath("short.npy");
    std::ofstream(npy, std::ios::binary)
        << std::string("\x93NUMPY\x01\x00", 8) << char(header.size()) << '\0'
        << header << std::string(16, '\0');
    MappedArray truncated;
    EXPECT_NE(truncated.open(npy).find("truncated"), std::string::npos)
        << shape;
  }
}

TEST(NpyTest, FileNamesEncodeAndDecode) {
  std::string name = "model.layers.0/attn weight%(q,k)";
  std::string encoded = encodeFileName(name);
  EXPECT_EQ(encoded.find_first_of(" /(),"), std::string::npos);
  EXPECT_EQ(encoded, "model.layers.0%2Fattn%20weight%25%28q%2Ck%29");
  EXPECT_EQ(decodeFileName(encoded), name);
}

} // namespace
