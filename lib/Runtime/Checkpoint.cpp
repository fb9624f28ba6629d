//===- Checkpoint.cpp - a training run's state on disk --------------------===//

#include "dtc/Runtime/Checkpoint.h"

#include "dtc/Runtime/Communicator.h"
#include "dtc/Runtime/TensorIO.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace mlir::dtc {

namespace {

std::string stepDirName(int64_t step) {
  char name[32];
  std::snprintf(name, sizeof(name), "step-%08lld",
                static_cast<long long>(step));
  return name;
}

std::string rankDir(int64_t rank) { return "rank-" + std::to_string(rank); }

std::string argFile(size_t index) {
  return "arg" + std::to_string(index) + ".npy";
}

bool writeFile(const fs::path &path, const std::string &text,
               std::string &error) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out)
    error = "cannot write '" + path.string() + "'";
  return static_cast<bool>(out);
}

std::optional<std::string> readFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Whether every rank succeeded (an error on any rank fails all).
bool allSucceeded(bool ok, Communicator *comm) {
  return comm ? !comm->anyRank(!ok) : ok;
}

/// Maps a writer's part, `shape` by its signature: "" or what is wrong.
std::string openPart(MappedArray &part, const std::string &path,
                     const Shape &shape) {
  std::string damaged = "the checkpoint is damaged: " + path + ": ";
  if (std::string why = part.open(path); !why.empty())
    return damaged + why;
  if (part.shape() != shape)
    return damaged + "it holds " + describe(part.shape()) + " of " +
           part.descr() + ", not the " + describe(shape) +
           " its signature says";
  return "";
}

/// How one dimension of a whole tensor is cut into a rank's part: split by
/// each of its axes in turn, the first with the dimension's blocks (as
/// StepBinding::partOf cuts it).
class DimensionSplits {
public:
  DimensionSplits(const TensorLayout &layout, size_t dim, int64_t partSize,
                  const MeshShape &mesh) {
    int64_t blocks = layout.blocksOf(dim);
    std::vector<std::string> axes = dim < layout.dims.size()
                                        ? layout.dims[dim]
                                        : std::vector<std::string>();
    whole = partSize;
    for (const std::string &axis : axes) {
      int64_t index = mesh.axisIndex(axis);
      splits.push_back({index, mesh.sizes[index], blocks, 0});
      whole *= mesh.sizes[index];
      blocks = 1;
    }
    int64_t parent = whole;
    for (Split &split : splits) {
      split.parent = parent;
      parent /= split.n;
    }
  }

  /// The whole tensor's size along the dimension (padded).
  int64_t size() const { return whole; }

  /// The whole index of index `local` of the part at mesh `coordinates`.
  int64_t toWhole(int64_t local, const std::vector<int64_t> &coords) const {
    for (size_t k = splits.size(); k-- > 0;) {
      const Split &s = splits[k];
      int64_t chunk = s.parent / (s.n * s.blocks);
      local = (local / chunk) * (s.parent / s.blocks) + coords[s.axis] * chunk +
              local % chunk;
    }
    return local;
  }

  /// The part index of whole index `index`, setting the coordinate of each
  /// split axis in `coords` to that of the rank holding it.
  int64_t toPart(int64_t index, std::vector<int64_t> &coords) const {
    for (const Split &s : splits) {
      int64_t chunk = s.parent / (s.n * s.blocks), block = s.parent / s.blocks;
      int64_t offset = index % block;
      coords[s.axis] = offset / chunk;
      index = (index / block) * chunk + offset % chunk;
    }
    return index;
  }

private:
  struct Split {
    int64_t axis, n, blocks, parent;
  };
  std::vector<Split> splits;
  int64_t whole = 0;
};

bool sameTensor(const StepArgument &a, const StepArgument &b) {
  return a.role == b.role && a.name == b.name && a.dtype == b.dtype &&
         a.shape == b.shape && a.layout.dims == b.layout.dims &&
         a.layout.blocks == b.layout.blocks &&
         a.layout.pipelineRanks == b.layout.pipelineRanks &&
         a.unpaddedRows == b.unpaddedRows &&
         a.layout.paddedDim == b.layout.paddedDim;
}

} // namespace

