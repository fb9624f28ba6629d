//===- ExpertLoad.cpp - the tokens each expert receives, a step output ----===//
//
// A mixture of experts trains well only while its router spreads the
// tokens; the load per expert is the first thing to watch. Each router is
// a top_k over the experts: the step returns how many of the batch's
// (token, choice) pairs chose each expert, [routers, experts] in the
// routers' order, as the output `expert_tokens`, which dtc-run reports.
// On a mesh the count is each rank's tokens' summed over the ranks, as
// any whole result is. A mixture sorted into buffers of a bound
// (dtc-sort-experts) also returns the pairs past them, `expert_overflow`.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Training/Passes.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/SignatureEditor.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "dtc/Runtime/StepSignature.h"
#include "mlir/IR/Builders.h"

#include <numeric>

namespace mlir::dtc {
#define GEN_PASS_DEF_EXPERTLOAD
#include "dtc/Transforms/Training/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

struct ExpertLoadPass : public dtc::impl::ExpertLoadBase<ExpertLoadPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || !getLossResult(func))
      return;
    SmallVector<TopKOp> routers;
    func.walk([&](TopKOp topK) { routers.push_back(topK); });
    if (routers.empty())
      return;
    int64_t experts =
        routers[0].getInput().getType().getDimSize(routers[0].getDim());
    if (llvm::any_of(routers, [&](TopKOp topK) {
          return topK.getInput().getType().getDimSize(topK.getDim()) != experts;
        }))
      return; // not one mixture's routers: no count to compare
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    OpBuilder b(ret);
    Type f32 = b.getF32Type();
    SmallVector<Value> counts;
    for (TopKOp topK : routers) {
      Location loc = topK.getLoc();
      // choices == iota over a trailing experts dimension, summed over
      // everything else.
      Value choices = topK.getIndices();
      auto type = cast<RankedTensorType>(choices.getType());
      SmallVector<int64_t> shape(type.getShape());
      shape.push_back(1);
      Value column = ReshapeOp::create(b, loc, type.clone(shape), choices);
      SmallVector<int64_t> iotaShape(shape.size(), 1);
      iotaShape.back() = experts;
      Value ids = IotaOp::create(b, loc, type.clone(iotaShape),
                                 static_cast<int64_t>(shape.size() - 1));
      Value chosen =
          CompareOp::create(b, loc, ComparisonPredicate::EQ, column, ids);
      shape.back() = experts;
      Value ones =
          CastOp::create(b, loc, RankedTensorType::get(shape, f32), chosen);
      SmallVector<int64_t> dims(shape.size() - 1);
      std::iota(dims.begin(), dims.end(), 0);
      Value count = ReduceSumOp::create(b, loc, ones, dims, /*keepDims=*/false);
      counts.push_back(ReshapeOp::create(
          b, loc, RankedTensorType::get({1, experts}, f32), count));
    }
    Value load =
        counts.size() == 1
            ? counts[0]
            : ConcatOp::create(b, func.getLoc(), counts, 0).getResult();
    SignatureEditor signature(func);
    signature.addResult(
        load, {b.getNamedAttr(kOutputAttrName,
                              b.getStringAttr(kExpertTokensOutputName))});
    // A sorted mixture's pairs past its buffers (dtc-sort-experts).
    SmallVector<Value> overflows;
    func.walk([&](Operation *op) {
      if (op->hasAttr(kExpertOverflowAttrName))
        overflows.push_back(ReshapeOp::create(
            b, op->getLoc(), RankedTensorType::get({1, experts}, f32),
            op->getResult(0)));
    });
    if (!overflows.empty())
      signature.addResult(
          overflows.size() == 1
              ? overflows[0]
              : ConcatOp::create(b, func.getLoc(), overflows, 0).getResult(),
          {b.getNamedAttr(kOutputAttrName,
                          b.getStringAttr(kExpertOverflowOutputName))});
    signature.commit();
  }
};

} // namespace
