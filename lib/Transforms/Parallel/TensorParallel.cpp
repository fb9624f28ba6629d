//===- TensorParallel.cpp - Megatron column/row parallel layers -----------===//
//
// Tensor parallelism (Shoeybi et al., Megatron-LM): in each block, the
// projections that read the normalized residual stream (attention q/k/v or
// a fused QKV, MLP up/gate) are split by their output features over `tp`
// (column-parallel), and the projection that reads what they made
// (attention output, MLP down) by its input features (row-parallel). The
// pass finds these pairs in the forward of the step, splits their weights
// (and the column biases), and leaves the rest to the partitioner
// (Partitioner.h): heads follow the split through reshapes, the
// row-parallel product is a partial sum all-reduced before the residual
// add, and the input gradient of the column-parallel projections is one in
// the backward.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Parallel/Passes.h"

#include "Partitioner.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_TENSORPARALLEL
#define GEN_PASS_DEF_SEQUENCEPARALLEL
#include "dtc/Transforms/Parallel/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// Where the residual stream is normalized: a norm op, or an op that scales
/// rows by per-row statistics (a decomposed RMSNorm divides by a [.., 1]).
bool isNormalization(Operation *op) {
  if (isa<LayerNormOp, RMSNormOp>(op))
    return true;
  if (op->getNumResults() != 1)
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || type.getRank() < 2 || type.getShape().back() == 1)
    return false;
  return llvm::any_of(op->getOperands(), [&](Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    return t.getRank() == type.getRank() && t.getShape().back() == 1;
  });
}

/// A projection x @ W of the forward with W a parameter.
struct Projection {
  MatmulOp op;
  WeightRead weight;
  int64_t inDim, outDim; // the parameter's dimensions
};

class MegatronMatcher {
public:
  MegatronMatcher(func::FuncOp func, int64_t tp) : func(func), tp(tp) {}

