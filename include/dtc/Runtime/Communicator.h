//===- Communicator.h - collectives over a device mesh ----------*- C++ -*-===//
//
// The runtime's view of the devices: a mesh of named axes (`dp`, `tp`, ...)
// over the world of ranks, and collectives among the ranks that differ only
// along some of the axes. Ranks are laid out in mesh order with the last
// axis varying fastest, so the ranks of a `tp` group are neighbours.
//
// Two engines implement it, each in a library of its own so that only what
// runs collectives links MPI (or CUDA): MPI (MPI/MPICommunicator.h, host
// tensors, for the reference executor under mpirun) and NCCL
// (NCCL/NCCLCommunicator.h, GPU, bootstrapped over MPI). Both count their
// traffic per call by the nccl-tests bus-bytes convention, so that the
// compiler's report can be checked against what actually moved.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_COMMUNICATOR_H
#define DTC_RUNTIME_COMMUNICATOR_H

#include "dtc/Runtime/Tensor.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace mlir::dtc {

/// Named mesh axes and their sizes, in order.
struct MeshShape {
  std::vector<std::string> axes;
  std::vector<int64_t> sizes;

  int64_t numDevices() const;
  /// The index of `axis`, or -1.
  int64_t axisIndex(const std::string &axis) const;
  /// Coordinates of `rank` along every axis (the last axis fastest).
  std::vector<int64_t> coordinates(int64_t rank) const;
  /// The rank at `coordinates` (the inverse).
  int64_t rankAt(const std::vector<int64_t> &coordinates) const;
  /// Parses "dp=2,tp=2"; returns an error message, or "" on success.
  static std::string parse(const std::string &spec, MeshShape &mesh);
  /// Why `ranks` launched processes cannot run this mesh (how to launch
  /// it), or "" when they can: what every engine checks first.
  std::string checkLaunchedRanks(int64_t ranks) const;
};

enum class ReduceKind { Sum, Max, Min };

enum class CollectiveKind {
  AllReduce,
  AllGather,
  ReduceScatter,
  AllToAll,
  Broadcast,
  SendRecv
};
const char *collectiveName(CollectiveKind kind);

/// What a rank's work returns when every rank fails at the same point (a
/// non-finite loss, which all ranks share), as opposed to 1 for a failure
/// of its own: the ranks then end normally rather than abort the job.
inline constexpr int kEveryRankFailed = 2;

/// Chunk `r` of `n` equal chunks of `tensor` along `dim` (`n` divides it):
/// what a split over `n` ranks leaves rank `r`. With `blocks`, `dim` is
/// first cut into that many equal blocks and the result holds chunk `r` of
/// each, in block order (a #dtc.sharding with blocks); negative `blocks`
/// (-b) mirror the odd-numbered of b blocks, which give chunk n - 1 - r
/// (-2: context parallelism's zigzag, chunks r and 2n - 1 - r of 2n).
Tensor chunkOf(const Tensor &tensor, int64_t dim, int64_t n, int64_t r,
               int64_t blocks = 1);
/// The same on raw buffers (positive `blocks`): chunk `r` of `in` (a tensor
/// of `shape` and `dtype`) written to `out`.
void chunkOf(const void *in, void *out, DType dtype, const Shape &shape,
             int64_t dim, int64_t n, int64_t r, int64_t blocks = 1);
/// The concatenation along `dim` of `parts` (of one shape), in order: what
/// an all-gather of them returns.
Tensor concatenated(const std::vector<Tensor> &parts, int64_t dim);
/// The inverse: the whole tensor from `gathered`, the rank-order
/// concatenation along `dim` (an all-gather) of the `n` ranks' chunkOf.
Tensor wholeFromChunks(const Tensor &gathered, int64_t dim, int64_t n,
                       int64_t blocks = 1);

/// Traffic of one kind of collective, as nccl-tests counts bus bytes:
/// all-reduce 2(n-1)/n * S, all-gather and reduce-scatter (n-1)/n * S (S the
/// larger of input and output), all-to-all (n-1)/n * S, broadcast and
/// point-to-point S.
struct CollectiveCount {
  int64_t calls = 0;
  double busBytes = 0;
};

