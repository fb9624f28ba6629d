//===- EmitObject.cpp - kernels to a shared library -----------------------===//
//
// One LLVM module for all of a rank program's kernels, optimised and
// emitted to an object in process; the one subprocess is the link into a
// shared library (`cc -shared`), which the launcher dlopens.
//
//===----------------------------------------------------------------------===//

#include "EmitObject.h"

#include "dtc/Conversion/FusionToLinalg.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

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

  // This host's CPU and features: the program runs where it was compiled
  // (or on a machine of the same kind).
  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return kernels.emitError("no LLVM target for this host: ") << error;
  llvm::SubtargetFeatures features;
  for (const auto &[feature, enabled] : llvm::sys::getHostCPUFeatures())
    features.AddFeature(feature, enabled);
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), features.getString(),
      llvm::TargetOptions(), llvm::Reloc::PIC_));
  module->setTargetTriple(triple);
  module->setDataLayout(machine->createDataLayout());
  // -O2: on tiny_llama it compiles in 7.1 s against -O3's 8.5 s, and its
  // kernels ran 150 us a step against -O3's 190-230 (docs/Codegen.md).
  if (llvm::Error err =
          makeOptimizingTransformer(2, 0, machine.get())(module.get()))
    return kernels.emitError("optimising the kernels failed: ")
           << llvm::toString(std::move(err));

  std::string object = dir + "/kernels.o";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(object, ec, llvm::sys::fs::OF_None);
    if (ec)
      return kernels.emitError("cannot write '")
             << object << "': " << ec.message();
    llvm::legacy::PassManager pm;
    if (machine->addPassesToEmitFile(pm, os, nullptr,
                                     llvm::CodeGenFileType::ObjectFile))
      return kernels.emitError("this host's LLVM target cannot emit objects");
    pm.run(*module);
  }
  llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName("cc");
  if (!cc)
    return kernels.emitError("no C compiler driver 'cc' on PATH to link the "
                             "kernels into a shared library: install gcc "
                             "(scripts/install-deps.sh does)");
  std::string library = dir + "/kernels.so";
  llvm::SmallVector<llvm::StringRef> args{*cc,     "-shared", "-o",
                                          library, object,    "-lm"};
  std::string message;
  if (int status = llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, {}, 0, 0,
                                             &message);
      status != 0)
    return kernels.emitError("linking '")
           << library << "' failed (" << *cc << " exited with " << status
           << (message.empty() ? "" : ": " + message) << ")";
  llvm::sys::fs::remove(object);
  return success();
}
