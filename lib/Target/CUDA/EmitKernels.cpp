//===- EmitKernels.cpp - one CUDA C++ kernel per thunk --------------------===//
//
// A fusion group is printed from the same analysis the CPU target lowers it
// by (groupNests, collectGroupAccesses: each value computed at an index
// that is an affine function of the element's), as C++ statements, one
// `const T vN = ...;` per value:
//  - a `loop` or `multi_tensor` group is one grid-stride loop per nest, a
//    thread per element (a scalar nest by the grid's first thread);
//  - a `row_reduction` group is a block per row: each reduction's pass
//    folds the row's columns strided by the block's threads and combines
//    them with dtc_block_reduce, its result written by thread 0 and read
//    back by the later passes after a barrier; then the other results.
// Other ops (transposes, slices, splits, concats, update_slice, gathers,
// reductions, dropout, constants) are a thread per result element; a
// scatter-add is one block, its copy then its atomic adds; attention (bf16:
// f32's is expanded into matmuls) a thread per query row. bf16 values are
// stored as their bits and computed in f32, each op's result rounded once.
// Nothing is specialised to the GPU's shapes yet: this is the plain route
// docs/Codegen.md describes.
//
//===----------------------------------------------------------------------===//

#include "EmitKernels.h"

#include "dtc/Conversion/DTCToSCF.h"
#include "dtc/Conversion/FusionToLinalg.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace mlir::dtc;

namespace {

using Shape = SmallVector<int64_t>;

Shape shapeOf(Value value) {
  return Shape(cast<RankedTensorType>(value.getType()).getShape());
}

int64_t product(ArrayRef<int64_t> shape) {
  return ShapedType::getNumElements(shape);
}

/// "bf16" or "f16" for a 16-bit float value (stored as its bits, computed
/// in f32), else "".
std::string halfOf(Type type) {
  type = getElementTypeOrSelf(type);
  return type.isBF16() ? "bf16" : type.isF16() ? "f16" : "";
}
std::string halfOf(Value value) { return halfOf(value.getType()); }

/// The C type `type`'s elements are computed in (float for bf16 and f16),
/// or "" where the CUDA target has none yet.
std::string cType(Type type) {
  type = getElementTypeOrSelf(type);
  if (type.isF32() || !halfOf(type).empty())
    return "float";
  if (type.isF64())
    return "double";
  if (type.isInteger(1))
    return "bool";
  if (auto integer = dyn_cast<IntegerType>(type))
    switch (integer.getWidth()) {
    case 8:
    case 16:
    case 32:
    case 64:
      return "int" + std::to_string(integer.getWidth()) + "_t";
    default:
      break;
    }
  return "";
}

std::string cType(Value value) { return cType(value.getType()); }

/// The C type buffers of `value` hold: bf16 and f16 as their bits.
std::string storageType(Value value) {
  return halfOf(value).empty() ? cType(value) : "uint16_t";
}

/// `element` (an element of `value`'s buffer) in its compute type.
std::string loaded(Value value, const std::string &element) {
  std::string half = halfOf(value);
  return half.empty() ? element : "dtc_" + half + "_to_f32(" + element + ")";
}

/// `computed` (of `value`'s compute type) as its buffer holds it: bf16 and
/// f16 rounded to nearest even.
std::string stored(Value value, const std::string &computed) {
  std::string half = halfOf(value);
  return half.empty() ? computed : "dtc_f32_to_" + half + "(" + computed + ")";
}

/// Adds `value` (computed) atomically to the element of `result`'s buffer
/// at `address`: a bf16 or f16 one rounded as its ops round.
std::string atomicAdd(Value result, const std::string &address,
                      const std::string &value) {
  std::string half = halfOf(result);
  if (half.empty())
    return "dtc_atomic_add(" + address + ", " + value + ")";
  return "dtc_atomic_add_half(dtc_" + half + "_ptr{" + address + "}, " + value +
         ")";
}

/// A scalar of `type` as a C expression: a float by its bits.
std::string literal(Attribute value, Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto f = dyn_cast<FloatAttr>(value)) {
    APFloat v = f.getValue();
    bool lost = false;
    if (!halfOf(type).empty()) // (exact: f32 holds every bf16 and f16)
      v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
    uint64_t bits = v.bitcastToAPInt().getZExtValue();
    if (!type.isF64())
      os << llvm::format("dtc_f32(0x%08xu)", static_cast<uint32_t>(bits));
    else
      os << llvm::format("dtc_f64(0x%016llxull)",
                         static_cast<unsigned long long>(bits));
    if (!f.getValue().isNaN() && !f.getValue().isInfinity())
      os << " /* " << f.getValueAsDouble() << " */";
    return text;
  }
  auto integer = cast<IntegerAttr>(value);
  if (type.isInteger(1))
    return integer.getValue().isZero() ? "false" : "true";
  int64_t v = integer.getValue().getSExtValue();
  os << "((" << cType(type) << ")";
  if (v == std::numeric_limits<int64_t>::min())
    os << "(-9223372036854775807LL - 1)";
  else
    os << v << "LL";
  os << ")";
  return text;
}

/// `expr` over the index names `dims`, in int64_t arithmetic (indexes are
/// non-negative, so / and % are floordiv and mod).
std::string affineToC(AffineExpr expr, ArrayRef<std::string> dims) {
  if (auto constant = dyn_cast<AffineConstantExpr>(expr))
    return std::to_string(constant.getValue()) + "LL";
  if (auto dim = dyn_cast<AffineDimExpr>(expr))
    return dims[dim.getPosition()];
  auto binary = cast<AffineBinaryOpExpr>(expr);
  std::string lhs = affineToC(binary.getLHS(), dims),
              rhs = affineToC(binary.getRHS(), dims);
  switch (expr.getKind()) {
  case AffineExprKind::Add:
    return "(" + lhs + " + " + rhs + ")";
  case AffineExprKind::Mul:
    return "(" + lhs + " * " + rhs + ")";
  case AffineExprKind::FloorDiv:
    return "(" + lhs + " / " + rhs + ")";
  case AffineExprKind::CeilDiv:
    return "((" + lhs + " + " + rhs + " - 1) / " + rhs + ")";
  default:
    return "(" + lhs + " % " + rhs + ")";
  }
}

/// The linear offset, in a row-major buffer of `shape`, of the element at
/// the index expressions `index`.
std::string offsetOf(ArrayRef<std::string> index, ArrayRef<int64_t> shape) {
  Shape strides = computeStrides(shape);
  std::string offset;
  for (auto [d, at] : llvm::enumerate(index)) {
    if (shape[d] == 1)
      continue;
    std::string term =
        strides[d] == 1 ? at : at + " * " + std::to_string(strides[d]) + "LL";
    offset += (offset.empty() ? "" : " + ") + term;
  }
  return offset.empty() ? "0" : offset;
}