std::string saveCheckpoint(const std::string &dir, int64_t step,
                           uint64_t dataSeed, int64_t dataTokens,
                           const StepSignature &signature,
                           const std::vector<Tensor> &arguments,
                           Communicator *comm) {
  int64_t rank = comm ? comm->rank() : 0;
  fs::path root(dir), final = root / stepDirName(step),
                      partial = root / (stepDirName(step) + ".partial");
  std::error_code ec;
  std::string error;
  // Rank 0 makes a fresh partial directory; the others wait for it.
  if (rank == 0) {
    fs::remove_all(partial, ec);
    fs::create_directories(partial, ec);
    if (ec)
      error = "cannot create '" + partial.string() + "': " + ec.message();
  }
  if (!allSucceeded(error.empty(), comm))
    return error.empty() ? "another rank could not start the checkpoint"
                         : error;
  fs::path mine = partial / rankDir(rank);
  fs::create_directories(mine, ec);
  if (ec)
    error = "cannot create '" + mine.string() + "': " + ec.message();
  for (size_t i = 0; error.empty() && i < signature.arguments.size(); ++i)
    if (signature.arguments[i].role != ArgumentRole::Input &&
        signature.heldBy(signature.arguments[i].layout, rank))
      writeNpy((mine / argFile(i)).string(), arguments[i], error);
  if (rank == 0 && error.empty()) {
    std::string state = "dtc-checkpoint " + std::to_string(kCheckpointVersion) +
                        "\nstep " + std::to_string(step) + "\ndata_seed " +
                        std::to_string(dataSeed) + "\ndata_tokens " +
                        std::to_string(dataTokens) + "\n";
    std::string metadata =
        "{\"format\": \"dtc-checkpoint\", \"version\": " +
        std::to_string(kCheckpointVersion) +
        ", \"step\": " + std::to_string(step) +
        ", \"data_seed\": " + std::to_string(dataSeed) +
        ", \"data_tokens\": " + std::to_string(dataTokens) +
        ", \"files\": \"rank-R/argI.npy: rank R's part of argument I\", "
        "\"signature\": " +
        signature.toJSON() + "}\n";
    writeFile(partial / "state.txt", state, error) &&
        writeFile(partial / "signature.txt", signature.toText(), error) &&
        writeFile(partial / "metadata.json", metadata, error);
  }
  if (!allSucceeded(error.empty(), comm))
    return error.empty() ? "another rank could not write its part of the "
                           "checkpoint"
                         : error;
  // Whole: rename it into place, then point `latest` at it (each a rename,
  // which readers see happen at once).
  if (rank == 0) {
    fs::remove_all(final, ec);
    fs::rename(partial, final, ec);
    if (!ec && writeFile(root / "latest.partial",
                         final.filename().string() + "\n", error))
      fs::rename(root / "latest.partial", root / "latest", ec);
    if (ec && error.empty())
      error = "cannot complete the checkpoint '" + final.string() +
              "': " + ec.message();
  }
  if (!allSucceeded(error.empty(), comm))
    return error.empty() ? "the checkpoint could not be completed" : error;
  return "";
}

std::string openCheckpoint(const std::string &dir, Checkpoint &out) {
  fs::path path(dir);
  auto partial = [](const fs::path &p) {
    std::string name =
        p.filename().empty() ? p.parent_path().filename() : p.filename();
    return name.size() > 8 && name.compare(name.size() - 8, 8, ".partial") == 0;
  };
  if (partial(path))
    return "'" + dir + "' is a checkpoint that was never completed";
  if (!fs::exists(path / "state.txt")) {
    std::optional<std::string> latest = readFile(path / "latest");
    if (!latest)
      return "'" + dir +
             "' holds no checkpoint (neither a 'latest' file nor state.txt)";
    while (!latest->empty() && std::isspace(latest->back()))
      latest->pop_back();
    path /= *latest;
  }
  out.path = path.string();
  std::optional<std::string> state = readFile(path / "state.txt");
  std::optional<std::string> signature = readFile(path / "signature.txt");
  if (!state || !signature)
    return "the checkpoint '" + out.path +
           "' is incomplete: it lacks state.txt or signature.txt";
  std::istringstream lines(*state);
  std::string key;
  int64_t version = -1;
  bool hasStep = false;
  while (lines >> key) {
    if (key == "dtc-checkpoint")
      lines >> version;
    else if (key == "step")
      hasStep = static_cast<bool>(lines >> out.step);
    else if (key == "data_seed")
      lines >> out.dataSeed;
    else if (key == "data_tokens")
      lines >> out.dataTokens;
  }
  if (version != kCheckpointVersion)
    return "the checkpoint '" + out.path + "' is of format " +
           std::to_string(version) + "; this dtc reads format " +
           std::to_string(kCheckpointVersion);
  if (!hasStep || out.step < 0)
    return "the checkpoint '" + out.path + "' records no step";
  if (std::string error = StepSignature::fromText(*signature, out.signature);
      !error.empty())
    return "the checkpoint '" + out.path + "': " + error;
  return checkStepABIVersion(out.signature.abiVersion, out.path);
}

