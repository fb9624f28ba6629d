//===- Pipelines.cpp - dtc pass pipelines and registration ----------------===//

#include "dtc/Transforms/Codegen/Passes.h"
#include "dtc/Transforms/Comm/Passes.h"
#include "dtc/Transforms/Parallel/Passes.h"
#include "dtc/Transforms/Passes.h"
#include "dtc/Transforms/Pipeline/Schedule.h"
#include "dtc/Transforms/Remat/Passes.h"
#include "dtc/Transforms/Training/Passes.h"

#include "dtc/Runtime/Communicator.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::dtc {
#define GEN_PASS_REGISTRATION
#include "dtc/Transforms/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

void mlir::dtc::buildSimplifyPipeline(OpPassManager &pm,
                                      const SimplifyPipelineOptions &options) {
  FoldConstantsOptions fold;
  fold.maxElements = options.maxConstantElements;
  pm.addNestedPass<func::FuncOp>(createFoldConstants(fold));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

namespace {
/// The sizes of the mesh's axes (1 where it has none).
struct AxisSizes {
  int64_t pp = 1, dp = 1, cp = 1, tp = 1, ep = 1;
  int64_t ranks() const { return pp * dp * cp * tp * ep; }
};
} // namespace

/// An unparsable mesh (check() says why) has no axes.
static AxisSizes axisSizes(StringRef spec) {
  MeshShape mesh;
  if (spec.empty() || !MeshShape::parse(spec.str(), mesh).empty())
    return {};
  auto sizeOf = [&](const char *axis) {
    int64_t index = mesh.axisIndex(axis);
    return index < 0 ? 1 : mesh.sizes[index];
  };
  return {sizeOf("pp"), sizeOf("dp"), sizeOf("cp"), sizeOf("tp"), sizeOf("ep")};
}

std::string TrainingPipelineOptions::check(bool asFlags) const {
  auto name = [&](StringRef option) {
    return asFlags ? "--" + option.str() : "option '" + option.str() + "'";
  };
  StringRef lossSpec = loss;
  if (lossSpec != "cross-entropy" && lossSpec != "distillation" &&
      (!lossSpec.consume_front("output:") || lossSpec.empty()))
    return name("loss") + ": unknown loss '" + loss.getValue() +
           "' (cross-entropy, distillation or output:NAME)";
  if (!mesh.empty()) {
    MeshShape shape;
    std::string error = MeshShape::parse(mesh, shape);
    for (const std::string &axis : shape.axes)
      if (error.empty() && axis != "pp" && axis != "dp" && axis != "cp" &&
          axis != "tp" && axis != "ep")
        error = "unknown axis '" + axis + "' (pp, dp, cp, tp or ep)";
    if (!error.empty())
      return name("mesh") + ": " + error;
  }
  int64_t tp = axisSizes(mesh).tp;
  // Options of the tp axis mean nothing without one: say so.
  for (auto [given, option] :
       {std::pair<bool, StringRef>{sequenceParallel, "sequence-parallel"},
        {!shardingSpec.empty(), "sharding-spec"}})
    if (given && tp < 2)
      return name(option) + " needs a tp axis of 2 or more ranks (" +
             (asFlags ? "--mesh ...,tp=N" : "mesh=...,tp=N") + ")";
  if (contextParallel != "ring" && contextParallel != "all-gather" &&
      contextParallel != "ulysses")
    return name("context-parallel") + ": unknown '" +
           contextParallel.getValue() + "' (ring, all-gather or ulysses)";
  if (expertBound < 0)
    return name("expert-bound") + " must not be negative";
  if (expertBound > 0 && axisSizes(mesh).cp > 1)
    return name("expert-bound") +
           " with a cp axis: routing groups are contiguous (token, choice) "
           "rows, and a cp rank's tokens are not";
  if (gradAccum < 1)
    return name("grad-accum") + " must be at least 1";
  if (microbatches < 1)
    return name("microbatches") + " must be at least 1";
  if (microbatches > 1 && gradAccum > 1 && microbatches != gradAccum)
    return name("microbatches") + " and " + name("grad-accum") +
           " name the same count; give one (" + std::to_string(microbatches) +
           " and " + std::to_string(gradAccum) + " were given)";
  if (std::string error = checkPipeline(asFlags); !error.empty())
    return error;
  if (bucketMB < 0)
    return name("bucket-mb") + " must not be negative";
  RematPolicy policy;
  if (std::string error = RematPolicy::parse(remat, policy); !error.empty())
    return name("remat") + ": " + error;
  if (policy.budgetAuto && memoryLimit.empty())
    return name("remat") + " budget=auto needs " + name("memory-limit");
  return "";
}

int64_t TrainingPipelineOptions::getMicrobatches() const {
  return std::max<int64_t>(microbatches, gradAccum);
}

std::string TrainingPipelineOptions::checkPipeline(bool asFlags) const {
  auto name = [&](StringRef option) {
    return asFlags ? "--" + option.str() : "option '" + option.str() + "'";
  };
  std::optional<pipeline::ScheduleKind> kind =
      pipeline::parseScheduleKind(pipelineSchedule);
  if (!kind)
    return name("pipeline-schedule") + ": unknown '" +
           pipelineSchedule.getValue() +
           "' (gpipe, 1f1b, interleaved, zb-h1 or zbv)";
  int64_t pp = axisSizes(mesh).pp;
  if (pp == 1) {
    if (virtualStages != 1)
      return name("virtual-stages") + " needs a pp axis of 2 or more ranks";
    if (pipelineSplit != "auto")
      return name("pipeline-split") + " needs a pp axis of 2 or more ranks";
    return "";
  }
  pipeline::Schedule schedule;
  if (std::string error = pipeline::buildSchedule(*kind, pp, getMicrobatches(),
                                                  virtualStages, schedule);
      !error.empty())
    return name("pipeline-schedule") + ": " + error;
  std::vector<int64_t> layersPerStage;
  if (std::string error =
          pipeline::parsePipelineSplit(pipelineSplit, layersPerStage);
      !error.empty())
    return name("pipeline-split") + ": " + error;
  if (!layersPerStage.empty() &&
      static_cast<int64_t>(layersPerStage.size()) != schedule.getNumStages())
    return name("pipeline-split") + " names " +
           std::to_string(layersPerStage.size()) + " stages; the " +
           pipeline::getScheduleName(schedule.kind).str() +
           " schedule on pp=" + std::to_string(pp) + " has " +
           std::to_string(schedule.getNumStages());
  // --verify's simulated ranks meet at every collective, but stages run
  // different ones.
  if (verify && axisSizes(mesh).ranks() != pp)
    return name("verify") + " checks pipeline stages on a mesh of pp alone "
                            "for now";
  // (A pipelined step sums each stage's microbatch gradients whole and
  // reduces them once, as ZeRO-1 does: stage 2 would reduce-scatter every
  // microbatch's.)
  if (zero >= 2)
    return name("zero") + " " + std::to_string(zero) +
           " does not combine with pipeline stages: a stage sums its "
           "microbatches' gradients whole before they are reduced; use " +
           name("zero") +
           " 1 (DeepSpeed refuses ZeRO-2 and 3 with pipeline "
           "parallelism too)";
  return "";
}

void mlir::dtc::buildTrainingPipeline(OpPassManager &pm,
                                      const TrainingPipelineOptions &options) {
  buildGlobalStepPipeline(pm, options);
  if (!options.verify) {
    buildRankProgramPipeline(pm, options);
    return;
  }
  VerifyPartitionOptions verify;
  llvm::raw_string_ostream text(verify.training);
  options.print(text);
  // (Printed as "{...}".)
  verify.training = StringRef(verify.training).drop_front().drop_back().str();
  pm.addPass(createVerifyPartition(verify));
}

void mlir::dtc::buildGlobalStepPipeline(
    OpPassManager &pm, const TrainingPipelineOptions &options) {
  AttachLossOptions loss;
#define DTC_LOSS_OPTION(TYPE, NAME, ...) loss.NAME = options.NAME;
#include "dtc/Transforms/TrainingOptions.def"
  AxisSizes axes = axisSizes(options.mesh);
  int64_t tensorParallel = axes.tp;
  // The mesh first, in the user's axis order; the parallelism passes find
  // their axes in it.
  if (axes.ranks() > 1) {
    DefineMeshOptions mesh;
    mesh.shape = options.mesh;
    pm.addPass(createDefineMesh(mesh));
  }
  if (options.loss == "distillation")
    pm.addPass(createInlineTeacher());
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  // Attention as one op before anything keys on it (mixed precision,
  // autodiff, the partitioners).
  funcPm.addPass(createRaiseAttention());
  // A mixture's experts as one batched computation before anything splits
  // them (expert and tensor parallelism).
  funcPm.addPass(createBatchExperts());
  // Vocabulary parallelism needs the vocabulary to divide over tp. (A
  // distillation loss compares with the teacher's unpadded logits.)
  if (tensorParallel > 1 && options.loss != "distillation") {
    PadVocabularyOptions pad;
    pad.multiple = tensorParallel;
    pad.logits = options.logits;
    funcPm.addPass(createPadVocabulary(pad));
  }
  if (options.precision != Precision::FP32) {
    MixedPrecisionOptions mixed;
    mixed.type =
        options.precision == Precision::BF16 ? HalfType::BF16 : HalfType::F16;
    mixed.initScale = options.initScale;
    mixed.growthInterval = options.growthInterval;
    funcPm.addPass(createMixedPrecision(mixed));
  }
  // After mixed precision: the slots are counted in f32.
  if (options.expertBound > 0) {
    SortExpertsOptions sort;
    sort.bound = options.expertBound;
    sort.groups = axes.dp * axes.ep * options.getMicrobatches();
    sort.zeroEmptySlots = axes.ep > 1;
    funcPm.addPass(createSortExperts(sort));
  }
  funcPm.addPass(createAttachLoss(loss));
  // A sorted mixture's mask multiplies the experts' outputs: its unused
  // adjoint would be communicated for.
  AutodiffOptions autodiff;
  autodiff.eraseDeadAdjoints = options.expertBound > 0;
  funcPm.addPass(createAutodiff(autodiff));
  funcPm.addPass(createExpertLoad());
  // Attention's backward stays one op only for context parallelism's
  // patterns (dtc-context-parallel expands it after partitioning) and for
  // fused kernels (code generation expands what it does not fuse).
  if (axes.cp == 1 && !options.fusedAttention)
    funcPm.addPass(createExpandAttentionGrad());
  // The ZeRO paper's mixed precision: bf16 parameters and gradients, f32
  // master copies in the optimizer state. (fp16 keeps f32 parameters, as
  // torch.cuda.amp does, and scales the loss.)
  if (options.precision == Precision::BF16)
    funcPm.addPass(createMasterWeights());
  funcPm.addPass(createVerifyGlobalStep());
}

void mlir::dtc::buildRankProgramPipeline(
    OpPassManager &pm, const TrainingPipelineOptions &options) {
  OptimizerOptions opt;
#define DTC_OPTIMIZER_OPTION(TYPE, NAME, ...) opt.NAME = options.NAME;
#include "dtc/Transforms/TrainingOptions.def"
  AxisSizes axes = axisSizes(options.mesh);
  int64_t tensorParallel = axes.tp;
  // The per-rank program. Data parallelism splits the batch first; tensor
  // parallelism then partitions each rank's step (its Megatron matcher
  // pairs projections through the attention op, which context parallelism
  // rewrites), and context parallelism splits the sequence of what is left.
  // Under sequence parallelism context parallelism goes first: the
  // sequence's tp collectives would otherwise meet its split of the same
  // dimension.
  if (axes.dp > 1) {
    DataParallelOptions dp;
    dp.size = axes.dp;
    dp.strictSharding = options.strictSharding;
    pm.addPass(createDataParallel(dp));
  }
  auto addContextParallel = [&] {
    if (axes.cp == 1)
      return;
    ContextParallelOptions cp;
    cp.size = axes.cp;
    cp.attention = options.contextParallel;
    cp.strictSharding = options.strictSharding;
    pm.addPass(createContextParallel(cp));
    pm.addNestedPass<func::FuncOp>(createExpandAttentionGrad());
  };
  if (tensorParallel > 1 && options.sequenceParallel) {
    addContextParallel();
    SequenceParallelOptions sp;
    sp.size = tensorParallel;
    sp.strategy = options.tpStrategy;
    sp.shardingSpec = options.shardingSpec;
    sp.strictSharding = options.strictSharding;
    pm.addPass(createSequenceParallel(sp));
  } else {
    if (tensorParallel > 1) {
      TensorParallelOptions tp;
      tp.size = tensorParallel;
      tp.strategy = options.tpStrategy;
      tp.shardingSpec = options.shardingSpec;
      tp.strictSharding = options.strictSharding;
      pm.addPass(createTensorParallel(tp));
    }
    addContextParallel();
  }
  // Expert parallelism last: tensor parallelism then splits the experts'
  // projections of the whole batch, and the exchanges of tokens for
  // experts carry the tp split along.
  if (axes.ep > 1) {
    ExpertParallelOptions ep;
    ep.size = axes.ep;
    ep.strictSharding = options.strictSharding;
    pm.addPass(createExpertParallel(ep));
  }
  if (axes.pp > 1) {
    PipelineParallelOptions pipeline;
    pipeline.size = axes.pp;
    pipeline.microbatches = options.getMicrobatches();
    pipeline.schedule = options.pipelineSchedule;
    pipeline.virtualStages = options.virtualStages;
    pipeline.split = options.pipelineSplit;
    pipeline.strictSharding = options.strictSharding;
    pm.addPass(createPipelineParallel(pipeline));
  } else if (options.getMicrobatches() > 1) {
    GradientAccumulationOptions accumulation;
    accumulation.microbatches = options.getMicrobatches();
    accumulation.strictSharding = options.strictSharding;
    pm.addPass(createGradientAccumulation(accumulation));
  }
  // Buckets form over the collectives the gradients end up with: the
  // all-reduces, or under ZeRO (which needs one gradient per collective to
  // find its shard) the reduce-scatters and the parameters' all-gathers.
  GradientBucketingOptions bucketing;
  bucketing.bucketMB = options.bucketMB;
  // (Not under pipeline stages yet: a bucket would span stages.)
  bool buckets = options.bucketMB > 0 && axes.pp == 1;
  if (buckets && options.zero == 0)
    pm.addNestedPass<func::FuncOp>(createGradientBucketing(bucketing));
  pm.addNestedPass<func::FuncOp>(createOptimizer(opt));
  if (options.zero > 0) {
    ZeroOptions zero;
    zero.stage = options.zero;
    pm.addPass(createZero(zero));
  }
  // Each rank computes only its part of what it cuts from replicated
  // values (the vocabulary-parallel cross-entropy's one-hot; under ZeRO
  // the gradients fp16 unscales, whose sums so become reduce-scatters).
  if (axes.ranks() > 1)
    pm.addNestedPass<func::FuncOp>(createSinkShards());
  // Sorted experts' buffers are exchanged up to their filled rows.
  if (axes.ep > 1 && options.expertBound > 0)
    pm.addNestedPass<func::FuncOp>(createSendFilledRows());
  if (options.zero > 0 && buckets)
    pm.addNestedPass<func::FuncOp>(createGradientBucketing(bucketing));
  if (buckets)
    pm.addNestedPass<func::FuncOp>(createFuseScalarReductions());
  buildSimplifyPipeline(pm, SimplifyPipelineOptions());
  // After the last CSE, which would merge the recomputed copies back. (With
  // sequence parallelism or a half precision, policy none still gathers
  // and widens activations again in the backward rather than hold them.)
  if (options.remat != "none" || options.sequenceParallel ||
      options.precision != Precision::FP32) {
    RematOptions remat;
    remat.policy = options.remat;
    remat.memoryLimit = options.memoryLimit;
    pm.addNestedPass<func::FuncOp>(createRemat(remat));
  }
  pm.addNestedPass<func::FuncOp>(createVerifyRankProgram());
}

void mlir::dtc::registerDTCPasses() {
  registerDTCTransformsPasses();
  registerTrainingPasses();
  registerParallelPasses();
  registerRematPasses();
  registerCommPasses();
  registerCodegenPasses();
  PassPipelineRegistration<SimplifyPipelineOptions>(
      "dtc-simplify",
      "Fold constant subgraphs (dtc-fold-constants), canonicalize and CSE",
      buildSimplifyPipeline);
  // (Registered by hand so that options that contradict each other are an
  // error, not a pipeline that ignores some of them.)
  registerPassPipeline(
      "dtc-training",
      "Build the training step from a forward function and partition it "
      "over a mesh (docs/Parallelism.md lists the passes in order)",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        TrainingPipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        if (std::string error = options.check(); !error.empty())
          return errorHandler("dtc-training: " + error);
        buildTrainingPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> printOptions) {
        printOptions(TrainingPipelineOptions());
      });
}