/// Declares the index names `names` of the element at linear position
/// `linear` of `shape` (row-major).
std::string decompose(const std::string &linear, ArrayRef<int64_t> shape,
                      ArrayRef<std::string> names, const std::string &pad) {
  std::string text;
  if (shape.empty())
    return text;
  if (shape.size() == 1)
    return pad + "const int64_t " + names[0] + " = " + linear + ";\n";
  std::string rest = names.front() + "_rest";
  text += pad + "int64_t " + rest + " = " + linear + ";\n";
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d > 0; --d) {
    text += pad + "const int64_t " + names[d] + " = " + rest + " % " +
            std::to_string(shape[d]) + "LL;\n";
    text += pad + rest + " /= " + std::to_string(shape[d]) + "LL;\n";
  }
  return text + pad + "const int64_t " + names[0] + " = " + rest + ";\n";
}

SmallVector<std::string> indexNames(StringRef prefix, size_t count) {
  SmallVector<std::string> names;
  for (size_t i = 0; i < count; ++i)
    names.push_back((prefix + Twine(i)).str());
  return names;
}

/// `name` for a double, `namef` for a float: the C math functions.
std::string fn(StringRef name, StringRef type) {
  return (name + (type == "float" ? "f" : "")).str();
}

/// The C expression of `op` on the operand names `args`, its result of C
/// type `t`; "" for an op a kernel does not compute.
std::string scalarExpr(Operation *op, ArrayRef<std::string> a, StringRef t) {
  auto one = [&] { return "(" + t.str() + ")1"; };
  auto zero = [&] { return "(" + t.str() + ")0"; };
  auto call = [&](StringRef name, const std::string &x) {
    return fn(name, t) + "(" + x + ")";
  };
  auto bin = [&](StringRef sign) {
    return "(" + a[0] + " " + sign.str() + " " + a[1] + ")";
  };
  auto sigmoid = [&](const std::string &x) {
    return "(" + one() + " / (" + one() + " + " + call("exp", "-" + x) + "))";
  };
  bool isFloat = t == "float" || t == "double";
  return TypeSwitch<Operation *, std::string>(op)
      .Case([&](ConstantOp constant) -> std::string {
        auto value = dyn_cast<DenseElementsAttr>(constant.getValue());
        if (!value || !(value.isSplat() || value.getNumElements() == 1))
          return "";
        return literal(value.getSplatValue<Attribute>(),
                       value.getElementType());
      })
      .Case<BroadcastOp, ReshapeOp>([&](Operation *) { return a[0]; })
      .Case([&](AddOp) { return bin("+"); })
      .Case([&](SubOp) { return bin("-"); })
      .Case([&](MulOp) { return bin("*"); })
      .Case([&](DivOp) { return bin("/"); })
      .Case([&](MaxOp) { return "dtc_maximum(" + a[0] + ", " + a[1] + ")"; })
      .Case([&](MinOp) { return "dtc_minimum(" + a[0] + ", " + a[1] + ")"; })
      .Case([&](ModOp mod) {
        if (!mod.getTruncated())
          return "dtc_mod(" + a[0] + ", " + a[1] + ")";
        return isFloat ? fn("fmod", t) + "(" + a[0] + ", " + a[1] + ")"
                       : bin("%");
      })
      .Case([&](PowOp) -> std::string {
        return isFloat ? fn("pow", t) + "(" + a[0] + ", " + a[1] + ")" : "";
      })
      .Case([&](NegOp) { return "(-" + a[0] + ")"; })
      .Case([&](AbsOp) {
        return isFloat ? call("fabs", a[0])
                       : "(" + a[0] + " < 0 ? -" + a[0] + " : " + a[0] + ")";
      })
      .Case([&](ReluOp) {
        // (NaN gives 0, as the reference kernel.)
        return "(" + a[0] + " > " + zero() + " ? " + a[0] + " : " + zero() +
               ")";
      })
      .Case([&](ExpOp) { return call("exp", a[0]); })
      .Case([&](LogOp) { return call("log", a[0]); })
      .Case([&](SqrtOp) { return call("sqrt", a[0]); })
      .Case([&](RsqrtOp) {
        return "(" + one() + " / " + call("sqrt", a[0]) + ")";
      })
      .Case([&](ReciprocalOp) { return "(" + one() + " / " + a[0] + ")"; })
      .Case([&](TanhOp) { return call("tanh", a[0]); })
      .Case([&](ErfOp) { return call("erf", a[0]); })
      .Case([&](SinOp) { return call("sin", a[0]); })
      .Case([&](CosOp) { return call("cos", a[0]); })
      .Case([&](SigmoidOp) { return sigmoid(a[0]); })
      .Case([&](SiluOp) { return "(" + a[0] + " * " + sigmoid(a[0]) + ")"; })
      .Case([&](SoftplusOp) {
        // log1p(e^-|x|) + max(x, 0).
        return "(" + call("log1p", call("exp", "-" + call("fabs", a[0]))) +
               " + dtc_maximum(" + a[0] + ", " + zero() + "))";
      })
      .Case([&](GeluOp gelu) {
        std::string x = a[0];
        auto c = [&](double v) {
          return "(" + t.str() + ")" + llvm::formatv("{0:e16}", v).str();
        };
        std::string inner =
            gelu.getApproximate() == GeluApproximation::Tanh
                ? call("tanh", c(std::sqrt(2.0 / M_PI)) + " * (" + x + " + " +
                                   c(0.044715) + " * (" + x + " * (" + x +
                                   " * " + x + ")))")
                : call("erf", x + " * " + c(M_SQRT1_2));
        return "((" + c(0.5) + " * " + x + ") * (" + one() + " + " + inner +
               "))";
      })
      .Case([&](NotOp) { return "(!" + a[0] + ")"; })
      .Case([&](AndOp) { return bin("&"); })
      .Case([&](OrOp) { return bin("|"); })
      .Case([&](XorOp) { return bin("^"); })
      .Case([&](CompareOp compare) {
        // As C++ compares doubles: NaN is unequal to everything.
        static const char *signs[] = {"==", "!=", "<", "<=", ">", ">="};
        return bin(signs[static_cast<int>(compare.getPredicate())]);
      })
      .Case([&](SelectOp) {
        return "(" + a[0] + " ? " + a[1] + " : " + a[2] + ")";
      })
      .Case([&](CastOp cast) {
        if (t == "bool")
          return "(" + a[0] + " != 0)";
        return "((" + t.str() + ")" + a[0] + ")";
      })
      .Default([](Operation *) { return std::string(); });
}

/// The element's index in the whole tensor of shape `whole` (row-major),
/// its index in this part being `index` plus, with `offsets`, that buffer's
/// offset per dimension (emitWholeIndex's order, DTCToSCF.h).
std::string wholeIndex(ArrayRef<std::string> index, ArrayRef<int64_t> whole,
                       const std::string &offsets) {
  std::string global = "(uint64_t)0";
  for (auto [d, at] : llvm::enumerate(index)) {
    std::string position = offsets.empty() ? at
                                           : "(" + at + " + " + offsets + "[" +
                                                 std::to_string(d) + "])";
    global = "(" + global + " * " + std::to_string(whole[d]) + "ULL + " +
             "(uint64_t)" + position + ")";
  }
  return global;
}

