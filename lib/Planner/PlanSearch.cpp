//===- PlanSearch.cpp - configurations, evaluated and ranked --------------===//
//
// A configuration's memory per rank, communication per axis and step time
// from the model's anatomy alone (docs/Planner.md). The persistent state
// follows dtc's own rules exactly (tensor parallelism's layouts, ZeRO's
// shards and padding); activations and times are estimates: per-layer
// figures scaled by the microbatch and the tensor-parallel degree, the
// pipeline timed by the schedule simulator.
//
//===----------------------------------------------------------------------===//

#include "dtc/Planner/Planner.h"

#include "dtc/Transforms/Pipeline/Schedule.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

using namespace mlir;
using namespace mlir::dtc;
namespace pp = mlir::dtc::pipeline;

std::string PlanConfig::getMesh() const {
  std::string mesh;
  for (auto [axis, size] : {std::pair<const char *, int64_t>{"pp", pp},
                            {"dp", dp},
                            {"ep", ep},
                            {"cp", cp},
                            {"tp", tp}})
    if (size > 1)
      mesh += (mesh.empty() ? "" : ",") + std::string(axis) + "=" +
              std::to_string(size);
  return mesh;
}

std::string PlanConfig::getFlags(StringRef precision) const {
  std::string mesh = getMesh();
  std::string flags = "--precision " + precision.str();
  if (!mesh.empty())
    flags += " --mesh " + mesh;
  if (tp > 1 && sequenceParallel)
    flags += " --sequence-parallel";
  if (cp > 1 && getContextParallel() != "ring")
    flags += " --context-parallel " + getContextParallel().str();
  if (zero > 0)
    flags += " --zero " + std::to_string(zero);
  if (pp > 1) {
    flags += " --microbatches " + std::to_string(microbatches) +
             " --pipeline-schedule " + schedule;
    if (schedule == "interleaved")
      flags += " --virtual-stages " + std::to_string(virtualStages);
    flags += " --pipeline-split ";
    for (auto [i, n] : llvm::enumerate(split))
      flags += (i ? "," : "") + std::to_string(n);
  } else if (microbatches > 1) {
    flags += " --grad-accum " + std::to_string(microbatches);
  }
  if (recompute >= 1)
    flags += " --remat full";
  else if (recompute > 0)
    flags += " --remat budget=" + std::to_string(rematBudgetBytes);
  return flags;
}

std::vector<int64_t> mlir::dtc::balanceLayers(const ModelAnatomy &model,
                                              int64_t stages,
                                              bool fusedAttention) {
  int64_t layers = model.layers;
  if (stages <= 1)
    return {layers};
  const ForwardTimes &times = model.getTimes(fusedAttention);
  double layer = std::max(times.layerSeconds, 1e-30);
  double outer = times.outerSeconds;
  // At most `most` layers on each stage but the last, which takes the rest
  // (at least one) beside the head: the `most` with the fastest slowest
  // stage.
  int64_t best = -1, bestLast = 0;
  double bestTime = 0;
  for (int64_t most = 1; most <= layers; ++most) {
    int64_t last = std::max<int64_t>(1, layers - (stages - 1) * most);
    int64_t rest = layers - last;
    if (rest < stages - 1 || rest > (stages - 1) * most)
      continue;
    double time = std::max(most * layer, last * layer + outer);
    if (best < 0 || time < bestTime) {
      best = most;
      bestLast = last;
      bestTime = time;
    }
  }
  if (best < 0)
    return {};
  // The other layers as evenly as they go, the extra ones on later stages
  // (the first stage keeps the most microbatches in flight).
  std::vector<int64_t> counts(stages);
  int64_t rest = layers - bestLast, others = stages - 1;
  for (int64_t k = 0; k < others; ++k)
    counts[k] = rest / others + (k >= others - rest % others ? 1 : 0);
  counts.back() = bestLast;
  return counts;
}

