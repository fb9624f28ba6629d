//===- dtc-run.cpp - run a dtc module on the reference executor -----------===//
//
//   dtc-run MODULE.mlir --inputs DIR [--outputs DIR] [--function NAME]
//   dtc-run OUT (--data FILE | --batch DIR) --steps K [training options]
//
// The second form trains: OUT is a directory written by dtc-compile, and
// its training step runs K times (see TrainingLoop.h). A step written for
// another version of the step ABI (docs/StepABI.md) is refused.
//
// Reads the function's inputs from DIR (.npy files named after the input, or
// ONNX TensorProto .pb files whose name field names it, or, unnamed,
// input_N.pb for the N-th graph input; files matching no argument are
// ignored), takes parameters from the module unless DIR
// overrides them, runs the function and writes each result as
// OUTDIR/<output name>.npy. Prints a one-line summary of each output.
//
//===----------------------------------------------------------------------===//

#include "PipelineTrace.h"
#include "ReferenceEngine.h"
#include "TestDialect.h"
#include "dtc/Analysis/PipelineRanks.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Runtime/Communicator.h"
#include "dtc/Runtime/MPI/MPICommunicator.h"

#include "dtc/Dialect/DTC/IR/DTCDialect.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "dtc/Interpreter/Interpreter.h"
#include "dtc/Runtime/ONNX/ModelExport.h"
#include "dtc/Runtime/ONNX/TensorProto.h"
#include "dtc/Runtime/RunOptions.h"
#include "dtc/Runtime/TensorIO.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include <cerrno>
#include <cstring>
#include <unistd.h>

using namespace mlir;
using namespace mlir::dtc;

static llvm::cl::OptionCategory runCat("Running a function");
static llvm::cl::opt<std::string> modulePath(llvm::cl::Positional,
                                             llvm::cl::desc("<module.mlir>"),
                                             llvm::cl::Required);
static llvm::cl::opt<std::string>
    inputsDir("inputs", llvm::cl::cat(runCat),
              llvm::cl::desc("Directory of input tensors (.npy or "
                             "ONNX TensorProto .pb), matched to "
                             "function arguments by name; an unnamed "
                             "input_N.pb binds the N-th graph input"));
static llvm::cl::opt<std::string>
    outputsDir("outputs", llvm::cl::cat(runCat),
               llvm::cl::desc("Directory to write each result to, "
                              "as <output name>.npy"));
static llvm::cl::opt<std::string>
    functionName("function", llvm::cl::cat(runCat),
                 llvm::cl::desc("Function to run (default: the "
                                "module's only public function)"));

static const std::string runOptionsText = std::string("\n") + kRunOptionsHelp;
static llvm::cl::extrahelp runOptionsHelp(runOptionsText);
static llvm::cl::OptionCategory trainCat("Engine (when the positional "
                                         "argument is a dtc-compile output)");
static llvm::cl::opt<std::string> engineName(
    "engine", llvm::cl::cat(trainCat),
    llvm::cl::desc("What runs the step: 'auto' (the compiled program when "
                   "OUT has one, from dtc-compile --target cpu, else the "
                   "reference executor), 'reference' (interpret "
                   "OUT/train_step.mlir) or 'cpu' (the compiled program, "
                   "run by dtc-launch)"),
    llvm::cl::init("auto"));
static llvm::cl::opt<bool> checkArena(
    "check-arena", llvm::cl::cat(trainCat),
    llvm::cl::desc("A compiled program fills each arena slot with NaN once "
                   "its last reader has run: the trajectory must not "
                   "change (compiled programs only)"));
static llvm::cl::opt<std::string> tracePath(
    "trace", llvm::cl::cat(trainCat), llvm::cl::value_desc("FILE"),
    llvm::cl::desc("A pipelined step (dtc-compile --mesh pp=P): time each "
                   "fragment of the last step as the ranks run it, write the "
                   "measured timeline to FILE as a Chrome trace (one track "
                   "per pp rank) and print the measured bubble of each pp "
                   "rank beside the one the schedule simulator predicts from "
                   "the measured mean fragment times"));
