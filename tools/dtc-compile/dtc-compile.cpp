//===- dtc-compile.cpp - compile an ONNX model into a training step -------===//
//
//   dtc-compile MODEL.onnx -o OUT [--loss cross-entropy --logits NAME
//               --labels NAME] [--optimizer adamw --lr 1e-3 ...]
//
// Imports the model, builds the training step with the dtc-training
// pipeline and writes the executable directory OUT: train_step.mlir (the
// step, for dtc-run), manifest.json (what the step takes and returns: its
// step ABI description, docs/StepABI.md) and report.json.
//
//===----------------------------------------------------------------------===//

#include "Report.h"

#include "dtc/Analysis/PipelineRanks.h"

#include "dtc/Dialect/DTC/IR/DTCDialect.h"
#include "dtc/Dialect/DTC/IR/DTCLocations.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "dtc/Import/ONNX/ONNXImporter.h"
#include "dtc/Planner/Planner.h"
#include "dtc/Runtime/Communicator.h"
#include "dtc/Runtime/ONNX/TensorProto.h"
#include "dtc/Runtime/Tensor.h"
#include "dtc/Target/CPU/CPUTarget.h"
#include "dtc/Target/CUDA/CUDATarget.h"
#include "dtc/Target/Program/BuildProgram.h"
#include "dtc/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dtc;
namespace cl = llvm::cl;

static cl::OptionCategory categoryOutput("Output options");
static cl::OptionCategory categoryImport("Import options");
static cl::OptionCategory categoryLoss("Loss options");
static cl::OptionCategory categoryPrecision("Precision options");
static cl::OptionCategory categoryParallel("Parallelism and memory options");
static cl::OptionCategory categoryOptimizer("Optimizer options");

static cl::opt<std::string> modelPath(cl::Positional, cl::desc("<model.onnx>"),
                                      cl::Required);
static cl::opt<std::string>
    outDir("o", cl::cat(categoryOutput),
           cl::desc("Output directory (needed unless --list-params)"),
           cl::value_desc("dir"));
static cl::opt<std::string>
    target("target", cl::cat(categoryOutput),
           cl::desc("What runs the step: 'cpu' (the default: also writes a "
                    "compiled per-rank program, OUT/program.txt and "
                    "OUT/kernels.so, which dtc-run starts dtc-launch on) or "
                    "'reference' (dtc-run interprets train_step.mlir on the "
                    "f64 oracle; no code generation; the default with a pp "
                    "axis, whose compiled programs, one per pp coordinate, "
                    "are OUT's and OUT/pp-C's) or 'cuda' (kernels as CUDA C++ "
                    "compiled by nvcc "
                    "into OUT/kernels.fatbin, GEMMs on cuBLAS, collectives "
                    "on NCCL: run by dtc-launch-cuda on a GPU)"),
           cl::init("cpu"));
static cl::opt<std::string>
    gpuArch("gpu-arch", cl::cat(categoryOutput),
            cl::desc("--target cuda: the GPU architecture the kernels are "
                     "compiled for (SASS, plus PTX the driver compiles for "
                     "newer GPUs)"),
            cl::init("sm_90"));
static cl::opt<bool> cudaEmulation(
    "cuda-emulation", cl::cat(categoryOutput),
    cl::desc("--target cuda: also compile the kernels as host C++, one "
             "thread per block (OUT/kernels-emulated.so), which `dtc-run OUT "
             "--emulate-cuda` runs on CPU ranks: what the generated kernels "
             "compute, checked without a GPU"));
static cl::opt<std::string>
    bindInputs("bind-inputs", cl::cat(categoryImport),
               cl::desc("Tensors for graph inputs that determine shapes"));
static cl::list<std::string>
    inputShapes("input-shape", cl::cat(categoryImport),
                cl::desc("Shape of a graph input, NAME=DxDx... (repeatable, "
                         "or comma-separated)"));
