//===- LowerToLLVM.cpp - kernels to the LLVM dialect ----------------------===//
//
// linalg on memrefs -> vector tiles and loops -> control flow -> LLVM; f32
// exp, tanh and
// erf as polynomials, powers by small constants as products, other math
// ops as LLVM intrinsics or libm calls. No fast-math flags: inf and NaN
// behave as IEEE says, which fp16 loss scaling's overflow checks rely on.
//
//===----------------------------------------------------------------------===//

#include "dtc/Conversion/FusionToLinalg.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace {

/// Powers by small constant exponents (GELU's x^3, a squared gradient) as
/// multiplications and square roots, and f32 exp, tanh and erf as
/// polynomials in arith ops (MLIR's approximations), which LLVM's loop
/// vectorizer can widen, where a libm call would keep the loop scalar.
/// Their error against libm is measured by
/// unittests/Conversion/MathApproximationTest.cpp; inf and NaN pass
/// through as IEEE says.
struct KernelMath : public PassWrapper<KernelMath, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(KernelMath)
  StringRef getArgument() const final { return "dtc-kernel-math"; }
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathAlgebraicSimplificationPatterns(patterns);
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return name == "math.exp" || name == "math.tanh" || name == "math.erf";
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

std::unique_ptr<Pass> createKernelMath() {
  return std::make_unique<KernelMath>();
}

} // namespace

void mlir::dtc::registerKernelDialects(DialectRegistry &registry) {
  registry
      .insert<DTCDialect, func::FuncDialect, arith::ArithDialect,
              math::MathDialect, linalg::LinalgDialect, memref::MemRefDialect,
              scf::SCFDialect, cf::ControlFlowDialect, affine::AffineDialect,
              vector::VectorDialect, LLVM::LLVMDialect>();
  // (Tiling and splitting linalg ops for dtc-vectorize-kernels.)
  linalg::registerTilingInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

LogicalResult mlir::dtc::lowerKernelsToLLVM(ModuleOp module,
                                            bool barePointers) {
  PassManager pm(module.getContext());
  pm.addNestedPass<func::FuncOp>(createVectorizeKernelsPass());
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addNestedPass<func::FuncOp>(createSplitKernelRowsPass());
  // The kernels compute bf16 and f16 values in f32 and round each op's
  // result (not arith-emulate-unsupported-floats, which would keep values
  // in f32 from op to op); the bf16 conversions become integer bit
  // manipulation (round to nearest even), which needs neither AVX512-BF16
  // nor a libgcc helper.
  arith::ArithExpandOpsPassOptions expandOptions;
  expandOptions.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expandOptions));
  // (A reduction's keep_dims view is a collapse_shape: to plain strides.)
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createKernelMath());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertMathToLLVMPass());
  // (Math ops on vectors that become libm calls are unrolled to scalars
  // by vector ops: vector to LLVM after them.)
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  ConvertFuncToLLVMPassOptions funcOptions;
  funcOptions.useBarePtrCallConv = barePointers;
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  return pm.run(module);
}
