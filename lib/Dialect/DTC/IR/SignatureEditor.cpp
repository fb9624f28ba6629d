//===- SignatureEditor.cpp - batched edits of a function's signature ------===//

#include "dtc/Dialect/DTC/IR/SignatureEditor.h"

using namespace mlir;
using namespace mlir::dtc;

SignatureEditor::SignatureEditor(func::FuncOp func) : func(func) {
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    argAttrs.emplace_back(func.getArgAttrDict(i));
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    resultAttrs.emplace_back(func.getResultAttrDict(i));
}

BlockArgument SignatureEditor::addArgument(Type type,
                                           ArrayRef<NamedAttribute> attrs) {
  argAttrs.emplace_back(attrs);
  return func.getBody().front().addArgument(type, func.getLoc());
}

void SignatureEditor::addResult(Value value, ArrayRef<NamedAttribute> attrs) {
  addedResults.push_back(value);
  resultAttrs.emplace_back(attrs);
}

void SignatureEditor::commit() {
  MLIRContext *context = func.getContext();
  Operation *ret = func.getBody().front().getTerminator();
  ret->insertOperands(ret->getNumOperands(), addedResults);
  addedResults.clear();
  func.setFunctionType(
      FunctionType::get(context, func.getBody().front().getArgumentTypes(),
                        ret->getOperandTypes()));
  auto dictionaries = [&](ArrayRef<NamedAttrList> lists) {
    SmallVector<DictionaryAttr> dicts;
    for (const NamedAttrList &attrs : lists)
      dicts.push_back(attrs.getDictionary(context));
    return dicts;
  };
  func.setAllArgAttrs(dictionaries(argAttrs));
  func.setAllResultAttrs(dictionaries(resultAttrs));
}
