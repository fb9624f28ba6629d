//===- ElementwiseImporters.cpp - ONNX elementwise ops --------------------===//
//
// Unary and broadcasting binary ops, comparisons, logical ops, variadic
// Max/Min/Sum/Mean, Mod, Where, Cast/CastLike, Clip, Identity.
//
//===----------------------------------------------------------------------===//

#include "NodeImporter.h"

#include "dtc/Interpreter/TensorAttr.h"
#include "dtc/Runtime/ONNX/TensorProto.h"

#include <limits>

using namespace mlir;
using namespace mlir::dtc;

namespace {

template <typename OpTy> LogicalResult importUnary(NodeImporter &n) {
  return n.setResult(OpTy::create(n.builder, n.loc, n.input(0)).getResult());
}

/// Elementwise binary ops broadcast as numpy does from opset 7 on; earlier
/// opsets had an explicit `broadcast` attribute, which dtc does not support.
LogicalResult checkNumpyBroadcasting(NodeImporter &n) {
  if (n.attribute("broadcast") || n.attribute("axis")) {
    n.error() << "legacy broadcasting (opset < 7 'broadcast'/'axis' "
                 "attributes) is not supported";
    return failure();
  }
  return success();
}

template <typename OpTy> LogicalResult importBinary(NodeImporter &n) {
  if (failed(checkNumpyBroadcasting(n)))
    return failure();
  return n.setResult(n.create<OpTy>(n.input(0), n.input(1)));
}

LogicalResult importCompare(NodeImporter &n, ComparisonPredicate predicate) {
  if (failed(checkNumpyBroadcasting(n)))
    return failure();
  return n.setResult(n.create<CompareOp>(predicate, n.input(0), n.input(1)));
}

/// Folds a variadic op (Max, Min, Sum) over its inputs with a binary op.
template <typename OpTy> FailureOr<Value> foldVariadic(NodeImporter &n) {
  if (n.inputs.empty()) {
    n.error() << "needs at least one input";
    return failure();
  }
  Value acc = n.input(0);
  for (unsigned i = 1; i < n.inputs.size(); ++i) {
    FailureOr<Value> next = n.create<OpTy>(acc, n.input(i));
    if (failed(next))
      return failure();
    acc = *next;
  }
  return acc;
}

template <typename OpTy> LogicalResult importVariadic(NodeImporter &n) {
  return n.setResult(foldVariadic<OpTy>(n));
}

LogicalResult importMean(NodeImporter &n) {
  FailureOr<Value> sum = foldVariadic<AddOp>(n);
  if (failed(sum))
    return failure();
  Type elementType = cast<RankedTensorType>(sum->getType()).getElementType();
  return n.setResult(
      n.create<DivOp>(*sum, n.scalar(n.inputs.size(), elementType)));
}

LogicalResult importPow(NodeImporter &n) {
  // The exponent may have another element type; dtc computes in the base's.
  Type baseType = n.inputType(0).getElementType();
  return n.setResult(
      n.create<PowOp>(n.input(0), n.convertElementType(n.input(1), baseType)));
}

/// Mod: fmod = 1 truncates the quotient (C's fmod), the default floors it
/// (Python's %).
LogicalResult importMod(NodeImporter &n) {
  int64_t fmod = n.intAttr("fmod", 0);
  return n.setResult(n.create<ModOp>(
      n.input(0), n.input(1), fmod ? n.builder.getUnitAttr() : UnitAttr()));
}

LogicalResult importWhere(NodeImporter &n) {
  return n.setResult(n.create<SelectOp>(n.input(0), n.input(1), n.input(2)));
}

LogicalResult convertTo(NodeImporter &n, int64_t onnxType) {
  std::optional<DType> dtype = dtypeFromOnnx(onnxType);
  if (!dtype) {
    n.error() << "unsupported target element type " << onnxTypeName(onnxType);
    return failure();
  }
  return n.setResult(n.convertElementType(
      n.input(0), elementTypeOf(n.builder.getContext(), *dtype)));
}

LogicalResult importClip(NodeImporter &n) {
  Value x = n.input(0);
  Type elementType = n.inputType(0).getElementType();
  Value low, high;
  if (n.opset < 11) {
    low = n.scalar(n.floatAttr("min", -std::numeric_limits<float>::max()),
                   elementType);
    high = n.scalar(n.floatAttr("max", std::numeric_limits<float>::max()),
                    elementType);
  } else {
    low = n.input(1);
    high = n.input(2);
  }
  if (low) {
    FailureOr<Value> clipped = n.create<MaxOp>(x, low);
    if (failed(clipped))
      return failure();
    x = *clipped;
  }
  if (high) {
    FailureOr<Value> clipped = n.create<MinOp>(x, high);
    if (failed(clipped))
      return failure();
    x = *clipped;
  }
  return n.setResult(x);
}

LogicalResult importGelu(NodeImporter &n) {
  const onnx::AttributeProto *attr = n.attribute("approximate");
  GeluApproximation approximation = GeluApproximation::None;
  if (attr && attr->s() == "tanh")
    approximation = GeluApproximation::Tanh;
  else if (attr && attr->s() != "none") {
    n.error() << "unknown approximate value '" << attr->s() << "'";
    return failure();
  }
  return n.setResult(
      GeluOp::create(n.builder, n.loc, n.input(0), approximation).getResult());
}

} // namespace