/// A handle of an asynchronous collective; `wait` completes it.
class PendingCollective {
public:
  virtual ~PendingCollective();
  /// Progresses the collective; whether it is done (then `wait` returns at
  /// once). Engines without asynchronous progress (Open MPI's default)
  /// move data only inside such calls.
  virtual bool test() = 0;
  /// Blocks until the collective is done and its result written.
  virtual void wait() = 0;
};

/// The handle of a collective done before its start returned (an engine
/// without non-blocking collectives, or a call that could not be one).
class CompletedCollective : public PendingCollective {
public:
  bool test() override { return true; }
  void wait() override {}
};

class Communicator {
public:
  virtual ~Communicator();

  const MeshShape &mesh() const { return meshShape; }
  virtual int64_t rank() const = 0;
  virtual int64_t worldSize() const = 0;

  /// The group of ranks that differ from this one only along `axes`: its
  /// size and this rank's index in it (row-major over `axes` in mesh order).
  int64_t groupSize(const std::vector<std::string> &axes) const;
  int64_t groupRank(const std::vector<std::string> &axes) const;

  // The collectives. `axes` name the group; tensors are host tensors of
  // the same type on every rank of the group. Each call counts its traffic.

  /// Reduces `tensor` elementwise over the group, in place.
  void allReduce(Tensor &tensor, const std::vector<std::string> &axes,
                 ReduceKind kind);
  /// Concatenates the group's tensors along `dim`, in group order.
  Tensor allGather(const Tensor &tensor, const std::vector<std::string> &axes,
                   int64_t dim);
  /// Sums over the group and keeps this rank's chunk along `dim`.
  Tensor reduceScatter(const Tensor &tensor,
                       const std::vector<std::string> &axes, int64_t dim);
  /// Splits along `splitDim`, sends chunk r to group rank r, and
  /// concatenates what arrives along `concatDim`. With a `rowsDim` (not -1)
  /// and an engine that has all-to-all-v, each chunk's slices along the
  /// dimensions before `rowsDim` send their rows along it only up to the
  /// last non-zero one (the counts exchanged first, the rest arriving as
  /// zeros): the same result, and only those bytes counted.
  Tensor allToAll(const Tensor &tensor, const std::vector<std::string> &axes,
                  int64_t splitDim, int64_t concatDim, int64_t rowsDim = -1);
  /// Copies group rank `root`'s tensor to the others, in place.
  void broadcast(Tensor &tensor, const std::vector<std::string> &axes,
                 int64_t root);
  /// Makes the group along `axes` ready now. Where making one is collective
  /// over every rank (MPI_Comm_split), every rank calls this for the same
  /// groups in the same order: a pipelined step, whose stages run different
  /// collectives, prepares all of its groups before it starts.
  virtual void prepareGroup(const std::vector<std::string> &axes) {}

  /// Sends `tensor` to world rank `to` and receives one of the same type
  /// from world rank `from` (the same peer by default).
  Tensor sendRecv(const Tensor &tensor, int64_t to, int64_t from);
  Tensor sendRecv(const Tensor &tensor, int64_t peer) {
    return sendRecv(tensor, peer, peer);
  }

  // The same collectives on raw buffers of the tensor's own element type
  // (what compiled steps run on): `shape` is this rank's operand's, `in`
  // holds it and `out` receives the result, the two not overlapping.

