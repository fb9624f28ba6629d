//===- dtc-launch.cpp - run a compiled CPU program ------------------------===//
//
//   [mpirun -np N] dtc-launch OUT (--data FILE | --batch DIR) [--steps K]
//                             [training options] [--threads N]
//
// Trains with the per-rank program dtc-compile --target cpu wrote to OUT
// (program.txt, kernels.so, init/): the same loop, options (RunOptions.h),
// progress lines, per-rank report and dumps as `dtc-run OUT` on the
// reference executor, which starts this binary for such an OUT. Links
// neither LLVM nor MLIR: only the dtc runtime, OpenBLAS, MPI and protobuf
// (for .pb tensors).
//
//===----------------------------------------------------------------------===//

#include "dtc/Runtime/CPU/CPUEngine.h"
#include "dtc/Runtime/MPI/MPICommunicator.h"
#include "dtc/Runtime/ONNX/ModelExport.h"
#include "dtc/Runtime/ONNX/TensorProto.h"
#include "dtc/Runtime/TensorIO.h"
#include "dtc/Runtime/TrainingLoop.h"

#include <cblas.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

using namespace mlir::dtc;

static const char *kUsage =
    "dtc-launch: runs a training step compiled with dtc-compile --target cpu\n"
    "\n"
    "  dtc-launch OUT (--data FILE | --batch DIR) [--steps K] [options]\n"
    "  mpirun -np N dtc-launch OUT ...   (a step compiled for N ranks)\n"
    "\n"
    "`dtc-run OUT ...` starts this program for such an OUT; `dtc-run OUT\n"
    "--engine reference ...` runs the same step on the reference executor.\n"
    "\n";

static const char *kEngineUsage =
    "\nCompiled-program options:\n"
    "  --check-arena      fill each arena slot with NaN once its last reader\n"
    "                     has run (the trajectory must not change)\n"
    "  --trace FILE       write a Chrome trace (Perfetto, about:tracing) of\n"
    "                     every kernel, GEMM and collective, a track per rank\n"
    "  --threads N        threads per rank (default 1): the compiled kernels\n"
    "                     share their rows among them, and OpenBLAS's matmuls\n"
    "                     use as many; the kernels' results do not depend\n"
    "                     on N\n"
    "  --min-work-per-thread E\n"
    "                     a kernel gets one more thread per E elements it\n"
    "                     computes (default 16384: below about 10 us of\n"
    "                     work, waking a thread costs more than it saves)\n"
    "  --emulate-cuda     run a program compiled with --target cuda\n"
    "                     --cuda-emulation: its CUDA kernels as host code,\n"
    "                     one thread per block (kernels-emulated.so), its\n"
    "                     GEMMs on OpenBLAS and its collectives on MPI; what\n"
    "                     the generated kernels compute, checked on CPU ranks\n"
    "  --no-overlap       complete each collective where the program starts\n"
    "                     it, rather than behind the kernels that follow\n"
    "                     until its wait (the report's exposed\n"
    "                     communication then shows what overlap hides)\n";

static void printUsage() {
  std::printf("%s%s%s", kUsage, kRunOptionsHelp, kEngineUsage);
}