static func::FuncOp findFunction(ModuleOp module) {
  if (!functionName.empty()) {
    auto func = module.lookupSymbol<func::FuncOp>(functionName);
    if (!func)
      module.emitError("no function named '") << functionName << "'";
    return func;
  }
  func::FuncOp found;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isPrivate() || func.isExternal())
      continue;
    if (found) {
      module.emitError("the module has several public functions; choose one "
                       "with --function");
      return {};
    }
    found = func;
  }
  if (!found)
    module.emitError("the module has no public function to run");
  return found;
}

/// The step ABI version a step file that does not parse declares, read
/// from its text: a step written for another version may use syntax this
/// build does not know, and the reason is then the version, not the
/// syntax. None when it declares none.
static std::optional<int64_t> declaredABIVersion(StringRef text) {
  llvm::Regex version("dtc.step = #dtc.step<abi = ([0-9]+)");
  SmallVector<StringRef, 2> matches;
  int64_t found;
  if (!version.match(text, &matches) || matches[1].getAsInteger(10, found))
    return std::nullopt;
  return found;
}

/// Checks that `func`, the step of `path`, is written for the step ABI
/// this build reads, before anything else reads its attributes.
static bool checkABIVersion(func::FuncOp func, const std::string &path) {
  StepAttr step = getStepAttr(func);
  std::string error = checkStepABIVersion(
      step ? std::optional<int64_t>(step.getAbi()) : std::nullopt, path);
  if (error.empty())
    return true;
  llvm::errs() << "error: " << error << "\n";
  return false;
}

/// "shape [2, 3] f32: 0.1 0.2 0.3 ..." for the console.
static void printSummary(llvm::raw_ostream &os, const std::string &name,
                         const Tensor &tensor) {
  os << name << ": " << describe(tensor.shape(), tensor.dtype()) << " =";
  int64_t shown = std::min<int64_t>(tensor.numElements(), 8);
  for (int64_t i = 0; i < shown; ++i)
    os << " " << llvm::format("%g", tensor.at(i));
  if (shown < tensor.numElements())
    os << " ...";
  os << "\n";
}

/// The model's inputs in their graph order, which unnamed `input_N.pb`
/// files bind by: as the importer recorded it where it folded some into
/// constants, else the order of the `dtc.input` arguments.
static std::vector<std::string> graphInputNames(func::FuncOp func) {
  std::vector<std::string> names;
  if (auto recorded = func->getAttrOfType<ArrayAttr>(kGraphInputsAttrName)) {
    for (auto name : recorded.getAsValueRange<StringAttr>())
      names.push_back(name.str());
    return names;
  }
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (auto name = func.getArgAttrOfType<StringAttr>(i, kInputAttrName))
      names.push_back(name.str());
  return names;
}

/// Runs the function once on the inputs and writes its outputs. With several
/// ranks, DIR/rank<N>/ overrides DIR's files for rank N, and the outputs go
/// to OUTDIR/rank<N>/.
static int runOnce(func::FuncOp func, Communicator *comm) {
  std::string error;
  bool ranked = comm && comm->worldSize() > 1;
  std::string rankDir = ranked ? "/rank" + std::to_string(comm->rank()) : "";
  std::map<std::string, Tensor> provided, own;
  if (!inputsDir.empty() &&
      (!readTensorDir(inputsDir, provided, error) ||
       (ranked && llvm::sys::fs::is_directory(inputsDir + rankDir) &&
        !readTensorDir(inputsDir + rankDir, own, error)))) {
    llvm::errs() << "error: " << error << "\n";
    return 1;
  }
  for (auto &[name, tensor] : own)
    provided[name] = tensor;
  bindPositionalTensors(provided, graphInputNames(func));
  FailureOr<SmallVector<Tensor>> arguments = bindArguments(func, provided);
  if (failed(arguments))
    return 1;
  FailureOr<SmallVector<Tensor>> results =
      interpretFunction(func, std::move(*arguments), comm);
  if (failed(results))
    return 1;

  std::string outDir = outputsDir.empty() ? "" : outputsDir + rankDir;
  if (!outDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(outDir)) {
      llvm::errs() << "error: cannot create '" << outDir
                   << "': " << ec.message() << "\n";
      return 1;
    }
  }
  for (auto [i, result] : llvm::enumerate(*results)) {
    std::string name = getResultName(func, i);
    std::string line;
    llvm::raw_string_ostream os(line);
    if (ranked)
      os << "[rank " << comm->rank() << "] ";
    printSummary(os, name, result);
    llvm::outs() << line;
    if (!outDir.empty() &&
        !writeNpy(outDir + "/" + encodeFileName(name) + ".npy", result,
                  error)) {
      llvm::errs() << "error: " << error << "\n";
      return 1;
    }
  }
  llvm::outs().flush();
  return 0;
}