static cl::opt<std::string>
    freeze("freeze", cl::cat(categoryImport),
           cl::desc("Regex of initializers that are not trained (imported as "
                    "constants)"));
static cl::opt<std::string> trainable(
    "trainable", cl::cat(categoryImport),
    cl::desc("Regex of the initializers that are trained (default: the "
             "parameters the exporter recorded, else every float "
             "initializer)"));
static cl::opt<bool> dropout(
    "dropout", cl::cat(categoryImport),
    cl::desc("Train with the model's Dropout nodes (masks from a "
             "counter-based generator keyed on --seed, the site and the "
             "step); without it they are the identity"));
static cl::opt<int64_t> seed("seed", cl::cat(categoryImport), cl::init(0),
                             cl::desc("Seed of the dropout masks"));
static cl::opt<bool> shapesOnly(
    "shapes-only", cl::cat(categoryImport),
    cl::desc("Compile from the parameters' shapes alone, without reading "
             "their data (external data may be absent; frozen initializers "
             "become untrained parameters); dtc-run then needs --init or "
             "--init-random"));
static cl::opt<bool> noRetie(
    "no-retie", cl::cat(categoryImport),
    cl::desc("Keep apart a parameter and the transposed copy torch's ONNX "
             "optimizer stored of it (a tie it broke: GPT-2's embedding and "
             "head), instead of training them as one"));
static cl::opt<bool> strictParams(
    "strict-params", cl::cat(categoryImport),
    cl::desc("Refuse an initializer torch's ONNX optimizer computed from a "
             "parameter and other values (GPT-2's position rows, Gemma's "
             "1 + w), instead of training it in the parameter's place with a "
             "warning"));
static cl::opt<double> capacityFactor(
    "capacity-factor", cl::cat(categoryImport), cl::init(0),
    cl::desc("A GShard/Switch mixture of experts' capacity, rewritten from "
             "the one the export bakes in: ceil(F x k x tokens / experts) "
             "rows of each expert's buffer per routing group (tokens past "
             "it dropped, as the model does); an error where dtc cannot "
             "find or rewrite the capacity (0: the model's)"),
    cl::value_desc("F"));
using RV = dtc::ONNXImportOptions::RunningVariance;
static cl::opt<RV> runningVariance(
    "batch-norm-variance", cl::cat(categoryImport),
    cl::desc(
        "Running variance of training-mode BatchNormalization: 'unbiased' "
        "(PyTorch's BatchNorm), 'population' (ONNX's reference), or 'auto' "
        "(unbiased for models whose producer is pytorch, else population)"),
    cl::init(RV::Auto),
    cl::values(
        clEnumValN(RV::Auto, "auto", "unbiased for pytorch models"),
        clEnumValN(RV::Unbiased, "unbiased", "n / (n - 1) times the batch's"),
        clEnumValN(RV::Population, "population", "the batch's variance")));
static cl::opt<std::string> batchNormStats(
    "batch-norm-stats", cl::cat(categoryImport),
    cl::desc("Statistics of training-mode batch norms under --mesh dp=N: "
             "'global' (the whole batch's, as on one device and with "
             "PyTorch's SyncBatchNorm) or 'per-rank' (each dp rank's rows "
             "apart, as PyTorch's DistributedDataParallel without "
             "SyncBatchNorm; the running statistics are rank 0's)"),
    cl::init("global"));
static cl::opt<bool> listParams(
    "list-params", cl::cat(categoryImport),
    cl::desc("Print the initializers (name, shape, type, whether each trains "
             "and why: the exporter's record, a flag or the default rule) "
             "and exit"));

static cl::opt<std::string> teacherPath(
    "teacher", cl::cat(categoryLoss),
    cl::desc("Teacher model (.onnx) for knowledge distillation: the loss "
             "becomes alpha*T^2*KL(teacher/T || student/T) + (1-alpha)*CE"));
