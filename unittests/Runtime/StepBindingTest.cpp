//===- StepBindingTest.cpp - a step bound to tensors on a mesh ------------===//
//
// The binding every engine shares (StepBinding.h), on the four ranks of a
// dp=2 x tp=2 mesh simulated by threads: each rank's part of whole tensors
// (split, split in blocks, split over two axes, padded), master copies and
// state started right, a fake step's updates fed back, and whole tensors
// gathered again; and the errors a bad signature or value gets.
//
//===----------------------------------------------------------------------===//

#include "dtc/Runtime/Simulated/SimulatedCommunicator.h"

#include "dtc/Runtime/StepBinding.h"

#include "gtest/gtest.h"

using namespace mlir::dtc;

namespace {

Tensor floats(DType dtype, Shape shape, double first, double step = 1) {
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.floats()[i] = first + step * i;
  t.roundToElementType();
  return t;
}

Tensor ints(Shape shape) {
  Tensor t(DType::I64, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.ints()[i] = i;
  return t;
}

/// `t` + `delta`, elementwise, in its own type.
Tensor plus(const Tensor &t, double delta) {
  Tensor out = t;
  for (int64_t i = 0; i < out.numElements(); ++i) {
    if (out.isFloat())
      out.floats()[i] += delta;
    else
      out.ints()[i] += static_cast<int64_t>(delta);
  }
  out.roundToElementType();
  return out;
}

Tensor times(const Tensor &t, double factor) {
  Tensor out = t;
  for (double &x : out.floats())
    x *= factor;
  out.roundToElementType();
  return out;
}

std::string text(const Tensor &t) {
  std::string s = describe(t.shape(), t.dtype()) + ":";
  for (int64_t i = 0; i < t.numElements(); ++i)
    s += " " + std::to_string(t.at(i));
  return s;
}

#define EXPECT_TENSOR_EQ(a, b) EXPECT_EQ(text(a), text(b))

StepArgument argument(ArgumentRole role, std::string name, DType dtype,
                      Shape shape, TensorLayout layout = {},
                      std::optional<size_t> alias = std::nullopt) {
  StepArgument arg;
  arg.role = role;
  arg.name = std::move(name);
  arg.dtype = dtype;
  arg.shape = std::move(shape);
  arg.layout = std::move(layout);
  arg.aliasedResult = alias;
  return arg;
}

StepArgument state(StepStateKind kind, std::string parameter, DType dtype,
                   Shape shape, TensorLayout layout, size_t alias) {
  StepArgument arg = argument(ArgumentRole::State, "", dtype, std::move(shape),
                              std::move(layout), alias);
  arg.stateKind = kind;
  arg.parameter = parameter;
  arg.name = std::string(stepStateKindName(kind)) +
             (parameter.empty() ? "" : "/" + parameter);
  return arg;
}

StepResult result(ResultRole role, std::string name, DType dtype, Shape shape,
                  TensorLayout layout = {},
                  std::optional<size_t> updates = std::nullopt) {
  StepResult r;
  r.role = role;
  r.name = std::move(name);
  r.dtype = dtype;
  r.shape = std::move(shape);
  r.layout = std::move(layout);
  r.updatedArgument = updates;
  return r;
}

/// A step on dp=2 x tp=2 with every kind of layout the compiler writes.
/// Argument: whole shape -> this rank's.
///   0 input ids [4,3] -> [2,3], batch over dp
///   1 parameter qkv [6,2] -> [3,2], over tp in 3 blocks (fused QKV)
///   2 parameter emb [7,2] padded to 8 rows -> [2,2], over tp then dp
///   3 parameter w (bf16) [4] -> [2] over dp, with 4 its f32 master copy
///   5 exp_avg of qkv [6,2] -> [3,1], qkv's layout and dp on dimension 1
///   6 step, 7 frozen parameter (not donated), 8 loss_scale (a start value)
StepSignature meshStep() {
  StepSignature sig;
  sig.function = "train_step";
  sig.mesh = {{"dp", "tp"}, {2, 2}};
  TensorLayout batch{{{"dp"}, {}}, {}};
  TensorLayout qkv{{{"tp"}, {}}, {3, 1}};
  TensorLayout emb{{{"tp", "dp"}, {}}, {}};
  TensorLayout w{{{"dp"}}, {}};
  TensorLayout moments{{{"tp"}, {"dp"}}, {3, 1}};
  sig.arguments = {
      argument(ArgumentRole::Input, "ids", DType::I64, {2, 3}, batch),
      argument(ArgumentRole::Parameter, "qkv", DType::F32, {3, 2}, qkv, 4),
      argument(ArgumentRole::Parameter, "emb", DType::F32, {2, 2}, emb, 5),
      argument(ArgumentRole::Parameter, "w", DType::BF16, {2}, w, 6),
      state(StepStateKind::Master, "w", DType::F32, {2}, w, 7),
      state(StepStateKind::ExpAvg, "qkv", DType::F32, {3, 1}, moments, 8),
      state(StepStateKind::Step, "", DType::I64, {}, {}, 9),
      argument(ArgumentRole::Parameter, "frozen", DType::F32, {2}),
      state(StepStateKind::LossScale, "", DType::F32, {}, {}, 10)};
  sig.arguments[2].unpaddedRows = 7;
  sig.arguments[7].trainable = false;
  sig.results = {result(ResultRole::Loss, "loss", DType::F32, {}),
                 result(ResultRole::Gradient, "qkv", DType::F32, {3, 2}, qkv),
                 result(ResultRole::Gradient, "emb", DType::F32, {2, 2}, emb),
                 result(ResultRole::Gradient, "w", DType::BF16, {2}, w)};
  sig.results[2].unpaddedRows = 7;
  for (size_t arg : {1, 2, 3, 4, 5, 6, 8}) {
    const StepArgument &a = sig.arguments[arg];
    StepResult update =
        result(ResultRole::Update, a.name, a.dtype, a.shape, a.layout, arg);
    update.unpaddedRows = a.unpaddedRows;
    sig.results.push_back(update);
  }
  sig.rng = StepSignature::Rng{7, 6};
  sig.growthInterval = 2000;
  return sig;
}

/// The whole starting values of meshStep (none for the master copy and
/// the zero-started state).
std::vector<std::optional<Tensor>> meshStart() {
  std::vector<std::optional<Tensor>> start(9);
  start[0] = ints({4, 3});
  start[1] = floats(DType::F32, {6, 2}, 0);
  start[2] = floats(DType::F32, {7, 2}, 100);
  start[3] = floats(DType::F32, {4}, 0.1, 0.1); // f32: the step holds bf16
  start[7] = floats(DType::F32, {2}, 5);
  start[8] = floats(DType::F32, {}, 65536);
  return start;
}

/// A fake step of meshStep on one rank's parts: every donated value + 1,
/// gradients from the parameters.
std::vector<Tensor> fakeStep(const StepSignature &sig,
                             const std::vector<Tensor> &args) {
  std::vector<Tensor> results(sig.results.size());
  results[0] = Tensor(DType::F32, {});
  results[1] = times(args[1], 2);
  results[2] = times(args[2], 2);
  results[3] = args[3];
  for (size_t r = 4; r < sig.results.size(); ++r)
    results[r] = plus(args[*sig.results[r].updatedArgument], 1);
  return results;
}

/// What every rank saw, to check after the threads are done.
struct RankView {
  std::string bindError;
  std::vector<Tensor> parts, wholeBefore, wholeAfter, gradients;
  Tensor ids, parameterW;
};

TEST(StepBinding, CutsFeedsBackAndGathersOnAMesh) {
  StepSignature sig = meshStep();
  ASSERT_EQ(sig.check(), "");
  std::vector<RankView> views(4);
  runSimulatedRanks(sig.mesh, [&](Communicator &comm) {
    RankView &view = views[comm.rank()];
    StepBinding binding(sig, &comm);
    std::vector<Tensor> args;
    view.bindError = binding.bind(meshStart(), args);
    if (!view.bindError.empty())
      return; // every rank fails alike: no rank waits in a gather
    view.parts = args;
    for (size_t i = 0; i < args.size(); ++i)
      view.wholeBefore.push_back(binding.wholeArgument(i, args[i]));
    std::vector<Tensor> results = fakeStep(sig, args);
    for (size_t r = 1; r <= 3; ++r)
      view.gradients.push_back(binding.wholeResult(r, results[r]));
    args = binding.next(results);
    view.ids = args[0];
    for (size_t i = 0; i < args.size(); ++i)
      view.wholeAfter.push_back(binding.wholeArgument(i, args[i]));
    view.parameterW = binding.wholeParameter(3, args);
  });

  std::vector<std::optional<Tensor>> start = meshStart();
  Tensor w = *start[3];
  Tensor wBF16(DType::BF16, {4});
  wBF16.floats() = w.floats();
  wBF16.roundToElementType();
  for (int64_t rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const RankView &view = views[rank];
    ASSERT_EQ(view.bindError, "");
    int64_t dp = rank / 2, tp = rank % 2;
    // Each rank's parts, as the layouts say.
    EXPECT_TENSOR_EQ(view.parts[0], chunkOf(*start[0], 0, 2, dp));
    EXPECT_TENSOR_EQ(view.parts[1], chunkOf(*start[1], 0, 2, tp, 3));
    Tensor padded = floats(DType::F32, {8, 2}, 100);
    padded.floats()[14] = padded.floats()[15] = 0;
    EXPECT_TENSOR_EQ(view.parts[2],
                     chunkOf(chunkOf(padded, 0, 2, tp), 0, 2, dp));
    EXPECT_TENSOR_EQ(view.parts[3], chunkOf(wBF16, 0, 2, dp));
    // The master copy starts from the parameter's f32 value, not its
    // bf16 rounding; other state at zero or its own start.
    EXPECT_TENSOR_EQ(view.parts[4], chunkOf(w, 0, 2, dp));
    EXPECT_TENSOR_EQ(view.parts[5], Tensor(DType::F32, {3, 1}));
    EXPECT_TENSOR_EQ(view.parts[6], Tensor(DType::I64, {}));
    EXPECT_TENSOR_EQ(view.parts[8], *start[8]);

    // Gathered back: the wholes, padding stripped.
    ASSERT_EQ(view.wholeBefore.size(), 9u);
    EXPECT_TENSOR_EQ(view.wholeBefore[0], *start[0]);
    EXPECT_TENSOR_EQ(view.wholeBefore[1], *start[1]);
    EXPECT_TENSOR_EQ(view.wholeBefore[2], *start[2]);
    EXPECT_TENSOR_EQ(view.wholeBefore[3], wBF16);
    EXPECT_TENSOR_EQ(view.wholeBefore[5], Tensor(DType::F32, {6, 2}));
    EXPECT_TENSOR_EQ(view.wholeBefore[7], *start[7]);
    EXPECT_TENSOR_EQ(view.gradients[0], times(*start[1], 2));
    EXPECT_TENSOR_EQ(view.gradients[1], times(*start[2], 2));
    EXPECT_TENSOR_EQ(view.gradients[2], wBF16);

    // Fed back: every donated argument is its update; the input and the
    // frozen parameter keep their values.
    ASSERT_EQ(view.wholeAfter.size(), 9u);
    EXPECT_TENSOR_EQ(view.ids, view.parts[0]);
    EXPECT_TENSOR_EQ(view.wholeAfter[0], *start[0]);
    EXPECT_TENSOR_EQ(view.wholeAfter[1], plus(*start[1], 1));
    EXPECT_TENSOR_EQ(view.wholeAfter[2], plus(*start[2], 1));
    EXPECT_TENSOR_EQ(view.wholeAfter[4], plus(w, 1));
    EXPECT_TENSOR_EQ(view.wholeAfter[5], plus(Tensor(DType::F32, {6, 2}), 1));
    EXPECT_TENSOR_EQ(view.wholeAfter[6], plus(Tensor(DType::I64, {}), 1));
    EXPECT_TENSOR_EQ(view.wholeAfter[7], *start[7]);
    EXPECT_TENSOR_EQ(view.wholeAfter[8], plus(*start[8], 1));
    // A parameter kept in bf16 is dumped as its f32 master copy.
    EXPECT_TENSOR_EQ(view.parameterW, plus(w, 1));
  }
}

TEST(StepBinding, PipelineRanksHoldTheirOwn) {
  // pp=2 x tp=2: a parameter split over tp and held at pp coordinate 1
  // (its state and update with it), one held by both coordinates.
  StepSignature sig;
  sig.function = "train_step";
  sig.mesh = {{"pp", "tp"}, {2, 2}};
  TensorLayout late{{{"tp"}}, {}, {1}};
  sig.arguments = {
      argument(ArgumentRole::Parameter, "late", DType::F32, {2}, late, 1),
      state(StepStateKind::ExpAvg, "late", DType::F32, {2}, late, 2),
      argument(ArgumentRole::Parameter, "shared", DType::F32, {3})};
  sig.results = {
      result(ResultRole::Loss, "loss", DType::F32, {}),
      result(ResultRole::Update, "late", DType::F32, {2}, late, 0),
      result(ResultRole::Update, "exp_avg/late", DType::F32, {2}, late, 1)};
  ASSERT_EQ(sig.check(), "");
  std::vector<std::optional<Tensor>> start(3);
  start[0] = floats(DType::F32, {4}, 1);
  start[2] = floats(DType::F32, {3}, 10);
  std::vector<RankView> views(4);
  runSimulatedRanks(sig.mesh, [&](Communicator &comm) {
    RankView &view = views[comm.rank()];
    StepBinding binding(sig, &comm);
    std::vector<Tensor> args;
    view.bindError = binding.bind(start, args);
    if (!view.bindError.empty())
      return;
    view.parts = args;
    for (size_t i = 0; i < args.size(); ++i)
      view.wholeBefore.push_back(binding.wholeArgument(i, args[i]));
  });
  for (int64_t rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const RankView &view = views[rank];
    ASSERT_EQ(view.bindError, "");
    bool holds = rank / 2 == 1;
    EXPECT_EQ(sig.heldBy(late, rank), holds);
    // Only pp coordinate 1 binds the parameter and its state...
    EXPECT_EQ(view.parts[0].numElements() == 2, holds);
    EXPECT_EQ(view.parts[1].numElements() == 2, holds);
    if (holds) {
      EXPECT_TENSOR_EQ(view.parts[0], chunkOf(*start[0], 0, 2, rank % 2));
    }
    // ... and every rank gathers it whole from there.
    EXPECT_TENSOR_EQ(view.wholeBefore[0], *start[0]);
    EXPECT_TENSOR_EQ(view.wholeBefore[1], Tensor(DType::F32, {4}));
    EXPECT_TENSOR_EQ(view.parts[2], *start[2]);
  }
}

TEST(StepBinding, PadsAndStripsOnOneDevice) {
  StepSignature sig;
  sig.function = "step";
  sig.arguments = {
      argument(ArgumentRole::Parameter, "emb", DType::F32, {8, 2}, {}, 1)};
  sig.arguments[0].unpaddedRows = 7;
  sig.results = {result(ResultRole::Loss, "loss", DType::F32, {}),
                 result(ResultRole::Update, "emb", DType::F32, {8, 2}, {}, 0)};
  sig.results[1].unpaddedRows = 7;
  StepBinding binding(sig, nullptr);
  std::vector<Tensor> args;
  Tensor emb = floats(DType::F32, {7, 2}, 1);
  ASSERT_EQ(binding.bind({emb}, args), "");
  Tensor padded = floats(DType::F32, {8, 2}, 1);
  padded.floats()[14] = padded.floats()[15] = 0;
  EXPECT_TENSOR_EQ(args[0], padded);
  // A padded whole binds as it is.
  ASSERT_EQ(binding.bind({padded}, args), "");
  EXPECT_TENSOR_EQ(args[0], padded);
  std::vector<Tensor> results{Tensor(DType::F32, {}), plus(padded, 1)};
  args = binding.next(results);
  EXPECT_TENSOR_EQ(binding.wholeArgument(0, args[0]), plus(emb, 1));
  EXPECT_TENSOR_EQ(binding.wholeResult(1, plus(padded, 2)), plus(emb, 2));
}

/// A one-device step: input x, parameter p (donated to result 1).
StepSignature simpleStep() {
  StepSignature sig;
  sig.function = "train_step";
  sig.arguments = {
      argument(ArgumentRole::Input, "x", DType::F32, {2}),
      argument(ArgumentRole::Parameter, "p", DType::F32, {3}, {}, 1)};
  sig.results = {result(ResultRole::Loss, "loss", DType::F32, {}),
                 result(ResultRole::Update, "p", DType::F32, {3}, {}, 1)};
  return sig;
}

std::string bindError(const StepSignature &sig,
                      std::vector<std::optional<Tensor>> start,
                      Communicator *comm = nullptr) {
  StepBinding binding(sig, comm);
  std::vector<Tensor> args;
  return binding.bind(start, args);
}

TEST(StepBinding, RefusesAStaleABIVersion) {
  EXPECT_EQ(checkStepABIVersion(kStepABIVersion, "OUT/train_step.mlir"), "");
  EXPECT_EQ(checkStepABIVersion(kStepABIVersion + 1, "OUT/train_step.mlir"),
            "OUT/train_step.mlir was compiled for step ABI version " +
                std::to_string(kStepABIVersion + 1) +
                ", but this build reads version " +
                std::to_string(kStepABIVersion) +
                ": recompile it with dtc-compile");
  EXPECT_EQ(checkStepABIVersion(std::nullopt, "OUT/train_step.mlir"),
            "OUT/train_step.mlir has no step ABI version (written by a "
            "dtc-compile older than step ABI version " +
                std::to_string(kStepABIVersion) +
                "): recompile it with dtc-compile");
  StepSignature sig = simpleStep();
  sig.abiVersion = 0;
  EXPECT_EQ(
      bindError(sig, {floats(DType::F32, {2}, 0), floats(DType::F32, {3}, 0)}),
      "the step 'train_step' was compiled for step ABI version 0, but "
      "this build reads version " +
          std::to_string(kStepABIVersion) + ": recompile it with dtc-compile");
}

TEST(StepBinding, NamesWhatIsMissingOrWrong) {
  StepSignature sig = simpleStep();
  Tensor x = floats(DType::F32, {2}, 0), p = floats(DType::F32, {3}, 0);
  EXPECT_EQ(bindError(sig, {std::nullopt, p}), "no tensor given for input 'x'");
  EXPECT_EQ(bindError(sig, {x, std::nullopt}),
            "no value for parameter 'p' (a step compiled with --shapes-only: "
            "give --init DIR or --init-random SEED)");
  EXPECT_EQ(bindError(sig, {x, floats(DType::F32, {4}, 0)}),
            "parameter 'p' has type 4xf32, but the step expects 3xf32");
  EXPECT_EQ(bindError(sig, {x, floats(DType::F64, {3}, 0)}),
            "parameter 'p' has type 3xf64, but the step expects 3xf32");
  EXPECT_EQ(bindError(sig, {x}),
            "the step takes 2 arguments; 1 starting values were given");

  // A master copy needs its parameter's value.
  StepSignature master = simpleStep();
  master.arguments.push_back(
      state(StepStateKind::Master, "p", DType::F32, {3}, {}, 2));
  master.arguments[1].dtype = master.results[1].dtype = DType::BF16;
  master.results.push_back(
      result(ResultRole::Update, "master/p", DType::F32, {3}, {}, 2));
  ASSERT_EQ(master.check(), "");
  EXPECT_EQ(bindError(master, {x, std::nullopt, std::nullopt}),
            "no value for parameter 'p', whose master copy 'master/p' starts "
            "from it (a step compiled with --shapes-only: give --init DIR or "
            "--init-random SEED)");

  // A step on a mesh needs a communicator of that mesh; a split needs
  // equal shares.
  StepSignature split = simpleStep();
  split.mesh = {{"dp"}, {2}};
  split.arguments[0].layout = TensorLayout{{{"dp"}}, {}};
  split.arguments[0].shape = {1};
  EXPECT_EQ(bindError(split, {x, p}),
            "the step runs on dp=2, but it is bound on one device");
  std::vector<std::string> errors(2);
  runSimulatedRanks(split.mesh, [&](Communicator &comm) {
    errors[comm.rank()] =
        bindError(split, {floats(DType::F32, {3}, 0), p}, &comm);
  });
  for (const std::string &error : errors)
    EXPECT_EQ(error, "input 'x' (3xf32) does not split into 2 equal shares "
                     "along dimension 0");
}

TEST(StepSignature, ChecksItsConsistency) {
  StepSignature sig = simpleStep();
  EXPECT_EQ(sig.check(), "");

  StepSignature noLoss = simpleStep();
  noLoss.loss = 2;
  EXPECT_EQ(noLoss.check(), "the loss is result 2 of 2");

  StepSignature oneWay = simpleStep();
  oneWay.results[1].updatedArgument.reset();
  EXPECT_EQ(oneWay.check(),
            "argument 1 ('p') aliases result 1, which does not update it");

  StepSignature otherType = simpleStep();
  otherType.results[1].dtype = DType::BF16;
  EXPECT_EQ(otherType.check(), "argument 1 ('p') (3xf32) aliases result 1 of "
                               "another type (3xbf16)");

  StepSignature orphan = simpleStep();
  orphan.arguments.push_back(
      state(StepStateKind::ExpAvg, "q", DType::F32, {3}, {}, 1));
  orphan.arguments.back().aliasedResult.reset();
  EXPECT_EQ(orphan.check(),
            "argument 2 ('exp_avg/q') is state of 'q', which is no parameter");

  StepSignature unnamed = simpleStep();
  unnamed.arguments.push_back(
      state(StepStateKind::Master, "", DType::F32, {3}, {}, 1));
  unnamed.arguments.back().aliasedResult.reset();
  EXPECT_EQ(unnamed.check(), "argument 2 ('master'): state 'master' belongs "
                             "to a parameter, which it does not name");

  StepSignature badAxis = simpleStep();
  badAxis.arguments[0].layout = TensorLayout{{{"tp"}}, {}};
  EXPECT_EQ(badAxis.check(),
            "argument 0 ('x') is split over 'tp', no axis of the mesh");

  StepSignature badRng = simpleStep();
  badRng.rng = StepSignature::Rng{1, 0};
  EXPECT_EQ(badRng.check(),
            "the RNG counter, argument 0, is not the step state");
}

TEST(StepSignature, WritesJSON) {
  StepSignature sig = simpleStep();
  sig.mesh = {{"dp"}, {2}};
  sig.arguments[0].layout = TensorLayout{{{"dp"}}, {}};
  sig.arguments[0].shape = {1};
  sig.arguments.push_back(
      state(StepStateKind::Step, "", DType::I64, {}, {}, 2));
  sig.results.push_back(
      result(ResultRole::Update, "step", DType::I64, {}, {}, 2));
  sig.rng = StepSignature::Rng{7, 2};
  EXPECT_EQ(
      sig.toJSON(),
      "{\"abi\": 1, \"function\": \"train_step\", \"loss\": 0, "
      "\"microbatches\": 1, \"mesh\": {\"dp\": 2}, \"rng\": {\"seed\": 7, "
      "\"counter\": 2}, \"arguments\": [{\"role\": \"input\", \"name\": "
      "\"x\", \"dtype\": \"f32\", \"shape\": [1], \"sharding\": {\"dims\": "
      "[[\"dp\"]]}, \"whole_shape\": [2]}, {\"role\": \"parameter\", "
      "\"name\": \"p\", "
      "\"trainable\": true, \"dtype\": \"f32\", \"shape\": [3], "
      "\"aliasing_output\": 1}, {\"role\": \"state\", \"kind\": \"step\", "
      "\"dtype\": \"i64\", \"shape\": [], \"aliasing_output\": 2}], "
      "\"results\": [{\"role\": \"loss\", \"dtype\": \"f32\", \"shape\": []}, "
      "{\"role\": \"update\", \"dtype\": \"f32\", \"shape\": [3], "
      "\"updates\": 1}, {\"role\": \"update\", \"dtype\": \"i64\", \"shape\": "
      "[], \"updates\": 2}]}");
  // Names are escaped.
  sig.function = "a\"b\\c\n";
  EXPECT_NE(sig.toJSON().find("\"function\": \"a\\\"b\\\\c\\u000a\""),
            std::string::npos);
}

TEST(StepSignature, TextFormRoundTrips) {
  // Everything the text form carries, names with spaces, '=' and '%'
  // included; the JSON form (another writer) must come back the same.
  StepSignature sig = simpleStep();
  sig.function = "train step=1%";
  sig.mesh = {{"dp", "tp"}, {2, 2}};
  sig.arguments[0].layout = TensorLayout{{{"dp", "tp"}}, {2}};
  sig.arguments[0].shape = {4};
  sig.arguments[1].name = "w 0=a%b";
  sig.arguments[1].unpaddedRows = 3;
  sig.arguments[1].trainable = false;
  sig.arguments.push_back(
      state(StepStateKind::ExpAvgSq, "w 0=a%b", DType::BF16, {3}, {}, 2));
  sig.results.push_back(
      result(ResultRole::Update, "", DType::BF16, {3}, {}, 2));
  sig.results.push_back(result(ResultRole::Gradient, "w 0=a%b", DType::F32, {3},
                               TensorLayout{{{}, {"tp"}}, {}}, std::nullopt));
  sig.results.back().shape = {3, 2};
  sig.results.back().layout.pipelineRanks = {0, 1};
  sig.growthInterval = 2000;
  ASSERT_EQ(sig.check(), "");
  StepSignature back;
  ASSERT_EQ(StepSignature::fromText(sig.toText(), back), "");
  EXPECT_EQ(back.toJSON(), sig.toJSON());
  EXPECT_EQ(back.toText(), sig.toText());

  EXPECT_EQ(StepSignature::fromText("abi 1\nstep 3\n", back),
            "line 2 of the step's description: unknown record 'step'");
  // Another ABI version is refused, as check() refuses it.
  std::string stale = sig.toText();
  stale.replace(0, stale.find('\n'), "abi 7");
  EXPECT_NE(StepSignature::fromText(stale, back).find("version 7"),
            std::string::npos);
}

} // namespace
