//===- DTCDialect.cpp - the dtc dialect -----------------------------------===//

#include "dtc/Dialect/DTC/IR/DTCDialect.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::dtc;

#include "dtc/Dialect/DTC/IR/DTCOpsDialect.cpp.inc"

#include "dtc/Dialect/DTC/IR/DTCAttrsEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dtc/Dialect/DTC/IR/DTCAttrs.cpp.inc"

void DTCDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dtc/Dialect/DTC/IR/DTCAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dtc/Dialect/DTC/IR/DTCOps.cpp.inc"
      >();
  attachOpCostModels(*getContext());
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
  for (StringRef key : {kInputAttrName, kParamAttrName})
    if (std::string name = nameAttr(attrs, key); !name.empty())
      return name;
  if (auto state = attrs ? attrs.getAs<StateAttr>(kStateAttrName) : StateAttr())
    return state.getDisplayName();
  return "arg" + std::to_string(index);
}

BlockArgument mlir::dtc::getParameterArgument(FunctionOpInterface func,
                                              StringRef name) {
  for (BlockArgument arg : func.getArguments())
    if (auto param = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                       kParamAttrName);
        param && param.getValue() == name)
      return arg;
  return BlockArgument();
}

std::string mlir::dtc::getResultName(FunctionOpInterface func, unsigned index) {
  auto step = func->getAttrOfType<StepAttr>(kStepAttrName);
  if (step && step.getLoss() == static_cast<int64_t>(index))
    return "loss";
  DictionaryAttr attrs = func.getResultAttrDict(index);
  if (std::string name = nameAttr(attrs, kOutputAttrName); !name.empty())
    return name;
  if (std::string name = nameAttr(attrs, kGradAttrName); !name.empty())
    return "grad/" + name;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (auto alias =
            func.getArgAttrOfType<IntegerAttr>(i, kAliasingOutputAttrName);
        alias && alias.getInt() == index)
      return "update/" + getArgumentName(func, i);
  return "result" + std::to_string(index);
}

LogicalResult ShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   FlatSymbolRefAttr mesh, ArrayAttr dims,
                                   ArrayRef<int64_t> blocks,
                                   ArrayAttr partial) {
  for (Attribute dim : dims) {
    auto axes = dyn_cast<ArrayAttr>(dim);
    if (!axes || !llvm::all_of(axes, llvm::IsaPred<StringAttr>))
      return emitError() << "each dimension's entry must be an array of "
                            "axis names, not "
                         << dim;
  }
  if (!blocks.empty() && blocks.size() != dims.size())
    return emitError() << "blocks has " << blocks.size() << " entries for "
                       << dims.size() << " dimensions";
  // A negative count mirrors the odd-numbered blocks (zigzag).
  if (llvm::any_of(blocks, [](int64_t b) { return b == 0 || b == -1; }))
    return emitError() << "blocks must be positive, or below -1 (mirrored)";
  if (partial && !llvm::all_of(partial, llvm::IsaPred<StringAttr>))
    return emitError() << "partial must be an array of axis names";
  return success();
}

SmallVector<StringRef> ShardingAttr::axesOf(unsigned dim) const {
  SmallVector<StringRef> axes;
  for (Attribute axis : cast<ArrayAttr>(getDims()[dim]))
    axes.push_back(cast<StringAttr>(axis).getValue());
  return axes;
}

int64_t ShardingAttr::blocksOf(unsigned dim) const {
  return getBlocks().empty() ? 1 : getBlocks()[dim];
}
