//===- Signature.cpp - growing a training function's signature ------------===//

#include "Signature.h"

#include "dtc/Dialect/DTC/IR/DTCDialect.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::dtc;

BlockArgument mlir::dtc::appendArgument(func::FuncOp func, Type type,
                                        ArrayRef<NamedAttribute> attrs) {
  unsigned index = func.getNumArguments();
  Builder b(func.getContext());
  (void)func.insertArgument(index, type, b.getDictionaryAttr(attrs),
                            func.getLoc());
  return func.getArgument(index);
}

void mlir::dtc::appendResult(func::FuncOp func, Value value,
                             ArrayRef<NamedAttribute> attrs) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  ret->insertOperands(ret->getNumOperands(), value);
  Builder b(func.getContext());
  (void)func.insertResult(func.getNumResults(), value.getType(),
                          b.getDictionaryAttr(attrs));
}

void mlir::dtc::setResults(func::FuncOp func, ArrayRef<Value> values,
                           ArrayRef<DictionaryAttr> attrs) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  ret->setOperands(values);
  func.setFunctionType(FunctionType::get(func.getContext(),
                                         func.getArgumentTypes(),
                                         ValueRange(values).getTypes()));
  func.setAllResultAttrs(attrs);
}

SmallVector<BlockArgument> mlir::dtc::trainableParameters(func::FuncOp func) {
  SmallVector<BlockArgument> params;
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto trainable = func.getArgAttrOfType<BoolAttr>(i, kTrainableAttrName);
    if (func.getArgAttr(i, kParamAttrName) &&
        (!trainable || trainable.getValue()))
      params.push_back(arg);
  }
  return params;
}

StringRef mlir::dtc::parameterName(BlockArgument param) {
  auto func = cast<func::FuncOp>(param.getOwner()->getParentOp());
  return func.getArgAttrOfType<StringAttr>(param.getArgNumber(), kParamAttrName)
      .getValue();
}
