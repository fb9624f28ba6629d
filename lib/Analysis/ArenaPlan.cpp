//===- ArenaPlan.cpp - one static arena for a step's values ---------------===//

#include "dtc/Analysis/ArenaPlan.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>

using namespace mlir;
using namespace mlir::dtc;

static int64_t aligned(int64_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

static bool liveTogether(const LiveBuffer &a, const LiveBuffer &b) {
  return a.first <= b.last && b.first <= a.last;
}

/// Best fit in allocation order, as a heap allocator would place the
/// buffers: the same plan as the general placement's in that order, in
/// O(n log n). In allocation order the placed buffers a new one lives with
/// are those still live when it is made (they are all live together, so
/// they do not overlap): the holes between them are kept by size.
static std::pair<int64_t, std::vector<ArenaPlan::Slot>>
placeInAllocationOrder(ArrayRef<LiveBuffer> buffers) {
  std::vector<size_t> order(buffers.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  llvm::stable_sort(order, [&](size_t a, size_t b) {
    return buffers[a].first < buffers[b].first;
  });
  std::map<int64_t, int64_t> live;             // offset -> end of a live slot
  std::set<std::pair<int64_t, int64_t>> holes; // (bytes, offset)
  using Expiry = std::pair<size_t, int64_t>;   // (last, offset)
  std::priority_queue<Expiry, std::vector<Expiry>, std::greater<Expiry>>
      expiries;
  // The hole below the live slot at `next` (or below the top when `next`
  // is the end), from the end of the one before it.
  auto holeBelow = [&](std::map<int64_t, int64_t>::iterator next)
      -> std::pair<int64_t, int64_t> {
    int64_t from = next == live.begin() ? 0 : std::prev(next)->second;
    return {next == live.end() ? 0 : next->first - from, from};
  };
  std::vector<ArenaPlan::Slot> placed;
  placed.reserve(buffers.size());
  int64_t size = 0;
  for (size_t index : order) {
    const LiveBuffer &buffer = buffers[index];
    while (!expiries.empty() && expiries.top().first < buffer.first) {
      auto slot = live.find(expiries.top().second);
      expiries.pop();
      // Its hole below and above become one.
      auto next = std::next(slot);
      auto below = holeBelow(slot);
      if (below.first > 0)
        holes.erase(below);
      auto above = holeBelow(next);
      if (above.first > 0)
        holes.erase(above);
      live.erase(slot);
      auto merged = holeBelow(next);
      if (merged.first > 0)
        holes.insert(merged);
    }
    int64_t bytes = aligned(buffer.bytes);
    if (bytes == 0) { // (overlaps nothing; kept out of the offset map)
      placed.push_back(ArenaPlan::Slot{buffer, 0});
      continue;
    }
    auto fit = holes.lower_bound({bytes, 0});
    int64_t offset = fit != holes.end()
                         ? fit->second
                         : (live.empty() ? 0 : std::prev(live.end())->second);
    auto next = live.upper_bound(offset);
    if (fit != holes.end())
      holes.erase(fit);
    live.emplace_hint(next, offset, offset + bytes);
    auto rest = holeBelow(next);
    if (rest.first > 0)
      holes.insert(rest);
    expiries.push({buffer.last, offset});
    placed.push_back(ArenaPlan::Slot{buffer, offset});
    size = std::max(size, offset + bytes);
  }
  return {size, std::move(placed)};
}

ArenaPlan mlir::dtc::planArena(ArrayRef<ScheduledOp> schedule,
                               function_ref<bool(Value)> counted,
                               const llvm::DenseMap<Value, size_t> &heldUntil) {
  ArenaPlan plan;
  std::vector<LiveBuffer> buffers = computeLiveBuffers(schedule, counted);
  for (LiveBuffer &buffer : buffers)
    if (auto held = heldUntil.find(buffer.value); held != heldUntil.end())
      buffer.last = std::max(buffer.last, held->second);
  // The lower bound: the most aligned bytes live at any entry.
  plan.lowerBound =
      timelineOf(buffers, schedule.size(), [](const LiveBuffer &buffer) {
        return aligned(buffer.bytes);
      }).peak;

  // Each buffer goes to the smallest gap that fits among the placed ones it
  // lives with (best fit) or to the lowest (first fit), in one of three
  // orders; the smallest arena wins.
  auto place = [&](ArrayRef<size_t> order, bool bestFit) {
    std::vector<ArenaPlan::Slot> placed;
    int64_t size = 0;
    for (size_t index : order) {
      const LiveBuffer &buffer = buffers[index];
      int64_t bytes = aligned(buffer.bytes);
      std::vector<const ArenaPlan::Slot *> neighbours;
      for (const ArenaPlan::Slot &slot : placed)
        if (liveTogether(slot.buffer, buffer))
          neighbours.push_back(&slot);
      llvm::sort(neighbours,
                 [](const ArenaPlan::Slot *a, const ArenaPlan::Slot *b) {
                   return a->offset < b->offset;
                 });
      int64_t best = -1, bestGap = 0, end = 0;
      for (const ArenaPlan::Slot *slot : neighbours) {
        int64_t gap = slot->offset - end;
        if (gap >= bytes && (best < 0 || (bestFit && gap < bestGap))) {
          best = end;
          bestGap = gap;
        }
        end = std::max(end, slot->offset + aligned(slot->buffer.bytes));
      }
      int64_t offset = best >= 0 ? best : end;
      placed.push_back(ArenaPlan::Slot{buffer, offset});
      size = std::max(size, offset + bytes);
    }
    return std::make_pair(size, std::move(placed));
  };
  std::vector<size_t> byAllocation(buffers.size());
  for (size_t i = 0; i < byAllocation.size(); ++i)
    byAllocation[i] = i;
  // Largest first (TensorFlow Lite's "greedy by size"); largest in bytes
  // times lifetime first; in allocation order (as a run would allocate).
  std::vector<size_t> bySize = byAllocation, byArea = byAllocation;
  llvm::stable_sort(bySize, [&](size_t a, size_t b) {
    return aligned(buffers[a].bytes) > aligned(buffers[b].bytes);
  });
  auto area = [&](size_t i) {
    return static_cast<double>(aligned(buffers[i].bytes)) *
           (buffers[i].last - buffers[i].first + 1);
  };
  llvm::stable_sort(byArea,
                    [&](size_t a, size_t b) { return area(a) > area(b); });
  // Each general placement is quadratic in the buffers: a large step (an
  // 80-layer graph has 40,000; a pipelined one many times that) is placed
  // in allocation order alone, within a few percent of the best order.
  constexpr size_t kMaxBuffersForGeneralPlacement = 10000;
  if (buffers.size() > kMaxBuffersForGeneralPlacement) {
    std::tie(plan.size, plan.slots) = placeInAllocationOrder(buffers);
  } else {
    std::pair<int64_t, std::vector<ArenaPlan::Slot>> best =
        placeInAllocationOrder(buffers);
    for (bool bestFit : {true, false})
      for (ArrayRef<size_t> order :
           {ArrayRef<size_t>(bySize), ArrayRef<size_t>(byArea),
            ArrayRef<size_t>(byAllocation)}) {
        if (best.first == plan.lowerBound)
          break;
        if (bestFit && order.data() == byAllocation.data())
          continue; // the first plan
        auto candidate = place(order, bestFit);
        if (candidate.first < best.first)
          best = std::move(candidate);
      }
    std::tie(plan.size, plan.slots) = std::move(best);
  }
  // Back in allocation order.
  llvm::sort(plan.slots,
             [](const ArenaPlan::Slot &a, const ArenaPlan::Slot &b) {
               return a.buffer.first < b.buffer.first;
             });
  return plan;
}

ArenaPlan mlir::dtc::planArena(func::FuncOp step) {
  return planArena(programOrder(step.getBody().front()), intermediatesOf(step));
}

bool mlir::dtc::hasOverlap(const ArenaPlan &plan) {
  for (size_t i = 0; i < plan.slots.size(); ++i) {
    const ArenaPlan::Slot &a = plan.slots[i];
    int64_t aEnd = a.offset + aligned(a.buffer.bytes);
    if (a.offset < 0 || a.offset % kArenaAlignment || aEnd > plan.size)
      return true;
    for (size_t j = i + 1; j < plan.slots.size(); ++j) {
      const ArenaPlan::Slot &b = plan.slots[j];
      int64_t bEnd = b.offset + aligned(b.buffer.bytes);
      if (liveTogether(a.buffer, b.buffer) && a.offset < bEnd &&
          b.offset < aEnd)
        return true;
    }
  }
  return false;
}
