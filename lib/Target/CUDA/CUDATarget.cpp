//===- CUDATarget.cpp - kernels as CUDA C++ for NVIDIA GPUs ---------------===//
//
// Every kernel's CUDA C++ (EmitKernels.cpp) goes into one kernels.cu after
// the prelude; nvcc compiles it ahead of time into a fatbin (the launcher
// loads it with the driver API: no compiler where the program runs), and
// ptxas's report of each kernel's registers and spills is kept beside it.
// The emulated build compiles the same file as host C++ with a
// `NAME_packed(void **args, ...)` entry per kernel, the CPU launcher's
// calling convention.
//
//===----------------------------------------------------------------------===//

#include "dtc/Target/CUDA/CUDATarget.h"

#include "EmitKernels.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <map>

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// nvcc: $CUDA_HOME/bin, /usr/local/cuda/bin, then PATH.
std::optional<std::string> findNvcc() {
  for (const char *root :
       {static_cast<const char *>(std::getenv("CUDA_HOME")), "/usr/local/cuda"})
    if (root) {
      std::string path = std::string(root) + "/bin/nvcc";
      if (llvm::sys::fs::can_execute(path))
        return path;
    }
  if (llvm::ErrorOr<std::string> nvcc = llvm::sys::findProgramByName("nvcc"))
    return *nvcc;
  return std::nullopt;
}

/// Runs `args`, its output (stdout and stderr) into `log`; an error at
/// `where` naming `what` when it fails.
LogicalResult run(ArrayRef<std::string> args, const std::string &log,
                  const std::string &what, Operation *where) {
  SmallVector<StringRef> refs(args.begin(), args.end());
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                          StringRef(log)};
  std::string message;
  int status = llvm::sys::ExecuteAndWait(args.front(), refs, std::nullopt,
                                         redirects, 0, 0, &message);
  if (status == 0)
    return success();
  std::string output;
  if (auto buffer = llvm::MemoryBuffer::getFile(log))
    output = (*buffer)->getBuffer().take_back(4000).str();
  return where->emitError(what)
         << " failed (" << args.front() << " exited with " << status
         << (message.empty() ? "" : ": " + message) << "):\n"
         << output;
}

class CUDAKernels : public KernelTarget {
public:
  CUDAKernels(const CUDATargetOptions &options, CUDAProgramSummary &summary)
      : options(options), summary(summary) {}

  std::string programKind() const override { return "dtc-cuda-program"; }

  // The prelude's fused attention needs bf16/f16 tensor cores (sm_80 on).
  bool fusesAttention() const override {
    int arch = 0;
    StringRef(options.arch).drop_front(3).getAsInteger(10, arch);
    return arch >= 80;
  }

  FailureOr<std::string> addKernel(Operation *op, StringRef name) override {
    FailureOr<CUDAKernel> kernel = emitCUDAKernel(op, name);
    if (failed(kernel))
      return failure();
    source += "\n" + kernel->source;
    packed += kernel->packedEntry;
    auto fusion = dyn_cast<FusionOp>(op);
    opOf[name.str()] = fusion ? stringifyFusionKind(fusion.getKind()).str()
                              : op->getName().getStringRef().str();
    return " grid=" + std::to_string(kernel->grid) +
           " block=" + std::to_string(kernel->block) +
           (kernel->sharedBytes ? " smem=" + std::to_string(kernel->sharedBytes)
                                : std::string()) +
           (kernel->flops ? llvm::formatv(" flops={0:e6}", kernel->flops).str()
                          : std::string());
  }

