//===- dtc-plan.cpp - what a model needs on a cluster ---------------------===//
//
//   dtc-plan MODEL.onnx --gpus N [--gpu h100-80gb] [--gpus-per-node 8]
//            [--precision bf16] [--top K] [--explain --mesh ... --zero S]
//
// Builds the model's global training step once, from its shapes alone,
// and evaluates every configuration of N devices from it (lib/Planner):
// the memory per rank, the communication per axis, the step time and the
// model FLOPs utilization; prints the best, each as the dtc-compile flags
// that compile it. docs/Planner.md.
//
//===----------------------------------------------------------------------===//

#include "dtc/Analysis/Collectives.h"
#include "dtc/Analysis/Memory.h"
#include "dtc/Analysis/PipelineRanks.h"
#include "dtc/Dialect/DTC/IR/DTCDialect.h"
#include "dtc/Import/ONNX/ONNXImporter.h"
#include "dtc/Planner/Planner.h"
#include "dtc/Runtime/Communicator.h"
#include "dtc/Transforms/Passes.h"
#include "dtc/Transforms/Pipeline/Schedule.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <set>

using namespace mlir;
using namespace mlir::dtc;
namespace cl = llvm::cl;

static cl::OptionCategory categoryPlan("Planning options");
static cl::OptionCategory categoryExplain(
    "--explain: one configuration, spelled as dtc-compile spells it");

static cl::opt<std::string> modelPath(cl::Positional, cl::desc("<model.onnx>"),
                                      cl::Required, cl::cat(categoryPlan));
static cl::opt<int64_t> gpus("gpus", cl::cat(categoryPlan), cl::init(8),
                             cl::desc("Devices to plan for"));
static cl::opt<std::string>
    gpuName("gpu", cl::cat(categoryPlan), cl::init("h100-80gb"),
            cl::value_desc("NAME"),
            cl::desc("The device: a name of data/devices.json (h100-80gb, "
                     "h200-141gb, a100-80gb, cpu-core) or of --device-file"));
static cl::opt<std::string>
    deviceFile("device-file", cl::cat(categoryPlan), cl::value_desc("FILE"),
               cl::desc("Devices in data/devices.json's format, instead of "
                        "the built-in ones"));
static cl::opt<int64_t>
    gpusPerNode("gpus-per-node", cl::cat(categoryPlan), cl::init(0),
                cl::desc("Devices joined by the intra-node links (default: the "
                         "device's devices_per_node)"));
static cl::list<std::string>
    inputShapes("input-shape", cl::cat(categoryPlan),
                cl::desc("Shape of a graph input, NAME=DxDx... (the global "
                         "batch: rows x sequence)"));
static cl::opt<std::string>
    precision("precision", cl::cat(categoryPlan), cl::init("bf16"),
              cl::desc("Number format of the step: fp32, bf16 or fp16"));
static cl::opt<int64_t>
    top("top", cl::cat(categoryPlan), cl::init(3),
        cl::desc("Configurations to print (the best of each distinct "
                 "(tp, pp, cp, dp))"));
static cl::opt<double>
    margin("margin", cl::cat(categoryPlan), cl::init(0.05),
           cl::desc("Fraction of each device's usable memory kept free "
                    "(fragmentation, workspaces, communication buffers)"));
static cl::opt<std::string> attention(
    "attention", cl::cat(categoryPlan), cl::init("fused"),
    cl::desc("'fused': attention keeps no scores for its backward, as "
             "FlashAttention-style GPU kernels do (the default); 'unfused': "
             "it keeps them, as dtc's CPU and reference steps do"));
static cl::list<std::string> searchedSchedules(
    "pipeline-schedules", cl::cat(categoryPlan), cl::CommaSeparated,
    cl::desc("Pipeline schedules the search tries, comma-separated (default: "
             "all of gpipe, 1f1b, interleaved, zb-h1 and zbv; e.g. "
             "1f1b,interleaved for a framework without zero-bubble "
             "schedules)"));
static cl::list<std::string> searchedRemat(
    "remat-policies", cl::cat(categoryPlan), cl::CommaSeparated,
    cl::desc("Recomputation the search tries, comma-separated (default: all "
             "of none, budget (as few layers as fit) and full; e.g. full for "
             "a framework that recomputes whole layers only)"));
static cl::list<int64_t> searchedZero(
    "zero-stages", cl::cat(categoryPlan), cl::CommaSeparated,
    cl::desc("ZeRO stages the search tries, comma-separated (default: 0 to 3, "
             "0 and 1 with pipeline stages; e.g. 0,1 for a framework with a "
             "distributed optimizer only)"));
static cl::opt<bool> evenStages(
    "even-stages", cl::cat(categoryPlan),
    cl::desc("Pipelines only where the stages (times the chunks per rank) "
             "divide the layers, each stage taking as many (a framework that "
             "requires it, as Megatron-LM before its uneven pipelines did)"));
