//===- CUDAEngine.cpp - running a compiled program on a GPU ---------------===//

#include "dtc/Runtime/CUDA/CUDAEngine.h"

#include "CuBLAS.h"
#include "NCCL.h"

#include "dtc/Runtime/Communicator.h"
#include "dtc/Runtime/NCCL/NCCLDataType.h"

#include "dtc/Runtime/TensorIO.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>

using namespace mlir::dtc;

namespace {

/// "" or what `status` says went wrong in `what`.
std::string check(cudaError_t status, const char *what) {
  if (status == cudaSuccess)
    return "";
  return std::string(what) + ": " + cudaGetErrorName(status) + " (" +
         cudaGetErrorString(status) + ")";
}

/// A chunk of `n` equal chunks along one dimension of a row-major tensor, as
/// a strided copy: `height` rows of `width` bytes, `n * width` apart in the
/// whole tensor (chunk j starting `j * width` into each row).
struct ChunkCopy {
  size_t width = 0, height = 0;
};

/// The chunks of `shape` (elements of `bytes` bytes) split `n` ways along
/// `dim`, that dimension first cut into `blocks` blocks (a #dtc.sharding
/// with blocks: chunk j holds part j of each).
ChunkCopy chunksOf(const Shape &shape, int64_t dim, int64_t n, int64_t blocks,
                   size_t bytes) {
  int64_t outer = blocks, inner = shape[dim] / (blocks * n);
  for (int64_t d = 0; d < dim; ++d)
    outer *= shape[d];
  for (size_t d = dim + 1; d < shape.size(); ++d)
    inner *= shape[d];
  return {static_cast<size_t>(inner) * bytes, static_cast<size_t>(outer)};
}

class CUDAEngine : public StepEngine {
public:
  CUDAEngine(const CompiledProgram &program, Communicator *comm, int profile)
      : program(program), signature(program.signature), comm(comm),
        profile(profile) {}

  ~CUDAEngine() override {
    if (graph)
      cudaGraphExecDestroy(graph);
    for (auto &[axes, group] : groups)
      nccl.commDestroy(group);
    if (world)
      nccl.commDestroy(world);
    for (cudaEvent_t event : events)
      cudaEventDestroy(event);
    cudaFree(scratch);
    if (commStream)
      cudaStreamDestroy(commStream);
    if (blasHandle)
      blas.destroy(blasHandle);
    for (void *buffer : args)
      cudaFree(buffer);
    for (void *buffer : results)
      cudaFree(buffer);
    cudaFree(arena);
    if (stream)
      cudaStreamDestroy(stream);
    if (library)
      cudaLibraryUnload(library);
  }

