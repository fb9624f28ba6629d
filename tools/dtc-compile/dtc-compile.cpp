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

#include "dtc/Dialect/DTC/IR/DTCDialect.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "dtc/Import/ONNX/ONNXImporter.h"
#include "dtc/Runtime/Communicator.h"
#include "dtc/Runtime/ONNX/TensorProto.h"
#include "dtc/Transforms/Passes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace mlir::dtc;
namespace cl = llvm::cl;

static cl::OptionCategory outputCat("Output options");
static cl::OptionCategory importCat("Import options");
static cl::OptionCategory lossCat("Loss options");
static cl::OptionCategory optCat("Optimizer options");

static cl::opt<std::string> modelPath(cl::Positional, cl::desc("<model.onnx>"),
                                      cl::Required);
static cl::opt<std::string> outDir("o", cl::cat(outputCat),
                                   cl::desc("Output directory"),
                                   cl::value_desc("dir"), cl::Required);
static cl::opt<std::string>
    bindInputs("bind-inputs", cl::cat(importCat),
               cl::desc("Tensors for graph inputs that determine shapes"));
static cl::list<std::string>
    inputShapes("input-shape", cl::cat(importCat),
                cl::desc("Shape of a graph input, NAME=DxDx... (repeatable)"));
static cl::opt<std::string>
    freeze("freeze", cl::cat(importCat),
           cl::desc("Regex of initializers that are not trained (imported as "
                    "constants)"));
static cl::opt<std::string> trainable(
    "trainable", cl::cat(importCat),
    cl::desc("Regex of the initializers that are trained (default: all)"));
static cl::opt<bool> dropout(
    "dropout", cl::cat(importCat),
    cl::desc("Train with the model's Dropout nodes (masks from a "
             "counter-based generator keyed on --seed, the site and the "
             "step); without it they are the identity"));
static cl::opt<int64_t> seed("seed", cl::cat(importCat), cl::init(0),
                             cl::desc("Seed of the dropout masks"));
static cl::opt<bool> shapesOnly(
    "shapes-only", cl::cat(importCat),
    cl::desc("Compile from the parameters' shapes alone, without reading "
             "their data (external data may be absent; frozen initializers "
             "become untrained parameters); dtc-run then needs --init"));
static cl::opt<bool> listParams(
    "list-params", cl::cat(importCat),
    cl::desc("Print the initializers (name, shape, type, trainable) and exit"));

static cl::opt<std::string> loss("loss", cl::cat(lossCat),
                                 cl::desc("cross-entropy, or output:NAME"),
                                 cl::init("cross-entropy"));
static cl::opt<std::string> logits("logits", cl::cat(lossCat),
                                   cl::desc("Output holding the logits"),
                                   cl::init("logits"));
static cl::opt<std::string> labels("labels", cl::cat(lossCat),
                                   cl::desc("Name of the labels input"),
                                   cl::init("labels"));
static cl::opt<int64_t> ignoreIndex("ignore-index", cl::cat(lossCat),
                                    cl::desc("Label that does not count"),
                                    cl::init(-100));
static cl::opt<std::string> teacherPath(
    "teacher", cl::cat(lossCat),
    cl::desc("Teacher model (.onnx) for knowledge distillation: the loss "
             "becomes alpha*T^2*KL(teacher/T || student/T) + (1-alpha)*CE"));
static cl::opt<double> temperature("temperature", cl::cat(lossCat),
                                   cl::init(1.0),
                                   cl::desc("Distillation temperature T"));
static cl::opt<double> alpha("alpha", cl::cat(lossCat), cl::init(0.5),
                             cl::desc("Weight of the distillation term"));

static cl::opt<std::string> precision(
    "precision", cl::cat(optCat), cl::init("fp32"),
    cl::desc("fp32; bf16: compute, parameters and gradients in bf16, "
             "with fp32 master weights, optimizer state and loss; fp16: "
             "compute in fp16 with fp32 parameters, gradients and state, and "
             "dynamic loss scaling"));
static cl::opt<double>
    initScale("init-scale", cl::cat(optCat), cl::init(65536.0),
              cl::desc("fp16: initial loss scale (GradScaler's default)"));
static cl::opt<int64_t> growthInterval(
    "growth-interval", cl::cat(optCat), cl::init(2000),
    cl::desc("fp16: finite steps before the loss scale doubles"));