/// Replaces this process with dtc-launch (installed beside dtc-run) on the
/// same arguments: a compiled program runs without LLVM or MLIR. Returns
/// only on failure.
static int startLauncher(int argc, char **argv) {
  std::string self = llvm::sys::fs::getMainExecutable(
      argv[0], reinterpret_cast<void *>(&startLauncher));
  llvm::SmallString<256> launcher(llvm::sys::path::parent_path(self));
  llvm::sys::path::append(launcher, "dtc-launch");
  std::vector<char *> args(argv, argv + argc);
  args[0] = launcher.data();
  args.push_back(nullptr);
  execv(launcher.c_str(), args.data());
  llvm::errs() << "error: cannot start '" << launcher
               << "', which runs compiled programs: " << strerror(errno)
               << "\n";
  return 1;
}

/// The compiled program's directory among the arguments, unless they ask
/// for the reference engine: the first that holds a program.txt.
static std::optional<std::string> compiledProgramIn(int argc, char **argv) {
  std::optional<std::string> found;
  for (int i = 1; i < argc; ++i) {
    StringRef arg = argv[i];
    if (arg == "--engine=reference" || arg == "-engine=reference" ||
        ((arg == "--engine" || arg == "-engine") && i + 1 < argc &&
         StringRef(argv[i + 1]) == "reference"))
      return std::nullopt;
    if (!found && llvm::sys::fs::exists(arg + "/program.txt"))
      found = arg.str();
  }
  return found;
}

