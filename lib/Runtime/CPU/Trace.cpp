//===- Trace.cpp - the ranks' thunk timelines as one Chrome trace ---------===//

#include "dtc/Runtime/CPU/CPUEngine.h"

#include "dtc/Runtime/Communicator.h"

#include <fstream>

using namespace mlir::dtc;

namespace {

/// What a thunk computes, for its events: the op or group a kernel
/// computes, a GEMM's m x n x k, a collective's kind.
std::string nameOf(const Thunk &thunk) {
  if (const std::string *op = thunk.field("op"))
    return *op;
  if (thunk.tag == Thunk::Kind::Gemm)
    return "gemm " + std::to_string(thunk.gemm.m) + "x" +
           std::to_string(thunk.gemm.n) + "x" + std::to_string(thunk.gemm.k);
  if (thunk.collective.request >= 0)
    return thunk.kind + " #" + std::to_string(thunk.collective.request);
  return thunk.kind;
}

const char *categoryOf(const Thunk &thunk) {
  switch (thunk.tag) {
  case Thunk::Kind::Kernel:
    return "kernel";
  case Thunk::Kind::Gemm:
    return "blas";
  case Thunk::Kind::Collective:
  case Thunk::Kind::Wait:
    return "collective";
  default:
    return "copy";
  }
}

/// A JSON string's contents.
std::string escaped(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20)
      out += c;
  }
  return out;
}

} // namespace

std::string mlir::dtc::writeChromeTrace(const std::string &path,
                                        const CompiledProgram &program,
                                        const CPUTrace &trace,
                                        Communicator *comm) {
  // Every rank runs the same thunks as often: rows of (thunk, start,
  // duration), the step thread's then the communication thread's, line up,
  // and rank 0 gathers them.
  std::vector<const CPUTrace::Event *> events;
  for (const CPUTrace::Event &event : trace.events)
    events.push_back(&event);
  for (const CPUTrace::Event &event : trace.collectiveEvents)
    events.push_back(&event);
  int64_t n = static_cast<int64_t>(events.size());
  int64_t onStepThread = static_cast<int64_t>(trace.events.size());
  Tensor mine(DType::F64, {1, 3 * n});
  for (int64_t i = 0; i < n; ++i) {
    mine.floats()[3 * i] = static_cast<double>(events[i]->thunk);
    mine.floats()[3 * i + 1] = events[i]->start;
    mine.floats()[3 * i + 2] = events[i]->duration;
  }
  Tensor all = comm ? comm->allGather(mine, comm->mesh().axes, 0) : mine;
  if (comm && comm->rank() != 0)
    return "";
  std::ofstream file(path);
  if (!file)
    return "cannot write the trace '" + path + "'";
  file << "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  bool first = true;
  for (int64_t rank = 0; rank < all.shape()[0]; ++rank) {
    file << (first ? "" : ",\n")
         << "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": " << rank
         << ", \"args\": {\"name\": \"rank " << rank << "\"}}";
    first = false;
    for (int tid : {0, 1})
      file << ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": " << rank
           << ", \"tid\": " << tid << ", \"args\": {\"name\": \""
           << (tid ? "collectives" : "step") << "\"}}";
    const double *row = all.floats().data() + rank * 3 * n;
    for (int64_t i = 0; i < n; ++i) {
      const Thunk &thunk = program.thunks[static_cast<size_t>(row[3 * i])];
      if (thunk.tag == Thunk::Kind::Dead)
        continue;
      file << ",\n{\"name\": \"" << escaped(nameOf(thunk)) << "\", \"cat\": \""
           << categoryOf(thunk) << "\", \"ph\": \"X\", \"pid\": " << rank
           << ", \"tid\": " << (i >= onStepThread)
           << ", \"ts\": " << row[3 * i + 1] << ", \"dur\": " << row[3 * i + 2]
           << "}";
    }
  }
  file << "\n]}\n";
  return file ? "" : "cannot write the trace '" + path + "'";
}
