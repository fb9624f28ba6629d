//===- ONNXImporter.cpp - ONNX models to the dtc dialect ------------------===//
//
// Builds @forward from the graph: signature first (inputs, parameters), then
// one NodeImporter per node in graph order, then the return of the graph
// outputs, and finally the module verifier.
//
//===----------------------------------------------------------------------===//

#include "dtc/Import/ONNX/ONNXImporter.h"

#include "CapacityFactor.h"
#include "NodeImporter.h"

#include "dtc/Dialect/DTC/IR/DeadOps.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"

#include "dtc/Interpreter/Interpreter.h"
#include "dtc/Interpreter/TensorAttr.h"
#include "dtc/Runtime/ONNX/TensorProto.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Regex.h"

#include <google/protobuf/unknown_field_set.h>

#include <climits>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

using namespace mlir;
using namespace mlir::dtc;

/// The unit of a parameter named `name`: the module FSDP would wrap, its
/// path up to the first layer index (`layers.3` of
/// `layers.3.attn.wq.weight`), else its top-level module (`wte`).
static std::string unitOf(StringRef name) {
  SmallVector<StringRef> parts;
  name.split(parts, '.');
  size_t end = 0;
  for (StringRef part : parts) {
    end += part.size();
    if (!part.empty() && llvm::all_of(part, llvm::isDigit))
      return name.take_front(end).str();
    ++end; // the dot
  }
  return parts.front().str();
}

/// The newest default-domain opset whose semantics the importer knows:
/// onnx 1.23's. (Opsets 24-28 change the ops dtc imports only by admitting
/// element types dtc does not have, and Range-27's stash_type, which dtc's
/// f64 evaluation meets.)
static constexpr int64_t kMaxOpset = 28;
/// Bigger tensors are taken for corrupt shapes (2^48: 1 PiB of f32).
static constexpr int64_t kMaxTensorElements = int64_t(1) << 48;

/// torch.export's record of what a graph input was: PARAMETER, BUFFER,
/// CONSTANT_TENSOR, ... (torch.onnx.export writes it on the value).
static constexpr const char *kInputSpecKindKey =
    "pkg.torch.export.graph_signature.InputSpec.kind";
/// What torch's ONNX optimizer folded an initializer from.
static constexpr const char *kFoldedFromKey =
    "pkg.onnxscript.optimizer.folded_from";

/// The metadata_props (field `field`) of `message`: ONNX IR 10 added them to
/// graphs and graph values after the onnx release whose schema dtc builds
/// with, so they are read from the message's unknown fields.
static std::map<std::string, std::string>
metadataProps(const google::protobuf::Message &message, int field) {
  std::map<std::string, std::string> metadata;
  const google::protobuf::UnknownFieldSet &unknown =
      message.GetReflection()->GetUnknownFields(message);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const google::protobuf::UnknownField &entryField = unknown.field(i);
    if (entryField.number() != field ||
        entryField.type() !=
            google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    onnx::StringStringEntryProto entry;
    if (entry.ParseFromString(entryField.length_delimited()))
      metadata[entry.key()] = entry.value();
  }
  return metadata;
}

/// ValueInfoProto.metadata_props and GraphProto.metadata_props.
static constexpr int kValueInfoMetadataField = 4, kGraphMetadataField = 16;

/// The state-dict names of the parameters in torch.export's graph
/// signature ("p_x: PARAMETER target='x'"), those the exporter's optimizer
/// folded away included.
static llvm::StringSet<> signatureParameters(const onnx::GraphProto &graph) {
  llvm::StringSet<> params;
  std::map<std::string, std::string> metadata =
      metadataProps(graph, kGraphMetadataField);
  auto signature =
      metadata.find("pkg.torch.export.ExportedProgram.graph_signature");
  if (signature == metadata.end())
    return params;
  SmallVector<StringRef> lines;
  StringRef(signature->second).split(lines, '\n');
  for (StringRef line : lines) {
    size_t target = line.find(": PARAMETER target='");
    if (target == StringRef::npos)
      continue;
    StringRef rest = line.drop_front(target + strlen(": PARAMETER target='"));
    params.insert(rest.take_until([](char c) { return c == '\''; }));
  }
  return params;
}

/// The names in a `folded_from` record: "['a', 'b']".
static SmallVector<std::string> parseNameList(StringRef text) {
  SmallVector<std::string> names;
  while (true) {
    size_t open = text.find('\'');
    if (open == StringRef::npos)
      break;
    size_t close = text.find('\'', open + 1);
    if (close == StringRef::npos)
      break;
    names.push_back(text.slice(open + 1, close).str());
    text = text.drop_front(close + 1);
  }
  return names;
}

