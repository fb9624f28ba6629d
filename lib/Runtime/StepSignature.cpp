//===- StepSignature.cpp - a training step's ABI in plain C++ -------------===//

#include "dtc/Runtime/StepSignature.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
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

bool TensorLayout::heldAt(int64_t coordinate) const {
  return pipelineRanks.empty() ||
         std::find(pipelineRanks.begin(), pipelineRanks.end(), coordinate) !=
             pipelineRanks.end();
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

std::optional<size_t>
StepSignature::outputResult(const std::string &name) const {
  for (size_t r = 0; r < results.size(); ++r)
    if (results[r].role == ResultRole::Output && results[r].name == name)
      return r;
  return std::nullopt;
}

bool StepSignature::heldBy(const TensorLayout &layout, int64_t rank) const {
  int64_t axis = mesh.axisIndex(kPipelineAxisName);
  return layout.pipelineRanks.empty() || axis < 0 ||
         layout.heldAt(mesh.coordinates(rank)[axis]);
}

bool StepSignature::heldBy(const TensorLayout &layout,
                           const Communicator *comm) const {
  return !comm || heldBy(layout, comm->rank());
}

std::optional<size_t> StepSignature::tokenInput() const {
  for (size_t i = 0; i < arguments.size(); ++i)
    if (arguments[i].role == ArgumentRole::Input &&
        !isFloatDType(arguments[i].dtype))
      return i;
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
  // (Negative: mirrored blocks, as chunkOf cuts them.)
  for (int64_t blocks : layout.blocks)
    if (blocks == 0 || blocks == -1)
      return what + " has a block count of " + std::to_string(blocks);
  for (int64_t coordinate : layout.pipelineRanks)
    if (coordinate < 0)
      return what + " is held at pp coordinate " + std::to_string(coordinate);
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
                 std::optional<int64_t> unpaddedRows, const MeshShape &mesh) {
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
    if (layout.paddedDim != 0) {
      json.key("padded_dim");
      json.number(layout.paddedDim);
    }
  }
  if (!layout.pipelineRanks.empty()) {
    json.key("pp_ranks");
    json.beginArray();
    for (int64_t coordinate : layout.pipelineRanks)
      json.number(coordinate);
    json.endArray();
  }
  // The whole tensor's shape, padding stripped (for readers that do not
  // undo the splits themselves).
  if (layout.isSplit()) {
    json.key("whole_shape");
    json.beginArray();
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t size = shape[d];
      if (d < layout.dims.size())
        for (const std::string &axis : layout.dims[d])
          if (int64_t index = mesh.axisIndex(axis); index >= 0)
            size *= mesh.sizes[index];
      json.number(static_cast<int64_t>(d) == layout.paddedDim && unpaddedRows
                      ? *unpaddedRows
                      : size);
    }
    json.endArray();
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
    writeTensor(json, arg.dtype, arg.shape, arg.layout, arg.unpaddedRows, mesh);
    if (arg.classes) {
      json.key("classes");
      json.number(*arg.classes);
    }
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
                result.unpaddedRows, mesh);
    if (result.updatedArgument) {
      json.key("updates");
      json.number(static_cast<int64_t>(*result.updatedArgument));
    }
    json.endObject();
  }
  json.endArray();
  json.endObject();
  return json.take();

} // namespace mlir::dtc

//===----------------------------------------------------------------------===//
// The text form
//===----------------------------------------------------------------------===//

