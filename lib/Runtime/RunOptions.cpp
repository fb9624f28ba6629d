//===- RunOptions.cpp - the options of a training run ---------------------===//

#include "dtc/Runtime/RunOptions.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

using namespace mlir::dtc;

const char *const mlir::dtc::kRunOptionsHelp =
    "Training options (OUT written by dtc-compile):\n"
    "  --data FILE        a flat token file (.npy, or raw as --data-type\n"
    "                     says): each step's ids and labels are windows of\n"
    "                     the compiled sequence length and the next token,\n"
    "                     in an order drawn from --data-seed\n"
    "  --data-type T      how a raw --data file stores tokens: uint16\n"
    "                     (nanoGPT's train.bin; the default) or int32\n"
    "  --data-seed N      seed of the windows' order (default 0; a resumed\n"
    "                     run keeps its checkpoint's)\n"
    "  --batch DIR        inputs and labels as .npy named after the inputs,\n"
    "                     the same every step (instead of --data)\n"
    "  --steps K          train up to step K (default 1; a resumed run\n"
    "                     counts from the start)\n"
    "  --eval-data FILE   evaluate on a token file (of --data-type): the\n"
    "                     mean loss (and perplexity) over its first global\n"
    "                     batches of windows, in order, after the last step;\n"
    "                     the step runs with its update discarded\n"
    "  --eval-every N     also every N steps (with --eval-data)\n"
    "  --eval-batches K   the global batches it reads (default 4)\n"
    "  --save DIR         write checkpoints into DIR (docs/Checkpoint.md):\n"
    "                     after the last step, every --save-every N steps,\n"
    "                     and on SIGTERM\n"
    "  --save-every N     a checkpoint every N steps (with --save)\n"
    "  --resume DIR       continue from the checkpoint in DIR (its latest,\n"
    "                     or a step directory), on this mesh and layout or\n"
    "                     another, with the same optimizer\n"
    "  --export-checkpoint DIR\n"
    "                     after the last step, write the trained parameters\n"
    "                     as whole tensors, DIR/<parameter name>.npy (with\n"
    "                     --resume and no steps left: the checkpoint's)\n"
    "  --export-onnx FILE after the last step, write the compiled ONNX model\n"
    "                     with its initializers replaced by the trained\n"
    "                     parameters\n"
    "  --init DIR         initial parameters as <parameter>.npy (default:\n"
    "                     the model's initializers)\n"
    "  --init-random SEED parameters that neither --init nor the compiled\n"
    "                     step give (dtc-compile --shapes-only) drawn from\n"
    "                     SEED: matrices uniform with std 0.02, vectors\n"
    "                     named *bias zero, other vectors (norm scales) one\n"
    "  --dump DIR         write loss.npy, grad/<param>.npy (last step) and\n"
    "                     param/<param>.npy (after the last step)\n"
    "  --metrics FILE     one JSON line per step: loss, learning rate,\n"
    "                     gradient norm, loss scale, step time, tokens/s,\n"
    "                     FLOP/s, each rank's peak memory and (compiled\n"
    "                     programs on a mesh) its exposed communication\n"
    "  --peak-tflops T    one rank's peak TFLOP/s: --metrics then holds the\n"
    "                     model FLOPs utilization (MFU)\n"
    "  --log-every N      a progress line every N steps (default: about ten\n"
    "                     lines)\n"
    "  --collective-timeout S\n"
    "                     a rank waiting longer than S seconds in one\n"
    "                     collective ends the job, naming the collective and\n"
    "                     the ranks that never arrived (default 300)\n";

namespace {

/// Parses a whole decimal integer.
bool readInteger(const std::string &text, int64_t &out) {
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end || errno)
    return false;
  out = value;
  return true;
}

} // namespace