/// `tensor`, a matrix, transposed.
static Tensor transposed(const Tensor &tensor) {
  int64_t rows = tensor.shape()[0], cols = tensor.shape()[1];
  Tensor result(tensor.dtype(), {cols, rows});
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      result.floats()[j * rows + i] = tensor.floats()[i * cols + j];
  return result;
}

static const OpImporterTable &opImporters() {
  static const OpImporterTable table = [] {
    OpImporterTable t;
    addAttentionImporter(t);
    addComposedImporters(t);
    addEinsumImporter(t);
    addElementwiseImporters(t);
    addMathImporters(t);
    addSequenceImporters(t);
    addShapeImporters(t);
    addStaticPositionsImporters(t);
    addVisionImporters(t);
    return t;
  }();
  return table;
}

std::vector<std::string> mlir::dtc::supportedONNXOps() {
  std::vector<std::string> ops = opImporters().opTypes();
  std::sort(ops.begin(), ops.end());
  return ops;
}

namespace {

class ModelImporter {
public:
  ModelImporter(MLIRContext *context, const ONNXImportOptions &options,
                const std::string &path)
      : context(context), options(options), builder(context),
        fileLoc(FileLineColLoc::get(context, path, 0, 0)),
        baseDir(std::filesystem::path(path).parent_path().string()) {}

  OwningOpRef<ModuleOp> importModel(const onnx::ModelProto &model);

private:
  FailureOr<RankedTensorType> typeOf(const onnx::ValueInfoProto &info,
                                     const Tensor *bound);
  LogicalResult buildSignature(const onnx::GraphProto &graph);
  LogicalResult importNode(const onnx::NodeProto &node);
  LogicalResult buildReturn(const onnx::GraphProto &graph);
  std::optional<Tensor> resolveConstant(Value value);
  Location locationOf(const onnx::NodeProto &node);

  MLIRContext *context;
  const ONNXImportOptions &options;
  OpBuilder builder;
  Location fileLoc;
  std::string baseDir;
  int64_t opset = 0;
  func::FuncOp func;
  llvm::StringMap<Value> values;
  /// Known values of constants and of constant subgraphs evaluated so far.
  llvm::DenseMap<Value, Tensor> constants;
  ModelContext modelContext{options, [this] { return stepArgument(); }};
  BlockArgument step;

  /// The training step as a function argument (for dropout masks): the
  /// state `step`, which the step records as its RNG counter.
  Value stepArgument() {
    if (!step) {
      unsigned index = func.getNumArguments();
      (void)func.insertArgument(
          index, RankedTensorType::get({}, builder.getI64Type()),
          builder.getDictionaryAttr(builder.getNamedAttr(
              kStateAttrName,
              StateAttr::get(context, StateKind::Step, StringAttr()))),
          fileLoc);
      step = func.getArgument(index);
      setStepRng(func, options.dropoutSeed, index);
    }
    return step;
  }
};

} // namespace

/// The location of a node's ops: the ONNX name of its (first) output value
/// within the node's name, within the file.
Location ModelImporter::locationOf(const onnx::NodeProto &node) {
  Location loc = fileLoc;
  if (!node.name().empty())
    loc = NameLoc::get(StringAttr::get(context, node.name()), loc);
  if (node.output_size() > 0 && !node.output(0).empty())
    loc = NameLoc::get(StringAttr::get(context, node.output(0)), loc);
  return loc;
}

FailureOr<RankedTensorType>
ModelImporter::typeOf(const onnx::ValueInfoProto &info, const Tensor *bound) {
  if (!info.type().has_tensor_type())
    return emitError(fileLoc) << "graph value '" << info.name()
                              << "' is not a tensor; dtc supports tensors only";
  const onnx::TypeProto::Tensor &tensorType = info.type().tensor_type();
  std::optional<DType> dtype = dtypeFromOnnx(tensorType.elem_type());
  if (!dtype)
    return emitError(fileLoc) << "graph value '" << info.name()
                              << "' has unsupported element type "
                              << onnxTypeName(tensorType.elem_type());
  Type elementType = elementTypeOf(context, *dtype);
  if (bound) {
    // The bound value fixes symbolic dimensions and must match the rest.
    bool matches = bound->dtype() == *dtype &&
                   (!tensorType.has_shape() ||
                    tensorType.shape().dim_size() == bound->rank());
    for (auto [i, dim] : llvm::enumerate(tensorType.shape().dim()))
      if (matches && dim.has_dim_value() &&
          dim.dim_value() != bound->shape()[i])
        matches = false;
    if (!matches)
      return emitError(fileLoc)
             << "bound value of '" << info.name() << "' is "
             << describe(bound->shape(), bound->dtype())
             << ", which does not fit the model's declared type";
    return RankedTensorType::get(bound->shape(), elementType);
  }
  auto requested = options.inputShapes.find(info.name());
  if (requested != options.inputShapes.end()) {
    if (tensorType.has_shape() &&
        tensorType.shape().dim_size() !=
            static_cast<int>(requested->second.size()))
      return emitError(fileLoc)
             << "--input-shape gives '" << info.name() << "' rank "
             << requested->second.size() << " but the model declares rank "
             << tensorType.shape().dim_size();
    return RankedTensorType::get(requested->second, elementType);
  }
  SmallVector<int64_t> shape;
  for (const auto &dim : tensorType.shape().dim()) {
    if (!dim.has_dim_value() || dim.dim_value() < 0)
      return emitError(fileLoc)
             << "graph input '" << info.name() << "' has symbolic dimension '"
             << dim.dim_param()
             << "'; dtc compiles static shapes: give its shape with "
                "--input-shape "
             << info.name()
             << "=... or bind it from a batch (--bind-inputs DIR holding "
             << info.name() << ".npy)";
    shape.push_back(dim.dim_value());
  }
  return RankedTensorType::get(shape, elementType);
}

