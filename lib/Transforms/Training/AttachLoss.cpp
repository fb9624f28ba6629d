//===- AttachLoss.cpp - make the function return a training loss ----------===//

#include "Signature.h"
#include "dtc/Transforms/Training/Passes.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/IR/Builders.h"

#include <cmath>
#include <limits>

namespace mlir::dtc {
#define GEN_PASS_DEF_ATTACHLOSS
#include "dtc/Transforms/Training/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// The function result whose dtc.output is `name`, or null.
Value findOutput(func::FuncOp func, StringRef name) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (auto attr = func.getResultAttrOfType<StringAttr>(i, kOutputAttrName))
      if (attr.getValue() == name)
        return ret.getOperand(i);
  return Value();
}

/// Mean over the non-ignored tokens of -log_softmax(logits)[label], with the
/// classes along the last dimension of `logits`.
Value buildCrossEntropy(OpBuilder &b, Location loc, Value logits, Value labels,
                        int64_t ignoreIndex) {
  auto type = cast<RankedTensorType>(logits.getType());
  Type elementType = type.getElementType();
  int64_t classDim = type.getRank() - 1;
  auto scalar = [&](Type t, Attribute value) -> Value {
    return ConstantOp::create(
        b, loc, DenseElementsAttr::get(RankedTensorType::get({}, t), value));
  };
  Value logp = LogSoftmaxOp::create(b, loc, logits, classDim);
  // One-hot selection: classes == labels (broadcast along the class dim).
  auto indexType = type.clone(b.getI64Type());
  Value classes = IotaOp::create(b, loc, indexType, classDim);
  SmallVector<int64_t> keptShape(type.getShape());
  keptShape.back() = 1;
  Value column = ReshapeOp::create(
      b, loc, RankedTensorType::get(keptShape, b.getI64Type()), labels);
  Value onehot =
      CompareOp::create(b, loc, ComparisonPredicate::EQ, classes, column);
  Value zero = scalar(elementType, b.getFloatAttr(elementType, 0));
  Value picked = ReduceSumOp::create(
      b, loc, SelectOp::create(b, loc, onehot, logp, zero).getResult(),
      ArrayRef<int64_t>{classDim}, false);
  Value ignore = scalar(b.getI64Type(), b.getI64IntegerAttr(ignoreIndex));
  Value counted = CastOp::create(
      b, loc, cast<RankedTensorType>(labels.getType()).clone(elementType),
      CompareOp::create(b, loc, ComparisonPredicate::NE, labels, ignore));
  SmallVector<int64_t> all;
  for (int64_t i = 0; i < classDim; ++i)
    all.push_back(i);
  Value total = ReduceSumOp::create(
      b, loc, NegOp::create(b, loc, MulOp::create(b, loc, picked, counted)),
      all, false);
  Value count = ReduceSumOp::create(b, loc, counted, all, false);
  return DivOp::create(b, loc, total, count);
}

Value scalarLike(OpBuilder &b, Location loc, double value, Value like) {
  Type elementType = cast<RankedTensorType>(like.getType()).getElementType();
  return ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(RankedTensorType::get({}, elementType),
                             b.getFloatAttr(elementType, value)));
}

/// T^2 * KL(softmax(teacher/T) || softmax(student/T)), summed over the
/// classes (last dimension) and averaged over all tokens.
Value buildDistillation(OpBuilder &b, Location loc, Value student,
                        Value teacher, double temperature) {
  auto type = cast<RankedTensorType>(student.getType());
  int64_t classDim = type.getRank() - 1;
  Value invT = scalarLike(b, loc, 1.0 / temperature, student);
  Value logps = LogSoftmaxOp::create(
      b, loc, MulOp::create(b, loc, student, invT).getResult(), classDim);
  Value logpt = LogSoftmaxOp::create(
      b, loc, MulOp::create(b, loc, teacher, invT).getResult(), classDim);
  Value pointwise = MulOp::create(b, loc, ExpOp::create(b, loc, logpt),
                                  SubOp::create(b, loc, logpt, logps));
  SmallVector<int64_t> all;
  for (int64_t i = 0; i <= classDim; ++i)
    all.push_back(i);
  Value kl = ReduceSumOp::create(b, loc, pointwise, all, false);
  int64_t tokens = type.getNumElements() / type.getShape().back();
  return MulOp::create(
      b, loc, kl,
      scalarLike(b, loc, temperature * temperature / tokens, student));
}

struct AttachLossPass : public dtc::impl::AttachLossBase<AttachLossPass> {
  using Base::Base;

