//===- Checkpoint.cpp - a training run's state on disk --------------------===//

#include "dtc/Runtime/Checkpoint.h"

#include "dtc/Runtime/Communicator.h"
#include "dtc/Runtime/TensorIO.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
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

/// Every rank's whole value from every rank's part (`parts`, by rank of
/// `mesh`), undoing `layout`'s splits as StepBinding's gather does: the
/// last split first, each by concatenating the parts of the ranks that
/// differ only along its axis.
Tensor assemble(std::vector<Tensor> parts, const TensorLayout &layout,
                const MeshShape &mesh) {
  int64_t ranks = static_cast<int64_t>(parts.size());
  for (size_t d = 0; d < layout.dims.size(); ++d) {
    const std::vector<std::string> &axes = layout.dims[d];
    for (size_t k = axes.size(); k-- > 0;) {
      int64_t axis = mesh.axisIndex(axes[k]);
      int64_t n = mesh.sizes[axis];
      std::vector<Tensor> next(ranks);
      for (int64_t r = 0; r < ranks; ++r) {
        std::vector<int64_t> at = mesh.coordinates(r);
        std::vector<Tensor> group;
        for (int64_t c = 0; c < n; ++c) {
          at[axis] = c;
          group.push_back(parts[mesh.rankAt(at)]);
        }
        next[r] = wholeFromChunks(concatenated(group, d), d, n,
                                  k == 0 ? layout.blocksOf(d) : 1);
      }
      parts = std::move(next);
    }
  }
  return parts.front();
}

bool sameTensor(const StepArgument &a, const StepArgument &b) {
  return a.role == b.role && a.name == b.name && a.dtype == b.dtype &&
         a.shape == b.shape && a.layout.dims == b.layout.dims &&
         a.layout.blocks == b.layout.blocks && a.unpaddedRows == b.unpaddedRows;
}

} // namespace

std::string saveCheckpoint(const std::string &dir, int64_t step,
                           uint64_t dataSeed, const StepSignature &signature,
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
    if (signature.arguments[i].role != ArgumentRole::Input)
      writeNpy((mine / argFile(i)).string(), arguments[i], error);
  if (rank == 0 && error.empty()) {
    std::string state = "dtc-checkpoint " + std::to_string(kCheckpointVersion) +
                        "\nstep " + std::to_string(step) + "\ndata_seed " +
                        std::to_string(dataSeed) + "\n";
    std::string metadata =
        "{\"format\": \"dtc-checkpoint\", \"version\": " +
        std::to_string(kCheckpointVersion) +
        ", \"step\": " + std::to_string(step) +
        ", \"data_seed\": " + std::to_string(dataSeed) +
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
    if (signature.arguments[i].role == ArgumentRole::Input)
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

std::string readWholeValues(const Checkpoint &checkpoint,
                            const StepSignature &signature,
                            std::vector<std::optional<Tensor>> &whole) {
  const StepSignature &from = checkpoint.signature;
  int64_t ranks = std::max<int64_t>(from.mesh.numDevices(), 1);
  // A parameter's value is its master copy's where the writer kept one.
  auto sourceOf = [&](const StepArgument &arg) -> std::optional<size_t> {
    if (arg.role == ArgumentRole::Parameter)
      if (std::optional<size_t> master =
              from.stateArgument(StepStateKind::Master, arg.name))
        return master;
    for (size_t j = 0; j < from.arguments.size(); ++j)
      if (from.arguments[j].role == arg.role &&
          from.arguments[j].name == arg.name)
        return j;
    return std::nullopt;
  };
  whole.assign(signature.arguments.size(), std::nullopt);
  for (size_t i = 0; i < signature.arguments.size(); ++i) {
    const StepArgument &arg = signature.arguments[i];
    std::optional<size_t> source =
        arg.role == ArgumentRole::Input ? std::nullopt : sourceOf(arg);
    if (!source)
      continue;
    const StepArgument &was = from.arguments[*source];
    std::vector<Tensor> parts;
    for (int64_t r = 0; r < ranks; ++r) {
      std::string error;
      std::optional<Tensor> part = readNpy(
          (fs::path(checkpoint.path) / rankDir(r) / argFile(*source)).string(),
          error);
      if (!part)
        return "the checkpoint is damaged: " + error;
      parts.push_back(std::move(*part));
    }
    Tensor value = assemble(std::move(parts), was.layout, from.mesh);
    if (was.unpaddedRows && value.rank() > 0)
      value = withRows(value, *was.unpaddedRows);
    whole[i] = std::move(value);
  }
  return "";
}

} // namespace mlir::dtc