LogicalResult ModelImporter::buildSignature(const onnx::GraphProto &graph) {
  // Values that determine a shape: the static operands of nodes, and
  // everything they are computed from. Bound graph inputs among them are
  // folded in as constants.
  llvm::StringMap<const onnx::NodeProto *> producers;
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &output : node.output())
      producers[output] = &node;
  llvm::StringSet<> staticNames;
  SmallVector<std::string> worklist;
  for (const onnx::NodeProto &node : graph.node())
    for (unsigned i : staticOperandIndices(node.op_type()))
      if (static_cast<int>(i) < node.input_size())
        worklist.push_back(node.input(i));
  while (!worklist.empty()) {
    std::string name = worklist.pop_back_val();
    if (!staticNames.insert(name).second)
      continue;
    const onnx::NodeProto *producer = producers.lookup(name);
    // Shape and Size read only their input's (static) shape, not its
    // values: a dynamic export's input feeds them and stays an input.
    if (!producer || producer->op_type() == "Shape" ||
        producer->op_type() == "Size")
      continue;
    for (const std::string &input : producer->input())
      worklist.push_back(input);
  }

  std::map<std::string, const onnx::TensorProto *> initializers;
  for (const onnx::TensorProto &init : graph.initializer())
    initializers[init.name()] = &init;
  // Buffers: the running statistics a training-mode batch norm updates.
  for (const onnx::NodeProto &node : graph.node())
    if (isTrainingBatchNorm(node, opset))
      for (int i : {3, 4})
        if (node.input_size() > i && initializers.count(node.input(i)))
          modelContext.buffers.insert(node.input(i));

  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  // Per argument its name and, for parameters, its initial value.
  SmallVector<std::pair<std::string, std::optional<Tensor>>> argValues;
  SmallVector<std::pair<std::string, Tensor>> folded;
  // Older exporters list initializers as inputs too; the others are the
  // graph's inputs, which tensors bind by name or by position.
  std::vector<std::string> graphInputs;
  for (const onnx::ValueInfoProto &input : graph.input())
    if (!initializers.count(input.name()))
      graphInputs.push_back(input.name());
  std::map<std::string, Tensor> boundInputs = options.boundInputs;
  bindPositionalTensors(boundInputs, graphInputs);
  bool foldedInput = false;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (initializers.count(input.name()))
      continue;
    auto bound = boundInputs.find(input.name());
    const Tensor *boundValue =
        bound == boundInputs.end() ? nullptr : &bound->second;
    FailureOr<RankedTensorType> type = typeOf(input, boundValue);
    if (failed(type))
      return failure();
    if (boundValue && staticNames.contains(input.name())) {
      folded.emplace_back(input.name(), *boundValue);
      foldedInput = true;
      continue;
    }
    argTypes.push_back(*type);
    argAttrs.push_back(builder.getDictionaryAttr(builder.getNamedAttr(
        kInputAttrName, builder.getStringAttr(input.name()))));
    argValues.emplace_back(input.name(), std::nullopt);
  }
  llvm::Regex freeze(options.freeze), trainable(options.trainable);
  std::string regexError;
  for (auto [flag, pattern, regex] :
       {std::tuple("freeze", &options.freeze, &freeze),
        std::tuple("trainable", &options.trainable, &trainable)})
    if (!pattern->empty() && !regex->isValid(regexError))
      return emitError(fileLoc)
             << "invalid --" << flag << " regex: " << regexError;
  // What torch.export recorded about each graph value (PARAMETER, BUFFER,
  // CONSTANT_TENSOR, ...): only its parameters train. torch's ONNX
  // optimizer records what it folded an initializer from.
  llvm::StringMap<std::string> inputKinds;
  llvm::StringMap<SmallVector<std::string>> foldedFrom;
  for (const onnx::ValueInfoProto &info : graph.value_info()) {
    std::map<std::string, std::string> metadata =
        metadataProps(info, kValueInfoMetadataField);
    auto kind = metadata.find(kInputSpecKindKey);
    if (kind != metadata.end())
      inputKinds[info.name()] = kind->second;
    auto folded = metadata.find(kFoldedFromKey);
    if (folded != metadata.end())
      foldedFrom[info.name()] = parseNameList(folded->second);
  }
  llvm::StringSet<> exportedParams = signatureParameters(graph);
  for (const auto &entry : inputKinds)
    if (entry.getValue() == "PARAMETER")
      exportedParams.insert(entry.getKey());
  bool exporterRecords = !inputKinds.empty();
  // The operands a (2-D) MatMul or Gemm reads as [in, out] weights.
  llvm::StringSet<> weightOperands, initializerNames;
  for (const onnx::NodeProto &node : graph.node())
    if ((node.op_type() == "MatMul" || node.op_type() == "Gemm") &&
        node.input_size() > 1)
      weightOperands.insert(node.input(1));
  for (const onnx::TensorProto &init : graph.initializer())
    initializerNames.insert(init.name());
  // Initializers that are the transpose of a parameter, resolved once every
  // initializer is read.
  struct Transpose {
    std::string name, param;
    Shape shape;
    Type elementType;
    std::optional<Tensor> value; // absent in shapes-only mode
  };
  SmallVector<Transpose> transposes;
  for (const onnx::TensorProto &init : graph.initializer()) {
    std::optional<DType> dtype = dtypeFromOnnx(init.data_type());
    if (!dtype)
      return emitError(fileLoc)
             << "initializer '" << init.name() << "' has unsupported element "
             << "type " << onnxTypeName(init.data_type());
    Shape shape(init.dims().begin(), init.dims().end());
    // --trainable and --freeze decide where they match; else the exporter's
    // record; else every float initializer trains (older exporters).
    std::string reason;
    bool selected = isFloatDType(*dtype);
    auto kind = inputKinds.find(init.name());
    if (!selected) {
      reason = "not a float tensor";
    } else if (modelContext.buffers.contains(init.name())) {
      selected = false;
      reason = "buffer: a running statistic of a training-mode "
               "BatchNormalization";
    } else if (!options.freeze.empty() && freeze.match(init.name())) {
      selected = false;
      reason = "--freeze";
    } else if (!options.trainable.empty()) {
      selected = trainable.match(init.name());
      reason = "--trainable";
    } else if (kind != inputKinds.end()) {
      selected = kind->second == "PARAMETER";
      reason = "exporter: " + kind->second;
    } else if (exporterRecords) {
      // Folded by torch's optimizer: from one parameter, into a MatMul's
      // [in, out] operand, it is that Linear weight transposed; from a
      // parameter and other values, it is computed from it (in its place);
      // from no parameter, a constant.
      SmallVector<std::string> sources = foldedFrom.lookup(init.name());
      SmallVector<std::string> params;
      for (const std::string &source : sources)
        if (exportedParams.contains(source))
          params.push_back(source);
      bool retied = !params.empty() && initializerNames.contains(params[0]);
      if (params.size() == 1 && sources.size() == 1 && shape.size() == 2 &&
          weightOperands.contains(init.name()) &&
          (!retied || options.retie)) {
        Transpose &fold = transposes.emplace_back();
        fold.name = init.name();
        fold.param = params[0];
        fold.shape = shape;
        fold.elementType = elementTypeOf(context, *dtype);
        reason = "exporter: PARAMETER '" + params[0] +
                 "' transposed; trains as '" + params[0] + "'";
        if (options.initializers)
          options.initializers->push_back(
              {init.name(), shape, *dtype, true, reason});
        if (!options.shapesOnly) {
          std::string error;
          fold.value = tensorFromProto(init, baseDir, error);
          if (!fold.value)
            return emitError(fileLoc) << "initializer: " << error;
        }
        continue;
      }
      if (!params.empty()) {
        reason = "exporter: folded from PARAMETER '" + params[0] + "'";
        InFlightDiagnostic diag = options.strictParams ? emitError(fileLoc)
                                                       : emitWarning(fileLoc);
        diag << "initializer '" << init.name()
             << "' is computed from parameter '" << params[0] << "'"
             << (sources.size() > 1 ? " and other values" : "")
             << " by torch's ONNX optimizer: it trains in the parameter's "
                "place, which differs from PyTorch's training of '"
             << params[0] << "' (export with optimize=False to keep it)";
        if (options.strictParams)
          return failure();
      } else {
        selected = false;
        reason = "exporter: not a parameter";
      }
    } else {
      reason = "float initializer";
    }
    std::optional<Tensor> value;
    // Shapes-only mode reads no float data: frozen initializers become
    // parameters marked not trainable rather than constants.
    bool byShape = options.shapesOnly && isFloatDType(*dtype);
    if (!byShape) {
      std::string error;
      value = tensorFromProto(init, baseDir, error);
      if (!value)
        return emitError(fileLoc) << "initializer: " << error;
      // Non-finite initializers (-inf causal masks) are constants.
      if (selected && llvm::any_of(value->floats(),
                                   [](double x) { return !std::isfinite(x); })) {
        selected = false;
        reason = "non-finite values";
      }
    } else if (llvm::any_of(shape, [](int64_t d) { return d < 0; })) {
      return emitError(fileLoc)
             << "initializer '" << init.name() << "' has a negative dimension";
    }
    if (options.initializers)
      options.initializers->push_back(
          {init.name(), shape, *dtype, selected, reason});
    bool buffer = modelContext.buffers.contains(init.name());
    if (!selected && !byShape && !buffer) {
      folded.emplace_back(init.name(), std::move(*value));
      continue;
    }
    SmallVector<NamedAttribute> attrs = {
        builder.getNamedAttr(kParamAttrName,
                             builder.getStringAttr(init.name())),
        builder.getNamedAttr(kUnitAttrName,
                             builder.getStringAttr(unitOf(init.name())))};
    if (!selected)
      attrs.push_back(
          builder.getNamedAttr(kTrainableAttrName, builder.getBoolAttr(false)));
    if (value) {
      argTypes.push_back(tensorTypeOf(context, *value));
      attrs.push_back(builder.getNamedAttr(
          kValueAttrName,
          resourceAttrFromTensor(context, init.name(), *value)));
    } else {
      argTypes.push_back(
          RankedTensorType::get(shape, elementTypeOf(context, *dtype)));
    }
    argAttrs.push_back(builder.getDictionaryAttr(attrs));
    argValues.emplace_back(init.name(), std::move(value));
  }

  // A transposed parameter that is no initializer itself becomes that
  // parameter, in its own layout and name; one that is (a broken tie) reads
  // it again.
  llvm::StringSet<> addedParams;
  for (Transpose &fold : transposes) {
    if (initializerNames.contains(fold.param)) {
      emitRemark(fileLoc) << "re-tied '" << fold.name << "' to parameter '"
                          << fold.param
                          << "': torch's ONNX optimizer stored its transpose "
                             "apart; they train as one, gradients summed";
      continue;
    }
    if (!addedParams.insert(fold.param).second)
      continue;
    SmallVector<NamedAttribute> attrs = {
        builder.getNamedAttr(kParamAttrName, builder.getStringAttr(fold.param)),
        builder.getNamedAttr(kUnitAttrName,
                             builder.getStringAttr(unitOf(fold.param)))};
    argTypes.push_back(RankedTensorType::get({fold.shape[1], fold.shape[0]},
                                             fold.elementType));
    std::optional<Tensor> value;
    if (fold.value) {
      value = transposed(*fold.value);
      attrs.push_back(builder.getNamedAttr(
          kValueAttrName, resourceAttrFromTensor(context, fold.param, *value)));
    }
    argAttrs.push_back(builder.getDictionaryAttr(attrs));
    argValues.emplace_back(fold.param, std::move(value));
  }

  func = func::FuncOp::create(fileLoc, "forward",
                              builder.getFunctionType(argTypes, {}));
  func.setAllArgAttrs(argAttrs);
  // Where an input became a constant, the arguments no longer say which
  // graph input is at which position: a runner binding by position reads
  // them here.
  if (foldedInput)
    func->setAttr(kGraphInputsAttrName,
                  builder.getStrArrayAttr(SmallVector<StringRef>(
                      graphInputs.begin(), graphInputs.end())));
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  for (auto [arg, named] : llvm::zip(body->getArguments(), argValues)) {
    values[named.first] = arg;
    if (named.second)
      constants[arg] = *named.second;
  }
  for (const Transpose &fold : transposes)
    values[fold.name] = TransposeOp::create(
        builder, NameLoc::get(builder.getStringAttr(fold.name), fileLoc),
        values[fold.param], ArrayRef<int64_t>{1, 0});
  for (auto &[name, tensor] : folded) {
    // Frozen weights travel as blobs, like parameters; small constants
    // stay readable.
    ElementsAttr attr = tensor.numElements() > 64
                            ? resourceAttrFromTensor(context, name, tensor)
                            : denseAttrFromTensor(context, tensor);
    Value value = ConstantOp::create(
        builder, NameLoc::get(builder.getStringAttr(name), fileLoc), attr);
    values[name] = value;
    constants[value] = tensor;
  }
  return success();
}

