//===- NodeImporter.h - importing one ONNX node -----------------*- C++ -*-===//
//
// Internal to the ONNX importer. A NodeImporter gives an op importer what it
// needs to turn one ONNX node into dtc ops: the node's operands as values or
// constants, its attributes with defaults, the opset, checked op creation
// (result types are inferred, and a type the op rejects becomes a diagnostic
// on the node instead of a crash), and diagnostics that name the node.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_LIB_IMPORT_ONNX_NODEIMPORTER_H
#define DTC_LIB_IMPORT_ONNX_NODEIMPORTER_H

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Runtime/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include "onnx/onnx_pb.h"

#include <functional>

namespace mlir::dtc {

struct ONNXImportOptions;

/// NonZero's static form (StaticPositionsImporters.cpp): every position of
/// `mask`, in `order` (its dimensions, the first outermost).
struct PositionsForm {
  Value mask;
  SmallVector<int64_t> order;
  std::string node;
  /// The ops that mask the rows of the padding positions and scatter them
  /// back.
  llvm::SmallPtrSet<Operation *, 4> scatters;
  /// The rows gathered at the positions.
  SmallVector<Value> rows;
};

/// What importers of some nodes need from the model importer beyond the
/// node: the options, and the training step (which training-mode dropout
/// keys its masks on).
struct ModelContext {
  const ONNXImportOptions &options;
  /// The `#dtc.state<step>` argument, created on first use.
  std::function<Value()> stepArgument;
  /// Dropout sites imported so far; each draws from its own stream.
  int64_t dropoutSites = 0;
  /// Sequence-typed values by ONNX name: lists of tensors, resolved at
  /// import (their lengths and positions must be static).
  llvm::StringMap<SmallVector<Value>> sequences;
  /// The model's buffers: initializers a node updates (training-mode batch
  /// norms' running statistics), imported as frozen parameters whose next
  /// values the step returns.
  llvm::StringSet<> buffers;
  /// The next value of each buffer, set by the node that updates it.
  llvm::StringMap<Value> bufferUpdates;
  /// Training-mode batch norms update the running variance with the
  /// batch's unbiased variance (PyTorch) rather than its population
  /// variance (ONNX's reference).
  bool unbiasedRunningVariance = false;
  /// NonZero results by the constant of their static form.
  llvm::DenseMap<Value, PositionsForm> positions =
      llvm::DenseMap<Value, PositionsForm>();
};

class NodeImporter {
public:
  /// Returns the known constant value of `value`, evaluating constant
  /// subgraphs on demand, or nullopt.
  using ConstantResolver = std::function<std::optional<Tensor>(Value)>;

  NodeImporter(const onnx::NodeProto &node, ArrayRef<Value> inputs,
               int64_t opset, OpBuilder &builder, Location loc,
               ConstantResolver resolveConstant, ModelContext &model)
      : node(node), inputs(inputs), opset(opset), builder(builder), loc(loc),
        model(model), resolveConstant(std::move(resolveConstant)) {}

  const onnx::NodeProto &node;
  const ArrayRef<Value> inputs; // null where an optional input is absent
  const int64_t opset;
  OpBuilder &builder;
  const Location loc;
  ModelContext &model;
  /// What the op importer produced, one value per node output.
  SmallVector<Value> results;

  //===--- Operands ---===//
  bool hasInput(unsigned i) const { return i < inputs.size() && inputs[i]; }
  Value input(unsigned i) const { return hasInput(i) ? inputs[i] : Value(); }
  RankedTensorType inputType(unsigned i) const {
    return cast<RankedTensorType>(inputs[i].getType());
  }
  /// The constant value of input `i`; emits an error saying it must be a
  /// constant (with how to make it one) when it is not.
  FailureOr<Tensor> constantInput(unsigned i, StringRef what);
  /// The constant value of input `i` if it is known (small constant
  /// subgraphs are evaluated), without an error when it is not.
  std::optional<Tensor> knownConstant(unsigned i) {
    return hasInput(i) ? resolveConstant(inputs[i]) : std::nullopt;
  }
  /// `value` as a constant if it is known (the same).
  std::optional<Tensor> knownConstant(Value value) {
    return resolveConstant(value);
  }
  /// The integers of a constant input (e.g. a shape or axes operand).
  FailureOr<SmallVector<int64_t>> constantInts(unsigned i, StringRef what);