/// `x` (of C type `t`) dropped as `dtc.dropout` draws: `step` an int64
/// expression, `element` the whole index.
std::string dropoutExpr(const std::string &x, StringRef t,
                        const std::string &element, const std::string &step,
                        uint64_t seed, uint64_t stream, double ratio) {
  return "((" + t.str() + ")dtc_dropout((double)" + x + ", " + element +
         ", (int64_t)" + step + ", " + std::to_string(uint32_t(seed)) + "u, " +
         std::to_string(uint32_t(stream)) + "u, " +
         llvm::formatv("{0:e16}", ratio).str() + "))";
}

Shape wholeShapeOf(Value result, std::optional<ArrayRef<int64_t>> global) {
  return global ? Shape(*global) : shapeOf(result);
}

/// Prints a group's values at one element, as `const T vN = ...;` lines.
struct ValuePrinter {
  std::string &out;
  std::string pad;
  /// The buffer a value read lives in (an input's, or a row kernel's
  /// reduction result's).
  std::function<std::string(Value)> bufferOf;
  /// The element's index names.
  ArrayRef<std::string> dims;
  Operation *&failedOp;
  int &counter;
  /// Scalars computed once before the loops (an optimizer's bias
  /// corrections), by value: used wherever the loops need them.
  const llvm::DenseMap<Value, std::string> *hoisted = nullptr;
  llvm::DenseMap<GroupAccess, std::string> names{};

  /// Takes `access` from the hoisted scalars, if there.
  bool reuse(GroupAccess access) {
    if (!hoisted || !hoisted->count(access.first))
      return false;
    names[access] = hoisted->lookup(access.first);
    return true;
  }

  SmallVector<std::string> indexAt(AffineMap map) {
    SmallVector<std::string> index;
    for (AffineExpr expr : map.getResults())
      index.push_back(affineToC(expr, dims));
    return index;
  }

  /// Prints `reads` and `accesses` (collectGroupAccesses' order).
  void print(const llvm::SetVector<GroupAccess> &accesses,
             const llvm::SetVector<GroupAccess> &reads) {
    for (auto [value, map] : reads) {
      if (reuse({value, map}))
        continue;
      std::string name = "v" + std::to_string(counter++);
      names[{value, map}] = name;
      out += pad + "const " + cType(value) + " " + name + " = " +
             loaded(value, bufferOf(value) + "[" +
                               offsetOf(indexAt(map), shapeOf(value)) + "]") +
             ";\n";
    }
    for (auto [value, map] : accesses) {
      if (reuse({value, map}))
        continue;
      Operation *op = value.getDefiningOp();
      std::string t = cType(value), expr;
      if (auto iota = dyn_cast<IotaOp>(op)) {
        expr = "((" + t + ")" + indexAt(map)[iota.getDim()] + ")";
      } else if (auto dropout = dyn_cast<DropoutOp>(op)) {
        // (Its offsets are read from their buffer, a group input.)
        std::string offsets;
        if (Value offset = dropout.getOffset())
          offsets = bufferOf(offset);
        expr = dropoutExpr(
            names.lookup({op->getOperand(0),
                          groupOperandMap(op, map, op->getOperand(0))}),
            t,
            wholeIndex(
                indexAt(map),
                wholeShapeOf(dropout.getResult(), dropout.getGlobalShape()),
                offsets),
            names.lookup({op->getOperand(1),
                          groupOperandMap(op, map, op->getOperand(1))}),
            dropout.getSeed(), dropout.getStream(),
            dropout.getRatio().convertToDouble());
      } else if (!t.empty()) {
        SmallVector<std::string> args;
        for (Value operand : op->getOperands())
          args.push_back(
              names.lookup({operand, groupOperandMap(op, map, operand)}));
        expr = scalarExpr(op, args, t);
      }
      if (expr.empty()) {
        failedOp = op;
        expr = "0";
      }
      // A bf16 or f16 op computes in f32 and rounds its result once, as
      // the reference executor rounds each op's.
      if (!halfOf(value).empty() &&
          !isa<ReshapeOp, BroadcastOp, ConstantOp>(op))
        expr = "dtc_round_" + halfOf(value) + "(" + expr + ")";
      std::string name = "v" + std::to_string(counter++);
      names[{value, map}] = name;
      out += pad + "const " + (t.empty() ? "int" : t) + " " + name + " = " +
             expr + ";\n";
    }
  }
  std::string nameOf(Value value, AffineMap map) {
    return names.lookup({value, map});
  }
};

/// A kernel being printed: its parameters, its body and its launch.
struct KernelText {
  std::string name;
  SmallVector<std::string> paramTypes;
  /// Its body, and what precedes it (a constant's table).
  std::string body, before;
  int64_t grid = 1, block = 256, sharedBytes = 0;
  double flops = 0;

  /// Adds `const T *in<i>` for each operand and `T *out<i>` for each
  /// result; false when one has no C type.
  bool addParams(Operation *op, ValueRange inputs, ValueRange results) {
    for (Value value : llvm::concat<Value>(inputs, results)) {
      if (cType(value).empty()) {
        op->emitError("the CUDA target computes float and integer values "
                      "only, not ")
            << value.getType() << "; compile with --target cpu";
        return false;
      }
      paramTypes.push_back(storageType(value));
    }
    numInputs = inputs.size();
    return true;
  }
  /// A grid over `elements` elements (a thread each, grid-stride beyond).
  void gridOver(int64_t elements) {
    grid = std::clamp<int64_t>((elements + block - 1) / block, 1, 65536);
  }

  CUDAKernel finish() const {
    CUDAKernel kernel;
    std::string params, casts;
    for (auto [i, type] : llvm::enumerate(paramTypes)) {
      bool input = i < numInputs;
      std::string param = input ? "in" + std::to_string(i)
                                : "out" + std::to_string(i - numInputs);
      params += (i ? ", " : "") + std::string(input ? "const " : "") + type +
                " *" + param;
      casts += (i ? ", " : "") + std::string("(") + (input ? "const " : "") +
               type + " *)args[" + std::to_string(i) + "]";
    }
    kernel.source = before + "DTC_KERNEL void " + name + "(" + params +
                    ") {\n" +
                    "  const int64_t dtc_start = (int64_t)blockIdx.x * "
                    "blockDim.x + threadIdx.x;\n"
                    "  const int64_t dtc_stride = (int64_t)gridDim.x * "
                    "blockDim.x;\n"
                    "  (void)dtc_start;\n  (void)dtc_stride;\n" +
                    body + "}\n";
    kernel.packedEntry = "extern \"C\" void " + name +
                         "_packed(void **args, int64_t, int64_t) {\n  " + name +
                         "(" + casts + ");\n}\n";
    kernel.grid = grid;
    kernel.block = block;
    kernel.sharedBytes = sharedBytes;
    kernel.flops = flops;
    return kernel;
  }

  size_t numInputs = 0;
};

/// `for (i = dtc_start; i < count; i += dtc_stride) { decompose; ... }`,
/// not unrolled: a multi-tensor kernel has a loop per parameter, and
/// unrolling them all made ptxas take seconds on one kernel for little
/// (the loops are memory-bound).
std::string gridLoop(int64_t count, ArrayRef<int64_t> shape,
                     ArrayRef<std::string> names, const std::string &inner) {
  return "#pragma unroll 1\n  for (int64_t i = dtc_start; i < " +
         std::to_string(count) + "LL; i += dtc_stride) {\n" +
         decompose("i", shape, names, "    ") + inner + "  }\n";
}

