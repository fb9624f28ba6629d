//===- MPICommunicator.cpp - the MPI engine of the Communicator -----------===//
//
// One MPI communicator per group of axes (MPI_Comm_split of the world by the
// coordinates on the other axes), created on first use. bf16 and f16 travel
// as 16-bit words and reduce through custom MPI ops that compute in f32 and
// round back.
//
// Every collective is started non-blocking and waited for by polling with
// back-off (two cores run several ranks: a busy wait would starve them),
// with a limit: a rank that waits longer than the collective timeout asks
// the group's other ranks, over a control communicator, where they are
// (ranks waiting in a collective answer while they poll), then ends the
// job naming the collective and the ranks that never arrived; where all
// arrived but wait in other collectives, it gives the ranks those wait on
// one timeout more to name the one that hangs.
//
//===----------------------------------------------------------------------===//

#include "dtc/Runtime/MPI/MPICommunicator.h"

#include <mpi.h>

#include <map>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <thread>

namespace mlir::dtc {
namespace {

template <DType Half, ReduceKind Kind>
void reduceHalves(void *in, void *inout, int *len, MPI_Datatype *) {
  auto *a = static_cast<const uint16_t *>(in);
  auto *b = static_cast<uint16_t *>(inout);
  for (int i = 0; i < *len; ++i) {
    float x = floatFromHalfBits(a[i], Half), y = floatFromHalfBits(b[i], Half);
    float r = Kind == ReduceKind::Sum   ? x + y
              : Kind == ReduceKind::Max ? std::max(x, y)
                                        : std::min(x, y);
    b[i] = halfBitsFromFloat(r, Half);
  }
}

MPI_Datatype mpiType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return MPI_FLOAT;
  case DType::F64:
    return MPI_DOUBLE;
  case DType::BF16:
  case DType::F16:
    return MPI_UINT16_T;
  case DType::I64:
    return MPI_INT64_T;
  case DType::I32:
    return MPI_INT32_T;
  case DType::I16:
    return MPI_INT16_T;
  case DType::I8:
    return MPI_INT8_T;
  case DType::U8:
  case DType::Bool:
    return MPI_UINT8_T;
  }
  return MPI_BYTE;
}

/// Which collective a rank waits in: its kind, its group (the group key)
/// and its number among that group's collectives, the same on every member.
struct Waiting {
  const char *kind = "";
  /// The group's key and world ranks ("peers" and the two peers for a
  /// send_recv, whose sequence is -1).
  const std::string *group = nullptr;
  const std::vector<int64_t> *members = nullptr;
  int64_t sequence = -1;
  int64_t bytes = 0;
  std::string_view reason;
};

/// What a rank answers when asked where it is.
struct Whereabouts {
  int64_t query = 0, sequence = -1;
  char kind[16] = {}, group[48] = {};
};

enum ControlTag { kQueryTag = 1, kAnswerTag = 2 };

class MPICommunicator;

class MPIPending : public PendingCollective {
public:
  MPIPending(MPICommunicator &comm, MPI_Request request, Waiting waiting)
      : comm(comm), request(request), waiting(std::move(waiting)) {}
  bool test() override {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    return done;
  }
  void wait() override;

private:
  MPICommunicator &comm;
  MPI_Request request;
  Waiting waiting;
};