void mlir::dtc::addElementwiseImporters(OpImporterTable &table) {
  table.add("Abs", 1, importUnary<AbsOp>);
  table.add("Neg", 1, importUnary<NegOp>);
  table.add("Relu", 1, importUnary<ReluOp>);
  table.add("Exp", 1, importUnary<ExpOp>);
  table.add("Log", 1, importUnary<LogOp>);
  table.add("Sqrt", 1, importUnary<SqrtOp>);
  table.add("Reciprocal", 1, importUnary<ReciprocalOp>);
  table.add("Tanh", 1, importUnary<TanhOp>);
  table.add("Erf", 1, importUnary<ErfOp>);
  table.add("Sin", 1, importUnary<SinOp>);
  table.add("Cos", 1, importUnary<CosOp>);
  table.add("Sigmoid", 1, importUnary<SigmoidOp>);
  table.add("Softplus", 1, importUnary<SoftplusOp>);
  table.add("Not", 1, importUnary<NotOp>);
  table.add("Gelu", 1, importGelu);
  table.add("Identity", 1,
            [](NodeImporter &n) { return n.setResult(n.input(0)); });

  table.add("Add", 2, importBinary<AddOp>);
  table.add("Sub", 2, importBinary<SubOp>);
  table.add("Mul", 2, importBinary<MulOp>);
  table.add("Div", 2, importBinary<DivOp>);
  table.add("And", 2, importBinary<AndOp>);
  table.add("Or", 2, importBinary<OrOp>);
  table.add("Xor", 2, importBinary<XorOp>);
  table.add("Mod", 2, importMod);
  table.add("Pow", 2, importPow);
  table.add("Equal", 2, [](NodeImporter &n) {
    return importCompare(n, ComparisonPredicate::EQ);
  });
  table.add("Less", 2, [](NodeImporter &n) {
    return importCompare(n, ComparisonPredicate::LT);
  });
  table.add("LessOrEqual", 2, [](NodeImporter &n) {
    return importCompare(n, ComparisonPredicate::LE);
  });
  table.add("Greater", 2, [](NodeImporter &n) {
    return importCompare(n, ComparisonPredicate::GT);
  });
  table.add("GreaterOrEqual", 2, [](NodeImporter &n) {
    return importCompare(n, ComparisonPredicate::GE);
  });

  table.add("Max", 1, importVariadic<MaxOp>);
  table.add("Min", 1, importVariadic<MinOp>);
  table.add("Sum", 1, importVariadic<AddOp>);
  table.add("Mean", 1, importMean);
  table.add("Where", 3, importWhere);
  table.add("Clip", 1, importClip);
  table.add("Cast", 1, [](NodeImporter &n) {
    // Opsets 1-5 name the target type as a string ("FLOAT").
    const onnx::AttributeProto *to = n.attribute("to");
    onnx::TensorProto::DataType named;
    if (to && to->type() == onnx::AttributeProto::STRING) {
      if (!onnx::TensorProto::DataType_Parse(to->s(), &named)) {
        n.error() << "unknown target type '" << to->s() << "'";
        return failure();
      }
      return convertTo(n, named);
    }
    return convertTo(n, n.intAttr("to", 0));
  });
  table.add("CastLike", 2, [](NodeImporter &n) {
    return n.setResult(
        n.convertElementType(n.input(0), n.inputType(1).getElementType()));
  });
}