std::string verifyCheckpoint(const Checkpoint &checkpoint, int64_t rank,
                             int64_t ranks) {
  const StepSignature &from = checkpoint.signature;
  for (int64_t writer = rank; writer < from.mesh.numDevices(); writer += ranks)
    for (size_t i = 0; i < from.arguments.size(); ++i) {
      const StepArgument &arg = from.arguments[i];
      if (arg.role == ArgumentRole::Input || !from.heldBy(arg.layout, writer))
        continue;
      MappedArray part;
      std::string file =
          (fs::path(checkpoint.path) / rankDir(writer) / argFile(i)).string();
      if (std::string error = openPart(part, file, arg.shape); !error.empty())
        return error + " (" + arg.name + ")";
    }
  return "";
}

std::string sameOptimizer(const Checkpoint &checkpoint,
                          const StepSignature &signature) {
  // The kinds of per-parameter state an optimizer keeps (master copies and
  // the step counter aside: precision layouts differ in those).
  auto kinds = [](const StepSignature &step) {
    std::set<std::string> found;
    for (const StepArgument &arg : step.arguments)
      if (arg.role == ArgumentRole::State &&
          (arg.stateKind == StepStateKind::ExpAvg ||
           arg.stateKind == StepStateKind::ExpAvgSq ||
           arg.stateKind == StepStateKind::MomentumBuffer))
        found.insert(stepStateKindName(arg.stateKind));
    return found;
  };
  std::set<std::string> written = kinds(checkpoint.signature),
                        kept = kinds(signature);
  if (written == kept)
    return "";
  auto list = [](const std::set<std::string> &names) {
    std::string text;
    for (const std::string &name : names)
      text += (text.empty() ? "" : ", ") + name;
    return text.empty() ? std::string("none") : text;
  };
  return "the checkpoint '" + checkpoint.path + "' holds optimizer state " +
         list(written) + "; this step's optimizer keeps " + list(kept) +
         ": it was written by another optimizer (to start this one afresh "
         "from its parameters, export them with --export-checkpoint and "
         "give them to --init)";
}

bool sameLayout(const Checkpoint &checkpoint, const StepSignature &signature) {
  const StepSignature &from = checkpoint.signature;
  if (from.mesh.axes != signature.mesh.axes ||
      from.mesh.sizes != signature.mesh.sizes ||
      from.arguments.size() != signature.arguments.size())
    return false;
  for (size_t i = 0; i < signature.arguments.size(); ++i)
    if (signature.arguments[i].role != ArgumentRole::Input &&
        !sameTensor(from.arguments[i], signature.arguments[i]))
      return false;
  return true;
}

std::string readOwnParts(const Checkpoint &checkpoint,
                         const StepSignature &signature, int64_t rank,
                         std::vector<std::optional<Tensor>> &parts) {
  parts.assign(signature.arguments.size(), std::nullopt);
  for (size_t i = 0; i < signature.arguments.size(); ++i) {
    if (signature.arguments[i].role == ArgumentRole::Input ||
        !signature.heldBy(signature.arguments[i].layout, rank))
      continue;
    std::string error;
    std::string file =
        (fs::path(checkpoint.path) / rankDir(rank) / argFile(i)).string();
    std::optional<Tensor> part = readNpy(file, error);
    if (!part)
      return "the checkpoint is damaged: " + error;
    parts[i] = std::move(*part);
  }
  return "";
}