  /// Loads the kernels and cuBLAS (and on a mesh NCCL, its communicators)
  /// and allocates every buffer.
  std::string load(const std::string &dir) {
    int devices = 0;
    if (std::string error =
            check(cudaGetDeviceCount(&devices), "no CUDA device");
        !error.empty())
      return error;
    if (comm) {
      // One GPU per rank: the rank on this host modulo its GPUs.
      int64_t local = comm->rank();
      for (const char *var :
           {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "LOCAL_RANK"})
        if (const char *value = std::getenv(var)) {
          local = std::atoll(value);
          break;
        }
      if (std::string error =
              check(cudaSetDevice(static_cast<int>(local % devices)),
                    "choosing this rank's GPU");
          !error.empty())
        return error;
    }
    std::ifstream file(dir + "/kernels.fatbin", std::ios::binary);
    if (!file)
      return "cannot read '" + dir + "/kernels.fatbin'";
    fatbin.assign(std::istreambuf_iterator<char>(file), {});
    if (std::string error =
            check(cudaLibraryLoadData(&library, fatbin.data(), nullptr, nullptr,
                                      0, nullptr, nullptr, 0),
                  "loading kernels.fatbin (compiled for another GPU? see "
                  "dtc-compile --gpu-arch)");
        !error.empty())
      return error;
    if (std::string error = blas.load(); !error.empty())
      return error;
    if (blas.create(&blasHandle) != CUBLAS_STATUS_SUCCESS)
      return "cublasCreate failed";
    if (std::string error =
            check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
                  "creating a stream");
        !error.empty())
      return error;
    blas.setStream(blasHandle, stream);
    kernels.resize(program.thunks.size());
    for (size_t i = 0; i < program.thunks.size(); ++i) {
      const Thunk &thunk = program.thunks[i];
      if (thunk.tag != Thunk::Kind::Kernel)
        continue;
      if (std::string error =
              check(cudaLibraryGetKernel(&kernels[i], library,
                                         thunk.field("sym")->c_str()),
                    "finding a kernel of program.txt in kernels.fatbin");
          !error.empty())
        return error + ": " + *thunk.field("sym");
      // Past the default 48 KiB of shared memory (the fused attention's
      // tiles) a kernel must opt in.
      if (const std::string *shared = thunk.field("smem")) {
        int device = 0;
        cudaError_t status = cudaGetDevice(&device);
        if (status == cudaSuccess)
          status = cudaKernelSetAttributeForDevice(
              kernels[i], cudaFuncAttributeMaxDynamicSharedMemorySize,
              std::stoi(*shared), device);
        if (std::string error =
                check(status, "allowing a kernel more shared memory");
            !error.empty())
          return error + ": " + *thunk.field("sym") + " needs " + *shared +
                 " bytes";
      }
    }
    auto allocate = [](void *&to, int64_t bytes) {
      return check(cudaMalloc(&to, std::max<int64_t>(bytes, 1)),
                   "allocating device memory");
    };
    for (const StepArgument &arg : signature.arguments) {
      args.push_back(nullptr);
      if (std::string error = allocate(args.back(), numElementsOf(arg.shape) *
                                                        dtypeSize(arg.dtype));
          !error.empty())
        return error;
    }
    for (const StepResult &result : signature.results) {
      results.push_back(nullptr);
      if (std::string error =
              allocate(results.back(),
                       numElementsOf(result.shape) * dtypeSize(result.dtype));
          !error.empty())
        return error;
    }
    if (std::string error = allocate(arena, program.arenaBytes); !error.empty())
      return error;
    return comm ? startCommunication() : "";
  }

  std::string start(std::vector<Tensor> arguments) override {
    for (size_t i = 0; i < arguments.size(); ++i)
      if (std::string error = setArgument(i, arguments[i]); !error.empty())
        return error;
    return "";
  }

  std::string setArgument(size_t index, const Tensor &part) override {
    const StepArgument &arg = signature.arguments[index];
    std::vector<char> bytes = part.toBytes();
    if (part.dtype() != arg.dtype ||
        static_cast<int64_t>(bytes.size()) !=
            numElementsOf(arg.shape) *
                static_cast<int64_t>(dtypeSize(arg.dtype)))
      return "argument '" + arg.name + "' is " +
             describe(part.shape(), part.dtype()) + ", the program expects " +
             describe(arg.shape, arg.dtype);
    return check(cudaMemcpy(args[index], bytes.data(), bytes.size(),
                            cudaMemcpyHostToDevice),
                 "copying an argument to the GPU");
  }

  /// The first step runs its thunks as they are enqueued (cuBLAS and NCCL
  /// allocate what they need then, which they could not inside a capture);
  /// the second records them into a graph, which it and every later step
  /// replay.
  bool step() override {
    if (!graph) {
      bool timing = warmedUp && profile > 0;
      bool capture = warmedUp && !timing;
      if (capture && !report(check(cudaStreamBeginCapture(
                                       stream, cudaStreamCaptureModeGlobal),
                                   "capturing the step")))
        return false;
      std::vector<cudaEvent_t> marks;
      if (timing && !report(timingEvents(marks)))
        return false;
      bool enqueued = true;
      for (size_t i = 0; i < program.thunks.size() && enqueued; ++i) {
        if (timing)
          cudaEventRecord(marks[i], stream);
        enqueued = record(program.thunks[i]);
      }
      if (timing)
        cudaEventRecord(marks.back(), stream);
      // Each donated argument takes its update.
      for (size_t i = 0; enqueued && i < signature.arguments.size(); ++i)
        if (std::optional<size_t> r = signature.arguments[i].aliasedResult)
          enqueued =
              report(check(cudaMemcpyAsync(args[i], results[*r], bytesOf(*r),
                                           cudaMemcpyDeviceToDevice, stream),
                           "copying an update"));
      if (!capture) {
        warmedUp = true;
        bool ran = enqueued && report(check(cudaStreamSynchronize(stream),
                                            "running the step"));
        if (ran && timing)
          printProfile(marks);
        if (timing)
          profile = 0; // (timed once: the next step captures the graph)
        for (cudaEvent_t mark : marks)
          cudaEventDestroy(mark);
        return ran;
      }
      cudaGraph_t captured = nullptr;
      cudaError_t ended = cudaStreamEndCapture(stream, &captured);
      if (!enqueued || !report(check(ended, "capturing the step")) ||
          !report(check(cudaGraphInstantiate(&graph, captured, 0),
                        "instantiating the step's graph")))
        return false;
      cudaGraphDestroy(captured);
    }
    return report(check(cudaGraphLaunch(graph, stream), "running the step")) &&
           report(check(cudaStreamSynchronize(stream), "running the step"));
  }