static cl::OptionCategory parallelCat("Parallelism options");
static cl::opt<std::string> meshSpec(
    "mesh", cl::cat(parallelCat),
    cl::desc("Device mesh: axes dp (data parallelism over the batch) and "
             "tp (Megatron tensor parallelism), e.g. dp=2,tp=2; ranks are "
             "laid out in this order, the last axis fastest. Run the result "
             "with mpirun -np <product> dtc-run"));
static cl::opt<std::string> tpStrategy(
    "tp-strategy", cl::cat(parallelCat), cl::init("megatron"),
    cl::desc("With a tp axis: megatron (split the column/row-parallel "
             "projection pairs it finds) or none"));
static cl::opt<std::string> shardingSpec(
    "sharding-spec", cl::cat(parallelCat), cl::value_desc("FILE"),
    cl::desc("With a tp axis: JSON object from parameter-name regexes to "
             "per-dimension axes, e.g. {\"fc\\\\.weight\": [[\"tp\"], []]}; "
             "overrides --tp-strategy's choice for the parameters it names"));
static cl::opt<bool> sequenceParallel(
    "sequence-parallel", cl::cat(parallelCat), cl::init(false),
    cl::desc("With a tp axis: split the norm and residual regions along the "
             "sequence, with all-gathers and reduce-scatters in place of the "
             "activation all-reduces"));
static cl::opt<std::string> memoryLimit(
    "memory-limit", cl::cat(parallelCat), cl::value_desc("SIZE"),
    cl::desc("Fail, with the breakdown, when a rank would need more than "
             "this (parameters, gradients, master weights, optimizer state "
             "and activation peak), e.g. 80GB, 512MiB, 1e6 (bytes)"));
static cl::opt<std::string> deviceSpec(
    "device-spec", cl::cat(outputCat), cl::init("h100-80gb"),
    cl::value_desc("NAME"),
    cl::desc("The device report.json's roofline estimate is for: "
             "h100-80gb, h200-141gb or a100-80gb"));
static cl::opt<int64_t> zeroStage(
    "zero", cl::cat(parallelCat), cl::init(0), cl::value_desc("STAGE"),
    cl::desc("ZeRO over the dp axis: 1 shards the optimizer state (the "
             "gradients are reduce-scattered, the parameters all-gathered "
             "after the update), 2 also the gradient buffer, 3 also the "
             "parameters (gathered before their forward and backward "
             "reads); sizes dp does not divide are padded; 0: none"));
static cl::opt<double> bucketMB(
    "bucket-mb", cl::cat(parallelCat), cl::init(25), cl::value_desc("MiB"),
    cl::desc("Pack the gradients' all-reduces (under ZeRO their "
             "reduce-scatters and the parameters' all-gathers; stage 3's "
             "gathers per transformer block), in the order the step needs "
             "them, into buckets of at most this size, and scalar "
             "all-reduces into one call (0: one collective per tensor)"));
static cl::opt<int64_t> gradAccum(
    "grad-accum", cl::cat(parallelCat), cl::init(1),
    cl::desc("Run each (per-rank) batch as N microbatches in sequence, "
             "adding their gradients before one update"),
    cl::value_desc("N"));
static cl::opt<std::string> optimizer("optimizer", cl::cat(optCat),
                                      cl::desc("adamw or sgd"),
                                      cl::init("adamw"));
static cl::opt<double> lr("lr", cl::cat(optCat), cl::desc("Learning rate"),
                          cl::init(1e-3));
static cl::opt<double> beta1("beta1", cl::cat(optCat), cl::init(0.9),
                             cl::desc("AdamW beta1"));
static cl::opt<double> beta2("beta2", cl::cat(optCat), cl::init(0.999),
                             cl::desc("AdamW beta2"));
static cl::opt<double> eps("eps", cl::cat(optCat), cl::init(1e-8),
                           cl::desc("AdamW epsilon"));
static cl::opt<double> weightDecay("weight-decay", cl::cat(optCat),
                                   cl::init(0.01), cl::desc("Weight decay"));
static cl::opt<double> momentum("momentum", cl::cat(optCat), cl::init(0),
                                cl::desc("SGD momentum"));
static cl::opt<bool> nesterov("nesterov", cl::cat(optCat),
                              cl::desc("SGD with Nesterov momentum"));
static cl::opt<std::string> noDecay(
    "no-decay", cl::cat(optCat),
    cl::desc("Regex of parameters without weight decay (e.g. 'bias|ln')"));