std::optional<Tensor> ModelImporter::resolveConstant(Value value) {
  auto known = constants.find(value);
  if (known != constants.end())
    return known->second;
  Operation *op = value.getDefiningOp();
  if (!op || !isa<DTCDialect>(op->getDialect()))
    return std::nullopt;
  // Shape computations are small; do not evaluate big tensors at import
  // (kMaxFoldedElements, as constant folding).
  for (Type type : op->getResultTypes())
    if (cast<RankedTensorType>(type).getNumElements() > kMaxFoldedElements)
      return std::nullopt;
  SmallVector<Tensor> operandValues;
  for (Value operand : op->getOperands()) {
    std::optional<Tensor> operandValue = resolveConstant(operand);
    if (!operandValue)
      return std::nullopt;
    operandValues.push_back(std::move(*operandValue));
  }
  SmallVector<const Tensor *> operandPtrs;
  for (const Tensor &operand : operandValues)
    operandPtrs.push_back(&operand);
  SmallVector<Tensor> results;
  if (failed(evaluateOp(op, operandPtrs, results)))
    return std::nullopt;
  for (auto [result, tensor] : llvm::zip(op->getResults(), results))
    constants[result] = tensor;
  return constants[value];
}

LogicalResult ModelImporter::importNode(const onnx::NodeProto &node) {
  Location loc = locationOf(node);
  // Every error raised while importing the node -- by the importer, by op
  // type inference or by a verifier -- names the node and its op.
  std::string prefix = node.op_type() + " node '" + node.name() + "': ";
  bool forwarding = false;
  ScopedDiagnosticHandler namer(context, [&](Diagnostic &diag) {
    if (forwarding || diag.getSeverity() != DiagnosticSeverity::Error)
      return failure(); // let the next handler print it
    forwarding = true;
    emitError(diag.getLocation()) << prefix << diag.str();
    forwarding = false;
    return success();
  });
  auto nodeError = [&]() { return emitError(loc); };
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return nodeError() << "op domain '" << node.domain()
                       << "' is not supported (only the default ONNX domain)";
  if (opset == 0)
    return nodeError() << "the model imports no default-domain opset";
  const OpImporterTable::Entry *entry = opImporters().lookup(node.op_type());
  if (!entry)
    return nodeError() << "unsupported ONNX op '" << node.op_type() << "'";

  SmallVector<Value> inputs;
  for (const std::string &name : node.input()) {
    if (name.empty()) {
      inputs.push_back(Value());
      continue;
    }
    Value value = values.lookup(name);
    if (!value && modelContext.sequences.count(name)) {
      inputs.push_back(Value()); // read through sequenceInput
      continue;
    }
    if (!value)
      return nodeError() << "input '" << name
                         << "' is not defined before this node (the graph is "
                            "not topologically sorted, or has a cycle)";
    inputs.push_back(value);
  }
  for (unsigned i = 0; i < entry->requiredInputs; ++i)
    if (i >= inputs.size() ||
        (!inputs[i] && !modelContext.sequences.count(node.input(i))))
      return nodeError() << "needs " << entry->requiredInputs
                         << " inputs but has " << i;
  NodeImporter nodeImporter(
      node, inputs, opset, builder, loc,
      [this](Value v) { return resolveConstant(v); }, modelContext);
  if (failed(entry->importer(nodeImporter)))
    return failure();
  for (Value result : nodeImporter.results) {
    if (!result)
      continue; // a sequence
    int64_t count = 1;
    for (int64_t dim : cast<RankedTensorType>(result.getType()).getShape())
      if (dim > 0 && (count > kMaxTensorElements / dim ||
                      (count *= dim) > kMaxTensorElements))
        return nodeError() << "a result of type " << result.getType()
                           << " is absurdly large";
  }
  for (auto [i, name] : llvm::enumerate(node.output())) {
    if (name.empty() || modelContext.sequences.count(name))
      continue;
    if (i >= nodeImporter.results.size() || !nodeImporter.results[i])
      return nodeError() << "output " << i << " ('" << name
                         << "') is not supported";
    values[name] = nodeImporter.results[i];
  }
  return success();
}

