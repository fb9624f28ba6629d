//===- SimulatedCommunicator.cpp - every rank in one process --------------===//

#include "dtc/Runtime/Simulated/SimulatedCommunicator.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace mlir::dtc {

/// What the ranks of one process share: a slot per rank for the bytes of
/// the collective in progress, and a barrier that an abort releases.
class SimulatedWorld {
public:
  explicit SimulatedWorld(int64_t ranks) : slots(ranks), targets(ranks) {}

  int64_t size() const { return static_cast<int64_t>(slots.size()); }

  /// Leaves `bytes` (and, for a send, its target) in `rank`'s slot, waits
  /// for every rank, runs `compute` on the slots, and waits again so that
  /// no slot changes before every rank has read what it needs. False
  /// after an abort (then `compute` may not have run).
  bool exchange(int64_t rank, const std::vector<char> &bytes, int64_t target,
                const std::function<void(const std::vector<std::vector<char>> &,
                                         const std::vector<int64_t> &)>
                    &compute) {
    {
      // (After an abort no slot changes: a rank still computing may read.)
      std::lock_guard<std::mutex> lock(mutex);
      if (aborted)
        return false;
      slots[rank] = bytes;
      targets[rank] = target;
    }
    if (!barrier())
      return false;
    compute(slots, targets);
    return barrier();
  }

  void abort() {
    std::lock_guard<std::mutex> lock(mutex);
    aborted = true;
    changed.notify_all();
  }

  /// Point to point: the messages from `from` to `to` are numbered in the
  /// order they are posted, and the receives in the order they are started
  /// (as MPI matches them); a receive takes the message of its number.
  void post(int64_t from, int64_t to, std::vector<char> bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    Pair &pair = pairs[{from, to}];
    pair.mail[pair.posted++] = std::move(bytes);
    changed.notify_all();
  }
  int64_t startReceive(int64_t from, int64_t to) {
    std::lock_guard<std::mutex> lock(mutex);
    return pairs[{from, to}].started++;
  }
  bool hasMail(int64_t from, int64_t to, int64_t sequence) {
    std::lock_guard<std::mutex> lock(mutex);
    return pairs[{from, to}].mail.count(sequence) > 0;
  }
  /// Waits for message `sequence` from `from` to `to`; false after an
  /// abort.
  bool take(int64_t from, int64_t to, int64_t sequence,
            std::vector<char> &bytes) {
    std::unique_lock<std::mutex> lock(mutex);
    auto &mail = pairs[{from, to}].mail;
    changed.wait(lock, [&] { return aborted || mail.count(sequence); });
    auto it = mail.find(sequence);
    if (it == mail.end())
      return false;
    bytes = std::move(it->second);
    mail.erase(it);
    return true;
  }

private:
  bool barrier() {
    std::unique_lock<std::mutex> lock(mutex);
    if (aborted)
      return false;
    int64_t generation = passed;
    if (++arrived == size()) {
      arrived = 0;
      ++passed;
      changed.notify_all();
      return true;
    }
    changed.wait(lock, [&] { return aborted || passed != generation; });
    return !aborted;
  }

  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::vector<char>> slots;
  std::vector<int64_t> targets;
  int64_t arrived = 0, passed = 0;
  bool aborted = false;
  struct Pair {
    int64_t posted = 0, started = 0;
    std::map<int64_t, std::vector<char>> mail;
  };
  std::map<std::pair<int64_t, int64_t>, Pair> pairs;
};

namespace {

/// Elementwise `kind` of `parts` (of one dtype, in order), rounded to the
/// element type as a device's would be.
std::vector<char> reduce(const std::vector<const std::vector<char> *> &parts,
                         DType dtype, ReduceKind kind) {
  int64_t n = parts.front()->size() / dtypeSize(dtype);
  Tensor acc = Tensor::fromBytes(dtype, {n}, parts.front()->data());
  for (size_t p = 1; p < parts.size(); ++p) {
    Tensor next = Tensor::fromBytes(dtype, {n}, parts[p]->data());
    auto combine = [&](auto &a, const auto &b) {
      for (int64_t i = 0; i < n; ++i)
        a[i] = kind == ReduceKind::Sum   ? a[i] + b[i]
               : kind == ReduceKind::Max ? std::max(a[i], b[i])
                                         : std::min(a[i], b[i]);
    };
    if (acc.isFloat())
      combine(acc.floats(), next.floats());
    else
      combine(acc.ints(), next.ints());
  }
  acc.roundToElementType();
  return acc.toBytes();
}

class SimulatedCommunicator : public Communicator {
public:
  SimulatedCommunicator(const MeshShape &mesh, int64_t rank,
                        std::shared_ptr<SimulatedWorld> world,
                        std::shared_ptr<std::vector<SimulatedCommunicator *>>
                            everyone)
      : Communicator(mesh), myRank(rank), world(std::move(world)),
        everyone(std::move(everyone)) {}