static cl::opt<double>
    clipGradNorm("clip-grad-norm", cl::cat(optCat), cl::init(0),
                 cl::desc("Clip the global gradient norm to this (0: off)"));
static cl::opt<std::string>
    schedule("schedule", cl::cat(optCat), cl::init("constant"),
             cl::desc("constant, or warmup-cosine (PyTorch's LinearLR then "
                      "CosineAnnealingLR)"));
static cl::opt<int64_t> warmupSteps("warmup-steps", cl::cat(optCat),
                                    cl::init(0), cl::desc("Warm-up steps"));
static cl::opt<double> warmupStartFactor(
    "warmup-start-factor", cl::cat(optCat), cl::init(1.0 / 3),
    cl::desc("First learning-rate factor of the warm-up (LinearLR's "
             "start_factor)"));
static cl::opt<int64_t> totalSteps("total-steps", cl::cat(optCat),
                                   cl::init(1000),
                                   cl::desc("Length of the cosine schedule"));
static cl::opt<double> minLr("min-lr", cl::cat(optCat), cl::init(0),
                             cl::desc("Final learning rate"));

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
    StringRef node;
    while (auto name = dyn_cast<NameLoc>(loc)) {
      node = name.getName().getValue();
      loc = name.getChildLoc();
    }
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
  cl::HideUnrelatedOptions(
      {&outputCat, &importCat, &lossCat, &optCat, &parallelCat});
  cl::ParseCommandLineOptions(
      argc, argv,
      "dtc-compile: compiles an ONNX model into a training step\n\n"
      "Writes OUT/train_step.mlir, OUT/manifest.json (what the step takes\n"
      "and returns) and OUT/report.json (memory per rank, collectives,\n"
      "FLOPs and bytes per step, a roofline estimate); run the step with\n"
      "  dtc-run OUT --batch DIR --steps K [--dump DIR]\n"
      "or, for a --mesh of N devices,\n"
      "  mpirun -np N dtc-run OUT --batch DIR --steps K [--dump DIR]\n");

  const DeviceSpec *device = lookupDeviceSpec(deviceSpec);
  if (!device) {
    llvm::errs() << "error: unknown --device-spec '" << deviceSpec << "' (";
    llvm::interleave(
        getDeviceSpecs(), llvm::errs(),
        [](const DeviceSpec &spec) { llvm::errs() << spec.name; }, ", ");
    llvm::errs() << ")\n";
    return 1;
  }

  MLIRContext context;
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
  importOptions.dropoutSeed = seed;
  importOptions.freeze = freeze;
  importOptions.trainable = trainable;
  std::vector<InitializerInfo> initializers;
  importOptions.initializers = &initializers;
  llvm::errs() << "dtc-compile: importing " << modelPath << "\n";
  OwningOpRef<ModuleOp> module =
      importONNXModel(&context, modelPath, importOptions);
  if (!module)
    return 1;
  if (listParams) {
    for (const InitializerInfo &init : initializers)
      llvm::outs() << llvm::formatv("{0,-40} {1,-16} {2}\n", init.name,
                                    describe(init.shape, init.dtype),
                                    init.trainable ? "trainable" : "constant");
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

  TrainingPipelineOptions options;
  options.loss = teacherPath.empty() ? loss.getValue() : "distillation";
  options.temperature = temperature;
  options.alpha = alpha;
  options.logits = logits;
  options.labels = labels;
  options.ignoreIndex = ignoreIndex;
  if (precision != "fp32" && precision != "bf16" && precision != "fp16") {
    llvm::errs() << "error: unknown --precision '" << precision
                 << "' (fp32, bf16 or fp16)\n";
    return 1;
  }
  if (!meshSpec.empty()) {
    MeshShape mesh;
    std::string meshError = MeshShape::parse(meshSpec, mesh);
    for (const std::string &axis : mesh.axes)
      if (meshError.empty() && axis != "dp" && axis != "tp")
        meshError = "unknown axis '" + axis + "' (dp or tp)";
    if (!meshError.empty()) {
      llvm::errs() << "error: --mesh: " << meshError << "\n";
      return 1;
    }
    // The mesh in the user's axis order (the passes find their axes in
    // it); none for a single device.
    if (mesh.numDevices() > 1) {
      OpBuilder b(module->getBodyRegion());
      SmallVector<StringRef> axes(mesh.axes.begin(), mesh.axes.end());
      MeshOp::create(b, module->getLoc(), "mesh", b.getStrArrayAttr(axes),
                     b.getDenseI64ArrayAttr(mesh.sizes));
    }
    for (auto [axis, size] : llvm::zip(mesh.axes, mesh.sizes))
      (axis == "dp" ? options.dataParallel : options.tensorParallel) = size;
  }
  options.tpStrategy = tpStrategy;
  options.sequenceParallel = sequenceParallel;
  options.shardingSpec = shardingSpec;
  // Options of the tp axis mean nothing without one: say so.
  for (auto [given, flag] :
       {std::pair<bool, const char *>{sequenceParallel, "--sequence-parallel"},
        {!shardingSpec.empty(), "--sharding-spec"}})
    if (given && options.tensorParallel < 2) {
      llvm::errs() << "error: " << flag
                   << " needs a tp axis of 2 or more ranks (--mesh ...,tp=N)\n";
      return 1;
    }
  if (gradAccum < 1) {
    llvm::errs() << "error: --grad-accum must be at least 1\n";
    return 1;
  }
  options.gradAccum = gradAccum;
  if (bucketMB < 0) {
    llvm::errs() << "error: --bucket-mb must not be negative\n";
    return 1;
  }
  options.bucketMB = bucketMB;
  options.zero = zeroStage;
  options.precision = precision;
  options.initScale = initScale;
  options.growthInterval = growthInterval;
  options.optimizer = optimizer;
  options.lr = lr;
  options.beta1 = beta1;
  options.beta2 = beta2;
  options.eps = eps;
  options.weightDecay = weightDecay;
  options.momentum = momentum;
  options.nesterov = nesterov;
  options.noDecay = noDecay;
  options.clipGradNorm = clipGradNorm;
  options.schedule = schedule;
  options.warmupSteps = warmupSteps;
  options.warmupStartFactor = warmupStartFactor;
  options.totalSteps = totalSteps;
  options.minLr = minLr;
  llvm::errs() << "dtc-compile: building the training step\n";
  PassManager pm(&context);
  buildTrainingPipeline(pm, options);
  if (failed(pm.run(*module)))
    return 1;
  // The step ABI, as the runner will read it: a step dtc-run would refuse
  // is a compiler error, caught here.
  FailureOr<TrainingStep> step = TrainingStep::get(func);
  if (failed(step))
    return 1;
  FailureOr<StepSignature> signature = step->getSignature();
  if (failed(signature))
    return 1;
  if (std::string error = signature->check(); !error.empty()) {
    llvm::errs() << "error: the compiled step is inconsistent: " << error
                 << "\n";
    return 1;
  }
  llvm::Expected<llvm::json::Value> description =
      llvm::json::parse(signature->toJSON());
  if (!description) {
    llvm::errs() << "error: the step's description is no JSON: "
                 << llvm::toString(description.takeError()) << "\n";
    return 1;
  }
  llvm::json::Object report = reportStep(func, *device);
  if (!memoryLimit.empty() && !fitsMemoryLimit(report, memoryLimit))
    return 1;

  if (std::error_code ec = llvm::sys::fs::create_directories(outDir)) {
    llvm::errs() << "error: cannot create '" << outDir << "': " << ec.message()
                 << "\n";
    return 1;
  }
  if (!writeOutput(outDir + "/train_step.mlir",
                   [&](raw_ostream &os) { module->print(os); }))
    return 1;

  std::string pipeline;
  llvm::raw_string_ostream pipelineText(pipeline);
  options.print(pipelineText);
  llvm::json::Object manifest{
      {"model", modelPath.getValue()},
      {"module", "train_step.mlir"},
      {"function", "train_step"},
      {"pipeline", "dtc-training" + pipeline},
      {"parameters", describeArguments(*step, kParamAttrName)},
      {"inputs", describeArguments(*step, kInputAttrName)},
      {"state", describeArguments(*step, kStateAttrName)},
      {"step", std::move(*description)},
  };
  if (!writeJson(outDir + "/manifest.json", std::move(manifest)) ||
      !writeJson(outDir + "/report.json", std::move(report)))
    return 1;
  llvm::errs() << "dtc-compile: wrote " << outDir << "/train_step.mlir, "
               << outDir << "/manifest.json and " << outDir << "/report.json\n";
  return 0;
}