class MPICommunicator : public Communicator {
public:
  explicit MPICommunicator(const MeshShape &mesh) : Communicator(mesh) {
    MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
    MPI_Comm_size(MPI_COMM_WORLD, &worldCount);
    MPI_Op_create(reduceHalves<DType::BF16, ReduceKind::Sum>, 1,
                  &halfOps[0][0]);
    MPI_Op_create(reduceHalves<DType::BF16, ReduceKind::Max>, 1,
                  &halfOps[0][1]);
    MPI_Op_create(reduceHalves<DType::BF16, ReduceKind::Min>, 1,
                  &halfOps[0][2]);
    MPI_Op_create(reduceHalves<DType::F16, ReduceKind::Sum>, 1, &halfOps[1][0]);
    MPI_Op_create(reduceHalves<DType::F16, ReduceKind::Max>, 1, &halfOps[1][1]);
    MPI_Op_create(reduceHalves<DType::F16, ReduceKind::Min>, 1, &halfOps[1][2]);
    MPI_Comm_dup(MPI_COMM_WORLD, &control);
  }
  ~MPICommunicator() override {
    for (auto &entry : groups)
      MPI_Comm_free(&entry.second.comm);
    MPI_Comm_free(&control);
    for (auto &row : halfOps)
      for (MPI_Op &op : row)
        MPI_Op_free(&op);
  }

  int64_t rank() const override { return worldRank; }
  int64_t worldSize() const override { return worldCount; }

protected:
  void allReduceBytes(void *data, int64_t elements, DType dtype,
                      const std::vector<std::string> &axes,
                      ReduceKind kind) override {
    allReduceBytesStart(data, elements, dtype, axes, kind)->wait();
  }

  std::unique_ptr<PendingCollective>
  allReduceBytesStart(void *data, int64_t elements, DType dtype,
                      const std::vector<std::string> &axes,
                      ReduceKind kind) override {
    MPI_Request request;
    MPI_Iallreduce(MPI_IN_PLACE, data, checkedCount(elements), mpiType(dtype),
                   op(dtype, kind), group(axes), &request);
    return std::make_unique<MPIPending>(
        *this, request,
        waiting("all_reduce", axes, elements * dtypeSize(dtype)));
  }

  void allGatherBytes(const void *in, void *out, int64_t bytes,
                      const std::vector<std::string> &axes) override {
    allGatherBytesStart(in, out, bytes, axes)->wait();
  }

  std::unique_ptr<PendingCollective>
  allGatherBytesStart(const void *in, void *out, int64_t bytes,
                      const std::vector<std::string> &axes) override {
    int count = checkedCount(bytes);
    MPI_Request request;
    MPI_Iallgather(in, count, MPI_BYTE, out, count, MPI_BYTE, group(axes),
                   &request);
    return std::make_unique<MPIPending>(*this, request,
                                        waiting("all_gather", axes, bytes));
  }

  void reduceScatterBytes(const void *in, void *out, int64_t elements,
                          DType dtype,
                          const std::vector<std::string> &axes) override {
    reduceScatterBytesStart(in, out, elements, dtype, axes)->wait();
  }

  std::unique_ptr<PendingCollective>
  reduceScatterBytesStart(const void *in, void *out, int64_t elements,
                          DType dtype,
                          const std::vector<std::string> &axes) override {
    MPI_Request request;
    MPI_Ireduce_scatter_block(in, out, checkedCount(elements), mpiType(dtype),
                              op(dtype, ReduceKind::Sum), group(axes),
                              &request);
    return std::make_unique<MPIPending>(
        *this, request,
        waiting("reduce_scatter", axes, elements * dtypeSize(dtype)));
  }

  void allToAllBytes(const void *in, void *out, int64_t block,
                     const std::vector<std::string> &axes) override {
    int count = checkedCount(block);
    MPI_Request request;
    MPI_Ialltoall(in, count, MPI_BYTE, out, count, MPI_BYTE, group(axes),
                  &request);
    finish(request, waiting("all_to_all", axes, block));
  }

  bool hasAllToAllV() const override { return true; }

