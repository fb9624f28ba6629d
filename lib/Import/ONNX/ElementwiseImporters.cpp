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

/// The second operand of an elementwise binary op, broadcastable against
/// the first as numpy does (opset 7 on). Before opset 7 an op broadcasts
/// only with `broadcast = 1`, the second operand lining up with the first's
/// dimensions from `axis` on (the trailing ones without it): trailing 1s
/// make that numpy's rule.
FailureOr<Value> broadcastableRhs(NodeImporter &n) {
  Value rhs = n.input(1);
  if (n.opset >= 7 || n.intAttr("broadcast", 0) == 0 || !n.attribute("axis"))
    return rhs;
  int64_t lhsRank = n.inputType(0).getRank(),
          rhsRank = n.inputType(1).getRank();
  FailureOr<int64_t> axis = n.normalizeAxis(n.intAttr("axis", 0), lhsRank);
  if (failed(axis))
    return failure();
  if (*axis + rhsRank > lhsRank) {
    n.error() << "broadcast axis " << *axis << " leaves no room for the "
              << rhsRank << " dimensions of the second operand";
    return failure();
  }
  SmallVector<int64_t> shape(n.inputType(1).getShape());
  shape.append(lhsRank - *axis - rhsRank, 1);
  return n.reshape(rhs, shape);
}

template <typename OpTy> LogicalResult importBinary(NodeImporter &n) {
  FailureOr<Value> rhs = broadcastableRhs(n);
  if (failed(rhs))
    return failure();
  return n.setResult(n.create<OpTy>(n.input(0), *rhs));
}

LogicalResult importCompare(NodeImporter &n, ComparisonPredicate predicate) {
  FailureOr<Value> rhs = broadcastableRhs(n);
  if (failed(rhs))
    return failure();
  return n.setResult(n.create<CompareOp>(predicate, n.input(0), *rhs));
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
