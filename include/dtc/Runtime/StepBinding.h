//===- StepBinding.h - a training step bound to tensors ---------*- C++ -*-===//
//
// What every engine does around a compiled training step, whatever runs
// the step itself (the reference executor, compiled CPU or CUDA code): cut
// this rank's part of the whole starting tensors (inputs, parameters,
// master copies started from their parameter's value), pad what the
// compiler padded, start optimizer state at zero, feed each step's updates
// back as the next step's arguments, and gather whole tensors (padding
// stripped, a parameter kept in bf16 as its f32 master copy) for dumps and
// checkpoints. In a pipelined step a rank binds only the parameters its
// stages read, with their state: the others are empty tensors it never
// passes on. It reads only the step's StepSignature and talks to the
// other ranks through the Communicator interface.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_STEPBINDING_H
#define DTC_RUNTIME_STEPBINDING_H

#include "dtc/Runtime/StepSignature.h"

namespace mlir::dtc {

class StepBinding {
public:
  /// Binds `signature` (which must outlive the binding) on this rank of
  /// `comm`, the step's mesh; null: one device.
  StepBinding(const StepSignature &signature, Communicator *comm);

  /// This rank's arguments for the first step, from whole starting values
  /// (one per argument, by index; unpadded or padded). Every input and
  /// parameter needs one; a master copy starts from its parameter's value,
  /// other state from its own or else at zero. An f32 value feeds a bf16
  /// argument, rounded (.npy holds no bf16). Checks the signature first
  /// (its ABI version included). Returns "" or what is wrong, naming the
  /// argument.
  std::string bind(const std::vector<std::optional<Tensor>> &start,
                   std::vector<Tensor> &arguments);

  /// The same from this rank's parts themselves (`parts`, one per argument,
  /// as a checkpoint on this layout holds them): each checked against the
  /// argument's type. Returns "" or what is wrong.
  std::string bindParts(std::vector<Tensor> parts,
                        std::vector<Tensor> &arguments);

  /// The next step's arguments from this step's `results`: each donated
  /// argument takes the result that is its next value (moved out of
  /// `results`), the others their first value. Call after `bind`.
  std::vector<Tensor> next(std::vector<Tensor> &results) const;

  /// This rank's part of argument `index` from its whole value (padded
  /// first when the argument is); "" or what is wrong.
  std::string partOf(size_t index, const Tensor &whole, Tensor &part) const;

  /// The whole value of argument or result `index` from this rank's
  /// `part` (ignored where this rank does not hold it), padding stripped.
  /// Collective: every rank calls it, in the same order.
  Tensor wholeArgument(size_t index, const Tensor &part) const;
  Tensor wholeResult(size_t index, const Tensor &part) const;
  /// The whole value of parameter `index` among a step's `arguments`: its
  /// f32 master copy's when it has one, else its own. Collective.
  Tensor wholeParameter(size_t index,
                        const std::vector<Tensor> &arguments) const;

private:
  int64_t groupSize(const std::string &axis) const;
  Tensor gather(const Tensor &part, DType dtype, const Shape &shape,
                const TensorLayout &layout,
                std::optional<int64_t> unpaddedRows) const;

  const StepSignature &signature;
  Communicator *comm;
  /// The first step's value of each argument no result updates.
  std::vector<Tensor> fixed;
};

} // namespace mlir::dtc

#endif // DTC_RUNTIME_STEPBINDING_H
