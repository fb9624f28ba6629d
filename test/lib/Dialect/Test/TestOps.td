//===- TestOps.td - the dtc_test dialect -------------------*- tablegen -*-===//
//
// Test-only ops. dtc_test.hypot is a broadcasting binary op added the way
// the architecture promises any op can be: its definition here, its VJP and
// reference kernel in TestDialect.cpp, its sharding rule and cost from the
// BroadcastingElementwise trait -- and nothing in any pass.
// dtc_test.mirror is wrong on purpose: it reverses the last dimension but
// claims, by the same trait, a rule that keeps any split of it, so that a
// partitioned step computes something else without an error (as a wrong
// rule in lib/ would), for dtc-verify-partition's tests to catch.
// dtc_test.take and dtc_test.place are dtc.slice and dtc.update_slice again,
// place with the rule update_slice had before the sharding-rule engine
// (every dimension parallel: its global offsets applied to each rank's
// part), which trained Falcon's multi-query attention wrong on tp=2.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TEST_OPS_TD
#define DTC_TEST_OPS_TD

include "dtc/Dialect/DTC/IR/DTCInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Test_Dialect : Dialect {
  let name = "dtc_test";
  let summary = "Test-only ops for dtc (not for users)";
  let cppNamespace = "::mlir::dtc::test";
}

def Test_HypotOp : Op<Test_Dialect, "hypot", [Pure, InferTypeOpAdaptor,
    SameOperandsAndResultElementType, DTC_BroadcastingElementwise,
    DTC_ShardingRuleOpInterface,
    DeclareOpInterfaceMethods<DTC_DifferentiableOpInterface>]> {
  let summary = "sqrt(lhs^2 + rhs^2), elementwise with numpy broadcasting";
  let description = [{
    ```mlir
    %z = dtc_test.hypot %x, %y
        : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins TensorOf<[F32, F64]>:$lhs, TensorOf<[F32, F64]>:$rhs);
  let results = (outs TensorOf<[F32, F64]>:$result);
  let assemblyFormat =
      "operands attr-dict `:` functional-type(operands, results)";
}


def Test_MirrorOp : Op<Test_Dialect, "mirror", [Pure,
    SameOperandsAndResultType, DTC_BroadcastingElementwise,
    DTC_ShardingRuleOpInterface,
    DeclareOpInterfaceMethods<DTC_DifferentiableOpInterface>]> {
  let summary = "The input reversed along its last dimension (its sharding "
                "rule is deliberately wrong)";
  let description = [{
    `result[..., i] = input[..., n - 1 - i]`. The BroadcastingElementwise
    trait gives it an elementwise sharding rule, which is wrong: a rank
    holding a chunk of the last dimension needs the mirrored chunk.

    ```mlir
    %y = dtc_test.mirror %x : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins TensorOf<[F32, F64]>:$input);
  let results = (outs TensorOf<[F32, F64]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}


def Test_TakeOp : Op<Test_Dialect, "take", [Pure,
    DeclareOpInterfaceMethods<DTC_ShardingRuleOpInterface, ["getShardingRule"]>,
    DeclareOpInterfaceMethods<DTC_DifferentiableOpInterface>]> {
  let summary = "dtc.slice with unit strides; its VJP is dtc_test.place";
  let description = [{
    ```mlir
    %q = dtc_test.take %x starts = [0, 0, 0, 0]
        : tensor<2x4x6x4xf32> -> tensor<2x4x4x4xf32>
    ```
  }];
  let arguments = (ins TensorOf<[F32, F64]>:$input, DenseI64ArrayAttr:$starts);
  let results = (outs TensorOf<[F32, F64]>:$result);
  let assemblyFormat =
      "$input `starts` `=` $starts attr-dict `:` type($input) `->` type($result)";
}

def Test_PlaceOp : Op<Test_Dialect, "place", [Pure,
    DeclareOpInterfaceMethods<DTC_ShardingRuleOpInterface, ["getShardingRule"]>]> {
  let summary = "dtc.update_slice with unit strides, and a wrong sharding rule";
  let description = [{
    `into` with `update` written at `starts`. Its rule (deliberately wrong,
    as dtc had it before the sharding-rule engine) calls every dimension
    parallel, so a rank holding a part of a dimension writes its part of
    the update at the global offset.

    ```mlir
    %g = dtc_test.place %dq into %zeros starts = [0, 0, 0, 0]
        : tensor<2x4x4x4xf32> into tensor<2x4x6x4xf32>
    ```
  }];
  let arguments = (ins TensorOf<[F32, F64]>:$update, TensorOf<[F32, F64]>:$into,
                       DenseI64ArrayAttr:$starts);
  let results = (outs TensorOf<[F32, F64]>:$result);
  let assemblyFormat = "$update `into` $into `starts` `=` $starts attr-dict `:` "
                       "type($update) `into` type($into) `->` type($result)";
}

#endif // DTC_TEST_OPS_TD