LogicalResult ModelImporter::buildReturn(const onnx::GraphProto &graph) {
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    Value value = values.lookup(output.name());
    if (!value)
      return emitError(fileLoc) << "graph output '" << output.name()
                                << "' is not produced by any node";
    auto type = cast<RankedTensorType>(value.getType());
    if (output.type().has_tensor_type()) {
      const auto &declared = output.type().tensor_type();
      std::optional<DType> dtype = dtypeFromOnnx(declared.elem_type());
      if (declared.elem_type() != 0 &&
          (!dtype || elementTypeOf(context, *dtype) != type.getElementType()))
        return emitError(fileLoc)
               << "graph output '" << output.name() << "' is computed as "
               << type << " but the model declares another element type";
      if (declared.has_shape()) {
        bool matches = declared.shape().dim_size() == type.getRank();
        for (auto [i, dim] : llvm::enumerate(declared.shape().dim()))
          if (matches && dim.has_dim_value() &&
              dim.dim_value() != type.getDimSize(i))
            matches = false;
        if (!matches)
          return emitError(fileLoc)
                 << "graph output '" << output.name() << "' is computed as "
                 << type << " but the model declares another shape";
      }
    }
    results.push_back(value);
    resultAttrs.push_back(builder.getDictionaryAttr(builder.getNamedAttr(
        kOutputAttrName, builder.getStringAttr(output.name()))));
  }
  // Each buffer's next value, the result its argument is donated to.
  for (BlockArgument arg : func.getArguments()) {
    auto name =
        func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kParamAttrName);
    Value next =
        name ? modelContext.bufferUpdates.lookup(name.getValue()) : Value();
    if (!next)
      continue;
    func.setArgAttr(arg.getArgNumber(), kAliasingOutputAttrName,
                    builder.getI64IntegerAttr(results.size()));
    results.push_back(next);
    resultAttrs.push_back(builder.getDictionaryAttr({}));
  }
  func::ReturnOp::create(builder, fileLoc, results);
  func.setFunctionType(builder.getFunctionType(func.getArgumentTypes(),
                                               ValueRange(results).getTypes()));
  func.setAllResultAttrs(resultAttrs);
  return success();
}

