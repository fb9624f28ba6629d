// --memory-limit: dtc-compile fails before anything runs when a rank would
// need more than the limit, and says what takes the memory. The GPT-2
// example on one device needs 418708 bytes (parameters, gradients, AdamW
// state, activation peak); split over tp=2 a rank needs less and fits.
// RUN: rm -rf %t
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/one --memory-limit 300KB 2>&1 | FileCheck %s --check-prefix=OVER
// OVER: error: --memory-limit 300KB: a rank needs 418708 B: parameters 68480 B, gradients 68480 B, optimizer state 136968 B, activation peak 144780 B
// RUN: not ls %t/one
// RUN: dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/tp2 --mesh tp=2 --memory-limit 300KB 2>&1 | FileCheck %s --check-prefix=FITS
// FITS: dtc-compile: wrote
// Binary units, and sizes that do not parse:
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/x --memory-limit 0.25MiB 2>&1 | FileCheck %s --check-prefix=MIB
// MIB: error: --memory-limit 0.25MiB: a rank needs 418708 B
// RUN: not dtc-compile %S/../../examples/tiny_transformer/model.onnx -o %t/x --memory-limit lots 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: --memory-limit: cannot read 'lots' as a size (e.g. 80GB, 512MiB, 1000000)