static cl::opt<bool> noSequenceParallel(
    "no-sequence-parallel", cl::cat(categoryPlan),
    cl::desc("Tensor parallelism without sequence parallelism: each tp rank "
             "runs the residual stream's norms, adds and dropout whole (as "
             "Megatron-LM before 2022 did; dtc-compile without "
             "--sequence-parallel)"));
static cl::opt<bool> compileTop(
    "compile-top", cl::cat(categoryPlan),
    cl::desc("Compile each printed configuration (as dtc-compile "
             "--shapes-only would) and print its figures beside the "
             "planner's: the persistent state, the activation peak the "
             "estimate is of, and without recomputation the busiest rank's "
             "bytes over dp (and ep), tp and pp; then whether the compiled "
             "rank fits"));
static cl::opt<std::string>
    jsonOut("json", cl::cat(categoryPlan), cl::value_desc("FILE"),
            cl::desc("Also write the printed configurations as JSON"));

static cl::opt<bool>
    explain("explain", cl::cat(categoryExplain),
            cl::desc("Explain one configuration's memory (the flags below) "
                     "instead of searching"));
static cl::opt<std::string>
    mesh("mesh", cl::cat(categoryExplain),
         cl::desc("pp=P,dp=D,ep=E,cp=C,tp=T (any of "
                  "them; ep for a mixture of experts)"));
static cl::opt<int64_t> zero("zero", cl::cat(categoryExplain), cl::init(0),
                             cl::desc("ZeRO stage"));
static cl::opt<int64_t>
    microbatches("microbatches", cl::cat(categoryExplain), cl::init(1),
                 cl::desc("Microbatches per step (--grad-accum without pp)"));
static cl::alias gradAccum("grad-accum", cl::aliasopt(microbatches),
                           cl::desc("Alias of --microbatches"));
static cl::opt<std::string>
    pipelineSchedule("pipeline-schedule", cl::cat(categoryExplain),
                     cl::init("1f1b"),
                     cl::desc("gpipe, 1f1b, interleaved, zb-h1 or zbv"));
static cl::opt<int64_t>
    virtualStages("virtual-stages", cl::cat(categoryExplain), cl::init(0),
                  cl::desc("Chunks per rank (interleaved)"));
static cl::list<int64_t> pipelineSplit(
    "pipeline-split", cl::cat(categoryExplain), cl::CommaSeparated,
    cl::desc("Layers per stage, comma-separated (default: balanced, the last "
             "stage also running the head and the loss)"));
static cl::opt<std::string> remat("remat", cl::cat(categoryExplain),
                                  cl::init("none"),
                                  cl::desc("none, full, or budget: as few "
                                           "layers recomputed as fit"));

static double gigabytes(double bytes) { return bytes / 1e9; }

static std::string describe(const PlanConfig &c) {
  std::string text = llvm::formatv("tp={0} pp={1} dp={2}", c.tp, c.pp, c.dp);
  if (c.cp > 1)
    text += " cp=" + std::to_string(c.cp);
  if (c.ep > 1)
    text += " ep=" + std::to_string(c.ep);
  if (c.tp > 1 && !c.sequenceParallel)
    text += " (tp without sequence parallelism)";
  text += llvm::formatv(", ZeRO-{0}, {1} microbatch{2}", c.zero, c.microbatches,
                        c.microbatches > 1 ? "es" : "");
  if (c.pp > 1)
    text += ", " + c.schedule +
            (c.schedule == "interleaved"
                 ? " (" + std::to_string(c.virtualStages) + " chunks)"
                 : "");
  if (c.recompute >= 1)
    text += ", full recomputation";
  else if (c.recompute > 0)
    text +=
        llvm::formatv(", {0:f0}% of the layers recomputed", 100 * c.recompute)
            .str();
  return text;
}

static void printMemory(const PlanEstimate &e, double usable) {
  const PlanMemory &m = e.memory;
  llvm::outs() << llvm::formatv(
      "    memory per rank{0}: parameters {1:f2} GB, gradients {2:f2} GB, "
      "master weights {3:f2} GB, optimizer state {4:f2} GB, activations "
      "{5:f2} GB (estimated): {6:f2} GB of {7:f2} GB usable\n",
      e.config.pp > 1 ? " (pp rank " + std::to_string(e.ppRank) + ")" : "",
      gigabytes(m.parameters), gigabytes(m.gradients),
      gigabytes(m.masterWeights), gigabytes(m.optimizerState),
      gigabytes(m.activations), gigabytes(m.total()), gigabytes(usable));
}