  int64_t rank() const override { return myRank; }
  int64_t worldSize() const override { return world->size(); }
  void abort() { world->abort(); }

protected:
  void allReduceBytes(void *data, int64_t elements, DType dtype,
                      const std::vector<std::string> &axes,
                      ReduceKind kind) override {
    size_t bytes = elements * dtypeSize(dtype);
    std::vector<char> out = run(data, bytes, axes, [&](const Parts &group) {
      return reduce(group, dtype, kind);
    });
    std::memcpy(data, out.data(), bytes);
  }

  std::unique_ptr<PendingCollective>
  allReduceBytesStart(void *data, int64_t elements, DType dtype,
                      const std::vector<std::string> &axes,
                      ReduceKind kind) override {
    allReduceBytes(data, elements, dtype, axes, kind);
    return std::make_unique<CompletedCollective>();
  }

  void allGatherBytes(const void *in, void *out, int64_t bytes,
                      const std::vector<std::string> &axes) override {
    std::vector<char> all = run(in, bytes, axes, [&](const Parts &group) {
      std::vector<char> out;
      for (const std::vector<char> *part : group)
        out.insert(out.end(), part->begin(), part->end());
      return out;
    });
    std::memcpy(out, all.data(), bytes * groupSize(axes));
  }

  void reduceScatterBytes(const void *in, void *out, int64_t elements,
                          DType dtype,
                          const std::vector<std::string> &axes) override {
    int64_t me = groupRank(axes);
    size_t block = elements * dtypeSize(dtype);
    std::vector<char> sum =
        run(in, block * groupSize(axes), axes, [&](const Parts &group) {
          std::vector<std::vector<char>> mine;
          for (const std::vector<char> *part : group)
            mine.emplace_back(part->begin() + me * block,
                              part->begin() + (me + 1) * block);
          Parts blocks;
          for (const std::vector<char> &b : mine)
            blocks.push_back(&b);
          return reduce(blocks, dtype, ReduceKind::Sum);
        });
    std::memcpy(out, sum.data(), block);
  }

  void allToAllBytes(const void *in, void *out, int64_t block,
                     const std::vector<std::string> &axes) override {
    int64_t me = groupRank(axes), n = groupSize(axes);
    std::vector<char> received =
        run(in, block * n, axes, [&](const Parts &group) {
          std::vector<char> out;
          for (const std::vector<char> *part : group)
            out.insert(out.end(), part->begin() + me * block,
                       part->begin() + (me + 1) * block);
          return out;
        });
    std::memcpy(out, received.data(), block * n);
  }

  bool hasAllToAllV() const override { return true; }

  void allToAllVBytes(const void *in, const std::vector<int64_t> &sendBytes,
                      void *out, const std::vector<int64_t> &receiveBytes,
                      const std::vector<std::string> &axes) override {
    // What a member posts: its counts, then its blocks.
    int64_t me = groupRank(axes), n = groupSize(axes);
    size_t header = n * sizeof(int64_t), total = 0;
    for (int64_t bytes : sendBytes)
      total += bytes;
    std::vector<char> posted(header + total);
    std::memcpy(posted.data(), sendBytes.data(), header);
    if (total)
      std::memcpy(posted.data() + header, in, total);
    std::vector<char> received =
        run(posted.data(), posted.size(), axes, [&](const Parts &group) {
          std::vector<char> out;
          for (const std::vector<char> *part : group) {
            std::vector<int64_t> counts(n);
            std::memcpy(counts.data(), part->data(), header);
            size_t at = header;
            for (int64_t r = 0; r < me; ++r)
              at += counts[r];
            out.insert(out.end(), part->begin() + at,
                       part->begin() + at + counts[me]);
          }
          return out;
        });
    size_t expected = 0;
    for (int64_t bytes : receiveBytes)
      expected += bytes;
    if (expected)
      std::memcpy(out, received.data(), expected);
  }