  /// Reduces `elements` elements at `data` over the group, in place.
  void allReduce(void *data, DType dtype, int64_t elements,
                 const std::vector<std::string> &axes, ReduceKind kind);
  /// Starts that all-reduce and returns at once: `data` must stay untouched
  /// until the handle is done.
  std::unique_ptr<PendingCollective>
  allReduceStart(void *data, DType dtype, int64_t elements,
                 const std::vector<std::string> &axes, ReduceKind kind);
  void allGather(const void *in, void *out, DType dtype, const Shape &shape,
                 const std::vector<std::string> &axes, int64_t dim);
  void reduceScatter(const void *in, void *out, DType dtype, const Shape &shape,
                     const std::vector<std::string> &axes, int64_t dim);
  /// Start that all-gather or reduce-scatter and return at once: `in` must
  /// stay untouched and `out` unread until the handle is done. Only a split
  /// along the outermost dimension (but for size-1 ones), which needs no
  /// rearranging, is started; another is done before the call returns.
  std::unique_ptr<PendingCollective>
  allGatherStart(const void *in, void *out, DType dtype, const Shape &shape,
                 const std::vector<std::string> &axes, int64_t dim);
  std::unique_ptr<PendingCollective>
  reduceScatterStart(const void *in, void *out, DType dtype, const Shape &shape,
                     const std::vector<std::string> &axes, int64_t dim);
  void allToAll(const void *in, void *out, DType dtype, const Shape &shape,
                const std::vector<std::string> &axes, int64_t splitDim,
                int64_t concatDim, int64_t rowsDim = -1);
  void broadcast(void *data, int64_t bytes,
                 const std::vector<std::string> &axes, int64_t root);
  /// Starts that broadcast and returns at once: `data` must stay untouched
  /// (off the root: unread) until the handle is done.
  std::unique_ptr<PendingCollective>
  broadcastStart(void *data, int64_t bytes,
                 const std::vector<std::string> &axes, int64_t root);
  void sendRecv(const void *in, void *out, int64_t bytes, int64_t to,
                int64_t from);
  /// Point to point (a pipelined step's transfers between stages): start
  /// sending `bytes` bytes at `data` to world rank `to`, or receiving them
  /// from world rank `from` into `data`, and return at once; `data` stays
  /// untouched (unread) until the handle is done. Between two ranks,
  /// transfers arrive in the order they were started. The sender counts
  /// the bytes (as send_recv).
  std::unique_ptr<PendingCollective> sendStart(const void *data, int64_t bytes,
                                               int64_t to);
  std::unique_ptr<PendingCollective> receiveStart(void *data, int64_t bytes,
                                                  int64_t from);
  /// A broadcast from group rank `root` over `axes` to the group ranks
  /// `receivers` alone, point to point: the root starts a send to each, a
  /// receiver its receive into `data` (a rank that is neither starts
  /// nothing). Returns the handles to wait for.
  std::vector<std::unique_ptr<PendingCollective>>
  transferStart(void *data, int64_t bytes, const std::vector<std::string> &axes,
                int64_t root, const std::vector<int64_t> &receivers);

  const std::map<CollectiveKind, CollectiveCount> &counts() const {
    return traffic;
  }

  /// Whether `flag` holds on any rank of the mesh: how the runner's ranks
  /// agree (to stop, that a checkpoint was written). Not the step's
  /// traffic, so not counted.
  bool anyRank(bool flag);
  /// Every rank's `values` (one count on every rank), rank-major: how the
  /// runner gathers its figures. Not counted either.
  std::vector<double> everyRank(const std::vector<double> &values);
  /// `values` summed over the group along `axes`, in place. Not counted.
  void sumOver(std::vector<double> &values,
               const std::vector<std::string> &axes);

  /// How long a rank may wait in one collective before it ends the whole
  /// job, naming the collective and the ranks that never arrived (engines
  /// that can wait with a limit: MPI); 0 waits forever.
  void setCollectiveTimeout(double seconds) { timeoutSeconds = seconds; }
  /// What this rank is doing ("step 7"), and what the collectives that
  /// follow are for (the IR's `reason`; the text must outlive them), for
  /// that error to name.
  void setActivity(std::string what) {
    activity = std::move(what);
    reason = {};
  }
  void setReason(std::string_view why) { reason = why; }

  /// The world ranks of the group along `axes`, in group order.
  std::vector<int64_t> groupMembers(const std::vector<std::string> &axes) const;

protected:
  explicit Communicator(MeshShape mesh) : meshShape(std::move(mesh)) {}

  /// Which group along `axes` this rank belongs to: the index of its
  /// coordinates on the other axes (the same on every member, distinct
  /// between groups), as the engines' communicator splits want it.
  int64_t groupId(const std::vector<std::string> &axes) const;
  /// A name for the set `axes` whatever their order, to cache groups by.
  std::string groupKey(const std::vector<std::string> &axes) const;

  /// The engine's primitives, on contiguous buffers over a group.

