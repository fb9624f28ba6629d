//===- PadVocabulary.cpp - vocabulary rows padded to a multiple -----------===//
//
// Vocabulary parallelism splits the token embedding and the LM head by
// rows, which needs the vocabulary to divide over the ranks. Megatron pads
// it: this pass gives the vocabulary parameters zero rows up to a multiple
// and the padded logits -inf, so that the softmax, the loss and every
// gradient are those of the unpadded model (the padded rows' gradients are
// zero, so they stay zero). It runs on the forward, before the loss is
// attached, which then builds the cross-entropy over the padded logits.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Parallel/Passes.h"

#include "Partitioner.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_PADVOCABULARY
#include "dtc/Transforms/Parallel/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

struct PadVocabularyPass
    : public dtc::impl::PadVocabularyBase<PadVocabularyPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || multiple <= 1)
      return;
    // The loss is built over the padded logits.
    if (getLossResult(func)) {
      func.emitError("dtc-pad-vocabulary runs on the forward, before "
                     "dtc-attach-loss: this function has a loss already");
      return signalPassFailure();
    }
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
      auto name = func.getResultAttrOfType<StringAttr>(i, kOutputAttrName);
      if (name && name.getValue() == logits &&
          failed(padHead(func, ret->getOpOperand(i))))
        return signalPassFailure();
    }
    // Token embeddings (tables indexed by a model input) that the head
    // does not share: zero rows no id reaches.
    SmallVector<BlockArgument> tables;
    func.walk([&](GatherOp gather) {
      std::optional<WeightRead> table = traceParam(gather.getInput());
      auto ids = dyn_cast<BlockArgument>(gather.getIndices());
      if (table && table->paramDim[0] == 0 && gather.getDim() == 0 && ids &&
          func.getArgAttr(ids.getArgNumber(), kInputAttrName) &&
          !func.getArgAttr(table->param.getArgNumber(), kUnpaddedRowsAttrName))
        tables.push_back(table->param);
    });
    for (BlockArgument table : tables)
      if (failed(padRows(func, table)))
        return signalPassFailure();
  }

  /// Gives `param` zero rows up to a multiple; its views up to the head and
  /// the lookups follow. Returns the padded row count (0: nothing to do).
  FailureOr<int64_t> padRows(func::FuncOp func, BlockArgument param) {
    auto tableType = cast<RankedTensorType>(param.getType());
    int64_t rows = tableType.getDimSize(0);
    if (rows % multiple == 0 ||
        func.getArgAttr(param.getArgNumber(), kUnpaddedRowsAttrName))
      return 0;
    int64_t padded = (rows + multiple - 1) / multiple * multiple;
    // Its views, lookups, and a head that reads it directly (a Gemm with
    // transB: the vocabulary is the product's last dimension).
    auto readsAsHead = [&](Operation *user) {
      auto matmul = dyn_cast<MatmulOp>(user);
      return matmul && matmul.getRhs() == param && matmul.getTransposeRhs() &&
             matmul.getLhs() != param;
    };
    for (Operation *user : param.getUsers())
      if (!isa<CastOp, TransposeOp, GatherOp>(user) && !readsAsHead(user))
        return user->emitError("cannot pad the vocabulary of '")
               << dtc::getArgumentName(func, param.getArgNumber()) << "' to "
               << padded << " rows: it is read by '" << user->getName() << "'";
    unsigned index = param.getArgNumber();
    SmallVector<int64_t> shape(tableType.getShape());
    shape[0] = padded;
    param.setType(tableType.clone(shape));
    func.setArgAttr(
        index, kUnpaddedRowsAttrName,
        IntegerAttr::get(IntegerType::get(&getContext(), 64), rows));
    SmallVector<Value> work{param};
    while (!work.empty()) {
      Value value = work.pop_back_val();
      for (Operation *user : value.getUsers()) {
        if (isa<GatherOp, func::ReturnOp>(user))
          continue; // the lookup's result does not change; the output's
                    // type is updated by the caller
        if (failed(reinferResultTypes(user, work)))
          return user->emitError("cannot pad the vocabulary through '")
                 << user->getName() << "'";
      }
    }
    func.setFunctionType(FunctionType::get(
        &getContext(), func.getBody().front().getArgumentTypes(),
        func.getBody().front().getTerminator()->getOperandTypes()));
    func.emitRemark("padded the vocabulary of '")
        << dtc::getArgumentName(func, index) << "' from " << rows << " to "
        << padded << " rows (a multiple of " << static_cast<int64_t>(multiple)
        << ")";
    return padded;
  }

  /// Pads the vocabulary of the LM head whose logits `output` returns.
  LogicalResult padHead(func::FuncOp func, OpOperand &output) {
    Value logits = output.get();
    while (auto cast = logits.getDefiningOp<CastOp>())
      logits = cast.getInput();
    auto matmul = logits.getDefiningOp<MatmulOp>();
    auto type = cast<RankedTensorType>(output.get().getType());
    int64_t rows = type.getShape().back();
    if (!matmul || rows % multiple == 0)
      return success();
    int64_t r = matmul.getRhs().getType().getRank();
    std::optional<WeightRead> weight = traceParam(matmul.getRhs());
    if (!weight ||
        weight->paramDim[matmul.getTransposeRhs() ? r - 2 : r - 1] != 0)
      return success(); // not a row-major vocabulary table: left alone
    FailureOr<int64_t> padded = padRows(func, weight->param);
    if (failed(padded) || *padded == 0)
      return failure(failed(padded));

    // The padded logits are -inf: no probability, no gradient. The mask is
    // computed (iota < rows), not stored: a vocabulary-sized constant would
    // make compile time grow with the vocabulary.
    OpBuilder b(output.getOwner());
    Location loc = output.getOwner()->getLoc();
    Type element = cast<RankedTensorType>(output.get().getType())
                       .getElementType();
    auto scalar = [&](Type type, TypedAttr value) -> Value {
      return ConstantOp::create(
          b, loc, DenseElementsAttr::get(RankedTensorType::get({}, type), value));
    };
    Value column = IotaOp::create(
        b, loc, RankedTensorType::get({*padded}, b.getI64Type()), 0);
    Value inVocabulary =
        CompareOp::create(b, loc, ComparisonPredicate::LT, column,
                          scalar(b.getI64Type(), b.getI64IntegerAttr(rows)));
    const llvm::fltSemantics &sem =
        cast<FloatType>(element).getFloatSemantics();
    Value zero = scalar(element, b.getFloatAttr(element, 0.0));
    Value minusInf = scalar(
        element,
        FloatAttr::get(element, APFloat::getInf(sem, /*Negative=*/true)));
    Value maskValue =
        SelectOp::create(b, loc, inVocabulary, zero, minusInf);
    // Same type: padRows already gave the function its padded signature.
    output.set(AddOp::create(b, loc, output.get(), maskValue));
    return success();
  }
};

} // namespace