  Tensor argument(size_t index) const override {
    const StepArgument &arg = signature.arguments[index];
    return download(arg.dtype, arg.shape, args[index]);
  }
  Tensor result(size_t index) const override {
    const StepResult &result = signature.results[index];
    if (result.updatedArgument)
      return argument(*result.updatedArgument);
    return download(result.dtype, result.shape, results[index]);
  }
  int64_t peakIntermediateBytes() const override { return program.arenaBytes; }

private:
  bool report(const std::string &error) {
    if (!error.empty())
      std::fprintf(stderr, "error: %s\n", error.c_str());
    return error.empty();
  }

  int64_t bytesOf(size_t result) const {
    const StepResult &r = signature.results[result];
    return numElementsOf(r.shape) * dtypeSize(r.dtype);
  }

  Tensor download(DType dtype, const Shape &shape, const void *from) const {
    std::vector<char> bytes(numElementsOf(shape) * dtypeSize(dtype));
    cudaMemcpy(bytes.data(), from, bytes.size(), cudaMemcpyDeviceToHost);
    return Tensor::fromBytes(dtype, shape, bytes.data());
  }

  char *address(const BufferRef &ref) const {
    switch (ref.space) {
    case BufferRef::Space::Argument:
      return static_cast<char *>(args[ref.index]);
    case BufferRef::Space::Result:
      return static_cast<char *>(results[ref.index]);
    case BufferRef::Space::Arena:
      return static_cast<char *>(arena) + ref.index;
    }
    return nullptr;
  }

  /// Adds `thunk` to the stream being captured.
  bool record(const Thunk &thunk) {
    switch (thunk.tag) {
    case Thunk::Kind::Kernel: {
      std::vector<void *> pointers;
      for (const BufferRef &ref : thunk.buffers)
        pointers.push_back(address(ref));
      std::vector<void *> params;
      for (void *&pointer : pointers)
        params.push_back(&pointer);
      auto number = [&](const char *key) {
        const std::string *value = thunk.field(key);
        return value ? static_cast<unsigned>(std::stoul(*value)) : 1u;
      };
      size_t index = &thunk - program.thunks.data();
      return report(check(
          cudaLaunchKernel(reinterpret_cast<const void *>(kernels[index]),
                           dim3(number("grid")), dim3(number("block")),
                           params.data(),
                           thunk.field("smem") ? number("smem") : 0, stream),
          "launching a kernel"));
    }
    case Thunk::Kind::Gemm:
      return gemm(thunk);
    case Thunk::Kind::Collective:
      if (comm)
        return collective(thunk);
      [[fallthrough]];
    case Thunk::Kind::Copy: {
      // (One rank: every group is this rank alone, so each collective
      // moves its operand to its result, as a copy does.)
      const BufferRef &in = thunk.buffers[0], &out = thunk.buffers[1];
      if (address(in) == address(out))
        return true;
      return report(
          check(cudaMemcpyAsync(address(out), address(in),
                                numElementsOf(out.shape) * dtypeSize(out.dtype),
                                cudaMemcpyDeviceToDevice, stream),
                "copying"));
    }
    case Thunk::Kind::Wait:
      if (comm)
        return report(check(
            cudaStreamWaitEvent(stream, done.at(thunk.collective.request)),
            "waiting for a collective"));
      return true;
    case Thunk::Kind::Dead:
      return true;
    }
    return true;
  }

