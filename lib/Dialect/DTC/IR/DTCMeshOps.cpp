//===- DTCMeshOps.cpp - the device mesh and collectives -------------------===//
//
// The mesh's custom syntax, and the collectives' checks: those that need the
// mesh (axes exist, group sizes divide) run where symbols are verified.
//
//===----------------------------------------------------------------------===//

#include "dtc/Dialect/DTC/IR/DTCOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::dtc;

//===----------------------------------------------------------------------===//
// MeshOp: dtc.mesh @name ["dp" = 2, "tp" = 4]
//===----------------------------------------------------------------------===//

ParseResult MeshOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr name;
  if (parser.parseSymbolName(name, getSymNameAttrName(result.name),
                             result.attributes))
    return failure();
  SmallVector<Attribute> axes;
  SmallVector<int64_t> sizes;
  auto parseAxis = [&]() -> ParseResult {
    std::string axis;
    int64_t size = 0;
    if (parser.parseString(&axis) || parser.parseEqual() ||
        parser.parseInteger(size))
      return failure();
    axes.push_back(parser.getBuilder().getStringAttr(axis));
    sizes.push_back(size);
    return success();
  };
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square,
                                     parseAxis) ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();
  Builder &b = parser.getBuilder();
  result.addAttribute(getAxesAttrName(result.name), b.getArrayAttr(axes));
  result.addAttribute(getSizesAttrName(result.name),
                      b.getDenseI64ArrayAttr(sizes));
  return success();
}

void MeshOp::print(OpAsmPrinter &p) {
  p << " ";
  p.printSymbolName(getSymName());
  p << " [";
  llvm::interleaveComma(llvm::zip(getAxes(), getSizes()), p, [&](auto pair) {
    p << cast<StringAttr>(std::get<0>(pair)) << " = " << std::get<1>(pair);
  });
  p << "]";
  p.printOptionalAttrDict(
      (*this)->getAttrs(),
      {getSymNameAttrName(), getAxesAttrName(), getSizesAttrName()});
}

LogicalResult MeshOp::verify() {
  if (getAxes().size() != getSizes().size() || getAxes().empty())
    return emitOpError("needs one size per axis, and at least one axis");
  llvm::StringSet<> seen;
  for (auto [axis, size] : llvm::zip(getAxes(), getSizes())) {
    StringRef name = cast<StringAttr>(axis).getValue();
    if (!seen.insert(name).second)
      return emitOpError("axis '") << name << "' appears twice";
    if (size < 1)
      return emitOpError("axis '") << name << "' has size " << size;
  }
  return success();
}

int64_t MeshOp::axisSize(StringRef axis) {
  for (auto [name, size] : llvm::zip(getAxes(), getSizes()))
    if (cast<StringAttr>(name).getValue() == axis)
      return size;
  return -1;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// Checks the axes against the mesh and returns the group size.
static FailureOr<int64_t> groupSizeOf(Operation *op, FlatSymbolRefAttr meshRef,
                                      ArrayAttr axes,
                                      SymbolTableCollection &symbols) {
  auto mesh = symbols.lookupNearestSymbolFrom<MeshOp>(op, meshRef.getAttr());
  if (!mesh)
    return op->emitOpError("'") << meshRef.getValue() << "' is not a dtc.mesh";
  int64_t n = 1;
  for (Attribute axis : axes) {
    int64_t size = mesh.axisSize(cast<StringAttr>(axis).getValue());
    if (size < 0)
      return op->emitOpError("mesh '") << meshRef.getValue() << "' has no axis "
                                       << cast<StringAttr>(axis);
    n *= size;
  }
  return n;
}

/// The checks that need no mesh: axes given once each, dims in range.
static LogicalResult verifyCollective(Operation *op, ArrayAttr axes,
                                      ArrayRef<int64_t> dims, int64_t rank) {
  if (axes.empty())
    return op->emitOpError("needs at least one mesh axis");
  llvm::StringSet<> seen;
  for (Attribute axis : axes)
    if (!seen.insert(cast<StringAttr>(axis).getValue()).second)
      return op->emitOpError("axis ") << axis << " appears twice";
  for (int64_t dim : dims)
    if (dim < 0 || dim >= rank)
      return op->emitOpError("dim ")
             << dim << " is out of range for rank " << rank;
  return success();
}

/// Checks that `result` is `input` with dimension `dim` scaled by
/// `multiply / divide` (and `divide` divides it).
static LogicalResult checkScaledDim(Operation *op, RankedTensorType input,
                                    RankedTensorType result, int64_t dim,
                                    int64_t multiply, int64_t divide) {
  SmallVector<int64_t> expected(input.getShape());
  if (expected[dim] % divide != 0)
    return op->emitOpError("dimension ")
           << dim << " (" << expected[dim]
           << ") is not divisible by the group size " << divide;
  expected[dim] = expected[dim] / divide * multiply;
  if (result.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError("result type ")
           << result << " should be " << input.clone(expected);
  return success();
}

LogicalResult AllReduceOp::verify() {
  return verifyCollective(*this, getAxes(), {}, getType().getRank());
}

LogicalResult AllReduceOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return groupSizeOf(*this, getMeshAttr(), getAxes(), symbols);
}

LogicalResult AllGatherOp::verify() {
  return verifyCollective(*this, getAxes(), {static_cast<int64_t>(getDim())},
                          getInput().getType().getRank());
}

LogicalResult AllGatherOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<int64_t> n = groupSizeOf(*this, getMeshAttr(), getAxes(), symbols);
  if (failed(n))
    return failure();
  return checkScaledDim(*this, getInput().getType(), getType(), getDim(), *n,
                        1);
}

