//===- RooflineTest.cpp - roofline times and collective links -------------===//
//
// Expected times are written out from the datasheet figures of the
// built-in devices (DeviceSpec.cpp) and the roofline and alpha-beta
// formulas.
//
//===----------------------------------------------------------------------===//

#include "dtc/Analysis/Roofline.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::dtc;

namespace {

TEST(DeviceSpecTest, BuiltIns) {
  ASSERT_NE(lookupDeviceSpec("h100-80gb"), nullptr);
  ASSERT_NE(lookupDeviceSpec("h200-141gb"), nullptr);
  ASSERT_NE(lookupDeviceSpec("a100-80gb"), nullptr);
  EXPECT_EQ(lookupDeviceSpec("tpu"), nullptr);
  EXPECT_EQ(getDefaultDeviceSpec().name, "h100-80gb");
  MLIRContext context;
  Builder b(&context);
  const DeviceSpec &a100 = *lookupDeviceSpec("a100-80gb");
  EXPECT_EQ(a100.peak(b.getBF16Type()).matmul, 312e12);
  EXPECT_EQ(a100.peak(b.getF32Type()).matmul, 19.5e12);
  EXPECT_EQ(a100.peak(b.getF64Type()).vector, 9.7e12);
  EXPECT_EQ(a100.peak(b.getI64Type()).matmul, 19.5e12);
  EXPECT_EQ(lookupDeviceSpec("h200-141gb")->memoryBytesPerSecond, 4.8e12);
  // What nvidia-smi reports for an H100 80GB: 81559 MiB.
  EXPECT_EQ(lookupDeviceSpec("h100-80gb")->usableMemoryBytes,
            81559LL * 1024 * 1024);
}

// A device file in data/devices.json's format: read whole, or an error
// naming the entry and the field.
TEST(DeviceSpecTest, Parse) {
  const char *good = R"json({"devices": [{"name": "toy",
    "peak_flops": {"f64": {"matmul": 1, "vector": 1},
                   "f32": {"matmul": 2, "vector": 1},
                   "bf16": {"matmul": 8, "vector": 1},
                   "f16": {"matmul": 8, "vector": 1},
                   "i8": {"matmul": 16, "vector": 1}},
    "memory_bytes_per_second": 100, "memory_bytes": 1000,
    "usable_memory_bytes": 1024, "matmul_efficiency": 0.5,
    "memory_efficiency": 0.75, "devices_per_node": 4,
    "intra_node": {"latency_seconds": 1, "bytes_per_second": 10},
    "inter_node": {"latency_seconds": 2, "bytes_per_second": 5}}]})json";
  std::vector<DeviceSpec> specs;
  ASSERT_EQ(parseDeviceSpecs(good, "good.json", specs), "");
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].name, "toy");
  EXPECT_EQ(specs[0].bf16.matmul, 8);
  EXPECT_EQ(specs[0].usableMemoryBytes, 1024);
  EXPECT_EQ(specs[0].matmulEfficiency, 0.5);
  EXPECT_EQ(specs[0].devicesPerNode, 4);
  EXPECT_EQ(specs[0].interNode.seconds(10), 4);

  std::string broken = good;
  broken.replace(broken.find("\"usable_memory_bytes\""), 21,
                 "\"usable_memory\"");
  specs.clear();
  EXPECT_EQ(parseDeviceSpecs(broken, "broken.json", specs),
            "broken.json: device 0 ('toy'): missing or malformed "
            "usable_memory_bytes");
  specs.clear();
  EXPECT_EQ(parseDeviceSpecs("[1]", "list.json", specs),
            "list.json: no \"devices\" list");
  EXPECT_NE(loadDeviceSpecs("/nonexistent/devices.json", specs), "");
}

const char *kOps = R"mlir(
dtc.mesh @mesh ["dp" = 2, "tp" = 8]
dtc.mesh @wide ["tp" = 4, "dp" = 4]
func.func @f(%a: tensor<4096x4096xbf16>, %v: tensor<1048576xf32>,
             %x: tensor<1024xf32>) {
  %mm = dtc.matmul %a, %a : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  %add = dtc.add %v, %v : (tensor<1048576xf32>, tensor<1048576xf32>) -> tensor<1048576xf32>
  %tp = dtc.all_reduce %x on @mesh axes = ["tp"] kind = sum : tensor<1024xf32>
  %dp = dtc.all_reduce %x on @mesh axes = ["dp"] kind = sum : tensor<1024xf32>
  %wdp = dtc.all_reduce %x on @wide axes = ["dp"] kind = sum : tensor<1024xf32>
  %wtp = dtc.all_reduce %x on @wide axes = ["tp"] kind = sum : tensor<1024xf32>
  return
}
)mlir";