static void printPlan(const PlanEstimate &e, double usable, int64_t index) {
  llvm::outs() << llvm::formatv("{0}. {1}\n", index, describe(e.config));
  llvm::outs() << llvm::formatv(
      "    predicted step {0:f3} s, MFU {1:f1}% (HFU {2:f1}%); compute "
      "{3:f3} s, tensor-parallel collectives {4:f3} s, {8}{9}data-parallel "
      "reduction left after the backward {5:f3} s, optimizer {6:f3} s, "
      "bubble {7:f1}%\n",
      e.stepSeconds, 100 * e.mfu, 100 * e.hfu, e.computeSeconds, e.tpSeconds,
      e.dpSeconds, e.optimizerSeconds, 100 * e.bubbleFraction,
      e.config.cp > 1
          ? llvm::formatv("context-parallel exchanges left exposed {0:f3} s, ",
                          e.cpSeconds)
                .str()
          : "",
      e.config.ep > 1
          ? llvm::formatv("expert all-to-alls {0:f3} s, ", e.epSeconds).str()
          : "");
  printMemory(e, usable);
  llvm::outs() << llvm::formatv(
      "    communication per rank per step: tp {0:f2} GB, dp {1:f2} GB, pp "
      "{2:f2} GB{3}{4} (bus bytes)\n",
      gigabytes(e.tpBusBytes), gigabytes(e.dpBusBytes), gigabytes(e.ppBytes),
      e.config.cp > 1
          ? llvm::formatv(", cp {0:f2} GB", gigabytes(e.cpBusBytes)).str()
          : "",
      e.config.ep > 1
          ? llvm::formatv(", ep {0:f2} GB", gigabytes(e.epBusBytes)).str()
          : "");
  llvm::outs() << "    dtc-compile " << modelPath << " --shapes-only "
               << e.config.getFlags(precision) << " -o OUT\n";
}

static llvm::json::Object toJSON(const PlanEstimate &e) {
  const PlanMemory &m = e.memory;
  const PlanConfig &c = e.config;
  return llvm::json::Object{
      {"tp", c.tp},
      {"pp", c.pp},
      {"dp", c.dp},
      {"cp", c.cp},
      {"ep", c.ep},
      {"zero", c.zero},
      {"microbatches", c.microbatches},
      {"schedule", c.pp > 1 ? c.schedule : ""},
      {"remat", c.recompute >= 1  ? "full"
                : c.recompute > 0 ? "budget"
                                  : "none"},
      {"recomputed_fraction", c.recompute},
      {"flags", c.getFlags(precision)},
      {"fits", e.fits},
      {"pp_rank", e.ppRank},
      {"bus_pp_rank", e.busRank},
      {"memory_bytes_per_rank",
       llvm::json::Object{{"parameters", m.parameters},
                          {"gradients", m.gradients},
                          {"master_weights", m.masterWeights},
                          {"optimizer_state", m.optimizerState},
                          {"activations_estimated", m.activations}}},
      {"bus_bytes_per_step", llvm::json::Object{{"tp", e.tpBusBytes},
                                                {"dp", e.dpBusBytes},
                                                {"pp", e.ppBytes},
                                                {"cp", e.cpBusBytes},
                                                {"ep", e.epBusBytes}}},
      {"step_seconds", e.stepSeconds},
      {"mfu", e.mfu},
      {"hfu", e.hfu},
      {"bubble", e.bubbleFraction}};
}

/// The whole model's training state before any sharding, as the ZeRO paper
/// counts it.
static void printAnatomy(const ModelAnatomy &model) {
  PlanMemory whole = model.getStateBeforeSharding();
  double weights = whole.parameters, grads = whole.gradients,
         master = whole.masterWeights, state = whole.optimizerState;
  llvm::outs() << llvm::formatv(
      "dtc-plan: {0:f2}B parameters in {1} transformer layers; batch {2} x "
      "{3} tokens\n",
      model.getNumParameters() / 1e9, model.layers, model.batch,
      model.sequence);
  llvm::outs() << llvm::formatv(
      "dtc-plan: training state before sharding: weights {0:f1} GB, "
      "gradients {1:f1} GB, optimizer state {2:f1} GB (master weights "
      "{3:f1} GB, moments {4:f1} GB: {5} bytes per parameter): {6:f2} TB\n",
      gigabytes(weights), gigabytes(grads), gigabytes(master + state),
      gigabytes(master), gigabytes(state),
      std::llround((master + state) / model.getNumParameters()),
      (weights + grads + master + state) / 1e12);
  if (model.experts) {
    int64_t experts = 0;
    for (const PlannedParameter &p : model.parameters)
      experts += p.expert && p.trained ? p.getNumElements() : 0;
    llvm::outs() << llvm::formatv(
        "dtc-plan: a mixture of {0} experts: {1:f1}% of the parameters are "
        "experts' (expert parallelism, ep, splits them; the other ranks of "
        "the batch are dp's)\n",
        model.experts, 100.0 * experts / model.getNumParameters());
  }
}

