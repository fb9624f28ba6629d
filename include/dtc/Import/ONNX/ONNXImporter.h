//===- ONNXImporter.h - ONNX models to the dtc dialect ----------*- C++ -*-===//
//
// Imports an ONNX model into a module holding one function, @forward, of dtc
// ops. Graph inputs become arguments marked `dtc.input`; floating-point
// initializers become arguments marked `dtc.param` whose initial values travel
// with the module (`dtc.value`, a dense_resource blob); other initializers and
// Constant nodes become `dtc.constant` ops. Every op is located at its ONNX
// node's name, so diagnostics name the user's node.
//
// Initializers the user freezes (--freeze/--trainable regexes) become
// constants too. With `shapesOnly`, parameters are imported from their
// declared shapes without reading their data, for planning large models.
//
// dtc compiles static shapes: operands that determine a shape (Reshape's
// shape, Slice's starts/ends, axes operands, ...) must be constants. A graph
// input used that way can be bound to a value (`boundInputs`), which is then
// folded in as a constant; all other inputs stay function arguments.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_IMPORT_ONNX_ONNXIMPORTER_H
#define DTC_IMPORT_ONNX_ONNXIMPORTER_H

#include "dtc/Runtime/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>

namespace mlir::dtc {

/// Function attribute: NonZero's static form in the model
/// (StaticPositionsImporters.cpp), a dictionary of `nodes` (the NonZero
/// nodes), `positions` (every position of their inputs: the rows of the
/// padded buffers) and `gathered_bytes` (the bytes of the rows gathered
/// at them, padding included).
inline constexpr char kStaticPositionsAttrName[] = "dtc.static_positions";

/// What the importer made of one initializer.
struct InitializerInfo {
  std::string name;
  Shape shape;
  DType dtype;
  /// A trainable parameter (an argument), or a constant: integers,
  /// non-finite values, what the exporter records as no parameter, and
  /// what --freeze/--trainable exclude.
  bool trainable;
  /// Why: the exporter's record (torch.export's input kind) or the rule
  /// that decided.
  std::string reason;
};

/// What --capacity-factor did: in `slotOneHots` slot OneHots (one per
/// mixture and choice), the capacity `from` rows of each expert's buffer
/// per routing group of `tokens` tokens became `to`.
struct CapacityRewrite {
  int64_t slotOneHots = 0, tokens = 0, from = 0, to = 0;
};

struct ONNXImportOptions {
  /// Values for graph inputs, by name. Those that determine shapes are folded
  /// in as constants; those whose declared shape is symbolic lend it theirs.
  std::map<std::string, Tensor> boundInputs;
  /// Shapes for graph inputs, by name: they bind symbolic dimensions and
  /// may replace static ones (a smaller batch, say); shape computations in
  /// the graph follow them.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Float initializers whose names match are constants, not parameters.
  std::string freeze;
  /// When set, only float initializers whose names match are parameters.
  std::string trainable;
  /// Import float initializers from their shapes alone: their data
  /// (external files included) is not read, they carry no initial value,
  /// and frozen ones are parameters marked `dtc.trainable = false` (so
  /// non-finite masks cannot be told apart: freeze them). Integer
  /// initializers are still read. For planning large models.
  bool shapesOnly = false;
  /// Import Dropout nodes as training-mode dtc.dropout (masks keyed on
  /// `dropoutSeed`, the node's position and a `#dtc.state<step>`
  /// argument, recorded as the function's `dtc.step` RNG), instead of the
  /// identity.
  bool trainingDropout = false;
  /// The graph is imported to be trained: inference-only constructs (an
  /// attention KV cache) are refused.
  bool training = false;
  int64_t dropoutSeed = 0;
  /// An initializer torch's ONNX optimizer stored as the transpose of a
  /// parameter that is an initializer too (a tie it broke: GPT-2's
  /// embedding and head) is read as that transpose, one parameter again;
  /// false keeps the two apart.
  bool retie = true;
  /// Refuse, rather than warn about, an initializer that torch's optimizer
  /// computed from a parameter and other values (it would train in the
  /// parameter's place, unlike PyTorch).
  bool strictParams = false;
  /// How a training-mode BatchNormalization updates its running variance
  /// (PyTorch's BatchNorm uses the batch's unbiased variance, ONNX's
  /// reference its population variance, and torch.onnx does not say).
  enum class RunningVariance {
    /// Unbiased when the model's producer is "pytorch", else population.
    Auto,
    Unbiased,
    Population,
  };
  RunningVariance runningVariance = RunningVariance::Auto;
  /// Training-mode batch norms take their statistics over this many equal
  /// groups of the batch apart, the running statistics from the first
  /// group's: PyTorch's DistributedDataParallel without SyncBatchNorm, a
  /// group per data-parallel rank (rank 0's buffers are the ones kept).
  int64_t batchNormGroups = 1;
  /// When positive, a GShard/Switch mixture's capacity (baked into the
  /// graph's constants) becomes ceil(capacityFactor * k * tokens /
  /// experts) per routing group; an error where dtc cannot find or rewrite
  /// it. `capacityRewrite`, when set, receives what changed.
  double capacityFactor = 0;
  CapacityRewrite *capacityRewrite = nullptr;
  /// When set, receives one entry per initializer.
  std::vector<InitializerInfo> *initializers = nullptr;
};

/// Parses `--input-shape` values ("name=8x16"; several separated by commas)
/// into `shapes`; returns an error message, or "" on success.
std::string
parseInputShapes(llvm::ArrayRef<std::string> specs,
                 std::map<std::string, std::vector<int64_t>> &shapes);

/// Imports the ONNX model file at `path`. Emits diagnostics and returns null
/// on failure (unreadable or corrupt file, unsupported op, opset or type,
/// inconsistent shapes).
OwningOpRef<ModuleOp> importONNXModel(MLIRContext *context,
                                      const std::string &path,
                                      const ONNXImportOptions &options);
/// The same for a model already in memory; `path` names it in diagnostics
/// and locates external data files.
OwningOpRef<ModuleOp> importONNXModel(MLIRContext *context,
                                      llvm::StringRef bytes,
                                      const std::string &path,
                                      const ONNXImportOptions &options);

/// The ONNX op types the importer handles, sorted.
std::vector<std::string> supportedONNXOps();

} // namespace mlir::dtc

#endif // DTC_IMPORT_ONNX_ONNXIMPORTER_H