/// Appends `node` to `out`, or, where it calls one of the model's local
/// functions (as onnxscript writes them), that function's body with the
/// call's values and attributes substituted, its own values renamed apart,
/// and its calls inlined in turn.
static LogicalResult
inlineNode(const onnx::NodeProto &node,
           const llvm::StringMap<const onnx::FunctionProto *> &functions,
           onnx::GraphProto &out, int64_t &calls, int depth,
           std::string &error) {
  auto it = functions.find(node.domain() + "::" + node.op_type());
  if (it == functions.end()) {
    *out.add_node() = node;
    return success();
  }
  const onnx::FunctionProto &function = *it->second;
  if (depth > 64) {
    error = "local function '" + function.name() + "' calls itself";
    return failure();
  }
  std::string prefix = function.name() + "." + std::to_string(calls++) + "/";
  llvm::StringMap<std::string> names;
  for (int i = 0; i < function.input_size(); ++i)
    names[function.input(i)] = i < node.input_size() ? node.input(i) : "";
  for (int i = 0; i < function.output_size(); ++i)
    names[function.output(i)] = i < node.output_size() ? node.output(i) : "";
  auto rename = [&](const std::string &name) -> std::string {
    if (name.empty())
      return name;
    auto found = names.find(name);
    return found != names.end() ? found->second : prefix + name;
  };
  llvm::StringMap<const onnx::AttributeProto *> callAttributes;
  for (const onnx::AttributeProto &attr : node.attribute())
    callAttributes[attr.name()] = &attr;
  for (const onnx::NodeProto &body : function.node()) {
    onnx::NodeProto copy = body;
    for (int i = 0; i < copy.input_size(); ++i)
      copy.set_input(i, rename(copy.input(i)));
    for (int i = 0; i < copy.output_size(); ++i)
      copy.set_output(i, rename(copy.output(i)));
    copy.clear_attribute();
    for (const onnx::AttributeProto &attr : body.attribute()) {
      if (attr.ref_attr_name().empty()) {
        *copy.add_attribute() = attr;
        continue;
      }
      // An attribute of the call (absent: the op's default).
      if (const onnx::AttributeProto *given =
              callAttributes.lookup(attr.ref_attr_name())) {
        onnx::AttributeProto *bound = copy.add_attribute();
        *bound = *given;
        bound->set_name(attr.name());
      }
    }
    if (failed(inlineNode(copy, functions, out, calls, depth + 1, error)))
      return failure();
  }
  return success();
}

