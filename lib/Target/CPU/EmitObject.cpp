//===- EmitObject.cpp - kernels to a shared library -----------------------===//
//
// One LLVM module for all of a rank program's kernels, optimised and
// emitted to objects in process (split by function over the host's
// threads); the one subprocess is the link into a shared library
// (`cc -shared`), which the launcher dlopens.
//
//===----------------------------------------------------------------------===//

#include "EmitObject.h"

#include "dtc/Conversion/FusionToLinalg.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <thread>

using namespace mlir;

namespace {

/// void K_packed(void **args, i64 part, i64 parts) {
///   K(args[0], args[1], ..., [part, parts]);
/// }
/// (the part and the number of parts for a kernel whose rows are split
/// among threads: its integer arguments).
void addPackedEntries(llvm::Module &module) {
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  std::vector<llvm::Function *> kernels;
  for (llvm::Function &f : module)
    if (!f.isDeclaration() && f.getName().starts_with("dtc_kernel_"))
      kernels.push_back(&f);
  for (llvm::Function *kernel : kernels) {
    auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                                         {ptr, i64, i64}, false);
    auto *packed =
        llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                               kernel->getName() + "_packed", module);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", packed));
    std::vector<llvm::Value *> args;
    unsigned buffers = 0, integers = 0;
    for (llvm::Argument &arg : kernel->args()) {
      if (arg.getType()->isIntegerTy()) {
        args.push_back(packed->getArg(1 + integers++));
        continue;
      }
      llvm::Value *slot =
          b.CreateConstGEP1_64(ptr, packed->getArg(0), buffers++);
      args.push_back(b.CreateLoad(ptr, slot));
    }
    b.CreateCall(kernel, args);
    b.CreateRetVoid();
    // Only the packed entries are the library's interface.
    kernel->setLinkage(llvm::GlobalValue::InternalLinkage);
  }
}

/// At most this many threads optimise and emit a program's kernels.
constexpr unsigned kMaxCodegenThreads = 8;

/// Optimises `module` for this host's CPU and features (the program runs
/// where it was compiled, or on a machine of the same kind) and writes its
/// object to `path`; an error message, or "".
std::string optimiseAndEmit(llvm::Module &module, const std::string &path) {
  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return "no LLVM target for this host: " + error;
  llvm::SubtargetFeatures features;
  for (const auto &[feature, enabled] : llvm::sys::getHostCPUFeatures())
    features.AddFeature(feature, enabled);
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), features.getString(),
      llvm::TargetOptions(), llvm::Reloc::PIC_));
  module.setTargetTriple(triple);
  module.setDataLayout(machine->createDataLayout());
  // -O2: on tiny_llama it compiles in 7.1 s against -O3's 8.5 s, and its
  // kernels ran 150 us a step against -O3's 190-230 (docs/Codegen.md).
  if (llvm::Error err =
          mlir::makeOptimizingTransformer(2, 0, machine.get())(&module))
    return "optimising the kernels failed: " + llvm::toString(std::move(err));
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return "cannot write '" + path + "': " + ec.message();
  llvm::legacy::PassManager pm;
  if (machine->addPassesToEmitFile(pm, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return "this host's LLVM target cannot emit objects";
  pm.run(module);
  return "";
}

} // namespace

LogicalResult mlir::dtc::emitKernelLibrary(ModuleOp kernels,
                                           const std::string &dir) {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
  if (failed(lowerKernelsToLLVM(kernels, /*barePointers=*/true)))
    return kernels.emitError("the kernels could not be lowered to LLVM");
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> module =
      translateModuleToLLVMIR(kernels, llvmContext, "dtc_kernels");
  if (!module)
    return kernels.emitError("the kernels could not be translated to LLVM IR");
  addPackedEntries(*module);

  // The module is split by function into one part per hardware thread
  // (llvm::SplitModule, locals used across parts made hidden globals), each
  // optimised and emitted on its own thread in its own LLVMContext (a
  // context is not shared between threads: each part travels as bitcode).
  unsigned threads = std::min(
      llvm::hardware_concurrency().compute_thread_count(), kMaxCodegenThreads);
  std::vector<llvm::SmallVector<char, 0>> parts;
  if (threads > 1)
    llvm::SplitModule(*module, threads,
                      [&](std::unique_ptr<llvm::Module> part) {
                        llvm::raw_svector_ostream os(parts.emplace_back());
                        llvm::WriteBitcodeToFile(*part, os);
                      });
  std::vector<std::string> objects, errors;
  if (parts.empty()) {
    objects.push_back(dir + "/kernels.o");
    errors.push_back(optimiseAndEmit(*module, objects.back()));
  } else {
    objects.resize(parts.size());
    errors.resize(parts.size());
    std::vector<std::thread> workers;
    for (size_t i = 0; i < parts.size(); ++i)
      workers.emplace_back([&, i] {
        objects[i] = dir + "/kernels." + std::to_string(i) + ".o";
        llvm::LLVMContext context;
        llvm::Expected<std::unique_ptr<llvm::Module>> part =
            llvm::parseBitcodeFile(
                llvm::MemoryBufferRef(
                    llvm::StringRef(parts[i].data(), parts[i].size()), "part"),
                context);
        errors[i] = part ? optimiseAndEmit(**part, objects[i])
                         : llvm::toString(part.takeError());
      });
    for (std::thread &worker : workers)
      worker.join();
  }
  for (const std::string &error : errors)
    if (!error.empty())
      return kernels.emitError(error);

  llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName("cc");
  if (!cc)
    return kernels.emitError("no C compiler driver 'cc' on PATH to link the "
                             "kernels into a shared library: install gcc "
                             "(scripts/install-deps.sh does)");
  std::string library = dir + "/kernels.so";
  llvm::SmallVector<llvm::StringRef> args{*cc, "-shared", "-o", library};
  args.append(objects.begin(), objects.end());
  args.push_back("-lm");
  std::string message;
  if (int status = llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, {}, 0, 0,
                                             &message);
      status != 0)
    return kernels.emitError("linking '")
           << library << "' failed (" << *cc << " exited with " << status
           << (message.empty() ? "" : ": " + message) << ")";
  for (const std::string &object : objects)
    llvm::sys::fs::remove(object);
  return success();
}
