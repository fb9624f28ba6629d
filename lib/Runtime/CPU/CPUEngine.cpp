//===- CPUEngine.cpp - running a compiled CPU program's step --------------===//
//
// Buffers hold elements in their own type (f32 as 4 bytes, bool as one);
// the step's Tensors (f64 storage) are converted only when the loop hands
// in the first arguments or asks for a value to print or dump. Collectives
// run on the buffers themselves. An `async` all-reduce, all-gather,
// reduce-scatter or send/receive runs on the rank's CollectiveWorker thread
// while the
// thunks that follow it run here, until its `wait`; a blocking one runs
// here, or behind those in flight on that thread. The time this thread
// spends on collectives (running them, handing them over, waiting for
// them) is what computation did not hide: the exposed communication the
// report and the metrics show.
//
//===----------------------------------------------------------------------===//

#include "dtc/Runtime/CPU/CPUEngine.h"

#include "dtc/Runtime/CPU/CollectiveWorker.h"
#include "dtc/Runtime/CPU/KernelWorkers.h"

#include "dtc/Runtime/Communicator.h"

#include <atomic>
#include <cblas.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace mlir::dtc;

namespace {

/// The size below which a started collective runs on the step's thread
/// (when none is in flight) rather than on the communication thread.
constexpr int64_t kHandOverBytes = 1 << 20;

int64_t bytesOf(const BufferRef &ref) {
  return numElementsOf(ref.shape) * dtypeSize(ref.dtype);
}

/// A 64-byte aligned, zeroed allocation.
struct Buffer {
  char *data = nullptr;
  int64_t bytes = 0;

  explicit Buffer(int64_t size = 0) : bytes(size) {
    int64_t rounded = (std::max<int64_t>(size, 1) + 63) / 64 * 64;
    data = static_cast<char *>(std::aligned_alloc(64, rounded));
    if (!data) {
      // (Allocated once, when the engine starts: no step runs short.)
      std::fprintf(stderr,
                   "error: cannot allocate %lld bytes for the step's "
                   "buffers on this rank\n",
                   static_cast<long long>(rounded));
      std::exit(1);
    }
    std::memset(data, 0, rounded);
  }
  Buffer(Buffer &&other) noexcept : data(other.data), bytes(other.bytes) {
    other.data = nullptr;
  }
  Buffer &operator=(Buffer &&other) noexcept {
    std::swap(data, other.data);
    std::swap(bytes, other.bytes);
    return *this;
  }
  Buffer(const Buffer &) = delete;
  ~Buffer() { std::free(data); }
};

class CPUEngine : public StepEngine {
public:
  CPUEngine(const CompiledProgram &program, Communicator *comm,
            const CPUEngineOptions &options)
      : program(program), signature(program.signature), comm(comm),
        checkArena(options.checkArena), overlap(options.overlap),
        trace(options.trace), workers(options.threads),
        minWork(options.minWork), arena(program.arenaBytes) {
    // (In a pipelined step, none for what other pp ranks hold.)
    for (const StepArgument &arg : signature.arguments)
      args.emplace_back(signature.heldBy(arg.layout, comm)
                            ? numElementsOf(arg.shape) * dtypeSize(arg.dtype)
                            : 0);
    for (const StepResult &result : signature.results)
      results.emplace_back(signature.heldBy(result.layout, comm)
                               ? numElementsOf(result.shape) *
                                     dtypeSize(result.dtype)
                               : 0);
    for (const Thunk &thunk : program.thunks) {
      packed.resize(std::max(packed.size(), thunk.buffers.size()));
      partsOf.push_back(partsFor(thunk));
      if (thunk.collective.request >= 0)
        tickets.resize(
            std::max<size_t>(tickets.size(), thunk.collective.request + 1));
    }
    if (comm && signature.mesh.axisIndex(kPipelineAxisName) >= 0) {
      // Each pp coordinate runs a program of its own, whose groups another
      // lacks; making one is collective over every rank: all of them now,
      // in one order.
      const std::vector<std::string> &all = signature.mesh.axes;
      for (size_t mask = 1; mask < (size_t(1) << all.size()); ++mask) {
        std::vector<std::string> axes;
        for (size_t a = 0; a < all.size(); ++a)
          if (mask & (size_t(1) << a))
            axes.push_back(all[a]);
        comm->prepareGroup(axes);
      }
    }
    if (comm)
      collectives = std::make_unique<CollectiveWorker>();
    // bf16 and f16 matmuls run in f32 (OpenBLAS has no f16 GEMM, and
    // Debian's builds no bf16 one): scratch for the widest, made once.
    for (const Thunk &thunk : program.thunks)
      if (thunk.tag == Thunk::Kind::Gemm &&
          (thunk.buffers[2].dtype == DType::BF16 ||
           thunk.buffers[2].dtype == DType::F16))
        for (int i = 0; i < 3; ++i)
          scratch[i].resize(std::max<size_t>(
              scratch[i].size(), numElementsOf(thunk.buffers[i].shape)));
  }

