//===- CompiledProgram.cpp - reading a compiled per-rank program ----------===//

#include "dtc/Runtime/CompiledProgram.h"

#include "dtc/Runtime/TensorIO.h"

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

using namespace mlir::dtc;

namespace {

std::vector<std::string> splitOn(const std::string &text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, separator))
    parts.push_back(part);
  return parts;
}

/// "a3", "r0", "m128", each optionally ":f32:4x8" ("-" for a scalar).
bool parseBuffer(const std::string &text, BufferRef &out) {
  std::vector<std::string> parts = splitOn(text, ':');
  if (parts.empty() || parts[0].size() < 2)
    return false;
  switch (parts[0][0]) {
  case 'a':
    out.space = BufferRef::Space::Argument;
    break;
  case 'r':
    out.space = BufferRef::Space::Result;
    break;
  case 'm':
    out.space = BufferRef::Space::Arena;
    break;
  default:
    return false;
  }
  char *end = nullptr;
  out.index = std::strtoll(parts[0].c_str() + 1, &end, 10);
  if (*end || out.index < 0)
    return false;
  if (parts.size() == 1)
    return true;
  std::optional<DType> dtype =
      parts.size() == 3 ? dtypeNamed(parts[1]) : std::nullopt;
  if (!dtype)
    return false;
  out.dtype = *dtype;
  if (parts[2] != "-")
    for (const std::string &size : splitOn(parts[2], 'x'))
      out.shape.push_back(std::strtoll(size.c_str(), nullptr, 10));
  return true;
}

/// For each matrix of an output batch of shape `batch`, the index of the
/// matrix of an operand of batch shape `own` it reads (numpy broadcasting).
std::vector<int64_t> batchIndexes(const Shape &batch, const Shape &own) {
  int64_t total = 1;
  for (int64_t size : batch)
    total *= size;
  std::vector<int64_t> indexes;
  for (int64_t b = 0; b < total; ++b) {
    int64_t rest = b, index = 0, stride = 1;
    for (int64_t d = static_cast<int64_t>(batch.size()) - 1; d >= 0; --d) {
      int64_t at = rest % batch[d];
      rest /= batch[d];
      int64_t od = d - static_cast<int64_t>(batch.size() - own.size());
      if (od >= 0) {
        if (own[od] != 1)
          index += at * stride;
        stride *= own[od];
      }
    }
    indexes.push_back(index);
  }
  return indexes;
}

/// Fills `thunk.gemm` from its operands; false when they are no matrices.
bool planGemm(Thunk &thunk) {
  const Shape &lhs = thunk.buffers[0].shape, &rhs = thunk.buffers[1].shape,
              &out = thunk.buffers[2].shape;
  if (out.size() < 2 || lhs.size() < 2 || rhs.size() < 2)
    return false;
  Thunk::Gemm &g = thunk.gemm;
  g.ta = *thunk.field("ta") == "1";
  g.tb = *thunk.field("tb") == "1";
  g.m = out[out.size() - 2];
  g.n = out.back();
  g.k = g.ta ? lhs[lhs.size() - 2] : lhs.back();
  Shape batch(out.begin(), out.end() - 2);
  g.lhsAt = batchIndexes(batch, Shape(lhs.begin(), lhs.end() - 2));
  g.rhsAt = batchIndexes(batch, Shape(rhs.begin(), rhs.end() - 2));
  // A batch of untransposed lhs matrices, stored one after another, times
  // one rhs matrix (a Linear over [batch, tokens, in]) is one product of
  // their stacked rows: one larger GEMM instead of one per matrix.
  bool stacked = !g.ta && g.lhsAt.size() > 1;
  for (size_t i = 0; stacked && i < g.lhsAt.size(); ++i)
    stacked = g.lhsAt[i] == static_cast<int64_t>(i) && g.rhsAt[i] == 0;
  if (stacked) {
    g.m *= static_cast<int64_t>(g.lhsAt.size());
    g.lhsAt = g.rhsAt = {0};
  }
  return true;
}