  /// The group communicators the program's collectives need, split from
  /// the world's (every rank makes them in the same order: program order),
  /// the events that order them and their scratch buffer.
  std::string startCommunication() {
    if (std::string error = nccl.load(); !error.empty())
      return error;
    ncclUniqueId id;
    if (comm->rank() == 0 && nccl.getUniqueId(&id) != ncclSuccess)
      return "ncclGetUniqueId failed";
    comm->broadcast(&id, sizeof id, comm->mesh().axes, 0);
    if (ncclResult_t status =
            nccl.commInitRank(&world, static_cast<int>(comm->worldSize()), id,
                              static_cast<int>(comm->rank()));
        status != ncclSuccess)
      return std::string("ncclCommInitRank: ") + nccl.errorString(status);
    size_t scratchBytes = 0;
    for (const Thunk &thunk : program.thunks) {
      if (thunk.tag != Thunk::Kind::Collective)
        continue;
      if (std::string error = groupOf(axesOf(thunk)); !error.empty())
        return error;
      const BufferRef &in = thunk.buffers[0], &out = thunk.buffers[1];
      size_t bytes = std::max(numElementsOf(in.shape) * dtypeSize(in.dtype),
                              numElementsOf(out.shape) * dtypeSize(out.dtype));
      scratchBytes = std::max(scratchBytes, 2 * bytes);
      if (thunk.collective.request >= 0)
        done[thunk.collective.request] = nullptr;
    }
    for (auto &[request, event] : done)
      if (std::string error = newEvent(event); !error.empty())
        return error;
    if (std::string error =
            check(cudaMalloc(&scratch, std::max<size_t>(scratchBytes, 1)),
                  "allocating the collectives' scratch");
        !error.empty())
      return error;
    return check(cudaStreamCreateWithFlags(&commStream, cudaStreamNonBlocking),
                 "creating the communication stream");
  }

  std::string newEvent(cudaEvent_t &event) {
    std::string error = check(
        cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "an event");
    events.push_back(event);
    return error;
  }

  /// The axes of a collective's group (a send/receive's: its one axis).
  std::vector<std::string> axesOf(const Thunk &thunk) const {
    if (thunk.collective.kind == Thunk::Collective::SendRecv)
      return {comm->mesh().axes[thunk.collective.axis]};
    return thunk.axes;
  }

  static std::string keyOf(const std::vector<std::string> &axes) {
    std::string key;
    for (const std::string &axis : axes)
      key += axis + ",";
    return key;
  }

  /// Makes the communicator of the ranks that differ from this one only
  /// along `axes`, its ranks in group order.
  std::string groupOf(const std::vector<std::string> &axes) {
    std::string key = keyOf(axes);
    if (groups.count(key))
      return "";
    const MeshShape &mesh = comm->mesh();
    // (The colour: this rank's coordinates along the other axes.)
    std::vector<int64_t> at = mesh.coordinates(comm->rank());
    int64_t colour = 0;
    for (size_t d = 0; d < mesh.axes.size(); ++d)
      if (std::find(axes.begin(), axes.end(), mesh.axes[d]) == axes.end())
        colour = colour * mesh.sizes[d] + at[d];
    ncclComm_t group = nullptr;
    if (ncclResult_t status = nccl.commSplit(
            world, static_cast<int>(colour),
            static_cast<int>(comm->groupRank(axes)), &group, nullptr);
        status != ncclSuccess)
      return std::string("ncclCommSplit: ") + nccl.errorString(status);
    groups[key] = group;
    return "";
  }

  /// Copies chunk `j` of `n` of `whole` (`c`) to the contiguous `part`, or
  /// back.
  bool copyChunk(char *whole, char *part, const ChunkCopy &c, int64_t j,
                 int64_t n, bool toPart) {
    char *strided = whole + j * c.width;
    size_t pitch = n * c.width;
    return report(check(
        toPart
            ? cudaMemcpy2DAsync(part, c.width, strided, pitch, c.width,
                                c.height, cudaMemcpyDeviceToDevice, commStream)
            : cudaMemcpy2DAsync(strided, pitch, part, c.width, c.width,
                                c.height, cudaMemcpyDeviceToDevice, commStream),
        "rearranging a collective's chunks"));
  }

  bool ok(ncclResult_t status, const char *what) {
    if (status == ncclSuccess)
      return true;
    return report(std::string(what) + ": " + nccl.errorString(status));
  }