  void broadcastBytes(void *data, int64_t bytes,
                      const std::vector<std::string> &axes,
                      int64_t root) override {
    std::vector<char> out = run(
        data, bytes, axes, [&](const Parts &group) { return *group[root]; });
    std::memcpy(data, out.data(), bytes);
  }

  std::unique_ptr<PendingCollective>
  sendBytesStart(const void *data, int64_t bytes, int64_t to) override {
    const char *first = static_cast<const char *>(data);
    world->post(myRank, to, std::vector<char>(first, first + bytes));
    return std::make_unique<CompletedCollective>();
  }

  std::unique_ptr<PendingCollective>
  receiveBytesStart(void *data, int64_t bytes, int64_t from) override {
    class Receive : public PendingCollective {
    public:
      Receive(SimulatedWorld &world, int64_t from, int64_t to, void *data,
              int64_t bytes)
          : world(world), from(from), to(to),
            sequence(world.startReceive(from, to)), data(data), bytes(bytes) {}
      bool test() override { return world.hasMail(from, to, sequence); }
      void wait() override {
        std::vector<char> received;
        if (world.take(from, to, sequence, received))
          std::memcpy(data, received.data(),
                      std::min<int64_t>(bytes, received.size()));
      }

    private:
      SimulatedWorld &world;
      int64_t from, to, sequence;
      void *data;
      int64_t bytes;
    };
    return std::make_unique<Receive>(*world, from, myRank, data, bytes);
  }

  void sendRecvBytes(const void *in, void *out, int64_t bytes, int64_t to,
                     int64_t from) override {
    const char *first = static_cast<const char *>(in);
    std::vector<char> received(bytes, 0);
    world->exchange(myRank, std::vector<char>(first, first + bytes), to,
                    [&](const std::vector<std::vector<char>> &slots,
                        const std::vector<int64_t> &targets) {
                      if (targets[from] == myRank)
                        received = slots[from];
                    });
    std::memcpy(out, received.data(), bytes);
  }

private:
  using Parts = std::vector<const std::vector<char> *>;

  /// One collective over the group along `axes`: its members' `bytes`
  /// bytes at `data` in group order, through `compute`; zeros after an
  /// abort.
  std::vector<char>
  run(const void *data, size_t bytes, const std::vector<std::string> &axes,
      const std::function<std::vector<char>(const Parts &)> &compute) {
    int64_t id = groupId(axes);
    const char *first = static_cast<const char *>(data);
    // (An abort leaves zeros: room for the largest result, a gather's.)
    std::vector<char> out(bytes * groupSize(axes), 0);
    world->exchange(myRank, std::vector<char>(first, first + bytes), -1,
                    [&](const std::vector<std::vector<char>> &slots,
                        const std::vector<int64_t> &) {
                      Parts group(groupSize(axes));
                      for (SimulatedCommunicator *member : *everyone)
                        if (member->groupId(axes) == id)
                          group[member->groupRank(axes)] =
                              &slots[member->myRank];
                      out = compute(group);
                    });
    return out;
  }

  int64_t myRank;
  std::shared_ptr<SimulatedWorld> world;
  std::shared_ptr<std::vector<SimulatedCommunicator *>> everyone;
};

} // namespace

std::vector<std::unique_ptr<Communicator>>
createSimulatedCommunicators(const MeshShape &mesh) {
  int64_t n = mesh.numDevices();
  auto world = std::make_shared<SimulatedWorld>(n);
  auto everyone = std::make_shared<std::vector<SimulatedCommunicator *>>();
  std::vector<std::unique_ptr<Communicator>> comms;
  for (int64_t r = 0; r < n; ++r) {
    auto comm =
        std::make_unique<SimulatedCommunicator>(mesh, r, world, everyone);
    everyone->push_back(comm.get());
    comms.push_back(std::move(comm));
  }
  return comms;
}

void runSimulatedRanks(const MeshShape &mesh,
                       const std::function<void(Communicator &)> &body) {
  std::vector<std::unique_ptr<Communicator>> comms =
      createSimulatedCommunicators(mesh);
  std::vector<std::thread> threads;
  for (std::unique_ptr<Communicator> &comm : comms)
    threads.emplace_back([&body, &comm] { body(*comm); });
  for (std::thread &thread : threads)
    thread.join();
}

void abortSimulatedWorld(Communicator &comm) {
  static_cast<SimulatedCommunicator &>(comm).abort();
}

} // namespace mlir::dtc
