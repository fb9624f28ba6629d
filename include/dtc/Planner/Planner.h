//===- Planner.h - what a model needs on a cluster --------------*- C++ -*-===//
//
// dtc-plan's model: one analysis of the global training step (the model's
// parameters with their tensor-parallel layouts, its transformer layers,
// FLOPs, roofline times and saved activations; ModelAnatomy), from which
// every configuration (dp, tp, pp, ZeRO stage, recomputation, microbatches,
// pipeline schedule; PlanConfig) is evaluated analytically: the bytes a
// rank holds, the bytes it communicates per axis and the step time
// (PlanEstimate). docs/Planner.md gives the formulas and what is estimated
// rather than exact.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_PLANNER_PLANNER_H
#define DTC_PLANNER_PLANNER_H

#include "dtc/Analysis/DeviceSpec.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace mlir::dtc {

/// One parameter of the global step.
struct PlannedParameter {
  std::string name;
  std::vector<int64_t> shape;
  /// Trained (with a gradient and optimizer state), or held as it is.
  bool trained = true;
  /// Bytes per element of the parameter, its gradient, its f32 master copy
  /// (0 without one) and the rest of its optimizer state (AdamW: 8).
  int64_t paramBytes = 0, gradBytes = 0, masterBytes = 0, stateBytes = 0;
  /// Bytes per element of its gradient as the backward sums it (f32 for a
  /// bf16 gradient): what pipeline stages that share it pass each other.
  int64_t gradSumBytes = 0;
  /// Its transformer layer, or kBeforeLayers (the embedding: the first
  /// pipeline stage) or kAfterLayers (the final norm, the head: the last).
  int64_t layer = 0;
  /// The other layers (or kBeforeLayers, kAfterLayers) whose forward reads
  /// it too: an embedding the head reads (tied), rotary tables or a mask
  /// every layer reads. Their pipeline stages hold it as well, as
  /// Megatron-LM and dtc's pipelines do.
  std::vector<int64_t> alsoReadBy;
  /// Whether the backward reads it (a matmul's weight, a norm's scale; not
  /// an embedding table or a bias): ZeRO-3 gathers those again for it.
  bool readByBackward = false;
  /// A mixture of experts' weight stacked by the experts along its first
  /// dimension: what expert parallelism splits.
  bool expert = false;
  /// An expert weight whose gradient the backward computes before the
  /// exchange (a bias of the dispatched tokens): each rank's is a partial
  /// sum of every expert's, summed over ep and dp as a whole.
  bool expertGradientSummed = false;

  int64_t getNumElements() const;
};
inline constexpr int64_t kBeforeLayers = -1, kAfterLayers = -2;

/// Bytes one rank holds.
struct PlanMemory {
  int64_t parameters = 0, gradients = 0, masterWeights = 0, optimizerState = 0;
  /// Estimated: saved activations of the microbatches in flight, and the
  /// working set of one layer's backward (or the head's and the loss's).
  int64_t activations = 0;

  int64_t getStateBytes() const {
    return parameters + gradients + masterWeights + optimizerState;
  }
  int64_t total() const { return getStateBytes() + activations; }
};

/// One layer's forward, the rest's (embedding, final norm, head, loss),
/// and the backward's time over the forward's.
struct ForwardTimes {
  double layerSeconds = 0, outerSeconds = 0;
  double backwardRatio = 2;
  /// Of a layer's time, its ops' on the residual stream (norms, residual
  /// adds, dropout): what tensor parallelism without sequence parallelism
  /// runs whole on every tp rank.
  double streamShare = 0;
};

/// What tensor parallelism communicates, as dtc partitions the step over
/// tp ranks (with or without sequence parallelism), per place of the
/// forward (0: before the layers, 1 to L: the layers, L+1: after them):
/// the bus bytes and calls over tp of the whole batch's values, forward
/// and backward (per microbatch: a rank's share scales with its tokens),
/// and of the weights' gradients gathered whole (once a step, after the
/// microbatches). The gradients it leaves
/// partial sums over tp are summed once a step, over dp and tp together
/// where both are: layOutState counts them.
struct TensorParallelTraffic {
  std::vector<double> forwardBytes, backwardBytes, weightBytes;
  std::vector<double> forwardCalls, backwardCalls, weightCalls;
  std::set<std::string> partialGradients;
};