  /// A collective on the communication stream, after the compute before
  /// it: a started one signals its request's event (its `wait` makes the
  /// compute stream wait for it), any other is waited for at once. Every
  /// collective runs on that one stream, in program order, so the scratch
  /// buffer is never shared.
  bool collective(const Thunk &thunk) {
    cudaEvent_t fork, join;
    if (!report(newEvent(fork)) || !report(newEvent(join)) ||
        !report(check(cudaEventRecord(fork, stream), "ordering")) ||
        !report(check(cudaStreamWaitEvent(commStream, fork), "ordering")))
      return false;
    const Thunk::Collective &c = thunk.collective;
    const BufferRef &inRef = thunk.buffers[0], &outRef = thunk.buffers[1];
    char *in = address(inRef), *out = address(outRef);
    size_t bytes = dtypeSize(inRef.dtype);
    int64_t inCount = numElementsOf(inRef.shape),
            outCount = numElementsOf(outRef.shape);
    // (Moves count bytes; reductions need the element type.)
    std::optional<ncclDataType_t> type = ncclTypeOf(inRef.dtype);
    bool reduces = c.kind == Thunk::Collective::AllReduce ||
                   c.kind == Thunk::Collective::ReduceScatter;
    if (reduces && !type)
      return report(std::string("NCCL cannot reduce ") +
                    dtypeName(inRef.dtype) + " values");
    std::vector<std::string> axes = axesOf(thunk);
    ncclComm_t group = groups.at(keyOf(axes));
    int64_t n = comm->groupSize(axes), r = comm->groupRank(axes);
    char *buffer = static_cast<char *>(scratch);
    bool fine = true;
    switch (c.kind) {
    case Thunk::Collective::AllReduce: {
      ncclRedOp_t op = c.reduce == ReduceKind::Max   ? ncclMax
                       : c.reduce == ReduceKind::Min ? ncclMin
                                                     : ncclSum;
      fine = ok(nccl.allReduce(in, out, outCount, *type, op, group, commStream),
                "ncclAllReduce");
      break;
    }
    case Thunk::Collective::AllGather: {
      // Rank j's part is chunk j of the result along the dimension.
      ChunkCopy chunk = chunksOf(outRef.shape, c.dim, n, 1, bytes);
      bool direct = chunk.height == 1;
      fine = ok(nccl.allGather(in, direct ? out : buffer, inCount * bytes,
                               ncclUint8, group, commStream),
                "ncclAllGather");
      for (int64_t j = 0; fine && !direct && j < n; ++j)
        fine = copyChunk(out, buffer + j * chunk.width * chunk.height, chunk, j,
                         n, /*toPart=*/false);
      break;
    }
    case Thunk::Collective::ReduceScatter: {
      // Chunk j of the operand is what rank j keeps of the sum.
      ChunkCopy chunk = chunksOf(inRef.shape, c.dim, n, 1, bytes);
      bool direct = chunk.height == 1;
      for (int64_t j = 0; fine && !direct && j < n; ++j)
        fine = copyChunk(in, buffer + j * chunk.width * chunk.height, chunk, j,
                         n, /*toPart=*/true);
      fine = fine && ok(nccl.reduceScatter(direct ? in : buffer, out, outCount,
                                           *type, ncclSum, group, commStream),
                        "ncclReduceScatter");
      break;
    }
    case Thunk::Collective::Broadcast:
      fine = ok(nccl.broadcast(in, out, outCount * bytes, ncclUint8,
                               static_cast<int>(c.root), group, commStream),
                "ncclBroadcast");
      break;
    case Thunk::Collective::Shard:
      // (A local slice: this rank's chunk.)
      if (c.blocks < 1)
        return report("dtc-launch-cuda has no mirrored (zigzag) shards yet");
      fine = copyChunk(in, out,
                       chunksOf(inRef.shape, c.dim, n, c.blocks, bytes), r, n,
                       /*toPart=*/true);
      break;
    case Thunk::Collective::AllToAll: {
      // Chunk j along the split dimension to group rank j; what rank j
      // sends is chunk j along the concatenated one. (Whole chunks even
      // with a rows dimension, which changes what is sent, not the result:
      // the row counts would need the host inside a captured graph.)
      ChunkCopy send = chunksOf(inRef.shape, c.dim, n, 1, bytes),
                recv = chunksOf(outRef.shape, c.concatDim, n, 1, bytes);
      size_t part = send.width * send.height;
      char *sent = buffer, *received = buffer + n * part;
      for (int64_t j = 0; fine && j < n; ++j)
        fine = copyChunk(in, sent + j * part, send, j, n, /*toPart=*/true);
      fine = fine && ok(nccl.groupStart(), "ncclGroupStart");
      for (int64_t j = 0; fine && j < n; ++j)
        fine = ok(nccl.send(sent + j * part, part, ncclUint8, j, group,
                            commStream),
                  "ncclSend") &&
               ok(nccl.recv(received + j * part, part, ncclUint8, j, group,
                            commStream),
                  "ncclRecv");
      fine = fine && ok(nccl.groupEnd(), "ncclGroupEnd");
      for (int64_t j = 0; fine && j < n; ++j)
        fine = copyChunk(out, received + j * part, recv, j, n,
                         /*toPart=*/false);
      break;
    }
    case Thunk::Collective::SendRecv: {
      // Along one axis: to the rank `shift` ahead, from the one behind.
      size_t total = outCount * bytes;
      fine = ok(nccl.groupStart(), "ncclGroupStart") &&
             ok(nccl.send(in, total, ncclUint8, (r + c.shift) % n, group,
                          commStream),
                "ncclSend") &&
             ok(nccl.recv(out, total, ncclUint8, (r + n - c.shift) % n, group,
                          commStream),
                "ncclRecv") &&
             ok(nccl.groupEnd(), "ncclGroupEnd");
      break;
    }
    }
    if (!fine)
      return false;
    cudaEvent_t signal = c.request >= 0 ? done.at(c.request) : join;
    if (!report(check(cudaEventRecord(signal, commStream), "ordering")))
      return false;
    return c.request >= 0 ||
           report(check(cudaStreamWaitEvent(stream, join), "ordering"));
  }

