//===- DTCOps.td - dtc core tensor ops ---------------------*- tablegen -*-===//
//
// The core tensor ops that transformer forward passes need. Every op's
// numerical semantics is defined by its reference kernel in lib/Interpreter;
// the descriptions here state the same contract in words.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_OPS_TD
#define DTC_OPS_TD

include "dtc/Dialect/DTC/IR/DTCDialect.td"
include "dtc/Dialect/DTC/IR/DTCInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def DTC_Float : AnyTypeOf<[F32, F64, BF16, F16]>;
def DTC_Int : AnyTypeOf<[I64, I32, I16, I8, UI8]>;
def DTC_Element : AnyTypeOf<[DTC_Float, DTC_Int, I1]>;

def DTC_Tensor : StaticShapeTensorOf<[DTC_Element]>;
def DTC_FloatTensor : StaticShapeTensorOf<[DTC_Float]>;
def DTC_NumericTensor : StaticShapeTensorOf<[DTC_Float, DTC_Int]>;
def DTC_BoolTensor : StaticShapeTensorOf<[I1]>;
def DTC_IntegralTensor : StaticShapeTensorOf<[DTC_Int, I1]>;
def DTC_IndexTensor : StaticShapeTensorOf<[I64, I32]>;

class DTC_Op<string mnemonic, list<Trait> traits = []>
    : Op<DTC_Dialect, mnemonic, traits>;

/// Ops that implement their vector-Jacobian product (DTCOpVJPs.cpp).
def DTC_Differentiable : DeclareOpInterfaceMethods<DTC_DifferentiableOpInterface>;
/// Ops that define their sharding rule (DTCOpShardingRules.cpp); ops that
/// list DTC_ShardingRuleOpInterface itself take the default (elementwise
/// by trait, else whole).
def DTC_Sharded : DeclareOpInterfaceMethods<DTC_ShardingRuleOpInterface,
                                            ["getShardingRule"]>;
/// The same, for ops with attributes that restate a result shape.
def DTC_ShardedWithShapes : DeclareOpInterfaceMethods<
    DTC_ShardingRuleOpInterface, ["getShardingRule", "adaptToLocalTypes"]>;

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def DTC_ConstantOp : DTC_Op<"constant",
    [ConstantLike, Pure, InferTypeOpAdaptor, DTC_ShardingRuleOpInterface]> {
  let summary = "A tensor constant";
  let description = [{
    Produces the tensor held by `value`; the result type is the type of
    `value`.

    ```mlir
    %c = dtc.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs DTC_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def DTC_IotaOp : DTC_Op<"iota", [Pure, DTC_ShardingRuleOpInterface,
                                 DTC_ComputesInF32]> {
  let summary = "Indices along one dimension";
  let description = [{
    Each element of the result is its own index along `dim`, converted to the
    result element type.

    ```mlir
    %pos = dtc.iota dim = 1 : tensor<8x16xi64>   // %pos[b, s] = s
    ```
  }];
  let arguments = (ins I64Attr:$dim);
  let results = (outs DTC_NumericTensor:$result);
  let assemblyFormat = "`dim` `=` $dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

class DTC_UnaryOp<string mnemonic, Type tensorType, string math,
                  list<Trait> traits = [DTC_Differentiable],
                  Trait shardingRule = DTC_ShardingRuleOpInterface>
    : DTC_Op<mnemonic, traits # [Pure, Elementwise, SameOperandsAndResultType,
                                 shardingRule]> {
  let summary = "Elementwise " # mnemonic;
  let description = [{
    Applies `}] # math # [{` to every element.

    ```mlir
    %y = dtc.}] # mnemonic # [{ %x : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins tensorType:$input);
  let results = (outs tensorType:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def DTC_NegOp : DTC_UnaryOp<"neg", DTC_NumericTensor, "-x",
                            [DTC_Differentiable], DTC_Sharded>;
def DTC_AbsOp : DTC_UnaryOp<"abs", DTC_NumericTensor, "|x|">;
def DTC_ReluOp : DTC_UnaryOp<"relu", DTC_NumericTensor, "max(x, 0)">;
def DTC_ExpOp : DTC_UnaryOp<"exp", DTC_FloatTensor, "e^x">;
def DTC_LogOp : DTC_UnaryOp<"log", DTC_FloatTensor, "ln(x)">;
def DTC_SqrtOp : DTC_UnaryOp<"sqrt", DTC_FloatTensor, "sqrt(x)">;
def DTC_RsqrtOp : DTC_UnaryOp<"rsqrt", DTC_FloatTensor, "1 / sqrt(x)">;
def DTC_ReciprocalOp : DTC_UnaryOp<"reciprocal", DTC_FloatTensor, "1 / x">;
def DTC_TanhOp : DTC_UnaryOp<"tanh", DTC_FloatTensor, "tanh(x)">;
def DTC_ErfOp : DTC_UnaryOp<"erf", DTC_FloatTensor, "erf(x)">;
def DTC_SinOp : DTC_UnaryOp<"sin", DTC_FloatTensor, "sin(x)">;
def DTC_CosOp : DTC_UnaryOp<"cos", DTC_FloatTensor, "cos(x)">;
def DTC_SigmoidOp : DTC_UnaryOp<"sigmoid", DTC_FloatTensor, "1 / (1 + e^-x)">;
def DTC_SiluOp : DTC_UnaryOp<"silu", DTC_FloatTensor, "x * sigmoid(x)">;
def DTC_SoftplusOp : DTC_UnaryOp<"softplus", DTC_FloatTensor, "ln(1 + e^x)">;
def DTC_NotOp : DTC_UnaryOp<"not", DTC_BoolTensor, "logical not", []>;

def DTC_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "how gelu is computed", [
      I32EnumAttrCase<"None", 0, "none">,
      I32EnumAttrCase<"Tanh", 1, "tanh">
    ]> {
  let cppNamespace = "::mlir::dtc";
}

def DTC_GeluOp : DTC_Op<"gelu",
    [Pure, Elementwise, SameOperandsAndResultType, DTC_Differentiable,
     DTC_ShardingRuleOpInterface]> {
  let summary = "Elementwise Gaussian error linear unit";
  let description = [{
    `approximate = none`: x * (1 + erf(x / sqrt(2))) / 2 (exact).
    `approximate = tanh`: x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) / 2.

    ```mlir
    %y = dtc.gelu %x approximate = tanh : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins DTC_FloatTensor:$input,
                   DefaultValuedAttr<DTC_GeluApproximation,
                       "GeluApproximation::None">:$approximate);
  let results = (outs DTC_FloatTensor:$result);
  let assemblyFormat =
      "$input `approximate` `=` $approximate attr-dict `:` type($result)";
}

