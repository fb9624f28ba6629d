//===- RematPolicy.cpp - dtc-remat's policy -------------------------------===//

#include "dtc/Analysis/Memory.h"
#include "dtc/Transforms/Remat/Passes.h"

using namespace mlir;
using namespace mlir::dtc;

std::string RematPolicy::parse(StringRef text, RematPolicy &policy) {
  policy = RematPolicy();
  const char *expected =
      "none, full, every=K, selective or budget=SIZE|auto (e.g. "
      "budget=2GB)";
  if (text == "none" || text.empty())
    return "";
  if (text == "full") {
    policy.kind = Kind::Full;
    return "";
  }
  if (text == "selective") {
    policy.kind = Kind::Selective;
    return "";
  }
  if (StringRef k = text; k.consume_front("every=")) {
    policy.kind = Kind::Every;
    if (k.getAsInteger(10, policy.every) || policy.every < 1)
      return "'" + text.str() + "': K must be a positive integer";
    return "";
  }
  if (StringRef size = text; size.consume_front("budget=")) {
    policy.kind = Kind::Budget;
    if (size == "auto") {
      policy.budgetAuto = true;
      return "";
    }
    double bytes = parseByteSize(size);
    if (bytes <= 0)
      return "'" + text.str() +
             "': cannot read the budget as a size (e.g. 80GB, 512MiB, "
             "1000000)";
    policy.budgetBytes = static_cast<int64_t>(bytes);
    return "";
  }
  return "unknown policy '" + text.str() + "' (" + expected + ")";
}

std::string RematPolicy::str() const {
  switch (kind) {
  case Kind::None:
    return "none";
  case Kind::Full:
    return "full";
  case Kind::Every:
    return "every=" + std::to_string(every);
  case Kind::Selective:
    return "selective";
  case Kind::Budget:
    return budgetAuto ? "budget=auto" : "budget=" + std::to_string(budgetBytes);
  }
  return "";
}
