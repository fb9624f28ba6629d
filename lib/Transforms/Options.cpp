//===- Options.cpp - printing and checking pass and pipeline options ------===//

#include "dtc/Transforms/Options.h"

#include "mlir/IR/Operation.h"

#include <cmath>
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

OptionRanges &OptionRanges::check(llvm::StringRef name, double value,
                                  double low, double high, bool lowOpen,
                                  bool highOpen) {
  bool below = lowOpen ? !(value > low) : !(value >= low);
  bool above = highOpen ? !(value < high) : !(value <= high);
  if (!first.empty() || (std::isfinite(value) && !below && !above))
    return *this;
  std::string what;
  llvm::raw_string_ostream os(what);
  os << "option '" << name << "' is " << ExactDouble(value) << ": it must be ";
  if (std::isfinite(low) && std::isfinite(high))
    os << "in " << (lowOpen ? "(" : "[") << ExactDouble(low) << ", "
       << ExactDouble(high) << (highOpen ? ")" : "]");
  else if (std::isfinite(low))
    os << "finite and " << (lowOpen ? "above " : "at least ")
       << ExactDouble(low);
  else
    os << "finite and " << (highOpen ? "below " : "at most ")
       << ExactDouble(high);
  first = what;
  return *this;
}

OptionRanges &OptionRanges::require(bool holds, const llvm::Twine &message) {
  if (first.empty() && !holds)
    first = message.str();
  return *this;
}

llvm::LogicalResult OptionRanges::verify(Operation *op) const {
  if (first.empty())
    return llvm::success();
  op->emitError(first);
  return llvm::failure();
}