def DTC_DropoutOp : DTC_Op<"dropout", [Pure, DTC_Differentiable, DTC_Sharded,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "Training-mode dropout from a counter-based generator";
  let description = [{
    `result[i] = keep(i) ? input[i] / (1 - ratio) : 0`, where element `i`
    (its row-major index) is kept when the uniform number Philox4x32-10
    draws for key (`seed`, `stream`) and counter (`i`, `step`) is at least
    `ratio`. The mask is thus a pure function of the seed, the stream (one
    per dropout site), the training step and the element's index: the
    backward pass redraws it instead of saving it. In a partitioned program
    the input is a part of a tensor of shape `global_shape` starting at
    index `offset` (one per dimension), and `i` is the element's row-major
    index in the whole tensor, so that every layout draws the same mask as
    one device.

    ```mlir
    %y = dtc.dropout %x, %step ratio = 1.0e-01 seed = 0 stream = 3
        : (tensor<8x16x48xf32>, tensor<i64>) -> tensor<8x16x48xf32>
    %z = dtc.dropout %x, %step at %offset in [16, 16, 48] ratio = 1.0e-01
        seed = 0 stream = 3
        : (tensor<8x16x48xf32>, tensor<i64>, tensor<3xi64>) -> tensor<8x16x48xf32>
    ```
  }];
  let arguments = (ins DTC_FloatTensor:$input,
                   StaticShapeTensorOf<[I64]>:$step,
                   Optional<StaticShapeTensorOf<[I64]>>:$offset,
                   F64Attr:$ratio, I64Attr:$seed, I64Attr:$stream,
                   OptionalAttr<DenseI64ArrayAttr>:$global_shape);
  let results = (outs DTC_FloatTensor:$result);
  let assemblyFormat = "$input `,` $step (`at` $offset^ `in` $global_shape)? "
      "`ratio` `=` $ratio `seed` `=` $seed `stream` `=` $stream attr-dict `:` "
      "functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops with numpy broadcasting
//===----------------------------------------------------------------------===//

class DTC_BroadcastingOp<string mnemonic, list<Trait> traits = [],
                         Trait shardingRule = DTC_ShardingRuleOpInterface>
    : DTC_Op<mnemonic, traits # [Pure, InferTypeOpAdaptor,
                                 DTC_BroadcastingElementwise, shardingRule]> {
  let assemblyFormat =
      "operands attr-dict `:` functional-type(operands, results)";
}

class DTC_BinaryOp<string mnemonic, Type tensorType, string math,
                   list<Trait> traits = [DTC_Differentiable],
                   Trait shardingRule = DTC_ShardingRuleOpInterface>
    : DTC_BroadcastingOp<mnemonic, traits # [SameOperandsAndResultElementType],
                         shardingRule> {
  let summary = "Elementwise " # mnemonic # " with broadcasting";
  let description = [{
    Computes `}] # math # [{` elementwise. The operand shapes are broadcast
    against each other as numpy does (align trailing dimensions; a dimension
    of size 1 stretches); the result has the broadcast shape.

    ```mlir
    %z = dtc.}] # mnemonic # [{ %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins tensorType:$lhs, tensorType:$rhs);
  let results = (outs tensorType:$result);
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *,
        std::optional<::mlir::Location> loc, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      return inferBroadcastTypes(loc, adaptor.getOperands(),
          ::llvm::cast<::mlir::RankedTensorType>(adaptor.getLhs().getType())
              .getElementType(), inferred);
    }
  }];
}

def DTC_AddOp : DTC_BinaryOp<"add", DTC_NumericTensor, "lhs + rhs",
                            [DTC_Differentiable], DTC_Sharded>;
def DTC_SubOp : DTC_BinaryOp<"sub", DTC_NumericTensor, "lhs - rhs",
                            [DTC_Differentiable], DTC_Sharded>;
def DTC_MulOp : DTC_BinaryOp<"mul", DTC_NumericTensor, "lhs * rhs",
                            [DTC_Differentiable], DTC_Sharded>;
def DTC_DivOp : DTC_BinaryOp<"div", DTC_NumericTensor,
    "lhs / rhs (integers: truncated toward zero)", [DTC_Differentiable],
    DTC_Sharded>;
def DTC_PowOp : DTC_BinaryOp<"pow", DTC_NumericTensor, "lhs ^ rhs">;
def DTC_MaxOp : DTC_BinaryOp<"max", DTC_NumericTensor,
    "max(lhs, rhs) (NaN if either is NaN)">;
def DTC_MinOp : DTC_BinaryOp<"min", DTC_NumericTensor,
    "min(lhs, rhs) (NaN if either is NaN)">;
def DTC_ModOp : DTC_BroadcastingOp<"mod", [DTC_Differentiable,
                                           SameOperandsAndResultElementType]> {
  let summary = "Elementwise remainder with broadcasting";
  let description = [{
    The remainder of `lhs / rhs` after numpy broadcasting. With `truncated`
    the quotient is rounded toward zero and the remainder has the sign of
    `lhs` (C's `fmod`, ONNX `Mod` with `fmod = 1`); without it the quotient
    is rounded down and the remainder has the sign of `rhs` (Python's `%`,
    ONNX's default). An integer remainder by zero is an error.

    ```mlir
    %r = dtc.mod %x, %y {truncated} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
    ```
  }];
  let arguments = (ins DTC_NumericTensor:$lhs, DTC_NumericTensor:$rhs,
                       UnitAttr:$truncated);
  let results = (outs DTC_NumericTensor:$result);
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *,
        std::optional<::mlir::Location> loc, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      return inferBroadcastTypes(loc, adaptor.getOperands(),
          ::llvm::cast<::mlir::RankedTensorType>(adaptor.getLhs().getType())
              .getElementType(), inferred);
    }
  }];
}
def DTC_AndOp : DTC_BinaryOp<"and", DTC_BoolTensor, "lhs and rhs", []>;
def DTC_OrOp : DTC_BinaryOp<"or", DTC_BoolTensor, "lhs or rhs", []>;
def DTC_XorOp : DTC_BinaryOp<"xor", DTC_BoolTensor, "lhs xor rhs", []>;

def DTC_ComparisonPredicate : I32EnumAttr<"ComparisonPredicate",
    "which comparison", [
      I32EnumAttrCase<"EQ", 0, "eq">, I32EnumAttrCase<"NE", 1, "ne">,
      I32EnumAttrCase<"LT", 2, "lt">, I32EnumAttrCase<"LE", 3, "le">,
      I32EnumAttrCase<"GT", 4, "gt">, I32EnumAttrCase<"GE", 5, "ge">
    ]> {
  let cppNamespace = "::mlir::dtc";
}

def DTC_CompareOp : DTC_BroadcastingOp<"compare", [SameOperandsElementType]> {
  let summary = "Elementwise comparison with broadcasting";
  let description = [{
    Compares `lhs` with `rhs` elementwise after numpy broadcasting and yields
    `i1`. Comparisons with NaN are false, except `ne`, which is true.

    ```mlir
    %m = dtc.compare lt, %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    ```
  }];
  let arguments = (ins DTC_ComparisonPredicate:$predicate,
                   DTC_Tensor:$lhs, DTC_Tensor:$rhs);
  let results = (outs DTC_BoolTensor:$result);
  let assemblyFormat = "$predicate `,` $lhs `,` $rhs attr-dict `:` "
                       "functional-type(operands, results)";
}

def DTC_SelectOp : DTC_BroadcastingOp<"select", [DTC_Differentiable]> {
  let summary = "Elementwise choice with broadcasting (where)";
  let description = [{
    `result = cond ? on_true : on_false` elementwise, the three operands
    broadcast together as numpy does.

    ```mlir
    %y = dtc.select %mask, %x, %neg_inf
        : (tensor<16x16xi1>, tensor<4x16x16xf32>, tensor<f32>) -> tensor<4x16x16xf32>
    ```
  }];
  let arguments = (ins DTC_BoolTensor:$cond, DTC_Tensor:$on_true,
                   DTC_Tensor:$on_false);
  let results = (outs DTC_Tensor:$result);
  let hasVerifier = 1;
}

def DTC_CastOp : DTC_Op<"cast",
    [Pure, Elementwise, SameOperandsAndResultShape, DTC_Differentiable,
     DTC_Sharded]> {
  let summary = "Elementwise element-type conversion";
  let description = [{
    Converts each element to the result element type: float to float rounds to
    nearest even; float to integer truncates toward zero (NaN and out-of-range
    values are unspecified); integer to integer wraps; anything to `i1` is
    `x != 0`.

    ```mlir
    %h = dtc.cast %x : tensor<4xf32> to tensor<4xbf16>
    ```
  }];
  let arguments = (ins DTC_Tensor:$input);
  let results = (outs DTC_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Contractions, reductions, normalizations
//===----------------------------------------------------------------------===//

def DTC_MatmulOp : DTC_Op<"matmul", [Pure, InferTypeOpAdaptor,
    SameOperandsAndResultElementType, DTC_Differentiable, DTC_Sharded]> {
  let summary = "Batched matrix product with broadcasting batch dimensions";
  let description = [{
    Both operands have rank >= 2. The last two dimensions are the matrix
    (transposed first when `transpose_lhs` / `transpose_rhs` is set); the
    leading ones are batch dimensions, broadcast as numpy does. Products are
    accumulated in f64 and rounded once to the element type.

    ```mlir
    %y = dtc.matmul %x, %w transpose_rhs
        : (tensor<8x16x48xf32>, tensor<96x48xf32>) -> tensor<8x16x96xf32>
    ```
  }];
  let arguments = (ins DTC_NumericTensor:$lhs, DTC_NumericTensor:$rhs,
                   UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs DTC_NumericTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs (`transpose_lhs` $transpose_lhs^)? "
      "(`transpose_rhs` $transpose_rhs^)? attr-dict `:` "
      "functional-type(operands, results)";
}

class DTC_ReduceOp<string mnemonic, string math, list<Trait> traits = []>
    : DTC_Op<mnemonic, !listconcat([Pure, InferTypeOpAdaptor,
                                    DTC_Differentiable, DTC_Sharded],
                                   traits)> {
  let summary = "Reduction by " # math # " over dimensions";
  let description = [{
    Reduces `input` by }] # math # [{ over the dimensions listed in `dims`
    (non-negative, distinct, ascending). With `keep_dims` the reduced
    dimensions stay with size 1, otherwise they are removed. Floating-point
    sums accumulate in f64.

    ```mlir
    %s = dtc.}] # mnemonic # [{ %x dims = [1] keep_dims : tensor<4x8xf32> -> tensor<4x1xf32>
    ```
  }];
  let arguments = (ins DTC_NumericTensor:$input, DenseI64ArrayAttr:$dims,
                   UnitAttr:$keep_dims);
  let results = (outs DTC_NumericTensor:$result);
  let assemblyFormat = "$input `dims` `=` $dims (`keep_dims` $keep_dims^)? "
                       "attr-dict `:` type($input) `->` type($result)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *,
        std::optional<::mlir::Location> loc, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      return inferReduceTypes(loc, adaptor.getInput(), adaptor.getDims(),
                              adaptor.getKeepDims(), inferred);
    }
  }];
}

def DTC_ReduceSumOp : DTC_ReduceOp<"reduce_sum", "sum", [DTC_ComputesInF32]>;
def DTC_ReduceMeanOp
    : DTC_ReduceOp<"reduce_mean", "mean", [DTC_ComputesInF32]>;
def DTC_ReduceMaxOp : DTC_ReduceOp<"reduce_max", "maximum">;
def DTC_ReduceMinOp : DTC_ReduceOp<"reduce_min", "minimum">;

def DTC_ArgMaxOp : DTC_Op<"arg_max", [Pure, InferTypeOpAdaptor, DTC_Sharded]> {
  let summary = "Index of the maximum along one dimension";
  let description = [{
    The i64 index along `dim` of the largest element (a NaN counts as the
    largest); of several equal maxima the first, or the last with
    `select_last_index`. With `keep_dims`, `dim` stays with size 1.

    ```mlir
    %i = dtc.arg_max %logits dim = 1 : tensor<4x8xf32> -> tensor<4xi64>
    ```
  }];
  let arguments = (ins DTC_NumericTensor:$input, I64Attr:$dim,
                   UnitAttr:$keep_dims, UnitAttr:$select_last_index);
  let results = (outs StaticShapeTensorOf<[I64]>:$result);
  let assemblyFormat = "$input `dim` `=` $dim (`keep_dims` $keep_dims^)? "
      "(`select_last_index` $select_last_index^)? attr-dict `:` type($input) "
      "`->` type($result)";
}

def DTC_CumSumOp : DTC_Op<"cumsum",
    [Pure, SameOperandsAndResultType, DTC_Differentiable, DTC_Sharded]> {
  let summary = "Cumulative sum along one dimension";
  let description = [{
    `result[.., i, ..] = sum of input[.., j, ..]` over `j <= i` (`j < i` with
    `exclusive`; `j >= i`, or `j > i`, with `reverse`).

    ```mlir
    %c = dtc.cumsum %x dim = 1 exclusive : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins DTC_NumericTensor:$input, I64Attr:$dim,
                   UnitAttr:$exclusive, UnitAttr:$reverse);
  let results = (outs DTC_NumericTensor:$result);
  let assemblyFormat = "$input `dim` `=` $dim (`exclusive` $exclusive^)? "
      "(`reverse` $reverse^)? attr-dict `:` type($result)";
  let hasVerifier = 1;
}