int main(int argc, char **argv) {
  // A compiled program runs in dtc-launch, which parses its own options
  // (--threads among them, a name LLVM's options take here).
  if (compiledProgramIn(argc, argv))
    return startLauncher(argc, argv);
  llvm::InitLLVM init(argc, argv);
  // The training options are the runtime's (dtc-launch takes the same);
  // LLVM's parser sees the rest.
  RunOptions runOptions;
  std::vector<std::string> rest;
  if (std::string error = parseRunOptions(
          std::vector<std::string>(argv + 1, argv + argc), runOptions, rest);
      !error.empty()) {
    llvm::errs() << "error: " << error << "\n";
    return 1;
  }
  std::vector<const char *> clArgs{argv[0]};
  for (const std::string &arg : rest)
    clArgs.push_back(arg.c_str());
  // Only dtc-run's own options in --help, not LLVM's.
  llvm::cl::HideUnrelatedOptions({&runCat, &trainCat});
  llvm::cl::ParseCommandLineOptions(
      static_cast<int>(clArgs.size()), clArgs.data(),
      "dtc reference executor: runs a dtc function on the CPU\n\n"
      "  dtc-run MODULE.mlir --inputs DIR [--outputs DIR] [--function NAME]\n"
      "  dtc-run OUT (--data FILE | --batch DIR) --steps K [options]\n"
      "      (OUT written by dtc-compile: trains for K steps; when OUT holds\n"
      "      a compiled program, as dtc-compile writes by default (--target\n"
      "      cpu), dtc-run starts dtc-launch on it unless --engine\n"
      "      reference; see dtc-launch --help for its options, --threads N\n"
      "      among them)\n"
      "  mpirun -np N dtc-run ...\n"
      "      (a module with a dtc.mesh of N devices: one process per rank)\n");

  // The test dialect's ops (test/lib) run too, for the tests that show
  // what adding an op takes.
  DialectRegistry registry;
  test::registerTestDialect(registry);
  test::registerTestKernels();
  MLIRContext context(registry);
  context.loadDialect<mlir::dtc::DTCDialect, func::FuncDialect>();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  std::string error;
  bool training = llvm::sys::fs::is_directory(modulePath);
  if (engineName != "auto" && engineName != "reference" &&
      engineName != "cpu") {
    llvm::errs() << "error: unknown --engine '" << engineName
                 << "' (auto, reference, cpu)\n";
    return 1;
  }
  bool compiled =
      training && llvm::sys::fs::exists(modulePath + "/program.txt");
  if (engineName == "cpu" && !compiled) {
    llvm::errs() << "error: " << modulePath
                 << " holds no compiled program: compile with dtc-compile "
                    "--target cpu, or run --engine reference\n";
    return 1;
  }
  if (!tracePath.empty() && (!training || compiled)) {
    llvm::errs() << "error: --trace times a pipelined training step on the "
                    "reference executor (dtc-compile --mesh pp=P, which "
                    "targets it)\n";
    return 1;
  }
  if (checkArena) {
    llvm::errs() << "error: --check-arena checks a compiled program's "
                    "arena; the reference executor has none\n";
    return 1;
  }
  if (training)
    functionName = "train_step";
  std::string path = training ? modulePath + "/train_step.mlir" : modulePath;
  auto file = openInputFile(path, &error);
  if (!file) {
    llvm::errs() << "error: " << error << "\n";
    return 1;
  }
  StringRef text = file->getBuffer();
  sourceMgr.AddNewSourceBuffer(std::move(file), SMLoc());
  // A training step is verified only once its ABI version is known to be
  // this build's: a stale step fails on its version, with a message that
  // says so, rather than on the first attribute it spells differently.
  ParserConfig config(&context, /*verifyAfterParse=*/!training);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, config);
  if (!module) {
    if (std::string stale = checkStepABIVersion(declaredABIVersion(text), path);
        training && !stale.empty())
      llvm::errs() << "note: " << stale << "\n";
    return 1;
  }
  func::FuncOp func = findFunction(*module);
  if (!func)
    return 1;
  std::optional<TrainingStep> step;
  StepSignature signature;
  if (training) {
    if (!checkABIVersion(func, path) || failed(verify(*module)))
      return 1;
    FailureOr<TrainingStep> view = TrainingStep::get(func);
    FailureOr<StepSignature> described =
        succeeded(view) ? view->getSignature() : FailureOr<StepSignature>();
    if (failed(described))
      return 1;
    step = *view;
    signature = std::move(*described);
    if (signature.stage) {
      llvm::errs() << "error: " << path << " is pipeline stage "
                   << *signature.stage
                   << " of a step; dtc-run runs whole steps only\n";
      return 1;
    }
  }
  if (training)
    readCompiledDir(modulePath, runOptions);
  auto run = [&](Communicator *comm) {
    if (comm)
      comm->setCollectiveTimeout(runOptions.collectiveTimeout);
    if (!training)
      return runOnce(func, comm);
    ReferenceEngine engine(*step, signature, comm);
    if (tracePath.empty())
      return runTraining(signature, runOptions, engine, builtinValuesOf(*step),
                         readTensorDir, exportTrainedModel, comm);
    if (!comm || !getPipelineInfo(func)) {
      llvm::errs() << "error: --trace times the fragments of a pipelined "
                      "step (dtc-compile --mesh pp=P); "
                   << path << " has no pipeline stages\n";
      return 1;
    }
    engine.recordFragments();
    int status =
        runTraining(signature, runOptions, engine, builtinValuesOf(*step),
                    readTensorDir, exportTrainedModel, comm);
    if (status != 0)
      return status;
    std::string error =
        reportMeasuredPipeline(func, engine.lastFragments(), *comm, tracePath);
    if (!error.empty())
      llvm::errs() << "error: " << error << "\n";
    return error.empty() ? 0 : 1;
  };

  // A step on a mesh (or a module with a dtc.mesh) runs on the ranks
  // mpirun launched, one communicator over the mesh; a failing rank then
  // ends them all, since the others may be waiting in a collective.
  MeshShape mesh = signature.mesh;
  if (!training) {
    SmallVector<dtc::MeshOp> meshes(module->getOps<dtc::MeshOp>());
    if (meshes.size() > 1) {
      meshes[1].emitError("dtc-run supports one mesh per module");
      return 1;
    }
    for (dtc::MeshOp op : meshes)
      for (auto [axis, size] : llvm::zip(op.getAxes(), op.getSizes())) {
        mesh.axes.push_back(cast<StringAttr>(axis).str());
        mesh.sizes.push_back(size);
      }
  }
  if (mesh.axes.empty())
    return run(nullptr);
  return runOnMPIRanks(argc, argv, mesh, run);
}