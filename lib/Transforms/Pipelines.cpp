//===- Pipelines.cpp - dtc pass pipelines and registration ----------------===//

#include "dtc/Transforms/Comm/Passes.h"
#include "dtc/Transforms/Parallel/Passes.h"
#include "dtc/Transforms/Passes.h"
#include "dtc/Transforms/Training/Passes.h"

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

void mlir::dtc::buildTrainingPipeline(OpPassManager &pm,
                                      const TrainingPipelineOptions &options) {
  AttachLossOptions loss;
  loss.loss = options.loss;
  loss.logits = options.logits;
  loss.labels = options.labels;
  loss.ignoreIndex = options.ignoreIndex;
  loss.temperature = options.temperature;
  loss.alpha = options.alpha;
  OptimizerOptions opt;
  opt.optimizer = options.optimizer;
  opt.lr = options.lr;
  opt.beta1 = options.beta1;
  opt.beta2 = options.beta2;
  opt.eps = options.eps;
  opt.weightDecay = options.weightDecay;
  opt.momentum = options.momentum;
  opt.nesterov = options.nesterov;
  opt.noDecay = options.noDecay;
  opt.clipGradNorm = options.clipGradNorm;
  opt.schedule = options.schedule;
  opt.warmupSteps = options.warmupSteps;
  opt.warmupStartFactor = options.warmupStartFactor;
  opt.totalSteps = options.totalSteps;
  opt.minLr = options.minLr;
  if (options.loss == "distillation")
    pm.addPass(createInlineTeacher());
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  // Attention as one op before anything keys on it (mixed precision,
  // autodiff, the partitioners).
  funcPm.addPass(createRaiseAttention());
  // Vocabulary parallelism needs the vocabulary to divide over tp. (A
  // distillation loss compares with the teacher's unpadded logits.)
  if (options.tensorParallel > 1 && options.loss != "distillation") {
    PadVocabularyOptions pad;
    pad.multiple = options.tensorParallel;
    pad.logits = options.logits;
    funcPm.addPass(createPadVocabulary(pad));
  }
  if (options.precision == "bf16" || options.precision == "fp16") {
    MixedPrecisionOptions mixed;
    mixed.type = options.precision == "bf16" ? "bf16" : "f16";
    mixed.initScale = options.initScale;
    mixed.growthInterval = options.growthInterval;
    funcPm.addPass(createMixedPrecision(mixed));
  }
  funcPm.addPass(createAttachLoss(loss));
  funcPm.addPass(createAutodiff());
  // The ZeRO paper's mixed precision: bf16 parameters and gradients, f32
  // master copies in the optimizer state. (fp16 keeps f32 parameters, as
  // torch.cuda.amp does, and scales the loss.)
  if (options.precision == "bf16")
    funcPm.addPass(createMasterWeights());
  if (options.dataParallel > 1) {
    DataParallelOptions dp;
    dp.size = options.dataParallel;
    pm.addPass(createDataParallel(dp));
  }
  if (options.tensorParallel > 1 && options.sequenceParallel) {
    SequenceParallelOptions sp;
    sp.size = options.tensorParallel;
    sp.strategy = options.tpStrategy;
    sp.shardingSpec = options.shardingSpec;
    pm.addPass(createSequenceParallel(sp));
  } else if (options.tensorParallel > 1) {
    TensorParallelOptions tp;
    tp.size = options.tensorParallel;
    tp.strategy = options.tpStrategy;
    tp.shardingSpec = options.shardingSpec;
    pm.addPass(createTensorParallel(tp));
  }
  if (options.gradAccum > 1) {
    GradientAccumulationOptions accumulation;
    accumulation.microbatches = options.gradAccum;
    pm.addPass(createGradientAccumulation(accumulation));
  }
  // Buckets form over the collectives the gradients end up with: the
  // all-reduces, or under ZeRO (which needs one gradient per collective to
  // find its shard) the reduce-scatters and the parameters' all-gathers.
  GradientBucketingOptions bucketing;
  bucketing.bucketMB = options.bucketMB;
  if (options.bucketMB > 0 && options.zero == 0)
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
  if (options.dataParallel > 1 || options.tensorParallel > 1)
    pm.addNestedPass<func::FuncOp>(createSinkShards());
  if (options.zero > 0 && options.bucketMB > 0)
    pm.addNestedPass<func::FuncOp>(createGradientBucketing(bucketing));
  if (options.bucketMB > 0)
    pm.addNestedPass<func::FuncOp>(createFuseScalarReductions());
  buildSimplifyPipeline(pm, SimplifyPipelineOptions());
}

void mlir::dtc::registerDTCPasses() {
  registerDTCTransformsPasses();
  registerTrainingPasses();
  registerParallelPasses();
  registerCommPasses();
  PassPipelineRegistration<SimplifyPipelineOptions>(
      "dtc-simplify",
      "Fold constant subgraphs (dtc-fold-constants), canonicalize and CSE",
      buildSimplifyPipeline);
  PassPipelineRegistration<TrainingPipelineOptions>(
      "dtc-training",
      "Build the training step: dtc-attach-loss, dtc-autodiff, dtc-optimizer, "
      "dtc-simplify",
      buildTrainingPipeline);
}