class DTC_SoftmaxLikeOp<string mnemonic, string math>
    : DTC_Op<mnemonic, [Pure, SameOperandsAndResultType, DTC_Differentiable,
                        DTC_Sharded, DTC_ComputesInF32]> {
  let summary = math # " along one dimension";
  let description = [{
    Computes }] # math # [{ of `input` along `dim` (non-negative), in a
    numerically stable way (the maximum is subtracted first).

    ```mlir
    %p = dtc.}] # mnemonic # [{ %x dim = 1 : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins DTC_FloatTensor:$input, I64Attr:$dim);
  let results = (outs DTC_FloatTensor:$result);
  let assemblyFormat = "$input `dim` `=` $dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def DTC_SoftmaxOp : DTC_SoftmaxLikeOp<"softmax", "softmax">;
def DTC_LogSoftmaxOp : DTC_SoftmaxLikeOp<"log_softmax", "log-softmax">;

def DTC_AttentionOp : DTC_Op<"attention", [Pure, InferTypeOpAdaptor,
    AttrSizedOperandSegments, DTC_Differentiable, DTC_Sharded]> {
  let summary = "Scaled dot-product attention, with grouped-query K/V heads";
  let description = [{
    `result = dropout(softmax(cap(q k^T * scale) + mask)) v` per batch
    element and query head, where `cap(s) = softcap * tanh(s / softcap)`
    with `softcap` (Gemma 2's logit soft-capping), else `s`: `q` is [batch, heads, queries, d], `k` and `v` are
    [batch, kv_heads, keys, d] and [batch, kv_heads, keys, dv] with
    `kv_heads` dividing `heads` -- query head h reads key/value head
    h / (heads / kv_heads), as grouped-query attention repeats them. The
    optional `mask` broadcasts to [batch, heads, queries, keys]: a float
    mask is added to the scores, an i1 mask keeps the scores where it is
    true and puts `masked_value` (default -inf) elsewhere. With
    `dropout_ratio`, the probabilities are dropped as `dtc.dropout` drops
    a [batch, heads, queries, keys] tensor keyed on (`seed`, `stream`) and
    `step` (`offset` and `global_shape` as there, for a part of a larger
    one). `probs` holds the softmax's probabilities (before dropout), which
    the backward reads rather than recomputing them; a fused kernel need
    not write them when nothing reads them. Scores, softmax and products
    are computed in f64 and the results rounded once.

    `dtc-raise-attention` makes it from the ops exporters write; fused
    kernels, recomputation and context parallelism key on it.

    ```mlir
    %o, %p = dtc.attention %q, %k, %v mask %m scale = 0.125
        : (tensor<2x8x16x64xf32>, tensor<2x2x16x64xf32>,
           tensor<2x2x16x64xf32>, tensor<16x16xf32>)
        -> (tensor<2x8x16x64xf32>, tensor<2x8x16x16xf32>)
    ```
  }];
  let arguments = (ins DTC_FloatTensor:$q, DTC_FloatTensor:$k,
                   DTC_FloatTensor:$v,
                   Optional<StaticShapeTensorOf<[DTC_Float, I1]>>:$mask,
                   Optional<StaticShapeTensorOf<[I64]>>:$step,
                   Optional<StaticShapeTensorOf<[I64]>>:$offset,
                   F64Attr:$scale, OptionalAttr<F64Attr>:$masked_value,
                   OptionalAttr<F64Attr>:$dropout_ratio,
                   OptionalAttr<I64Attr>:$seed, OptionalAttr<I64Attr>:$stream,
                   OptionalAttr<DenseI64ArrayAttr>:$global_shape,
                   OptionalAttr<F64Attr>:$softcap);
  let results = (outs DTC_FloatTensor:$result, DTC_FloatTensor:$probs);
  let assemblyFormat = "$q `,` $k `,` $v (`mask` $mask^)? "
      "(`dropout` `step` $step^)? (`at` $offset^)? `scale` `=` $scale "
      "attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Query heads per key/value head.
    int64_t getGroupSize() {
      return getQ().getType().getDimSize(1) / getK().getType().getDimSize(1);
    }
  }];
}

def DTC_AttentionGradOp : DTC_Op<"attention_grad", [Pure, InferTypeOpAdaptor,
    AttrSizedOperandSegments, DTC_Sharded]> {
  let summary = "The gradients of dtc.attention's q, k and v";
  let description = [{
    Given `result_grad`, the gradient of a `dtc.attention`'s result, and
    the `probs` it saved, the gradients of its q, k and v (with P' =
    dropout(P) and dP' = result_grad v^T, dP its dropout):

        dV = P'^T result_grad, dS = P (dP - rowsum(dP P)),
        dQ = dS k scale, dK = dS^T q scale

    per query head, the query heads' dK and dV summed into their key/value
    head. An i1 mask zeroes dS where it masks (the scores there are a
    constant); a softcap multiplies dS by the derivative of the cap.
    Operands and attributes other than `probs` and `result_grad` are the
    forward's. The gradient of a float mask is not a result: it is dS
    summed to the mask's shape, which dtc.attention's VJP makes apart.

    dtc-autodiff makes it as attention's backward, so that a partitioner
    that keys on attention sees the backward as one op too (context
    parallelism moves keys and values around it);
    dtc-expand-attention-grad writes it as the matmuls and elementwise ops
    it stands for where nothing keys on it.
  }];
  let arguments = (ins DTC_FloatTensor:$q, DTC_FloatTensor:$k,
                   DTC_FloatTensor:$v, DTC_FloatTensor:$probs,
                   DTC_FloatTensor:$result_grad,
                   Optional<StaticShapeTensorOf<[DTC_Float, I1]>>:$mask,
                   Optional<StaticShapeTensorOf<[I64]>>:$step,
                   Optional<StaticShapeTensorOf<[I64]>>:$offset,
                   F64Attr:$scale, OptionalAttr<F64Attr>:$masked_value,
                   OptionalAttr<F64Attr>:$dropout_ratio,
                   OptionalAttr<I64Attr>:$seed, OptionalAttr<I64Attr>:$stream,
                   OptionalAttr<DenseI64ArrayAttr>:$global_shape,
                   OptionalAttr<F64Attr>:$softcap);
  let results = (outs DTC_FloatTensor:$q_grad, DTC_FloatTensor:$k_grad,
                 DTC_FloatTensor:$v_grad);
  let assemblyFormat = "$q `,` $k `,` $v `,` $probs `,` $result_grad "
      "(`mask` $mask^)? (`dropout` `step` $step^)? (`at` $offset^)? "
      "`scale` `=` $scale attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Query heads per key/value head.
    int64_t getGroupSize() {
      return getQ().getType().getDimSize(1) / getK().getType().getDimSize(1);
    }
    /// Builds, at `b`'s insertion point, the ops this op stands for and
    /// returns its results' values.
    SmallVector<Value> expand(OpBuilder &b);
  }];
}

def DTC_FusedAttentionOp : DTC_Op<"fused_attention", [Pure,
    InferTypeOpAdaptor, AttrSizedOperandSegments]> {
  let summary = "dtc.attention as one tiled kernel: its result and row statistics";
  let description = [{
    `dtc.attention` for a target with a fused attention kernel
    (FlashAttention's tiled online softmax): `result` as the attention's,
    and, instead of the probabilities, `lse`, each query row's logsumexp of
    its scores ([batch, heads, queries], f32), from which
    `dtc.fused_attention_grad` recomputes them tile by tile. Operands and
    attributes are dtc.attention's. dtc-fuse-attention makes it when the
    probabilities are read by attention's backward alone; nothing before
    code generation sees it.
  }];
  let arguments = (ins DTC_FloatTensor:$q, DTC_FloatTensor:$k,
                   DTC_FloatTensor:$v,
                   Optional<StaticShapeTensorOf<[DTC_Float, I1]>>:$mask,
                   Optional<StaticShapeTensorOf<[I64]>>:$step,
                   Optional<StaticShapeTensorOf<[I64]>>:$offset,
                   F64Attr:$scale, OptionalAttr<F64Attr>:$masked_value,
                   OptionalAttr<F64Attr>:$dropout_ratio,
                   OptionalAttr<I64Attr>:$seed, OptionalAttr<I64Attr>:$stream,
                   OptionalAttr<DenseI64ArrayAttr>:$global_shape,
                   OptionalAttr<F64Attr>:$softcap);
  let results = (outs DTC_FloatTensor:$result, F32Tensor:$lse);
  let assemblyFormat = "$q `,` $k `,` $v (`mask` $mask^)? "
      "(`dropout` `step` $step^)? (`at` $offset^)? `scale` `=` $scale "
      "attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def DTC_FusedAttentionGradOp : DTC_Op<"fused_attention_grad", [Pure,
    InferTypeOpAdaptor, AttrSizedOperandSegments]> {
  let summary = "The gradients of dtc.fused_attention's q, k and v";
  let description = [{
    dtc.attention_grad from the forward's `result` and row logsumexps
    (`lse`) rather than its probabilities: the probabilities are recomputed
    from q, k and `lse`, and rowsum(dP P) is rowsum(result_grad * result).
    Operands and attributes other than `result`, `lse` and `result_grad`
    are the forward's.
  }];
  let arguments = (ins DTC_FloatTensor:$q, DTC_FloatTensor:$k,
                   DTC_FloatTensor:$v, DTC_FloatTensor:$result,
                   F32Tensor:$lse, DTC_FloatTensor:$result_grad,
                   Optional<StaticShapeTensorOf<[DTC_Float, I1]>>:$mask,
                   Optional<StaticShapeTensorOf<[I64]>>:$step,
                   Optional<StaticShapeTensorOf<[I64]>>:$offset,
                   F64Attr:$scale, OptionalAttr<F64Attr>:$masked_value,
                   OptionalAttr<F64Attr>:$dropout_ratio,
                   OptionalAttr<I64Attr>:$seed, OptionalAttr<I64Attr>:$stream,
                   OptionalAttr<DenseI64ArrayAttr>:$global_shape,
                   OptionalAttr<F64Attr>:$softcap);
  let results = (outs DTC_FloatTensor:$q_grad, DTC_FloatTensor:$k_grad,
                 DTC_FloatTensor:$v_grad);
  let assemblyFormat = "$q `,` $k `,` $v `,` $result `,` $lse `,` "
      "$result_grad (`mask` $mask^)? (`dropout` `step` $step^)? "
      "(`at` $offset^)? `scale` `=` $scale attr-dict `:` "
      "functional-type(operands, results)";
  let hasVerifier = 1;
}

def DTC_LayerNormOp : DTC_Op<"layer_norm",
    [Pure, InferTypeOpAdaptor, DTC_Differentiable, DTC_Sharded,
     DTC_ComputesInF32]> {
  let summary = "Layer normalization over the trailing dimensions";
  let description = [{
    Normalizes `input` over the dimensions `[dim, rank)`:
    `result = (x - mean) * inv_std_dev * scale + bias`, with
    `inv_std_dev = 1 / sqrt(var + epsilon)` (biased variance). `scale` and the
    optional `bias` have the normalized shape `input.shape[dim:]`. `mean` and
    `inv_std_dev` have the input's shape with the normalized dimensions set to
    1 (they are what the backward pass saves).

    ```mlir
    %y, %mean, %rstd = dtc.layer_norm %x, %gamma, %beta dim = 2 epsilon = 1.0e-05
        : (tensor<8x16x48xf32>, tensor<48xf32>, tensor<48xf32>)
        -> (tensor<8x16x48xf32>, tensor<8x16x1xf32>, tensor<8x16x1xf32>)
    ```
  }];
  let arguments = (ins DTC_FloatTensor:$input, DTC_FloatTensor:$scale,
                   Optional<DTC_FloatTensor>:$bias, I64Attr:$dim,
                   F64Attr:$epsilon);
  let results = (outs DTC_FloatTensor:$result, DTC_FloatTensor:$mean,
                 DTC_FloatTensor:$inv_std_dev);
  let assemblyFormat = "$input `,` $scale (`,` $bias^)? `dim` `=` $dim "
      "`epsilon` `=` $epsilon attr-dict `:` functional-type(operands, results)";
}

def DTC_RMSNormOp : DTC_Op<"rms_norm",
    [Pure, InferTypeOpAdaptor, DTC_Differentiable, DTC_Sharded,
     DTC_ComputesInF32]> {
  let summary = "RMS normalization over the trailing dimensions";
  let description = [{
    `result = x / sqrt(mean(x^2 over [dim, rank)) + epsilon) * scale`, with
    `scale` of the normalized shape `input.shape[dim:]`.

    ```mlir
    %y = dtc.rms_norm %x, %g dim = 2 epsilon = 1.0e-06
        : (tensor<8x16x48xf32>, tensor<48xf32>) -> tensor<8x16x48xf32>
    ```
  }];
  let arguments = (ins DTC_FloatTensor:$input, DTC_FloatTensor:$scale,
                   I64Attr:$dim, F64Attr:$epsilon);
  let results = (outs DTC_FloatTensor:$result);
  let assemblyFormat = "$input `,` $scale `dim` `=` $dim `epsilon` `=` "
      "$epsilon attr-dict `:` functional-type(operands, results)";
}

def DTC_RotaryOp : DTC_Op<"rotary",
    [Pure, InferTypeOpAdaptor, DTC_Differentiable, DTC_Sharded]> {
  let summary = "Rotary position embedding of the trailing dimension";
  let description = [{
    Rotates the first `rotary_dim` features of `input`'s last dimension in
    pairs by the angles whose cosines and sines are `cos` and `sin`; the
    remaining features pass through. The pairs are the two halves (feature
    `i` with `i + rotary_dim / 2`, as GPT-NeoX and Llama write it) or, with
    `interleaved`, neighbours (`2i` with `2i + 1`, as GPT-J does):
    `(x1, x2) -> (x1 cos - x2 sin, x2 cos + x1 sin)`. `cos` and `sin` (one
    angle per pair) broadcast as numpy does against
    `input.shape[:-1] + [rotary_dim / 2]`, e.g. `[batch, 1, seq, half]`
    against `[batch, heads, seq, d]`.

    ```mlir
    %y = dtc.rotary %x, %cos, %sin rotary_dim = 8 : (tensor<2x4x16x8xf32>,
        tensor<2x1x16x4xf32>, tensor<2x1x16x4xf32>) -> tensor<2x4x16x8xf32>
    ```
  }];
  let arguments = (ins DTC_FloatTensor:$input, DTC_FloatTensor:$cos,
                   DTC_FloatTensor:$sin, I64Attr:$rotary_dim,
                   UnitAttr:$interleaved);
  let results = (outs DTC_FloatTensor:$result);
  let assemblyFormat = "$input `,` $cos `,` $sin `rotary_dim` `=` $rotary_dim "
      "(`interleaved` $interleaved^)? attr-dict `:` "
      "functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def DTC_GatherOp : DTC_Op<"gather",
    [Pure, InferTypeOpAdaptor, DTC_Differentiable, DTC_Sharded]> {
  let summary = "Gather slices along one dimension (embedding lookup)";
  let description = [{
    `result[i0.., j.., k..] = input[i0.., indices[j..], k..]`, where the
    indices replace dimension `dim` of `input`. Negative indices count from
    the end; an index out of range is a run-time error.

    ```mlir
    %h = dtc.gather %wte[%ids] dim = 0
        : (tensor<96x48xf32>, tensor<8x16xi64>) -> tensor<8x16x48xf32>
    ```
  }];
  let arguments = (ins DTC_Tensor:$input, DTC_IndexTensor:$indices,
                   I64Attr:$dim);
  let results = (outs DTC_Tensor:$result);
  let assemblyFormat = "$input `[` $indices `]` `dim` `=` $dim attr-dict `:` "
                       "functional-type(operands, results)";
}

def DTC_GatherElementsOp : DTC_Op<"gather_elements",
    [Pure, DTC_Differentiable, DTC_Sharded]> {
  let summary = "Gather elements along one dimension (take_along_dim)";
  let description = [{
    `result[i0, .., id, .., in] = input[i0, .., indices[i0, .., id, .., in],
    .., in]`: the result has the shape of `indices`, which has the input's
    rank and, in every dimension but `dim`, a size no larger than the
    input's. Negative indices count from the end; an index out of range is a
    run-time error.

    ```mlir
    %y = dtc.gather_elements %x[%idx] dim = 1
        : (tensor<4x8xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
    ```
  }];
  let arguments = (ins DTC_Tensor:$input, DTC_IndexTensor:$indices,
                   I64Attr:$dim);
  let results = (outs DTC_Tensor:$result);
  let assemblyFormat = "$input `[` $indices `]` `dim` `=` $dim attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def DTC_ScatterElementsAddOp : DTC_Op<"scatter_elements_add", [Pure,
    DTC_Differentiable, DTC_Sharded, AllTypesMatch<["input", "result"]>]> {
  let summary = "Add elements into a tensor at indices (the adjoint of "
                "gather_elements)";
  let description = [{
    `result = input`, then `result[.., indices[i..], ..] += updates[i..]`
    along `dim`, as `dtc.gather_elements` reads; `updates` has the shape of
    `indices`. Repeated indices accumulate.

    ```mlir
    %g = dtc.scatter_elements_add %dy into %zeros[%idx] dim = 1
        : (tensor<4x8xf32>, tensor<4x2xi64>, tensor<4x2xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins DTC_NumericTensor:$input, DTC_IndexTensor:$indices,
                   DTC_NumericTensor:$updates, I64Attr:$dim);
  let results = (outs DTC_NumericTensor:$result);
  let assemblyFormat = "$updates `into` $input `[` $indices `]` `dim` `=` $dim "
                       "attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def DTC_TopKOp : DTC_Op<"top_k", [Pure, InferTypeOpAdaptor,
    DTC_Differentiable, DTC_Sharded]> {
  let summary = "The k largest (or smallest) elements along one dimension";
  let description = [{
    `values` holds the `k` largest elements along `dim` (smallest with
    `smallest`) in descending (ascending) order, ties broken by the lower
    index; NaN orders above every number (as in torch.topk); `indices`
    holds their i64 positions.

    ```mlir
    %v, %i = dtc.top_k %scores k = 2 dim = 1
        : tensor<16x8xf32> -> (tensor<16x2xf32>, tensor<16x2xi64>)
    ```
  }];
  let arguments = (ins DTC_NumericTensor:$input, I64Attr:$k, I64Attr:$dim,
                   UnitAttr:$smallest);
  let results = (outs DTC_NumericTensor:$values,
                 StaticShapeTensorOf<[I64]>:$indices);
  let assemblyFormat = "$input `k` `=` $k `dim` `=` $dim "
      "(`smallest` $smallest^)? attr-dict `:` type($input) `->` "
      "`(` type($values) `,` type($indices) `)`";
}

def DTC_ReshapeOp : DTC_Op<"reshape",
    [Pure, SameOperandsAndResultElementType, DTC_Differentiable, DTC_Sharded]> {
  let summary = "Reinterpret the shape, keeping row-major element order";
  let description = [{
    The result holds the same elements in the same row-major order; the
    element counts must agree.

    ```mlir
    %y = dtc.reshape %x : tensor<8x16x48xf32> to tensor<128x48xf32>
    ```
  }];
  let arguments = (ins DTC_Tensor:$input);
  let results = (outs DTC_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def DTC_TransposeOp : DTC_Op<"transpose",
    [Pure, InferTypeOpAdaptor, DTC_Differentiable, DTC_Sharded]> {
  let summary = "Permute dimensions";
  let description = [{
    `result.shape[i] = input.shape[permutation[i]]` and
    `result[..., j_i, ...] = input[..., j_{permutation^-1}, ...]`.

    ```mlir
    %y = dtc.transpose %x permutation = [0, 2, 1]
        : tensor<8x16x48xf32> -> tensor<8x48x16xf32>
    ```
  }];
  let arguments = (ins DTC_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs DTC_Tensor:$result);
  let assemblyFormat = "$input `permutation` `=` $permutation attr-dict `:` "
                       "type($input) `->` type($result)";
  let hasFolder = 1;
}

def DTC_BroadcastOp : DTC_Op<"broadcast",
    [Pure, SameOperandsAndResultElementType, DTC_Differentiable, DTC_Sharded]> {
  let summary = "Broadcast to a larger shape (numpy rules, ONNX Expand)";
  let description = [{
    The input's dimensions align with the trailing dimensions of the result;
    each is 1 (stretched) or equal to the result's.

    ```mlir
    %y = dtc.broadcast %b : tensor<48xf32> to tensor<8x16x48xf32>
    ```
  }];
  let arguments = (ins DTC_Tensor:$input);
  let results = (outs DTC_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def DTC_ConcatOp : DTC_Op<"concat", [Pure, InferTypeOpAdaptor,
    SameOperandsAndResultElementType, DTC_Differentiable, DTC_Sharded]> {
  let summary = "Concatenate along one dimension";
  let description = [{
    All operands have the same rank and agree on every dimension but `dim`.

    ```mlir
    %y = dtc.concat %a, %b dim = 1
        : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x10xf32>
    ```
  }];
  let arguments = (ins Variadic<DTC_Tensor>:$inputs, I64Attr:$dim);
  let results = (outs DTC_Tensor:$result);
  let assemblyFormat = "$inputs `dim` `=` $dim attr-dict `:` "
                       "functional-type($inputs, results)";
}

def DTC_SliceOp : DTC_Op<"slice",
    [Pure, InferTypeOpAdaptor, DTC_Differentiable, DTC_ShardedWithShapes]> {
  let summary = "Strided slice with static bounds";
  let description = [{
    `result[i0, i1, ...] = input[starts[0] + i0 * strides[0], ...]`, with
    `result.shape = sizes`. Strides are non-zero and may be negative; every
    index touched lies inside `input`.

    ```mlir
    %y = dtc.slice %x starts = [0, 2] sizes = [4, 3] strides = [1, 2]
        : tensor<4x8xf32> -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins DTC_Tensor:$input, DenseI64ArrayAttr:$starts,
                   DenseI64ArrayAttr:$sizes, DenseI64ArrayAttr:$strides);
  let results = (outs DTC_Tensor:$result);
  let assemblyFormat = "$input `starts` `=` $starts `sizes` `=` $sizes "
      "`strides` `=` $strides attr-dict `:` type($input) `->` type($result)";
}

def DTC_SplitOp : DTC_Op<"split",
    [Pure, InferTypeOpAdaptor, DTC_Differentiable, DTC_ShardedWithShapes]> {
  let summary = "Split into consecutive pieces along one dimension";
  let description = [{
    Result `k` holds `sizes[k]` consecutive slices of `input` along `dim`;
    the sizes add up to that dimension.

    ```mlir
    %q, %k, %v = dtc.split %qkv dim = 2 sizes = [48, 48, 48]
        : tensor<8x16x144xf32> -> (tensor<8x16x48xf32>, tensor<8x16x48xf32>, tensor<8x16x48xf32>)
    ```
  }];
  let arguments = (ins DTC_Tensor:$input, I64Attr:$dim,
                   DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<DTC_Tensor>:$results);
  let assemblyFormat = "$input `dim` `=` $dim `sizes` `=` $sizes attr-dict "
                       "`:` type($input) `->` type($results)";
}

def DTC_ScatterAddOp : DTC_Op<"scatter_add", [Pure, DTC_Differentiable,
    DTC_Sharded,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "Add slices into a tensor at indices (the adjoint of gather)";
  let description = [{
    `result = input`, then `result[i0.., indices[j..], k..] += updates[i0..,
    j.., k..]` for every index, where the indices replace dimension `dim` of
    `input` as in `dtc.gather` (so `updates` has gather's result shape).
    Repeated indices accumulate; negative ones count from the end, and an
    index out of range is a run-time error.

    ```mlir
    %g = dtc.scatter_add %dh into %zeros[%ids] dim = 0
        : (tensor<96x48xf32>, tensor<8x16xi64>, tensor<8x16x48xf32>) -> tensor<96x48xf32>
    ```
  }];
  let arguments = (ins DTC_NumericTensor:$input, DTC_IndexTensor:$indices,
                   DTC_NumericTensor:$updates, I64Attr:$dim);
  let results = (outs DTC_NumericTensor:$result);
  let assemblyFormat = "$updates `into` $input `[` $indices `]` `dim` `=` $dim "
                       "attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def DTC_ScatterReduction : I32EnumAttr<"ScatterReduction",
    "how scatter_reduce combines an update with its element", [
      I32EnumAttrCase<"Mul", 0, "mul">, I32EnumAttrCase<"Max", 1, "max">,
      I32EnumAttrCase<"Min", 2, "min">
    ]> {
  let cppNamespace = "::mlir::dtc";
}

def DTC_ScatterReduceOp : DTC_Op<"scatter_reduce", [Pure, DTC_Differentiable,
    DTC_Sharded,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "Combine slices into a tensor at indices by product, max or min";
  let description = [{
    As `dtc.scatter_add`, with the updates combined with their elements by
    `kind` (ONNX ScatterND's `mul`, `max` and `min` reductions): `result =
    input`, then `result[i0.., indices[j..], k..] = kind(result[...],
    updates[i0.., j.., k..])` for every index. Repeated indices combine;
    max and min propagate NaN. The gradient of max and min goes to the
    elements equal to the result, shared evenly among ties (as PyTorch's
    `scatter_reduce` does).

    ```mlir
    %r = dtc.scatter_reduce %u into %x[%ids] dim = 0 kind = max
        : (tensor<8x4xf32>, tensor<3xi64>, tensor<3x4xf32>) -> tensor<8x4xf32>
    ```
  }];
  let arguments = (ins DTC_NumericTensor:$input, DTC_IndexTensor:$indices,
                   DTC_NumericTensor:$updates, I64Attr:$dim,
                   DTC_ScatterReduction:$kind);
  let results = (outs DTC_NumericTensor:$result);
  let assemblyFormat = "$updates `into` $input `[` $indices `]` `dim` `=` $dim "
                       "`kind` `=` $kind attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def DTC_UpdateSliceOp : DTC_Op<"update_slice", [Pure, DTC_Differentiable,
    DTC_Sharded,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "Replace a strided window of a tensor (the adjoint of slice)";
  let description = [{
    `result = input`, except that the window `dtc.slice` with the same
    `starts` and `strides` (and sizes = the shape of `update`) would read is
    replaced by `update`.

    ```mlir
    %y = dtc.update_slice %u into %x starts = [0, 2] strides = [1, 2]
        : (tensor<4x3xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins DTC_Tensor:$update, DTC_Tensor:$input,
                   DenseI64ArrayAttr:$starts, DenseI64ArrayAttr:$strides);
  let results = (outs DTC_Tensor:$result);
  let assemblyFormat = "$update `into` $input `starts` `=` $starts `strides` "
      "`=` $strides attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Device mesh and collectives
//===----------------------------------------------------------------------===//

def DTC_MeshOp : DTC_Op<"mesh", [Symbol]> {
  let summary = "A device mesh: named axes with sizes";
  let description = [{
    The devices of a distributed program as a grid of named axes. Ranks are
    laid out in axis order with the last axis varying fastest (so the ranks
    of the last axis's groups are neighbours). Collectives name the mesh and
    the axes of their groups.

    ```mlir
    dtc.mesh @mesh ["dp" = 2, "tp" = 4]
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrArrayAttr:$axes,
                   DenseI64ArrayAttr:$sizes);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The size of `axis`, or -1 when the mesh has no such axis.
    int64_t axisSize(::llvm::StringRef axis);
  }];
}

def DTC_CollectiveReduction : I32EnumAttr<"CollectiveReduction",
    "how a collective reduces", [
      I32EnumAttrCase<"Sum", 0, "sum">, I32EnumAttrCase<"Max", 1, "max">,
      I32EnumAttrCase<"Min", 2, "min">
    ]> {
  let cppNamespace = "::mlir::dtc";
}

/// An op over a group of a mesh's ranks (`mesh`, `axes`).
class DTC_MeshGroupOp<string mnemonic, list<Trait> traits = []>
    : DTC_Op<mnemonic, traits # [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
                                 DTC_Sharded]> {
  let hasVerifier = 1;
  code commonDescription = [{
    The group is the ranks of `mesh` that differ from this one only along
    `axes`. `reason`, when present, says which op and which sharding
    conflict made the collective necessary (for reports).
  }];
}

/// A mesh-group op that communicates; `overrides` names the
/// CollectiveOpInterface methods the op defines itself.
class DTC_CollectiveOp<string mnemonic, list<Trait> traits = [],
                       list<string> overrides = []>
    : DTC_MeshGroupOp<mnemonic, traits #
          [DeclareOpInterfaceMethods<DTC_CollectiveOpInterface, overrides>]>;

def DTC_AllReduceOp : DTC_CollectiveOp<"all_reduce",
    [AllTypesMatch<["input", "result"]>], ["getBusBytes"]> {
  let summary = "Reduce a tensor elementwise over a mesh group";
  let description = [{
    Every rank of the group receives the elementwise sum (max, min) of the
    group's tensors.

    ```mlir
    %y = dtc.all_reduce %x on @mesh axes = ["tp"] kind = sum
        {reason = "row-parallel matmul /h.0/attn/proj"} : tensor<8x16x48xf32>
    ```
  }] # commonDescription;
  let arguments = (ins DTC_Tensor:$input, FlatSymbolRefAttr:$mesh,
                   StrArrayAttr:$axes, DTC_CollectiveReduction:$kind,
                   OptionalAttr<StrAttr>:$reason);
  let results = (outs DTC_Tensor:$result);
  let assemblyFormat = "$input `on` $mesh `axes` `=` $axes `kind` `=` $kind "
                       "attr-dict `:` type($result)";
}

def DTC_AllGatherOp : DTC_CollectiveOp<"all_gather",
    [SameOperandsAndResultElementType]> {
  let summary = "Concatenate a mesh group's tensors along one dimension";
  let description = [{
    The result holds the group's tensors concatenated along `dim` in group
    order; its `dim` is the input's times the group size.

    ```mlir
    %y = dtc.all_gather %x on @mesh axes = ["tp"] dim = 1
        : tensor<8x4x48xf32> -> tensor<8x16x48xf32>
    ```
  }] # commonDescription;
  let arguments = (ins DTC_Tensor:$input, FlatSymbolRefAttr:$mesh,
                   StrArrayAttr:$axes, I64Attr:$dim,
                   OptionalAttr<StrAttr>:$reason);
  let results = (outs DTC_Tensor:$result);
  let assemblyFormat = "$input `on` $mesh `axes` `=` $axes `dim` `=` $dim "
                       "attr-dict `:` type($input) `->` type($result)";
}

def DTC_ReduceScatterOp : DTC_CollectiveOp<"reduce_scatter",
    [SameOperandsAndResultElementType]> {
  let summary = "Sum over a mesh group and keep one chunk along a dimension";
  let description = [{
    The group's tensors are summed; group rank r keeps chunk r of the sum
    along `dim`, which the group size divides.

    ```mlir
    %g = dtc.reduce_scatter %x on @mesh axes = ["dp"] dim = 0
        {reason = "ZeRO-2 gradient shard"} : tensor<96x48xf32> -> tensor<48x48xf32>
    ```
  }] # commonDescription;
  let arguments = (ins DTC_NumericTensor:$input, FlatSymbolRefAttr:$mesh,
                   StrArrayAttr:$axes, I64Attr:$dim,
                   OptionalAttr<StrAttr>:$reason);
  let results = (outs DTC_NumericTensor:$result);
  let assemblyFormat = "$input `on` $mesh `axes` `=` $axes `dim` `=` $dim "
                       "attr-dict `:` type($input) `->` type($result)";
}

def DTC_CollectiveBroadcastOp : DTC_CollectiveOp<"collective_broadcast",
    [AllTypesMatch<["input", "result"]>],
    ["getBusBytes", "getCollectiveKind"]> {
  let summary = "Copy one group rank's tensor to the whole mesh group";
  let description = [{
    Every rank of the group receives the tensor of group rank `root`.

    ```mlir
    %w = dtc.collective_broadcast %x on @mesh axes = ["dp"] root = 0
        : tensor<96x48xf32>
    ```
  }] # commonDescription;
  let arguments = (ins DTC_Tensor:$input, FlatSymbolRefAttr:$mesh,
                   StrArrayAttr:$axes, I64Attr:$root,
                   OptionalAttr<StrAttr>:$reason);
  let results = (outs DTC_Tensor:$result);
  let assemblyFormat = "$input `on` $mesh `axes` `=` $axes `root` `=` $root "
                       "attr-dict `:` type($result)";
}

def DTC_SendRecvOp : DTC_CollectiveOp<"send_recv",
    [AllTypesMatch<["input", "result"]>], ["getBusBytes", "getGroupAxes"]> {
  let summary = "Point to point along a mesh axis: send on, receive from behind";
  let description = [{
    Every rank sends `input` to the rank `shift` positions further along
    `axis` (cyclically; the other coordinates equal) and returns the tensor
    it receives from the rank `shift` positions before it. A pipeline's
    stage boundary is the shift by 1 whose wrap-around the first stage
    ignores; a ring step (ring attention) uses all of it.

    ```mlir
    %h = dtc.send_recv %x on @mesh axis = "pp" shift = 1 : tensor<8x16x48xf32>
    ```
  }] # commonDescription;
  let arguments = (ins DTC_Tensor:$input, FlatSymbolRefAttr:$mesh,
                   StrAttr:$axis, I64Attr:$shift,
                   OptionalAttr<StrAttr>:$reason);
  let results = (outs DTC_Tensor:$result);
  let assemblyFormat = "$input `on` $mesh `axis` `=` $axis `shift` `=` $shift "
                       "attr-dict `:` type($result)";
}

def DTC_ShardOp : DTC_MeshGroupOp<"shard",
    [Pure, SameOperandsAndResultElementType]> {
  let summary = "This rank's part of a tensor every rank of a group holds";
  let description = [{
    The input is the same on every rank of the group (replicated); the
    result is this rank's chunk r of it along `dim` (r its index in the
    group), or with `blocks`, chunk r of each of `blocks` equal blocks of
    `dim`, in block order. Nothing is sent: the inverse of an all-gather.
    The partitioners use it where a replicated value meets a split one.

    ```mlir
    %w = dtc.shard %x on @mesh axes = ["tp"] dim = 2 blocks = 3
        : tensor<2x8x96xf32> -> tensor<2x8x48xf32>
    ```
  }] # commonDescription;
  let arguments = (ins DTC_Tensor:$input, FlatSymbolRefAttr:$mesh,
                   StrArrayAttr:$axes, I64Attr:$dim,
                   DefaultValuedAttr<I64Attr, "1">:$blocks,
                   OptionalAttr<StrAttr>:$reason);
  let results = (outs DTC_Tensor:$result);
  let assemblyFormat = "$input `on` $mesh `axes` `=` $axes `dim` `=` $dim "
                       "(`blocks` `=` $blocks^)? attr-dict `:` type($input) "
                       "`->` type($result)";
}

def DTC_AllToAllOp : DTC_CollectiveOp<"all_to_all",
    [SameOperandsAndResultElementType]> {
  let summary = "Exchange chunks among a mesh group";
  let description = [{
    The input is split into group-size chunks along `split_dim`; chunk r
    goes to group rank r, and the chunks that arrive are concatenated along
    `concat_dim` in group order (expert-parallel dispatch and combine).

    With `rows_dim` the exchange sends, of each chunk's slices along the
    dimensions before `rows_dim`, only the rows along it up to the last one
    that is not all zeros, after their counts (all-to-all-v): buffers
    padded past their filled rows (dtc-sort-experts' experts) move what
    they hold. The result is the same: the rows not sent arrive as zeros.

    ```mlir
    %y = dtc.all_to_all %x on @mesh axes = ["ep"] split_dim = 0 concat_dim = 1
        : tensor<8x16xf32> -> tensor<4x32xf32>
    ```
  }] # commonDescription;
  let arguments = (ins DTC_Tensor:$input, FlatSymbolRefAttr:$mesh,
                   StrArrayAttr:$axes, I64Attr:$split_dim, I64Attr:$concat_dim,
                   OptionalAttr<StrAttr>:$reason,
                   OptionalAttr<I64Attr>:$rows_dim);
  let results = (outs DTC_Tensor:$result);
  let assemblyFormat = "$input `on` $mesh `axes` `=` $axes `split_dim` `=` "
      "$split_dim `concat_dim` `=` $concat_dim attr-dict `:` type($input) "
      "`->` type($result)";
}

//===----------------------------------------------------------------------===//
// Fusion groups
//===----------------------------------------------------------------------===//

def DTC_FusionKind : I32EnumAttr<"FusionKind",
    "the hero of a fusion group, which decides how a target lowers it", [
      I32EnumAttrCase<"Loop", 0, "loop">,
      I32EnumAttrCase<"RowReduction", 1, "row_reduction">,
      I32EnumAttrCase<"MultiTensor", 2, "multi_tensor">
    ]> {
  let cppNamespace = "::mlir::dtc";
}

def DTC_FusionOp : DTC_Op<"fusion", [IsolatedFromAbove, SingleBlock,
    RecursiveMemoryEffects, RecursivelySpeculatable]> {
  let summary = "A fusion group: ops one kernel computes";
  let description = [{
    The ops of the body run as one kernel: their intermediate values are
    never stored, only the group's inputs are read and its results written
    (dtc-fuse decides the groups, above any target). The body is isolated
    from above: its block arguments are the inputs, in order, and
    `dtc.yield` gives the results. `kind` names the group's hero, which
    decides how a target lowers it: `loop`, elementwise ops (with
    broadcasts and reshapes) over the result's elements; `row_reduction`,
    reductions along the trailing dimensions (softmax, a norm, a sum;
    several when they fold rows of one shape) with the elementwise ops
    that feed them and those that read their results;
    `multi_tensor`, the optimizer's elementwise updates of many parameters
    (each over its own shape), one kernel for all of them. A group's
    results are those of its values that are read outside it (and, as the
    CPU target forms them, each of its reductions').

    ```mlir
    %y = dtc.fusion loop (%x, %b) : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a: tensor<8x16xf32>, %c: tensor<16xf32>):
      %s = dtc.add %a, %c : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
      %r = dtc.relu %s : tensor<8x16xf32>
      dtc.yield %r : tensor<8x16xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<DTC_Tensor>:$inputs, DTC_FusionKind:$kind);
  let results = (outs Variadic<DTC_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$kind `(` $inputs `)` attr-dict `:` "
      "functional-type($inputs, results) $body";
  let hasVerifier = 1;
}

def DTC_YieldOp : DTC_Op<"yield", [Pure, Terminator, ReturnLike,
    HasParent<"FusionOp">]> {
  let summary = "The results of a fusion group";
  let arguments = (ins Variadic<DTC_Tensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // DTC_OPS_TD