  void allToAllVBytes(const void *in, const std::vector<int64_t> &sendBytes,
                      void *out, const std::vector<int64_t> &receiveBytes,
                      const std::vector<std::string> &axes) override {
    size_t n = sendBytes.size();
    std::vector<int> sendCounts(n), sendAt(n), receiveCounts(n), receiveAt(n);
    int64_t sent = 0, received = 0;
    for (size_t r = 0; r < n; ++r) {
      sendCounts[r] = checkedCount(sendBytes[r]);
      sendAt[r] = checkedCount(sent);
      receiveCounts[r] = checkedCount(receiveBytes[r]);
      receiveAt[r] = checkedCount(received);
      sent += sendBytes[r];
      received += receiveBytes[r];
    }
    MPI_Request request;
    MPI_Ialltoallv(in, sendCounts.data(), sendAt.data(), MPI_BYTE, out,
                   receiveCounts.data(), receiveAt.data(), MPI_BYTE,
                   group(axes), &request);
    finish(request, waiting("all_to_all", axes, sent));
  }

  void broadcastBytes(void *data, int64_t bytes,
                      const std::vector<std::string> &axes,
                      int64_t root) override {
    broadcastBytesStart(data, bytes, axes, root)->wait();
  }

  std::unique_ptr<PendingCollective>
  broadcastBytesStart(void *data, int64_t bytes,
                      const std::vector<std::string> &axes,
                      int64_t root) override {
    MPI_Request request;
    MPI_Ibcast(data, checkedCount(bytes), MPI_BYTE, root, group(axes),
               &request);
    return std::make_unique<MPIPending>(*this, request,
                                        waiting("broadcast", axes, bytes));
  }

  // (Tag 1: a pipelined step's transfers, apart from send_recv's tag 0.)
  std::unique_ptr<PendingCollective>
  sendBytesStart(const void *data, int64_t bytes, int64_t to) override {
    MPI_Request request;
    MPI_Isend(data, checkedCount(bytes), MPI_BYTE, to, 1, MPI_COMM_WORLD,
              &request);
    return std::make_unique<MPIPending>(*this, request,
                                        peerWaiting("send", to, bytes));
  }

  std::unique_ptr<PendingCollective>
  receiveBytesStart(void *data, int64_t bytes, int64_t from) override {
    MPI_Request request;
    MPI_Irecv(data, checkedCount(bytes), MPI_BYTE, from, 1, MPI_COMM_WORLD,
              &request);
    return std::make_unique<MPIPending>(*this, request,
                                        peerWaiting("receive", from, bytes));
  }