  /// Row-major out = op(lhs) x op(rhs), as cuBLAS's column-major
  /// out^T = op(rhs)^T x op(lhs)^T: the load-time plan's matrices as one
  /// strided batch where their indexes step evenly (a batched matmul, a
  /// broadcast operand: stride 0), else one call per matrix. f32 and f64
  /// multiply in their own precision, bf16 and f16 on the tensor cores with
  /// f32 accumulation, the result rounded once (as the reference's).
  /// An event before each thunk and one after the last, timing enabled.
  std::string timingEvents(std::vector<cudaEvent_t> &marks) {
    marks.resize(program.thunks.size() + 1);
    for (cudaEvent_t &mark : marks)
      if (std::string error = check(cudaEventCreate(&mark), "an event");
          !error.empty())
        return error;
    return "";
  }

  /// The `profile` slowest thunks of the step timed between `marks`: time,
  /// kind or op, and for GEMMs (2 m n k a matrix product) and fused
  /// attention (its `flops=`) TFLOP/s.
  void printProfile(const std::vector<cudaEvent_t> &marks) {
    if (comm && comm->rank() != 0)
      return;
    struct Entry {
      float ms;
      size_t index;
    };
    std::vector<Entry> entries;
    float total = 0;
    for (size_t i = 0; i + 1 < marks.size(); ++i) {
      float ms = 0;
      cudaEventElapsedTime(&ms, marks[i], marks[i + 1]);
      entries.push_back({ms, i});
      total += ms;
    }
    std::sort(entries.begin(), entries.end(),
              [](const Entry &a, const Entry &b) { return a.ms > b.ms; });
    std::printf("profile: %.3f ms in %zu thunks, run one by one; the %d "
                "slowest:\n",
                total, entries.size(), profile);
    for (int i = 0; i < profile && i < static_cast<int>(entries.size()); ++i) {
      const Thunk &thunk = program.thunks[entries[i].index];
      double flops = 0;
      std::string what;
      if (thunk.tag == Thunk::Kind::Gemm) {
        const Thunk::Gemm &g = thunk.gemm;
        flops = 2.0 * g.m * g.n * g.k * g.lhsAt.size();
        what = "gemm " + std::to_string(g.lhsAt.size()) + "x" +
               std::to_string(g.m) + "x" + std::to_string(g.n) + "x" +
               std::to_string(g.k) + " " + dtypeName(thunk.buffers[2].dtype);
      } else {
        const std::string *op = thunk.field("op");
        what = op                                     ? *op
               : thunk.tag == Thunk::Kind::Collective ? "collective"
               : thunk.tag == Thunk::Kind::Copy       ? "copy"
                                                      : "wait";
        if (const std::string *f = thunk.field("flops"))
          flops = std::stod(*f);
      }
      std::printf("  %9.3f ms %5.1f%%  #%-5zu %s", entries[i].ms,
                  100 * entries[i].ms / total, entries[i].index, what.c_str());
      if (flops > 0)
        std::printf("  %.1f TFLOP/s", flops / (entries[i].ms * 1e-3) / 1e12);
      std::printf("\n");
    }
  }