static cl::opt<bool>
    timing("timing", cl::cat(categoryOutput),
           cl::desc("Print the time of each compile phase and pass (the "
                    "import, every pass of the pipeline, the report and the "
                    "writing), as mlir-opt's --mlir-timing does"));
static cl::opt<std::string> deviceSpec(
    "device-spec", cl::cat(categoryOutput), cl::init("h100-80gb"),
    cl::value_desc("NAME"),
    cl::desc("The device report.json's roofline estimate is for: "
             "h100-80gb, h200-141gb or a100-80gb (data/devices.json), "
             "or a name of --device-file"));
static cl::opt<std::string> deviceFile(
    "device-file", cl::cat(categoryOutput), cl::value_desc("FILE"),
    cl::desc("Devices in data/devices.json's format, instead of the built-in "
             "ones"));
// The dtc-training pipeline's options, as flags of the same names.
#define DTC_TRAINING_OPTION(GROUP, TYPE, NAME, FLAG, HELP, ...)                \
  static cl::opt<TYPE> NAME##Flag(FLAG, cl::cat(category##GROUP),              \
                                  cl::desc(HELP), __VA_ARGS__);
#include "dtc/Transforms/TrainingOptions.def"

/// The arguments of `step` of one role, for people: name (or state kind
/// and parameter), per-rank type, trainable.
static llvm::json::Array describeArguments(const TrainingStep &step,
                                           StringRef key) {
  func::FuncOp func = step.getFunction();
  llvm::json::Array list;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    if (!func.getArgAttr(i, key))
      continue;
    std::string type;
    llvm::raw_string_ostream os(type);
    os << func.getArgument(i).getType();
    llvm::json::Object entry{{"type", type}};
    if (const TrainingStep::State *state = step.getState(i)) {
      entry["kind"] = stringifyStateKind(state->getKind());
      if (!state->getParam().empty())
        entry["parameter"] = state->getParam();
    } else {
      entry["name"] = getArgumentName(func, i);
    }
    if (key == kParamAttrName) {
      auto flag = func.getArgAttrOfType<BoolAttr>(i, kTrainableAttrName);
      entry["trainable"] = !flag || flag.getValue();
    }
    list.push_back(std::move(entry));
  }
  return list;
}

/// Writes `path` through `write`; false (with an error printed) when it
/// cannot be opened.
static bool writeOutput(const std::string &path,
                        llvm::function_ref<void(raw_ostream &)> write) {
  std::string error;
  auto file = openOutputFile(path, &error);
  if (!file) {
    llvm::errs() << "error: " << error << "\n";
    return false;
  }
  write(file->os());
  file->keep();
  return true;
}

static bool writeJson(const std::string &path, llvm::json::Object object) {
  return writeOutput(path, [&](raw_ostream &os) {
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(object))) << "\n";
  });
}