  std::string start(std::vector<Tensor> arguments) override {
    for (size_t i = 0; i < arguments.size(); ++i) {
      if (!signature.heldBy(signature.arguments[i].layout, comm))
        continue;
      std::vector<char> bytes = arguments[i].toBytes();
      if (static_cast<int64_t>(bytes.size()) != args[i].bytes)
        return "argument '" + signature.arguments[i].name + "' has " +
               std::to_string(bytes.size()) + " bytes, the program expects " +
               std::to_string(args[i].bytes);
      std::memcpy(args[i].data, bytes.data(), bytes.size());
    }
    return "";
  }

  std::string setArgument(size_t index, const Tensor &part) override {
    std::vector<char> bytes = part.toBytes();
    if (part.dtype() != signature.arguments[index].dtype ||
        static_cast<int64_t>(bytes.size()) != args[index].bytes)
      return "input '" + signature.arguments[index].name + "' is " +
             describe(part.shape(), part.dtype()) + ", the program expects " +
             describe(signature.arguments[index].shape,
                      signature.arguments[index].dtype);
    std::memcpy(args[index].data, bytes.data(), bytes.size());
    return "";
  }

  bool step() override {
    if (trace) {
      for (size_t i = 0; i < program.thunks.size(); ++i) {
        double start = microseconds();
        if (!run(program.thunks[i]))
          return false;
        trace->events.push_back({i, start, microseconds() - start});
      }
    } else {
      for (const Thunk &thunk : program.thunks)
        if (!run(thunk))
          return false;
    }
    // (The program waits for every collective it starts; this keeps the
    // communicator to one thread between steps even if it did not.)
    if (lastTicket >= 0)
      collectives->waitFor(lastTicket);
    if (collectiveFailed)
      return false;
    // Each donated argument takes its update; the update's buffer (the old
    // value) is written over by the next step.
    for (size_t i = 0; i < signature.arguments.size(); ++i)
      if (std::optional<size_t> r = signature.arguments[i].aliasedResult)
        std::swap(args[i], results[*r]);
    return true;
  }

  Tensor argument(size_t index) const override {
    const StepArgument &arg = signature.arguments[index];
    if (!signature.heldBy(arg.layout, comm))
      return Tensor();
    return Tensor::fromBytes(arg.dtype, arg.shape, args[index].data);
  }
  Tensor result(size_t index) const override {
    const StepResult &result = signature.results[index];
    if (result.updatedArgument)
      return argument(*result.updatedArgument);
    if (!signature.heldBy(result.layout, comm))
      return Tensor();
    return Tensor::fromBytes(result.dtype, result.shape, results[index].data);
  }
  int64_t peakIntermediateBytes() const override { return program.arenaBytes; }
  double exposedCommunicationSeconds() const override { return commSeconds; }

private:
  double microseconds() const {
    return std::chrono::duration<double, std::micro>(
               std::chrono::steady_clock::now() - started)
        .count();
  }

  char *address(const BufferRef &ref) {
    switch (ref.space) {
    case BufferRef::Space::Argument:
      return args[ref.index].data;
    case BufferRef::Space::Result:
      return results[ref.index].data;
    case BufferRef::Space::Arena:
      return arena.data + ref.index;
    }
    return nullptr;
  }

  bool fail(const Thunk &thunk, const std::string &why) {
    std::fprintf(stderr, "error: %s thunk: %s\n", thunk.kind.c_str(),
                 why.c_str());
    return false;
  }

