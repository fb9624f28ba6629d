//===- TensorProtoTest.cpp - ONNX TensorProto decoding
//---------------------===//

#include "dtc/Runtime/ONNX/TensorProto.h"

#include "onnx/onnx_pb.h"

#include "gtest/gtest.h"

#include <cstring>
#include <fstream>

using namespace mlir::dtc;

namespace {

TEST(TensorProtoTest, TypedFields) {
  onnx::TensorProto p;
  p.set_name("w");
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.add_dims(2);
  p.add_float_data(1.5f);
  p.add_float_data(-2.0f);
  std::string error;
  std::optional<Tensor> t = tensorFromProto(p, "", error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->dtype(), DType::F32);
  EXPECT_EQ(t->floats(), (std::vector<double>{1.5, -2.0}));

  onnx::TensorProto h; // f16 bit patterns live in int32_data
  h.set_data_type(onnx::TensorProto::FLOAT16);
  h.add_int32_data(0x3C00); // 1.0
  h.add_int32_data(0xC000); // -2.0
  h.add_dims(2);
  t = tensorFromProto(h, "", error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->floats(), (std::vector<double>{1.0, -2.0}));

  onnx::TensorProto b;
  b.set_data_type(onnx::TensorProto::BOOL);
  b.add_int32_data(1);
  b.add_int32_data(0);
  b.add_dims(2);
  t = tensorFromProto(b, "", error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->ints(), (std::vector<int64_t>{1, 0}));
}

TEST(TensorProtoTest, RawAndExternalData) {
  int64_t values[3] = {7, -8, 9};
  onnx::TensorProto p;
  p.set_name("ids");
  p.set_data_type(onnx::TensorProto::INT64);
  p.add_dims(3);
  p.set_raw_data(std::string(reinterpret_cast<char *>(values), sizeof(values)));
  std::string error;
  std::optional<Tensor> t = tensorFromProto(p, "", error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->ints(), (std::vector<int64_t>{7, -8, 9}));

  std::string dir = testing::TempDir();
  std::ofstream(dir + "/weights.bin", std::ios::binary)
      << std::string(8, 'x')
      << std::string(reinterpret_cast<char *>(values), sizeof(values));
  onnx::TensorProto e;
  e.set_name("ext");
  e.set_data_type(onnx::TensorProto::INT64);
  e.add_dims(3);
  e.set_data_location(onnx::TensorProto::EXTERNAL);
  auto *location = e.add_external_data();
  location->set_key("location");
  location->set_value("weights.bin");
  auto *offset = e.add_external_data();
  offset->set_key("offset");
  offset->set_value("8");
  t = tensorFromProto(e, dir, error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->ints(), (std::vector<int64_t>{7, -8, 9}));

  location->set_value("missing.bin");
  EXPECT_FALSE(tensorFromProto(e, dir, error));
  EXPECT_NE(error.find("cannot open external data file"), std::string::npos);
}

TEST(TensorProtoTest, RejectsInconsistentTensors) {
  std::string error;
  onnx::TensorProto p;
  p.set_name("w");
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.add_dims(3);
  p.add_float_data(1.0f);
  EXPECT_FALSE(tensorFromProto(p, "", error));
  EXPECT_EQ(error, "tensor 'w': holds 1 values but shape 3xf32 needs 3");

  // Absurd dimensions fail before any allocation.
  onnx::TensorProto huge;
  huge.set_data_type(onnx::TensorProto::FLOAT);
  huge.add_dims(int64_t(1) << 30);
  huge.add_dims(int64_t(1) << 30);
  EXPECT_FALSE(tensorFromProto(huge, "", error));
  EXPECT_NE(error.find("invalid dimension"), std::string::npos) << error;

  onnx::TensorProto s;
  s.set_data_type(onnx::TensorProto::STRING);
  EXPECT_FALSE(tensorFromProto(s, "", error));
  EXPECT_NE(error.find("unsupported element type STRING"), std::string::npos);
}

} // namespace