/// What the planner knows of a model, from its global step.
struct ModelAnatomy {
  std::vector<PlannedParameter> parameters;
  /// Optimizer state of no parameter (AdamW's step counter).
  int64_t stepStateBytes = 0;
  int64_t layers = 0;
  /// The global batch: rows and tokens per row.
  int64_t batch = 0, sequence = 0;
  /// The width of the residual stream between layers and its element type's
  /// bytes: what a pipeline stage sends and tensor parallelism gathers.
  int64_t hidden = 0, activationBytes = 0;
  /// A layer's key (and value) width, all key/value heads together: what
  /// context parallelism's ring passes between ranks. 0 without an
  /// attention op (no context parallelism then).
  int64_t keyValueWidth = 0;
  /// Forward and backward matmul FLOPs of the whole step: the model FLOPs
  /// utilization is measured against them. The forward's alone: what full
  /// recomputation adds.
  double modelFlops = 0, forwardFlops = 0;
  /// Roofline seconds on the device (at its achievable rates) of the whole
  /// batch on one device, with attention as the step computes it
  /// (unfused: its scores go through memory) and as a fused kernel runs it
  /// (the scores' traffic left out).
  ForwardTimes unfusedTimes, fusedTimes;
  const ForwardTimes &getTimes(bool fusedAttention) const {
    return fusedAttention ? fusedTimes : unfusedTimes;
  }
  /// Bytes of the whole batch: one layer's saved activations, and the
  /// activation peak less every layer's (the logits and the loss).
  int64_t savedBytesPerLayer = 0, outerActivationBytes = 0;
  /// The rest of the peak without any scores (a fused attention's).
  int64_t fusedOuterActivationBytes = 0;
  /// Of a layer's saved activations, the attention scores and
  /// probabilities ([..., sequence, sequence]): what a fused attention
  /// kernel does not keep (it recomputes them in its backward).
  int64_t scoreBytesPerLayer = 0;
  /// Of them, the residual stream's values (a norm's input, a dropout's
  /// mask): what tensor parallelism keeps whole without sequence
  /// parallelism.
  int64_t streamBytesPerLayer = 0;
  /// A mixture of experts' expert count (its routers' top_k choose among
  /// them), or 0.
  int64_t experts = 0;
  /// Under expert parallelism, per step (forward and backward), as
  /// dtc-expert-parallel partitions the step (measured at ep=2): the bytes
  /// of the whole batch's buffers the all-to-alls exchange (tokens for
  /// experts and back: a rank's share scales with its rows), those of the
  /// tokens the ep ranks gather whole and of the partial sums they scatter
  /// back (the loop form's: a rank's share is all its ep group's), and the
  /// calls.
  double expertExchangeBytes = 0, expertWholeBatchBytes = 0;
  int64_t expertExchangeCalls = 0;
  /// Bytes of the step's outputs besides the loss (a mixture's
  /// `expert_tokens`), summed over the data-parallel ranks every step.
  int64_t summedOutputBytes = 0;
  /// Per tensor-parallel degree the planner may use: per parameter the
  /// dimension tp splits, or -1. Degrees tp cannot use are absent.
  std::map<int64_t, std::vector<int64_t>> tensorParallelDims;
  /// Per such degree, measured (with sequence parallelism or without, as
  /// the planner was asked).
  std::map<int64_t, TensorParallelTraffic> tensorParallelTraffic;
  bool sequenceParallel = true;

  /// Trained parameters.
  int64_t getNumParameters() const;
  /// The whole model's training state before any sharding, by category
  /// (no activations).
  PlanMemory getStateBeforeSharding() const;
};

