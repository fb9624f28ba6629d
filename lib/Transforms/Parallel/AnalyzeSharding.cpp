//===- AnalyzeSharding.cpp - a partition's layouts, without partitioning --===//
//
// Runs the propagation engine in its analysis mode (AxisPartitioner) for
// the layout data or tensor parallelism would give a step, annotates the
// values with their layouts and reports the collectives; optionally checks
// the prediction against a real partition of a copy.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Parallel/Passes.h"

#include "AxisPartitioner.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

#include <cmath>
#include <set>

namespace mlir::dtc {
#define GEN_PASS_DEF_ANALYZESHARDING
#include "dtc/Transforms/Parallel/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// A collective as the check compares them: kind, axes, bus bytes (whole),
/// reason.
using Signature = std::tuple<std::string, std::string, long long, std::string>;

std::string joined(ArrayRef<std::string> axes) {
  std::string text;
  for (const std::string &axis : axes)
    text += (text.empty() ? "" : ",") + axis;
  return text;
}

Signature signatureOf(CollectiveOpInterface op) {
  SmallVector<std::string> axes;
  for (StringRef axis : op.getGroupAxes())
    axes.push_back(axis.str());
  StringAttr reason = op.getReasonAttr();
  return {op.getCollectiveKind().str(), joined(axes),
          std::llround(op.getBusBytes(op.getGroupSize())),
          reason ? reason.str() : std::string()};
}

/// `layout` over `axis` of `mesh` as a #dtc.sharding of a rank-`rank` value.
ShardingAttr shardingOf(MLIRContext *context, FlatSymbolRefAttr mesh,
                        StringRef axis, int64_t rank, AxisLayout layout) {
  Builder b(context);
  SmallVector<Attribute> dims(rank, b.getArrayAttr({}));
  SmallVector<int64_t> blocks;
  if (layout.isSplit()) {
    dims[layout.dim] = b.getStrArrayAttr({axis});
    if (layout.blocks > 1) {
      blocks.assign(rank, 1);
      blocks[layout.dim] = layout.blocks;
    }
  }
  return ShardingAttr::get(
      context, mesh, b.getArrayAttr(dims), blocks,
      layout.isPartial() ? b.getStrArrayAttr({axis}) : ArrayAttr());
}

struct AnalyzeShardingPass
    : public dtc::impl::AnalyzeShardingBase<AnalyzeShardingPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (axis != "dp" && axis != "tp") {
      module.emitError("dtc-analyze-sharding: unknown axis '")
          << axis << "' (dp or tp)";
      return signalPassFailure();
    }
    if (size < 2) {
      module.emitError("dtc-analyze-sharding needs size >= 2");
      return signalPassFailure();
    }
    FlatSymbolRefAttr mesh = meshWithAxis(module, axis, size);
    if (!mesh)
      return signalPassFailure();
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && failed(analyze(func, mesh)))
        return signalPassFailure();
  }

  /// Runs the engine on `func` (analysing, or on a copy, rewriting).
  LogicalResult runEngine(func::FuncOp func, FlatSymbolRefAttr mesh,
                          bool analysing,
                          std::optional<AxisPartitioner> &engine,
                          ArrayRef<SplitArgument> seeds, ResultSplits *splits,
                          int64_t sequence) {
    if (axis == "dp") {
      engine.emplace(func, size, mesh, "dp", "data-parallel");
    } else {
      engine.emplace(func, size, mesh, "tp", "tensor-parallel", seeds,
                     *splits, sequence);
    }
    if (analysing)
      engine->setAnalysisOnly();
    return engine->run();
  }

  LogicalResult analyze(func::FuncOp func, FlatSymbolRefAttr mesh) {
    SmallVector<SplitArgument> seeds;
    std::optional<ResultSplits> splits;
    int64_t sequence = 0;
    if (axis == "tp") {
      FailureOr<SmallVector<SplitArgument>> chosen =
          tensorParallelSeeds(func, size, strategy, shardingSpec);
      if (failed(chosen))
        return failure();
      seeds = std::move(*chosen);
      splits.emplace(func, seeds);
      if (sequenceParallel) {
        FailureOr<int64_t> length = sequenceLengthOf(func);
        if (failed(length))
          return failure();
        sequence = *length;
      }
    }
    // The existing collectives, before the engine looks at them.
    SmallVector<CollectiveOpInterface> existing;
    func.walk([&](CollectiveOpInterface op) { existing.push_back(op); });

    std::optional<AxisPartitioner> engine;
    if (failed(runEngine(func, mesh, /*analysing=*/true, engine, seeds,
                         splits ? &*splits : nullptr, sequence)))
      return failure();
    annotate(func, mesh, *engine);

    // What the partitioned function will hold: the existing collectives
    // (smaller where their input is split), changed or joined by the
    // planned ones.
    std::multiset<Signature> predicted;
    llvm::DenseSet<Operation *> changed;
    double total = 0;
    int64_t inserted = 0;
    for (const PlannedCollective &planned : engine->getCollectives()) {
      if (planned.folded)
        continue;
      if (planned.existing)
        changed.insert(planned.existing);
      else
        ++inserted;
      total += planned.busBytes;
      predicted.insert({planned.kind, joined(planned.axes),
                        std::llround(planned.busBytes), planned.reason});
      InFlightDiagnostic remark =
          emitRemark(planned.loc.value_or(func.getLoc()), "would ");
      remark << (planned.existing ? "change an existing collective into "
                                  : "insert ")
             << planned.kind << " over [" << joined(planned.axes) << "], "
             << std::llround(planned.busBytes)
             << " bus bytes: " << planned.reason;
    }
    for (CollectiveOpInterface op : existing) {
      if (changed.contains(op))
        continue;
      Signature signature = signatureOf(op);
      AxisLayout in = engine->getLayouts().lookup(op->getOperand(0));
      if (in.isSplit())
        std::get<2>(signature) = std::llround(
            op.getBusBytes(op.getGroupSize()) / static_cast<double>(size));
      predicted.insert(signature);
    }
    for (auto &[op, why] : engine->getFallbacks())
      op->emitRemark("would run replicated on gathered operands: ") << why;
    func.emitRemark("over '")
        << axis << "' (" << static_cast<int64_t>(size) << " ranks): "
        << inserted << " collectives inserted, "
        << engine->getCollectives().size() - inserted -
               llvm::count_if(engine->getCollectives(),
                              [](const PlannedCollective &p) {
                                return p.folded;
                              })
        << " changed, " << std::llround(total) << " bus bytes; "
        << engine->getFallbacks().size() << " ops replicated";
    if (!checkRewrite)
      return success();

    // The real partition, of a copy.
    OwningOpRef<ModuleOp> copy(cast<ModuleOp>(getOperation()->clone()));
    auto copied = copy->lookupSymbol<func::FuncOp>(func.getSymName());
    std::optional<ResultSplits> copiedSplits;
    if (splits)
      copiedSplits.emplace(copied, seeds);
    std::optional<AxisPartitioner> rewriter;
    {
      // Its warnings are the remarks above.
      ScopedDiagnosticHandler quiet(&getContext(), [](Diagnostic &diag) {
        return success(diag.getSeverity() == DiagnosticSeverity::Warning);
      });
      if (failed(runEngine(copied, mesh, /*analysing=*/false, rewriter, seeds,
                           copiedSplits ? &*copiedSplits : nullptr,
                           sequence)))
        return func.emitError("the partition of a copy failed");
    }
    std::multiset<Signature> actual;
    copied.walk(
        [&](CollectiveOpInterface op) { actual.insert(signatureOf(op)); });
    if (actual == predicted) {
      func.emitRemark("the partition inserts and changes exactly the "
                      "collectives predicted");
      return success();
    }
    InFlightDiagnostic error =
        func.emitError("the analysis does not predict the partition");
    for (const Signature &s : predicted)
      if (!actual.count(s))
        error.attachNote() << "predicted, not made: " << std::get<0>(s)
                           << " over [" << std::get<1>(s) << "] "
                           << std::get<2>(s) << " B: " << std::get<3>(s);
    for (const Signature &s : actual)
      if (!predicted.count(s))
        error.attachNote() << "made, not predicted: " << std::get<0>(s)
                           << " over [" << std::get<1>(s) << "] "
                           << std::get<2>(s) << " B: " << std::get<3>(s);
    return failure();
  }

  /// Every split or partial value's layout, as #dtc.sharding attributes.
  void annotate(func::FuncOp func, FlatSymbolRefAttr mesh,
                const AxisPartitioner &engine) {
    MLIRContext *context = &getContext();
    auto layoutOf = [&](Value value) {
      return engine.getLayouts().lookup(value);
    };
    auto rank = [](Value value) {
      return cast<RankedTensorType>(value.getType()).getRank();
    };
    for (BlockArgument arg : func.getArguments())
      if (!layoutOf(arg).isReplicated())
        func.setArgAttr(arg.getArgNumber(), "dtc.layout",
                        shardingOf(context, mesh, axis, rank(arg),
                                   layoutOf(arg)));
    func.walk([&](Operation *op) {
      if (op->getNumResults() == 0 ||
          llvm::all_of(op->getResults(), [&](Value result) {
            return layoutOf(result).isReplicated();
          }))
        return;
      SmallVector<Attribute> layouts;
      for (Value result : op->getResults())
        layouts.push_back(
            shardingOf(context, mesh, axis, rank(result), layoutOf(result)));
      op->setAttr("dtc.layouts", ArrayAttr::get(context, layouts));
    });
  }
};

} // namespace