/// Reads a collective's fields into `thunk.collective` (its send_recv axis
/// on `mesh`); "" or what is wrong.
std::string parseCollective(Thunk &thunk, const MeshShape &mesh) {
  static const std::map<std::string, Thunk::Collective::Kind> kinds = {
      {"all_reduce", Thunk::Collective::AllReduce},
      {"all_gather", Thunk::Collective::AllGather},
      {"reduce_scatter", Thunk::Collective::ReduceScatter},
      {"broadcast", Thunk::Collective::Broadcast},
      {"all_to_all", Thunk::Collective::AllToAll},
      {"shard", Thunk::Collective::Shard},
      {"send_recv", Thunk::Collective::SendRecv}};
  auto kind = kinds.find(thunk.kind);
  if (kind == kinds.end())
    return "an unknown thunk '" + thunk.kind + "'";
  Thunk::Collective &c = thunk.collective;
  c.kind = kind->second;
  bool ok = true;
  auto number = [&](const char *key, int64_t &out) {
    const std::string *text = thunk.field(key);
    char *end = nullptr;
    if (text)
      out = std::strtoll(text->c_str(), &end, 10);
    ok &= text && !text->empty() && !*end;
  };
  switch (c.kind) {
  case Thunk::Collective::AllReduce: {
    const std::string *reduce = thunk.field("kind");
    ok = reduce && (*reduce == "sum" || *reduce == "max" || *reduce == "min");
    if (ok)
      c.reduce = *reduce == "max"   ? ReduceKind::Max
                 : *reduce == "min" ? ReduceKind::Min
                                    : ReduceKind::Sum;
    if (thunk.field("async"))
      number("async", c.request);
    break;
  }
  case Thunk::Collective::AllGather:
  case Thunk::Collective::ReduceScatter:
    number("dim", c.dim);
    if (thunk.field("async"))
      number("async", c.request);
    break;
  case Thunk::Collective::Broadcast:
    number("root", c.root);
    if (const std::string *receivers = thunk.field("receivers")) {
      std::stringstream list(*receivers);
      for (std::string item; ok && std::getline(list, item, ',');) {
        char *end = nullptr;
        c.receivers.push_back(std::strtoll(item.c_str(), &end, 10));
        ok = !item.empty() && !*end && c.receivers.back() >= 0;
      }
      ok &= !c.receivers.empty() && thunk.axes.size() == 1;
    }
    if (thunk.field("async"))
      number("async", c.request);
    break;
  case Thunk::Collective::AllToAll:
    number("split", c.dim);
    number("concat", c.concatDim);
    if (thunk.field("rows"))
      number("rows", c.rowsDim);
    break;
  case Thunk::Collective::Shard:
    number("dim", c.dim);
    number("blocks", c.blocks);
    break;
  case Thunk::Collective::SendRecv: {
    const std::string *axis = thunk.field("axis");
    c.axis = axis ? mesh.axisIndex(*axis) : -1;
    if (c.axis < 0)
      return "a send_recv along no axis of the program's mesh";
    number("shift", c.shift);
    int64_t size = mesh.sizes[c.axis];
    c.shift = ((c.shift % size) + size) % size;
    if (thunk.field("async"))
      number("async", c.request);
    break;
  }
  }
  if (!ok || c.blocks < 1 || c.request < -1 || c.rowsDim < -1)
    return "a '" + thunk.kind + "' thunk with the wrong fields";
  // Dimensions within the operand's rank; a shard's blocks dividing it.
  int64_t rank = static_cast<int64_t>(thunk.buffers[0].shape.size());
  if (c.dim < 0 || c.concatDim < 0 ||
      (c.dim >= rank && c.kind != Thunk::Collective::AllReduce &&
       c.kind != Thunk::Collective::Broadcast &&
       c.kind != Thunk::Collective::SendRecv) ||
      (c.concatDim > 0 && c.concatDim >= rank) || c.rowsDim >= rank)
    return "a '" + thunk.kind + "' thunk along a dimension its operand lacks";
  return "";
}

const std::set<std::string> kSignatureRecords = {
    "abi", "function",        "loss",  "microbatches", "mesh",
    "rng", "growth_interval", "stage", "argument",     "result"};

} // namespace

const std::string *Thunk::field(const std::string &key) const {
  for (const auto &[k, v] : fields)
    if (k == key)
      return &v;
  return nullptr;
}

