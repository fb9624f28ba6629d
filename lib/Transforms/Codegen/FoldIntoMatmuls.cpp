//===- FoldIntoMatmuls.cpp - transposes and batch sums as GEMM operands ---===//
//
// A GEMM reads either operand transposed at no cost (BLAS's transa/transb,
// cuBLAS's alike), but exporters and autodiff write transposes as ops:
// `x @ W.T` transposes a Linear's [out, in] weight every step, and the
// weight's gradient is `sum over the batch of x^T g` ([batch, in, out]
// products summed to [in, out]), then transposed back to [out, in]. Each is
// a kernel over the whole weight or more. Here they become the matmuls'
// own: a transposed operand sets the matmul's flag, a transposed product
// swaps the operands (`(A B)^T = B^T A^T`), and a product summed over its
// batch multiplies the operands with the batch merged into their shared
// dimension (one GEMM over batch x tokens). The same sums in another
// grouping: values change only by rounding.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Codegen/Passes.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_FOLDINTOMATMULS
#include "dtc/Transforms/Codegen/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// Whether `transpose` swaps its last two dimensions and keeps the others.
bool swapsLastTwo(TransposeOp transpose) {
  ArrayRef<int64_t> perm = transpose.getPermutation();
  auto rank = static_cast<int64_t>(perm.size());
  if (rank < 2)
    return false;
  for (int64_t i = 0; i < rank - 2; ++i)
    if (perm[i] != i)
      return false;
  return perm[rank - 2] == rank - 1 && perm[rank - 1] == rank - 2;
}

/// matmul(transpose(a), b) -> matmul(a, b) with the lhs flag flipped; the
/// same for the rhs.
struct TransposedOperand : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp matmul,
                                PatternRewriter &rewriter) const override {
    auto lhs = matmul.getLhs().getDefiningOp<TransposeOp>();
    auto rhs = matmul.getRhs().getDefiningOp<TransposeOp>();
    bool foldLhs = lhs && swapsLastTwo(lhs), foldRhs = rhs && swapsLastTwo(rhs);
    if (!foldLhs && !foldRhs)
      return failure();
    rewriter.replaceOpWithNewOp<MatmulOp>(
        matmul, matmul.getType(), foldLhs ? lhs.getInput() : matmul.getLhs(),
        foldRhs ? rhs.getInput() : matmul.getRhs(),
        matmul.getTransposeLhs() != foldLhs,
        matmul.getTransposeRhs() != foldRhs);
    return success();
  }
};

/// transpose(matmul(a, b)) -> matmul(b, a) with both flags flipped: (A B)^T
/// = B^T A^T. Only for a product nothing else reads.
struct TransposedProduct : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    auto matmul = transpose.getInput().getDefiningOp<MatmulOp>();
    if (!matmul || !matmul->hasOneUse() || !swapsLastTwo(transpose))
      return failure();
    rewriter.replaceOpWithNewOp<MatmulOp>(
        transpose, transpose.getType(), matmul.getRhs(), matmul.getLhs(),
        !matmul.getTransposeRhs(), !matmul.getTransposeLhs());
    return success();
  }
};

/// reduce_sum(matmul(x, g, transpose_lhs), dims = the batch) with x
/// [batch..., s, k] and g [batch..., s, n] -> one matmul of x as
/// [batch * s, k] and g as [batch * s, n], transposing x: the batch is
/// summed as part of the GEMM's inner dimension. Only for a product nothing
/// else reads.
struct BatchSummedProduct : OpRewritePattern<ReduceSumOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceSumOp sum,
                                PatternRewriter &rewriter) const override {
    auto matmul = sum.getInput().getDefiningOp<MatmulOp>();
    if (!matmul || !matmul->hasOneUse() || !matmul.getTransposeLhs() ||
        matmul.getTransposeRhs())
      return failure();
    auto x = cast<RankedTensorType>(matmul.getLhs().getType());
    auto g = cast<RankedTensorType>(matmul.getRhs().getType());
    int64_t rank = x.getRank();
    if (rank < 3 || g.getRank() != rank ||
        x.getShape().drop_back() != g.getShape().drop_back())
      return failure();
    ArrayRef<int64_t> dims = sum.getDims();
    if (static_cast<int64_t>(dims.size()) != rank - 2)
      return failure();
    for (auto [i, dim] : llvm::enumerate(dims))
      if (dim != static_cast<int64_t>(i))
        return failure();
    int64_t rows = 1;
    for (int64_t size : x.getShape().drop_back())
      rows *= size;
    Location loc = sum.getLoc();
    auto flat = [&](Value v, RankedTensorType type) -> Value {
      return ReshapeOp::create(rewriter, loc,
                               type.clone({rows, type.getShape().back()}), v);
    };
    Value product = MatmulOp::create(rewriter, loc, flat(matmul.getLhs(), x),
                                     flat(matmul.getRhs(), g),
                                     /*transpose_lhs=*/true,
                                     /*transpose_rhs=*/false);
    rewriter.replaceOpWithNewOp<ReshapeOp>(sum, sum.getType(), product);
    return success();
  }
};

/// reshape(reshape(x)) -> reshape(x), so that a product reshaped to the
/// kept dimensions of its sum and back meets the transpose after it.
struct ReshapedReshape : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp reshape,
                                PatternRewriter &rewriter) const override {
    auto inner = reshape.getInput().getDefiningOp<ReshapeOp>();
    if (!inner)
      return failure();
    rewriter.replaceOpWithNewOp<ReshapeOp>(reshape, reshape.getType(),
                                           inner.getInput());
    return success();
  }
};

struct FoldIntoMatmulsPass
    : public mlir::dtc::impl::FoldIntoMatmulsBase<FoldIntoMatmulsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<TransposedOperand, TransposedProduct, BatchSummedProduct,
                 ReshapedReshape>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