  void sendRecvBytes(const void *in, void *out, int64_t bytes, int64_t to,
                     int64_t from) override {
    int count = checkedCount(bytes);
    MPI_Request requests[2];
    MPI_Irecv(out, count, MPI_BYTE, from, 0, MPI_COMM_WORLD, &requests[1]);
    MPI_Isend(in, count, MPI_BYTE, to, 0, MPI_COMM_WORLD, &requests[0]);
    static const std::string kPeers = "peers";
    std::vector<int64_t> members{to, from};
    Waiting peers{"send_recv", &kPeers, &members, -1, bytes, reason};
    finish(requests[0], peers);
    finish(requests[1], peers);
  }

public:
  /// Polls `request` until it is done: spinning briefly, then sleeping
  /// with back-off and answering the other ranks' queries; past the
  /// timeout, ends the job (naming who never arrived). Where every other
  /// member is waiting in another collective, it waits one timeout more
  /// first: the rank that waits on the one that hangs names it (Open MPI
  /// resumes a stopped rank as it ends the job, so who ends it first
  /// decides what is said).
  void finish(MPI_Request &request, const Waiting &what) {
    double askAfter = timeoutSeconds;
    pollWithBackOff(
        [&] {
          int done = 0;
          MPI_Test(&request, &done, MPI_STATUS_IGNORE);
          return done != 0;
        },
        [&](double waited) {
          answerQueries(what);
          if (timeoutSeconds <= 0 || waited <= askAfter)
            return false;
          bool last = askAfter > timeoutSeconds;
          askAfter = waited + timeoutSeconds;
          return askWhereabouts(request, what, last);
        });
  }

private:
  /// MPI counts are ints: a larger message is refused, not truncated.
  static int checkedCount(int64_t count) {
    if (count > std::numeric_limits<int>::max()) {
      std::fprintf(stderr,
                   "error: a collective of %lld elements is more than MPI's "
                   "int count allows\n",
                   static_cast<long long>(count));
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return static_cast<int>(count);
  }

  MPI_Op op(DType dtype, ReduceKind kind) {
    int k = static_cast<int>(kind);
    if (dtype == DType::BF16 || dtype == DType::F16)
      return halfOps[dtype == DType::BF16 ? 0 : 1][k];
    return kind == ReduceKind::Sum   ? MPI_SUM
           : kind == ReduceKind::Max ? MPI_MAX
                                     : MPI_MIN;
  }

  void prepareGroup(const std::vector<std::string> &axes) override {
    group(axes);
  }

  /// The communicator of the ranks that differ from this one only along
  /// `axes`, ordered by their coordinates on `axes`.
  MPI_Comm group(const std::vector<std::string> &axes) {
    std::string key = groupKey(axes);
    auto it = groups.find(key);
    if (it != groups.end())
      return it->second.comm;
    Group &made = groups[key];
    MPI_Comm_split(MPI_COMM_WORLD, groupId(axes), groupRank(axes), &made.comm);
    made.members = groupMembers(axes);
    return made.comm;
  }

  /// Starts the bookkeeping of this rank's next collective on `axes`.
  Waiting waiting(const char *kind, const std::vector<std::string> &axes,
                  int64_t bytes) {
    auto it = groups.find(groupKey(axes));
    return Waiting{
        kind,  &it->first, &it->second.members, it->second.sequence++,
        bytes, reason};
  }

  /// A point-to-point transfer's, with `peer`.
  Waiting peerWaiting(const char *kind, int64_t peer, int64_t bytes) {
    static const std::string kPeers = "peers";
    std::vector<int64_t> &members = peerMembers[peer];
    members = {worldRank, peer};
    return Waiting{kind, &kPeers, &members, -1, bytes, reason};
  }

  /// Tells every rank that asked where this one is: in `what`.
  void answerQueries(const Waiting &what) {
    for (;;) {
      int pending = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, kQueryTag, control, &pending, &status);
      if (!pending)
        return;
      int64_t query = 0;
      MPI_Recv(&query, 1, MPI_INT64_T, status.MPI_SOURCE, kQueryTag, control,
               MPI_STATUS_IGNORE);
      Whereabouts answer;
      answer.query = query;
      answer.sequence = what.sequence;
      std::snprintf(answer.kind, sizeof(answer.kind), "%s", what.kind);
      std::snprintf(answer.group, sizeof(answer.group), "%s",
                    what.group->c_str());
      MPI_Send(&answer, sizeof(answer), MPI_BYTE, status.MPI_SOURCE, kAnswerTag,
               control);
    }
  }