  /// The weight splits of every column/row pair found.
  SmallVector<SplitArgument> match() {
    llvm::DenseSet<Operation *> forward = forwardOps(func);
    llvm::MapVector<Operation *, Projection> projections;
    func.walk([&](MatmulOp op) {
      if (!forward.contains(op) || traceParam(op.getLhs()))
        return;
      std::optional<WeightRead> w = traceParam(op.getRhs());
      int64_t rank = op.getRhs().getType().getRank();
      // A mixture of experts' stacked weights [experts, in, out] are one
      // projection per expert.
      if (!w || rank > 3 || (rank == 3 && op.getLhs().getType().getRank() != 3))
        return;
      bool t = op.getTransposeRhs();
      projections[op] = {op, *w, w->paramDim[rank - (t ? 1 : 2)],
                         w->paramDim[rank - (t ? 2 : 1)]};
    });
    // A row-parallel projection reads what column-parallel ones made,
    // without a normalization in between.
    llvm::MapVector<Operation *, SmallVector<Operation *>> rows;
    for (auto &[op, projection] : projections) {
      llvm::SetVector<Operation *> producers;
      SmallVector<Value> work{projection.op.getLhs()};
      llvm::DenseSet<Value> seen;
      while (!work.empty()) {
        Value v = work.pop_back_val();
        Operation *def = v.getDefiningOp();
        if (!seen.insert(v).second || !def || !forward.contains(def))
          continue;
        if (projections.count(def)) {
          producers.insert(def);
          continue;
        }
        // A router's choices are no activation a projection made (the
        // experts' inputs are dispatched by them).
        if (!isNormalization(def) && !isa<TopKOp>(def))
          llvm::append_range(work, def->getOperands());
      }
      if (!producers.empty())
        rows[op] = producers.takeVector();
    }

    SmallVector<SplitArgument> seeds;
    for (auto &[row, producers] : rows) {
      // Columns whose heads do not divide stay replicated (grouped-query
      // attention's k and v on more ranks than they have heads); the
      // partitioner slices their heads where they meet split ones.
      SmallVector<SplitArgument> pair;
      for (Operation *column : producers) {
        if (rows.count(column))
          continue;
        Projection &p = projections[column];
        int64_t blocks = blocksOf(p.op.getResult());
        std::string why;
        if (!headsDivide(p.op.getResult(), blocks, why)) {
          column->emitWarning("tensor-parallel: ")
              << paramName(p) << " stays replicated: " << why;
          continue;
        }
        pair.push_back({p.weight.param.getArgNumber(), p.outDim, blocks});
        if (std::optional<BlockArgument> bias = biasOf(p.op))
          pair.push_back({bias->getArgNumber(),
                          cast<RankedTensorType>(bias->getType()).getRank() - 1,
                          blocks});
      }
      Projection &r = projections[row];
      if (pair.empty()) {
        row->emitWarning("tensor-parallel: ")
            << paramName(r) << " stays replicated: none of its inputs is "
            << "column-parallel";
        continue;
      }
      pair.push_back({r.weight.param.getArgNumber(), r.inDim, 1});
      llvm::append_range(seeds, pair);
    }
    vocabularyParallel(forward, projections, seeds);
    // A parameter read by several projections is split once.
    llvm::DenseSet<unsigned> once;
    llvm::erase_if(
        seeds, [&](SplitArgument &s) { return !once.insert(s.index).second; });
    return seeds;
  }

private:
  /// The LM head (the projection whose output features a log-softmax
  /// normalizes) and the token embeddings (tables indexed by a model
  /// input) split by vocabulary rows; the partitioner makes the
  /// cross-entropy and the lookups vocabulary-parallel.
  void vocabularyParallel(const llvm::DenseSet<Operation *> &forward,
                          llvm::MapVector<Operation *, Projection> &projections,
                          SmallVectorImpl<SplitArgument> &seeds) {
    auto divides = [&](Operation *op, BlockArgument table, int64_t dim) {
      int64_t rows = cast<RankedTensorType>(table.getType()).getDimSize(dim);
      if (rows % tp == 0)
        return true;
      op->emitWarning("tensor-parallel: '")
          << dtc::getArgumentName(func, table.getArgNumber())
          << "' stays replicated: its " << rows
          << " vocabulary rows do not divide over " << tp << " ranks";
      return false;
    };
    func.walk([&](Operation *op) {
      if (!forward.contains(op))
        return;
      if (auto softmax = dyn_cast<LogSoftmaxOp>(op)) {
        // Through casts and the -inf mask of a padded vocabulary.
        Value x = softmax.getInput();
        while (Operation *def = x.getDefiningOp()) {
          if (isa<CastOp>(def))
            x = def->getOperand(0);
          else if (isa<AddOp>(def) &&
                   def->getOperand(1).getDefiningOp<ConstantOp>())
            x = def->getOperand(0);
          else
            break;
        }
        auto head = projections.find(x.getDefiningOp());
        if (head == projections.end() ||
            static_cast<int64_t>(softmax.getDim()) !=
                softmax.getType().getRank() - 1)
          return;
        Projection &p = head->second;
        if (divides(op, p.weight.param, p.outDim))
          seeds.push_back({p.weight.param.getArgNumber(), p.outDim, 1});
      } else if (auto gather = dyn_cast<GatherOp>(op)) {
        std::optional<WeightRead> table = traceParam(gather.getInput());
        auto ids = dyn_cast<BlockArgument>(gather.getIndices());
        if (!table || gather.getDim() != 0 || table->paramDim[0] != 0 || !ids ||
            !func.getArgAttr(ids.getArgNumber(), kInputAttrName))
          return;
        if (divides(op, table->param, 0))
          seeds.push_back({table->param.getArgNumber(), 0, 1});
      }
    });
  }

  std::string paramName(const Projection &p) {
    return "'" + getArgumentName(func, p.weight.param.getArgNumber()) + "'";
  }

  /// Through a bias add, casts and views of its rows (the [tokens,
  /// features] of a Gemm as [batch, sequence, features]), the users of a
  /// projection's result.
  SmallVector<Operation *> usersOf(Value value) {
    SmallVector<Operation *> users;
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(value.getType()).getShape();
    for (Operation *user : value.getUsers()) {
      ArrayRef<int64_t> result =
          user->getNumResults() == 1
              ? cast<RankedTensorType>(user->getResult(0).getType()).getShape()
              : ArrayRef<int64_t>();
      if ((isa<AddOp, CastOp>(user) && result == shape) ||
          (isa<ReshapeOp>(user) && result.back() == shape.back()))
        llvm::append_range(users, usersOf(user->getResult(0)));
      users.push_back(user);
    }
    return users;
  }

