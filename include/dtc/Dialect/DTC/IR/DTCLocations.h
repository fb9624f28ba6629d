//===- DTCLocations.h - what an op's location says --------------*- C++ -*-===//
//
// The importer wraps each op's location in names: the ONNX node it comes
// from (and the value it makes) around the model file. dtc-verify-partition
// adds a tag of its own around that while it runs. Messages and reasons read
// locations through these helpers so that a tag never shows.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECT_DTC_IR_DTCLOCATIONS_H
#define DTC_DIALECT_DTC_IR_DTCLOCATIONS_H

#include "mlir/IR/Operation.h"

#include <string>

namespace mlir::dtc {

/// The prefix of dtc-verify-partition's tags ("dtc.verify.<n>").
inline constexpr llvm::StringLiteral kVerifyTagPrefix = "dtc.verify.";

/// A location read as the importer wrote it: the ONNX node (the innermost
/// name that is not a tag; empty for ops dtc made) and what the names wrap
/// (the model file's location).
struct NodeLocation {
  StringRef node;
  Location inner;
};

inline NodeLocation getNodeLocation(Location loc) {
  StringRef node;
  while (auto name = dyn_cast<NameLoc>(loc)) {
    if (!name.getName().getValue().starts_with(kVerifyTagPrefix))
      node = name.getName().getValue();
    loc = name.getChildLoc();
  }
  return {node, loc};
}

/// "'dtc.matmul' (/h.0/attn/MatMul)": the op and, for imported ones, the
/// ONNX node it comes from, as messages and collectives' reasons name it.
inline std::string describeOp(Operation *op) {
  std::string text = "'" + op->getName().getStringRef().str() + "'";
  StringRef node = getNodeLocation(op->getLoc()).node;
  if (!node.empty())
    text += " (" + node.str() + ")";
  return text;
}

} // namespace mlir::dtc

#endif // DTC_DIALECT_DTC_IR_DTCLOCATIONS_H