  /// The tensors of sequence-typed input `i`; an error when it is not one.
  FailureOr<ArrayRef<Value>> sequenceInput(unsigned i);
  /// Records `tensors` as sequence-typed output `i`.
  void setSequenceResult(unsigned i, SmallVector<Value> tensors);

  //===--- Attributes ---===//
  const onnx::AttributeProto *attribute(StringRef name) const;
  int64_t intAttr(StringRef name, int64_t fallback) const;
  float floatAttr(StringRef name, float fallback) const;
  std::optional<SmallVector<int64_t>> intsAttr(StringRef name) const;

  //===--- Diagnostics ---===//
  /// An error on the node (the importer prefixes "<Op> node '<name>': ").
  InFlightDiagnostic error();
  /// Checks `axis` against `rank` (negative counts from the end) and returns
  /// it as a non-negative dimension.
  FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                   StringRef what = "axis");

  //===--- Creating ops ---===//
  /// Creates an op whose result types are inferred; fails with the op's own
  /// diagnostic, on the node, where inference rejects the operands.
  template <typename OpTy, typename... Args>
  FailureOr<Operation *> createInferred(unsigned numResults, Args &&...args) {
    OperationState state(loc, OpTy::getOperationName());
    SmallVector<Type> placeholders(numResults, builder.getNoneType());
    OpTy::build(builder, state, TypeRange(placeholders),
                std::forward<Args>(args)...);
    state.types.clear();
    if (failed(OpTy::inferReturnTypes(
            builder.getContext(), loc, state.operands,
            state.attributes.getDictionary(builder.getContext()),
            state.getRawProperties(), state.regions, state.types)))
      return failure();
    return verified(builder.create(state));
  }
  /// Single-result form of createInferred.
  template <typename OpTy, typename... Args>
  FailureOr<Value> create(Args &&...args) {
    FailureOr<Operation *> op =
        createInferred<OpTy>(1, std::forward<Args>(args)...);
    if (failed(op))
      return failure();
    return (*op)->getResult(0);
  }
  /// Verifies an op just created for this node; erases it and fails (with
  /// the verifier's diagnostic, located at the node) when it is invalid.
  FailureOr<Operation *> verified(Operation *op);
  /// Records `value` as the node's only result after verifying its op.
  LogicalResult setResult(FailureOr<Value> value);

  /// A dtc.constant holding `tensor`.
  Value constant(const Tensor &tensor);
  /// A scalar constant of `elementType`.
  Value scalar(double value, Type elementType);
  /// `value` reshaped to `shape` (no op when the shape is already `shape`).
  Value reshape(Value value, ArrayRef<int64_t> shape);
  /// `value` sliced along `dim` (negative: from the end): `size` elements
  /// from `start`, every `step`-th; the other dimensions whole.
  Value slice(Value value, int64_t dim, int64_t start, int64_t size,
              int64_t step = 1);
  /// `value` with `begin` leading and `end` trailing copies of the scalar
  /// `fill` along `dim` (no op when both are 0).
  FailureOr<Value> padWith(Value value, int64_t dim, int64_t begin, int64_t end,
                           Value fill);
  /// `value` converted to `elementType` (no op when it already is).
  Value convertElementType(Value value, Type elementType);

private:
  ConstantResolver resolveConstant;
};

using OpImporter = std::function<LogicalResult(NodeImporter &)>;