LogicalResult ReduceScatterOp::verify() {
  return verifyCollective(*this, getAxes(), {static_cast<int64_t>(getDim())},
                          getInput().getType().getRank());
}

LogicalResult
ReduceScatterOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<int64_t> n = groupSizeOf(*this, getMeshAttr(), getAxes(), symbols);
  if (failed(n))
    return failure();
  return checkScaledDim(*this, getInput().getType(), getType(), getDim(), 1,
                        *n);
}

LogicalResult AllToAllOp::verify() {
  SmallVector<int64_t> dims{static_cast<int64_t>(getSplitDim()),
                            static_cast<int64_t>(getConcatDim())};
  if (std::optional<uint64_t> rows = getRowsDim())
    dims.push_back(static_cast<int64_t>(*rows));
  return verifyCollective(*this, getAxes(), dims,
                          getInput().getType().getRank());
}

LogicalResult AllToAllOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<int64_t> n = groupSizeOf(*this, getMeshAttr(), getAxes(), symbols);
  if (failed(n))
    return failure();
  RankedTensorType input = getInput().getType();
  if (input.getDimSize(getSplitDim()) % *n != 0)
    return emitOpError("dimension ")
           << getSplitDim() << " (" << input.getDimSize(getSplitDim())
           << ") is not divisible by the group size " << *n;
  SmallVector<int64_t> expected(input.getShape());
  expected[getSplitDim()] /= *n;
  expected[getConcatDim()] *= *n;
  if (getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result type ")
           << getType() << " should be " << input.clone(expected);
  return success();
}

LogicalResult ShardOp::verify() {
  if (getBlocks() < 1)
    return emitOpError("blocks must be positive");
  return verifyCollective(*this, getAxes(), {static_cast<int64_t>(getDim())},
                          getInput().getType().getRank());
}

LogicalResult ShardOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<int64_t> n = groupSizeOf(*this, getMeshAttr(), getAxes(), symbols);
  if (failed(n))
    return failure();
  int64_t size = getInput().getType().getDimSize(getDim());
  if (size % (getBlocks() * *n) != 0)
    return emitOpError("dimension ")
           << getDim() << " (" << size << ") is not divisible into "
           << getBlocks() << " blocks of " << *n << " chunks";
  return checkScaledDim(*this, getInput().getType(), getType(), getDim(), 1,
                        *n);
}

LogicalResult CollectiveBroadcastOp::verify() {
  return verifyCollective(*this, getAxes(), {}, getType().getRank());
}

LogicalResult
CollectiveBroadcastOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<int64_t> n = groupSizeOf(*this, getMeshAttr(), getAxes(), symbols);
  if (failed(n))
    return failure();
  auto root = static_cast<int64_t>(getRoot());
  if (root < 0 || root >= *n)
    return emitOpError("root ")
           << root << " is not a rank of the group of " << *n;
  return success();
}

LogicalResult SendRecvOp::verify() { return success(); }

LogicalResult SendRecvOp::verifySymbolUses(SymbolTableCollection &symbols) {
  Builder b(getContext());
  FailureOr<int64_t> n = groupSizeOf(*this, getMeshAttr(),
                                     b.getStrArrayAttr({getAxis()}), symbols);
  if (failed(n))
    return failure();
  if (getShift() % *n == 0)
    return emitOpError("shift ")
           << getShift() << " moves nothing along an axis of size " << *n;
  return success();
}

//===----------------------------------------------------------------------===//
// CollectiveOpInterface
//===----------------------------------------------------------------------===//

int64_t CollectiveOpInterface::getGroupSize() {
  auto mesh = SymbolTable::lookupNearestSymbolFrom<MeshOp>(*this, getMeshAttr());
  if (!mesh)
    return -1;
  int64_t n = 1;
  for (StringRef axis : getGroupAxes()) {
    int64_t size = mesh.axisSize(axis);
    if (size < 0)
      return -1;
    n *= size;
  }
  return n;
}

/// A ring all-reduce sends and receives 2(n-1)/n of the tensor.
double AllReduceOp::getBusBytes(int64_t groupSize) {
  return 2.0 * (groupSize - 1) / groupSize * tensorByteSize(getType());
}

double CollectiveBroadcastOp::getBusBytes(int64_t) {
  return tensorByteSize(getType());
}

StringRef CollectiveBroadcastOp::getCollectiveKind() { return "broadcast"; }

double SendRecvOp::getBusBytes(int64_t) { return tensorByteSize(getType()); }

SmallVector<StringRef> SendRecvOp::getGroupAxes() { return {getAxis()}; }
