//===- DTCDialect.h - the dtc dialect ---------------------------*- C++ -*-===//
//
// Declares the dtc dialect and the names of the attributes it puts on
// functions, their arguments and results (parameters, their initial values,
// ONNX names, the step ABI; TrainingStep.h reads a step through them).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECT_DTC_IR_DTCDIALECT_H
#define DTC_DIALECT_DTC_IR_DTCDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "dtc/Dialect/DTC/IR/DTCOpsDialect.h.inc"

#include "dtc/Dialect/DTC/IR/DTCAttrsEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dtc/Dialect/DTC/IR/DTCAttrs.h.inc"

namespace mlir::dtc {

/// The largest constant, in elements, that the compiler computes while it
/// compiles (constant folding, the importer's Range): larger values computed
/// from constants stay ops, and splats are one element whatever their shape,
/// so that compile time follows the number of ops, never tensor sizes.
inline constexpr int64_t kMaxFoldedElements = 4096;

/// Argument attribute: the argument is a model parameter (ONNX initializer);
/// the value is its ONNX name.
inline constexpr llvm::StringLiteral kParamAttrName = "dtc.param";
/// Argument attribute: the parameter's initial value (an ElementsAttr).
inline constexpr llvm::StringLiteral kValueAttrName = "dtc.value";
/// Function attribute: the names of the ONNX graph's inputs in order, where
/// some became constants (bound at import) and are no arguments.
inline constexpr llvm::StringLiteral kGraphInputsAttrName = "dtc.graph_inputs";
/// Argument attribute: the argument is a model input; the value is its name.
inline constexpr llvm::StringLiteral kInputAttrName = "dtc.input";
/// On a labels input: the number of classes its values index.
inline constexpr llvm::StringLiteral kClassesAttrName = "dtc.classes";
/// Result attribute: the ONNX name of a model output.
inline constexpr llvm::StringLiteral kOutputAttrName = "dtc.output";
/// Argument attribute: `false` excludes a parameter from training.
inline constexpr llvm::StringLiteral kTrainableAttrName = "dtc.trainable";
/// Op attribute (unit): dtc-mixed-precision leaves the op in f32, as ops
/// with the ComputesInF32 trait (the ops the importer builds a batch or
/// instance norm from: PyTorch computes those in f32 on 16-bit inputs).
inline constexpr llvm::StringLiteral kComputeInF32AttrName =
    "dtc.compute_in_f32";
/// Result attribute: the result is the gradient of the named parameter.
inline constexpr llvm::StringLiteral kGradAttrName = "dtc.grad";
/// Argument attribute: training state that persists from step to step (a
/// StateAttr: `#dtc.state<exp_avg of "w">`, `#dtc.state<step>`).
inline constexpr llvm::StringLiteral kStateAttrName = "dtc.state";
/// Argument attribute: the argument is donated to the step and result i
/// (this integer) is its next value, which a runner feeds back as the
/// argument on the next step (XLA's `tf.aliasing_output`).
inline constexpr llvm::StringLiteral kAliasingOutputAttrName =
    "dtc.aliasing_output";
/// Function attribute: the function is a training step (a StepAttr: the
/// ABI version, the loss result, microbatches, mesh, RNG, loss scaling).
inline constexpr llvm::StringLiteral kStepAttrName = "dtc.step";
/// Argument attribute: the part of the whole tensor each rank holds (a
/// ShardingAttr); absent: every rank holds all of it.
inline constexpr llvm::StringLiteral kShardingAttrName = "dtc.sharding";
/// Argument attribute: the rows of a parameter that are real; the rest
/// are padding (zeros) that dtc-pad-vocabulary or dtc-zero added. Along
/// dimension `dtc.padded_dim` where that is given (ZeRO pads the first
/// dimension no other axis splits), else along dimension 0.
inline constexpr llvm::StringLiteral kUnpaddedRowsAttrName =
    "dtc.unpadded_rows";
inline constexpr llvm::StringLiteral kPaddedDimAttrName = "dtc.padded_dim";
/// Function attribute: the ZeRO stage the step was built for (its
/// gradient buffer: whole for stage 1, a shard for stage 2).
inline constexpr llvm::StringLiteral kZeroStageAttrName = "dtc.zero_stage";
/// Op attribute of the concats ZeRO's padding makes (a value with zero rows
/// appended), so that later steps find the padding without re-detecting it.
inline constexpr llvm::StringLiteral kPaddingAttrName = "dtc.padding";
/// Op attribute of the all-gathers a partitioner inserts where an op
/// cannot run on its operands' layouts (a resharding): the report lists
/// them apart, and --strict-sharding refuses them.
inline constexpr llvm::StringLiteral kReshardingAttrName = "dtc.resharding";
/// Op attribute of the adds dtc-gradient-accumulation makes to sum the
/// microbatches' values (ZeRO-2/3 reduce-scatter each microbatch instead).
inline constexpr llvm::StringLiteral kMicrobatchSumAttrName =
    "dtc.microbatch_sum";
/// Argument attribute of a parameter: the unit it belongs to, the module
/// FSDP would wrap (a transformer block, `layers.3`; else its top-level
/// module), which ZeRO-3 gathers together. The importer sets it from the
/// initializer's name.
inline constexpr llvm::StringLiteral kUnitAttrName = "dtc.unit";
/// Op attribute of a ZeRO-3 parameter gather: "forward" or "backward", the
/// phase whose reads it serves (bucketing groups and prefetches by it).
inline constexpr llvm::StringLiteral kGatherPhaseAttrName = "dtc.gather_phase";
/// The name an argument is known by: its `dtc.input` or `dtc.param` name,
/// its state's display name (`exp_avg/<param>`, `step`), or `arg<N>`.
std::string getArgumentName(FunctionOpInterface func, unsigned index);
/// The argument marked `dtc.param = name`, or null.
BlockArgument getParameterArgument(FunctionOpInterface func, StringRef name);
/// The name a result is known by: `loss` for the step's loss, its
/// `dtc.output` name, `grad/<param>` for a gradient, `update/<argument>`
/// for the next value of a donated argument, or `result<N>`.
std::string getResultName(FunctionOpInterface func, unsigned index);

} // namespace mlir::dtc

#endif // DTC_DIALECT_DTC_IR_DTCDIALECT_H