std::string readPartsForLayout(const Checkpoint &checkpoint,
                               const StepSignature &signature, int64_t rank,
                               std::vector<std::optional<Tensor>> &parts) {
  const StepSignature &from = checkpoint.signature;
  // Where a value comes from: a parameter from its master copy where the
  // writer kept one; a master copy from the writer's, else its parameter.
  auto sourceOf = [&](const StepArgument &arg) -> std::optional<size_t> {
    bool master = arg.role == ArgumentRole::State &&
                  arg.stateKind == StepStateKind::Master;
    const std::string &parameter = master ? arg.parameter : arg.name;
    if (arg.role == ArgumentRole::Parameter || master)
      if (std::optional<size_t> copy =
              from.stateArgument(StepStateKind::Master, parameter))
        return copy;
    for (size_t j = 0; j < from.arguments.size(); ++j) {
      const StepArgument &was = from.arguments[j];
      if (master ? was.role == ArgumentRole::Parameter && was.name == parameter
                 : was.role == arg.role && was.name == arg.name)
        return j;
    }
    return std::nullopt;
  };
  std::vector<int64_t> coords = signature.mesh.coordinates(rank);
  parts.assign(signature.arguments.size(), std::nullopt);
  for (size_t i = 0; i < signature.arguments.size(); ++i) {
    const StepArgument &arg = signature.arguments[i];
    std::optional<size_t> source =
        arg.role == ArgumentRole::Input || !signature.heldBy(arg.layout, rank)
            ? std::nullopt
            : sourceOf(arg);
    if (!source)
      continue;
    const StepArgument &was = from.arguments[*source];
    // The whole shapes (padding aside) must agree.
    std::vector<DimensionSplits> to, at;
    Shape wholeTo, wholeAt;
    for (size_t d = 0; d < arg.shape.size(); ++d) {
      to.emplace_back(arg.layout, d, arg.shape[d], signature.mesh);
      wholeTo.push_back(to.back().size());
    }
    for (size_t d = 0; d < was.shape.size(); ++d) {
      at.emplace_back(was.layout, d, was.shape[d], from.mesh);
      wholeAt.push_back(at.back().size());
    }
    if (arg.unpaddedRows &&
        static_cast<int64_t>(wholeTo.size()) > arg.layout.paddedDim)
      wholeTo[arg.layout.paddedDim] = *arg.unpaddedRows;
    if (was.unpaddedRows &&
        static_cast<int64_t>(wholeAt.size()) > was.layout.paddedDim)
      wholeAt[was.layout.paddedDim] = *was.unpaddedRows;
    if (wholeTo != wholeAt)
      return "the checkpoint's '" + was.name + "' is " +
             describe(wholeAt, was.dtype) + ", but this step's is " +
             describe(wholeTo, arg.dtype);
    // Each element of this rank's part: its whole index, then the writer
    // rank holding it and where (padding rows are zeros).
    std::map<int64_t, MappedArray> files;
    MappedArray *file = nullptr; // the last element's writer's
    int64_t fileRank = -1;
    Tensor part(arg.dtype, arg.shape);
    Shape strides = stridesOf(was.shape);
    std::vector<int64_t> index(arg.shape.size(), 0);
    std::vector<int64_t> writer(from.mesh.axes.size(), 0);
    // (Of a pipelined step's parameter, a pp coordinate that held it.)
    if (int64_t axis = from.mesh.axisIndex(kPipelineAxisName);
        axis >= 0 && !was.layout.pipelineRanks.empty())
      writer[axis] = was.layout.pipelineRanks.front();
    for (int64_t e = 0, n = part.numElements(); e < n; ++e) {
      int64_t offset = 0;
      bool padding = false;
      for (size_t d = 0; d < index.size(); ++d) {
        int64_t whole = to[d].toWhole(index[d], coords);
        padding |= whole >= wholeTo[d];
        offset += at[d].toPart(whole, writer) * strides[d];
      }
      if (!padding) {
        int64_t writerRank =
            from.mesh.axes.empty() ? 0 : from.mesh.rankAt(writer);
        if (writerRank != fileRank) {
          auto [entry, fresh] = files.try_emplace(writerRank);
          if (fresh)
            if (std::string error =
                    openPart(entry->second,
                             (fs::path(checkpoint.path) / rankDir(writerRank) /
                              argFile(*source))
                                 .string(),
                             was.shape);
                !error.empty())
              return error;
          file = &entry->second;
          fileRank = writerRank;
        }
        if (part.isFloat())
          part.floats()[e] = file->at(offset);
        else
          part.ints()[e] = file->intAt(offset);
      }
      for (size_t d = index.size(); d-- > 0;)
        if (++index[d] < arg.shape[d])
          break;
        else
          index[d] = 0;
    }
    part.roundToElementType();
    parts[i] = std::move(part);
  }
  return "";
}

} // namespace mlir::dtc