class RooflineTest : public ::testing::Test {
protected:
  void SetUp() override {
    context.loadDialect<DTCDialect, func::FuncDialect>();
    module = parseSourceString<ModuleOp>(kOps, ParserConfig(&context));
    ASSERT_TRUE(module);
    auto func = *module->getOps<func::FuncOp>().begin();
    for (Operation &op : func.getBody().front().without_terminator())
      ops.push_back(&op);
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::vector<Operation *> ops;
  const DeviceSpec &h100 = *lookupDeviceSpec("h100-80gb");
};

TEST_F(RooflineTest, MatmulIsComputeBound) {
  OpTime time = getRooflineTime(ops[0], h100);
  double n = 4096;
  EXPECT_DOUBLE_EQ(time.computeSeconds, 2 * n * n * n / 989.5e12);
  EXPECT_DOUBLE_EQ(time.memorySeconds, 3 * n * n * 2 / 3.35e12);
  EXPECT_TRUE(time.isComputeBound());
  EXPECT_DOUBLE_EQ(time.seconds(), time.computeSeconds);
}

TEST_F(RooflineTest, AddIsMemoryBound) {
  OpTime time = getRooflineTime(ops[1], h100);
  double n = 1048576;
  EXPECT_DOUBLE_EQ(time.computeSeconds, n / 67e12);
  EXPECT_DOUBLE_EQ(time.memorySeconds, 3 * n * 4 / 3.35e12);
  EXPECT_FALSE(time.isComputeBound());
  EXPECT_DOUBLE_EQ(time.seconds(), time.memorySeconds);
}

TEST_F(RooflineTest, CollectiveLinks) {
  auto collective = [&](unsigned i) {
    return cast<CollectiveOpInterface>(ops[i]);
  };
  // ["dp" = 2, "tp" = 8]: a tp group is 8 neighbouring ranks, one node; a
  // dp group spans ranks 0 and 8, two nodes.
  EXPECT_EQ(&getCollectiveLink(collective(2), h100), &h100.intraNode);
  EXPECT_EQ(&getCollectiveLink(collective(3), h100), &h100.interNode);
  // ["tp" = 4, "dp" = 4]: dp is ranks 0-3; tp is ranks 0, 4, 8, 12.
  EXPECT_EQ(&getCollectiveLink(collective(4), h100), &h100.intraNode);
  EXPECT_EQ(&getCollectiveLink(collective(5), h100), &h100.interNode);
  // A ring all-reduce over 8 ranks moves 2 * 7/8 of 4 KiB per link.
  double bus = 2.0 * 7 / 8 * 4096;
  EXPECT_DOUBLE_EQ(getCollectiveSeconds(collective(2), h100),
                   10e-6 + bus / 450e9);
  EXPECT_DOUBLE_EQ(getCollectiveSeconds(collective(3), h100),
                   20e-6 + 2.0 * 1 / 2 * 4096 / 50e9);
}

TEST_F(RooflineTest, StepSumsOpsAndCollectives) {
  auto func = *module->getOps<func::FuncOp>().begin();
  StepTime time = estimateStepTime(func, h100);
  OpTime mm = getRooflineTime(ops[0], h100),
         add = getRooflineTime(ops[1], h100);
  EXPECT_DOUBLE_EQ(time.opSeconds, mm.seconds() + add.seconds());
  EXPECT_DOUBLE_EQ(time.computeSeconds, mm.computeSeconds + add.computeSeconds);
  EXPECT_EQ(time.computeBoundOps, 1);
  EXPECT_EQ(time.memoryBoundOps, 1);
  double collectives = 0;
  for (unsigned i = 2; i < 6; ++i)
    collectives +=
        getCollectiveSeconds(cast<CollectiveOpInterface>(ops[i]), h100);
  EXPECT_DOUBLE_EQ(time.collectiveSeconds, collectives);
  EXPECT_DOUBLE_EQ(time.seconds(), time.opSeconds + collectives);
  // A function without a loss or gradients: everything is the optimizer's.
  EXPECT_DOUBLE_EQ(time.phaseSeconds[unsigned(StepPhase::Optimizer)],
                   time.seconds());
}

} // namespace