  LogicalResult writeKernels(const std::string &dir,
                             Operation *where) override {
    std::string path = dir + "/kernels.cu";
    {
      std::error_code ec;
      llvm::raw_fd_ostream os(path, ec);
      if (ec)
        return where->emitError("cannot write '")
               << path << "': " << ec.message();
      os << cudaKernelPrelude() << source
         << "\n#ifdef DTC_CUDA_EMULATE\n// The CPU launcher's entries.\n"
         << packed << "#endif\n";
    }
    std::optional<std::string> nvcc = findNvcc();
    if (!nvcc)
      return where->emitError(
          "--target cuda compiles its kernels with nvcc, which is not in "
          "$CUDA_HOME/bin, /usr/local/cuda/bin or on PATH: install the CUDA "
          "toolkit");
    std::string arch = options.arch.substr(options.arch.find('_') + 1);
    std::string ptxasLog = dir + "/ptxas.txt";
    // (Warning 177: an index a kernel declares but does not read.)
    if (failed(run({*nvcc, "-fatbin", "-O3", "-std=c++17", "-diag-suppress=177",
                    "-gencode=arch=compute_" + arch + ",code=[sm_" + arch +
                        ",compute_" + arch + "]",
                    "-Xptxas", "-v", path, "-o", dir + "/kernels.fatbin"},
                   ptxasLog, "compiling the kernels for " + options.arch,
                   where)))
      return failure();
    readPtxasReport(ptxasLog);
    if (!options.emulation)
      return success();
    llvm::ErrorOr<std::string> cxx = llvm::sys::findProgramByName("c++");
    if (!cxx)
      return where->emitError("no C++ compiler 'c++' on PATH for the "
                              "emulated kernels");
    return run({*cxx, "-x", "c++", "-std=c++17", "-O1", "-fPIC", "-shared",
                "-fno-strict-aliasing", "-DDTC_CUDA_EMULATE", path, "-o",
                dir + "/kernels-emulated.so", "-lm"},
               dir + "/emulation.txt", "compiling the emulated kernels", where);
  }

private:
  /// ptxas -v's registers and spills per kernel ("Compiling entry function
  /// 'K'", then "N bytes spill stores, M bytes spill loads" and "Used R
  /// registers"), into the summary.
  void readPtxasReport(const std::string &log) {
    auto buffer = llvm::MemoryBuffer::getFile(log);
    if (!buffer)
      return;
    std::string kernel;
    SmallVector<StringRef> lines;
    (*buffer)->getBuffer().split(lines, '\n');
    for (StringRef line : lines) {
      if (size_t at = line.find("entry function '"); at != StringRef::npos) {
        kernel = line.drop_front(at + 16)
                     .take_until([](char c) { return c == '\''; })
                     .str();
        continue;
      }
      if (size_t at = line.find("bytes spill stores"); at != StringRef::npos) {
        StringRef before = line.take_front(at).rtrim();
        int64_t bytes = 0;
        before.drop_front(before.rfind(',') + 1).trim().getAsInteger(10, bytes);
        if (bytes > 0) {
          summary.spillBytes += bytes;
          summary.spilling.push_back(kernel + " (" + opOf[kernel] +
                                     "): " + std::to_string(bytes) + " bytes");
        }
        continue;
      }
      if (size_t at = line.find("Used "); at != StringRef::npos) {
        int64_t registers = 0;
        line.drop_front(at + 5)
            .take_until([](char c) { return c == ' '; })
            .getAsInteger(10, registers);
        summary.maxRegisters = std::max(summary.maxRegisters, registers);
      }
    }
  }

  const CUDATargetOptions &options;
  CUDAProgramSummary &summary;
  std::string source, packed;
  std::map<std::string, std::string> opOf;
};

} // namespace

FailureOr<CUDAProgramSummary>
mlir::dtc::compileCUDAProgram(func::FuncOp step, const StepSignature &signature,
                              const std::string &dir,
                              const CUDATargetOptions &options) {
  if (!StringRef(options.arch).starts_with("sm_"))
    return step.emitError("--gpu-arch takes an architecture like sm_90, not '")
           << options.arch << "'";
  CUDAProgramSummary summary;
  CUDAKernels target(options, summary);
  FailureOr<ProgramSummary> program =
      buildProgram(step, signature, dir, target);
  if (failed(program))
    return failure();
  summary.program = *program;
  return summary;
}