/// "model.onnx: node '/block/qkv/MatMul': warning: ...": an imported op's
/// location is its ONNX node (and value) in the model file, which has no
/// line to point at.
static LogicalResult printDiagnostic(Diagnostic &diag) {
  auto print = [](Location loc, StringRef severity, const Twine &message) {
    auto [node, inner] = getNodeLocation(loc);
    loc = inner;
    std::string where;
    llvm::raw_string_ostream os(where);
    if (auto file = dyn_cast<FileLineColLoc>(loc)) {
      os << file.getFilename().getValue();
      if (file.getLine() != 0)
        os << ":" << file.getLine() << ":" << file.getColumn();
    } else {
      os << "dtc-compile";
    }
    if (!node.empty())
      os << ": node '" << node << "'";
    llvm::errs() << where << ": " << severity << ": " << message << "\n";
  };
  auto severity = [](DiagnosticSeverity s) {
    switch (s) {
    case DiagnosticSeverity::Error:
      return "error";
    case DiagnosticSeverity::Warning:
      return "warning";
    case DiagnosticSeverity::Remark:
      return "remark";
    case DiagnosticSeverity::Note:
      return "note";
    }
    return "error";
  };
  print(diag.getLocation(), severity(diag.getSeverity()), diag.str());
  for (Diagnostic &note : diag.getNotes())
    print(note.getLocation(), "note", note.str());
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // Only dtc-compile's own options in --help, not LLVM's.
  cl::HideUnrelatedOptions({&categoryOutput, &categoryImport, &categoryLoss,
                            &categoryOptimizer, &categoryPrecision,
                            &categoryParallel});
  cl::ParseCommandLineOptions(
      argc, argv,
      "dtc-compile: compiles an ONNX model into a training step\n\n"
      "Writes OUT/train_step.mlir, OUT/manifest.json (what the step takes\n"
      "and returns) and OUT/report.json (memory per rank, collectives,\n"
      "FLOPs and bytes per step, a roofline estimate); run the step with\n"
      "  dtc-run OUT --batch DIR --steps K [--dump DIR]\n"
      "or, for a --mesh of N devices,\n"
      "  mpirun -np N dtc-run OUT --batch DIR --steps K [--dump DIR]\n");

  if (target != "reference" && target != "cpu" && target != "cuda") {
    llvm::errs() << "error: unknown --target '" << target
                 << "' (reference, cpu, cuda)\n";
    return 1;
  }
  // A step without values: its report, or (an explicit --target) a
  // program whose parameters come from dtc-run's --init or --init-random.
  if (shapesOnly && !target.getNumOccurrences())
    target = "reference";
  if (outDir.empty() && !listParams) {
    llvm::errs() << "error: no output directory (-o DIR)\n";
    return 1;
  }
  std::vector<DeviceSpec> fileSpecs;
  std::string deviceError;
  const DeviceSpec *device =
      findDeviceSpec(deviceSpec, deviceFile, fileSpecs, deviceError);
  if (!device) {
    llvm::errs() << "error: --device-spec: " << deviceError << "\n";
    return 1;
  }

  TrainingPipelineOptions options;
#define DTC_TRAINING_OPTION(GROUP, TYPE, NAME, ...)                            \
  options.NAME = NAME##Flag.getValue();
#include "dtc/Transforms/TrainingOptions.def"
  if (!teacherPath.empty())
    options.loss = "distillation";
  if (target == "cuda" && !fusedAttentionFlag.getNumOccurrences())
    options.fusedAttention = true;
  if (std::string error = options.check(/*asFlags=*/true); !error.empty()) {
    llvm::errs() << "error: " << error << "\n";
    return 1;
  }
  // Pipeline stages run on the reference executor by default (which times
  // their fragments: dtc-run --trace) or compiled for CPU ranks.
  if (MeshShape mesh; !options.mesh.empty() &&
                      MeshShape::parse(options.mesh, mesh).empty() &&
                      mesh.axisIndex("pp") >= 0) {
    if (target == "cuda") {
      llvm::errs() << "error: --target cuda does not run pipeline stages (a "
                      "pp axis) yet; the reference executor (the default "
                      "with pp) and --target cpu do\n";
      return 1;
    }
    if (!target.getNumOccurrences())
      target = "reference";
  }

  MLIRContext context(MLIRContext::Threading::DISABLED);
  // Errors name the op and the problem; a dump of the whole function after
  // them buries the message.
  context.printOpOnDiagnostic(false);
  ScopedDiagnosticHandler diagnostics(&context, printDiagnostic);
  ONNXImportOptions importOptions;
  std::string error = parseInputShapes(inputShapes, importOptions.inputShapes);
  if (!error.empty()) {
    llvm::errs() << "error: " << error << "\n";
    return 1;
  }
  if (!bindInputs.empty() &&
      !readTensorDir(bindInputs, importOptions.boundInputs, error)) {
    llvm::errs() << "error: " << error << "\n";
    return 1;
  }
  importOptions.shapesOnly = shapesOnly;
  importOptions.trainingDropout = dropout;
  importOptions.training = true;
  importOptions.dropoutSeed = seed;
  importOptions.freeze = freeze;
  importOptions.runningVariance = runningVariance;
  if (batchNormStats == "per-rank") {
    MeshShape mesh;
    if (!options.mesh.empty() && MeshShape::parse(options.mesh, mesh).empty())
      if (int64_t dp = mesh.axisIndex("dp"); dp >= 0)
        importOptions.batchNormGroups = mesh.sizes[dp];
  } else if (batchNormStats != "global") {
    llvm::errs() << "error: unknown --batch-norm-stats '" << batchNormStats
                 << "' (global, per-rank)\n";
    return 1;
  }
  if (capacityFactor < 0 || !std::isfinite(capacityFactor)) {
    llvm::errs() << llvm::formatv(
        "error: --capacity-factor must be a finite number, 0 or more, not "
        "{0}\n",
        capacityFactor.getValue());
    return 1;
  }
  importOptions.capacityFactor = capacityFactor;
  CapacityRewrite capacityRewrite;
  importOptions.capacityRewrite = &capacityRewrite;
  importOptions.retie = !noRetie;
  importOptions.strictParams = strictParams;
  importOptions.trainable = trainable;
  std::vector<InitializerInfo> initializers;
  importOptions.initializers = &initializers;
  DefaultTimingManager timingManager;
  timingManager.setEnabled(timing);
  TimingScope rootTiming = timingManager.getRootScope();
  llvm::errs() << "dtc-compile: importing " << modelPath << "\n";
  TimingScope importTiming = rootTiming.nest("Import");
  OwningOpRef<ModuleOp> module =
      importONNXModel(&context, modelPath, importOptions);
  if (!module)
    return 1;
  if (capacityRewrite.slotOneHots)
    llvm::errs() << llvm::formatv(
        "dtc-compile: --capacity-factor {0}: each expert's buffer holds {1} "
        "of a routing group's {2} tokens (the model's capacity: {3}, in {4} "
        "slot one-hots)\n",
        capacityFactor.getValue(), capacityRewrite.to, capacityRewrite.tokens,
        capacityRewrite.from, capacityRewrite.slotOneHots);
  if (listParams) {
    for (const InitializerInfo &init : initializers)
      llvm::outs() << llvm::formatv("{0,-40} {1,-16} {2,-9} ({3})\n",
                                    init.name,
                                    describe(init.shape, init.dtype),
                                    init.trainable ? "trainable" : "constant",
                                    init.reason);
    return 0;
  }
  auto func = *module->getOps<func::FuncOp>().begin();
  func.setSymName("train_step");
  if (!teacherPath.empty()) {
    llvm::errs() << "dtc-compile: importing the teacher " << teacherPath
                 << "\n";
    ONNXImportOptions teacherOptions;
    teacherOptions.boundInputs = importOptions.boundInputs;
    teacherOptions.inputShapes = importOptions.inputShapes;
    OwningOpRef<ModuleOp> teacher =
        importONNXModel(&context, teacherPath, teacherOptions);
    if (!teacher)
      return 1;
    auto teacherFunc = *teacher->getOps<func::FuncOp>().begin();
    teacherFunc->remove();
    teacherFunc.setSymName("teacher");
    module->push_back(teacherFunc);
  }

  importTiming.stop();
  llvm::errs() << "dtc-compile: building the training step\n";
  PassManager pm(&context);
  TimingScope pipelineTiming = rootTiming.nest("Training pipeline");
  pm.enableTiming(pipelineTiming);
  buildTrainingPipeline(pm, options);
  if (failed(pm.run(*module)))
    return 1;
  pipelineTiming.stop();
  // (dtc-verify-rank-program has checked the step as dtc-run will read it.)
  FailureOr<TrainingStep> step = TrainingStep::get(func);
  if (failed(step))
    return 1;
  FailureOr<StepSignature> signature = step->getSignature();
  if (failed(signature))
    return 1;
  llvm::Expected<llvm::json::Value> description =
      llvm::json::parse(signature->toJSON());
  if (!description) {
    llvm::errs() << "error: the step's description is no JSON: "
                 << llvm::toString(description.takeError()) << "\n";
    return 1;
  }
  TimingScope reportTiming = rootTiming.nest("Report");
  llvm::json::Object report = reportStep(func, *device);
  reportTiming.stop();
  if (!options.memoryLimit.empty() &&
      !fitsMemoryLimit(report, options.memoryLimit))
    return 1;

  if (std::error_code ec = llvm::sys::fs::create_directories(outDir)) {
    llvm::errs() << "error: cannot create '" << outDir << "': " << ec.message()
                 << "\n";
    return 1;
  }
  // Lints of the configuration (dtc-plan's, docs/Planner.md).
  MeshShape meshShape;
  if (!options.mesh.empty() &&
      MeshShape::parse(options.mesh, meshShape).empty())
    if (int64_t tp = meshShape.axisIndex("tp"); tp >= 0)
      if (std::optional<std::string> lint = lintTensorParallelSpan(
              meshShape.sizes[tp], device->devicesPerNode, *device))
        llvm::errs() << "dtc-compile: lint: " << *lint << "\n";
  if (std::optional<llvm::json::Object> pipeline =
          reportPipeline(func, outDir + "/schedule.trace.json")) {
    const llvm::json::Object *predicted = pipeline->getObject("predicted");
    if (std::optional<std::string> lint = lintPipelineBubble(
            options.getMicrobatches(), *pipeline->getInteger("ranks"),
            predicted->getNumber("max_bubble_fraction").value_or(0)))
      llvm::errs() << "dtc-compile: lint: " << *lint << "\n";
    report["pipeline"] = std::move(*pipeline);
  }

  TimingScope writeTiming = rootTiming.nest("Write the outputs");
  // (Ended by a newline, as dtc-opt ends it: the same pipeline run by
  // dtc-opt gives the same file.)
  if (!writeOutput(outDir + "/train_step.mlir", [&](raw_ostream &os) {
        module->print(os);
        os << "\n";
      }))
    return 1;

  std::string pipeline;
  llvm::raw_string_ostream pipelineText(pipeline);
  options.print(pipelineText);
  // The model's absolute path: dtc-run --export-onnx rewrites it with the
  // trained parameters, from wherever it runs.
  llvm::SmallString<256> absoluteModel(modelPath.getValue());
  llvm::sys::fs::make_absolute(absoluteModel);
  llvm::json::Object manifest{
      {"model", absoluteModel.str()},
      {"module", "train_step.mlir"},
      {"target", target.getValue()},
      {"function", "train_step"},
      {"pipeline", "dtc-training" + pipeline},
      {"parameters", describeArguments(*step, kParamAttrName)},
      {"inputs", describeArguments(*step, kInputAttrName)},
      {"state", describeArguments(*step, kStateAttrName)},
      {"step", std::move(*description)},
  };
  writeTiming.stop();
  if (target == "cpu" || target == "cuda") {
    llvm::errs() << "dtc-compile: compiling the step for "
                 << (target == "cpu" ? "CPU ranks"
                                     : "CUDA GPUs (" + gpuArch + ")")
                 << "\n";
    TimingScope codegenTiming = rootTiming.nest("code generation");
    FailureOr<ProgramSummary> program = failure();
    std::optional<CUDAProgramSummary> cuda;
    llvm::json::Array perPipelineRank;
    if (target == "cpu" && getPipelineRanks(func)) {
      // One program per pp coordinate: coordinate 0's in OUT, coordinate
      // C's in OUT/pp-C. The figures printed are the largest arena's.
      for (int64_t c = 0, e = getPipelineRanks(func); c < e; ++c) {
        FailureOr<OwningOpRef<ModuleOp>> rank = pipelineRankModule(func, c);
        if (failed(rank))
          return 1;
        std::string dir = c ? outDir + "/pp-" + std::to_string(c) : outDir;
        FailureOr<ProgramSummary> part = compileCPUProgram(
            *(**rank).getOps<func::FuncOp>().begin(), *signature, dir);
        if (failed(part))
          return 1;
        perPipelineRank.push_back(
            llvm::json::Object{{"pp_rank", c},
                               {"kernels", part->kernels},
                               {"gemms", part->gemms},
                               {"collectives", part->collectives},
                               {"arena", part->arenaBytes}});
        if (failed(program) || part->arenaBytes > program->arenaBytes)
          program = part;
      }
    } else if (target == "cpu") {
      program = compileCPUProgram(func, *signature, outDir);
    } else {
      CUDATargetOptions cudaOptions;
      cudaOptions.arch = gpuArch;
      cudaOptions.emulation = cudaEmulation;
      FailureOr<CUDAProgramSummary> compiled =
          compileCUDAProgram(func, *signature, outDir, cudaOptions);
      if (succeeded(compiled)) {
        cuda = *compiled;
        program = compiled->program;
      }
    }
    if (failed(program))
      return 1;
    const ProgramSummary &p = *program;
    llvm::errs() << llvm::formatv(
        "dtc-compile: compiled program: {0} kernels, {1} GEMMs, {2} "
        "collectives ({3} started asynchronously); one arena of {4} B (the "
        "most live at once: {5} B, +{6:f1}%)\n",
        p.kernels, p.gemms, p.collectives, p.asyncCollectives, p.arenaBytes,
        p.arenaLowerBound,
        p.arenaLowerBound
            ? 100.0 * (p.arenaBytes - p.arenaLowerBound) / p.arenaLowerBound
            : 0.0);
    report["compiled_program"] =
        llvm::json::Object{{"kernels", p.kernels},
                           {"gemms", p.gemms},
                           {"collectives", p.collectives},
                           {"async_collectives", p.asyncCollectives},
                           {"arena", p.arenaBytes},
                           {"arena_lower_bound", p.arenaLowerBound}};
    if (!perPipelineRank.empty())
      report["compiled_program"].getAsObject()->insert(
          {"pp_ranks", std::move(perPipelineRank)});
    if (cuda) {
      llvm::errs() << "dtc-compile: ptxas: at most " << cuda->maxRegisters
                   << " registers a thread, " << cuda->spillBytes
                   << " bytes of spills" << (cuda->spilling.empty() ? "" : ":");
      llvm::json::Array spilling;
      for (const std::string &kernel : cuda->spilling) {
        llvm::errs() << " " << kernel;
        spilling.push_back(kernel);
      }
      llvm::errs() << " (" << outDir << "/ptxas.txt)\n";
      report["compiled_program"].getAsObject()->insert(
          {"cuda", llvm::json::Object{{"arch", gpuArch.getValue()},
                                      {"max_registers", cuda->maxRegisters},
                                      {"spill_bytes", cuda->spillBytes},
                                      {"spilling", std::move(spilling)}}});
    }
    llvm::errs() << "dtc-compile: wrote " << outDir << "/program.txt and "
                 << outDir
                 << (target == "cpu" ? "/kernels.so"
                     : cudaEmulation
                         ? "/kernels.{cu,fatbin}, kernels-emulated.so"
                         : "/kernels.{cu,fatbin}")
                 << "\n";
  }
  if (!writeJson(outDir + "/manifest.json", std::move(manifest)) ||
      !writeJson(outDir + "/report.json", std::move(report)))
    return 1;
  llvm::errs() << "dtc-compile: wrote " << outDir << "/train_step.mlir, "
               << outDir << "/manifest.json and " << outDir << "/report.json\n";
  return 0;
}