std::string mlir::dtc::parseRunOptions(const std::vector<std::string> &args,
                                       RunOptions &options,
                                       std::vector<std::string> &rest) {
  // Each option's reader: takes its value, or says what is wrong with it.
  using Reader = std::function<std::string(const std::string &)>;
  auto text = [](std::string &to) -> Reader {
    return [&to](const std::string &value) {
      to = value;
      return std::string();
    };
  };
  auto atLeast = [](int64_t &to, int64_t low) -> Reader {
    return [&to, low](const std::string &value) {
      if (!readInteger(value, to) || to < low)
        return "must be an integer of at least " + std::to_string(low);
      return std::string();
    };
  };
  auto positive = [](double &to, const char *what) -> Reader {
    return [&to, what](const std::string &value) {
      char *end = nullptr;
      double number = std::strtod(value.c_str(), &end);
      if (value.empty() || *end || !std::isfinite(number) || number <= 0)
        return "must be " + std::string(what) + " above 0";
      to = number;
      return std::string();
    };
  };
  auto seedOf = [](std::optional<uint64_t> &to) -> Reader {
    return [&to](const std::string &value) {
      int64_t seed = 0;
      if (!readInteger(value, seed) || seed < 0)
        return std::string("must be a non-negative integer");
      to = static_cast<uint64_t>(seed);
      return std::string();
    };
  };
  std::set<std::string> given;
  std::map<std::string, Reader> readers = {
      {"batch", text(options.batchDir)},
      {"data", text(options.dataPath)},
      {"data-type",
       [&](const std::string &value) {
         options.dataType = value;
         return value == "uint16" || value == "int32"
                    ? std::string()
                    : std::string("must be uint16 or int32");
       }},
      {"data-seed", seedOf(options.dataSeed)},
      {"eval-data", text(options.evalDataPath)},
      {"eval-every", atLeast(options.evalEvery, 1)},
      {"eval-batches", atLeast(options.evalBatches, 1)},
      {"save", text(options.saveDir)},
      {"save-every", atLeast(options.saveEvery, 1)},
      {"resume", text(options.resumeDir)},
      {"export-checkpoint", text(options.exportDir)},
      {"export-onnx", text(options.exportONNXPath)},
      {"init", text(options.initDir)},
      {"init-random", seedOf(options.initRandom)},
      {"dump", text(options.dumpDir)},
      {"metrics", text(options.metricsPath)},
      {"steps", atLeast(options.steps, 1)},
      {"log-every", atLeast(options.logEvery, 1)},
      {"peak-tflops", positive(options.peakTflops, "a number")},
      {"collective-timeout",
       positive(options.collectiveTimeout, "a number of seconds")},
  };
  for (size_t i = 0; i < args.size(); ++i) {
    // --name value, --name=value, and (as LLVM's parser takes) -name.
    const std::string &arg = args[i];
    size_t dashes = arg.rfind("--", 0) == 0 ? 2 : arg.rfind("-", 0) == 0;
    size_t eq = arg.find('=');
    std::string name = arg.substr(
        dashes, eq == std::string::npos ? std::string::npos : eq - dashes);
    auto reader = readers.find(name);
    if (!dashes || reader == readers.end()) {
      rest.push_back(arg);
      continue;
    }
    std::string value;
    if (eq != std::string::npos)
      value = arg.substr(eq + 1);
    else if (i + 1 < args.size())
      value = args[++i];
    else
      return "--" + name + " needs a value";
    if (std::string why = reader->second(value); !why.empty())
      return "--" + name + " is '" + value + "': it " + why;
    given.insert(name);
  }
  if (options.saveEvery > 0 && options.saveDir.empty())
    return "--save-every needs --save DIR";
  for (const char *name : {"eval-every", "eval-batches"})
    if (given.count(name) && options.evalDataPath.empty())
      return "--" + std::string(name) + " needs --eval-data FILE";
  if (given.count("init") && !options.resumeDir.empty())
    return "--init and --resume both give the starting parameters: a "
           "resumed run starts from its checkpoint";
  auto isNpy = [](const std::string &path) {
    return path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
  };
  if (given.count("data-type") &&
      (options.dataPath.empty() || isNpy(options.dataPath)) &&
      (options.evalDataPath.empty() || isNpy(options.evalDataPath)))
    return "--data-type is for raw token files (--data, --eval-data); a "
           ".npy file says its own type";
  return "";
}

