//===- Checkpoint.h - a training run's state on disk ------------*- C++ -*-===//
//
// `dtc-run OUT --save DIR`, `--resume DIR` (docs/Checkpoint.md): every rank
// writes its own part of each parameter and state argument (master
// weights, optimizer state, step counter, loss scale) as .npy under
// DIR/step-NNNNNNNN/rank-R/, next to the step's signature (signature.txt,
// which runners read back; metadata.json, the same for people and tools)
// and state.txt (the step reached, the data order's seed). The directory
// is written as step-NNNNNNNN.partial and renamed once every rank has
// written its part, then DIR/latest names it: a half-written checkpoint is
// never taken for a whole one. A checkpoint resumes on the mesh and layout
// that wrote it by reading each rank's own files, bit for bit; on another
// (a different mesh, ZeRO stage or precision), each rank reads the
// elements of its new parts from the writers' parts, by both layouts.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_CHECKPOINT_H
#define DTC_RUNTIME_CHECKPOINT_H

#include "dtc/Runtime/StepSignature.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::dtc {

/// The format version of the checkpoints this build writes and reads.
inline constexpr int64_t kCheckpointVersion = 1;

/// Writes this rank's `arguments` (its parts, by index; inputs skipped)
/// after `step` steps into a new checkpoint under `dir`, with the data's
/// order (`dataSeed`) and length (`dataTokens`: -1 without --data). Collective:
/// every rank calls it. "" or what failed (on every rank).
std::string saveCheckpoint(const std::string &dir, int64_t step,
                           uint64_t dataSeed, int64_t dataTokens,
                           const StepSignature &signature,
                           const std::vector<Tensor> &arguments,
                           Communicator *comm);

struct Checkpoint {
  /// The step directory read, the steps done and the data order's seed.
  std::string path;
  int64_t step = 0;
  uint64_t dataSeed = 0;
  /// The tokens of the --data file it was trained on (-1: not recorded).
  int64_t dataTokens = -1;
  /// The signature of the step that wrote it.
  StepSignature signature;
};

/// Finds the checkpoint `dir` names (a step directory, or a directory
/// whose `latest` names one) and reads its description; "" or what is
/// wrong.
std::string openCheckpoint(const std::string &dir, Checkpoint &out);

/// "" if every part of the checkpoint is there, whole (the shape its
/// signature says); else which is not. Each of `ranks` ranks checks the
/// writers' parts of every `ranks`-th writer from `rank` on: a new layout
/// reads only some of them, but a damaged checkpoint is refused whole.
std::string verifyCheckpoint(const Checkpoint &checkpoint, int64_t rank,
                             int64_t ranks);

/// "" if the checkpoint holds the kinds of optimizer state this step's
/// optimizer keeps (moments, momentum buffers); else what differs.
std::string sameOptimizer(const Checkpoint &checkpoint,
                          const StepSignature &signature);

/// Whether the checkpoint's parts are this rank's arguments as they are:
/// the same mesh, and every parameter and state argument of the same name,
/// type, shape and layout.
bool sameLayout(const Checkpoint &checkpoint, const StepSignature &signature);

/// This rank's part of each non-input argument of `signature`, as the
/// writing rank `rank` (the same layout) saved it; "" or what is wrong
/// (a missing or truncated file, named).
std::string readOwnParts(const Checkpoint &checkpoint,
                         const StepSignature &signature, int64_t rank,
                         std::vector<std::optional<Tensor>> &parts);

/// Rank `rank`'s part of each non-input argument of `signature` that the
/// checkpoint holds a value for (by name and role; a parameter's from its
/// master copy where the writer kept one, a master copy from the writer's
/// or else its parameter's), cut for this step's layout from the writers'
/// parts: their files are mapped and only the elements of this part read,
/// so no rank holds a whole tensor it does not need. "" or what is wrong.
std::string readPartsForLayout(const Checkpoint &checkpoint,
                               const StepSignature &signature, int64_t rank,
                               std::vector<std::optional<Tensor>> &parts);

} // namespace mlir::dtc

#endif // DTC_RUNTIME_CHECKPOINT_H
