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