/// Compiles `e`'s configuration of the model and prints dtc-compile's
/// figures beside the planner's (docs/Planner.md says which must be
/// equal), and whether the compiled rank fits in `usable` bytes. False when
/// it does not compile.
static bool compileAndCompare(MLIRContext &context,
                              const ONNXImportOptions &importOptions,
                              Precision precision, const PlanEstimate &e,
                              double usable) {
  const PlanConfig &c = e.config;
  OwningOpRef<ModuleOp> module =
      importONNXModel(&context, modelPath, importOptions);
  if (!module)
    return false;
  TrainingPipelineOptions options;
  options.precision = precision;
  options.mesh = c.getMesh();
  options.sequenceParallel = c.tp > 1 && c.sequenceParallel;
  options.contextParallel = c.getContextParallel().str();
  options.zero = c.zero;
  options.gradAccum = c.microbatches;
  if (c.pp > 1) {
    options.microbatches = c.microbatches;
    options.pipelineSchedule = c.schedule;
    options.virtualStages = c.getScheduleVirtualStages();
    std::string split;
    for (auto [i, n] : llvm::enumerate(c.split))
      split += (i ? "," : "") + std::to_string(n);
    options.pipelineSplit = split;
  }
  options.remat = c.recompute >= 1 ? "full"
                  : c.recompute > 0
                      ? "budget=" + std::to_string(c.rematBudgetBytes)
                      : "none";
  PassManager pm(&context);
  buildTrainingPipeline(pm, options);
  if (failed(pm.run(*module)))
    return false;
  func::FuncOp step = *module->getOps<func::FuncOp>().begin();
  // (Pipelined: the figures of the pp rank the planner reports.)
  StepMemory compiled =
      c.pp > 1
          ? analyzeMemory(step, pipelineRankOrders(step)[e.ppRank], e.ppRank)
          : analyzeMemory(step);
  const PlanMemory &m = e.memory;
  auto same = [](int64_t a, int64_t b) { return a == b ? "equal" : "DIFFER"; };
  llvm::outs() << llvm::formatv(
      "    compiled: parameters {0} B ({1}), gradients {2} B ({3}), master "
      "weights {4} B ({5}), optimizer state {6} B ({7}); activation peak "
      "{8:f2} GB (estimated {9:f2} GB, {10:f1}%)",
      compiled.parameters, same(compiled.parameters, m.parameters),
      compiled.gradients, same(compiled.gradients, m.gradients),
      compiled.masterWeights, same(compiled.masterWeights, m.masterWeights),
      compiled.optimizerState, same(compiled.optimizerState, m.optimizerState),
      gigabytes(compiled.activationPeak), gigabytes(m.activations),
      compiled.activationPeak
          ? 100.0 * (m.activations - compiled.activationPeak) /
                compiled.activationPeak
          : 0.0);
  if (c.recompute == 0) {
    // The busiest rank's (the planner's communication is its): over the
    // batch's ranks (cp's ring apart; the reductions, tp's partial sums
    // over dp and tp, the experts' exchanges), over tp alone, over pp.
    StepCollectives collectives =
        c.pp > 1 ? analyzeCollectives(pipelineRankOrders(step)[e.busRank])
                 : analyzeCollectives(step);
    double batch = 0, tensor = 0, pipeline = 0;
    for (const CollectiveCall &call : collectives.calls) {
      auto onAxis = [&](StringRef axis) {
        return llvm::is_contained(call.axes, axis);
      };
      if (call.axes == std::vector<std::string>{"tp"})
        tensor += call.busBytes;
      else if (call.axes == std::vector<std::string>{"pp"})
        pipeline += call.busBytes;
      else if (call.kind != "send_recv" &&
               (onAxis("dp") || onAxis("cp") || onAxis("ep")))
        batch += call.busBytes;
    }
    auto compare = [](StringRef what, double compiled, double planned) {
      llvm::outs() << llvm::formatv(
          "; {0} bus bytes {1:f0} ({2})", what, compiled,
          std::abs(compiled - planned) < 1
              ? std::string("equal")
              : llvm::formatv("planned {0:f0}", planned).str());
    };
    compare(c.ep > 1 ? "dp and ep" : "dp", batch, e.dpBusBytes + e.epBusBytes);
    if (c.tp > 1)
      compare("tp", tensor, e.tpBusBytes);
    if (c.pp > 1)
      compare("pp", pipeline, e.ppBytes);
  }
  // The verdict on the compiled figures: the activation peak is the one
  // estimate among them.
  double total = compiled.parameters + compiled.gradients +
                 compiled.masterWeights + compiled.optimizerState +
                 compiled.activationPeak;
  llvm::outs() << llvm::formatv(
      "\n    compiled: {0:f2} GB of {1:f2} GB usable per rank: {2}\n",
      gigabytes(total), gigabytes(usable),
      total <= usable ? "it fits" : "it does NOT fit");
  return true;
}

