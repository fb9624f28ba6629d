//===- LoopKernelCheck.cpp - a compiled loop kernel against the oracle ----===//

#include "LoopKernelCheck.h"

#include "dtc/Conversion/FusionToLinalg.h"
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

/// A memref descriptor over `data` of `shape` (row-major).
std::vector<int64_t> descriptor(void *data, ArrayRef<int64_t> shape) {
  std::vector<int64_t> d{reinterpret_cast<int64_t>(data),
                         reinterpret_cast<int64_t>(data), 0};
  d.insert(d.end(), shape.begin(), shape.end());
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  d.insert(d.end(), strides.begin(), strides.end());
  return d;
}

} // namespace

std::string mlir::dtc::test::checkLoopKernel(FusionOp fusion, unsigned seed) {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;

  OwningOpRef<ModuleOp> kernels =
      ModuleOp::create(UnknownLoc::get(fusion.getContext()));
  if (failed(buildLoopKernel(fusion, *kernels, "kernel")))
    return "the kernel could not be built";
  if (failed(lowerKernelsToLLVM(*kernels)))
    return "the kernel could not be lowered to LLVM";
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = makeOptimizingTransformer(2, 0, nullptr);
  auto engine = ExecutionEngine::create(*kernels, engineOptions);
  if (!engine)
    return "the kernel did not compile: " + llvm::toString(engine.takeError());

  // Random inputs: floats with infinities and NaNs mixed in, small
  // non-negative integers (ids, labels), random bools.
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> value(-3, 3);
  std::vector<Tensor> inputs;
  for (Type type : fusion.getInputs().getTypes()) {
    auto tensorType = cast<RankedTensorType>(type);
    Tensor t = tensorOf(fusion.getBody().front().getArgument(inputs.size()));
    if (t.isFloat()) {
      for (double &x : t.floats()) {
        x = value(rng);
        if (rng() % 17 == 0)
          x = (rng() % 3 == 0) ? NAN : (rng() % 2 ? INFINITY : -INFINITY);
      }
    } else {
      for (int64_t &x : t.ints())
        x = tensorType.getElementType().isInteger(1) ? rng() % 2 : rng() % 8;
    }
    t.roundToElementType();
    inputs.push_back(std::move(t));
  }
  SmallVector<const Tensor *> operands;
  for (const Tensor &t : inputs)
    operands.push_back(&t);
  SmallVector<Tensor> expected;
  if (failed(evaluateOp(fusion, operands, expected)))
    return "the reference executor failed";

  // The kernel on buffers of each value's element type (i1 as bytes).
  std::string problem;
  std::vector<std::vector<char>> buffers;
  std::vector<std::vector<int64_t>> descriptors;
  auto addBuffer = [&](const Tensor &t) {
    int64_t n = t.numElements();
    DType dtype = t.dtype();
    size_t width = dtype == DType::Bool ? 1 : dtypeSize(dtype);
    buffers.emplace_back(n * width);
    char *data = buffers.back().data();
    for (int64_t i = 0; i < n; ++i) {
      switch (dtype) {
      case DType::F32:
        reinterpret_cast<float *>(data)[i] = static_cast<float>(t.floats()[i]);
        break;
      case DType::F64:
        reinterpret_cast<double *>(data)[i] = t.floats()[i];
        break;
      case DType::I64:
        reinterpret_cast<int64_t *>(data)[i] = t.ints()[i];
        break;
      case DType::I32:
        reinterpret_cast<int32_t *>(data)[i] = t.ints()[i];
        break;
      case DType::Bool:
        data[i] = static_cast<char>(t.ints()[i]);
        break;
      default:
        problem = std::string("no buffer for ") + dtypeName(dtype);
      }
    }
    descriptors.push_back(descriptor(data, t.shape()));
  };
  buffers.reserve(inputs.size() + fusion.getNumResults());
  for (const Tensor &t : inputs)
    addBuffer(t);
  for (Value result : fusion.getResults())
    addBuffer(tensorOf(result));
  std::vector<void *> pointers, args;
  for (std::vector<int64_t> &d : descriptors)
    pointers.push_back(d.data());
  for (void *&p : pointers)
    args.push_back(&p);
  if (!problem.empty())
    return problem;
  if (llvm::Error error = (*engine)->invokePacked("_mlir_ciface_kernel", args))
    return "the kernel did not run: " + llvm::toString(std::move(error));

  for (auto [r, want] : llvm::enumerate(expected)) {
    const char *got = buffers[inputs.size() + r].data();
    for (int64_t i = 0; i < want.numElements(); ++i) {
      double expect = want.at(i), actual;
      switch (want.dtype()) {
      case DType::F32:
        actual = reinterpret_cast<const float *>(got)[i];
        break;
      case DType::F64:
        actual = reinterpret_cast<const double *>(got)[i];
        break;
      case DType::I64:
        actual = reinterpret_cast<const int64_t *>(got)[i];
        break;
      case DType::I32:
        actual = reinterpret_cast<const int32_t *>(got)[i];
        break;
      default:
        actual = got[i];
      }
      double tolerance = want.dtype() == DType::F64 ? 1e-12 : 1e-5;
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
