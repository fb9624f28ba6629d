//===- TestShardingRules.cpp - print every op's sharding rule -------------===//
//
// dtc-opt --dtc-test-print-sharding-rules prints, for each op that has a
// sharding rule, its name and the rule in Shardy's notation, so that lit
// tests can check every op's rule.
//
//===----------------------------------------------------------------------===//

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::dtc;

namespace {

struct TestPrintShardingRules
    : public PassWrapper<TestPrintShardingRules, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrintShardingRules)

  StringRef getArgument() const final {
    return "dtc-test-print-sharding-rules";
  }
  StringRef getDescription() const final {
    return "Print each op's sharding rule (ShardingRuleOpInterface)";
  }

  void runOnOperation() override {
    getOperation().walk([](ShardingRuleOpInterface op) {
      llvm::outs() << op->getName() << ": ";
      op.getShardingRule().print(llvm::outs());
      llvm::outs() << "\n";
    });
  }
};

} // namespace

namespace mlir::dtc::test {
void registerTestShardingRulesPass() {
  PassRegistration<TestPrintShardingRules>();
}
} // namespace mlir::dtc::test
