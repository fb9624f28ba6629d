//===- ReferenceEngine.cpp - the training step on the oracle --------------===//

#include "ReferenceEngine.h"

#include "dtc/Interpreter/Interpreter.h"
#include "dtc/Interpreter/TensorAttr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::dtc;

BuiltinValue mlir::dtc::builtinValuesOf(const TrainingStep &step) {
  func::FuncOp func = step.getFunction();
  return [func](size_t index) mutable -> std::optional<Tensor> {
    auto value = func.getArgAttrOfType<ElementsAttr>(index, kValueAttrName);
    if (!value)
      return std::nullopt;
    FailureOr<Tensor> decoded = tensorFromAttr(value);
    if (failed(decoded)) {
      llvm::errs() << "warning: cannot decode the starting value of argument "
                   << index << "\n";
      return std::nullopt;
    }
    return std::move(*decoded);
  };
}

std::string ReferenceEngine::start(std::vector<Tensor> arguments) {
  args = std::move(arguments);
  return "";
}

std::string ReferenceEngine::setArgument(size_t index, const Tensor &part) {
  const StepArgument &arg = signature.arguments[index];
  if (part.shape() != arg.shape || part.dtype() != arg.dtype)
    return "input '" + arg.name + "' is " +
           describe(part.shape(), part.dtype()) + ", the step expects " +
           describe(arg.shape, arg.dtype);
  args[index] = part;
  return "";
}

bool ReferenceEngine::step() {
  // The step's arguments are donated to it: parameters and state are freed
  // once used, and their updates become the next step's arguments.
  InterpretStats stats;
  stats.recordFragments = timeFragments;
  SmallVector<Tensor> donated;
  for (auto [i, arg] : llvm::enumerate(signature.arguments))
    donated.push_back(arg.aliasedResult ? std::move(args[i]) : args[i]);
  FailureOr<SmallVector<Tensor>> out =
      interpretFunction(step_.getFunction(), std::move(donated), comm, &stats);
  peak = std::max(peak, stats.peakIntermediateBytes);
  fragments = std::move(stats.fragments);
  if (failed(out))
    return false;
  results.assign(std::make_move_iterator(out->begin()),
                 std::make_move_iterator(out->end()));
  for (auto [i, arg] : llvm::enumerate(signature.arguments))
    if (arg.aliasedResult)
      args[i] = std::move(results[*arg.aliasedResult]);
  return true;
}

Tensor ReferenceEngine::result(size_t index) const {
  // An update lives on as its argument.
  if (std::optional<size_t> arg = signature.results[index].updatedArgument)
    return args[*arg];
  return results[index];
}