/// Calls `visit` on what JSON `text` holds directly in the object or array
/// that opens at `open`: each string (its opening quote) and each object or
/// array (its opening bracket), not what those hold.
static void forEachMember(const std::string &text, size_t open,
                          const std::function<void(size_t)> &visit) {
  int depth = 0;
  for (size_t at = open; at < text.size(); ++at) {
    char c = text[at];
    if (c == '"') {
      size_t end = at + 1;
      while (end < text.size() && text[end] != '"')
        end += text[end] == '\\' ? 2 : 1;
      if (depth == 1)
        visit(at);
      at = end;
    } else if (c == '{' || c == '[') {
      if (depth++ == 1)
        visit(at);
    } else if ((c == '}' || c == ']') && --depth == 0) {
      break;
    }
  }
}

/// Where `"key"` is a member of the JSON object that opens at `open` (its
/// own, not a nested object's), or npos.
static size_t findMember(const std::string &text, size_t open,
                         const std::string &key) {
  std::string quoted = "\"" + key + "\"";
  size_t found = std::string::npos;
  forEachMember(text, open, [&](size_t at) {
    if (found == std::string::npos &&
        text.compare(at, quoted.size(), quoted) == 0)
      found = at;
  });
  return found;
}

void mlir::dtc::readCompiledDir(const std::string &out, RunOptions &options) {
  // The JSON files as dtc-compile writes them (no JSON parser in the
  // runtime): manifest.json's "model" string; in report.json the number
  // after "activation_peak", and a rank's FLOPs.
  auto read = [](const std::string &path) {
    std::ifstream file(path);
    std::stringstream buffer;
    buffer << file.rdbuf();
    return buffer.str();
  };
  std::string manifest = read(out + "/manifest.json");
  if (size_t at = manifest.find("\"model\": \""); at != std::string::npos) {
    size_t start = at + 10, end = manifest.find('"', start);
    if (end != std::string::npos)
      options.modelPath = manifest.substr(start, end - start);
  }
  std::string text = read(out + "/report.json");
  auto numberAfter = [&](size_t at) {
    size_t colon = text.find(':', at);
    return colon == std::string::npos ? 0.0
                                      : std::strtod(&text[colon + 1], nullptr);
  };
  if (size_t at = text.find("\"activation_peak\""); at != std::string::npos)
    options.plannedPeak = static_cast<int64_t>(numberAfter(at));
  if (size_t at = text.find("\"activation_peak_per_pp_rank\"");
      at != std::string::npos) {
    // "[a, b, ...]"
    size_t open = text.find('[', at), close = text.find(']', open);
    for (size_t next = open; next != std::string::npos && next < close;
         next = text.find(',', next + 1))
      options.plannedPeakPerPipelineRank.push_back(
          static_cast<int64_t>(std::strtod(&text[next + 1], nullptr)));
  }
  // A rank's FLOPs: with pp, the mean of the pp ranks' (pp_ranks' "flops");
  // else the "total" of "flops_per_step" (its own, not a phase's).
  size_t root = text.find('{');
  if (size_t ranks = findMember(text, root, "pp_ranks");
      ranks != std::string::npos) {
    int64_t count = 0;
    forEachMember(text, text.find('[', ranks), [&](size_t rank) {
      if (text[rank] != '{')
        return;
      ++count;
      if (size_t at = findMember(text, rank, "flops"); at != std::string::npos)
        options.flopsPerStep += numberAfter(at);
    });
    options.flopsPerStep /= std::max<int64_t>(count, 1);
  } else if (size_t flops = findMember(text, root, "flops_per_step");
             flops != std::string::npos) {
    if (size_t at = findMember(text, text.find('{', flops), "total");
        at != std::string::npos)
      options.flopsPerStep = numberAfter(at);
  }
}