/// Why the best of some other families of configurations lost to the
/// winner: the part of the step that grew most, or the memory.
static void explainLosers(ArrayRef<PlanEstimate> plans, double usable) {
  const PlanEstimate &best = plans.front();
  auto family = [&](StringRef name,
                    llvm::function_ref<bool(const PlanConfig &)> in) {
    const PlanEstimate *found = nullptr;
    int64_t fitting = 0, total = 0;
    for (const PlanEstimate &e : plans) {
      if (!in(e.config))
        continue;
      ++total;
      fitting += e.fits;
      if (!found && e.fits)
        found = &e;
    }
    if (total == 0 || found == &best)
      return;
    llvm::outs() << "    " << name << ": ";
    if (!found) {
      double least = std::numeric_limits<double>::infinity();
      for (const PlanEstimate &e : plans)
        if (in(e.config))
          least = std::min<double>(least, e.memory.total());
      llvm::outs() << llvm::formatv(
          "none of {0} fits (the least memory per rank: {1:f2} GB of {2:f2} "
          "GB)\n",
          total, gigabytes(least), gigabytes(usable));
      return;
    }
    // The component of the step that grew most against the winner's.
    std::pair<double, const char *> parts[] = {
        {found->computeSeconds - best.computeSeconds, "more computing"},
        {found->tpSeconds - best.tpSeconds, "more tensor-parallel collectives"},
        {found->cpSeconds - best.cpSeconds,
         "more context-parallel exchanges left exposed"},
        {found->epSeconds - best.epSeconds, "more expert all-to-alls"},
        {found->dpSeconds - best.dpSeconds,
         "more data-parallel reduction left exposed"},
        {found->stepSeconds * found->bubbleFraction -
             best.stepSeconds * best.bubbleFraction,
         "more pipeline bubble"},
        {found->optimizerSeconds - best.optimizerSeconds,
         "a slower optimizer"}};
    auto worst = *llvm::max_element(
        parts, [](auto &a, auto &b) { return a.first < b.first; });
    llvm::outs() << llvm::formatv(
        "best {0} at MFU {1:f1}%: {2:f3} s a step, {3:f3} s more than the "
        "first, most of it {4} (+{5:f3} s)\n",
        describe(found->config), 100 * found->mfu, found->stepSeconds,
        found->stepSeconds - best.stepSeconds, worst.second, worst.first);
  };
  llvm::outs() << "dtc-plan: why the others lost:\n";
  family("without pipeline stages",
         [](const PlanConfig &c) { return c.pp == 1; });
  family("with pipeline stages", [](const PlanConfig &c) { return c.pp > 1; });
  family("without tensor parallelism",
         [](const PlanConfig &c) { return c.tp == 1; });
  family("data parallelism alone", [](const PlanConfig &c) {
    return c.tp == 1 && c.pp == 1 && c.cp == 1 && c.ep == 1;
  });
  family("with expert parallelism",
         [](const PlanConfig &c) { return c.ep > 1; });
  family("without expert parallelism",
         [](const PlanConfig &c) { return c.ep == 1; });
  family("with context parallelism",
         [](const PlanConfig &c) { return c.cp > 1; });
  family("without context parallelism",
         [](const PlanConfig &c) { return c.cp == 1; });
  family("with ZeRO-3", [](const PlanConfig &c) { return c.zero == 3; });
  family("with recomputation",
         [](const PlanConfig &c) { return c.recompute > 0; });
}