  /// Reduces `elements` elements at `data` in place.
  virtual void allReduceBytes(void *data, int64_t elements, DType dtype,
                              const std::vector<std::string> &axes,
                              ReduceKind kind) = 0;
  virtual std::unique_ptr<PendingCollective>
  allReduceBytesStart(void *data, int64_t elements, DType dtype,
                      const std::vector<std::string> &axes,
                      ReduceKind kind) = 0;
  /// Writes the rank-major concatenation of every member's `bytes` bytes.
  virtual void allGatherBytes(const void *in, void *out, int64_t bytes,
                              const std::vector<std::string> &axes) = 0;
  /// Sums block r of every member's `in` (`groupSize` blocks of
  /// `elements` elements) into group rank r's `out`.
  virtual void reduceScatterBytes(const void *in, void *out, int64_t elements,
                                  DType dtype,
                                  const std::vector<std::string> &axes) = 0;
  /// Their non-blocking forms; by default done at once.
  virtual std::unique_ptr<PendingCollective>
  allGatherBytesStart(const void *in, void *out, int64_t bytes,
                      const std::vector<std::string> &axes);
  virtual std::unique_ptr<PendingCollective>
  reduceScatterBytesStart(const void *in, void *out, int64_t elements,
                          DType dtype, const std::vector<std::string> &axes);
  /// Block r of `in` (`groupSize` blocks of `block` bytes) to group rank r;
  /// the received blocks in rank order.
  virtual void allToAllBytes(const void *in, void *out, int64_t block,
                             const std::vector<std::string> &axes) = 0;
  /// Whether the engine has allToAllVBytes.
  virtual bool hasAllToAllV() const { return false; }
  /// `in` holds `sendBytes[r]` bytes for group rank r, one block after
  /// another; `out` receives `receiveBytes[r]` bytes from each, in rank
  /// order (every pair of counts agreeing).
  virtual void allToAllVBytes(const void *in,
                              const std::vector<int64_t> &sendBytes, void *out,
                              const std::vector<int64_t> &receiveBytes,
                              const std::vector<std::string> &axes);
  virtual void broadcastBytes(void *data, int64_t bytes,
                              const std::vector<std::string> &axes,
                              int64_t root) = 0;
  virtual std::unique_ptr<PendingCollective>
  broadcastBytesStart(void *data, int64_t bytes,
                      const std::vector<std::string> &axes, int64_t root);
  virtual void sendRecvBytes(const void *in, void *out, int64_t bytes,
                             int64_t to, int64_t from) = 0;
  /// By default: an engine without them (fatal).
  virtual std::unique_ptr<PendingCollective>
  sendBytesStart(const void *data, int64_t bytes, int64_t to);
  virtual std::unique_ptr<PendingCollective>
  receiveBytesStart(void *data, int64_t bytes, int64_t from);

  void count(CollectiveKind kind, double busBytes);

  /// allToAll's exchange of only the filled rows: `blocks` holds one block
  /// per group rank of `slices` x `rowsPerSlice` rows of `rowElements`
  /// elements, `out` receives as many.
  void exchangeFilledRows(const void *blocks, void *out, int64_t slices,
                          int64_t rowsPerSlice, int64_t rowElements,
                          DType dtype, const std::vector<std::string> &axes);

  /// Waits until `done()`: 200 polls at full speed, then between polls
  /// `idle(seconds waited)` (which may end the wait by returning true) and
  /// a nap doubling from 20 us to 0.5 ms, so that a waiting rank neither
  /// burns a core nor adds much latency.
  static void pollWithBackOff(const std::function<bool()> &done,
                              const std::function<bool(double)> &idle);

  double timeoutSeconds = 0;
  std::string activity;
  std::string_view reason;

private:
  MeshShape meshShape;
  std::map<CollectiveKind, CollectiveCount> traffic;
  /// Where operands are rearranged into the blocks collectives move (grown
  /// once, then reused: no allocation in a compiled step).
  std::vector<char> staging[4];
  /// exchangeFilledRows' row counts: sent and arriving.
  std::vector<int64_t> rowCounts[2];
};

} // namespace mlir::dtc

#endif // DTC_RUNTIME_COMMUNICATOR_H