  /// A fused projection is split into equal pieces (q, k, v) along its
  /// features: each piece is split by heads, so the weight in as many
  /// blocks.
  int64_t blocksOf(Value result) {
    for (Operation *user : usersOf(result)) {
      auto type = cast<RankedTensorType>(user->getOperand(0).getType());
      int64_t last = type.getRank() - 1;
      if (auto split = dyn_cast<SplitOp>(user);
          split && static_cast<int64_t>(split.getDim()) == last &&
          llvm::all_equal(split.getSizes()))
        return split.getSizes().size();
      // Or as slices (a chunk(2) of a fused gate and up projection).
      if (auto slice = dyn_cast<SliceOp>(user);
          slice && slice.getSizes()[last] < type.getDimSize(last) &&
          type.getDimSize(last) % slice.getSizes()[last] == 0 &&
          slice.getStarts()[last] % slice.getSizes()[last] == 0 &&
          slice.getStrides()[last] == 1)
        return type.getDimSize(last) / slice.getSizes()[last];
    }
    return 1;
  }

  /// Whether the heads the features are reshaped into divide over `tp`.
  bool headsDivide(Value result, int64_t blocks, std::string &why) {
    auto type = cast<RankedTensorType>(result.getType());
    int64_t features = type.getShape().back();
    if (features % (tp * blocks) != 0) {
      why = std::to_string(features) + " output features do not divide over " +
            std::to_string(tp) + " ranks";
      return false;
    }
    SmallVector<Value> pieces{result};
    for (Operation *user : usersOf(result))
      if (auto split = dyn_cast<SplitOp>(user))
        llvm::append_range(pieces, split.getResults());
    for (Value piece : pieces)
      for (Operation *user : usersOf(piece)) {
        auto reshape = dyn_cast<ReshapeOp>(user);
        if (!reshape)
          continue;
        ArrayRef<int64_t> in = reshape.getInput().getType().getShape();
        ArrayRef<int64_t> out = reshape.getType().getShape();
        int64_t j = in.size() - 1;
        if (out.size() > in.size() && out.take_front(j) == in.take_front(j) &&
            out[j] % tp != 0) {
          why = std::to_string(out[j]) + " heads do not divide over " +
                std::to_string(tp) + " ranks";
          return false;
        }
      }
    return true;
  }

  /// The parameter added to a projection's result: 1-d, or for stacked
  /// experts [experts, out] (both through reshapes).
  std::optional<BlockArgument> biasOf(MatmulOp op) {
    auto throughReshapes = [](Value value) {
      while (auto reshape = value.getDefiningOp<ReshapeOp>())
        value = reshape.getInput();
      return value;
    };
    int64_t rank = op.getRhs().getType().getRank();
    SmallVector<Value> results{op.getResult()};
    for (unsigned i = 0; i < results.size(); ++i)
      for (Operation *user : results[i].getUsers()) {
        if (isa<ReshapeOp>(user))
          results.push_back(user->getResult(0));
        if (!isa<AddOp>(user))
          continue;
        for (Value operand : user->getOperands())
          if (operand != results[i])
            if (std::optional<WeightRead> w =
                    traceParam(throughReshapes(operand));
                w && static_cast<int64_t>(w->paramDim.size()) == rank - 1)
              return w->param;
      }
    return std::nullopt;
  }

  func::FuncOp func;
  int64_t tp;
};

} // namespace

/// The sequence length: dimension 1 of the first model input, [batch,
/// sequence] token ids or [batch, sequence, features] embeddings.
FailureOr<int64_t> mlir::dtc::sequenceLengthOf(func::FuncOp func) {
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    auto type = cast<RankedTensorType>(func.getArgument(i).getType());
    if (func.getArgAttr(i, kInputAttrName) && type.getRank() >= 2)
      return type.getDimSize(1);
  }
  return func.emitError("sequence parallelism needs a model input of shape "
                        "[batch, sequence, ...]");
}

