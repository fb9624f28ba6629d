//===- SignatureEditor.h - batched edits of a function's signature -*- C++ -*-===//
//
// FuncOp::setArgAttr, insertArgument and their result counterparts rebuild
// the function's type or its whole attribute array on every call: a pass
// that edits each of n arguments spends O(n^2) time, and O(n^2) memory too,
// since MLIR never frees an attribute. A SignatureEditor holds the
// attributes in memory, appends arguments to the body directly, and writes
// the type and attributes back once, in `commit`.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECT_DTC_IR_SIGNATUREEDITOR_H
#define DTC_DIALECT_DTC_IR_SIGNATUREEDITOR_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OperationSupport.h"

namespace mlir::dtc {

class SignatureEditor {
public:
  explicit SignatureEditor(func::FuncOp func);

  func::FuncOp getFunction() const { return func; }

  /// Appends an argument of `type` carrying `attrs`.
  BlockArgument addArgument(Type type, ArrayRef<NamedAttribute> attrs);
  /// Appends `value` to the returned values, as a result carrying `attrs`.
  void addResult(Value value, ArrayRef<NamedAttribute> attrs);
  unsigned getNumResults() const { return resultAttrs.size(); }

  Attribute getArgAttr(unsigned index, StringRef name) const {
    return argAttrs[index].get(name);
  }
  template <typename T> T getArgAttrOfType(unsigned index, StringRef name) {
    return dyn_cast_if_present<T>(getArgAttr(index, name));
  }
  void setArgAttr(unsigned index, StringRef name, Attribute value) {
    argAttrs[index].set(name, value);
  }
  Attribute getResultAttr(unsigned index, StringRef name) const {
    return resultAttrs[index].get(name);
  }
  template <typename T> T getResultAttrOfType(unsigned index, StringRef name) {
    return dyn_cast_if_present<T>(getResultAttr(index, name));
  }
  void setResultAttr(unsigned index, StringRef name, Attribute value) {
    resultAttrs[index].set(name, value);
  }

  /// Writes the type (the body's argument types, the returned values'
  /// types) and the attributes to the function.
  void commit();

private:
  func::FuncOp func;
  SmallVector<NamedAttrList> argAttrs, resultAttrs;
  SmallVector<Value> addedResults;
};

} // namespace mlir::dtc

#endif // DTC_DIALECT_DTC_IR_SIGNATUREEDITOR_H
