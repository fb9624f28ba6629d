//===- DTCAttrs.td - dtc attributes ------------------------*- tablegen -*-===//

#ifndef DTC_ATTRS_TD
#define DTC_ATTRS_TD

include "dtc/Dialect/DTC/IR/DTCDialect.td"
include "mlir/IR/AttrTypeBase.td"

def DTC_ShardingAttr : AttrDef<DTC_Dialect, "Sharding"> {
  let mnemonic = "sharding";
  let summary = "How a tensor is laid out over a device mesh";
  let description = [{
    For every dimension of a tensor, the mesh axes it is split over (none:
    the dimension is whole on every rank). A rank holds chunk r of the
    dimension, r its coordinate on the axis; a dimension split over several
    axes is split by each in turn (tp's part, then dp's part of that). With
    `blocks`, the first split views the dimension as `blocks[d]` equal
    blocks and splits every block: the rank holds chunk r of each block, in
    block order (a fused QKV weight split by heads holds its heads' q, k
    and v). `partial` names
    the axes over which the ranks' values are partial sums of the whole.

    The partitioners put it on the arguments of the per-rank program
    (`dtc.sharding`), so that a runner can hand each rank its part of a
    whole tensor and put the parts back together for dumps.

    ```mlir
    #dtc.sharding<@mesh, [["tp"], []] blocks = [3, 1]>
    ```
  }];
  let parameters = (ins "FlatSymbolRefAttr":$mesh, "ArrayAttr":$dims,
                        OptionalArrayRefParameter<"int64_t">:$blocks,
                        OptionalParameter<"ArrayAttr">:$partial);
  let assemblyFormat = "`<` $mesh `,` $dims (`blocks` `=` `[` $blocks^ `]`)? "
                       "(`partial` `=` $partial^)? `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The axes dimension `dim` is split over.
    ::llvm::SmallVector<::llvm::StringRef> axesOf(unsigned dim) const;
    /// The blocks of dimension `dim` (1 without `blocks`).
    int64_t blocksOf(unsigned dim) const;
  }];
}

#endif // DTC_ATTRS_TD