/// What would fit when nothing does (`plans`: the search of `request`):
/// more devices (the fewest, in whole nodes), or the optimizer state in host
/// memory.
static void suggest(const ModelAnatomy &model, const DeviceSpec &device,
                    const PlanRequest &request, double usable,
                    ArrayRef<PlanEstimate> plans) {
  // The training state alone, spread over every device (ZeRO-3), bounds
  // the count from below.
  PlanMemory whole = model.getStateBeforeSharding();
  double state = whole.total();
  int64_t node = request.gpusPerNode;
  auto wholeNodes = [&](int64_t n) { return (n + node - 1) / node * node; };
  int64_t bound = static_cast<int64_t>(std::ceil(state / usable));
  llvm::outs() << llvm::formatv(
      "dtc-plan: the training state alone ({0:f2} TB) needs {1} devices "
      "under ZeRO-3 ({2} in whole nodes of {3}) before activations\n",
      state / 1e12, bound, wholeNodes(bound), node);
  int64_t least = std::max(wholeNodes(bound), wholeNodes(request.gpus + 1));
  for (int64_t more = least; more <= 64 * least; more += node) {
    PlanRequest larger = request;
    larger.gpus = more;
    std::vector<PlanEstimate> largerPlans = searchPlans(model, device, larger);
    if (!largerPlans.empty() && largerPlans.front().fits) {
      llvm::outs() << llvm::formatv(
          "dtc-plan: what would fit: {0} devices (the fewest in whole "
          "nodes of {1}), best:\n",
          more, request.gpusPerNode);
      printPlan(largerPlans.front(), usable, 1);
      break;
    }
  }
  // Offloading: master weights and moments on the host, the rest of a
  // configuration on the devices.
  double host = whole.masterWeights + whole.optimizerState;
  auto onDevice = [](const PlanEstimate &e) {
    return e.memory.total() - e.memory.masterWeights - e.memory.optimizerState;
  };
  const PlanEstimate *best = nullptr;
  for (const PlanEstimate &e : plans)
    if (onDevice(e) <= usable && (!best || onDevice(e) < onDevice(*best)))
      best = &e;
  if (best)
    llvm::outs() << llvm::formatv(
        "dtc-plan: or offload the optimizer state ({0:f2} TB of host memory "
        "in all, {1:f1} GB per device's host share) and keep {2:f2} GB per "
        "device ({3}); dtc does not offload yet\n",
        host / 1e12, gigabytes(host / request.gpus), gigabytes(onDevice(*best)),
        describe(best->config));
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions({&categoryPlan, &categoryExplain});
  cl::ParseCommandLineOptions(
      argc, argv,
      "dtc-plan: what a model needs on a cluster\n\n"
      "Builds the model's training step once from its shapes (weights may be\n"
      "absent) and evaluates every configuration of --gpus devices: data,\n"
      "tensor (with sequence), context, expert and pipeline parallelism,\n"
      "ZeRO stage,\n"
      "recomputation (none, as few layers as fit, all), microbatches,\n"
      "pipeline schedule. Prints the best by predicted model FLOPs\n"
      "utilization with their memory per rank,\n"
      "communication and step time, each as dtc-compile flags; or, with\n"
      "--explain, one configuration's memory anatomy. docs/Planner.md.\n");
  auto start = std::chrono::steady_clock::now();

  std::vector<DeviceSpec> fileSpecs;
  std::string deviceError;
  const DeviceSpec *device =
      findDeviceSpec(gpuName, deviceFile, fileSpecs, deviceError);
  if (!device) {
    llvm::errs() << "error: --gpu: " << deviceError << "\n";
    return 1;
  }
  if (gpus < 1) {
    llvm::errs() << "error: --gpus must be 1 or more\n";
    return 1;
  }
  PlanRequest request;
  request.gpus = gpus;
  request.gpusPerNode =
      gpusPerNode > 0 ? gpusPerNode.getValue() : device->devicesPerNode;
  request.marginFraction = margin;
  if (attention != "fused" && attention != "unfused") {
    llvm::errs() << "error: unknown --attention '" << attention
                 << "' (fused, unfused)\n";
    return 1;
  }
  request.fusedAttention = attention == "fused";
  if (!searchedSchedules.empty()) {
    for (const std::string &name : searchedSchedules)
      if (!pipeline::parseScheduleKind(name)) {
        llvm::errs() << "error: --pipeline-schedules: unknown '" << name
                     << "' (gpipe, 1f1b, interleaved, zb-h1 or zbv)\n";
        return 1;
      }
    request.schedules.assign(searchedSchedules.begin(),
                             searchedSchedules.end());
  }
  if (!searchedRemat.empty()) {
    request.recompute.clear();
    for (const std::string &name : searchedRemat) {
      if (name != "none" && name != "budget" && name != "full") {
        llvm::errs() << "error: --remat-policies: unknown '" << name
                     << "' (none, budget or full)\n";
        return 1;
      }
      request.recompute.push_back(name == "none"   ? 0
                                  : name == "full" ? 1
                                                   : kRecomputeToFit);
    }
  }
  request.evenStages = evenStages;
  request.sequenceParallel = !noSequenceParallel;
  if (!searchedZero.empty()) {
    for (int64_t stage : searchedZero)
      if (stage < 0 || stage > 3) {
        llvm::errs() << "error: --zero-stages: no stage " << stage
                     << " (0, 1, 2 or 3)\n";
        return 1;
      }
    request.zeroStages.assign(searchedZero.begin(), searchedZero.end());
  }
  if (margin < 0 || margin >= 1) {
    llvm::errs() << "error: --margin must be in [0, 1)\n";
    return 1;
  }
  std::optional<Precision> chosen =
      llvm::StringSwitch<std::optional<Precision>>(precision)
          .Case("fp32", Precision::FP32)
          .Case("bf16", Precision::BF16)
          .Case("fp16", Precision::FP16)
          .Default(std::nullopt);
  if (!chosen) {
    llvm::errs() << "error: unknown --precision '" << precision
                 << "' (fp32, bf16, fp16)\n";
    return 1;
  }

  // The explained configuration, checked before the slow part.
  PlanConfig config;
  if (explain) {
    MeshShape shape;
    if (!mesh.empty()) {
      if (std::string error = MeshShape::parse(mesh, shape); !error.empty()) {
        llvm::errs() << "error: --mesh: " << error << "\n";
        return 1;
      }
    }
    for (auto [name, size] : llvm::zip(shape.axes, shape.sizes)) {
      if (name != "dp" && name != "tp" && name != "pp" && name != "cp" &&
          name != "ep") {
        llvm::errs() << "error: --mesh: '" << name << "=" << size
                     << "' is not dp=N, tp=N, pp=N, cp=N or ep=N\n";
        return 1;
      }
      (name == "dp"   ? config.dp
       : name == "tp" ? config.tp
       : name == "cp" ? config.cp
       : name == "ep" ? config.ep
                      : config.pp) = size;
    }
    config.zero = zero;
    config.sequenceParallel = !noSequenceParallel;
    config.microbatches = microbatches;
    config.schedule = pipelineSchedule;
    config.virtualStages = virtualStages > 0
                               ? virtualStages.getValue()
                               : (pipelineSchedule == "zbv" ? 2 : 1);
    if (remat != "none" && remat != "full" && remat != "budget") {
      llvm::errs() << "error: --remat: the planner knows none, full and "
                      "budget (as few layers recomputed as fit)\n";
      return 1;
    }
    config.recompute = remat == "full"     ? 1
                       : remat == "budget" ? kRecomputeToFit
                                           : 0;
    // The devices are the mesh's.
    if (gpus.getNumOccurrences() && gpus != config.getNumRanks()) {
      llvm::errs() << "error: --explain: --mesh " << mesh << " has "
                   << config.getNumRanks() << " ranks, --gpus says " << gpus
                   << "\n";
      return 1;
    }
    request.gpus = config.getNumRanks();
    if (zero < 0 || zero > 3 || (zero > 0 && config.getBatchRanks() < 2)) {
      llvm::errs() << "error: --zero " << zero
                   << ": a stage 0 to 3, above 0 with a dp (or ep) axis of 2 "
                      "or more\n";
      return 1;
    }
    if (config.ep > 1 && config.cp > 1) {
      llvm::errs() << "error: --mesh " << mesh
                   << ": the planner does not plan ep with cp\n";
      return 1;
    }
  }

  MLIRContext context(MLIRContext::Threading::DISABLED);
  context.printOpOnDiagnostic(false);
  ONNXImportOptions importOptions;
  if (std::string error =
          parseInputShapes(inputShapes, importOptions.inputShapes);
      !error.empty()) {
    llvm::errs() << "error: " << error << "\n";
    return 1;
  }
  importOptions.shapesOnly = true;
  importOptions.training = true;
  // A model exported in training mode trains with its Dropout nodes.
  importOptions.trainingDropout = true;
  llvm::errs() << "dtc-plan: importing " << modelPath << "\n";
  OwningOpRef<ModuleOp> module =
      importONNXModel(&context, modelPath, importOptions);
  if (!module)
    return 1;
  TrainingPipelineOptions options;
  options.precision = *chosen;
  options.optimizer = OptimizerKind::AdamW;
  PassManager global(&context);
  buildGlobalStepPipeline(global, options);
  if (failed(global.run(*module)))
    return 1;
  OwningOpRef<ModuleOp> single(cast<ModuleOp>((*module)->clone()));
  PassManager rank(&context);
  buildRankProgramPipeline(rank, options);
  if (failed(rank.run(*single)))
    return 1;
  std::vector<int64_t> degrees;
  // Tensor parallelism within a node (what would fit, when nothing does,
  // may need more devices than --gpus).
  for (int64_t tp = 1; tp <= request.gpusPerNode; tp *= 2)
    degrees.push_back(tp);
  if (explain && !llvm::is_contained(degrees, config.tp))
    degrees.push_back(config.tp);
  FailureOr<ModelAnatomy> model =
      analyzeModel(*module->getOps<func::FuncOp>().begin(),
                   *single->getOps<func::FuncOp>().begin(), *device, degrees,
                   !noSequenceParallel);
  if (failed(model))
    return 1;
  printAnatomy(*model);
  double usable = device->usableMemoryBytes * (1 - request.marginFraction);
  llvm::outs() << llvm::formatv(
      "dtc-plan: {0} x {1}: {2:f2} GB usable per device ({3:f2} GB as the "
      "driver reports it, less a {4:f0}% margin)\n",
      request.gpus, device->name, gigabytes(usable),
      gigabytes(device->usableMemoryBytes), 100 * request.marginFraction);

  llvm::json::Array printed;
  if (explain) {
    if (!model->tensorParallelDims.count(config.tp)) {
      llvm::errs() << "error: tp=" << config.tp
                   << ": the Megatron matcher finds no layout for this "
                      "model over that many ranks\n";
      return 1;
    }
    if (config.pp > 1) {
      pipeline::Schedule schedule;
      std::optional<pipeline::ScheduleKind> kind =
          pipeline::parseScheduleKind(config.schedule);
      std::string error =
          kind ? pipeline::buildSchedule(*kind, config.pp, config.microbatches,
                                         config.getScheduleVirtualStages(),
                                         schedule)
               : "unknown --pipeline-schedule '" + config.schedule +
                     "' (gpipe, 1f1b, interleaved, zb-h1, zbv)";
      if (!error.empty()) {
        llvm::errs() << "error: " << error << "\n";
        return 1;
      }
    }
    // (Ring attention's zigzag order cuts each sequence into 2cp chunks.)
    int64_t chunks =
        config.getContextParallel() == "ring" ? 2 * config.cp : config.cp;
    if (config.cp > 1 && model->sequence % chunks) {
      llvm::errs() << "error: context parallelism needs a sequence length "
                      "that "
                   << chunks << " equal chunks divide, not " << model->sequence
                   << "\n";
      return 1;
    }
    if (config.ep > 1 &&
        (model->experts % config.ep || model->expertExchangeCalls == 0)) {
      llvm::errs() << "error: --mesh ep=" << config.ep << ": "
                   << (model->experts
                           ? "expert parallelism needs ep to divide the " +
                                 std::to_string(model->experts) + " experts"
                           : std::string("the model has no mixture of "
                                         "experts to split"))
                   << "\n";
      return 1;
    }
    int64_t batchRanks = config.getBatchRanks();
    if (model->batch % batchRanks ||
        (model->batch / batchRanks) % config.microbatches) {
      llvm::errs() << "error: the global batch of " << model->batch
                   << " rows does not divide into dp=" << config.dp
                   << (config.ep > 1 ? " x ep=" + std::to_string(config.ep)
                                     : "")
                   << " x " << config.microbatches << " microbatches\n";
      return 1;
    }
    int64_t stages = config.pp * config.virtualStages;
    config.split = balanceLayers(*model, stages, request.fusedAttention);
    if (!pipelineSplit.empty()) {
      int64_t layers = 0;
      for (int64_t n : pipelineSplit)
        layers += n > 0 ? n : model->layers + 1;
      if (static_cast<int64_t>(pipelineSplit.size()) != stages ||
          layers != model->layers) {
        llvm::errs() << "error: --pipeline-split: " << stages
                     << " stages of at least one layer each, " << model->layers
                     << " layers in all\n";
        return 1;
      }
      config.split.assign(pipelineSplit.begin(), pipelineSplit.end());
    }
    PlanEstimate e = evaluatePlan(*model, config, *device, request);
    printPlan(e, usable, 1);
    if (compileTop &&
        !compileAndCompare(context, importOptions, *chosen, e, usable))
      return 1;
    for (const std::string &lint : lintPlan(*model, e, *device, request))
      llvm::outs() << "dtc-plan: lint: " << lint << "\n";
    llvm::outs() << (e.fits ? "dtc-plan: it fits\n"
                            : "dtc-plan: it does not fit\n");
    if (!e.fits)
      suggest(*model, *device, request, usable,
              searchPlans(*model, *device, request));
    printed.push_back(toJSON(e));
  } else {
    std::vector<PlanEstimate> plans = searchPlans(*model, *device, request);
    int64_t fitting =
        llvm::count_if(plans, [](const PlanEstimate &e) { return e.fits; });
    llvm::outs() << llvm::formatv(
        "dtc-plan: {0} configurations evaluated, {1} fit\n", plans.size(),
        fitting);
    if (fitting == 0) {
      if (!plans.empty()) {
        llvm::outs() << "dtc-plan: nothing fits; the least memory per rank:\n";
        printPlan(plans.front(), usable, 1);
        printed.push_back(toJSON(plans.front()));
      }
      suggest(*model, *device, request, usable, plans);
    } else {
      std::set<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>> shown;
      for (const PlanEstimate &e : plans) {
        if (!e.fits || static_cast<int64_t>(shown.size()) >= top)
          break;
        if (!shown
                 .insert({e.config.tp, e.config.pp, e.config.cp, e.config.ep,
                          e.config.dp})
                 .second)
          continue;
        printPlan(e, usable, shown.size());
        if (compileTop &&
            !compileAndCompare(context, importOptions, *chosen, e, usable))
          return 1;
        printed.push_back(toJSON(e));
      }
      explainLosers(plans, usable);
    }
  }
  if (!jsonOut.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(jsonOut, ec);
    if (ec) {
      llvm::errs() << "error: cannot write '" << jsonOut
                   << "': " << ec.message() << "\n";
      return 1;
    }
    os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                     {"device", device->name},
                                     {"gpus", request.gpus},
                                     {"parameters", model->getNumParameters()},
                                     {"plans", std::move(printed)}}))
       << "\n";
  }
  llvm::errs() << llvm::formatv(
      "dtc-plan: planned in {0:f2} s\n",
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count());
  return 0;
}