/// Builds the anatomy of `globalStep` (the dtc-training pipeline's global
/// half: with its gradients, without the optimizer) and `singleDevice` (the
/// same step with its optimizer, for one device), for `device` and the
/// tensor-parallel degrees of `tpDegrees`, with or without sequence
/// parallelism. Fails with an error on the step.
FailureOr<ModelAnatomy> analyzeModel(func::FuncOp globalStep,
                                     func::FuncOp singleDevice,
                                     const DeviceSpec &device,
                                     llvm::ArrayRef<int64_t> tpDegrees,
                                     bool sequenceParallel);

/// PlanConfig::recompute's "as few as fit".
inline constexpr double kRecomputeToFit = -1;

/// One way to train the model.
struct PlanConfig {
  /// Context parallelism (cp) splits each sequence, with ring attention;
  /// expert parallelism (ep) splits the batch like dp and the experts.
  int64_t dp = 1, tp = 1, pp = 1, cp = 1, ep = 1;
  int64_t zero = 0;
  /// With tp: sequence parallelism (dtc's default) splits the residual
  /// stream's ops and values between the tp ranks too; without it each tp
  /// rank runs them whole and all-reduces instead.
  bool sequenceParallel = true;
  /// Microbatches per step (gradient accumulation without pp).
  int64_t microbatches = 1;
  /// With pp > 1: gpipe, 1f1b, interleaved, zb-h1 or zbv; chunks per rank
  /// (interleaved).
  std::string schedule = "1f1b";
  int64_t virtualStages = 1;
  /// The fraction of each stage's layers whose forward the backward
  /// recomputes: 0 (none), 1 (--remat full), or between: as few as fit
  /// (--remat budget=BYTES, `rematBudgetBytes` the activation peak a rank
  /// may reach).
  double recompute = 0;
  int64_t rematBudgetBytes = 0;
  /// Layers per pipeline stage (global stages: pp times chunks per rank).
  std::vector<int64_t> split;

  /// What --virtual-stages says for it: zbv's two chunks per rank are
  /// the schedule's own.
  int64_t getScheduleVirtualStages() const {
    return schedule == "interleaved" ? virtualStages : 1;
  }
  int64_t getNumRanks() const { return dp * ep * tp * pp * cp; }
  /// The ranks the batch is split over.
  int64_t getBatchRanks() const { return dp * ep; }
  /// How context parallelism exchanges keys and values: "ring", or
  /// "all-gather" with tensor parallelism (whose matcher does not see
  /// through ring attention's ops; docs/Parallelism.md).
  llvm::StringRef getContextParallel() const {
    return tp > 1 ? "all-gather" : "ring";
  }
  /// The --mesh spelling of its axes above 1 (pp, dp, ep, cp, tp), or "".
  std::string getMesh() const;
  /// The dtc-compile flags that compile it.
  std::string getFlags(llvm::StringRef precision) const;
};

/// A configuration's predicted figures, per rank and step.
struct PlanEstimate {
  PlanConfig config;
  /// The pp rank that holds the most.
  PlanMemory memory;
  int64_t ppRank = 0;
  /// The pp rank whose communication the bus bytes are: the busiest.
  int64_t busRank = 0;
  /// Of its activations, the saved ones of the microbatches in flight.
  int64_t inFlightBytes = 0;
  /// Bus bytes per rank per step by axis (dp's: the gradients' reduction,
  /// over dp, and cp and ep where the parameter is not split over them;
  /// ep's: the experts' all-to-alls).
  double tpBusBytes = 0, dpBusBytes = 0, ppBytes = 0, cpBusBytes = 0,
         epBusBytes = 0;
  /// Seconds: the step; computing (forward, backward, recomputation);
  /// tensor-parallel collectives (exposed: they sit between the ops that
  /// need them); context parallelism's ring transfers the attention does
  /// not cover; expert parallelism's all-to-alls (exposed: the experts
  /// wait for their tokens); the data-parallel reduction left after the
  /// backward overlaps it; the optimizer; pipeline idle time (bubble).
  double stepSeconds = 0, computeSeconds = 0, tpSeconds = 0, cpSeconds = 0,
         epSeconds = 0, dpSeconds = 0, optimizerSeconds = 0, bubbleFraction = 0;
  /// Model FLOPs utilization (recomputation excluded) and hardware FLOPs
  /// utilization (included), of the device's peak.
  double mfu = 0, hfu = 0;
  bool fits = false;
};