namespace {

/// Names may hold any character: spaces, '=', '%' and control characters
/// are written as %XX.
std::string escape(const std::string &text) {
  std::string out;
  for (unsigned char c : text) {
    if (c <= ' ' || c == '%' || c == '=' || c == 127) {
      char hex[4];
      std::snprintf(hex, sizeof(hex), "%%%02X", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out.empty() ? "%" : out; // "%" alone: the empty string
}

std::string unescape(const std::string &text) {
  if (text == "%")
    return "";
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      out += static_cast<char>(
          std::strtol(text.substr(i + 1, 2).c_str(), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string joinInts(const std::vector<int64_t> &values, char separator) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? std::string(1, separator) : "") + std::to_string(values[i]);
  return out.empty() ? "-" : out;
}

std::vector<std::string> splitOn(const std::string &text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string::npos)
      return parts;
    start = end + 1;
  }
}

/// A decimal integer; 0 for anything else (the caller checks the
/// description as a whole afterwards).
int64_t toInt(const std::string &text) {
  return std::strtoll(text.c_str(), nullptr, 10);
}

std::vector<int64_t> parseInts(const std::string &text, char separator) {
  std::vector<int64_t> values;
  if (text == "-")
    return values;
  for (const std::string &part : splitOn(text, separator))
    values.push_back(toInt(part));
  return values;
}

/// `dtype=f32 shape=4x8 layout=dp+tp/- blocks=1,2 unpadded=3 padded_dim=1
/// pp=0,3`.
std::string tensorText(DType dtype, const Shape &shape,
                       const TensorLayout &layout,
                       std::optional<int64_t> unpaddedRows) {
  std::string out = std::string(" dtype=") + dtypeName(dtype) +
                    " shape=" + joinInts(shape, 'x');
  if (!layout.dims.empty()) {
    out += " layout=";
    for (size_t d = 0; d < layout.dims.size(); ++d) {
      std::string axes;
      for (const std::string &axis : layout.dims[d])
        axes += (axes.empty() ? "" : "+") + escape(axis);
      out += (d ? "/" : "") + (axes.empty() ? std::string("-") : axes);
    }
  }
  if (!layout.blocks.empty())
    out += " blocks=" + joinInts(layout.blocks, ',');
  if (unpaddedRows)
    out += " unpadded=" + std::to_string(*unpaddedRows);
  if (unpaddedRows && layout.paddedDim != 0)
    out += " padded_dim=" + std::to_string(layout.paddedDim);
  if (!layout.pipelineRanks.empty())
    out += " pp=" + joinInts(layout.pipelineRanks, ',');
  return out;
}

/// Reads the tensor fields of a `key=value` map.
std::string readTensor(std::map<std::string, std::string> &fields, DType &dtype,
                       Shape &shape, TensorLayout &layout,
                       std::optional<int64_t> &unpaddedRows) {
  std::optional<DType> parsed = dtypeNamed(fields["dtype"]);
  if (!parsed)
    return "unknown element type '" + fields["dtype"] + "'";
  dtype = *parsed;
  shape = parseInts(fields["shape"], 'x');
  if (fields.count("layout"))
    for (const std::string &dim : splitOn(fields["layout"], '/')) {
      layout.dims.emplace_back();
      if (dim != "-")
        for (const std::string &axis : splitOn(dim, '+'))
          layout.dims.back().push_back(unescape(axis));
    }
  if (fields.count("blocks"))
    layout.blocks = parseInts(fields["blocks"], ',');
  if (fields.count("unpadded"))
    unpaddedRows = toInt(fields["unpadded"]);
  if (fields.count("padded_dim"))
    layout.paddedDim = toInt(fields["padded_dim"]);
  if (fields.count("pp"))
    layout.pipelineRanks = parseInts(fields["pp"], ',');
  return "";
}

} // namespace

std::string StepSignature::toText() const {
  std::string out = "abi " + std::to_string(abiVersion) + "\nfunction " +
                    escape(function) + "\nloss " + std::to_string(loss) +
                    "\nmicrobatches " + std::to_string(microbatches) + "\nmesh";
  for (size_t i = 0; i < mesh.axes.size(); ++i)
    out += " " + escape(mesh.axes[i]) + "=" + std::to_string(mesh.sizes[i]);
  out += "\n";
  if (rng)
    out += "rng " + std::to_string(rng->seed) + " " +
           std::to_string(rng->counter) + "\n";
  if (growthInterval)
    out += "growth_interval " + std::to_string(*growthInterval) + "\n";
  if (stage)
    out += "stage " + std::to_string(*stage) + "\n";
  for (const StepArgument &arg : arguments) {
    out += std::string("argument role=") + roleName(arg.role) +
           " name=" + escape(arg.name);
    if (arg.role == ArgumentRole::State)
      out += std::string(" kind=") + stepStateKindName(arg.stateKind) +
             " parameter=" + escape(arg.parameter);
    if (arg.role == ArgumentRole::Parameter)
      out += std::string(" trainable=") + (arg.trainable ? "1" : "0");
    out += tensorText(arg.dtype, arg.shape, arg.layout, arg.unpaddedRows);
    if (arg.classes)
      out += " classes=" + std::to_string(*arg.classes);
    if (arg.aliasedResult)
      out += " alias=" + std::to_string(*arg.aliasedResult);
    out += "\n";
  }
  for (const StepResult &result : results) {
    out += std::string("result role=") + roleName(result.role) +
           " name=" + escape(result.name) +
           tensorText(result.dtype, result.shape, result.layout,
                      result.unpaddedRows);
    if (result.updatedArgument)
      out += " updated=" + std::to_string(*result.updatedArgument);
    out += "\n";
  }
  return out;
}

std::string StepSignature::fromText(const std::string &text,
                                    StepSignature &out) {
  out = StepSignature();
  size_t lineNumber = 0;
  for (const std::string &line : splitOn(text, '\n')) {
    ++lineNumber;
    if (line.empty())
      continue;
    std::vector<std::string> tokens = splitOn(line, ' ');
    const std::string &key = tokens[0];
    std::map<std::string, std::string> fields;
    for (size_t i = 1; i < tokens.size(); ++i)
      if (size_t eq = tokens[i].find('='); eq != std::string::npos)
        fields[tokens[i].substr(0, eq)] = tokens[i].substr(eq + 1);
    auto bad = [&](const std::string &why) {
      return "line " + std::to_string(lineNumber) + " of the step's " +
             "description: " + why;
    };
    auto number = [&](size_t i) -> int64_t {
      return i < tokens.size() ? toInt(tokens[i]) : 0;
    };
    if (key == "abi") {
      out.abiVersion = number(1);
    } else if (key == "function") {
      out.function = tokens.size() > 1 ? unescape(tokens[1]) : "";
    } else if (key == "loss") {
      out.loss = number(1);
    } else if (key == "microbatches") {
      out.microbatches = number(1);
    } else if (key == "mesh") {
      for (size_t i = 1; i < tokens.size(); ++i) {
        size_t eq = tokens[i].find('=');
        if (eq == std::string::npos)
          return bad("a mesh axis without a size");
        out.mesh.axes.push_back(unescape(tokens[i].substr(0, eq)));
        out.mesh.sizes.push_back(toInt(tokens[i].substr(eq + 1)));
      }
    } else if (key == "rng") {
      out.rng = Rng{number(1), static_cast<size_t>(number(2))};
    } else if (key == "growth_interval") {
      out.growthInterval = number(1);
    } else if (key == "stage") {
      out.stage = number(1);
    } else if (key == "argument") {
      StepArgument arg;
      const std::string &role = fields["role"];
      if (role == "input")
        arg.role = ArgumentRole::Input;
      else if (role == "parameter")
        arg.role = ArgumentRole::Parameter;
      else if (role == "state")
        arg.role = ArgumentRole::State;
      else
        return bad("unknown argument role '" + role + "'");
      arg.name = unescape(fields["name"]);
      if (arg.role == ArgumentRole::State) {
        bool known = false;
        for (int k = 0; k <= static_cast<int>(StepStateKind::GrowthTracker);
             ++k)
          if (fields["kind"] ==
              stepStateKindName(static_cast<StepStateKind>(k))) {
            arg.stateKind = static_cast<StepStateKind>(k);
            known = true;
          }
        if (!known)
          return bad("unknown state kind '" + fields["kind"] + "'");
        arg.parameter = unescape(fields["parameter"]);
      }
      arg.trainable = fields["trainable"] != "0";
      if (std::string error = readTensor(fields, arg.dtype, arg.shape,
                                         arg.layout, arg.unpaddedRows);
          !error.empty())
        return bad(error);
      if (fields.count("alias"))
        arg.aliasedResult = toInt(fields["alias"]);
      if (fields.count("classes"))
        arg.classes = toInt(fields["classes"]);
      out.arguments.push_back(std::move(arg));
    } else if (key == "result") {
      StepResult result;
      const std::string &role = fields["role"];
      if (role == "loss")
        result.role = ResultRole::Loss;
      else if (role == "gradient")
        result.role = ResultRole::Gradient;
      else if (role == "update")
        result.role = ResultRole::Update;
      else if (role == "output")
        result.role = ResultRole::Output;
      else
        return bad("unknown result role '" + role + "'");
      result.name = unescape(fields["name"]);
      if (std::string error = readTensor(fields, result.dtype, result.shape,
                                         result.layout, result.unpaddedRows);
          !error.empty())
        return bad(error);
      if (fields.count("updated"))
        result.updatedArgument = toInt(fields["updated"]);
      out.results.push_back(std::move(result));
    } else {
      return bad("unknown record '" + key + "'");
    }
  }
  return out.check();
}

} // namespace mlir::dtc
