//===- Layers.cpp - Where a step's transformer layers start ---------------===//

#include "dtc/Analysis/Layers.h"
#include "dtc/Analysis/Phases.h"
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
  llvm::DenseSet<Value> fromBatch = getBatchDependentValues(func);
  // A use: an op that combines a parameter's values with the batch's.
  llvm::DenseMap<unsigned, Operation *> firstUses;
  for (Operation *op : forward) {
    if (llvm::none_of(op->getOperands(),
                      [&](Value v) { return fromBatch.contains(v); }))
      continue;
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
    auto trainable =
        func.getArgAttrOfType<BoolAttr>(argument, kTrainableAttrName);
    if (!unit || !isLayerUnit(unit.getValue()) ||
        (trainable && !trainable.getValue()))
      continue;
    auto [it, inserted] = startOf.try_emplace(unit, op);
    if (!inserted && position[op] < position[it->second])
      it->second = op;
  }
  SmallVector<std::pair<StringAttr, Operation *>> starts(startOf.begin(),
                                                         startOf.end());
  llvm::sort(starts, [&](auto &a, auto &b) {
    return std::make_pair(position[a.second], a.first.getValue()) <
           std::make_pair(position[b.second], b.first.getValue());
  });
  return starts;
}
