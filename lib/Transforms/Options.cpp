//===- Options.cpp - printing pass and pipeline options -------------------===//

#include "dtc/Transforms/Options.h"

#include <cstdio>
#include <cstdlib>

using namespace mlir::dtc;

llvm::raw_ostream &mlir::dtc::operator<<(llvm::raw_ostream &os,
                                         ExactDouble d) {
  // The fewest significant digits that parse back to the same double.
  char text[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof(text), "%.*g", digits, d.value);
    if (std::strtod(text, nullptr) == d.value)
      break;
  }
  return os << text;
}
