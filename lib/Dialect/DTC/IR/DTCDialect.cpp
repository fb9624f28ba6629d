//===- DTCDialect.cpp - the dtc dialect -----------------------------------===//

#include "dtc/Dialect/DTC/IR/DTCDialect.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"

using namespace mlir;
using namespace mlir::dtc;

#include "dtc/Dialect/DTC/IR/DTCOpsDialect.cpp.inc"

void DTCDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dtc/Dialect/DTC/IR/DTCOps.cpp.inc"
      >();
}

Operation *DTCDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}

static std::string nameAttr(DictionaryAttr attrs, StringRef key) {
  auto name = attrs ? attrs.getAs<StringAttr>(key) : StringAttr();
  return name ? name.str() : std::string();
}

std::string mlir::dtc::getArgumentName(FunctionOpInterface func,
                                       unsigned index) {
  DictionaryAttr attrs = func.getArgAttrDict(index);
  for (StringRef key : {kInputAttrName, kParamAttrName, kStateAttrName})
    if (std::string name = nameAttr(attrs, key); !name.empty())
      return name;
  return "arg" + std::to_string(index);
}

std::string mlir::dtc::getResultName(FunctionOpInterface func, unsigned index) {
  DictionaryAttr attrs = func.getResultAttrDict(index);
  if (std::string name = nameAttr(attrs, kOutputAttrName); !name.empty())
    return name;
  if (std::string name = nameAttr(attrs, kGradAttrName); !name.empty())
    return "grad/" + name;
  if (std::string name = nameAttr(attrs, kUpdateAttrName); !name.empty())
    return "update/" + name;
  return "result" + std::to_string(index);
}
