//===- Passes.h - dtc passes and pipelines ----------------------*- C++ -*-===//
//
// The dtc passes (declared in Passes.td, one file each under lib/Transforms)
// and the pipelines that chain them. `registerDTCPasses()` makes all of them
// available to dtc-opt.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TRANSFORMS_PASSES_H
#define DTC_TRANSFORMS_PASSES_H

#include "dtc/Dialect/DTC/IR/DTCDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::dtc {

#define GEN_PASS_DECL
#include "dtc/Transforms/Passes.h.inc"

/// Options of the `dtc-simplify` pipeline.
struct SimplifyPipelineOptions
    : public PassPipelineOptions<SimplifyPipelineOptions> {
  Option<int64_t> maxConstantElements{
      *this, "max-constant-elements",
      llvm::cl::desc("Largest folded result to materialize, in elements"),
      llvm::cl::init(1 << 20)};
};

/// Folds constant subgraphs, canonicalizes and removes common
/// subexpressions: the clean-up an imported model gets before training
/// passes see it.
void buildSimplifyPipeline(OpPassManager &pm,
                           const SimplifyPipelineOptions &options);

/// Options of the `dtc-training` pipeline: those of dtc-attach-loss and
/// dtc-optimizer (see their descriptions in the pass reference).
struct TrainingPipelineOptions
    : public PassPipelineOptions<TrainingPipelineOptions> {
  Option<std::string> loss{*this, "loss",
                           llvm::cl::desc("cross-entropy or output:NAME"),
                           llvm::cl::init("cross-entropy")};
  Option<std::string> logits{*this, "logits",
                             llvm::cl::desc("Output holding the logits"),
                             llvm::cl::init("logits")};
  Option<std::string> labels{*this, "labels",
                             llvm::cl::desc("Name of the labels input"),
                             llvm::cl::init("labels")};
  Option<int64_t> ignoreIndex{*this, "ignore-index",
                              llvm::cl::desc("Label value that does not count"),
                              llvm::cl::init(-100)};
  Option<double> temperature{*this, "temperature",
                             llvm::cl::desc("Distillation temperature"),
                             llvm::cl::init(1.0)};
  Option<double> alpha{*this, "alpha",
                       llvm::cl::desc("Weight of the distillation term"),
                       llvm::cl::init(0.5)};
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("fp32, bf16 (bf16 compute, fp32 master weights), or "
                     "fp16 (the same with dynamic loss scaling)"),
      llvm::cl::init("fp32")};
  Option<double> initScale{*this, "init-scale",
                           llvm::cl::desc("Initial loss scale (fp16)"),
                           llvm::cl::init(65536.0)};
  Option<int64_t> growthInterval{
      *this, "growth-interval",
      llvm::cl::desc("Finite steps before the loss scale doubles (fp16)"),
      llvm::cl::init(2000)};
  Option<int64_t> dataParallel{
      *this, "dp",
      llvm::cl::desc("Data-parallel ranks (dtc-data-parallel; 1: none)"),
      llvm::cl::init(1)};
  Option<int64_t> tensorParallel{
      *this, "tp",
      llvm::cl::desc("Tensor-parallel ranks (dtc-tensor-parallel; 1: none)"),
      llvm::cl::init(1)};
  Option<std::string> tpStrategy{
      *this, "tp-strategy",
      llvm::cl::desc("megatron (column/row pairs) or none"),
      llvm::cl::init("megatron")};
  Option<std::string> shardingSpec{
      *this, "sharding-spec",
      llvm::cl::desc("With tp: JSON file of parameter layouts (regex -> "
                     "per-dimension axes)"),
      llvm::cl::init("")};
  Option<bool> sequenceParallel{
      *this, "sequence-parallel",
      llvm::cl::desc("With tp: split the norm and residual regions along the "
                     "sequence (dtc-sequence-parallel)"),
      llvm::cl::init(false)};
  Option<int64_t> zero{
      *this, "zero",
      llvm::cl::desc("ZeRO stage over dp (dtc-zero; 0: none, 1, 2)"),
      llvm::cl::init(0)};
  Option<double> bucketMB{
      *this, "bucket-mb",
      llvm::cl::desc("Gradient all-reduces packed into buckets of this many "
                     "MiB (dtc-bucket-gradients; 0: one per gradient)"),
      llvm::cl::init(25)};
  Option<int64_t> gradAccum{
      *this, "grad-accum",
      llvm::cl::desc("Microbatches whose gradients add up before one update "
                     "(dtc-gradient-accumulation; 1: none)"),
      llvm::cl::init(1)};
  Option<std::string> optimizer{*this, "optimizer",
                                llvm::cl::desc("adamw or sgd"),
                                llvm::cl::init("adamw")};
  Option<double> lr{*this, "lr", llvm::cl::desc("Learning rate"),
                    llvm::cl::init(1e-3)};
  Option<double> beta1{*this, "beta1", llvm::cl::desc("AdamW beta1"),
                       llvm::cl::init(0.9)};
  Option<double> beta2{*this, "beta2", llvm::cl::desc("AdamW beta2"),
                       llvm::cl::init(0.999)};
  Option<double> eps{*this, "eps", llvm::cl::desc("AdamW epsilon"),
                     llvm::cl::init(1e-8)};
  Option<double> weightDecay{*this, "weight-decay",
                             llvm::cl::desc("Weight decay"),
                             llvm::cl::init(0.01)};
  Option<double> momentum{*this, "momentum", llvm::cl::desc("SGD momentum"),
                          llvm::cl::init(0)};
  Option<bool> nesterov{*this, "nesterov", llvm::cl::desc("SGD Nesterov"),
                        llvm::cl::init(false)};
  Option<std::string> noDecay{*this, "no-decay",
                              llvm::cl::desc("Regex of parameters without "
                                             "weight decay"),
                              llvm::cl::init("")};
  Option<double> clipGradNorm{*this, "clip-grad-norm",
                              llvm::cl::desc("Global gradient-norm clip (0: "
                                             "off)"),
                              llvm::cl::init(0)};
  Option<std::string> schedule{*this, "schedule",
                               llvm::cl::desc("constant or warmup-cosine"),
                               llvm::cl::init("constant")};
  Option<int64_t> warmupSteps{*this, "warmup-steps",
                              llvm::cl::desc("Warm-up steps"),
                              llvm::cl::init(0)};
  Option<double> warmupStartFactor{
      *this, "warmup-start-factor",
      llvm::cl::desc("Warm-up's first learning-rate factor"),
      llvm::cl::init(1.0 / 3)};
  Option<int64_t> totalSteps{*this, "total-steps",
                             llvm::cl::desc("Steps of the cosine schedule"),
                             llvm::cl::init(1000)};
  Option<double> minLr{*this, "min-lr", llvm::cl::desc("Final learning rate"),
                       llvm::cl::init(0)};
};

/// Builds the training step from a forward function: dtc-attach-loss,
/// dtc-autodiff, dtc-optimizer, then dtc-simplify; for loss=distillation,
/// dtc-inline-teacher first (the module then holds @teacher too); for
/// precision=bf16 or fp16, dtc-mixed-precision before the loss.
void buildTrainingPipeline(OpPassManager &pm,
                           const TrainingPipelineOptions &options);

/// Registers every dtc pass and pipeline (for dtc-opt).
void registerDTCPasses();

} // namespace mlir::dtc

#endif // DTC_TRANSFORMS_PASSES_H
