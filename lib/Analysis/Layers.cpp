//===- Layers.cpp - Where a step's transformer layers start ---------------===//

#include "dtc/Analysis/Layers.h"
#include "dtc/Dialect/DTC/IR/DTCDialect.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::dtc;

bool mlir::dtc::isLayerUnit(StringRef unit) {
  size_t dot = unit.rfind('.');
  return dot != StringRef::npos && dot + 1 < unit.size() &&
         llvm::all_of(unit.substr(dot + 1), llvm::isDigit);
}

llvm::DenseMap<unsigned, Operation *>
mlir::dtc::getFirstUses(func::FuncOp func, ArrayRef<Operation *> forward) {
  // The parameter each value is computed from alone (with constants).
  llvm::DenseMap<Value, BlockArgument> sourceOf;
  for (BlockArgument arg : func.getArguments())
    if (func.getArgAttr(arg.getArgNumber(), kParamAttrName))
      sourceOf[arg] = arg;
  func.walk([&](Operation *op) {
    BlockArgument source;
    for (Value operand : op->getOperands())
      if (BlockArgument from = sourceOf.lookup(operand);
          from && (!source || from == source))
        source = from;
      else if (!matchPattern(operand, m_Constant()))
        return;
    if (source)
      for (Value result : op->getResults())
        sourceOf[result] = source;
  });
  llvm::DenseMap<unsigned, Operation *> firstUses;
  for (Operation *op : forward) {
    if (op->getNumResults() && sourceOf.contains(op->getResult(0)))
      continue; // computed from one parameter alone
    for (Value operand : op->getOperands())
      if (BlockArgument source = sourceOf.lookup(operand))
        firstUses.try_emplace(source.getArgNumber(), op);
  }
  return firstUses;
}

SmallVector<std::pair<StringAttr, Operation *>>
mlir::dtc::getLayerStarts(func::FuncOp func, ArrayRef<Operation *> forward) {
  llvm::DenseMap<unsigned, Operation *> firstUses = getFirstUses(func, forward);
  llvm::DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(forward))
    position[op] = i;
  llvm::DenseMap<StringAttr, Operation *> startOf;
  for (auto [argument, op] : firstUses) {
    auto unit = func.getArgAttrOfType<StringAttr>(argument, kUnitAttrName);
    if (!unit || !isLayerUnit(unit.getValue()))
      continue;
    auto [it, inserted] = startOf.try_emplace(unit, op);
    if (!inserted && position[op] < position[it->second])
      it->second = op;
  }
  SmallVector<std::pair<StringAttr, Operation *>> starts(startOf.begin(),
                                                         startOf.end());
  llvm::sort(starts, [&](auto &a, auto &b) {
    return position[a.second] < position[b.second];
  });
  return starts;
}
