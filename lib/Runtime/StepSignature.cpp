//===- StepSignature.cpp - a training step's ABI in plain C++ -------------===//

#include "dtc/Runtime/StepSignature.h"

#include <cstdio>
#include <set>
#include <sstream>

namespace mlir::dtc {

std::string checkStepABIVersion(std::optional<int64_t> found,
                                const std::string &what) {
  std::string expected = std::to_string(kStepABIVersion);
  if (!found)
    return what +
           " has no step ABI version (written by a dtc-compile older "
           "than step ABI version " +
           expected + "): recompile it with dtc-compile";
  if (*found == kStepABIVersion)
    return "";
  return what + " was compiled for step ABI version " + std::to_string(*found) +
         ", but this build reads version " + expected +
         ": recompile it with dtc-compile";
}

const char *stepStateKindName(StepStateKind kind) {
  switch (kind) {
  case StepStateKind::Step:
    return "step";
  case StepStateKind::ExpAvg:
    return "exp_avg";
  case StepStateKind::ExpAvgSq:
    return "exp_avg_sq";
  case StepStateKind::MomentumBuffer:
    return "momentum_buffer";
  case StepStateKind::Master:
    return "master";
  case StepStateKind::LossScale:
    return "loss_scale";
  case StepStateKind::GrowthTracker:
    return "growth_tracker";
  }
  return "?";
}

bool TensorLayout::isSplit() const {
  for (const std::vector<std::string> &axes : dims)
    if (!axes.empty())
      return true;
  return false;
}

int64_t TensorLayout::blocksOf(size_t dim) const {
  return dim < blocks.size() ? blocks[dim] : 1;
}

std::optional<size_t>
StepSignature::stateArgument(StepStateKind kind,
                             const std::string &parameter) const {
  for (size_t i = 0; i < arguments.size(); ++i) {
    const StepArgument &arg = arguments[i];
    if (arg.role == ArgumentRole::State && arg.stateKind == kind &&
        arg.parameter == parameter)
      return i;
  }
  return std::nullopt;
}

static bool perParameter(StepStateKind kind) {
  return kind == StepStateKind::ExpAvg || kind == StepStateKind::ExpAvgSq ||
         kind == StepStateKind::MomentumBuffer || kind == StepStateKind::Master;
}

static std::string describeLayoutError(const TensorLayout &layout, size_t rank,
                                       const std::string &what) {
  if (layout.dims.size() > rank)
    return what + " is laid out over " + std::to_string(layout.dims.size()) +
           " dimensions but has " + std::to_string(rank);
  if (!layout.blocks.empty() && layout.blocks.size() != layout.dims.size())
    return what + " has " + std::to_string(layout.blocks.size()) +
           " block counts for " + std::to_string(layout.dims.size()) +
           " dimensions";
  for (int64_t blocks : layout.blocks)
    if (blocks < 1)
      return what + " has a block count below 1";
  return "";
}

std::string StepSignature::check() const {
  if (std::string error =
          checkStepABIVersion(abiVersion, "the step '" + function + "'");
      !error.empty())
    return error;
  if (loss >= results.size())
    return "the loss is result " + std::to_string(loss) + " of " +
           std::to_string(results.size());
  if (microbatches < 1)
    return "the step runs " + std::to_string(microbatches) + " microbatches";
  if (mesh.axes.size() != mesh.sizes.size())
    return "the mesh has " + std::to_string(mesh.axes.size()) + " axes and " +
           std::to_string(mesh.sizes.size()) + " sizes";
  std::set<std::string> parameters;
  for (const StepArgument &arg : arguments)
    if (arg.role == ArgumentRole::Parameter &&
        !parameters.insert(arg.name).second)
      return "two arguments are the parameter '" + arg.name + "'";
  for (size_t i = 0; i < arguments.size(); ++i) {
    const StepArgument &arg = arguments[i];
    std::string what =
        "argument " + std::to_string(i) + " ('" + arg.name + "')";
    if (std::string error =
            describeLayoutError(arg.layout, arg.shape.size(), what);
        !error.empty())
      return error;
    for (const std::vector<std::string> &axes : arg.layout.dims)
      for (const std::string &axis : axes)
        if (mesh.axisIndex(axis) < 0)
          return what + " is split over '" + axis + "', no axis of the mesh";
    if (arg.role == ArgumentRole::State &&
        perParameter(arg.stateKind) != !arg.parameter.empty())
      return what + ": state '" + stepStateKindName(arg.stateKind) + "' " +
             (arg.parameter.empty() ? "belongs to a parameter, which it "
                                      "does not name"
                                    : "belongs to no parameter");
    if (!arg.parameter.empty() && !parameters.count(arg.parameter))
      return what + " is state of '" + arg.parameter +
             "', which is no parameter";
    if (!arg.aliasedResult)
      continue;
    size_t r = *arg.aliasedResult;
    if (r >= results.size())
      return what + " aliases result " + std::to_string(r) + " of " +
             std::to_string(results.size());
    const StepResult &result = results[r];
    if (result.updatedArgument != i)
      return what + " aliases result " + std::to_string(r) +
             ", which does not update it";
    if (result.dtype != arg.dtype || result.shape != arg.shape)
      return what + " (" + describe(arg.shape, arg.dtype) +
             ") aliases result " + std::to_string(r) + " of another type (" +
             describe(result.shape, result.dtype) + ")";
  }
  for (size_t r = 0; r < results.size(); ++r) {
    const StepResult &result = results[r];
    std::string what =
        "result " + std::to_string(r) + " ('" + result.name + "')";
    if (std::string error =
            describeLayoutError(result.layout, result.shape.size(), what);
        !error.empty())
      return error;
    if (result.updatedArgument &&
        (*result.updatedArgument >= arguments.size() ||
         arguments[*result.updatedArgument].aliasedResult != r))
      return what + " updates argument " +
             std::to_string(*result.updatedArgument) +
             ", which is not donated to it";
  }
  if (rng && (rng->counter >= arguments.size() ||
              arguments[rng->counter].role != ArgumentRole::State ||
              arguments[rng->counter].stateKind != StepStateKind::Step))
    return "the RNG counter, argument " + std::to_string(rng->counter) +
           ", is not the step state";
  return "";
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

namespace {

/// A minimal JSON writer: the runtime links no JSON library.
class JsonWriter {
public:
  std::string take() { return out.str(); }

  void string(const std::string &value) {
    prefix();
    quoted(value);
  }
  void number(int64_t value) {
    prefix();
    out << value;
  }
  void boolean(bool value) {
    prefix();
    out << (value ? "true" : "false");
  }
  void beginObject() { open('{'); }
  void endObject() { close('}'); }
  void beginArray() { open('['); }
  void endArray() { close(']'); }
  /// The next object member's key; its value follows.
  void key(const std::string &name) {
    prefix();
    quoted(name);
    out << ": ";
    afterKey = true;
  }

private:
  /// The comma before every member and element but the first.
  void prefix() {
    if (afterKey) {
      afterKey = false;
      return;
    }
    if (first.empty())
      return;
    if (!first.back())
      out << ", ";
    first.back() = false;
  }
  void open(char c) {
    prefix();
    out << c;
    first.push_back(true);
  }
  void close(char c) {
    first.pop_back();
    out << c;
  }
  void quoted(const std::string &value) {
    out << '"';
    for (unsigned char c : value) {
      if (c == '"' || c == '\\') {
        out << '\\' << c;
      } else if (c < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
        out << escaped;
      } else {
        out << c;
      }
    }
    out << '"';
  }

  std::ostringstream out;
  std::vector<bool> first;
  bool afterKey = false;
};

void writeLayout(JsonWriter &json, const TensorLayout &layout) {
  json.beginObject();
  json.key("dims");
  json.beginArray();
  for (const std::vector<std::string> &axes : layout.dims) {
    json.beginArray();
    for (const std::string &axis : axes) {
      json.string(axis);
    }
    json.endArray();
  }
  json.endArray();
  if (!layout.blocks.empty()) {
    json.key("blocks");
    json.beginArray();
    for (int64_t blocks : layout.blocks) {
      json.number(blocks);
    }
    json.endArray();
  }
  json.endObject();
}

void writeTensor(JsonWriter &json, DType dtype, const Shape &shape,
                 const TensorLayout &layout,
                 std::optional<int64_t> unpaddedRows) {
  json.key("dtype");
  json.string(dtypeName(dtype));
  json.key("shape");
  json.beginArray();
  for (int64_t size : shape) {
    json.number(size);
  }
  json.endArray();
  if (layout.isSplit()) {
    json.key("sharding");
    writeLayout(json, layout);
  }
  if (unpaddedRows) {
    json.key("unpadded_rows");
    json.number(*unpaddedRows);
  }
}

const char *roleName(ArgumentRole role) {
  switch (role) {
  case ArgumentRole::Input:
    return "input";
  case ArgumentRole::Parameter:
    return "parameter";
  case ArgumentRole::State:
    return "state";
  }
  return "?";
}

const char *roleName(ResultRole role) {
  switch (role) {
  case ResultRole::Loss:
    return "loss";
  case ResultRole::Gradient:
    return "gradient";
  case ResultRole::Update:
    return "update";
  case ResultRole::Output:
    return "output";
  }
  return "?";
}

} // namespace

std::string StepSignature::toJSON() const {
  JsonWriter json;
  json.beginObject();
  json.key("abi");
  json.number(abiVersion);
  json.key("function");
  json.string(function);
  json.key("loss");
  json.number(static_cast<int64_t>(loss));
  json.key("microbatches");
  json.number(microbatches);
  json.key("mesh");
  json.beginObject();
  for (size_t i = 0; i < mesh.axes.size(); ++i) {
    json.key(mesh.axes[i]);
    json.number(mesh.sizes[i]);
  }
  json.endObject();
  if (rng) {
    json.key("rng");
    json.beginObject();
    json.key("seed");
    json.number(rng->seed);
    json.key("counter");
    json.number(static_cast<int64_t>(rng->counter));
    json.endObject();
  }
  if (growthInterval) {
    json.key("loss_scaling");
    json.beginObject();
    json.key("growth_interval");
    json.number(*growthInterval);
    json.endObject();
  }
  if (stage) {
    json.key("stage");
    json.number(*stage);
  }
  json.key("arguments");
  json.beginArray();
  for (const StepArgument &arg : arguments) {
    json.beginObject();
    json.key("role");
    json.string(roleName(arg.role));
    if (arg.role == ArgumentRole::State) {
      json.key("kind");
      json.string(stepStateKindName(arg.stateKind));
      if (!arg.parameter.empty()) {
        json.key("parameter");
        json.string(arg.parameter);
      }
    } else {
      json.key("name");
      json.string(arg.name);
    }
    if (arg.role == ArgumentRole::Parameter) {
      json.key("trainable");
      json.boolean(arg.trainable);
    }
    writeTensor(json, arg.dtype, arg.shape, arg.layout, arg.unpaddedRows);
    if (arg.aliasedResult) {
      json.key("aliasing_output");
      json.number(static_cast<int64_t>(*arg.aliasedResult));
    }
    json.endObject();
  }
  json.endArray();
  json.key("results");
  json.beginArray();
  for (const StepResult &result : results) {
    json.beginObject();
    json.key("role");
    json.string(roleName(result.role));
    if (result.role == ResultRole::Gradient) {
      json.key("parameter");
      json.string(result.name);
    } else if (result.role == ResultRole::Output) {
      json.key("name");
      json.string(result.name);
    }
    writeTensor(json, result.dtype, result.shape, result.layout,
                result.unpaddedRows);
    if (result.updatedArgument) {
      json.key("updates");
      json.number(static_cast<int64_t>(*result.updatedArgument));
    }
    json.endObject();
  }
  json.endArray();
  json.endObject();
  return json.take();
}

} // namespace mlir::dtc