LogicalResult emitLoopGroup(FusionOp fusion, KernelText &k) {
  Block &body = fusion.getBody().front();
  SmallVector<Value> roots(body.getTerminator()->getOperands());
  Operation *failedOp = nullptr;
  int counter = 0;
  int64_t largest = 1;
  auto bufferOf = [](Value value) {
    return "in" + std::to_string(cast<BlockArgument>(value).getArgNumber());
  };
  // Scalars computed from scalars alone, once per thread before the loops
  // (as the CPU target hoists them): AdamW's bias corrections 1 - beta^t
  // are otherwise a pow per element of every parameter.
  llvm::DenseMap<Value, std::string> hoisted;
  {
    auto isScalar = [](Value v) {
      return cast<RankedTensorType>(v.getType()).getRank() == 0;
    };
    std::function<bool(Value)> fromScalars = [&](Value v) {
      Operation *op = v.getDefiningOp();
      if (!isScalar(v))
        return false;
      if (!op)
        return true;
      if (isa<DropoutOp, IotaOp>(op))
        return false;
      return llvm::all_of(op->getOperands(), fromScalars);
    };
    llvm::SetVector<GroupAccess> accesses, reads;
    AffineMap none = AffineMap::get(0, 0, fusion.getContext());
    for (Operation &op : body.without_terminator())
      if (op.getNumResults() == 1 && fromScalars(op.getResult(0)) &&
          !isa<ConstantOp>(op))
        collectGroupAccesses({op.getResult(0), none}, accesses, reads);
    ValuePrinter printer{k.body, "  ", bufferOf, {}, failedOp, counter};
    printer.print(accesses, reads);
    for (auto access : llvm::concat<const GroupAccess>(reads, accesses))
      hoisted[access.first] = printer.nameOf(access.first, access.second);
  }
  for (ArrayRef<unsigned> nest : groupNests(roots)) {
    Shape shape = shapeOf(roots[nest.front()]);
    SmallVector<std::string> dims = indexNames("i", shape.size());
    AffineMap identity =
        AffineMap::getMultiDimIdentityMap(shape.size(), fusion.getContext());
    llvm::SetVector<GroupAccess> accesses, reads;
    for (unsigned i : nest)
      collectGroupAccesses({roots[i], identity}, accesses, reads);
    std::string inner;
    ValuePrinter printer{inner,    "    ",  bufferOf, dims,
                         failedOp, counter, &hoisted};
    printer.print(accesses, reads);
    for (unsigned i : nest)
      inner +=
          "    out" + std::to_string(i) + "[" + (shape.empty() ? "0" : "i") +
          "] = " + stored(roots[i], printer.nameOf(roots[i], identity)) + ";\n";
    int64_t count = product(shape);
    largest = std::max(largest, count);
    if (shape.empty())
      k.body += "  if (dtc_start == 0) {\n" + inner + "  }\n";
    else
      k.body += gridLoop(count, shape, dims, inner);
  }
  if (failedOp)
    return failedOp->emitError("a CUDA loop kernel does not compute '")
           << failedOp->getName() << "' yet";
  k.gridOver(largest);
  return success();
}

LogicalResult emitRowGroup(FusionOp fusion, KernelText &k) {
  Block &body = fusion.getBody().front();
  Operation *yield = body.getTerminator();
  llvm::DenseMap<Value, std::string> buffers;
  for (BlockArgument arg : body.getArguments())
    buffers[arg] = "in" + std::to_string(arg.getArgNumber());
  for (auto [i, value] : llvm::enumerate(yield->getOperands()))
    buffers.try_emplace(value, "out" + std::to_string(i));
  FailureOr<RowGroupPlan> plan = planRowGroup(fusion);
  if (failed(plan))
    return failure();
  ArrayRef<int64_t> rows = plan->rows;
  int64_t rowCount = product(rows), widest = 1;
  SmallVector<std::string> rowNames = indexNames("r", rows.size());
  Operation *failedOp = nullptr;
  int counter = 0;
  std::string text;
  for (auto [root, reduce] : plan->passes) {
    Shape shape = shapeOf(root);
    ArrayRef<int64_t> inner = ArrayRef<int64_t>(shape).drop_front(rows.size());
    int64_t columns = product(inner);
    widest = std::max(widest, columns);
    SmallVector<std::string> dims(rowNames);
    llvm::append_range(dims, indexNames("c", inner.size()));
    llvm::SetVector<GroupAccess> accesses, reads;
    AffineMap identity =
        AffineMap::getMultiDimIdentityMap(shape.size(), fusion.getContext());
    collectGroupAccesses({root, identity}, accesses, reads);
    std::string values;
    ValuePrinter printer{
        values, "      ", [&](Value v) { return buffers.lookup(v); },
        dims,   failedOp, counter};
    printer.print(accesses, reads);
    std::string computed = printer.nameOf(root, identity);
    std::string columnLoop =
        "    for (int64_t c = threadIdx.x; c < " + std::to_string(columns) +
        "LL; c += blockDim.x) {\n" +
        decompose("c", inner,
                  ArrayRef<std::string>(dims).drop_front(rows.size()),
                  "      ") +
        values;
    if (!reduce) {
      text += columnLoop + "      " + buffers.lookup(root) + "[" +
              offsetOf(dims, shape) + "] = " + stored(root, computed) +
              ";\n    }\n";
      continue;
    }
    Value result = reduce->getResult(0);
    std::string t = cType(result);
    if (t != "float" && t != "double")
      return reduce->emitError("a CUDA row kernel folds float values");
    const char *op = isa<ReduceMaxOp>(reduce)   ? "dtc_max"
                     : isa<ReduceMinOp>(reduce) ? "dtc_min"
                                                : "dtc_sum";
    std::string acc = "acc" + std::to_string(counter++);
    text += "    " + t + " " + acc + " = " + op + "::identity<" + t + ">();\n" +
            columnLoop + "      " + acc + " = " + op + "()(" + acc + ", (" + t +
            ")" + computed + ");\n    }\n";
    text += "    " + acc + " = dtc_block_reduce(" + acc + ", " + op + "());\n";
    if (isa<ReduceMeanOp>(reduce))
      text += "    " + acc + " = " + acc + " / (" + t + ")" +
              std::to_string(columns) + ";\n";
    // (keep_dims: zeros for the folded dimensions.)
    SmallVector<std::string> at(rowNames);
    Shape resultShape = shapeOf(result);
    while (at.size() < resultShape.size())
      at.push_back("0");
    text += "    if (threadIdx.x == 0)\n      " + buffers.lookup(result) + "[" +
            offsetOf(at, resultShape) + "] = " + stored(result, acc) +
            ";\n    __syncthreads();\n";
  }
  if (failedOp)
    return failedOp->emitError("a CUDA row kernel does not compute '")
           << failedOp->getName() << "' yet";
  // A block of whole warps per row, no wider than its widest pass.
  k.block = widest > 128 ? 256 : widest > 64 ? 128 : widest > 32 ? 64 : 32;
  k.grid = std::clamp<int64_t>(rowCount, 1, 65536);
  k.body = "  for (int64_t row = blockIdx.x; row < " +
           std::to_string(rowCount) + "LL; row += gridDim.x) {\n" +
           decompose("row", rows, rowNames, "    ") + text + "  }\n";
  return success();
}

