//===- Optimizer.cpp - apply an optimizer step ----------------------------===//
//
// Builds PyTorch's AdamW or SGD update in dtc ops. The order of operations
// follows torch.optim's single-tensor implementations (1.13), so that the
// same step in f32 gives the same parameters up to rounding.
//
//===----------------------------------------------------------------------===//

#include "Signature.h"
#include "dtc/Transforms/Training/Passes.h"

#include "dtc/Dialect/DTC/IR/DTCOpEmitter.h"
#include "dtc/Dialect/DTC/IR/PipelineStages.h"
#include "dtc/Dialect/DTC/IR/SignatureEditor.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "dtc/Runtime/StepSignature.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Regex.h"

#include <cmath>
#include <limits>

namespace mlir::dtc {
#define GEN_PASS_DEF_OPTIMIZER
#include "dtc/Transforms/Training/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// Scalar arithmetic in f64 and tensor updates, as dtc ops before the return.
class UpdateBuilder : public OpEmitter {
public:
  using OpEmitter::OpEmitter;

  Value f64(double value) {
    auto type = RankedTensorType::get({}, b.getF64Type());
    return ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, b.getF64FloatAttr(value)));
  }
  /// `value` converted to the element type of `like`.
  Value like(Value value, Value like) {
    auto from = cast<RankedTensorType>(value.getType());
    Type to = cast<RankedTensorType>(like.getType()).getElementType();
    if (from.getElementType() == to)
      return value;
    return CastOp::create(b, loc, from.clone(to), value);
  }
  Value sumAll(Value x) {
    SmallVector<int64_t> all;
    for (int64_t i = 0, e = cast<RankedTensorType>(x.getType()).getRank();
         i < e; ++i)
      all.push_back(i);
    return ReduceSumOp::create(b, loc, x, all, false);
  }
  Value sumOfSquares(Value x) { return sumAll(mul(x, x)); }

  /// Makes whole the scalar sums `parts[i]` over this rank's part of the
  /// gradient of `params[i]`: those of parameters split over some mesh axes
  /// are all-reduced over them, packed into one collective per set of axes
  /// (and, in a pipelined step, per set of pp coordinates holding them).
  void wholeSums(MutableArrayRef<Value> parts, ArrayRef<BlockArgument> params,
                 StringRef what) {
    llvm::MapVector<std::pair<Attribute, Attribute>, SmallVector<unsigned>>
        byAxes;
    FlatSymbolRefAttr mesh;
    for (auto [i, param] : llvm::enumerate(params)) {
      auto func = cast<func::FuncOp>(param.getOwner()->getParentOp());
      auto sharding = func.getArgAttrOfType<ShardingAttr>(param.getArgNumber(),
                                                          kShardingAttrName);
      if (!sharding)
        continue;
      SmallVector<Attribute> axes;
      for (unsigned d = 0, e = sharding.getDims().size(); d < e; ++d)
        for (StringRef axis : sharding.axesOf(d))
          axes.push_back(b.getStringAttr(axis));
      if (axes.empty())
        continue;
      mesh = sharding.getMesh();
      byAxes[{b.getArrayAttr(axes),
              func.getArgAttr(param.getArgNumber(), kPipelineRanksAttrName)}]
          .push_back(i);
    }
    for (auto &[key, members] : byAxes) {
      Attribute axes = key.first;
      SmallVector<Value> packed;
      for (unsigned i : members)
        packed.push_back(parts[i]);
      SmallVector<Value> sums = allReducePacked(
          b, loc, packed, mesh, cast<ArrayAttr>(axes),
          CollectiveReductionAttr::get(b.getContext(),
                                       CollectiveReduction::Sum),
          b.getStringAttr("optimizer: " + what +
                          " of the split parameters' gradients"));
      for (auto [i, sum] : llvm::zip(members, sums))
        parts[i] = sum;
    }
  }

  /// The sum of `terms`, one per parameter of `params` (made whole by
  /// wholeSums), on every rank. Under pipeline stages that hold their own
  /// parameters (dtc.pp_ranks), a term exists only where its parameter is
  /// held: each pp coordinate adds those of the parameters it holds first
  /// (a parameter every rank holds: coordinate 0) and broadcasts its sum to the
  /// others, as Megatron-LM all-reduces over pp.
  Value sumOverParameters(ArrayRef<Value> terms,
                          ArrayRef<BlockArgument> params) {
    auto plus = [&](Value total, Value term) {
      return total ? add(total, term) : term;
    };
    auto func = params.empty()
                    ? func::FuncOp()
                    : cast<func::FuncOp>(params[0].getOwner()->getParentOp());
    auto pipeline =
        func ? func->getAttrOfType<DictionaryAttr>(kPipelineAttrName) : nullptr;
    auto stageRanks =
        pipeline ? pipeline.getAs<DenseI64ArrayAttr>("stage_ranks") : nullptr;
    auto firstHolder = [&](BlockArgument param) -> int64_t {
      auto ranks = func.getArgAttrOfType<DenseI64ArrayAttr>(
          param.getArgNumber(), kPipelineRanksAttrName);
      return ranks && !ranks.empty() ? ranks[0] : 0;
    };
    if (!stageRanks || llvm::none_of(params, [&](BlockArgument param) {
          return func.getArgAttr(param.getArgNumber(), kPipelineRanksAttrName);
        })) {
      Value total;
      for (Value term : terms)
        total = plus(total, term);
      return total;
    }
    int64_t ranks = *llvm::max_element(stageRanks.asArrayRef()) + 1;
    Value total;
    for (int64_t coordinate = 0; coordinate < ranks; ++coordinate) {
      Value partial;
      for (auto [term, param] : llvm::zip(terms, params))
        if (firstHolder(param) == coordinate)
          partial = plus(partial, term);
      if (!partial)
        continue;
      Value sum = CollectiveBroadcastOp::create(
          b, loc, partial, getStepAttr(func).getMesh(),
          b.getStrArrayAttr({kPipelineAxisName}),
          b.getI64IntegerAttr(coordinate),
          b.getStringAttr("optimizer: pp coordinate " +
                          std::to_string(coordinate) +
                          "'s sum over the parameters it holds"));
      total = plus(total, sum);
    }
    return total;
  }
};

