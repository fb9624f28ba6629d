//===- LocalRewrites.cpp - small IR rewrites the parallel passes share ----===//

#include "Partitioner.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::dtc;

LogicalResult mlir::dtc::scatterInsteadOfSum(AllReduceOp sum,
                                             RewriterBase &rewriter) {
  if (sum.getKind() != CollectiveReduction::Sum || sum->use_empty())
    return failure();
  auto first = dyn_cast<ShardOp>(*sum->user_begin());
  if (!first || first.getBlocks() != 1 ||
      !llvm::all_of(sum->getUsers(), [&](Operation *user) {
        auto shard = dyn_cast<ShardOp>(user);
        return shard && shard.getAxes() == sum.getAxes() &&
               shard.getDim() == first.getDim() && shard.getBlocks() == 1;
      }))
    return failure();
  rewriter.setInsertionPoint(sum);
  StringAttr why = sum.getReasonAttr();
  Value part = ReduceScatterOp::create(
      rewriter, sum.getLoc(), first.getType(), sum.getInput(),
      sum.getMeshAttr(), sum.getAxes(), first.getDimAttr(),
      rewriter.getStringAttr((why ? why.str() + "; " : std::string()) +
                             "each rank keeps its part"));
  for (Operation *user : llvm::to_vector(sum->getUsers()))
    rewriter.replaceOp(user, part);
  rewriter.eraseOp(sum);
  return success();
}

LogicalResult mlir::dtc::reinferResultTypes(Operation *op,
                                            SmallVectorImpl<Value> &changed) {
  SmallVector<Type> inferred;
  auto infer = dyn_cast<InferTypeOpInterface>(op);
  if (auto cast = dyn_cast<CastOp>(op)) {
    // The operand's shape in the cast's element type.
    inferred.push_back(
        cast.getInput().getType().clone(cast.getType().getElementType()));
  } else if (!infer || failed(infer.inferReturnTypes(
                           op->getContext(), op->getLoc(), op->getOperands(),
                           op->getAttrDictionary(), op->getPropertiesStorage(),
                           op->getRegions(), inferred)))
    return failure();
  for (auto [result, type] : llvm::zip(op->getResults(), inferred))
    if (result.getType() != type) {
      result.setType(type);
      changed.push_back(result);
    }
  return success();
}
