//===- dtc-translate.cpp - translations into and out of dtc ---------------===//
//
//   dtc-translate --import-onnx model.onnx [--bind-inputs DIR] -o out.mlir
//
//===----------------------------------------------------------------------===//

#include "dtc/Dialect/DTC/IR/DTCDialect.h"
#include "dtc/Import/ONNX/ONNXImporter.h"
#include "dtc/Runtime/ONNX/TensorProto.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

static llvm::cl::opt<std::string> bindInputsDir(
    "bind-inputs",
    llvm::cl::desc("Directory of tensors (.npy, or ONNX TensorProto .pb as in "
                   "ONNX test-data sets) for graph inputs; those that "
                   "determine shapes (Reshape's shape, Slice's starts, axes, "
                   "...) are folded in as constants"),
    llvm::cl::value_desc("dir"));

static llvm::cl::list<std::string> inputShapes(
    "input-shape",
    llvm::cl::desc("Shape of a graph input, NAME=DxDx... (repeatable, or "
                   "comma-separated): binds symbolic dimensions or replaces "
                   "static ones"),
    llvm::cl::value_desc("name=8x16"));

static llvm::cl::opt<std::string>
    freeze("freeze", llvm::cl::desc("Regex of float initializers to import as "
                                    "constants instead of parameters"));
static llvm::cl::opt<std::string>
    trainable("trainable",
              llvm::cl::desc("Regex of the float initializers that are "
                             "parameters (default: those the exporter "
                             "recorded as parameters, else all)"));
static llvm::cl::opt<bool> shapesOnly(
    "shapes-only",
    llvm::cl::desc("Import parameters from their shapes alone, without "
                   "reading their data (external data files may be absent)"));

static llvm::cl::opt<bool> dropout(
    "dropout",
    llvm::cl::desc("Import the model's Dropout nodes as training dropout "
                   "(masks keyed on --seed, the site and the step), as "
                   "dtc-compile --dropout does; without it they are the "
                   "identity"));
static llvm::cl::opt<int64_t> seed("seed", llvm::cl::init(0),
                                   llvm::cl::desc("Seed of the dropout masks"));
static llvm::cl::opt<bool> strictParams(
    "strict-params",
    llvm::cl::desc("Refuse an initializer torch's ONNX optimizer computed "
                   "from a parameter and other values, instead of training "
                   "it in the parameter's place with a warning"));
static llvm::cl::opt<bool> noRetie(
    "no-retie",
    llvm::cl::desc("Keep apart a parameter and the transposed copy torch's "
                   "ONNX optimizer stored of it (a tie it broke), instead of "
                   "training them as one"));

using RV = dtc::ONNXImportOptions::RunningVariance;
static llvm::cl::opt<RV> runningVariance(
    "batch-norm-variance",
    llvm::cl::desc(
        "Running variance of training-mode BatchNormalization: 'unbiased' "
        "(PyTorch's BatchNorm), 'population' (ONNX's reference), or 'auto' "
        "(unbiased for models whose producer is pytorch, else population)"),
    llvm::cl::init(RV::Auto),
    llvm::cl::values(
        clEnumValN(RV::Auto, "auto", "unbiased for pytorch models"),
        clEnumValN(RV::Unbiased, "unbiased", "n / (n - 1) times the batch's"),
        clEnumValN(RV::Population, "population", "the batch's variance")));

static OwningOpRef<Operation *> importONNX(llvm::SourceMgr &sourceMgr,
                                           MLIRContext *context) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  dtc::ONNXImportOptions options;
  options.freeze = freeze;
  options.runningVariance = runningVariance;
  options.trainable = trainable;
  options.shapesOnly = shapesOnly;
  options.trainingDropout = dropout;
  options.dropoutSeed = seed;
  options.retie = !noRetie;
  options.strictParams = strictParams;
  std::string shapeError =
      dtc::parseInputShapes(inputShapes, options.inputShapes);
  if (!shapeError.empty()) {
    emitError(UnknownLoc::get(context)) << shapeError;
    return nullptr;
  }
  if (!bindInputsDir.empty()) {
    std::string error;
    if (!dtc::readTensorDir(bindInputsDir, options.boundInputs, error)) {
      emitError(UnknownLoc::get(context)) << error;
      return nullptr;
    }
  }
  return dtc::importONNXModel(context, buffer->getBuffer(),
                              buffer->getBufferIdentifier().str(), options);
}

int main(int argc, char **argv) {
  TranslateToMLIRRegistration importRegistration(
      "import-onnx", "Import an ONNX model (.onnx) into the dtc dialect",
      importONNX, [](DialectRegistry &registry) {
        registry.insert<dtc::DTCDialect, func::FuncDialect>();
      });
  return failed(mlirTranslateMain(argc, argv, "dtc translation driver\n"));
}
