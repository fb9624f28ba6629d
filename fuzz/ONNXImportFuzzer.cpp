//===- ONNXImportFuzzer.cpp - libFuzzer target over the ONNX importer -----===//
//
// Feeds arbitrary bytes to importONNXModel as a model file. Any input must
// end in a module or in diagnostics; a crash, hang or sanitizer report is a
// bug. Built by scripts/fuzz-importer.sh (clang, -fsanitize=fuzzer,address).
//
//===----------------------------------------------------------------------===//

#include "dtc/Import/ONNX/ONNXImporter.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A fresh context per input: parameter blobs must not pile up.
  mlir::MLIRContext context;
  context.disableMultithreading();
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  mlir::dtc::ONNXImportOptions options;
  mlir::dtc::importONNXModel(
      &context, llvm::StringRef(reinterpret_cast<const char *>(data), size),
      "fuzz.onnx", options);
  return 0;
}
