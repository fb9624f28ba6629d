//===- Options.h - enumerated pass and pipeline options ---------*- C++ -*-===//
//
// The closed sets of choices that passes, the dtc-training pipeline and
// dtc-compile take, each with its command-line spellings in one place: an
// option of one of these types rejects any other value when it is parsed
// (naming the choices, which --help lists), so no pass compares strings.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TRANSFORMS_OPTIONS_H
#define DTC_TRANSFORMS_OPTIONS_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/LogicalResult.h"

#include <string>

namespace mlir {
class Operation;
} // namespace mlir

namespace mlir::dtc {

/// A double option's value that prints back exactly (in the fewest digits
/// that parse to it): the
/// options a pipeline prints (dtc-compile's manifest) then rebuild the
/// same step. Plain double options print 7 digits, so that 1/3 (the
/// warm-up's default start factor) would come back as 0.3333333.
struct ExactDouble {
  double value = 0;
  ExactDouble() = default;
  ExactDouble(double value) : value(value) {}
  operator double() const { return value; }
};
llvm::raw_ostream &operator<<(llvm::raw_ostream &os, ExactDouble d);

/// The allowed ranges of options: [low, high] with each end open or
/// closed (an infinite end: any finite value that side). Checks keep the
/// first violation, "option 'NAME' is VALUE: it must be in [LOW, HIGH)" (or
/// "finite and at least LOW"), for a pass to report on its op.
class OptionRanges {
public:
  /// `value` in [low, high] (`lowOpen`/`highOpen`: the end excluded).
  OptionRanges &check(llvm::StringRef name, double value, double low,
                      double high, bool lowOpen = false, bool highOpen = false);
  /// A condition between options, with its own message.
  OptionRanges &require(bool holds, const llvm::Twine &message);
  /// Emits the first violation as an error on `op` and fails, or succeeds.
  llvm::LogicalResult verify(Operation *op) const;

private:
  std::string first;
};

/// The number format a step computes in.
enum class Precision { FP32, BF16, FP16 };
inline auto precisionValues() {
  return llvm::cl::values(
      clEnumValN(Precision::FP32, "fp32", "f32 throughout"),
      clEnumValN(Precision::BF16, "bf16",
                 "bf16 compute, parameters and gradients; f32 master "
                 "weights, optimizer state and loss"),
      clEnumValN(Precision::FP16, "fp16",
                 "f16 compute with f32 parameters, gradients and state, and "
                 "dynamic loss scaling"));
}

/// A 16-bit float type that dtc-mixed-precision computes in.
enum class HalfType { BF16, F16 };
inline auto halfTypeValues() {
  return llvm::cl::values(clEnumValN(HalfType::BF16, "bf16", "bfloat16"),
                          clEnumValN(HalfType::F16, "f16", "IEEE half"));
}

enum class OptimizerKind { AdamW, SGD };
inline auto optimizerKindValues() {
  return llvm::cl::values(
      clEnumValN(OptimizerKind::AdamW, "adamw",
                 "AdamW (torch.optim.AdamW: decoupled weight decay)"),
      clEnumValN(OptimizerKind::SGD, "sgd",
                 "SGD with optional (Nesterov) momentum (torch.optim.SGD)"));
}

/// How the learning rate changes over the steps.
enum class LRSchedule { Constant, WarmupCosine };
inline auto lrScheduleValues() {
  return llvm::cl::values(
      clEnumValN(LRSchedule::Constant, "constant", "lr at every step"),
      clEnumValN(LRSchedule::WarmupCosine, "warmup-cosine",
                 "PyTorch's LinearLR warm-up, then CosineAnnealingLR"));
}

/// Which parameters tensor parallelism splits without a sharding spec.
enum class TPStrategy { Megatron, None };
inline auto tpStrategyValues() {
  return llvm::cl::values(
      clEnumValN(TPStrategy::Megatron, "megatron",
                 "the column/row-parallel projection pairs it finds"),
      clEnumValN(TPStrategy::None, "none",
                 "none (only those a sharding spec names)"));
}

} // namespace mlir::dtc

template <>
class llvm::cl::parser<mlir::dtc::ExactDouble>
    : public llvm::cl::basic_parser<mlir::dtc::ExactDouble> {
public:
  parser(Option &option) : basic_parser(option) {}
  /// True on error, as llvm::cl's parsers.
  bool parse(Option &option, StringRef, StringRef arg,
             mlir::dtc::ExactDouble &result) {
    double value;
    if (arg.getAsDouble(value))
      return option.error("'" + arg + "' is not a number");
    result = value;
    return false;
  }
  StringRef getValueName() const override { return "number"; }
  void printOptionDiff(const Option &option, mlir::dtc::ExactDouble,
                       const OptionValue<mlir::dtc::ExactDouble> &,
                       size_t width) const {
    printOptionNoValue(option, width);
  }
};

#endif // DTC_TRANSFORMS_OPTIONS_H