  /// `loss` plus each of `aux-loss`'s outputs times its coefficient.
  LogicalResult addAuxiliaryLosses(OpBuilder &b, func::FuncOp func,
                                   Value &lossValue) {
    SmallVector<StringRef> entries;
    StringRef(auxLoss).split(entries, ',', -1, /*KeepEmpty=*/false);
    for (StringRef entry : entries) {
      auto [name, coefText] = entry.split('=');
      double coef = 0;
      if (name.empty() || coefText.trim().getAsDouble(coef) ||
          !std::isfinite(coef))
        return func.emitError("aux-loss: '")
               << entry << "' is not NAME=COEF (a model output and a finite "
               << "coefficient, e.g. aux_loss=0.01)";
      Value aux = findOutput(func, name.trim());
      auto type = aux ? dyn_cast<RankedTensorType>(aux.getType()) : nullptr;
      if (!type || type.getRank() != 0 ||
          !isa<FloatType>(type.getElementType()))
        return func.emitError("aux-loss: the model has no scalar float "
                              "output '")
               << name.trim() << "' to add to the loss";
      Location loc = aux.getLoc();
      if (type != lossValue.getType())
        aux = CastOp::create(b, loc, lossValue.getType(), aux);
      lossValue = AddOp::create(
          b, loc, lossValue,
          MulOp::create(b, loc, aux, scalarLike(b, loc, coef, aux)));
    }
    return success();
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    OptionRanges ranges;
    ranges
        .check("temperature", temperature, 0,
               std::numeric_limits<double>::infinity(), /*lowOpen=*/true)
        .check("alpha", alpha, 0, 1);
    if (failed(ranges.verify(func)))
      return signalPassFailure();
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    OpBuilder b(ret);
    Value lossValue;
    StringRef spec(loss);
    if (spec.consume_front("output:")) {
      lossValue = findOutput(func, spec);
      auto type =
          lossValue ? dyn_cast<RankedTensorType>(lossValue.getType()) : nullptr;
      if (!type || type.getRank() != 0 ||
          !isa<FloatType>(type.getElementType())) {
        func.emitError("loss output '")
            << spec << "' must be a scalar float result of the function";
        return signalPassFailure();
      }
    } else if (spec == "cross-entropy" || spec == "distillation") {
      Value logitsValue = findOutput(func, logits);
      auto type = logitsValue
                      ? dyn_cast<RankedTensorType>(logitsValue.getType())
                      : nullptr;
      if (!type || type.getRank() < 2 ||
          !isa<FloatType>(type.getElementType())) {
        func.emitError("cross-entropy needs a float output named '")
            << logits
            << "' with the classes along its last dimension (rank >= 2)";
        return signalPassFailure();
      }
      auto labelsType =
          RankedTensorType::get(type.getShape().drop_back(), b.getI64Type());
      Value labelsArg = appendArgument(
          func, labelsType,
          {b.getNamedAttr(kInputAttrName, b.getStringAttr(labels)),
           b.getNamedAttr(kClassesAttrName,
                          b.getI64IntegerAttr(type.getShape().back()))});
      lossValue = buildCrossEntropy(b, ret.getLoc(), logitsValue, labelsArg,
                                    ignoreIndex);
      if (spec == "distillation") {
        Value teacher = findOutput(func, teacherLogits);
        if (!teacher || teacher.getType() != logitsValue.getType()) {
          func.emitError("distillation needs an output '")
              << teacherLogits << "' of the logits' type "
              << logitsValue.getType() << " (see dtc-inline-teacher)";
          return signalPassFailure();
        }
        Location loc = ret.getLoc();
        Value kd = buildDistillation(b, loc, logitsValue, teacher, temperature);
        lossValue = AddOp::create(
            b, loc, MulOp::create(b, loc, kd, scalarLike(b, loc, alpha, kd)),
            MulOp::create(b, loc, lossValue,
                          scalarLike(b, loc, 1 - alpha, lossValue)));
      }
    } else {
      func.emitError("unknown loss '")
          << loss << "' (expected cross-entropy, distillation or output:NAME)";
      return signalPassFailure();
    }
    if (failed(addAuxiliaryLosses(b, func, lossValue)))
      return signalPassFailure();
    // The function is a training step now: its results are the loss and
    // the next values of the arguments donated to results (the buffers a
    // model updates, as batch norms' running statistics).
    SmallVector<Value> results = {lossValue};
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      auto alias =
          func.getArgAttrOfType<IntegerAttr>(i, kAliasingOutputAttrName);
      if (!alias)
        continue;
      func.setArgAttr(i, kAliasingOutputAttrName,
                      b.getI64IntegerAttr(results.size()));
      results.push_back(ret.getOperand(alias.getInt()));
    }
    setResults(
        func, results,
        SmallVector<DictionaryAttr>(results.size(), b.getDictionaryAttr({})));
    setStepLoss(func, 0);
  }
};

} // namespace
