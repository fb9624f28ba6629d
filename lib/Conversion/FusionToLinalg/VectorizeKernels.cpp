//===- VectorizeKernels.cpp - loop kernels computed 8 elements at a time --===//
//
// Each linalg.generic of a kernel (a loop group's nest per result) whose
// operands all read the innermost dimension contiguously or not at all is
// split at the last multiple of 8 along it; the first part is tiled into
// [1, ..., 1, 8] tiles and each tile vectorized by linalg's vectorizer
// (transfer reads and writes, its arith and math ops on vector<8xT>,
// scalars read outside the body broadcast); the columns left stay a scalar
// generic for linalg-to-loops. A lane computes its element with the same
// ops as the scalar loop (no reassociation, no fast-math), so the results
// do not depend on where an element falls. Nests that read along a
// reshape (floordiv/mod indexes), index the tensor (dropout, iota), read
// or write bools or write fewer than 8 columns stay scalar, for LLVM's
// loop vectorizer.
//
//===----------------------------------------------------------------------===//

#include "dtc/Conversion/FusionToLinalg.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace {

/// True when `map` reads loop dimension `inner` only as its last index,
/// and every index is a loop dimension or 0 (a broadcast size-1 dimension):
/// a tile of consecutive `inner` indexes reads consecutive elements, or
/// one element for all of them.
bool readsInnerContiguously(AffineMap map, unsigned inner) {
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      if (dim.getPosition() == inner && i + 1 != map.getNumResults())
        return false;
      continue;
    }
    auto constant = dyn_cast<AffineConstantExpr>(expr);
    if (!constant || constant.getValue() != 0)
      return false;
  }
  return true;
}

/// The generics this pass vectorizes: loops all parallel and static, the
/// innermost at least kFoldLanes long and read contiguously by every
/// operand, no bool buffers, a body the vectorizer takes (no linalg.index,
/// no loads: dropout and iota stay scalar).
bool isVectorizable(linalg::GenericOp generic) {
  unsigned loops = generic.getNumLoops();
  if (!generic.hasPureBufferSemantics() || loops == 0 ||
      generic.getNumParallelLoops() != loops || generic.hasIndexSemantics())
    return false;
  // (A bool buffer holds a byte per element; a vector<8xi1> in memory is
  // 8 bits.)
  if (llvm::any_of(generic->getOperandTypes(),
                   [](Type t) { return getElementTypeOrSelf(t).isInteger(1); }))
    return false;
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  if (ShapedType::isDynamicShape(ranges) || ranges.back() < dtc::kFoldLanes ||
      !llvm::all_of(generic.getIndexingMapsArray(), [&](AffineMap map) {
        return readsInnerContiguously(map, loops - 1);
      }))
    return false;
  return succeeded(linalg::vectorizeOpPrecondition(generic));
}

/// Tiles `generic` (its innermost range a multiple of kFoldLanes) into
/// [1, ..., 1, kFoldLanes] tiles and vectorizes each.
LogicalResult vectorizeInTiles(RewriterBase &rewriter,
                               linalg::GenericOp generic) {
  SmallVector<OpFoldResult> sizes(generic.getNumLoops() - 1,
                                  rewriter.getIndexAttr(1));
  sizes.push_back(rewriter.getIndexAttr(dtc::kFoldLanes));
  scf::SCFTilingOptions options;
  options.setTileSizes(sizes);
  rewriter.setInsertionPoint(generic);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(generic.getOperation()), options);
  if (failed(tiled))
    return failure();
  rewriter.eraseOp(generic);
  Operation *tile = tiled->tiledOps.back();
  rewriter.setInsertionPoint(tile);
  if (failed(linalg::vectorize(rewriter, tile)))
    return failure();
  rewriter.eraseOp(tile);
  return success();
}

struct VectorizeKernels
    : public PassWrapper<VectorizeKernels, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VectorizeKernels)
  StringRef getArgument() const final { return "dtc-vectorize-kernels"; }
  StringRef getDescription() const final {
    return "Compute each contiguous elementwise linalg.generic of a kernel "
           "in vectors of 8 elements, the columns left over scalar";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<affine::AffineDialect, scf::SCFDialect,
                    vector::VectorDialect, memref::MemRefDialect>();
  }

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp generic) {
      if (isVectorizable(generic))
        generics.push_back(generic);
    });
    if (generics.empty())
      return;
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp generic : generics) {
      int64_t columns = generic.getStaticLoopRanges().back();
      int64_t whole = columns - columns % dtc::kFoldLanes;
      if (whole != columns) {
        // The columns from `whole` on: a scalar generic of their own.
        rewriter.setInsertionPoint(generic);
        generic = cast<linalg::GenericOp>(
            linalg::splitOp(
                rewriter, cast<TilingInterface>(generic.getOperation()),
                generic.getNumLoops() - 1, rewriter.getIndexAttr(whole))
                .first.getOperation());
      }
      if (failed(vectorizeInTiles(rewriter, generic))) {
        generic.emitError("a kernel's loop nest could not be vectorized");
        return signalPassFailure();
      }
    }
    // A tile's vectors are [1, ..., 1, 8]: to vector<8xT>, and its reads
    // and writes to plain loads and stores (a broadcast read: one load and
    // a broadcast), which the LLVM lowering takes as one register each.
    RewritePatternSet patterns(&getContext());
    vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorTransferLoweringPatterns(patterns,
                                                   /*maxTransferRank=*/1);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> mlir::dtc::createVectorizeKernelsPass() {
  return std::make_unique<VectorizeKernels>();
}