  bool run(const Thunk &thunk) {
    switch (thunk.tag) {
    case Thunk::Kind::Kernel: {
      // (Addresses change between steps: donated buffers swap.)
      for (size_t i = 0; i < thunk.buffers.size(); ++i)
        packed[i] = address(thunk.buffers[i]);
      int parts = partsOf[&thunk - program.thunks.data()];
      if (parts == 1)
        thunk.entry(packed.data(), 0, 1);
      else
        workers.run(parts,
                    [&](int part) { thunk.entry(packed.data(), part, parts); });
      return true;
    }
    case Thunk::Kind::Gemm:
      return gemm(thunk);
    case Thunk::Kind::Copy:
      std::memmove(address(thunk.buffers[1]), address(thunk.buffers[0]),
                   bytesOf(thunk.buffers[0]));
      return true;
    case Thunk::Kind::Dead:
      if (checkArena)
        std::memset(address(thunk.buffers[0]), 0xFF, thunk.bytes);
      return true;
    case Thunk::Kind::Collective: {
      if (!comm)
        return fail(thunk, "a collective needs ranks: run under mpirun");
      auto start = std::chrono::steady_clock::now();
      // (Addresses hold for the step: donated buffers swap after it.)
      char *from = address(thunk.buffers[0]), *to = address(thunk.buffers[1]);
      // An all-reduce runs in place on its result's buffer, its operand
      // copied there now: the program may let the operand die at once.
      if (thunk.collective.kind == Thunk::Collective::AllReduce && to != from)
        std::memcpy(to, from, bytesOf(thunk.buffers[1]));
      auto task = [this, &thunk, from, to] {
        double start = trace ? microseconds() : 0;
        if (!collective(thunk, from, to))
          collectiveFailed = true;
        if (trace)
          trace->collectiveEvents.push_back(
              {static_cast<size_t>(&thunk - program.thunks.data()), start,
               microseconds() - start});
      };
      // A blocking one, or a small one, runs here when nothing is in
      // flight: a hand-over costs two thread wake-ups, more than a small
      // collective takes (and much more with more ranks than cores).
      bool async = thunk.collective.request >= 0 && overlap;
      bool small = bytesOf(thunk.buffers[1]) < kHandOverBytes &&
                   bytesOf(thunk.buffers[0]) < kHandOverBytes;
      if ((!async || small) && collectives->idle()) {
        task();
        if (async)
          tickets[thunk.collective.request] = -1; // (done)
      } else {
        int64_t ticket = lastTicket = collectives->post(task);
        if (async)
          tickets[thunk.collective.request] = ticket;
        else
          collectives->waitFor(ticket);
      }
      commSeconds += secondsSince(start);
      return !collectiveFailed;
    }
    case Thunk::Kind::Wait: {
      auto start = std::chrono::steady_clock::now();
      if (overlap)
        collectives->waitFor(tickets[thunk.collective.request]);
      commSeconds += secondsSince(start);
      return !collectiveFailed;
    }
    }
    return false;
  }

  /// How many threads share a kernel (CPUEngineOptions).
  int partsFor(const Thunk &thunk) const {
    if (thunk.tag != Thunk::Kind::Kernel || thunk.rows < 2)
      return 1;
    int64_t parts = std::min<int64_t>(
        {workers.threads(), thunk.rows, thunk.work / minWork});
    return static_cast<int>(std::max<int64_t>(parts, 1));
  }

  /// The load-time plan (Thunk::Gemm) on this step's buffers.
  bool gemm(const Thunk &thunk) {
    const BufferRef &lhs = thunk.buffers[0], &rhs = thunk.buffers[1],
                    &out = thunk.buffers[2];
    const Thunk::Gemm &g = thunk.gemm;
    int64_t m = g.m, n = g.n, k = g.k;
    bool ta = g.ta, tb = g.tb;
    const std::vector<int64_t> &lhsAt = g.lhsAt, &rhsAt = g.rhsAt;
    char *a = address(lhs), *b = address(rhs), *c = address(out);
    CBLAS_TRANSPOSE opA = ta ? CblasTrans : CblasNoTrans,
                    opB = tb ? CblasTrans : CblasNoTrans;
    int lda = ta ? m : k, ldb = tb ? k : n;
    auto sgemm = [&](const float *fa, const float *fb, float *fc) {
      for (size_t i = 0; i < lhsAt.size(); ++i)
        cblas_sgemm(CblasRowMajor, opA, opB, m, n, k, 1.0f,
                    fa + lhsAt[i] * m * k, lda, fb + rhsAt[i] * k * n, ldb,
                    0.0f, fc + i * m * n, n);
    };
    switch (out.dtype) {
    case DType::F32:
      sgemm(reinterpret_cast<float *>(a), reinterpret_cast<float *>(b),
            reinterpret_cast<float *>(c));
      return true;
    case DType::F64:
      for (size_t i = 0; i < lhsAt.size(); ++i)
        cblas_dgemm(CblasRowMajor, opA, opB, m, n, k, 1.0,
                    reinterpret_cast<double *>(a) + lhsAt[i] * m * k, lda,
                    reinterpret_cast<double *>(b) + rhsAt[i] * k * n, ldb, 0.0,
                    reinterpret_cast<double *>(c) + i * m * n, n);
      return true;
    case DType::BF16:
    case DType::F16: {
      // Widened to f32, multiplied with f32 accumulation, rounded once.
      auto widen = [&](const char *from, const BufferRef &ref,
                       std::vector<float> &to) {
        const uint16_t *bits = reinterpret_cast<const uint16_t *>(from);
        for (int64_t i = 0, e = numElementsOf(ref.shape); i < e; ++i)
          to[i] = floatFromHalfBits(bits[i], ref.dtype);
      };
      widen(a, lhs, scratch[0]);
      widen(b, rhs, scratch[1]);
      sgemm(scratch[0].data(), scratch[1].data(), scratch[2].data());
      uint16_t *bits = reinterpret_cast<uint16_t *>(c);
      for (int64_t i = 0, e = numElementsOf(out.shape); i < e; ++i)
        bits[i] = halfBitsFromFloat(scratch[2][i], out.dtype);
      return true;
    }
    default:
      return fail(thunk, std::string("no GEMM for ") + dtypeName(out.dtype));
    }
  }

