//===- dtc-launch-cuda.cpp - runs a compiled program on a GPU -------------===//
//
//   dtc-launch-cuda OUT (--data FILE | --batch DIR) [--steps K] [options]
//
// The GPU counterpart of dtc-launch: the same training loop and options
// (RunOptions.h) around a step compiled with dtc-compile --target cuda
// (program.txt, kernels.fatbin, init/), run by the CUDA engine. It links
// the CUDA runtime statically and loads cuBLAS (and NCCL) at run time: no
// LLVM, MLIR, MPI, BLAS or protobuf, so it runs on a GPU host that has only
// a driver and PyTorch's nvidia wheels. A program of several ranks runs
// under mpirun, a GPU each: MPI comes from libdtc-launch-cuda-mpi.so beside
// the launcher, loaded only then. Batches are read from .npy files.
//
//===----------------------------------------------------------------------===//

#include "dtc/Runtime/CUDA/CUDAEngine.h"
#include "dtc/Runtime/TensorIO.h"
#include "dtc/Runtime/TrainingLoop.h"

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>

using namespace mlir::dtc;

static const char *kUsage =
    "dtc-launch-cuda: runs a training step compiled with dtc-compile "
    "--target cuda\non this host's GPU (one rank)\n"
    "\n"
    "  dtc-launch-cuda OUT (--data FILE | --batch DIR) [--steps K] "
    "[options]\n"
    "  mpirun -np N dtc-launch-cuda OUT ...   (a step compiled for N ranks, "
    "a GPU each)\n"
    "\n"
    "cuBLAS and NCCL are found at run time: $DTC_CUBLAS and $DTC_NCCL, the\n"
    "loader's path, the CUDA toolkit, or a Python installation's\n"
    "nvidia/*/lib (PyTorch's wheels).\n"
    "Batches (--batch DIR) are .npy files.\n"
    "\n"
    "  --profile N        run the second step's thunks one by one between\n"
    "                     events and print the N slowest (time, op, TFLOP/s\n"
    "                     of GEMMs and fused attention); the graph is\n"
    "                     captured from the third step on\n";

/// --batch and --inputs directories: their .npy files by name.
static bool readNpyDir(const std::string &dir,
                       std::map<std::string, Tensor> &out, std::string &error) {
  return readTensorDirectory(dir, out, error);
}

/// Runs `train` on this process's rank of `mesh` under mpirun, through
/// libdtc-launch-cuda-mpi.so (beside this executable).
static int runOnMPIRanks(int &argc, char **&argv, const MeshShape &mesh,
                         const std::function<int(Communicator *)> &train) {
  std::string library =
      std::filesystem::read_symlink("/proc/self/exe").parent_path().string() +
      "/libdtc-launch-cuda-mpi.so";
  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  using Run = int (*)(int &, char **&, const MeshShape &,
                      const std::function<int(Communicator *)> &);
  auto run = handle ? reinterpret_cast<Run>(
                          dlsym(handle, "dtc_launch_cuda_run_on_mpi_ranks"))
                    : nullptr;
  if (!run) {
    std::fprintf(stderr,
                 "error: a step of %lld ranks runs under mpirun through "
                 "'%s', which does not load: %s\n",
                 static_cast<long long>(mesh.numDevices()), library.c_str(),
                 dlerror());
    return 1;
  }
  return run(argc, argv, mesh, train);
}

int main(int argc, char **argv) {
  RunOptions options;
  std::vector<std::string> rest;
  if (std::string error = parseRunOptions(
          std::vector<std::string>(argv + 1, argv + argc), options, rest);
      !error.empty()) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  std::string out;
  int profile = 0;
  for (size_t i = 0; i < rest.size(); ++i) {
    const std::string &arg = rest[i];
    if (arg == "--profile" || arg.rfind("--profile=", 0) == 0) {
      std::string value = arg == "--profile"
                              ? (i + 1 < rest.size() ? rest[++i] : "")
                              : arg.substr(10);
      char *end = nullptr;
      long n = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end || n < 1) {
        std::fprintf(stderr, "error: --profile takes a number of thunks to "
                             "print, at least 1\n");
        return 1;
      }
      profile = static_cast<int>(n);
      continue;
    }
    if (arg == "--help" || arg == "-h") {
      std::printf("%s%s", kUsage, kRunOptionsHelp);
      return 0;
    }
    if (arg.rfind("-", 0) == 0) {
      std::fprintf(stderr,
                   "error: unknown option '%s' (dtc-launch-cuda --help lists "
                   "them)\n",
                   arg.c_str());
      return 1;
    }
    if (!out.empty()) {
      std::fprintf(stderr, "error: a second directory '%s'\n", arg.c_str());
      return 1;
    }
    out = arg;
  }
  if (out.empty()) {
    std::fprintf(stderr, "error: no compiled directory given "
                         "(dtc-launch-cuda --help says how to run one)\n");
    return 1;
  }
  CompiledProgram program;
  if (std::string error =
          CompiledProgram::load(out, program, CompiledProgram::Kernels::CUDA);
      !error.empty()) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  readCompiledDir(out, options);
  options.plannedPeak = program.arenaBytes;
  BuiltinValue builtin = compiledStartingValues(out);
  ModelWriter noExport = [](const std::string &, const std::string &,
                            const std::map<std::string, Tensor> &) {
    return std::string("dtc-launch-cuda does not write ONNX models: export "
                       "from its checkpoint (--save) with dtc-run");
  };
  auto train = [&](Communicator *comm) {
    std::string error;
    std::unique_ptr<StepEngine> engine =
        createCUDAEngine(program, out, comm, error, profile);
    if (!engine) {
      std::fprintf(stderr, "error: %s\n", error.c_str());
      return 1;
    }
    return runTraining(program.signature, options, *engine, builtin, readNpyDir,
                       noExport, comm);
  };
  if (program.signature.mesh.axes.empty())
    return train(nullptr);
  return runOnMPIRanks(argc, argv, program.signature.mesh, train);
}
