//===- KernelCheck.cpp - a compiled CPU kernel against the oracle ---------===//

#include "KernelCheck.h"

#include "dtc/Conversion/DTCToSCF.h"
#include "dtc/Conversion/FusionToLinalg.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Interpreter/Interpreter.h"
#include "dtc/Interpreter/TensorAttr.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// A zero tensor of `value`'s type.
Tensor tensorOf(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return Tensor(*dtypeOf(type.getElementType()), Shape(type.getShape()));
}

bool isGroup(Operation *op) { return isa<FusionOp>(op); }

/// The size of the dimension operand `index` of `op` indexes, if it is an
/// index operand (gathers, scatters).
std::optional<int64_t> indexedSize(Operation *op, unsigned index) {
  if (index != 1 || !isa<GatherOp, GatherElementsOp, ScatterAddOp,
                         ScatterReduceOp, ScatterElementsAddOp>(op))
    return std::nullopt;
  auto input = cast<RankedTensorType>(op->getOperand(0).getType());
  int64_t dim = cast<IntegerAttr>(op->getAttr("dim")).getInt();
  return input.getDimSize(dim);
}

/// The operands' random values; with `specials`, about one float in 17 is
/// an infinity or a NaN.
std::vector<Tensor> randomInputs(Operation *op, std::mt19937 &rng,
                                 bool specials) {
  std::uniform_real_distribution<double> value(-3, 3);
  std::vector<Tensor> inputs;
  ValueRange operands = op->getOperands();
  for (auto [i, operand] : llvm::enumerate(operands)) {
    Tensor t = tensorOf(operand);
    if (t.isFloat()) {
      for (double &x : t.floats()) {
        x = value(rng);
        if (specials && rng() % 17 == 0)
          x = (rng() % 3 == 0) ? NAN : (rng() % 2 ? INFINITY : -INFINITY);
      }
    } else if (std::optional<int64_t> size = indexedSize(op, i)) {
      // In range, negative ones (counted from the end) included.
      for (int64_t &x : t.ints())
        x = static_cast<int64_t>(rng() % (2 * *size)) - *size;
    } else {
      bool isBool = t.dtype() == DType::Bool;
      for (int64_t &x : t.ints())
        x = isBool ? rng() % 2 : rng() % 8;
    }
    t.roundToElementType();
    inputs.push_back(std::move(t));
  }
  return inputs;
}

} // namespace

bool mlir::dtc::test::hasCheckableKernel(Operation *op) {
  return isGroup(op) || hasOpKernel(op);
}

std::string mlir::dtc::test::runKernel(Operation *op,
                                       const std::vector<Tensor> &inputs,
                                       std::vector<Tensor> &outputs) {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;

  OwningOpRef<ModuleOp> kernels =
      ModuleOp::create(UnknownLoc::get(op->getContext()));
  FailureOr<func::FuncOp> kernel =
      isGroup(op) ? buildLoopKernel(cast<FusionOp>(op), *kernels, "kernel")
                  : buildOpKernel(op, *kernels, "kernel");
  if (failed(kernel))
    return "the kernel could not be built";
  (*kernel)->removeAttr("llvm.emit_c_interface");
  // A kernel whose rows threads share runs as three parts, one after the
  // other (more parts than rows included): together they must compute it
  // all.
  bool split = (*kernel)->hasAttr(kKernelRowsAttr);
  // Bare pointers, as the CPU target calls its kernels.
  if (failed(lowerKernelsToLLVM(*kernels, /*barePointers=*/true)))
    return "the kernel could not be lowered to LLVM";
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = makeOptimizingTransformer(2, 0, nullptr);
  auto engine = ExecutionEngine::create(*kernels, engineOptions);
  if (!engine)
    return "the kernel did not compile: " + llvm::toString(engine.takeError());

  // The kernel on buffers of each value's element type.
  std::vector<std::vector<char>> buffers;
  for (const Tensor &t : inputs)
    buffers.push_back(t.toBytes());
  for (Value result : op->getResults())
    buffers.push_back(tensorOf(result).toBytes());
  std::vector<void *> pointers, args;
  for (std::vector<char> &b : buffers)
    pointers.push_back(b.data());
  for (void *&p : pointers)
    args.push_back(&p);
  int64_t part = 0, parts = split ? 3 : 1;
  if (split) {
    args.push_back(&part);
    args.push_back(&parts);
  }
  for (; part < parts; ++part)
    if (llvm::Error error = (*engine)->invokePacked("kernel", args))
      return "the kernel did not run: " + llvm::toString(std::move(error));
  outputs.clear();
  for (auto [r, result] : llvm::enumerate(op->getResults())) {
    Tensor like = tensorOf(result);
    outputs.push_back(Tensor::fromBytes(like.dtype(), like.shape(),
                                        buffers[inputs.size() + r].data()));
  }
  return "";
}

std::string mlir::dtc::test::checkKernel(Operation *op, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<Tensor> inputs = randomInputs(op, rng, seed % 3 != 0);
  SmallVector<const Tensor *> operands;
  for (const Tensor &t : inputs)
    operands.push_back(&t);
  SmallVector<Tensor> expected;
  if (failed(evaluateOp(op, operands, expected)))
    return "the reference executor failed";
  std::vector<Tensor> results;
  if (std::string error = runKernel(op, inputs, results); !error.empty())
    return error;

  for (auto [r, want] : llvm::enumerate(expected)) {
    const Tensor &got = results[r];
    double tolerance = want.dtype() == DType::F64   ? 1e-12
                       : want.dtype() == DType::F32 ? 1e-5
                                                    : 1e-2;
    for (int64_t i = 0; i < want.numElements(); ++i) {
      double expect = want.at(i), actual = got.at(i);
      bool agree = std::isnan(expect)
                       ? std::isnan(actual)
                       : expect == actual ||
                             std::fabs(actual - expect) <=
                                 tolerance * std::fabs(expect) + tolerance;
      if (!agree) {
        std::string text;
        llvm::raw_string_ostream os(text);
        os << "result " << r << " element " << i << ": the kernel gives "
           << actual << ", the reference executor " << expect;
        return text;
      }
    }
  }
  return "";
}