/// The planner's search space and limits.
struct PlanRequest {
  int64_t gpus = 8;
  int64_t gpusPerNode = 8;
  /// Kept free of each device's usable memory for fragmentation,
  /// workspaces and communication buffers.
  double marginFraction = 0.05;
  /// Tensor parallelism stays within a node unless allowed.
  bool tpAcrossNodes = false;
  /// The pipeline schedules the search tries (gpipe, 1f1b, interleaved,
  /// zb-h1, zbv; interleaved and zbv with two chunks per rank).
  std::vector<std::string> schedules = {"1f1b", "gpipe", "zb-h1", "interleaved",
                                        "zbv"};
  /// The recomputation the search tries (PlanConfig::recompute: none, every
  /// layer, as few as fit).
  std::vector<double> recompute = {0, 1, kRecomputeToFit};
  /// The ZeRO stages the search tries (with pipeline stages 0 and 1 only,
  /// as dtc takes them; above 0 only with ranks that split the batch).
  std::vector<int64_t> zeroStages = {0, 1, 2, 3};
  /// Tensor parallelism with sequence parallelism (dtc's), or without it.
  bool sequenceParallel = true;
  /// Pipelines only with as many layers on every stage (the head and the
  /// loss on the last beside them), as frameworks without uneven splits
  /// require; otherwise the stages are balanced (balanceLayers).
  bool evenStages = false;
  /// Context parallelism is considered for sequences it can split into
  /// parts of at least this many tokens per rank.
  int64_t minTokensPerContextRank = 8192;
  /// Attention runs as a fused kernel that keeps no scores for the backward
  /// (FlashAttention, cuDNN: what a GPU step runs); false: the scores are
  /// kept, as dtc's CPU and reference steps keep them.
  bool fusedAttention = true;
};

/// Evaluates `config` for `model` on `device` (its usable memory less the
/// margin decides `fits`). A `recompute` of kRecomputeToFit recomputes as
/// few layers as make it fit (none where it fits without).
PlanEstimate evaluatePlan(const ModelAnatomy &model, const PlanConfig &config,
                          const DeviceSpec &device, const PlanRequest &request);

/// Every configuration of `request.gpus` devices the model can take, best
/// predicted MFU first, those that fit before those that do not.
std::vector<PlanEstimate> searchPlans(const ModelAnatomy &model,
                                      const DeviceSpec &device,
                                      const PlanRequest &request);

/// The lints a configuration shows without its model (dtc-compile runs
/// them too): tensor parallelism over more ranks than a node of
/// `gpusPerNode` has, and a pipeline idle more than a quarter of the step.
std::optional<std::string> lintTensorParallelSpan(int64_t tp,
                                                  int64_t gpusPerNode,
                                                  const DeviceSpec &device);
std::optional<std::string> lintPipelineBubble(int64_t microbatches, int64_t pp,
                                              double bubble);

/// Common mistakes in `estimate`'s configuration, each a sentence with its
/// numbers: tensor parallelism across nodes, a pipeline with too few
/// microbatches, ZeRO-3 where ZeRO-2 fits, data parallelism alone for a
/// model that does not fit, a fit that activations break, a batch that
/// leaves no room for accumulation.
std::vector<std::string> lintPlan(const ModelAnatomy &model,
                                  const PlanEstimate &estimate,
                                  const DeviceSpec &device,
                                  const PlanRequest &request);

/// Layers per stage for `stages` stages that balance forward and backward
/// time (the last stage also runs the head and the loss).
std::vector<int64_t> balanceLayers(const ModelAnatomy &model, int64_t stages,
                                   bool fusedAttention);

} // namespace mlir::dtc

#endif // DTC_PLANNER_PLANNER_H