std::string CompiledProgram::load(const std::string &dir, CompiledProgram &out,
                                  Kernels kernels) {
  bool cuda = kernels != Kernels::CPU;
  std::string path = dir + "/program.txt";
  std::ifstream file(path);
  if (!file)
    return "cannot read '" + path +
           "': is it a directory dtc-compile --target cpu wrote?";
  std::string line, signatureText;
  std::getline(file, line);
  std::vector<std::string> header = splitOn(line, ' ');
  if (header.size() == 2 && header[0] == "dtc-cuda-program" && !cuda)
    return "'" + path +
           "' is a program for CUDA GPUs (dtc-compile --target cuda): run it "
           "with dtc-launch-cuda on a GPU, or compile it with "
           "--cuda-emulation and run it here with --emulate-cuda";
  if (header.size() != 2 ||
      header[0] != (cuda ? "dtc-cuda-program" : "dtc-cpu-program"))
    return "'" + path + "' is no " +
           (cuda ? "program compiled with --target cuda"
                 : "compiled dtc program");
  if (std::strtoll(header[1].c_str(), nullptr, 10) != kCompiledProgramFormat)
    return "'" + path + "' is a compiled program of format " + header[1] +
           ", this dtc-launch runs format " +
           std::to_string(kCompiledProgramFormat) +
           ": recompile the model with this dtc-compile";
  int lineNumber = 1;
  std::vector<int> lines; // each thunk's line
  while (std::getline(file, line)) {
    ++lineNumber;
    std::vector<std::string> tokens = splitOn(line, ' ');
    if (tokens.empty())
      continue;
    if (kSignatureRecords.count(tokens[0])) {
      signatureText += line + "\n";
      continue;
    }
    auto bad = [&](const std::string &why) {
      return path + ":" + std::to_string(lineNumber) + ": " + why;
    };
    if (tokens[0] == "arena") {
      out.arenaBytes =
          tokens.size() > 1 ? std::strtoll(tokens[1].c_str(), nullptr, 10) : -1;
      if (out.arenaBytes < 0)
        return bad("a bad arena size");
      continue;
    }
    Thunk thunk;
    thunk.kind = tokens[0];
    thunk.tag = thunk.kind == "kernel" ? Thunk::Kind::Kernel
                : thunk.kind == "gemm" ? Thunk::Kind::Gemm
                : thunk.kind == "copy" ? Thunk::Kind::Copy
                : thunk.kind == "dead" ? Thunk::Kind::Dead
                : thunk.kind == "wait" ? Thunk::Kind::Wait
                                       : Thunk::Kind::Collective;
    for (size_t i = 1; i < tokens.size(); ++i) {
      size_t eq = tokens[i].find('=');
      if (eq == std::string::npos)
        return bad("'" + tokens[i] + "' is no key=value field");
      std::string key = tokens[i].substr(0, eq),
                  value = tokens[i].substr(eq + 1);
      if (key == "reason") {
        thunk.reason = decodeFileName(value);
        continue;
      }
      thunk.fields.emplace_back(key, value);
      // Buffers: a kernel's `args` list, the others' in/lhs/rhs/out.
      std::vector<std::string> refs;
      if (key == "args")
        refs = splitOn(value, ',');
      else if (key == "in" || key == "lhs" || key == "rhs" || key == "out" ||
               key == "at")
        refs = {value};
      for (const std::string &ref : refs) {
        BufferRef buffer;
        if (!parseBuffer(ref, buffer))
          return bad("'" + ref + "' names no buffer");
        thunk.buffers.push_back(buffer);
      }
    }
    // Each kind's buffers, so that running it needs no checks.
    size_t expected = thunk.tag == Thunk::Kind::Gemm     ? 3
                      : thunk.tag == Thunk::Kind::Dead   ? 1
                      : thunk.tag == Thunk::Kind::Wait   ? 0
                      : thunk.tag == Thunk::Kind::Kernel ? thunk.buffers.size()
                                                         : 2;
    bool fieldsMissing = (thunk.tag == Thunk::Kind::Gemm &&
                          (!thunk.field("ta") || !thunk.field("tb"))) ||
                         (thunk.tag == Thunk::Kind::Dead &&
                          (!thunk.field("bytes") ||
                           thunk.buffers[0].space != BufferRef::Space::Arena));
    if (thunk.buffers.size() != expected || fieldsMissing)
      return bad("a '" + thunk.kind + "' thunk with the wrong fields");
    if (thunk.tag == Thunk::Kind::Gemm && !planGemm(thunk))
      return bad("a gemm of operands that are no matrices");
    if (thunk.tag == Thunk::Kind::Dead)
      thunk.bytes = std::strtoll(thunk.field("bytes")->c_str(), nullptr, 10);
    if (thunk.tag == Thunk::Kind::Kernel && thunk.field("rows")) {
      const std::string *work = thunk.field("work");
      thunk.rows = std::strtoll(thunk.field("rows")->c_str(), nullptr, 10);
      thunk.work = work ? std::strtoll(work->c_str(), nullptr, 10) : 0;
      if (thunk.rows < 2 || thunk.work < 1)
        return bad("a kernel with bad rows= or work=");
    }
    if (thunk.tag == Thunk::Kind::Wait) {
      const std::string *request = thunk.field("req");
      thunk.collective.request =
          request ? std::strtoll(request->c_str(), nullptr, 10) : -1;
    }
    if (const std::string *axes = thunk.field("axes"))
      thunk.axes = splitOn(*axes, ',');
    lines.push_back(lineNumber);
    out.thunks.push_back(std::move(thunk));
  }
  if (std::string error = StepSignature::fromText(signatureText, out.signature);
      !error.empty())
    return path + ": " + error;
  // Collectives (which need the mesh), and each started one waited for
  // once, later in the step.
  std::map<int64_t, int> started;
  for (size_t i = 0; i < out.thunks.size(); ++i) {
    Thunk &thunk = out.thunks[i];
    auto bad = [&](const std::string &why) {
      return path + ":" + std::to_string(lines[i]) + ": " + why;
    };
    if (thunk.tag == Thunk::Kind::Collective) {
      if (std::string error = parseCollective(thunk, out.signature.mesh);
          !error.empty())
        return bad(error);
      if (thunk.collective.request >= 0 &&
          !started.emplace(thunk.collective.request, 0).second)
        return bad("a request number started twice");
    }
    if (thunk.tag == Thunk::Kind::Wait &&
        (!started.count(thunk.collective.request) ||
         started[thunk.collective.request]++))
      return bad("a wait for no started collective");
  }
  for (const auto &[request, waits] : started)
    if (!waits)
      return path + ": collective request " + std::to_string(request) +
             " is never waited for";
  // Every buffer a thunk names lies within what the engine allocates.
  for (const Thunk &thunk : out.thunks)
    for (const BufferRef &ref : thunk.buffers) {
      // (A kernel's buffers carry no type: their start must lie inside.)
      int64_t bytes = ref.shape.empty() ? 1 : dtypeSize(ref.dtype);
      for (int64_t size : ref.shape)
        bytes *= size;
      bool inside =
          ref.space == BufferRef::Space::Argument
              ? ref.index < static_cast<int64_t>(out.signature.arguments.size())
          : ref.space == BufferRef::Space::Result
              ? ref.index < static_cast<int64_t>(out.signature.results.size())
              : ref.index + bytes <= std::max<int64_t>(out.arenaBytes, 1);
      if (!inside)
        return path + ": a '" + thunk.kind +
               "' thunk names a buffer outside the program's: recompile";
    }

  if (kernels == Kernels::CUDA)
    return "";
  std::string library = dir + (cuda ? "/kernels-emulated.so" : "/kernels.so");
  out.library = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!out.library)
    return "cannot load '" + library + "': " + dlerror();
  for (Thunk &thunk : out.thunks) {
    if (thunk.kind != "kernel")
      continue;
    const std::string *symbol = thunk.field("sym");
    if (!symbol)
      return path + ": a kernel without a symbol";
    thunk.entry = reinterpret_cast<void (*)(void **, int64_t, int64_t)>(
        dlsym(out.library, (*symbol + "_packed").c_str()));
    if (!thunk.entry)
      return "'" + library + "' has no kernel '" + *symbol +
             "': it does not belong to this program.txt; recompile";
  }
  return "";
}

BuiltinValue mlir::dtc::compiledStartingValues(const std::string &dir) {
  return [dir](size_t index) -> std::optional<Tensor> {
    std::string path = dir + "/init/arg" + std::to_string(index) + ".npy";
    if (!std::ifstream(path))
      return std::nullopt;
    std::string error;
    std::optional<Tensor> value = readNpy(path, error);
    if (!value)
      std::fprintf(stderr, "warning: %s\n", error.c_str());
    return value;
  };
}
