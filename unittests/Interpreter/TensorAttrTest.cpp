//===- TensorAttrTest.cpp - tensors <-> attributes, index helpers ---------===//

#include "dtc/Interpreter/TensorAttr.h"
#include "../../lib/Interpreter/Kernels.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::dtc;

namespace {

TEST(TensorAttrTest, DenseAndResourceRoundTrip) {
  MLIRContext context;
  for (DType dtype : {DType::F32, DType::BF16, DType::F16, DType::I64,
                      DType::U8, DType::Bool}) {
    Tensor t(dtype, {2, 2});
    for (int64_t i = 0; i < 4; ++i) {
      if (t.isFloat())
        t.floats()[i] = 0.75 * i - 1;
      else
        t.ints()[i] = dtype == DType::Bool ? i % 2 : 250 + i;
    }
    t.roundToElementType();
    for (ElementsAttr attr : {denseAttrFromTensor(&context, t),
                              resourceAttrFromTensor(&context, "w", t)}) {
      FailureOr<Tensor> back = tensorFromAttr(attr);
      ASSERT_TRUE(succeeded(back)) << dtypeName(dtype);
      EXPECT_EQ(back->dtype(), dtype);
      EXPECT_EQ(back->floats(), t.floats());
      EXPECT_EQ(back->ints(), t.ints());
    }
  }
}

TEST(TensorAttrTest, ElementTypes) {
  MLIRContext context;
  for (DType dtype :
       {DType::F32, DType::F64, DType::BF16, DType::F16, DType::I64, DType::I32,
        DType::I16, DType::I8, DType::U8, DType::Bool})
    EXPECT_EQ(dtypeOf(elementTypeOf(&context, dtype)), dtype);
  EXPECT_FALSE(dtypeOf(IntegerType::get(&context, 16, IntegerType::Unsigned)));
}

TEST(IndexTest, BroadcastOffsets) {
  // A [3, 1] operand broadcast to [2, 3, 2]: element (b, i, j) reads i.
  EXPECT_EQ(broadcastOffsets({3, 1}, {2, 3, 2}),
            (std::vector<int64_t>{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(broadcastOffsets({}, {3}), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(broadcastOffsets({2}, {2}), (std::vector<int64_t>{0, 1}));
}

TEST(IndexTest, StridedOffsetsAndSplit) {
  // Walking a [2, 2] window of a [3, 4] tensor from (1, 3) with steps
  // (1, -2): offsets of (1,3), (1,1), (2,3), (2,1).
  EXPECT_EQ(stridedOffsets({2, 2}, 7, {4, -2}),
            (std::vector<int64_t>{7, 5, 11, 9}));
  DimSplit split = splitAt({2, 3, 4}, 1);
  EXPECT_EQ(split.outer, 2);
  EXPECT_EQ(split.size, 3);
  EXPECT_EQ(split.inner, 4);
}

TEST(ShapeTest, BroadcastShapes) {
  SmallVector<int64_t> a{2, 1, 4}, b{3, 1}, c{5};
  FailureOr<SmallVector<int64_t>> ab = broadcastShapes({a, b});
  ASSERT_TRUE(succeeded(ab));
  EXPECT_EQ(*ab, (SmallVector<int64_t>{2, 3, 4}));
  EXPECT_TRUE(failed(broadcastShapes({a, c})));
}

} // namespace