  bool gemm(const Thunk &thunk) {
    const Thunk::Gemm &g = thunk.gemm;
    const BufferRef &out = thunk.buffers[2];
    static const float oneF = 1, zeroF = 0;
    static const double oneD = 1, zeroD = 0;
    cudaDataType type = CUDA_R_32F;
    cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
    const void *one = &oneF, *zero = &zeroF;
    if (out.dtype == DType::F64) {
      type = CUDA_R_64F, compute = CUBLAS_COMPUTE_64F;
      one = &oneD, zero = &zeroD;
    } else if (out.dtype == DType::BF16 || out.dtype == DType::F16) {
      type = out.dtype == DType::BF16 ? CUDA_R_16BF : CUDA_R_16F;
    } else if (out.dtype != DType::F32) {
      return report(std::string("no GEMM for ") + dtypeName(out.dtype) +
                    " on the GPU yet");
    }
    size_t bytes = dtypeSize(out.dtype);
    char *a = address(thunk.buffers[0]), *b = address(thunk.buffers[1]),
         *c = address(out);
    cublasOperation_t opA = g.ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                      opB = g.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    int m = g.m, n = g.n, k = g.k;
    int lda = g.ta ? m : k, ldb = g.tb ? k : n;
    auto evenly = [](const std::vector<int64_t> &at) {
      for (size_t i = 2; i < at.size(); ++i)
        if (at[i] - at[i - 1] != at[1] - at[0])
          return false;
      return true;
    };
    size_t count = g.lhsAt.size();
    bool batched = count > 1 && evenly(g.lhsAt) && evenly(g.rhsAt);
    long long strideA = batched ? (g.lhsAt[1] - g.lhsAt[0]) * m * k : 0,
              strideB = batched ? (g.rhsAt[1] - g.rhsAt[0]) * k * n : 0;
    for (size_t i = 0; i < count; i += batched ? count : 1) {
      cublasStatus_t status = blas.gemmStridedBatchedEx(
          blasHandle, opB, opA, n, m, k, one, b + g.rhsAt[i] * k * n * bytes,
          type, ldb, strideB, a + g.lhsAt[i] * m * k * bytes, type, lda,
          strideA, zero, c + i * m * n * bytes, type, n,
          static_cast<long long>(m) * n, batched ? static_cast<int>(count) : 1,
          compute, CUBLAS_GEMM_DEFAULT);
      if (status != CUBLAS_STATUS_SUCCESS)
        return report("a cuBLAS GEMM failed (status " +
                      std::to_string(static_cast<int>(status)) + ")");
    }
    return true;
  }

  const CompiledProgram &program;
  const StepSignature &signature;
  Communicator *comm;
  NCCL nccl;
  ncclComm_t world = nullptr;
  /// The group communicators by their axes ("dp,tp,").
  std::map<std::string, ncclComm_t> groups;
  cudaStream_t commStream = nullptr;
  /// Each started collective's completion, by request number.
  std::map<int64_t, cudaEvent_t> done;
  std::vector<cudaEvent_t> events;
  void *scratch = nullptr;
  std::vector<char> fatbin;
  cudaLibrary_t library = nullptr;
  std::vector<cudaKernel_t> kernels;
  CuBLAS blas;
  cublasHandle_t blasHandle = nullptr;
  cudaStream_t stream = nullptr;
  cudaGraphExec_t graph = nullptr;
  bool warmedUp = false;
  /// How many of the slowest thunks the timed step prints (0: no timing,
  /// or already timed).
  int profile = 0;
  std::vector<void *> args, results;
  void *arena = nullptr;
};

} // namespace

std::unique_ptr<StepEngine>
mlir::dtc::createCUDAEngine(const CompiledProgram &program,
                            const std::string &dir, Communicator *comm,
                            std::string &error, int profile) {
  auto engine = std::make_unique<CUDAEngine>(program, comm, profile);
  error = engine->load(dir);
  if (!error.empty())
    return nullptr;
  return engine;
}
