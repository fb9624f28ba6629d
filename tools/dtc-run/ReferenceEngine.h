//===- ReferenceEngine.h - the training step on the oracle ------*- C++ -*-===//
//
// `dtc-run OUT` with the reference engine: the step's IR run op by op by
// the interpreter (f64 arithmetic, each value allocated), behind the same
// StepEngine interface the compiled programs implement.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TOOLS_DTC_RUN_REFERENCEENGINE_H
#define DTC_TOOLS_DTC_RUN_REFERENCEENGINE_H

#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "dtc/Interpreter/Interpreter.h"
#include "dtc/Runtime/TrainingLoop.h"

namespace mlir::dtc {

/// The starting value the step's IR carries for each argument (its
/// `dtc.value`).
BuiltinValue builtinValuesOf(const TrainingStep &step);

class ReferenceEngine : public StepEngine {
public:
  ReferenceEngine(const TrainingStep &step, const StepSignature &signature,
                  Communicator *comm)
      : step_(step), signature(signature), comm(comm) {}
  std::string start(std::vector<Tensor> arguments) override;
  bool step() override;
  std::string setArgument(size_t index, const Tensor &part) override;
  Tensor argument(size_t index) const override { return args[index]; }
  Tensor result(size_t index) const override;
  int64_t peakIntermediateBytes() const override { return peak; }

  /// Time the fragments of a pipelined step (dtc-run --trace).
  void recordFragments() { timeFragments = true; }
  /// Those of the last step, in the order this rank ran them.
  const std::vector<FragmentSpan> &lastFragments() const { return fragments; }

private:
  TrainingStep step_;
  const StepSignature &signature;
  Communicator *comm;
  std::vector<Tensor> args, results;
  int64_t peak = 0;
  bool timeFragments = false;
  std::vector<FragmentSpan> fragments;
};

} // namespace mlir::dtc

#endif // DTC_TOOLS_DTC_RUN_REFERENCEENGINE_H