/// out0 = a window of in0: index d of the result reads base[d] + i * step[d].
std::string windowCopy(const std::string &out, ArrayRef<int64_t> outShape,
                       ArrayRef<int64_t> inShape, ArrayRef<int64_t> base,
                       ArrayRef<int64_t> step) {
  SmallVector<std::string> names = indexNames("o", outShape.size()), index;
  for (size_t d = 0; d < outShape.size(); ++d)
    index.push_back("(" + std::to_string(base[d]) + "LL + " + names[d] + " * " +
                    std::to_string(step[d]) + "LL)");
  return gridLoop(product(outShape), outShape, names,
                  "    " + out + "[i] = in0[" + offsetOf(index, inShape) +
                      "];\n");
}

/// The gathered element's offset in a tensor of `shape` for the element
/// `o` of gather's result: the index read from in<indices>[j...].
std::string gatheredOffset(ArrayRef<int64_t> shape, ArrayRef<int64_t> indices,
                           int64_t dim, ArrayRef<std::string> o,
                           const std::string &indexBuffer,
                           std::string &prelude) {
  int64_t rank = static_cast<int64_t>(indices.size());
  SmallVector<std::string> j(o.begin() + dim, o.begin() + dim + rank);
  prelude += "    int64_t at = (int64_t)" + indexBuffer + "[" +
             offsetOf(j, indices) +
             "];\n    if (at < 0)\n      at += " + std::to_string(shape[dim]) +
             "LL;\n    if (at < 0 || at >= " + std::to_string(shape[dim]) +
             "LL)\n      DTC_FAIL(\"an index out of range\");\n";
  SmallVector<std::string> index(o.begin(), o.begin() + dim);
  index.push_back("at");
  index.append(o.begin() + dim + rank, o.end());
  return offsetOf(index, shape);
}

/// A real attribute's value as a C expression of type `t` (infinities as
/// INFINITY: printed, they would read as the name `inf`).
std::string realLiteral(double value, StringRef t) {
  if (std::isinf(value))
    return value < 0 ? "(-INFINITY)" : "INFINITY";
  return "(" + t.str() + ")" + llvm::formatv("{0:e16}", value).str();
}

/// An attention op's mask element at [b, h, qi, j] (the mask broadcast to
/// [batch, heads, queries, keys]), in its compute type: operand `operand`.
std::string attentionMaskAt(Value mask, unsigned operand) {
  Shape maskShape = shapeOf(mask);
  SmallVector<std::string> all{"b", "h", "qi", "j"}, index;
  for (auto [dim, size] : llvm::enumerate(maskShape))
    index.push_back(size == 1 ? "0" : all[4 - maskShape.size() + dim]);
  return loaded(mask, "in" + std::to_string(operand) + "[" +
                          offsetOf(index, maskShape) + "]");
}

/// What an attention op's boolean mask puts where it is false.
template <typename OpTy> double maskedValueOf(OpTy op) {
  return op.getMaskedValue() ? op.getMaskedValue()->convertToDouble()
                             : -INFINITY;
}

/// `x` (of C type `t`) at [b, h, qi, j] dropped as an attention op drops
/// its probabilities: the step is operand `next` and, for a part of a
/// larger tensor, the part's offset the one after it.
template <typename OpTy>
std::string attentionDropout(OpTy op, const std::string &x, StringRef t,
                             unsigned next) {
  Shape q = shapeOf(op.getQ());
  Shape scores{q[0], q[1], q[2], shapeOf(op.getK())[2]};
  std::string offsets = op.getOffset() ? "in" + std::to_string(next + 1) : "";
  return dropoutExpr(
      x, t,
      wholeIndex({"b", "h", "qi", "j"},
                 op.getGlobalShape() ? Shape(*op.getGlobalShape()) : scores,
                 offsets),
      "in" + std::to_string(next) + "[0]", *op.getSeed(), *op.getStream(),
      op.getDropoutRatio()->convertToDouble());
}

/// dtc.attention (what dtc-expand-attention leaves: bf16): a thread per
/// query row, three passes over the keys (their maximum score, the sum of
/// exponentials, then the probabilities and the weighted values), each
/// score recomputed from q and k in the compute type. The fallback a fused
/// kernel is to replace.
LogicalResult emitAttention(AttentionOp op, KernelText &k) {
  Shape q = shapeOf(op.getQ()), kShape = shapeOf(op.getK()),
        v = shapeOf(op.getV());
  int64_t batch = q[0], heads = q[1], queries = q[2], d = q[3],
          kvHeads = kShape[1], keys = kShape[2], dv = v[3],
          group = heads / kvHeads;
  std::string t = cType(op.getQ()), n = std::to_string(keys) + "LL";
  auto c = [&](double value) { return realLiteral(value, t); };
  std::string score =
      "      " + t + " s = 0;\n      for (int64_t c = 0; c < " +
      std::to_string(d) + "LL; ++c)\n        s += " +
      loaded(op.getQ(), "in0[i * " + std::to_string(d) + "LL + c]") + " * " +
      loaded(op.getK(),
             "in1[(kv * " + n + " + j) * " + std::to_string(d) + "LL + c]") +
      ";\n      s = s * " + c(op.getScale().convertToDouble()) + ";\n";
  if (auto softcap = op.getSoftcap())
    score += "      s = " + c(softcap->convertToDouble()) + " * " +
             fn("tanh", t) + "(s / " + c(softcap->convertToDouble()) + ");\n";
  if (Value mask = op.getMask()) {
    std::string m = attentionMaskAt(mask, 3);
    if (isa<FloatType>(getElementTypeOrSelf(mask.getType())))
      score += "      s = s + (" + t + ")" + m + ";\n";
    else
      score += "      s = " + m + " ? s : " + c(maskedValueOf(op)) + ";\n";
  }
  // Dropout on the probabilities: its step and, for a part of a larger
  // tensor, the part's offset follow the mask among the operands.
  std::string dropped =
      op.getDropoutRatio() ? attentionDropout(op, "w0", t, op.getMask() ? 4 : 3)
                           : std::string("w0");
  std::string body =
      "    const int64_t kv = b * " + std::to_string(kvHeads) + "LL + h / " +
      std::to_string(group) + "LL;\n    auto score = [&](int64_t j) {\n" +
      score + "      return s;\n    };\n    " + t +
      " top = dtc_max::identity<" + t +
      ">(), sum = 0;\n    for (int64_t j = 0; j < " + n +
      "; ++j)\n      top = dtc_maximum(top, score(j));\n    for (int64_t j = "
      "0; j < " +
      n + "; ++j)\n      sum += " + fn("exp", t) + "(score(j) - top);\n    " +
      t + " acc[" + std::to_string(dv) +
      "] = {};\n    for (int64_t j = 0; j < " + n + "; ++j) {\n      const " +
      t + " w0 = " + fn("exp", t) + "(score(j) - top) / sum;\n      out1[i * " +
      n + " + j] = " + stored(op.getProbs(), "w0") + ";\n      const " + t +
      " w = " + dropped + ";\n      for (int64_t c = 0; c < " +
      std::to_string(dv) + "LL; ++c)\n        acc[c] += w * " +
      loaded(op.getV(),
             "in2[(kv * " + n + " + j) * " + std::to_string(dv) + "LL + c]") +
      ";\n    }\n    for (int64_t c = 0; c < " + std::to_string(dv) +
      "LL; ++c)\n      out0[i * " + std::to_string(dv) +
      "LL + c] = " + stored(op.getResult(), "acc[c]") + ";\n";
  Shape rows{batch, heads, queries};
  SmallVector<std::string> names{"b", "h", "qi"};
  k.gridOver(product(rows));
  k.body = gridLoop(product(rows), rows, names, body);
  return success();
}

