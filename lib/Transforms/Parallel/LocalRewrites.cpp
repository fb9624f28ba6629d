//===- LocalRewrites.cpp - small IR rewrites the parallel passes share ----===//

#include "Partitioner.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::dtc;

LogicalResult mlir::dtc::scatterInsteadOfSum(AllReduceOp sum,
                                             RewriterBase &rewriter,
                                             bool someAxes) {
  if (sum.getKind() != CollectiveReduction::Sum || sum->use_empty())
    return failure();
  auto first = dyn_cast<ShardOp>(*sum->user_begin());
  if (!first || first.getBlocks() != 1 ||
      !llvm::all_of(sum->getUsers(), [&](Operation *user) {
        auto shard = dyn_cast<ShardOp>(user);
        return shard && shard.getAxes() == first.getAxes() &&
               shard.getDim() == first.getDim() && shard.getBlocks() == 1;
      }))
    return failure();
  // The sum's axes the readers keep no part over: none, or with
  // `someAxes` the rest of them.
  SmallVector<Attribute> others;
  for (Attribute axis : sum.getAxes())
    if (!llvm::is_contained(first.getAxes(), axis))
      others.push_back(axis);
  bool some = someAxes && !others.empty() &&
              others.size() + first.getAxes().size() == sum.getAxes().size();
  if (first.getAxes() != sum.getAxes() && !some)
    return failure();
  rewriter.setInsertionPoint(sum);
  StringAttr why = sum.getReasonAttr();
  std::string keeps = "each rank keeps its part";
  if (!others.empty()) {
    keeps = "each";
    for (StringRef axis : first.getAxes().getAsValueRange<StringAttr>())
      keeps += " " + axis.str();
    keeps += " rank keeps its part";
  }
  std::string reason = (why ? why.str() + "; " : std::string()) + keeps;
  Value part = ReduceScatterOp::create(rewriter, sum.getLoc(), first.getType(),
                                       sum.getInput(), sum.getMeshAttr(),
                                       first.getAxes(), first.getDimAttr(),
                                       rewriter.getStringAttr(reason));
  if (!others.empty())
    part = AllReduceOp::create(rewriter, sum.getLoc(), part, sum.getMeshAttr(),
                               rewriter.getArrayAttr(others), sum.getKindAttr(),
                               rewriter.getStringAttr(reason));
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