struct OptimizerPass : public dtc::impl::OptimizerBase<OptimizerPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    constexpr double inf = std::numeric_limits<double>::infinity();
    bool cosine = schedule == LRSchedule::WarmupCosine;
    OptionRanges ranges;
    ranges.check("lr", lr, 0, inf)
        .check("beta1", beta1, 0, 1, false, /*highOpen=*/true)
        .check("beta2", beta2, 0, 1, false, /*highOpen=*/true)
        .check("eps", eps, 0, inf, /*lowOpen=*/true)
        .check("weight-decay", weightDecay, 0, inf)
        .check("momentum", momentum, 0, inf)
        .check("clip-grad-norm", clipGradNorm, 0, inf)
        .check("warmup-start-factor", warmupStartFactor, 0, 1, true)
        .check("min-lr", minLr, 0, cosine ? double(lr) : inf)
        .require(warmupSteps >= 0, "option 'warmup-steps' is " +
                                       llvm::Twine(warmupSteps) +
                                       ": it must be at least 0")
        .require(totalSteps > 0, "option 'total-steps' is " +
                                     llvm::Twine(totalSteps) +
                                     ": it must be at least 1")
        .require(!cosine || warmupSteps <= totalSteps,
                 "option 'warmup-steps' (" + llvm::Twine(warmupSteps) +
                     ") must be at most 'total-steps' (" +
                     llvm::Twine(totalSteps) + ")");
    if (failed(ranges.verify(func)))
      return signalPassFailure();
    llvm::Regex noDecayRegex(noDecay);
    std::string regexError;
    if (!noDecay.empty() && !noDecayRegex.isValid(regexError)) {
      func.emitError("invalid no-decay regex: ") << regexError;
      return signalPassFailure();
    }

    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    llvm::StringMap<Value> grads;
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
      if (auto name = func.getResultAttrOfType<StringAttr>(i, kGradAttrName))
        grads[name.getValue()] = ret.getOperand(i);
    SmallVector<BlockArgument> params = trainableParameters(func);
    for (BlockArgument param : params)
      if (!grads.count(parameterName(param))) {
        func.emitError("no gradient for parameter '")
            << parameterName(param) << "' (run dtc-autodiff first)";
        return signalPassFailure();
      }

    OpBuilder b(ret);
    UpdateBuilder u(b, func.getLoc());
    SignatureEditor signature(func);
    auto state = [&](Type type, StateKind kind, StringRef param = {}) {
      StringAttr owner = param.empty() ? StringAttr() : b.getStringAttr(param);
      return signature.addArgument(
          type, {b.getNamedAttr(kStateAttrName,
                                StateAttr::get(b.getContext(), kind, owner))});
    };
    // The new values, each with the argument it replaces (which is donated:
    // `dtc.aliasing_output`), appended as results at the end, when a
    // skipped step can still keep the old ones.
    SmallVector<std::pair<Value, BlockArgument>> updates;
    auto update = [&](Value value, BlockArgument old) {
      updates.emplace_back(value, old);
    };

    // t = step + 1, as torch.optim counts; the learning rate for this step.
    // The importer may have made the step an argument already (dropout).
    BlockArgument step = getStateArgument(func, StateKind::Step);
    if (!step)
      step = state(RankedTensorType::get({}, b.getI64Type()), StateKind::Step);
    Value one = ConstantOp::create(
        b, u.loc,
        DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                               b.getI64IntegerAttr(1)));
    Value nextStep = u.add(step, one);
    Value t = CastOp::create(
        b, u.loc, RankedTensorType::get({}, b.getF64Type()), nextStep);
    Value lrT = learningRate(u, step);

    // Global-norm clipping, as torch.nn.utils.clip_grad_norm_: the norm of
    // the per-parameter norms; gradients scaled by min(max / (norm + 1e-6), 1).
    llvm::StringMap<Value> applied;
    SmallVector<Operation *> widened;
    for (BlockArgument param : params) {
      Value g = grads[parameterName(param)];
      if (g.getType() != masterOf(param)) {
        g = CastOp::create(b, u.loc, masterOf(param), g);
        widened.push_back(g.getDefiningOp());
      }
      applied[parameterName(param)] = g;
    }
    Value foundInf;
    BlockArgument scale = getStateArgument(func, StateKind::LossScale);
    if (scale)
      foundInf = unscaleGradients(func, u, ret, scale, applied);
    if (clipGradNorm > 0 && !params.empty()) {
      SmallVector<Value> sums;
      for (BlockArgument param : params)
        sums.push_back(u.sumOfSquares(applied[parameterName(param)]));
      u.wholeSums(sums, params, "sums of squares for --clip-grad-norm");
      SmallVector<Value> squares;
      for (Value sum : sums) {
        Value norm = u.sqrt(sum);
        squares.push_back(u.mul(norm, norm));
      }
      Value norm = u.sqrt(u.sumOverParameters(squares, params));
      Value coef = u.div(u.like(u.f64(clipGradNorm), norm),
                         u.add(norm, u.like(u.f64(1e-6), norm)));
      coef = u.min(coef, u.like(u.f64(1.0), coef));
      for (BlockArgument param : params)
        applied[parameterName(param)] =
            u.mul(applied[parameterName(param)],
                  u.like(coef, applied[parameterName(param)]));
    }

    for (BlockArgument param : params) {
      std::string name = parameterName(param).str();
      Value g = applied[name];
      bool decays =
          weightDecay != 0 && !(!noDecay.empty() && noDecayRegex.match(name));
      // A parameter stored in less than f32 is updated through an f32
      // master copy, and takes its rounding.
      Type stateType = masterOf(param);
      Value p = param;
      BlockArgument master;
      if (stateType != param.getType()) {
        // Laid out (split, padded) as the parameter: dtc-run cuts its
        // start from the parameter's value.
        p = master = state(stateType, StateKind::Master, name);
        for (StringRef attr :
             {kShardingAttrName, kUnpaddedRowsAttrName, kPaddedDimAttrName})
          if (Attribute value = func.getArgAttr(param.getArgNumber(), attr))
            signature.setArgAttr(master.getArgNumber(), attr, value);
      }
      auto updateParam = [&](Value value) {
        if (!master)
          return update(value, param);
        update(CastOp::create(b, u.loc, param.getType(), value), param);
        update(value, master);
      };
      if (optimizer == OptimizerKind::AdamW) {
        BlockArgument m = state(stateType, StateKind::ExpAvg, name);
        BlockArgument v = state(stateType, StateKind::ExpAvgSq, name);
        if (decays) // decoupled: p *= 1 - lr * wd
          p = u.mul(p,
                    u.like(u.sub(u.f64(1), u.mul(lrT, u.f64(weightDecay))), p));
        Value m2 = u.add(u.mul(m, u.like(u.f64(beta1), p)),
                         u.mul(g, u.like(u.f64(1 - beta1), p)));
        Value v2 = u.add(u.mul(v, u.like(u.f64(beta2), p)),
                         u.mul(u.mul(g, g), u.like(u.f64(1 - beta2), p)));
        Value bc1 = u.sub(u.f64(1), u.pow(u.f64(beta1), t));
        Value bc2 = u.sub(u.f64(1), u.pow(u.f64(beta2), t));
        Value stepSize = u.div(lrT, bc1);
        Value denom = u.add(u.div(u.sqrt(v2), u.like(u.sqrt(bc2), p)),
                            u.like(u.f64(eps), p));
        p = u.sub(p, u.mul(u.like(stepSize, p), u.div(m2, denom)));
        updateParam(p);
        update(m2, m);
        update(v2, v);
        continue;
      }
      Value d = g;
      if (decays) // coupled: d = g + wd * p
        d = u.add(d, u.mul(p, u.like(u.f64(weightDecay), p)));
      if (momentum != 0) {
        BlockArgument buf = state(stateType, StateKind::MomentumBuffer, name);
        Value buf2 = u.add(u.mul(buf, u.like(u.f64(momentum), p)), d);
        d = nesterov ? u.add(d, u.mul(buf2, u.like(u.f64(momentum), p))) : buf2;
        updateParam(u.sub(p, u.mul(d, u.like(lrT, p))));
        update(buf2, buf);
        continue;
      }
      updateParam(u.sub(p, u.mul(d, u.like(lrT, p))));
    }
    update(nextStep, step);
    if (scale)
      updateLossScale(func, u, scale, foundInf, update);
    for (auto &[value, old] : updates) {
      // A step whose gradients overflowed changes nothing but the scale.
      StateKind kind = StateKind::Step;
      if (auto state = signature.getArgAttrOfType<StateAttr>(
              old.getArgNumber(), kStateAttrName))
        kind = state.getKind();
      if (foundInf && kind != StateKind::LossScale &&
          kind != StateKind::GrowthTracker)
        value = SelectOp::create(b, u.loc, foundInf, old, value);
      signature.setArgAttr(old.getArgNumber(), kAliasingOutputAttrName,
                           b.getI64IntegerAttr(signature.getNumResults()));
      signature.addResult(value, {});
    }
    // The learning rate the step used, a result the runner reports.
    signature.addResult(
        CastOp::create(b, u.loc, RankedTensorType::get({}, b.getF32Type()),
                       lrT),
        {b.getNamedAttr(kOutputAttrName,
                        b.getStringAttr(kLearningRateOutputName))});
    signature.commit();
    // Each gradient is widened just before it is first read, not all of
    // them first: an f32 copy of every gradient live at once was a bf16
    // step's activation peak.
    // (Positions taken once: each move would make isBeforeInBlock number
    // the block again, quadratic in a pipelined step's ops.)
    llvm::DenseMap<Operation *, size_t> position;
    for (Operation &op : func.getBody().front())
      position[&op] = position.size();
    for (Operation *cast : widened) {
      Operation *first = nullptr;
      for (Operation *user : cast->getUsers())
        if (user->getBlock() == cast->getBlock() &&
            (!first || position.lookup(user) < position.lookup(first)))
          first = user;
      if (first)
        cast->moveBefore(first);
    }
  }

  /// The type `param` is updated in: f32 for a parameter stored in a
  /// narrower float type (dtc-master-weights), else its own.
  static Type masterOf(BlockArgument param) {
    auto type = cast<RankedTensorType>(param.getType());
    auto element = dyn_cast<FloatType>(type.getElementType());
    if (!element || element.getWidth() >= 32)
      return type;
    return type.clone(Float32Type::get(type.getContext()));
  }

  /// Dynamic loss scaling, as torch.cuda.amp.GradScaler: unscales the
  /// gradients by 1 / scale in f32 (also the returned ones, which are the
  /// true gradients) and returns whether any is not finite.
  Value unscaleGradients(func::FuncOp func, UpdateBuilder &u,
                         func::ReturnOp ret, Value scale,
                         llvm::StringMap<Value> &applied) {
    OpBuilder &b = u.b;
    Value invScale = u.div(u.like(u.f64(1), scale), scale);
    SmallVector<Value> counts;
    SmallVector<BlockArgument> countParams;
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
      auto name = func.getResultAttrOfType<StringAttr>(i, kGradAttrName);
      if (!name)
        continue;
      Value g = ret.getOperand(i);
      Value unscaled = u.mul(g, u.like(invScale, g));
      ret->setOperand(i, unscaled);
      applied[name.getValue()] = unscaled;
      // x - x is 0 for finite x and NaN otherwise.
      Value diff = u.sub(unscaled, unscaled);
      Value bad = CompareOp::create(b, u.loc, ComparisonPredicate::NE, diff,
                                    u.like(u.f64(0), diff));
      auto countType =
          cast<RankedTensorType>(bad.getType()).clone(b.getF32Type());
      counts.push_back(u.sumAll(CastOp::create(b, u.loc, countType, bad)));
      countParams.push_back(getParameterArgument(func, name.getValue()));
    }
    // Every rank must skip the step if any rank's part overflowed.
    u.wholeSums(counts, countParams, "counts of non-finite values");
    Value nonFinite = u.sumOverParameters(counts, countParams);
    if (!nonFinite)
      nonFinite = u.like(u.f64(0), scale);
    return CompareOp::create(b, u.loc, ComparisonPredicate::GT, nonFinite,
                             u.like(u.f64(0), nonFinite));
  }

  /// The next loss scale and growth tracker: halve on overflow, double
  /// after growth_interval finite steps in a row.
  template <typename Update>
  void updateLossScale(func::FuncOp func, UpdateBuilder &u, Value scale,
                       Value foundInf, Update update) {
    OpBuilder &b = u.b;
    BlockArgument tracker = getStateArgument(func, StateKind::GrowthTracker);
    // GradScaler's default when the step does not say.
    StepAttr step = getStepAttr(func);
    int64_t interval = step && step.getLossScaling()
                           ? step.getLossScaling().getGrowthInterval()
                           : 2000;
    auto i64 = [&](int64_t value) -> Value {
      return ConstantOp::create(
          b, u.loc,
          DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                 b.getI64IntegerAttr(value)));
    };
    Value next = u.add(tracker, i64(1));
    Value grow = CompareOp::create(b, u.loc, ComparisonPredicate::GE, next,
                                   i64(interval));
    Value grown = SelectOp::create(
        b, u.loc, grow, u.mul(scale, u.like(u.f64(2), scale)), scale);
    update(SelectOp::create(b, u.loc, foundInf,
                            u.mul(scale, u.like(u.f64(0.5), scale)), grown),
           cast<BlockArgument>(scale));
    update(SelectOp::create(b, u.loc, foundInf, i64(0),
                            SelectOp::create(b, u.loc, grow, i64(0), next)),
           tracker);
  }

  /// The learning rate at 0-based step `step`, an f64 scalar: constant, or
  /// PyTorch's SequentialLR of LinearLR(start_factor, total_iters = warmup)
  /// and CosineAnnealingLR(T_max = total - warmup, eta_min = min-lr):
  /// lr * (f + (1 - f) * k / W) for k < W, then
  /// min + (lr - min) * (1 + cos(pi * (k - W) / (total - W))) / 2.
  Value learningRate(UpdateBuilder &u, Value step) {
    if (schedule == LRSchedule::Constant)
      return u.f64(lr);
    OpBuilder &b = u.b;
    Value k = CastOp::create(b, u.loc,
                             RankedTensorType::get({}, b.getF64Type()), step);
    double w = std::max<int64_t>(warmupSteps, 1);
    Value warm =
        u.mul(u.f64(lr), u.add(u.f64(warmupStartFactor),
                               u.mul(u.f64((1 - warmupStartFactor) / w), k)));
    double span = std::max<int64_t>(totalSteps - warmupSteps, 1);
    Value progress =
        u.min(u.max(u.div(u.sub(k, u.f64(warmupSteps)), u.f64(span)), u.f64(0)),
              u.f64(1));
    Value cosine = CosOp::create(b, u.loc, u.mul(progress, u.f64(M_PI)));
    Value decayed = u.add(u.f64(minLr), u.mul(u.f64(0.5 * (lr - minLr)),
                                              u.add(u.f64(1), cosine)));
    Value inWarmup = CompareOp::create(b, u.loc, ComparisonPredicate::LT, k,
                                       u.f64(warmupSteps));
    return SelectOp::create(b, u.loc, inWarmup, warm, decayed);
  }
};

} // namespace