  /// Past the timeout: asks the other members where they are, gives them
  /// two seconds to answer, and ends the job naming those that never
  /// arrived, or, if every one answered and this is not the `last` try,
  /// returns to waiting. True if the collective completed meanwhile.
  bool askWhereabouts(MPI_Request &request, const Waiting &what, bool last) {
    int64_t query = ++queries;
    std::vector<int64_t> others;
    for (int64_t member : *what.members)
      if (member != worldRank &&
          std::find(others.begin(), others.end(), member) == others.end())
        others.push_back(member);
    // (Sent from the member, which outlives the sends even if the
    // collective completes meanwhile and this returns.)
    for (int64_t member : others) {
      MPI_Request sent;
      MPI_Isend(&queries, 1, MPI_INT64_T, member, kQueryTag, control, &sent);
      MPI_Request_free(&sent);
    }
    std::map<int64_t, Whereabouts> answers;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (std::chrono::steady_clock::now() < deadline &&
           answers.size() < others.size()) {
      int done = 0;
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (done)
        return true;
      answerQueries(what);
      int pending = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, kAnswerTag, control, &pending, &status);
      if (!pending) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      Whereabouts answer;
      MPI_Recv(&answer, sizeof(answer), MPI_BYTE, status.MPI_SOURCE, kAnswerTag,
               control, MPI_STATUS_IGNORE);
      if (answer.query == query)
        answers[status.MPI_SOURCE] = answer;
    }
    std::string absent, elsewhere;
    for (int64_t member : others) {
      auto it = answers.find(member);
      if (it == answers.end()) {
        absent += (absent.empty() ? "" : ", ") + std::to_string(member);
      } else if (it->second.group != *what.group ||
                 (what.sequence >= 0 && it->second.sequence != what.sequence)) {
        elsewhere += "; rank " + std::to_string(member) + " waits in " +
                     it->second.kind + " #" +
                     std::to_string(it->second.sequence) + " of its group";
      }
    }
    if (absent.empty() && !last)
      return false;
    std::string group = what.sequence < 0 ? *what.group : "axes " + *what.group;
    if (group.back() == ',')
      group.pop_back();
    if (absent.find(',') != std::string::npos)
      absent = "ranks " + absent + " never arrived";
    else if (!absent.empty())
      absent = "rank " + absent + " never arrived";
    std::string why =
        what.reason.empty() ? "" : " (" + std::string(what.reason) + ")";
    std::fprintf(stderr,
                 "error: rank %d: %s #%lld over %s (%lld bytes)%s%s%s waited "
                 "more than --collective-timeout %g s: %s%s; ending the job\n",
                 worldRank, what.kind, static_cast<long long>(what.sequence),
                 group.c_str(), static_cast<long long>(what.bytes),
                 activity.empty() ? "" : " in ", activity.c_str(), why.c_str(),
                 timeoutSeconds,
                 absent.empty() ? "every rank of its group arrived"
                                : absent.c_str(),
                 elsewhere.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1); // (MPI_Abort ended the job.)
  }

  int worldRank = 0, worldCount = 1;
  MPI_Op halfOps[2][3];
  /// A group's communicator, world ranks, and collectives so far.
  struct Group {
    MPI_Comm comm;
    std::vector<int64_t> members;
    int64_t sequence = 0;
  };
  std::map<std::string, Group> groups;
  /// Rank-to-rank questions and answers about where each rank waits.
  MPI_Comm control;
  /// The two ranks of each peer's transfers (what Waiting points to).
  std::map<int64_t, std::vector<int64_t>> peerMembers;
  int64_t queries = 0;
};

void MPIPending::wait() { comm.finish(request, waiting); }

} // namespace

std::unique_ptr<Communicator> createMPICommunicator(const MeshShape &mesh,
                                                    std::string &error) {
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  error = mesh.checkLaunchedRanks(size);
  if (!error.empty())
    return nullptr;
  return std::make_unique<MPICommunicator>(mesh);
}

int runOnMPIRanks(int &argc, char **&argv, const MeshShape &mesh,
                  const std::function<int(Communicator *)> &body) {
  // (A compiled program's collectives run on a thread of their own, one
  // thread calling MPI at a time: CollectiveWorker.)
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  std::string error;
  std::unique_ptr<Communicator> comm;
  if (provided < MPI_THREAD_SERIALIZED)
    error = "this MPI library does not let a thread other than the main "
            "one call it (MPI_THREAD_SERIALIZED), which the ranks' "
            "communication threads need";
  else
    comm = createMPICommunicator(mesh, error);
  if (!comm) {
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
      std::fprintf(stderr, "error: %s\n", error.c_str());
    MPI_Finalize();
    return 1;
  }
  int status = body(comm.get());
  if (status == kEveryRankFailed)
    status = 1;
  else if (status != 0 && comm->worldSize() > 1)
    MPI_Abort(MPI_COMM_WORLD, status);
  comm.reset();
  MPI_Finalize();
  return status;
}

} // namespace mlir::dtc