/// The fused attention kernels' tile rows (DTC_FA_BQ, DTC_FA_BK in the
/// prelude) and threads.
constexpr int64_t kFusedAttentionRows = 64, kFusedAttentionThreads = 128;

/// The shared memory of the prelude's dtc_fa_forward_tiles<d, dv> (or
/// dtc_fa_backward_tiles): its arrays, padded as declared; each kernel
/// static_asserts that it is enough.
int64_t fusedAttentionSharedBytes(int64_t d, int64_t dv, bool backward) {
  const int64_t r = kFusedAttentionRows;
  if (!backward)
    return 2 * (r * (d + 8) * 2 + r * (dv + 8) + r * (r + 8)) +
           4 * (r * (r + 4) + r * (dv + 4) + 3 * r);
  return 2 * (2 * r * (d + 8) + 2 * r * (dv + 8) + 2 * r * (r + 8)) +
         4 * (2 * r * (r + 4) + r * (d + 4) + r * (dv + 4) + 2 * r);
}

/// dtc.fused_attention or its gradient: lambdas for the prelude's
/// templates (a dot product's score and slope, dropout's factor), then the
/// call with `args`. `first` is the operand index of the mask (or what
/// follows q, k, v and the backward's result, lse and result_grad).
template <typename OpTy>
void emitFusedAttention(OpTy op, KernelText &k, unsigned first, bool backward,
                        StringRef args) {
  Shape q = shapeOf(op.getQ()), kShape = shapeOf(op.getK()),
        v = shapeOf(op.getV());
  std::string half = halfOf(op.getQ());
  auto c = [](double value) { return realLiteral(value, "float"); };
  std::string head = "(int64_t b, int64_t h, int64_t qi, int64_t j, float x) "
                     "-> float {\n";
  std::string score = "  auto score = [&]" + head + "    float s = x * " +
                      c(op.getScale().convertToDouble()) + ";\n";
  std::string slope = "  auto slope = [&]" + head +
                      "    float g = " + c(op.getScale().convertToDouble()) +
                      ";\n";
  if (auto softcap = op.getSoftcap()) {
    std::string cap = c(softcap->convertToDouble());
    score += "    s = " + cap + " * tanhf(s / " + cap + ");\n";
    slope += "    const float t = tanhf(x * " +
             c(op.getScale().convertToDouble()) + " / " + cap +
             ");\n    g = g * (1.0f - t * t);\n";
  }
  // Whether the mask makes a score -inf (whose tiles the kernels skip).
  std::string masked = "  auto masked = [&](int64_t b, int64_t h, int64_t qi, "
                       "int64_t j) -> bool {\n    return ";
  bool skips = false;
  unsigned next = first;
  if (Value mask = op.getMask()) {
    std::string m = attentionMaskAt(mask, next++);
    double maskedValue = maskedValueOf(op);
    if (isa<FloatType>(getElementTypeOrSelf(mask.getType()))) {
      score += "    s = s + (float)" + m + ";\n";
      masked += "(float)" + m + " == -INFINITY";
      skips = true;
    } else {
      score += "    s = " + m + " ? s : " + c(maskedValue) + ";\n";
      slope += "    g = " + m + " ? g : 0.0f;\n";
      skips = maskedValue == -INFINITY;
      masked += skips ? "!" + m : "false";
    }
  } else {
    masked += "false";
  }
  std::string keep = "  auto keep = [&](int64_t b, int64_t h, int64_t qi, "
                     "int64_t j) -> float {\n    return ";
  keep += op.getDropoutRatio() ? attentionDropout(op, "1.0f", "float", next)
                               : std::string("1.0f");
  std::string kind = backward ? "backward" : "forward";
  std::string dims = std::to_string(q[3]) + ", " + std::to_string(v[3]);
  k.sharedBytes = fusedAttentionSharedBytes(q[3], v[3], backward);
  k.block = kFusedAttentionThreads;
  int64_t rows = kFusedAttentionRows;
  k.grid = q[0] * q[1] * ((q[2] + rows - 1) / rows);
  if (backward)
    k.grid += kShape[0] * kShape[1] * ((kShape[2] + rows - 1) / rows);
  // As FlashAttention counts them, on every score (its causal figures
  // count half): the forward's two products, the backward 2.5 times that.
  k.flops = 2.0 * q[0] * q[1] * q[2] * kShape[2] * (q[3] + v[3]) *
            (backward ? 2.5 : 1);
  k.body = "  static_assert(sizeof(dtc_fa_" + kind + "_tiles<" + dims +
           ">) <= " + std::to_string(k.sharedBytes) +
           "LL, \"the launch's shared memory\");\n" + score +
           "    return s;\n  };\n" + slope + "    return g;\n  };\n" + keep +
           ";\n  };\n" + masked + ";\n  };\n  (void)slope;\n  dtc_fa_" + kind +
           "<dtc_" + half + ", " + dims + ", " + (skips ? "true" : "false") +
           ">(" + args.str() + ", " + std::to_string(q[0]) + "LL, " +
           std::to_string(q[1]) + "LL, " + std::to_string(kShape[1]) + "LL, " +
           std::to_string(q[2]) + "LL, " + std::to_string(kShape[2]) +
           "LL, score, " + (backward ? "slope, " : "") + "keep, masked);\n";
}

/// A thread per line along `s`'s dimension: `body` with `base` (the
/// line's first element) and `o`, `in` (its outer and inner indexes).
void perLine(KernelText &k, const DimSplit &s, const std::string &body) {
  std::string lines = std::to_string(s.outer * s.inner) + "LL";
  std::string inner = std::to_string(s.inner) + "LL";
  k.gridOver(s.outer * s.inner);
  k.body = "#pragma unroll 1\n  for (int64_t i = dtc_start; i < " + lines +
           "; i += dtc_stride) {\n    const int64_t o = i / " + inner +
           ", in = i % " + inner + ";\n    const int64_t base = o * " +
           std::to_string(s.size) + "LL * " + inner + " + in;\n" + body +
           "  }\n";
}

