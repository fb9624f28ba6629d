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

#endif // DTC_TEST_OPS_TD
