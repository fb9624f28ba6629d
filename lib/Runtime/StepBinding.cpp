//===- StepBinding.cpp - a training step bound to tensors -----------------===//

#include "dtc/Runtime/StepBinding.h"

#include <cstdlib>

namespace mlir::dtc {

namespace {

std::string meshText(const MeshShape &mesh) {
  if (mesh.axes.empty())
    return "one device";
  std::string text;
  for (size_t i = 0; i < mesh.axes.size(); ++i)
    text += (i ? "," : "") + mesh.axes[i] + "=" + std::to_string(mesh.sizes[i]);
  return text;
}

/// How a message names argument `arg`.
std::string nameOf(const StepArgument &arg) {
  switch (arg.role) {
  case ArgumentRole::Input:
    return "input '" + arg.name + "'";
  case ArgumentRole::Parameter:
    return "parameter '" + arg.name + "'";
  case ArgumentRole::State:
    return "state '" + arg.name + "'";
  }
  return "'" + arg.name + "'";
}

} // namespace

StepBinding::StepBinding(const StepSignature &signature, Communicator *comm)
    : signature(signature), comm(comm) {}

int64_t StepBinding::groupSize(const std::string &axis) const {
  return comm ? comm->groupSize({axis}) : 1;
}

std::string StepBinding::partOf(size_t index, const Tensor &whole,
                                Tensor &part) const {
  const StepArgument &arg = signature.arguments[index];
  part = whole;
  // Padding: the real rows, then zeros, to the padded whole.
  int64_t padDim = arg.layout.paddedDim;
  if (arg.unpaddedRows && part.rank() > padDim &&
      part.shape()[padDim] == *arg.unpaddedRows &&
      static_cast<int64_t>(arg.shape.size()) > padDim) {
    int64_t padded = arg.shape[padDim];
    if (static_cast<int64_t>(arg.layout.dims.size()) > padDim)
      for (const std::string &axis : arg.layout.dims[padDim])
        padded *= groupSize(axis);
    part = withExtent(part, padDim, padded);
  }
  // A dimension split over several axes is split by each in turn (the
  // first with the dimension's blocks): tp's part, then dp's part of that.
  for (size_t d = 0; d < arg.layout.dims.size(); ++d) {
    int64_t blocks = arg.layout.blocksOf(d);
    for (const std::string &axis : arg.layout.dims[d]) {
      int64_t n = groupSize(axis);
      if (static_cast<int64_t>(d) >= part.rank() ||
          part.shape()[d] % (n * std::abs(blocks)) != 0)
        return nameOf(arg) + " (" + describe(whole.shape(), whole.dtype()) +
               ") does not split into " + std::to_string(n) +
               " equal shares along dimension " + std::to_string(d);
      part = chunkOf(part, d, n, comm ? comm->groupRank({axis}) : 0, blocks);
      blocks = 1;
    }
  }
  if (part.shape() != arg.shape || part.dtype() != arg.dtype)
    return nameOf(arg) + " has type " + describe(whole.shape(), whole.dtype()) +
           (comm ? ", of which this rank's part is " +
                       describe(part.shape(), part.dtype())
                 : std::string()) +
           ", but the step expects " + describe(arg.shape, arg.dtype);
  return "";
}

std::string StepBinding::bind(const std::vector<std::optional<Tensor>> &start,
                              std::vector<Tensor> &arguments) {
  if (std::string error = signature.check(); !error.empty())
    return error;
  const MeshShape &mesh = comm ? comm->mesh() : MeshShape();
  if (mesh.axes != signature.mesh.axes || mesh.sizes != signature.mesh.sizes)
    return "the step runs on " + meshText(signature.mesh) +
           ", but it is bound on " + meshText(mesh);
  if (start.size() != signature.arguments.size())
    return "the step takes " + std::to_string(signature.arguments.size()) +
           " arguments; " + std::to_string(start.size()) +
           " starting values "
           "were given";
  arguments.clear();
  fixed.assign(signature.arguments.size(), Tensor());
  for (size_t i = 0; i < signature.arguments.size(); ++i) {
    const StepArgument &arg = signature.arguments[i];
    if (!signature.heldBy(arg.layout, comm)) {
      arguments.emplace_back();
      continue;
    }
    const std::optional<Tensor> *whole = &start[i];
    // A master copy starts from its parameter's value.
    if (arg.role == ArgumentRole::State &&
        arg.stateKind == StepStateKind::Master) {
      whole = nullptr;
      for (size_t j = 0; j < signature.arguments.size(); ++j)
        if (signature.arguments[j].role == ArgumentRole::Parameter &&
            signature.arguments[j].name == arg.parameter)
          whole = &start[j];
      if (!whole || !*whole)
        return "no value for parameter '" + arg.parameter +
               "', whose master copy '" + arg.name + "' starts from it";
    }
    Tensor value;
    if (*whole) {
      value = **whole;
      // .npy holds no bf16: f32 feeds a bf16 argument, rounded; a master
      // copy takes its parameter's value in its own (wider) type.
      bool master = arg.role == ArgumentRole::State &&
                    arg.stateKind == StepStateKind::Master;
      if (value.dtype() != arg.dtype &&
          ((arg.dtype == DType::BF16 && value.dtype() == DType::F32) ||
           (master && value.isFloat() && isFloatDType(arg.dtype)))) {
        Tensor converted(arg.dtype, value.shape());
        converted.floats() = value.floats();
        converted.roundToElementType();
        value = std::move(converted);
      }
      Tensor part;
      if (std::string error = partOf(i, value, part); !error.empty())
        return error;
      value = std::move(part);
    } else if (arg.role == ArgumentRole::State) {
      value = Tensor(arg.dtype, arg.shape);
    } else if (arg.role == ArgumentRole::Input) {
      return "no tensor given for input '" + arg.name + "'";
    } else {
      std::string error = "no value for parameter '" + arg.name + "'";
      if (std::optional<size_t> master =
              signature.stateArgument(StepStateKind::Master, arg.name))
        error += ", whose master copy '" + signature.arguments[*master].name +
                 "' starts from it";
      return error + " (a step compiled with --shapes-only: give --init DIR "
                     "or --init-random SEED)";
    }
    if (!arg.aliasedResult)
      fixed[i] = value;
    arguments.push_back(std::move(value));
  }
  return "";
}

std::string StepBinding::bindParts(std::vector<Tensor> parts,
                                   std::vector<Tensor> &arguments) {
  if (std::string error = signature.check(); !error.empty())
    return error;
  if (parts.size() != signature.arguments.size())
    return "the step takes " + std::to_string(signature.arguments.size()) +
           " arguments; " + std::to_string(parts.size()) + " parts were given";
  fixed.assign(signature.arguments.size(), Tensor());
  for (size_t i = 0; i < signature.arguments.size(); ++i) {
    const StepArgument &arg = signature.arguments[i];
    Tensor &part = parts[i];
    if (!signature.heldBy(arg.layout, comm)) {
      part = Tensor();
      continue;
    }
    // (.npy holds no bf16: f32 that rounds to it exactly.)
    if (arg.dtype == DType::BF16 && part.dtype() == DType::F32) {
      Tensor converted(arg.dtype, part.shape());
      converted.floats() = part.floats();
      converted.roundToElementType();
      part = std::move(converted);
    }
    if (part.shape() != arg.shape || part.dtype() != arg.dtype)
      return nameOf(arg) + " has type " + describe(part.shape(), part.dtype()) +
             ", but the step expects " + describe(arg.shape, arg.dtype);
    if (!arg.aliasedResult)
      fixed[i] = part;
  }
  arguments = std::move(parts);
  return "";
}

std::vector<Tensor> StepBinding::next(std::vector<Tensor> &results) const {
  std::vector<Tensor> arguments = fixed;
  for (size_t i = 0; i < signature.arguments.size(); ++i)
    if (std::optional<size_t> r = signature.arguments[i].aliasedResult)
      arguments[i] = std::move(results[*r]);
  return arguments;
}

Tensor StepBinding::gather(const Tensor &part, DType dtype, const Shape &shape,
                           const TensorLayout &layout,
                           std::optional<int64_t> unpaddedRows) const {
  Tensor whole = part;
  if (comm && !layout.pipelineRanks.empty()) {
    // From the first pp coordinate that holds it, to every other.
    if (!signature.heldBy(layout, comm))
      whole = Tensor(dtype, shape);
    comm->broadcast(whole, {kPipelineAxisName}, layout.pipelineRanks.front());
  }
  if (comm) {
    // The splits undone in reverse order: the last axis's first.
    for (size_t d = 0; d < layout.dims.size(); ++d) {
      const std::vector<std::string> &axes = layout.dims[d];
      for (size_t k = axes.size(); k-- > 0;) {
        std::vector<std::string> group{axes[k]};
        whole = wholeFromChunks(comm->allGather(whole, group, d), d,
                                comm->groupSize(group),
                                k == 0 ? layout.blocksOf(d) : 1);
      }
    }
  }
  if (unpaddedRows && whole.rank() > layout.paddedDim)
    whole = withExtent(whole, layout.paddedDim, *unpaddedRows);
  return whole;
}

Tensor StepBinding::wholeArgument(size_t index, const Tensor &part) const {
  const StepArgument &arg = signature.arguments[index];
  return gather(part, arg.dtype, arg.shape, arg.layout, arg.unpaddedRows);
}

Tensor StepBinding::wholeResult(size_t index, const Tensor &part) const {
  const StepResult &result = signature.results[index];
  return gather(part, result.dtype, result.shape, result.layout,
                result.unpaddedRows);
}

Tensor StepBinding::wholeParameter(size_t index,
                                   const std::vector<Tensor> &arguments) const {
  std::optional<size_t> master = signature.stateArgument(
      StepStateKind::Master, signature.arguments[index].name);
  size_t from = master.value_or(index);
  return wholeArgument(from, arguments[from]);
}

} // namespace mlir::dtc