/// top_k: a thread per line, k passes over it, each taking the best value
/// after the previous pass's (ties to the lower index), as the CPU kernel.
LogicalResult emitTopK(TopKOp op, KernelText &k) {
  DimSplit s = splitAt(shapeOf(op.getInput()), op.getDim());
  std::string t = cType(op.getInput()), n = std::to_string(s.size) + "LL",
              inner = std::to_string(s.inner) + "LL";
  auto before = [&](const std::string &a, const std::string &b) {
    return op.getSmallest() ? "dtc_greater(" + b + ", " + a + ")"
                            : "dtc_greater(" + a + ", " + b + ")";
  };
  perLine(
      k, s,
      "    int64_t prev = -1;\n    " + t +
          " prevValue = 0;\n    for (int64_t "
          "pass = 0; pass < " +
          std::to_string(op.getK()) +
          "LL; ++pass) {\n      int64_t best = -1;\n      " + t +
          " bestValue = 0;\n      for (int64_t j = 0; j < " + n +
          "; ++j) {\n        const " + t +
          " x = " + loaded(op.getInput(), "in0[base + j * " + inner + "]") +
          ";\n        const bool after = prev < 0 || " +
          before("prevValue", "x") +
          " || (dtc_same(x, prevValue) && j > prev);\n        if (after && "
          "(best < 0 || " +
          before("x", "bestValue") +
          ")) {\n          best = j;\n          bestValue = x;\n        }\n"
          "      }\n      const int64_t to = (o * " +
          std::to_string(op.getK()) + "LL + pass) * " + inner +
          " + in;\n      out0[to] = in0[base + best * " + inner +
          "];\n      out1[to] = best;\n      prev = best;\n      prevValue = "
          "bestValue;\n    }\n");
  return success();
}

/// cumsum: a thread per line, folding in the compute type.
LogicalResult emitCumSum(CumSumOp op, KernelText &k) {
  DimSplit s = splitAt(shapeOf(op.getInput()), op.getDim());
  std::string t = cType(op.getInput()), inner = std::to_string(s.inner) + "LL";
  std::string j = op.getReverse() ? std::to_string(s.size - 1) + "LL - step"
                                  : std::string("step");
  perLine(k, s,
          "    " + t + " acc = 0;\n    for (int64_t step = 0; step < " +
              std::to_string(s.size) +
              "LL; ++step) {\n      const int64_t at = base + (" + j + ") * " +
              inner + ";\n      const " + t + " next = acc + " +
              loaded(op.getInput(), "in0[at]") + ";\n      out0[at] = " +
              stored(op.getResult(), op.getExclusive() ? "acc" : "next") +
              ";\n      acc = next;\n    }\n");
  return success();
}

/// scatter_elements_add: one block, the copy, a barrier, then an atomic add
/// per update at its index along the dimension.
LogicalResult emitScatterElementsAdd(ScatterElementsAddOp op, KernelText &k) {
  std::string t = cType(op.getResult());
  if (t != "float" && t != "double")
    return op.emitError("the CUDA target scatters float values only");
  Shape shape = shapeOf(op.getInput()), indices = shapeOf(op.getIndices());
  int64_t dim = op.getDim();
  SmallVector<std::string> o = indexNames("o", indices.size()), at(o);
  at[dim] = "to";
  k.grid = 1;
  k.body = "  for (int64_t i = threadIdx.x; i < " +
           std::to_string(product(shape)) +
           "LL; i += blockDim.x)\n    out0[i] = in0[i];\n  __syncthreads();\n"
           "  for (int64_t i = threadIdx.x; i < " +
           std::to_string(product(indices)) + "LL; i += blockDim.x) {\n" +
           decompose("i", indices, o, "    ") +
           "    int64_t to = (int64_t)in1[i];\n    if (to < 0)\n      to += " +
           std::to_string(shape[dim]) +
           "LL;\n    if (to < 0 || to >= " + std::to_string(shape[dim]) +
           "LL)\n      DTC_FAIL(\"an index out of range\");\n" + "    " +
           atomicAdd(op.getResult(), "&out0[" + offsetOf(at, shape) + "]",
                     loaded(op.getUpdates(), "in2[i]")) +
           ";\n  }\n";
  return success();
}