namespace {

/// The layouts a --sharding-spec file gives the parameters it names: a JSON
/// object from a regex (matched against whole parameter names) to per-
/// dimension axis lists, or to {"dims": ..., "blocks": ..., "pinned": ...}
/// (pinned by default: never gathered; unpinned, a starting layout that an
/// op may reshard, as the sharding conformance suite uses). A parameter it
/// names with no "tp" anywhere is replicated; one that several rules match
/// is an error (JSON objects are unordered). Replaces `seeds`' entries for
/// the parameters it names.
LogicalResult applyShardingSpec(func::FuncOp func, StringRef path, int64_t tp,
                                SmallVectorImpl<SplitArgument> &seeds) {
  auto fail = [&](const Twine &message) {
    return func.emitError("--sharding-spec ") << path << ": " << message;
  };
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return fail(buffer.getError().message());
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return fail(llvm::toString(json.takeError()));
  const llvm::json::Object *rules = json->getAsObject();
  if (!rules)
    return fail("expected an object from parameter-name regexes to layouts");
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    if (!func.getArgAttr(i, kParamAttrName))
      continue;
    std::string name = dtc::getArgumentName(func, i);
    const llvm::json::Object::value_type *rule = nullptr;
    for (const auto &entry : *rules) {
      llvm::Regex regex(("^(" + entry.first.str() + ")$"));
      std::string regexError;
      if (!regex.isValid(regexError))
        return fail("invalid regex '" + entry.first.str() + "': " + regexError);
      if (!regex.match(name))
        continue;
      if (rule)
        return fail("'" + name + "' matches both '" + rule->first.str() +
                    "' and '" + entry.first.str() + "'");
      rule = &entry;
    }
    if (rule) {
      StringRef pattern = rule->first;
      const llvm::json::Value &layout = rule->second;
      const llvm::json::Value *dims = &layout;
      const llvm::json::Array *blocks = nullptr;
      bool pinned = true;
      if (const llvm::json::Object *object = layout.getAsObject()) {
        dims = object->get("dims");
        blocks = object->getArray("blocks");
        if (const llvm::json::Value *flag = object->get("pinned")) {
          if (!flag->getAsBoolean())
            return fail("rule '" + pattern.str() +
                        "': \"pinned\" must be true or false");
          pinned = *flag->getAsBoolean();
        }
      }
      const llvm::json::Array *perDim = dims ? dims->getAsArray() : nullptr;
      auto type = cast<RankedTensorType>(func.getArgument(i).getType());
      if (!perDim || perDim->size() != static_cast<size_t>(type.getRank()) ||
          (blocks && blocks->size() != perDim->size()))
        return fail("rule '" + pattern.str() + "' gives '" + name +
                    "' a layout that is not one list of axes per dimension "
                    "(it has " +
                    std::to_string(type.getRank()) + " dimensions)");
      llvm::erase_if(seeds, [&](SplitArgument &s) { return s.index == i; });
      for (auto [d, axes] : llvm::enumerate(*perDim)) {
        const llvm::json::Array *list = axes.getAsArray();
        if (!list)
          return fail("rule '" + pattern.str() + "': dimension " +
                      std::to_string(d) + " is not a list of axes");
        for (const llvm::json::Value &axis : *list) {
          std::optional<StringRef> axisName = axis.getAsString();
          if (axisName != StringRef("tp"))
            return fail("rule '" + pattern.str() +
                        "': only the tp axis shards parameters here");
          int64_t n = blocks ? (*blocks)[d].getAsInteger().value_or(0) : 1;
          if (n < 1 || type.getDimSize(d) % (n * tp) != 0)
            return fail("'" + name + "' dimension " + std::to_string(d) + " (" +
                        std::to_string(type.getDimSize(d)) +
                        ") does not split into " + std::to_string(tp) +
                        " ranks" +
                        (n > 1 ? " in " + std::to_string(n) + " blocks" : ""));
          seeds.push_back({i, static_cast<int64_t>(d), n, pinned});
        }
      }
    }
  }
  return success();
}

} // namespace

