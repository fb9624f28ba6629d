//===- CUDAEngine.cpp - running a compiled program on a GPU ---------------===//

#include "dtc/Runtime/CUDA/CUDAEngine.h"

#include "CuBLAS.h"

#include "dtc/Runtime/TensorIO.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <fstream>
#include <iterator>

using namespace mlir::dtc;

namespace {

/// "" or what `status` says went wrong in `what`.
std::string check(cudaError_t status, const char *what) {
  if (status == cudaSuccess)
    return "";
  return std::string(what) + ": " + cudaGetErrorName(status) + " (" +
         cudaGetErrorString(status) + ")";
}

class CUDAEngine : public StepEngine {
public:
  explicit CUDAEngine(const CompiledProgram &program)
      : program(program), signature(program.signature) {}

  ~CUDAEngine() override {
    if (graph)
      cudaGraphExecDestroy(graph);
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

  /// Loads the kernels and cuBLAS and allocates every buffer.
  std::string load(const std::string &dir) {
    int devices = 0;
    if (std::string error =
            check(cudaGetDeviceCount(&devices), "no CUDA device");
        !error.empty())
      return error;
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
    return allocate(arena, program.arenaBytes);
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

  bool step() override {
    // The first step records the graph; every step replays it.
    if (!graph) {
      if (!report(
              check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal),
                    "capturing the step")))
        return false;
      bool recorded = true;
      for (const Thunk &thunk : program.thunks)
        if (!(recorded = record(thunk)))
          break;
      // Each donated argument takes its update.
      for (size_t i = 0; recorded && i < signature.arguments.size(); ++i)
        if (std::optional<size_t> r = signature.arguments[i].aliasedResult)
          recorded =
              report(check(cudaMemcpyAsync(args[i], results[*r], bytesOf(*r),
                                           cudaMemcpyDeviceToDevice, stream),
                           "copying an update"));
      cudaGraph_t captured = nullptr;
      cudaError_t ended = cudaStreamEndCapture(stream, &captured);
      if (!recorded || !report(check(ended, "capturing the step")) ||
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
      return report(
          check(cudaLaunchKernel(reinterpret_cast<const void *>(kernels[index]),
                                 dim3(number("grid")), dim3(number("block")),
                                 params.data(), 0, stream),
                "launching a kernel"));
    }
    case Thunk::Kind::Gemm:
      return gemm(thunk);
    case Thunk::Kind::Copy:
    case Thunk::Kind::Collective: {
      // One rank: every group is this rank alone, so each collective (and
      // a copy) moves its operand to its result.
      const BufferRef &in = thunk.buffers[0], &out = thunk.buffers[1];
      if (address(in) == address(out))
        return true;
      return report(
          check(cudaMemcpyAsync(address(out), address(in),
                                numElementsOf(out.shape) * dtypeSize(out.dtype),
                                cudaMemcpyDeviceToDevice, stream),
                "copying"));
    }
    case Thunk::Kind::Dead:
    case Thunk::Kind::Wait:
      return true;
    }
    return true;
  }

  /// Row-major out = op(lhs) x op(rhs), as cuBLAS's column-major
  /// out^T = op(rhs)^T x op(lhs)^T, matrix by matrix of the load-time plan.
  bool gemm(const Thunk &thunk) {
    const Thunk::Gemm &g = thunk.gemm;
    const BufferRef &out = thunk.buffers[2];
    char *a = address(thunk.buffers[0]), *b = address(thunk.buffers[1]),
         *c = address(out);
    cublasOperation_t opA = g.ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                      opB = g.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    int m = g.m, n = g.n, k = g.k;
    int lda = g.ta ? m : k, ldb = g.tb ? k : n;
    for (size_t i = 0; i < g.lhsAt.size(); ++i) {
      cublasStatus_t status;
      if (out.dtype == DType::F32) {
        const float one = 1, zero = 0;
        auto *fa = reinterpret_cast<const float *>(a) + g.lhsAt[i] * m * k;
        auto *fb = reinterpret_cast<const float *>(b) + g.rhsAt[i] * k * n;
        status =
            blas.sgemm(blasHandle, opB, opA, n, m, k, &one, fb, ldb, fa, lda,
                       &zero, reinterpret_cast<float *>(c) + i * m * n, n);
      } else if (out.dtype == DType::F64) {
        const double one = 1, zero = 0;
        auto *da = reinterpret_cast<const double *>(a) + g.lhsAt[i] * m * k;
        auto *db = reinterpret_cast<const double *>(b) + g.rhsAt[i] * k * n;
        status =
            blas.dgemm(blasHandle, opB, opA, n, m, k, &one, db, ldb, da, lda,
                       &zero, reinterpret_cast<double *>(c) + i * m * n, n);
      } else if (out.dtype == DType::BF16) {
        // bf16 operands on the tensor cores, f32 accumulation, the result
        // rounded once (as the reference's bf16 matmul).
        const float one = 1, zero = 0;
        auto *ha = reinterpret_cast<const uint16_t *>(a) + g.lhsAt[i] * m * k;
        auto *hb = reinterpret_cast<const uint16_t *>(b) + g.rhsAt[i] * k * n;
        status = blas.gemmEx(blasHandle, opB, opA, n, m, k, &one, hb,
                             CUDA_R_16BF, ldb, ha, CUDA_R_16BF, lda, &zero,
                             reinterpret_cast<uint16_t *>(c) + i * m * n,
                             CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                             CUBLAS_GEMM_DEFAULT);
      } else {
        return report(std::string("no GEMM for ") + dtypeName(out.dtype) +
                      " on the GPU yet");
      }
      if (status != CUBLAS_STATUS_SUCCESS)
        return report("a cuBLAS GEMM failed (status " +
                      std::to_string(static_cast<int>(status)) + ")");
    }
    return true;
  }

  const CompiledProgram &program;
  const StepSignature &signature;
  std::vector<char> fatbin;
  cudaLibrary_t library = nullptr;
  std::vector<cudaKernel_t> kernels;
  CuBLAS blas;
  cublasHandle_t blasHandle = nullptr;
  cudaStream_t stream = nullptr;
  cudaGraphExec_t graph = nullptr;
  std::vector<void *> args, results;
  void *arena = nullptr;
};

} // namespace

std::unique_ptr<StepEngine>
mlir::dtc::createCUDAEngine(const CompiledProgram &program,
                            const std::string &dir, std::string &error) {
  if (!program.signature.mesh.axes.empty() &&
      program.signature.mesh.numDevices() > 1) {
    error = "dtc-launch-cuda runs one rank so far; this program is one rank "
            "of a mesh of " +
            std::to_string(program.signature.mesh.numDevices()) +
            " (its collectives need the NCCL engine on device buffers)";
    return nullptr;
  }
  auto engine = std::make_unique<CUDAEngine>(program);
  error = engine->load(dir);
  if (!error.empty())
    return nullptr;
  return engine;
}
