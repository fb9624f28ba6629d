//===- CPUTarget.cpp - kernels compiled to native code --------------------===//
//
// Each kernel is an MLIR function of memrefs (buildLoopKernel for a group,
// buildOpKernel for an op), all in one module that emitKernelLibrary
// lowers, optimises and links into kernels.so.
//
//===----------------------------------------------------------------------===//

#include "dtc/Target/CPU/CPUTarget.h"

#include "EmitObject.h"

#include "dtc/Conversion/DTCToSCF.h"
#include "dtc/Conversion/FusionToLinalg.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"

using namespace mlir;
using namespace mlir::dtc;

namespace {

class CPUKernels : public KernelTarget {
public:
  explicit CPUKernels(Location loc) : kernels(ModuleOp::create(loc)) {}

  std::string programKind() const override { return "dtc-cpu-program"; }

  FailureOr<std::string> addKernel(Operation *op, StringRef name) override {
    FailureOr<func::FuncOp> kernel = failure();
    if (auto fusion = dyn_cast<FusionOp>(op))
      kernel = buildLoopKernel(fusion, *kernels, name);
    else
      kernel = buildOpKernel(op, *kernels, name);
    if (failed(kernel))
      return failure();
    (*kernel)->removeAttr("llvm.emit_c_interface");
    // (Rows the launcher may split among threads, and the work they hold.)
    auto rows = (*kernel)->getAttrOfType<IntegerAttr>(kKernelRowsAttr);
    if (!rows)
      return std::string();
    return " rows=" + std::to_string(rows.getInt()) + " work=" +
           std::to_string(
               (*kernel)->getAttrOfType<IntegerAttr>(kKernelWorkAttr).getInt());
  }

  LogicalResult writeKernels(const std::string &dir, Operation *) override {
    return emitKernelLibrary(*kernels, dir);
  }

private:
  OwningOpRef<ModuleOp> kernels;
};

} // namespace

FailureOr<ProgramSummary>
mlir::dtc::compileCPUProgram(func::FuncOp step, const StepSignature &signature,
                             const std::string &dir) {
  MLIRContext *context = step.getContext();
  DialectRegistry registry;
  registerKernelDialects(registry);
  context->appendDialectRegistry(registry);
  context->loadAllAvailableDialects();
  CPUKernels target(step.getLoc());
  return buildProgram(step, signature, dir, target);
}