namespace {

/// The loss's sum and its token count, reduced over dp every step (a
/// pipeline of several microbatches sums the count before them too, for
/// their backward); the loss itself, broadcast from the last pipeline
/// stage to every rank.
constexpr double kLossBytes = 8, kLossCountBytes = 4, kLossValueBytes = 4;

/// A group of `size` ranks `stride` apart stays within a node when it
/// spans no more than one node's devices (ranks in pp, dp, cp, tp order).
const LinkSpec &linkOf(const DeviceSpec &device, const PlanRequest &request,
                       int64_t stride, int64_t size) {
  return (size - 1) * stride < request.gpusPerNode ? device.intraNode
                                                   : device.interNode;
}

/// `calls` ring collectives over `ranks` moving `busBytes` in all: each
/// call passes its data through ranks-1 hops, each hop paying the link's
/// latency (NCCL's ring gathers and scatters; an all-reduce is two calls).
double ringSeconds(const LinkSpec &link, int64_t ranks, double calls,
                   double busBytes) {
  if (ranks <= 1)
    return 0;
  return calls * (ranks - 1) * link.latencySeconds +
         busBytes / link.bytesPerSecond;
}

/// Elements of a rank's part of `shape` split along `dim` over `tp` ranks
/// (a dimension tp does not divide is padded, as the vocabulary is).
std::vector<int64_t> localShape(const PlannedParameter &param, int64_t dim,
                                int64_t tp) {
  std::vector<int64_t> shape = param.shape;
  if (dim >= 0)
    shape[dim] = (shape[dim] + tp - 1) / tp;
  return shape;
}

int64_t product(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// ZeRO's shard of one parameter's state (Zero.cpp's rules), in elements
/// of a rank's part: what a rank keeps (`shard`), the part padded for the
/// split (`padded`; its gradient's size under ZeRO-1), the shard after dp's
/// split alone (`afterDp`), and whether dp and ep split it at all.
struct ZeroShard {
  int64_t shard = 0, padded = 0, afterDp = 0;
  bool overDp = false, overEp = false;
};

/// Over one axis of `ranks`: the first dimension of `shape` it divides that
/// no axis splits (`taken`), else, unless `ownDimOnly`, the first it
/// divides, else the first no axis splits padded to a multiple of `ranks`.
/// Returns {dimension, its extent once padded}.
std::optional<std::pair<int64_t, int64_t>>
zeroDim(const std::vector<int64_t> &shape, const std::vector<bool> &taken,
        int64_t ranks, bool ownDimOnly) {
  for (bool split : {false, true}) {
    if (split && ownDimOnly)
      return std::nullopt;
    for (int64_t d = 0, r = shape.size(); d < r; ++d)
      if (taken[d] == split && shape[d] % ranks == 0)
        return std::make_pair(d, shape[d]);
  }
  for (int64_t d = 0, r = shape.size(); d < r; ++d)
    if (!taken[d])
      return std::make_pair(d, (shape[d] + ranks - 1) / ranks * ranks);
  return std::nullopt;
}

/// ZeRO over dp, then, for a parameter ep does not split (`expert` false)
/// and dp did not pad, over ep along a dimension of its own. `taken` marks
/// the dimensions of a rank's `shape` other axes split.
ZeroShard zeroShard(std::vector<int64_t> shape, std::vector<bool> taken,
                    int64_t dp, int64_t ep, bool expert) {
  ZeroShard zero;
  zero.padded = product(shape);
  bool padded = false;
  auto split = [&](int64_t ranks, bool ownDimOnly) {
    std::optional<std::pair<int64_t, int64_t>> dim =
        zeroDim(shape, taken, ranks, ownDimOnly);
    if (!dim)
      return false;
    auto [d, extent] = *dim;
    if (extent != shape[d]) {
      zero.padded = zero.padded / shape[d] * extent;
      padded = true;
    }
    shape[d] = extent / ranks;
    taken[d] = true;
    return true;
  };
  zero.overDp = dp > 1 && split(dp, false);
  zero.afterDp = product(shape);
  zero.overEp = ep > 1 && !expert && !padded && split(ep, dp > 1);
  zero.shard = product(shape);
  return zero;
}

} // namespace

namespace {
/// Built schedules by (kind, ranks, microbatches, chunks): the search
/// evaluates many configurations of one pipeline shape, and building a
/// zero-bubble schedule costs more than evaluating it.
using ScheduleCache =
    std::map<std::tuple<std::string, int64_t, int64_t, int64_t>,
             std::optional<pp::Schedule>>;

/// `config`'s schedule, or null where its kind does not take its shape.
const pp::Schedule *getSchedule(const PlanConfig &config,
                                ScheduleCache &cache) {
  auto key = std::make_tuple(config.schedule, config.pp, config.microbatches,
                             config.virtualStages);
  auto [it, inserted] = cache.try_emplace(key);
  if (inserted) {
    pp::Schedule schedule;
    std::optional<pp::ScheduleKind> kind =
        pp::parseScheduleKind(config.schedule);
    if (kind && pp::buildSchedule(*kind, config.pp, config.microbatches,
                                  config.getScheduleVirtualStages(), schedule)
                    .empty())
      it->second = std::move(schedule);
  }
  return it->second ? &*it->second : nullptr;
}

/// What one pp rank holds and data parallelism moves for it.
struct RankState {
  PlanMemory memory;
  int64_t gradientElements = 0;
  /// Its weights' bytes, and its largest layer's.
  int64_t paramBytes = 0, largestLayerBytes = 0;
  /// Bus bytes per step of the gradients' reduction over the
  /// data-parallel ranks (each microbatch's under ZeRO-2/3) and of ZeRO's
  /// gathers of the updated weights (and of ZeRO-3's again for the
  /// backward).
  double reduceBus = 0, gatherBus = 0;
  /// Of the reduction, the all-reduces of the gradients sequence
  /// parallelism leaves partial over tp, once a step: over tp alone where
  /// nothing else splits the batch.
  double partialOverTpBus = 0;
  /// Bytes over pp per step for the parameters several pp ranks hold: the
  /// gradients' partial sums sent down between their stages, each
  /// microbatch, and the summed gradient sent back up once.
  double sharedGradientBytes = 0;
};

/// A stage's collectives over one axis: bus bytes and calls per
/// microbatch, in its forward and in its backward, and once a step after
/// them.
struct StageTraffic {
  double forwardBytes = 0, backwardBytes = 0, forwardCalls = 0,
         backwardCalls = 0, stepBytes = 0, stepCalls = 0;
};

/// What dtc's partition of the step at `config`'s tp communicates over tp,
/// where measured (as `config` runs it: with sequence parallelism or
/// without).
const TensorParallelTraffic *
getTensorParallelTraffic(const ModelAnatomy &model, const PlanConfig &config) {
  auto it = model.tensorParallelTraffic.find(config.tp);
  if (it == model.tensorParallelTraffic.end() ||
      config.sequenceParallel != model.sequenceParallel)
    return nullptr;
  return &it->second;
}

/// The fraction of its data a ring collective over `ranks` passes on.
double ringShare(int64_t ranks) { return (ranks - 1.0) / ranks; }

/// Per microbatch of `config`, what one layer keeps for its backward on a
/// rank: its saved activations (without the scores where a fused kernel
/// recomputes them), or, recomputed, only its input (the residual stream).
struct LayerActivations {
  double saved = 0, input = 0;
};
LayerActivations layerActivations(const ModelAnatomy &model,
                                  const PlanConfig &config,
                                  const PlanRequest &request) {
  double rows =
      double(model.batch) / (config.getBatchRanks() * config.microbatches);
  // Ring attention, like a fused kernel, keeps a log-sum-exp per query
  // instead of the scores.
  bool ring = config.cp > 1 && config.getContextParallel() == "ring";
  double saved =
      model.savedBytesPerLayer -
      (request.fusedAttention || ring ? model.scoreBytesPerLayer : 0);
  // Context parallelism keeps a rank's tokens: 1/cp of each sequence;
  // tensor parallelism its share of the heads and the MLP's width, and
  // with sequence parallelism of the residual stream's tokens too.
  double split = double(config.tp) * config.cp;
  double whole =
      config.tp > 1 && !config.sequenceParallel ? model.streamBytesPerLayer : 0;
  double streamSplit = whole > 0 ? config.cp : split;
  LayerActivations layer{((saved - whole) / split + whole / config.cp) *
                             (rows / model.batch),
                         rows * model.sequence * model.hidden *
                             model.activationBytes / streamSplit};
  // The all-gather keeps the whole sequence's keys and values (of the
  // rank's heads) for the backward, besides its own part.
  if (config.cp > 1 && !ring)
    layer.saved += 2.0 * rows * model.sequence * model.keyValueWidth *
                   model.activationBytes / config.tp * (config.cp - 1) /
                   config.cp;
  return layer;
}

/// The persistent state per pp rank, exactly as dtc lays it out: each
/// parameter on the ranks whose stages read it (`stageOf` gives a layer's
/// stage, `rankOfStage` a stage's rank), tp-local (an expert's ep-local
/// too), sharded by ZeRO's rules.
std::vector<RankState>
layOutState(const ModelAnatomy &model, const PlanConfig &config,
            llvm::function_ref<int64_t(int64_t)> stageOf,
            llvm::function_ref<int64_t(int64_t)> rankOfStage) {
  std::vector<RankState> ranks(config.pp);
  const std::vector<int64_t> &tpDims = model.tensorParallelDims.at(config.tp);
  // The gradients tp leaves partial sums (as dtc partitioned the step; else
  // those of the weights it does not split, under sequence parallelism).
  const TensorParallelTraffic *measured =
      getTensorParallelTraffic(model, config);
  const std::set<std::string> *partialGradients =
      measured ? &measured->partialGradients : nullptr;
  std::vector<int64_t> layerBytes(model.layers);
  int z = config.zero;
  const int64_t dp = config.dp, ep = config.ep, cp = config.cp;
  for (auto [i, param] : llvm::enumerate(model.parameters)) {
    std::vector<int64_t> shape = localShape(param, tpDims[i], config.tp);
    std::vector<bool> taken(shape.size(), false);
    if (tpDims[i] >= 0)
      taken[tpDims[i]] = true;
    bool expert = param.expert && ep > 1;
    if (expert) {
      shape[0] /= ep;
      taken[0] = true;
    }
    int64_t n = product(shape);
    ZeroShard zero = zeroShard(shape, taken, z ? dp : 1, z ? ep : 1, expert);
    int64_t shard = zero.shard, padded = zero.padded;
    // The stages that read it, and the ranks that hold it.
    std::set<int64_t> stages = {stageOf(param.layer)}, holders;
    for (int64_t layer : param.alsoReadBy)
      stages.insert(stageOf(layer));
    for (int64_t stage : stages)
      holders.insert(rankOfStage(stage));
    for (int64_t holder : holders) {
      PlanMemory &m = ranks[holder].memory;
      if (!param.trained) {
        m.parameters += n * param.paramBytes;
        continue;
      }
      m.parameters += (z >= 3 ? shard : n) * param.paramBytes;
      m.gradients += (z >= 2 ? shard : z == 1 ? padded : n) * param.gradBytes;
      m.masterWeights += (z >= 1 ? shard : n) * param.masterBytes;
      m.optimizerState += (z >= 1 ? shard : n) * param.stateBytes;
    }
    if (!param.trained)
      continue;
    // Held by several ranks: the backward of each microbatch sums its
    // gradient from the last stage that reads it down to the first, a
    // partial sum (in the backward's type) crossing to the next rank
    // down; the first one's rank reduces it over dp, whole, and sends it
    // back to the others, which update their copies as it does its own.
    bool shared = holders.size() > 1;
    RankState &rank = ranks[rankOfStage(*stages.begin())];
    if (shared) {
      for (auto next = std::next(stages.begin()); next != stages.end();
           ++next) {
        int64_t from = rankOfStage(*next), to = rankOfStage(*std::prev(next));
        if (from == to)
          continue;
        double partial = double(config.microbatches) * n * param.gradSumBytes;
        ranks[from].sharedGradientBytes += partial;
        ranks[to].sharedGradientBytes += partial;
      }
      for (int64_t holder : holders)
        ranks[holder].sharedGradientBytes += double(n) * param.gradBytes;
    }
    rank.gradientElements += n;
    rank.paramBytes += n * param.paramBytes;
    // Summed over the ranks that hold other rows of the batch: dp's and
    // cp's, and ep's unless ep splits it. Under ZeRO (without cp) a
    // reduce-scatter over dp, and over ep along a dimension of its own (or
    // an all-reduce of dp's part); the shard then gathered back.
    // A weight whose gradient tp leaves partial on each tp rank (under
    // sequence parallelism a norm's scale, a bias after a row-parallel
    // projection; key/value heads tp does not split) is summed over tp
    // too, in one all-reduce after the last microbatch.
    bool partialOverTp =
        config.tp > 1 && !expert &&
        (partialGradients ? partialGradients->count(param.name) > 0
                          : config.sequenceParallel && tpDims[i] < 0);
    int64_t reducers =
        dp * cp * (expert ? 1 : ep) * (partialOverTp ? config.tp : 1);
    double grad = param.gradBytes, weight = param.paramBytes;
    // An expert weight whose gradient ep sums whole (every expert's): a
    // reduce-scatter of it over ep, or without ZeRO over dp (or cp) too an
    // all-reduce over all of them, cut after.
    bool wholeOverEp = expert && param.expertGradientSummed;
    double wholeScatter = wholeOverEp ? ringShare(ep) * n * ep * grad : 0;
    // (ep is not planned with cp: with cp, dtc's ZeRO sums over dp and cp
    // in one all-reduce.)
    double reduce, gather = 0;
    if (z == 0 || cp > 1 || partialOverTp || shared) {
      reduce = wholeOverEp && dp * cp > 1
                   ? 2 * ringShare(dp * cp * ep) * n * ep * grad
                   : 2 * ringShare(reducers) * n * grad + wholeScatter;
    } else {
      reduce =
          (zero.overDp ? 1 : 2) * ringShare(dp) * padded * grad + wholeScatter;
      if (ep > 1 && !expert) {
        double part = dp > 1 ? zero.afterDp : padded;
        reduce += (zero.overEp ? 1 : 2) * ringShare(ep) * part * grad;
        gather += zero.overEp ? ringShare(ep) * part * weight : 0;
      }
    }
    if (z >= 1 && zero.overDp)
      gather += ringShare(dp) * padded * weight;
    if (partialOverTp)
      rank.partialOverTpBus += reduce;
    else
      rank.reduceBus += (z >= 2 && cp == 1 ? config.microbatches : 1) * reduce;
    for (int64_t holder : holders)
      ranks[holder].gatherBus +=
          (z == 3 && param.readByBackward ? 2 : 1) * gather;
    if (param.layer >= 0)
      layerBytes[param.layer] += n * param.paramBytes;
  }
  for (int64_t l = 0; l < model.layers; ++l) {
    RankState &rank = ranks[rankOfStage(stageOf(l))];
    rank.largestLayerBytes = std::max(rank.largestLayerBytes, layerBytes[l]);
  }
  for (RankState &rank : ranks)
    rank.memory.optimizerState += model.stepStateBytes;
  return ranks;
}

PlanEstimate evaluate(const ModelAnatomy &model, const PlanConfig &config,
                      const DeviceSpec &device, const PlanRequest &request,
                      ScheduleCache &cache) {
  PlanEstimate estimate;
  estimate.config = config;
  const int64_t dp = config.dp, tp = config.tp, P = config.pp, cp = config.cp,
                ep = config.ep, M = config.microbatches;

  // The pipeline: which rank holds each global stage, and its layers.
  const pp::Schedule *built = nullptr;
  int64_t stages = 1;
  std::vector<int64_t> split = {model.layers};
  if (P > 1) {
    built = getSchedule(config, cache);
    if (!built)
      return estimate; // no step time: the caller skips it
    stages = built->getNumStages();
    split = config.split;
  }
  static const pp::Schedule kNoPipeline;
  const pp::Schedule &schedule = built ? *built : kNoPipeline;
  auto rankOfStage = [&](int64_t stage) {
    return P > 1 ? schedule.getRank(stage) : 0;
  };
  std::vector<int64_t> stageOfLayer;
  for (auto [k, n] : llvm::enumerate(split))
    stageOfLayer.insert(stageOfLayer.end(), n, k);

  std::vector<RankState> ranks = layOutState(
      model, config,
      [&](int64_t layer) {
        return layer == kBeforeLayers  ? 0
               : layer == kAfterLayers ? stages - 1
                                       : stageOfLayer[layer];
      },
      rankOfStage);
  std::vector<PlanMemory> memory;
  for (const RankState &state : ranks)
    memory.push_back(state.memory);

  // Per microbatch: rows, the residual stream's bytes (of the rank's
  // tokens: 1/cp of each sequence), scaled costs.
  double fraction = 1.0 / (config.getBatchRanks() * M);
  double rows = static_cast<double>(model.batch) * fraction;
  double stream =
      rows * model.sequence * model.hidden * model.activationBytes / cp;
  // With tp, sequence parallelism splits the stream between the tp ranks
  // too: what a pipeline stage sends the next.
  bool sp = config.sequenceParallel;
  double sent = stream / (sp ? tp : 1);
  const LinkSpec &tpLink = linkOf(device, request, 1, tp);
  const LinkSpec &cpLink = linkOf(device, request, tp, cp);
  const LinkSpec &epLink = linkOf(device, request, tp * cp, ep);
  const LinkSpec &ppLink = linkOf(device, request, tp * cp * ep * dp, P);
  // Tensor parallelism with sequence parallelism: per layer, the forward
  // gathers the sequence before the attention and the MLP and
  // reduce-scatters after them; the backward gathers the output gradients
  // and the inputs again (for the weights' gradients; Korthikanti et al.)
  // and reduce-scatters the input gradients; a recomputed forward again.
  // The embedding reduce-scatters its rows' lookups and gathers the
  // tokens' gradients, the head gathers its input and reduce-scatters its
  // gradient. Without sequence parallelism all-reduces (two calls' bytes
  // each) take the forward's places and the backward's input gradients'.
  // The vocabulary-parallel cross-entropy all-reduces three values per
  // token (a maximum, a sum of exponentials, the target's logit).
  double tpCall = ringShare(tp) * stream;
  double crossEntropyBus =
      3 * 2 * ringShare(tp) * rows * model.sequence / cp * 4;
  double f = config.recompute;
  double layerCalls = (sp ? 10 : 8) + 4 * f;
  // (Calls at the ends: the first stage's forward and backward, the last
  // stage's.)
  double firstCalls[2] = {sp ? 1.0 : 2.0, sp ? 1.0 : 0.0},
         lastCalls[2] = {sp ? 1.0 : 0.0, sp ? 1.0 : 2.0};
  // Per microbatch, stage k's traffic over tp: as dtc partitioned the step
  // (a rank's share of the batch's values), else Megatron's calls above.
  // A recomputed forward issues its collectives again, in the backward.
  const TensorParallelTraffic *measured =
      getTensorParallelTraffic(model, config);
  std::vector<int64_t> firstLayer(stages, 0);
  for (int64_t k = 1; k < stages; ++k)
    firstLayer[k] = firstLayer[k - 1] + split[k - 1];
  auto stageTp = [&](int64_t k) {
    StageTraffic t;
    if (tp == 1)
      return t;
    int64_t n = split[k];
    bool last = k == stages - 1;
    if (!measured) {
      t.forwardCalls =
          n * 4 + (k == 0 ? firstCalls[0] : 0) + (last ? lastCalls[0] : 0);
      t.backwardCalls = n * (layerCalls - 4) + (k == 0 ? firstCalls[1] : 0) +
                        (last ? lastCalls[1] : 0);
      t.forwardBytes = t.forwardCalls * tpCall + (last ? crossEntropyBus : 0);
      t.backwardBytes = t.backwardCalls * tpCall;
      return t;
    }
    double share = rows / model.batch / cp;
    auto add = [&](int64_t place, double recomputed) {
      t.forwardBytes += share * measured->forwardBytes[place];
      t.forwardCalls += measured->forwardCalls[place];
      t.backwardBytes += share * (measured->backwardBytes[place] +
                                  recomputed * measured->forwardBytes[place]);
      t.backwardCalls += measured->backwardCalls[place] +
                         recomputed * measured->forwardCalls[place];
      t.stepBytes += measured->weightBytes[place];
      t.stepCalls += measured->weightCalls[place];
    };
    if (k == 0)
      add(0, 0);
    for (int64_t l = firstLayer[k]; l < firstLayer[k] + n; ++l)
      add(l + 1, f);
    if (last)
      add(model.layers + 1, 0);
    return t;
  };
  const ForwardTimes &times = model.getTimes(request.fusedAttention);
  // (Without sequence parallelism every tp rank runs the residual
  // stream's ops whole.)
  double streamShare = tp > 1 && !sp ? times.streamShare : 0;
  double layerForward = times.layerSeconds * fraction *
                        ((1 - streamShare) / tp + streamShare) / cp;
  double outerForward = times.outerSeconds * fraction / (tp * cp);
  double ratio = times.backwardRatio;
  // Context parallelism, per layer, on blocks of the rank's tokens' keys
  // and values (its tp share of the key/value heads;
  // docs/Parallelism.md's volumes). Ring attention: the forward passes
  // cp-1 key and value blocks around the ring, the backward them again and
  // their gradients cp times; each hop's transfer overlaps the attention
  // of the block before it, and what the layer's compute does not cover is
  // exposed. The all-gather (with tp): the keys and values gathered before
  // the attention and their gradients reduce-scattered after it, exposed.
  double cpForwardBytes = 0, cpBackwardBytes = 0, cpForward = 0, cpBackward = 0;
  if (cp > 1) {
    double block = rows * model.sequence / cp * model.keyValueWidth *
                   model.activationBytes / tp;
    cpForwardBytes = 2 * (cp - 1) * block;
    if (config.getContextParallel() == "ring") {
      cpBackwardBytes = 2 * (cp - 1) * block + 2 * cp * block;
      cpForward = std::max(0.0, (cp - 1) * cpLink.latencySeconds +
                                    cpForwardBytes / cpLink.bytesPerSecond -
                                    layerForward);
      cpBackward = std::max(0.0, (2 * cp - 1) * cpLink.latencySeconds +
                                     cpBackwardBytes / cpLink.bytesPerSecond -
                                     layerForward * ratio);
    } else {
      cpBackwardBytes = cpForwardBytes;
      cpForward = ringSeconds(cpLink, cp, 2, cpForwardBytes);
      cpBackward = ringSeconds(cpLink, cp, 2, cpBackwardBytes);
    }
  }
  // Expert parallelism, per layer (the exchanges spread evenly over the
  // layers): the forward's all-to-alls of the rank's tokens to their
  // experts and back, the backward's of their gradients, each exposed
  // (the experts wait for their tokens, the combine for their outputs).
  double epBytes = 0, epCall = 0;
  if (ep > 1 && model.expertExchangeCalls > 0) {
    epBytes = ringShare(ep) *
              (model.expertExchangeBytes + ep * model.expertWholeBatchBytes) *
              fraction / (2.0 * model.layers);
    epCall = ringSeconds(
        epLink, ep, double(model.expertExchangeCalls) / (2.0 * model.layers),
        epBytes);
  }

  pp::FragmentCosts costs;
  std::vector<double> stageCompute(stages), stageBackward(stages);
  std::vector<double> stageSaved(stages);
  LayerActivations layer = layerActivations(model, config, request);
  double layerSaved = layer.saved;
  double perLayerSaved = (1 - f) * layer.saved + f * layer.input;
  for (int64_t k = 0; k < stages; ++k) {
    int64_t n = split[k];
    bool last = k == stages - 1;
    double forward = n * layerForward + (last ? outerForward : 0);
    double backward = forward * ratio + f * n * layerForward;
    StageTraffic t = stageTp(k);
    double tpForward = ringSeconds(tpLink, tp, t.forwardCalls, t.forwardBytes);
    double tpBackward =
        ringSeconds(tpLink, tp, t.backwardCalls, t.backwardBytes);
    // (A recomputed forward exchanges the keys and values again.)
    double cpForwardExposed = n * cpForward;
    double cpBackwardExposed = n * (f * cpForward + cpBackward);
    costs.forward.push_back(forward + tpForward + cpForwardExposed +
                            n * epCall);
    // The weight gradients: half the backward's FLOPs, no communication.
    costs.backwardInput.push_back(backward / 2 + tpBackward +
                                  cpBackwardExposed + n * (1 + f) * epCall);
    costs.backwardWeight.push_back(backward / 2);
    costs.activationBytes.push_back(n * perLayerSaved);
    stageCompute[k] = forward + backward;
    stageBackward[k] = backward;
    stageSaved[k] = n * perLayerSaved;
  }
  costs.transfer = P > 1 ? ppLink.seconds(sent) : 0;

  // The pipeline (or the microbatches one after another), per rank.
  std::vector<double> busy(P, 0), inFlight(P, 0), backwardOne(P, 0);
  double pipelineSeconds = 0;
  if (P > 1) {
    pp::Timeline timeline = pp::simulateSchedule(schedule, costs);
    pipelineSeconds = timeline.makespan;
    estimate.bubbleFraction = timeline.getMaxBubbleFraction();
    inFlight = timeline.peakActivationBytes;
  } else {
    pipelineSeconds = M * (costs.forward[0] + costs.backwardInput[0] +
                           costs.backwardWeight[0]);
    inFlight[0] = stageSaved[0];
  }
  for (int64_t k = 0; k < stages; ++k) {
    busy[rankOfStage(k)] += M * stageCompute[k];
    backwardOne[rankOfStage(k)] += stageBackward[k];
  }

  // Activations per rank: the microbatches in flight, the working set of
  // one layer's backward (the head's and the loss's on the last stage),
  // ZeRO-3's gathered layers, bf16's f32 gradient accumulator.
  int64_t lastRank = rankOfStage(stages - 1);
  bool halfGradients = llvm::any_of(
      model.parameters, [](auto &p) { return p.trained && p.gradBytes < 4; });
  for (int64_t r = 0; r < P; ++r) {
    int64_t outer = request.fusedAttention ? model.fusedOuterActivationBytes
                                           : model.outerActivationBytes;
    double working =
        layerSaved +
        (r == lastRank ? outer * (rows / model.batch) / (tp * cp) : 0);
    // ZeRO-3 gathers a layer for the forward and again for the backward;
    // under accumulation each gathered copy serves every microbatch, so
    // all of them live from the first microbatch to the last.
    double gathered = 0;
    if (config.zero == 3)
      gathered =
          2.0 * (M > 1 ? ranks[r].paramBytes : ranks[r].largestLayerBytes);
    double accumulator = 0;
    if (M > 1 && halfGradients)
      accumulator =
          4.0 * ranks[r].gradientElements / (config.zero >= 2 ? dp : 1);
    memory[r].activations = static_cast<int64_t>(
        std::llround(inFlight[r] + working + gathered + accumulator));
  }
  int64_t worst = 0;
  for (int64_t r = 1; r < P; ++r)
    if (memory[r].total() > memory[worst].total())
      worst = r;
  estimate.memory = memory[worst];
  estimate.ppRank = worst;
  estimate.inFlightBytes = std::llround(inFlight[worst]);

  // Data parallelism: the gradients reduced over dp (reduce-scattered per
  // microbatch under ZeRO-2/3), the parameters gathered (ZeRO-3: for the
  // forward and again for the backward), overlapped with the backward.
  // The communication is the busiest rank's.
  double dpSeconds = 0, window = 0;
  int64_t slowest = 0;
  for (int64_t r = 1; r < P; ++r)
    if (busy[r] > busy[slowest])
      slowest = r;
  estimate.busRank = slowest;
  bool holdsLoss = rankOfStage(stages - 1) == slowest;
  // A pipeline rank sends and receives a microbatch's stream (its tp
  // part under sequence parallelism) at each boundary of its stages, both
  // ways, and takes part in the loss's broadcast to every rank. The step's
  // other outputs (a mixture's expert_tokens, a sum over the layers) go the
  // same way: each microbatch every stage's layers' share to the last
  // stage, their sum to every rank once.
  if (P > 1) {
    int64_t lastRank = rankOfStage(stages - 1);
    double outputsPerLayer =
        double(model.summedOutputBytes) / std::max<int64_t>(model.layers, 1);
    for (int64_t k = 0; k < stages; ++k) {
      if (rankOfStage(k) == slowest)
        estimate.ppBytes += 2.0 * ((k > 0) + (k < stages - 1)) * M * sent;
      if (rankOfStage(k) != lastRank &&
          (rankOfStage(k) == slowest || lastRank == slowest))
        estimate.ppBytes += M * split[k] * outputsPerLayer;
    }
    estimate.ppBytes += kLossValueBytes + model.summedOutputBytes +
                        ranks[slowest].sharedGradientBytes;
  }
  // The gradients are summed over dp and cp together (cp's ranks hold
  // other tokens of the same rows), and over ep unless ep splits them;
  // ZeRO shards over dp and ep (layOutState counts the bytes).
  int64_t reducers = dp * ep * cp;
  if (reducers > 1) {
    // Bus bytes as nccl-tests counts them: (n-1)/n of the data for a
    // gather or a scatter, twice that for an all-reduce. Beside the
    // gradients, the loss and its token count (two f32) and the step's
    // other outputs are summed.
    const RankState &r = ranks[slowest];
    // Calls: one per layer the rank holds (and one for the embedding or
    // the head), as per-layer buckets and ZeRO-3's per-layer gathers go.
    double units = 1;
    for (int64_t k = 0; k < stages; ++k)
      if (rankOfStage(k) == slowest)
        units += split[k];
    int z = config.zero;
    // (Summed where the last stage computes it. With dp and ep, one of
    // its scalars is summed over ep and then over dp, as the partitioners
    // meet it.)
    double lossBytes = kLossBytes + (P > 1 && M > 1 ? kLossCountBytes : 0);
    double lossBus = holdsLoss ? 2 * ringShare(reducers) * lossBytes : 0;
    if (holdsLoss && dp * cp > 1 && ep > 1)
      lossBus = ringShare(reducers) * lossBytes +
                (ringShare(dp * cp) + ringShare(ep)) * lossBytes;
    double reduceBus = r.reduceBus + r.partialOverTpBus + lossBus +
                       2 * ringShare(reducers) * model.summedOutputBytes;
    double reduceCalls =
        z == 0 || cp > 1 ? 2 * units : (z >= 2 ? M : 1) * units;
    double gatherCalls = z >= 1 ? (z == 3 ? 2 : 1) * units : 0;
    estimate.dpBusBytes = reduceBus + r.gatherBus;
    dpSeconds = ringSeconds(linkOf(device, request, tp, reducers), reducers,
                            reduceCalls, reduceBus) +
                ringSeconds(linkOf(device, request, tp * cp, dp * ep), dp * ep,
                            gatherCalls, r.gatherBus);
    window = backwardOne[slowest] * (z >= 2 ? M : 1);
  }
  estimate.dpSeconds = std::max(0.0, dpSeconds - window);
  // Without other ranks of the batch, the partial sums are tp's alone.
  if (reducers == 1 && tp > 1) {
    estimate.tpBusBytes += ranks[slowest].partialOverTpBus;
    estimate.tpSeconds += ringSeconds(tpLink, tp, 2 * model.layers,
                                      ranks[slowest].partialOverTpBus);
  }
  for (int64_t k = 0; k < stages; ++k) {
    if (rankOfStage(k) != slowest)
      continue;
    StageTraffic t = stageTp(k);
    estimate.tpSeconds +=
        ringSeconds(tpLink, tp, M * (t.forwardCalls + t.backwardCalls),
                    M * (t.forwardBytes + t.backwardBytes)) +
        ringSeconds(tpLink, tp, t.stepCalls, t.stepBytes);
    estimate.tpBusBytes += M * (t.forwardBytes + t.backwardBytes) + t.stepBytes;
    estimate.cpSeconds += M * split[k] * (cpForward * (1 + f) + cpBackward);
    estimate.cpBusBytes +=
        M * split[k] * (cpForwardBytes * (1 + f) + cpBackwardBytes);
    estimate.epSeconds += M * split[k] * (2 + f) * epCall;
    estimate.epBusBytes += M * split[k] * (2 + f) * epBytes;
  }

  // The optimizer reads each gradient and reads and writes the rest of
  // the state once.
  const PlanMemory &m = memory[slowest];
  estimate.optimizerSeconds =
      (m.gradients +
       2.0 * (m.parameters + m.masterWeights + m.optimizerState)) /
      (device.memoryBytesPerSecond * device.memoryEfficiency);

  estimate.computeSeconds = busy[slowest];
  estimate.stepSeconds =
      pipelineSeconds + estimate.dpSeconds + estimate.optimizerSeconds;
  double peak = (model.activationBytes <= 2 ? device.bf16 : device.f32).matmul;
  double capacity = estimate.stepSeconds * config.getNumRanks() * peak;
  estimate.mfu = model.modelFlops / capacity;
  estimate.hfu = (model.modelFlops + f * model.forwardFlops) / capacity;
  double usable = device.usableMemoryBytes * (1 - request.marginFraction);
  estimate.fits = estimate.memory.total() <= usable;
  return estimate;
}
/// `config` with as few layers recomputed as make it fit (dtc-remat's
/// budget policy), or no step time where it fits without (then `config`
/// itself is the plan) or does not fit even with every layer recomputed.
PlanEstimate evaluateToFit(const ModelAnatomy &model, PlanConfig config,
                           const DeviceSpec &device, const PlanRequest &request,
                           ScheduleCache &cache) {
  config.recompute = 0;
  PlanEstimate none = evaluate(model, config, device, request, cache);
  if (none.fits || none.stepSeconds <= 0)
    return PlanEstimate();
  // A recomputed layer keeps its input instead of its saved activations:
  // the in-flight bytes fall linearly with the fraction recomputed.
  double usable = device.usableMemoryBytes * (1 - request.marginFraction);
  auto [saved, input] = layerActivations(model, config, request);
  if (saved <= input || none.inFlightBytes <= 0)
    return PlanEstimate();
  double excess = none.memory.total() - usable;
  double fraction = excess / none.inFlightBytes * saved / (saved - input);
  // The rank that holds the most may change: recompute a little more until
  // it fits.
  for (; fraction < 1; fraction += 0.02) {
    config.recompute = std::max(fraction, 0.01);
    config.rematBudgetBytes =
        std::llround(usable - none.memory.getStateBytes());
    PlanEstimate estimate = evaluate(model, config, device, request, cache);
    if (estimate.fits)
      return estimate;
  }
  return PlanEstimate();
}

} // namespace

PlanEstimate mlir::dtc::evaluatePlan(const ModelAnatomy &model,
                                     const PlanConfig &config,
                                     const DeviceSpec &device,
                                     const PlanRequest &request) {
  ScheduleCache cache;
  if (config.recompute == kRecomputeToFit) {
    PlanEstimate estimate =
        evaluateToFit(model, config, device, request, cache);
    if (estimate.stepSeconds > 0)
      return estimate;
    // It fits without, or does not fit at all.
    PlanConfig without = config;
    without.recompute = 0;
    return evaluate(model, without, device, request, cache);
  }
  return evaluate(model, config, device, request, cache);
}

namespace {
/// Appends to `plans` every way to run the mesh of `mesh` (its dp, ep, tp,
/// pp and cp): the microbatches, ZeRO stages, recomputation and schedules.
void searchMesh(const ModelAnatomy &model, const DeviceSpec &device,
                const PlanRequest &request, const PlanConfig &mesh,
                ScheduleCache &cache, std::vector<PlanEstimate> &plans) {
  const int64_t P = mesh.pp;
  int64_t rows = model.batch / mesh.getBatchRanks();
  for (int64_t size = 1; size <= rows; size *= 2) {
    if (rows % size)
      continue;
    int64_t M = rows / size;
    // A pipeline needs a microbatch per stage; beyond sixteen per stage
    // the bubble hardly shrinks (smaller microbatches still lower the
    // activations in flight, but 1F1B's are then a few rows) and the
    // simulation only takes longer.
    if (P > 1 && (M < P || M > 16 * P))
      continue;
    std::vector<int64_t> zeros;
    for (int64_t zero : request.zeroStages)
      if (zero == 0 || (mesh.getBatchRanks() > 1 && (P == 1 || zero == 1)))
        zeros.push_back(zero);
    std::vector<std::pair<std::string, int64_t>> schedules = {{"", 1}};
    if (P > 1) {
      schedules.clear();
      // Two chunks per rank need two layers per rank and, interleaved in
      // rounds, microbatches in multiples of the stages.
      bool chunked = model.layers >= 2 * P && M % P == 0;
      for (const std::string &name : request.schedules) {
        bool twoChunks = name == "interleaved" || name == "zbv";
        if (!twoChunks || chunked)
          schedules.push_back({name, twoChunks ? 2 : 1});
      }
    }
    for (int64_t zero : zeros)
      for (double remat : request.recompute)
        for (auto &[name, chunks] : schedules) {
          PlanConfig config = mesh;
          config.zero = zero;
          config.microbatches = M;
          config.recompute = remat;
          if (P > 1) {
            config.schedule = name;
            config.virtualStages = chunks;
            int64_t stages = P * chunks;
            if (request.evenStages && model.layers % stages)
              continue;
            config.split =
                request.evenStages
                    ? std::vector<int64_t>(stages, model.layers / stages)
                    : balanceLayers(model, stages, request.fusedAttention);
            if (config.split.empty())
              continue;
          }
          PlanEstimate estimate =
              remat == kRecomputeToFit
                  ? evaluateToFit(model, config, device, request, cache)
                  : evaluate(model, config, device, request, cache);
          if (estimate.stepSeconds > 0)
            plans.push_back(std::move(estimate));
        }
  }
}
} // namespace

std::vector<PlanEstimate> mlir::dtc::searchPlans(const ModelAnatomy &model,
                                                 const DeviceSpec &device,
                                                 const PlanRequest &request) {
  std::vector<PlanEstimate> plans;
  ScheduleCache cache;
  // Context parallelism in powers of two whose parts keep enough tokens
  // (ring attention's zigzag cuts each sequence into 2cp chunks).
  std::vector<int64_t> contexts = {1};
  if (model.keyValueWidth > 0)
    for (int64_t cp = 2; model.sequence % (2 * cp) == 0 &&
                         model.sequence / cp >= request.minTokensPerContextRank;
         cp *= 2)
      contexts.push_back(cp);
  // Expert parallelism over the divisors of the experts with exchanges.
  std::vector<int64_t> expertDegrees = {1};
  if (model.expertExchangeCalls > 0)
    for (int64_t ep = 2; ep <= model.experts; ++ep)
      if (model.experts % ep == 0)
        expertDegrees.push_back(ep);
  for (const auto &[tp, dims] : model.tensorParallelDims)
    for (int64_t cp : contexts) {
      int64_t gpus = request.gpus / cp;
      if (request.gpus % cp || gpus % tp ||
          (!request.tpAcrossNodes && tp > request.gpusPerNode))
        continue;
      for (int64_t P = 1; P <= gpus / tp && P <= model.layers; ++P) {
        // The ranks left split the batch; of them ep (dividing the
        // experts; not with cp) also split the experts.
        int64_t batchRanks = gpus / tp / P;
        if ((gpus / tp) % P || model.batch % batchRanks)
          continue;
        for (int64_t ep : expertDegrees) {
          if (batchRanks % ep || (ep > 1 && cp > 1))
            continue;
          PlanConfig mesh;
          mesh.sequenceParallel = request.sequenceParallel;
          mesh.dp = batchRanks / ep;
          mesh.ep = ep;
          mesh.tp = tp;
          mesh.pp = P;
          mesh.cp = cp;
          searchMesh(model, device, request, mesh, cache, plans);
        }
      }
    }
  std::stable_sort(plans.begin(), plans.end(),
                   [](const PlanEstimate &a, const PlanEstimate &b) {
                     if (a.fits != b.fits)
                       return a.fits;
                     if (a.fits)
                       return a.mfu > b.mfu;
                     return a.memory.total() < b.memory.total();
                   });
  return plans;
}

std::optional<std::string>
mlir::dtc::lintTensorParallelSpan(int64_t tp, int64_t gpusPerNode,
                                  const DeviceSpec &device) {
  if (tp <= gpusPerNode)
    return std::nullopt;
  return llvm::formatv(
             "tensor parallelism over {0} ranks spans nodes of {1}: its "
             "collectives, on the critical path of every layer, run at {2:f0} "
             "GB/s across nodes instead of {3:f0} GB/s within one",
             tp, gpusPerNode, device.interNode.bytesPerSecond / 1e9,
             device.intraNode.bytesPerSecond / 1e9)
      .str();
}

std::optional<std::string>
mlir::dtc::lintPipelineBubble(int64_t microbatches, int64_t pp, double bubble) {
  if (pp <= 1 || bubble <= 0.25)
    return std::nullopt;
  return llvm::formatv(
             "{0} microbatches for {1} pipeline stages leave ranks idle "
             "{2:f0}% of the step; more microbatches (smaller ones) shrink "
             "the bubble",
             microbatches, pp, 100 * bubble)
      .str();
}

std::vector<std::string> mlir::dtc::lintPlan(const ModelAnatomy &model,
                                             const PlanEstimate &estimate,
                                             const DeviceSpec &device,
                                             const PlanRequest &request) {
  std::vector<std::string> lints;
  const PlanConfig &c = estimate.config;
  double usable = device.usableMemoryBytes * (1 - request.marginFraction);
  auto gb = [](double bytes) {
    return llvm::formatv("{0:f2} GB", bytes / 1e9).str();
  };
  for (std::optional<std::string> lint :
       {lintTensorParallelSpan(c.tp, request.gpusPerNode, device),
        lintPipelineBubble(c.microbatches, c.pp, estimate.bubbleFraction)})
    if (lint)
      lints.push_back(*lint);
  if (c.zero == 3) {
    PlanConfig two = c;
    two.zero = 2;
    PlanEstimate e = evaluatePlan(model, two, device, request);
    if (e.fits)
      lints.push_back(llvm::formatv(
          "ZeRO-3 where ZeRO-2 fits ({0} per rank): ZeRO-3 gathers every "
          "weight for the forward and again for the backward, {1} more bus "
          "bytes per rank per step",
          gb(e.memory.total()), gb(estimate.dpBusBytes - e.dpBusBytes)));
  }
  if (c.tp == 1 && c.pp == 1 && c.zero == 0 && c.dp > 1 && !estimate.fits)
    lints.push_back(llvm::formatv(
        "data parallelism alone keeps the whole training state on every "
        "rank ({0}); ZeRO, tensor or pipeline parallelism shard it",
        gb(estimate.memory.getStateBytes())));
  if (!estimate.fits && estimate.memory.getStateBytes() <= usable)
    lints.push_back(llvm::formatv(
        "the training state fits ({0} of {1}), the activations ({2}) do not: "
        "an estimate without them would have said it fits",
        gb(estimate.memory.getStateBytes()), gb(usable),
        gb(estimate.memory.activations)));
  int64_t rows = model.batch / c.getBatchRanks();
  if (!estimate.fits && rows == c.microbatches && c.recompute == 0)
    lints.push_back(llvm::formatv(
        "the global batch of {0} rows over {1} leaves {2} row{3} per rank "
        "in microbatches of one row already: accumulation cannot lower the "
        "activations further; recomputation or more tp/pp can",
        model.batch,
        "dp=" + std::to_string(c.dp) +
            (c.ep > 1 ? " x ep=" + std::to_string(c.ep) : ""),
        rows, rows == 1 ? "" : "s"));
  return lints;
}