/// The importers by ONNX op type, each with the number of leading inputs
/// the op requires (checked before the importer runs, so importers may use
/// those inputs unchecked).
class OpImporterTable {
public:
  struct Entry {
    unsigned requiredInputs;
    OpImporter importer;
  };
  void add(StringRef opType, unsigned requiredInputs, OpImporter importer) {
    entries[opType] = Entry{requiredInputs, std::move(importer)};
  }
  const Entry *lookup(StringRef opType) const {
    auto it = entries.find(opType);
    return it == entries.end() ? nullptr : &it->second;
  }
  std::vector<std::string> opTypes() const {
    std::vector<std::string> names;
    for (const auto &entry : entries)
      names.push_back(entry.getKey().str());
    return names;
  }

private:
  llvm::StringMap<Entry> entries;
};

/// ONNX's Attention (opset 23) as dtc.attention, and RotaryEmbedding.
void addAttentionImporter(OpImporterTable &table);
void addComposedImporters(OpImporterTable &table);
/// The sequence ops (SequenceConstruct, SplitToSequence, SequenceAt, ...).
void addSequenceImporters(OpImporterTable &table);
void addEinsumImporter(OpImporterTable &table);
void addElementwiseImporters(OpImporterTable &table);
void addMathImporters(OpImporterTable &table);
void addShapeImporters(OpImporterTable &table);
/// NonZero as every position (the others masked where ScatterElements puts
/// the rows back), and ScatterElements.
void addStaticPositionsImporters(OpImporterTable &table);
/// R where the constant `indices` (flattened) are 0 R times, 1 R times, ...
/// up to `size` - 1: reading them gathers each of `size` rows R times in
/// order (R = 1: every row once), so a gather is a broadcast and a
/// scatter-add a sum over R. None for any other indices.
std::optional<int64_t> repeatedRows(const Tensor &indices, int64_t size);
/// The static-shape gather or scatter-add of rows repeated `repeats` times
/// (repeatedRows) along `dim`: `table` broadcast to `resultShape`, or the
/// sum of `updates` over each row's repeats.
Value gatherRepeatedRows(NodeImporter &n, Value table, int64_t dim,
                         int64_t repeats, ArrayRef<int64_t> resultShape);
Value sumRepeatedRows(NodeImporter &n, Value updates, int64_t dim,
                      int64_t repeats);
/// The NonZero static form the node's indices (input 1) are computed from,
/// if any (the rows a Gather reads at them are recorded in it).
PositionsForm *positionsRead(NodeImporter &n);
/// ONNX's scatter without a reduction, where an update replaces the
/// element it hits (repeated indices are undefined), from `scatterAdd`
/// (into, updates): `data` except where a scatter of ones into zeros hits,
/// there the updates scattered into zeros.
FailureOr<Value> scatterReplacing(
    NodeImporter &n, Value data, Value updates,
    llvm::function_ref<FailureOr<Value>(Value into, Value updates)> scatterAdd);
/// After import: each NonZero's positions are scattered back, and no
/// reduction counts the padding positions; an error naming the node
/// otherwise.
LogicalResult checkStaticPositions(ModelContext &model);
/// The static form's size (kStaticPositionsAttrName's dictionary).
DictionaryAttr describeStaticPositions(ModelContext &model,
                                       MLIRContext *context);
/// Conv, ConvTranspose, the pools, the batch and instance norms, and the
/// activations vision models use.
void addVisionImporters(OpImporterTable &table);
/// Whether `node` is a BatchNormalization in training mode (training_mode
/// from opset 14, its statistics outputs used before), whose running
/// statistics the step updates.
bool isTrainingBatchNorm(const onnx::NodeProto &node, int64_t opset);

/// For op types whose operands determine result shapes: the indices of those
/// operands, which must be constants.
ArrayRef<unsigned> staticOperandIndices(StringRef opType);

} // namespace mlir::dtc

#endif // DTC_LIB_IMPORT_ONNX_NODEIMPORTER_H
