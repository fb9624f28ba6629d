//===- DTCInterfaces.td - dtc op interfaces ----------------*- tablegen -*-===//
//
// Per-op behaviour that passes need, declared here and implemented next to
// the ops (lib/Dialect/DTC/IR).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_INTERFACES_TD
#define DTC_INTERFACES_TD

include "mlir/IR/OpBase.td"

def DTC_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::mlir::dtc";
  let description = [{
    An op whose vector-Jacobian product reverse-mode autodiff
    (`--dtc-autodiff`) can build. Ops without it are not differentiable:
    autodiff accepts them only off the paths from trainable parameters to the
    loss (comparisons, integer ops, masks).
  }];
  let methods = [
    InterfaceMethod<[{
        Builds, at the builder's insertion point, the gradient of each operand
        given the gradients of the op's results (`resultGrads`, one per
        result, null where a result has no gradient). Appends one value per
        operand to `operandGrads`, null where the operand is not
        differentiable (integers, conditions, indices). May fail with a
        diagnostic on the op for configurations it cannot differentiate.
      }], "::llvm::LogicalResult", "buildVJP",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::ValueRange":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>
  ];
}

def DTC_ShardingRuleOpInterface : OpInterface<"ShardingRuleOpInterface"> {
  let cppNamespace = "::mlir::dtc";
  let description = [{
    How the op shards: its rule in Shardy's factor form (ShardingRule.h),
    which the propagation engine (lib/Transforms/Parallel) applies to the
    layouts of its operands. The rule is a pure function of the op's
    attributes and the (global) operand and result types it is given.
  }];
  let methods = [
    InterfaceMethod<[{
        The op's sharding rule for operands and results of these types.
        By default: elementwise ops (MLIR's `Elementwise`, dtc's
        `BroadcastingElementwise`) get the elementwise rule, other ops one
        that needs every dimension whole.
      }], "::mlir::dtc::OpShardingRule", "getShardingRule",
      (ins "::llvm::ArrayRef<::mlir::RankedTensorType>":$operandTypes,
           "::llvm::ArrayRef<::mlir::RankedTensorType>":$resultTypes),
      [{}], [{
        return ::mlir::dtc::defaultShardingRule($_op, operandTypes,
                                                resultTypes);
      }]>,
    InterfaceMethod<[{
        Called once the engine has given the op its per-rank operand and
        result types: updates attributes that restate a result shape (a
        slice's sizes, a split's sizes).
      }], "void", "adaptToLocalTypes", (ins), [{}], [{ return; }]>
  ];
  let extraClassDeclaration = [{
    /// The rule for the op's own operand and result types.
    ::mlir::dtc::OpShardingRule getShardingRule();
  }];
}

/// See DTCTraits.h.
def DTC_BroadcastingElementwise : NativeOpTrait<"BroadcastingElementwise"> {
  let cppNamespace = "::mlir::OpTrait::dtc";
}

/// See DTCTraits.h.
def DTC_ComputesInF32 : NativeOpTrait<"ComputesInF32"> {
  let cppNamespace = "::mlir::OpTrait::dtc";
}

def DTC_CollectiveOpInterface : OpInterface<"CollectiveOpInterface"> {
  let cppNamespace = "::mlir::dtc";
  let description = [{
    An op that communicates over a group of a device mesh: the ranks of
    `mesh` that differ from this one only along the op's axes. The
    analyses (report.json's collectives and roofline), the partitioner,
    bucketing and the verifiers read a collective through this interface:
    its mesh and axes, the size of its group, why it exists (`reason`),
    and the bytes it moves.
  }];
  let methods = [
    InterfaceMethod<"The mesh the group is taken from.",
      "::mlir::FlatSymbolRefAttr", "getMeshAttr", (ins), [{
        return $_op.getMeshAttr();
      }]>,
    InterfaceMethod<"The mesh axes along which the group's ranks differ.",
      "::llvm::SmallVector<::llvm::StringRef>", "getGroupAxes", (ins), [{}],
      [{
        return ::llvm::to_vector(
            $_op.getAxes().template getAsValueRange<::mlir::StringAttr>());
      }]>,
    InterfaceMethod<[{
        Why the collective is there (which op, which layout conflict), or
        null.
      }], "::mlir::StringAttr", "getReasonAttr", (ins), [{
        return $_op.getReasonAttr();
      }]>,
    InterfaceMethod<[{
        The name of the collective's kind, as the runtime's Communicator
        counts them (`all_reduce`, `all_gather`, `reduce_scatter`,
        `all_to_all`, `broadcast`, `send_recv`).
      }], "::llvm::StringRef", "getCollectiveKind", (ins), [{}], [{
        return $_op->getName().stripDialect();
      }]>,
    InterfaceMethod<[{
        The bytes one call moves over the busiest link of a group of
        `groupSize` ranks, as nccl-tests counts bus bytes: (n-1)/n of the
        larger of input and output by default.
      }], "double", "getBusBytes", (ins "int64_t":$groupSize), [{}], [{
        double share = static_cast<double>(groupSize - 1) / groupSize;
        return share * std::max(
            ::mlir::dtc::tensorByteSize($_op->getOperand(0).getType()),
            ::mlir::dtc::tensorByteSize($_op->getResult(0).getType()));
      }]>
  ];
  let extraClassDeclaration = [{
    /// The number of ranks in the group (looked up in the mesh; -1 when the
    /// mesh or an axis does not exist).
    int64_t getGroupSize();
  }];
}

def DTC_CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::mlir::dtc";
  let description = [{
    An op that says what one execution of it costs: FLOPs by kind (matmul,
    other arithmetic, transcendental) and bytes read and written, for its
    operands' element types (`OpCost`, OpCost.h, which states the counting
    conventions). The cost model (lib/Analysis) sums it per step; read it
    through `getOpCost`, which falls back on the `Elementwise` and
    `BroadcastingElementwise` traits for ops without the interface. dtc's
    ops attach it as external models (DTCOpCosts.cpp).
  }];
  let methods = [
    InterfaceMethod<"The FLOPs and bytes of one execution of the op.",
      "::mlir::dtc::OpCost", "getCost", (ins)>
  ];
}

#endif // DTC_INTERFACES_TD