  /// Runs `thunk` (on the collective worker), from and to its buffers.
  bool collective(const Thunk &thunk, char *from, char *to) {
    const BufferRef &in = thunk.buffers[0], &out = thunk.buffers[1];
    const Thunk::Collective &c = thunk.collective;
    const std::vector<std::string> &axes = thunk.axes;
    comm->setReason(thunk.reason);
    switch (c.kind) {
    case Thunk::Collective::AllReduce:
      // (In place: `run` copied the operand.)
      comm->allReduce(to, out.dtype, numElementsOf(out.shape), axes, c.reduce);
      return true;
    case Thunk::Collective::AllGather:
      // (Started, the program keeps the operand alive until the wait.)
      comm->allGather(from, to, in.dtype, in.shape, axes, c.dim);
      return true;
    case Thunk::Collective::ReduceScatter:
      comm->reduceScatter(from, to, in.dtype, in.shape, axes, c.dim);
      return true;
    case Thunk::Collective::Broadcast:
      if (to != from)
        std::memcpy(to, from, bytesOf(out));
      if (!c.receivers.empty()) {
        // Point to point, from the root to each receiver.
        for (auto &handle :
             comm->transferStart(to, bytesOf(out), axes, c.root, c.receivers))
          handle->wait();
        return true;
      }
      comm->broadcast(to, bytesOf(out), axes, c.root);
      return true;
    case Thunk::Collective::AllToAll:
      comm->allToAll(from, to, in.dtype, in.shape, axes, c.dim, c.concatDim,
                     c.rowsDim);
      return true;
    case Thunk::Collective::Shard:
      // (A local slice: this rank's chunk.)
      chunkOf(from, to, in.dtype, in.shape, c.dim, comm->groupSize(axes),
              comm->groupRank(axes), c.blocks);
      return true;
    case Thunk::Collective::SendRecv: {
      const MeshShape &mesh = comm->mesh();
      int64_t size = mesh.sizes[c.axis];
      std::vector<int64_t> next = mesh.coordinates(comm->rank()), prev = next;
      next[c.axis] = (next[c.axis] + c.shift) % size;
      prev[c.axis] = (prev[c.axis] + size - c.shift) % size;
      comm->sendRecv(from, to, bytesOf(out), mesh.rankAt(next),
                     mesh.rankAt(prev));
      return true;
    }
    }
    return fail(thunk, "unknown collective");
  }

  static double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  }

  const CompiledProgram &program;
  const StepSignature &signature;
  Communicator *comm;
  bool checkArena;
  bool overlap;
  CPUTrace *trace;
  KernelWorkers workers;
  int64_t minWork;
  /// Each thunk's number of parts (1 but for split kernels).
  std::vector<int> partsOf;
  std::chrono::steady_clock::time_point started =
      std::chrono::steady_clock::now();
  Buffer arena;
  std::vector<float> scratch[3];
  /// A kernel's buffer addresses.
  std::vector<void *> packed;
  std::vector<Buffer> args, results;
  /// The last ticket the worker gave, that of each asynchronous collective
  /// by request number, and whether one failed (it printed why).
  int64_t lastTicket = -1;
  std::vector<int64_t> tickets;
  std::atomic<bool> collectiveFailed{false};
  /// The seconds this thread spent on collectives: running them, handing
  /// them over, waiting for them.
  double commSeconds = 0;
  /// The thread the collectives run on (on a mesh). Last: it stops first.
  std::unique_ptr<CollectiveWorker> collectives;
};

} // namespace

std::unique_ptr<StepEngine>
mlir::dtc::createCPUEngine(const CompiledProgram &program, Communicator *comm,
                           const CPUEngineOptions &options) {
  return std::make_unique<CPUEngine>(program, comm, options);
}