FailureOr<SmallVector<SplitArgument>>
mlir::dtc::tensorParallelSeeds(func::FuncOp func, int64_t tp,
                               TPStrategy strategy, StringRef shardingSpec) {
  SmallVector<SplitArgument> seeds;
  if (strategy == TPStrategy::Megatron)
    seeds = MegatronMatcher(func, tp).match();
  if (!shardingSpec.empty() &&
      failed(applyShardingSpec(func, shardingSpec, tp, seeds)))
    return failure();
  return seeds;
}

FailureOr<SmallVector<TensorParallelSplit>>
mlir::dtc::getTensorParallelSplits(func::FuncOp func, int64_t tp,
                                   TPStrategy strategy,
                                   StringRef shardingSpec) {
  FailureOr<SmallVector<SplitArgument>> seeds =
      tensorParallelSeeds(func, tp, strategy, shardingSpec);
  if (failed(seeds))
    return failure();
  SmallVector<TensorParallelSplit> splits;
  for (const SplitArgument &seed : *seeds)
    splits.push_back({seed.index, seed.dim});
  return splits;
}

mlir::dtc::ResultSplits::ResultSplits(func::FuncOp func,
                                      ArrayRef<SplitArgument> seeds)
    : func(func) {
  for (const SplitArgument &seed : seeds) {
    byName[dtc::getArgumentName(func, seed.index)] = seed;
    if (std::optional<unsigned> next = getAliasingOutput(func, seed.index))
      byUpdate[*next] = seed;
  }
}

std::optional<SplitArgument>
mlir::dtc::ResultSplits::operator()(unsigned index) const {
  if (auto update = byUpdate.find(index); update != byUpdate.end())
    return update->second;
  auto grad = func.getResultAttrOfType<StringAttr>(index, kGradAttrName);
  auto it = grad ? byName.find(grad.getValue()) : byName.end();
  if (it == byName.end())
    return std::nullopt;
  return it->second;
}

namespace {

LogicalResult tensorParallel(ModuleOp module, int64_t size, TPStrategy strategy,
                             bool sequenceParallel, StringRef shardingSpec,
                             bool strict) {
  StringRef pass =
      sequenceParallel ? "dtc-sequence-parallel" : "dtc-tensor-parallel";
  if (size < 1)
    return module.emitError(pass) << " needs tp >= 1";
  if (size == 1)
    return success();
  FlatSymbolRefAttr meshRef = meshWithAxis(module, "tp", size);
  if (!meshRef)
    return failure();
  for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
    if (func.isExternal())
      continue;
    int64_t sequence = 0;
    if (sequenceParallel) {
      FailureOr<int64_t> length = sequenceLengthOf(func);
      if (failed(length))
        return failure();
      sequence = *length;
    }
    FailureOr<SmallVector<SplitArgument>> seeds =
        tensorParallelSeeds(func, size, strategy, shardingSpec);
    if (failed(seeds))
      return failure();
    // Without a layout for any parameter every rank computes the whole
    // step: say so, rather than pay tp ranks for one's work in silence.
    if (seeds->empty())
      func.emitWarning(pass)
          << ": no parameter gets a layout over 'tp' (the Megatron matcher "
             "found no projections it knows"
          << (shardingSpec.empty() ? "" : " and --sharding-spec names none")
          << "): every rank computes the whole step; give layouts with "
             "--sharding-spec";
    ResultSplits resultSplit(func, *seeds);
    if (failed(partitionOverAxis(func, size, meshRef, "tp", "tensor-parallel",
                                 *seeds, resultSplit, sequence, strict)))
      return failure();
    SignatureEditor signature(func);
    for (const SplitArgument &seed : *seeds)
      recordSharding(signature, seed.index, meshRef, seed.dim, "tp",
                     seed.blocks);
    signature.commit();
    setStepMesh(func, meshRef);
  }
  return success();
}

struct TensorParallelPass
    : public dtc::impl::TensorParallelBase<TensorParallelPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(tensorParallel(getOperation(), size, strategy,
                              /*sequenceParallel=*/false, shardingSpec,
                              strictSharding)))
      signalPassFailure();
  }
};

struct SequenceParallelPass
    : public dtc::impl::SequenceParallelBase<SequenceParallelPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(tensorParallel(getOperation(), size, strategy,
                              /*sequenceParallel=*/true, shardingSpec,
                              strictSharding)))
      signalPassFailure();
  }
};

} // namespace