int main(int argc, char **argv) {
  // OpenBLAS's threads spin for about 2^28 cycles after each GEMM before
  // they sleep, on the cores the kernels' workers then share: on 2 threads
  // that made medium_gpt's kernels slower than on one. Their spin is read
  // from the environment when the library loads, before main: set it,
  // start again (the same process), unless the user has set it.
  if (!std::getenv("OPENBLAS_THREAD_TIMEOUT")) {
    setenv("OPENBLAS_THREAD_TIMEOUT", "4", /*overwrite=*/1);
    execv("/proc/self/exe", argv);
  }
  RunOptions options;
  std::vector<std::string> rest;
  if (std::string error = parseRunOptions(
          std::vector<std::string>(argv + 1, argv + argc), options, rest);
      !error.empty()) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  std::string out;
  int64_t threads = 1, minWorkPerThread = 16384;
  CPUEngineOptions engineOptions;
  std::string tracePath;
  bool emulateCuda = false;
  for (size_t i = 0; i < rest.size(); ++i) {
    std::string arg = rest[i];
    std::string value;
    // --flag=value or --flag value (but for the switches).
    if (size_t eq = arg.find('=');
        arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (arg.rfind("--", 0) == 0 && arg != "--help" &&
               arg != "--check-arena" && arg != "--no-overlap" &&
               arg != "--emulate-cuda" && i + 1 < rest.size()) {
      value = rest[++i];
    }
    auto atLeastOne = [&](int64_t &to) {
      char *end = nullptr;
      to = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end || to < 1) {
        std::fprintf(stderr,
                     "error: %s is '%s': it must be an integer of at least "
                     "1\n",
                     arg.c_str(), value.c_str());
        std::exit(1);
      }
    };
    if (arg == "--check-arena") {
      engineOptions.checkArena = true;
    } else if (arg == "--no-overlap") {
      engineOptions.overlap = false;
    } else if (arg == "--emulate-cuda") {
      emulateCuda = true;
    } else if (arg == "--help" || arg == "-h") {
      printUsage();
      return 0;
    } else if (arg == "--trace") {
      tracePath = value;
    } else if (arg == "--threads") {
      atLeastOne(threads);
    } else if (arg == "--min-work-per-thread") {
      atLeastOne(minWorkPerThread);
    } else if (arg == "--engine") {
      if (value != "cpu" && value != "auto") {
        std::fprintf(stderr, "error: dtc-launch runs compiled programs only "
                             "(--engine cpu); use dtc-run for the reference "
                             "executor\n");
        return 1;
      }
    } else if (arg.rfind("-", 0) == 0) {
      std::fprintf(stderr,
                   "error: unknown option '%s' (dtc-launch --help lists "
                   "them)\n",
                   arg.c_str());
      return 1;
    } else if (out.empty()) {
      out = arg;
    } else {
      std::fprintf(stderr, "error: a second directory '%s'\n", arg.c_str());
      return 1;
    }
  }
  if (out.empty()) {
    std::fprintf(stderr, "error: no compiled directory given (dtc-launch "
                         "--help says how to run one)\n");
    return 1;
  }
  // One thread per rank unless asked: OpenBLAS would otherwise start one
  // per core in every rank of an oversubscribed mpirun.
  openblas_set_num_threads(static_cast<int>(threads));
  CompiledProgram program;
  if (std::string error = CompiledProgram::load(
          out, program,
          emulateCuda ? CompiledProgram::Kernels::EmulatedCUDA
                      : CompiledProgram::Kernels::CPU);
      !error.empty()) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  readCompiledDir(out, options);
  // (Its peak is the arena, planned at compile time; the report's
  // activation peak is the unfused step's, which the interpreter runs.)
  options.plannedPeak = program.arenaBytes;
  const StepSignature &signature = program.signature;
  if (signature.stage) {
    std::fprintf(stderr,
                 "error: %s is pipeline stage %lld of a step; "
                 "dtc-launch runs whole steps only\n",
                 out.c_str(), static_cast<long long>(*signature.stage));
    return 1;
  }
  BuiltinValue builtin = compiledStartingValues(out);

  auto train = [&](Communicator *comm) {
    // A pipelined step: the ranks at pp coordinate C > 0 run OUT/pp-C's
    // program (the same signature), whose arena is their planned peak.
    const CompiledProgram *mine = &program;
    CompiledProgram own;
    RunOptions rankOptions = options;
    int64_t pp = signature.mesh.axisIndex(kPipelineAxisName);
    if (comm && pp >= 0) {
      if (int64_t c = comm->mesh().coordinates(comm->rank())[pp]; c > 0) {
        if (std::string error =
                CompiledProgram::load(out + "/pp-" + std::to_string(c), own,
                                      CompiledProgram::Kernels::CPU);
            !error.empty()) {
          std::fprintf(stderr, "error: %s\n", error.c_str());
          return 1;
        }
        mine = &own;
      }
      rankOptions.plannedPeak = mine->arenaBytes;
      rankOptions.plannedPeakPerPipelineRank.clear();
    }
    CPUTrace trace;
    CPUEngineOptions setup = engineOptions;
    setup.trace = tracePath.empty() ? nullptr : &trace;
    setup.threads = static_cast<int>(threads);
    setup.minWork = minWorkPerThread;
    std::unique_ptr<StepEngine> engine = createCPUEngine(*mine, comm, setup);
    int status = runTraining(mine->signature, rankOptions, *engine, builtin,
                             readTensorDir, exportTrainedModel, comm);
    if (status != 0 || tracePath.empty())
      return status;
    if (std::string error = writeChromeTrace(tracePath, *mine, trace, comm);
        !error.empty()) {
      std::fprintf(stderr, "error: %s\n", error.c_str());
      return 1;
    }
    return 0;
  };
  if (signature.mesh.axes.empty())
    return train(nullptr);
  return runOnMPIRanks(argc, argv, signature.mesh, train);
}