LogicalResult emitOpKernel(Operation *op, KernelText &k) {
  auto all = [&](Value result, const std::string &inner) {
    Shape shape = shapeOf(result);
    k.gridOver(product(shape));
    k.body +=
        gridLoop(product(shape), shape, indexNames("o", shape.size()), inner);
  };
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](TransposeOp op) {
        Shape in = shapeOf(op.getInput()), strides = computeStrides(in);
        std::string offset;
        for (auto [d, from] : llvm::enumerate(op.getPermutation()))
          offset += (d ? " + o" : "o") + std::to_string(d) + " * " +
                    std::to_string(strides[from]) + "LL";
        all(op.getResult(),
            "    out0[i] = in0[" + (offset.empty() ? "0" : offset) + "];\n");
        return success();
      })
      .Case([&](SliceOp op) {
        Shape out = shapeOf(op.getResult());
        k.gridOver(product(out));
        k.body = windowCopy("out0", out, shapeOf(op.getInput()), op.getStarts(),
                            op.getStrides());
        return success();
      })
      .Case([&](SplitOp op) {
        int64_t start = 0, dim = op.getDim(), largest = 1;
        for (auto [i, result] : llvm::enumerate(op.getResults())) {
          Shape shape = shapeOf(result);
          Shape base(shape.size(), 0), step(shape.size(), 1);
          base[dim] = start;
          start += shape[dim];
          largest = std::max(largest, product(shape));
          k.body += windowCopy("out" + std::to_string(i), shape,
                               shapeOf(op.getInput()), base, step);
        }
        k.gridOver(largest);
        return success();
      })
      .Case([&](UpdateSliceOp op) {
        // Each element is the update's where the window covers it (at
        // starts[d] + u * strides[d]), the input's elsewhere.
        Shape shape = shapeOf(op.getInput()), update = shapeOf(op.getUpdate());
        SmallVector<std::string> o = indexNames("o", shape.size()), u;
        std::string inside = "true";
        for (size_t d = 0; d < shape.size(); ++d) {
          std::string from = "(" + o[d] + " - " +
                             std::to_string(op.getStarts()[d]) + "LL)",
                      step = std::to_string(op.getStrides()[d]) + "LL";
          u.push_back("(" + from + " / " + step + ")");
          inside += " && " + from + " % " + step + " == 0 && " + u.back() +
                    " >= 0 && " + u.back() + " < " + std::to_string(update[d]) +
                    "LL";
        }
        all(op.getResult(), "    out0[i] = " + inside + " ? in0[" +
                                offsetOf(u, update) + "] : in1[i];\n");
        return success();
      })
      .Case([&](ConcatOp op) {
        int64_t dim = op.getDim(), start = 0;
        Shape out = shapeOf(op.getResult());
        SmallVector<std::string> o = indexNames("o", out.size());
        std::string inner;
        for (auto [i, input] : llvm::enumerate(op.getInputs())) {
          Shape shape = shapeOf(input);
          SmallVector<std::string> index(o);
          index[dim] = "(" + o[dim] + " - " + std::to_string(start) + "LL)";
          start += shape[dim];
          inner += std::string(i ? "    else " : "    ") + "if (" + o[dim] +
                   " < " + std::to_string(start) + "LL)\n      out0[i] = in" +
                   std::to_string(i) + "[" + offsetOf(index, shape) + "];\n";
        }
        all(op.getResult(), inner);
        return success();
      })
      .Case([&](GatherOp op) {
        Shape out = shapeOf(op.getResult());
        std::string inner;
        std::string offset = gatheredOffset(
            shapeOf(op.getInput()), shapeOf(op.getIndices()), op.getDim(),
            indexNames("o", out.size()), "in1", inner);
        all(op.getResult(), inner + "    out0[i] = in0[" + offset + "];\n");
        return success();
      })
      .Case([&](ScatterAddOp op) -> LogicalResult {
        std::string t = cType(op.getResult());
        if (t != "float" && t != "double")
          return op.emitError("the CUDA target scatters float values only");
        // One block: the copy, a barrier, then the adds (atomic: repeated
        // indexes accumulate).
        Shape shape = shapeOf(op.getInput()),
              updates = shapeOf(op.getUpdates());
        SmallVector<std::string> o = indexNames("o", updates.size());
        std::string inner;
        std::string offset = gatheredOffset(shape, shapeOf(op.getIndices()),
                                            op.getDim(), o, "in1", inner);
        k.grid = 1;
        k.body = "  for (int64_t i = threadIdx.x; i < " +
                 std::to_string(product(shape)) +
                 "LL; i += blockDim.x)\n    out0[i] = in0[i];\n"
                 "  __syncthreads();\n"
                 "  for (int64_t i = threadIdx.x; i < " +
                 std::to_string(product(updates)) + "LL; i += blockDim.x) {\n" +
                 decompose("i", updates, o, "    ") + inner + "    " +
                 atomicAdd(op.getResult(), "&out0[" + offset + "]",
                           loaded(op.getUpdates(), "in2[i]")) +
                 ";\n  }\n";
        return success();
      })
      .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp>([&](auto op) {
        // A thread per result element, folding its reduced elements in
        // order.
        Shape in = shapeOf(op.getInput());
        ArrayRef<int64_t> dims = op.getDims();
        Shape kept, reduced;
        SmallVector<std::string> index, keptNames, reducedNames;
        for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
          if (llvm::is_contained(dims, d)) {
            reducedNames.push_back("k" + std::to_string(d));
            reduced.push_back(in[d]);
            index.push_back(reducedNames.back());
          } else {
            keptNames.push_back("o" + std::to_string(kept.size()));
            kept.push_back(in[d]);
            index.push_back(keptNames.back());
          }
        }
        std::string t = cType(op.getResult());
        const char *fold = isa<ReduceMaxOp>(op)   ? "dtc_max"
                           : isa<ReduceMinOp>(op) ? "dtc_min"
                                                  : "dtc_sum";
        int64_t count = product(reduced);
        std::string inner =
            "    " + t + " acc = " + fold + "::identity<" + t +
            ">();\n    for (int64_t k = 0; k < " + std::to_string(count) +
            "LL; ++k) {\n" + decompose("k", reduced, reducedNames, "      ") +
            "      acc = " + fold + "()(acc, (" + t + ")" +
            loaded(op.getInput(), "in0[" + offsetOf(index, in) + "]") +
            ");\n    }\n";
        if (isa<ReduceMeanOp>(op))
          inner +=
              "    acc = acc / (" + t + ")" + std::to_string(count) + ";\n";
        inner += "    out0[i] = " + stored(op.getResult(), "acc") + ";\n";
        k.gridOver(product(kept));
        k.body = gridLoop(product(kept), kept, keptNames, inner);
        return success();
      })
      .Case([&](AttentionOp op) { return emitAttention(op, k); })
      .Case([&](FusedAttentionOp op) {
        emitFusedAttention(op, k, 3, false, "in0, in1, in2, out0, out1");
        return success();
      })
      .Case([&](FusedAttentionGradOp op) {
        emitFusedAttention(op, k, 6, true,
                           "in0, in1, in2, in3, in4, in5, out0, out1, out2");
        return success();
      })
      .Case([&](TopKOp op) { return emitTopK(op, k); })
      .Case([&](CumSumOp op) { return emitCumSum(op, k); })
      .Case([&](ScatterElementsAddOp op) {
        return emitScatterElementsAdd(op, k);
      })
      .Case([&](DropoutOp op) {
        Shape shape = shapeOf(op.getResult());
        SmallVector<std::string> o = indexNames("o", shape.size());
        std::string t = cType(op.getResult());
        all(op.getResult(),
            "    out0[i] = " +
                stored(op.getResult(),
                       dropoutExpr(loaded(op.getInput(), "in0[i]"), t,
                                   wholeIndex(o,
                                              wholeShapeOf(op.getResult(),
                                                           op.getGlobalShape()),
                                              op.getOffset() ? "in2" : ""),
                                   "in1[0]", op.getSeed(), op.getStream(),
                                   op.getRatio().convertToDouble())) +
                ";\n");
        return success();
      })
      .Case([&](ConstantOp op) -> LogicalResult {
        auto value = dyn_cast<DenseElementsAttr>(op.getValue());
        if (!value)
          return op.emitError("a constant without a dense value");
        Type element = value.getElementType();
        std::string table = k.name + "_value", items;
        bool isFloat = isa<FloatType>(element);
        std::string storage = element.isF32()            ? "uint32_t"
                              : element.isF64()          ? "uint64_t"
                              : !halfOf(element).empty() ? "uint16_t"
                                                         : cType(element);
        int64_t n = 0;
        auto append = [&](const std::string &item) {
          items += (n++ % 8 ? ", " : n > 1 ? ",\n    " : "    ") + item;
        };
        if (isFloat) {
          for (APFloat v : value.getValues<APFloat>())
            append(llvm::formatv("{0:x}u", v.bitcastToAPInt().getZExtValue())
                       .str() +
                   (element.isF64() ? "ll" : ""));
        } else {
          for (APInt v : value.getValues<APInt>())
            append(element.isInteger(1)
                       ? (v.isZero() ? "0" : "1")
                       : std::to_string(v.getSExtValue()) + "LL");
        }
        k.body = "  for (int64_t i = dtc_start; i < " + std::to_string(n) +
                 "LL; i += dtc_stride)\n    out0[i] = " +
                 (element.isF32()   ? "dtc_f32(" + table + "[i])"
                  : element.isF64() ? "dtc_f64(" + table + "[i])"
                  : isFloat         ? table + "[i]" // (bf16, f16: bits)
                            : "(" + cType(element) + ")" + table + "[i]") +
                 ";\n";
        k.before = "DTC_CONSTANT " + storage + " " + table + "[] = {\n" +
                   items + "};\n";
        k.gridOver(n);
        return success();
      })
      .Default([&](Operation *op) {
        return op->emitError("the CUDA target has no kernel for '")
               << op->getName()
               << "' yet; compile with --target cpu or --target reference";
      });
}

} // namespace

FailureOr<CUDAKernel> mlir::dtc::emitCUDAKernel(Operation *op, StringRef name) {
  KernelText k;
  k.name = name.str();
  auto fusion = dyn_cast<FusionOp>(op);
  if (!k.addParams(op, fusion ? fusion.getInputs() : op->getOperands(),
                   op->getResults()))
    return failure();
  LogicalResult built = !fusion ? emitOpKernel(op, k)
                        : fusion.getKind() == FusionKind::RowReduction
                            ? emitRowGroup(fusion, k)
                            : emitLoopGroup(fusion, k);
  if (failed(built))
    return failure();
  return k.finish();
}