OwningOpRef<ModuleOp>
ModelImporter::importModel(const onnx::ModelProto &model) {
  for (const onnx::OperatorSetIdProto &entry : model.opset_import())
    if (entry.domain().empty() || entry.domain() == "ai.onnx")
      opset = entry.version();
  if (opset > kMaxOpset) {
    emitError(fileLoc) << "opset " << opset << " is newer than dtc supports ("
                       << kMaxOpset << ")";
    return nullptr;
  }
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  // The model's local functions, inlined into the graph.
  onnx::GraphProto inlined;
  if (model.functions_size()) {
    llvm::StringMap<const onnx::FunctionProto *> functions;
    for (const onnx::FunctionProto &function : model.functions())
      functions[function.domain() + "::" + function.name()] = &function;
    inlined = model.graph();
    inlined.clear_node();
    int64_t calls = 0;
    std::string error;
    for (const onnx::NodeProto &node : model.graph().node())
      if (failed(inlineNode(node, functions, inlined, calls, 0, error))) {
        emitError(fileLoc) << error;
        return nullptr;
      }
  }
  const onnx::GraphProto &graph =
      model.functions_size() ? inlined : model.graph();
  using RunningVariance = ONNXImportOptions::RunningVariance;
  modelContext.unbiasedRunningVariance =
      options.runningVariance == RunningVariance::Unbiased ||
      (options.runningVariance == RunningVariance::Auto &&
       model.producer_name() == "pytorch");
  if (failed(buildSignature(graph)))
    return nullptr;
  module->push_back(func);
  for (const onnx::NodeProto &node : graph.node())
    if (failed(importNode(node)))
      return nullptr;
  if (failed(checkStaticPositions(modelContext)))
    return nullptr;
  if (!modelContext.positions.empty())
    func->setAttr(kStaticPositionsAttrName,
                  describeStaticPositions(modelContext, context));
  if (failed(buildReturn(graph)))
    return nullptr;
  // Constants folded into shapes, and nodes whose outputs nothing uses, leave
  // dead ops behind.
  eraseDeadOps(func.getBody().front());
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

std::string mlir::dtc::parseInputShapes(
    ArrayRef<std::string> specs,
    std::map<std::string, std::vector<int64_t>> &shapes) {
  for (const std::string &list : specs) {
    SmallVector<StringRef> entries;
    StringRef(list).split(entries, ',', -1, /*KeepEmpty=*/false);
    for (StringRef entry : entries) {
      auto [name, dims] = entry.split('=');
      std::vector<int64_t> shape;
      SmallVector<StringRef> parts;
      dims.split(parts, 'x');
      for (StringRef part : parts) {
        int64_t dim;
        if (part.getAsInteger(10, dim) || dim < 0)
          return "bad --input-shape '" + entry.str() +
                 "' (expected NAME=DxDx..., e.g. ids=8x16)";
        shape.push_back(dim);
      }
      if (name.empty() || dims.empty())
        return "bad --input-shape '" + entry.str() +
               "' (expected NAME=DxDx..., e.g. ids=8x16)";
      shapes[name.str()] = shape;
    }
  }
  return "";
}

OwningOpRef<ModuleOp>
mlir::dtc::importONNXModel(MLIRContext *context, StringRef bytes,
                           const std::string &path,
                           const ONNXImportOptions &options) {
  context->loadDialect<DTCDialect, func::FuncDialect>();
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) ||
      !model.has_graph()) {
    emitError(FileLineColLoc::get(context, path, 0, 0))
        << "'" << path
        << "' is not a valid ONNX model (truncated or corrupt protobuf, or no "
           "graph)";
    return nullptr;
  }
  if (options.capacityFactor > 0) {
    // The capacity's routing group is a shape: import the graph as it is
    // first, for the static shape of each node's output.
    ONNXImportOptions probe = options;
    probe.capacityFactor = 0;
    probe.initializers = nullptr;
    probe.shapesOnly = true;
    OwningOpRef<ModuleOp> first =
        ModelImporter(context, probe, path).importModel(model);
    if (!first)
      return nullptr;
    std::map<std::string, Shape> shapes;
    first->walk([&](Operation *op) {
      auto name = dyn_cast<NameLoc>(op->getLoc());
      auto type = op->getNumResults()
                      ? dyn_cast<RankedTensorType>(op->getResult(0).getType())
                      : RankedTensorType();
      if (name && type)
        shapes[name.getName().str()] = Shape(type.getShape());
    });
    CapacityRewrite done;
    std::string error = rewriteCapacity(*model.mutable_graph(),
                                        options.capacityFactor, shapes, done);
    if (!error.empty()) {
      emitError(FileLineColLoc::get(context, path, 0, 0)) << error;
      return nullptr;
    }
    if (options.capacityRewrite)
      *options.capacityRewrite = done;
  }
  return ModelImporter(context, options, path).importModel(model);
}

OwningOpRef<ModuleOp>
mlir::dtc::importONNXModel(MLIRContext *context, const std::string &path,
                           const ONNXImportOptions &options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    emitError(FileLineColLoc::get(context, path, 0, 0))
        << "cannot open '" << path << "'";
    return nullptr;
  }
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  return importONNXModel(context, bytes, path, options);
}
