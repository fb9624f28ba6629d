//===- BatchPartitioner.h - a step's program for one batch shard -*- C++
//-*-===//

#ifndef DTC_LIB_TRANSFORMS_PARALLEL_BATCHPARTITIONER_H
#define DTC_LIB_TRANSFORMS_PARALLEL_BATCHPARTITIONER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::dtc {

/// Rewrites the differentiated step `func` into the program of one of
/// `shards` equal shards of its batch (dimension 0 of every dtc.input):
/// partial sums are all-reduced over `axis` of `mesh` where they are needed
/// whole, each with a reason starting with `purpose`. Errors name the op or
/// input that cannot be partitioned.
LogicalResult partitionBatch(func::FuncOp func, int64_t shards,
                             FlatSymbolRefAttr mesh, StringRef axis,
                             StringRef purpose);

} // namespace mlir::dtc

#endif // DTC_LIB_TRANSFORMS_PARALLEL_BATCHPARTITIONER_H
