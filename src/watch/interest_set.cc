#include "watch/interest_set.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <limits>
#include <utility>

namespace collide {
namespace {

constexpr float kInfinity = std::numeric_limits<float>::infinity();

// Per mirror slot, for the set a thread is evaluating: its epoch while the body in that slot is a
// member, epoch + 1 once it is known to stay, anything else: not a member. One array per thread
// (a watch worker's: 4 bytes per body of the largest scene it evaluated), not per set.
struct ThreadMarks {
  std::vector<uint32_t> of;
  uint32_t epoch = 0;
};
thread_local ThreadMarks thread_marks;

}  // namespace

// ---------------------------------------------------------------------------------------------
// Observers.

uint32_t InterestSet::AddObserver(const ObserverSpec& spec) {
  uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = static_cast<uint32_t>(observers_.size());
    observers_.emplace_back();
  }
  Observer& o = observers_[slot];
  o = Observer{};
  o.spec = spec;
  o.rules = RulesOf(spec);
  o.kth2 = kInfinity;
  o.live = true;
  index_.emplace(spec.id, slot);
  Host(slot, true);
  order_stale_ = true;
  return slot;
}

void InterestSet::RemoveObserver(uint32_t slot, ContentsMeter* meter) {
  Observer& o = observers_[slot];
  if (meter != nullptr) meter->Remove(o.set.size());
  held_ -= o.set.size();
  Unlist(slot);
  Host(slot, false);
  index_.erase(o.spec.id);
  o = Observer{};
  free_.push_back(slot);
  order_stale_ = true;
}

void InterestSet::Host(uint32_t slot, bool add) {
  const ObserverSpec& spec = observers_[slot].spec;
  if (!spec.attached_to.has_value()) return;
  if (add) {
    hosts_[*spec.attached_to].push_back(slot);
    return;
  }
  auto it = hosts_.find(*spec.attached_to);
  if (it == hosts_.end()) return;
  std::vector<uint32_t>& slots = it->second;
  slots.erase(std::remove(slots.begin(), slots.end(), slot), slots.end());
  if (slots.empty()) hosts_.erase(it);
}

const std::vector<uint32_t>& InterestSet::Order() {
  if (order_stale_) {
    order_.clear();
    order_.reserve(index_.size());
    for (const auto& [id, slot] : index_) order_.push_back(slot);
    std::sort(order_.begin(), order_.end(), [&](uint32_t a, uint32_t b) {
      return observers_[a].spec.id < observers_[b].spec.id;
    });
    order_stale_ = false;
  }
  return order_;
}

// ---------------------------------------------------------------------------------------------
// The observers' hash grid.

InterestSet::CellKey InterestSet::KeyOf(const Vec3& p) const {
  const double inv = 1.0 / observer_cell_;
  return CellKey{static_cast<int64_t>(std::floor(p.x * inv)),
                 static_cast<int64_t>(std::floor(p.y * inv)),
                 static_cast<int64_t>(std::floor(p.z * inv))};
}

void InterestSet::List(uint32_t slot) {
  Observer& o = observers_[slot];
  if (o.listed || !o.frame.active) return;
  // One ring of cells around a point must hold every observer whose leave radius reaches it:
  // cells at least as large as every listed observer's leave radius (a little more, for the
  // floor of coordinates at a cell's edge).
  const double need = std::max(1.0, static_cast<double>(o.spec.leave_radius) * 1.01 + 1e-6);
  if (need > observer_cell_) {
    observer_cell_ = std::max(need, 2.0 * observer_cell_);
    Relist();
    if (o.listed) return;
  }
  const CellKey key = KeyOf(o.frame.position);
  cells_[key].push_back(slot);
  o.cell[0] = key.x;
  o.cell[1] = key.y;
  o.cell[2] = key.z;
  o.listed = true;
}

void InterestSet::Unlist(uint32_t slot) {
  Observer& o = observers_[slot];
  if (!o.listed) return;
  auto it = cells_.find(CellKey{o.cell[0], o.cell[1], o.cell[2]});
  assert(it != cells_.end());
  std::vector<uint32_t>& slots = it->second;
  slots.erase(std::find(slots.begin(), slots.end(), slot));
  if (slots.empty()) cells_.erase(it);
  o.listed = false;
}

void InterestSet::Relist() {
  cells_.clear();
  for (Observer& o : observers_) o.listed = false;
  for (const auto& [id, slot] : index_) {
    Observer& o = observers_[slot];
    if (!o.frame.active) continue;
    const CellKey key = KeyOf(o.frame.position);
    cells_[key].push_back(slot);
    o.cell[0] = key.x;
    o.cell[1] = key.y;
    o.cell[2] = key.z;
    o.listed = true;
  }
}

void InterestSet::Mark(uint32_t slot) {
  Observer& o = observers_[slot];
  if (o.stamp == stamp_) return;
  o.stamp = stamp_;
  dirty_.push_back(slot);
}

bool InterestSet::MarkNear(const Vec3& p, int64_t* budget) {
  if (cells_.empty()) return true;
  const CellKey at = KeyOf(p);
  for (int64_t dz = -1; dz <= 1; ++dz) {
    for (int64_t dy = -1; dy <= 1; ++dy) {
      for (int64_t dx = -1; dx <= 1; ++dx) {
        auto it = cells_.find(CellKey{at.x + dx, at.y + dy, at.z + dz});
        if (it == cells_.end()) continue;
        *budget -= static_cast<int64_t>(it->second.size());
        if (*budget < 0) return false;
        for (uint32_t slot : it->second) {
          const Observer& o = observers_[slot];
          // The same distance the evaluation compares: a body farther than the leave radius
          // before and after the batch cannot change the set.
          if (InterestDistance2(o.frame.position, p) <= o.rules.leave2) Mark(slot);
        }
      }
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Evaluation.

void InterestSet::Reserve(size_t more) {
  if (found_ + more <= keys_.size()) return;
  const size_t size = std::max(found_ + more, 2 * keys_.size());
  keys_.resize(size);
  found_ids_.resize(size);
  found_slots_.resize(size);
}

void InterestSet::Gather(const Observer& o, const BodyGrid& grid, float bound2, uint32_t host) {
  const ObserverRules& rules = o.rules;
  const ObserverFrame& frame = o.frame;
  const size_t keep = o.spec.max_relevant;
  const size_t cap = 4 * keep + 64;
  const uint32_t category = o.spec.category, mask = o.spec.mask;
  const float px = frame.position.x, py = frame.position.y, pz = frame.position.z;
  // Without a cone and within the enter radius, every body the filter accepts is eligible.
  const bool plain = !rules.cone && bound2 <= rules.enter2;
  float bound = bound2;
  grid.ForEachCellNear(frame.position, bound2, [&](const BodyGrid::Cell& cell) {
    Reserve(cell.size);
    // Locals, so that the stores below need not reload them.
    uint64_t* const keys = keys_.data();
    uint64_t* const ids = found_ids_.data();
    uint32_t* const slots = found_slots_.data();
    size_t found = found_;
    const float limit = bound;
    // The distances of a run, several at a time (the same float operations, in the same order,
    // as InterestDistance2: the compiler vectorises this loop without changing a result), then
    // the entries within the bound picked without a branch per entry (which many of them would
    // mispredict), and of those the ones the filter accepts appended, also without a branch when
    // no cone applies within the enter radius, else tested one by one.
    constexpr size_t kChunk = 32;
    float d2s[kChunk];
    for (size_t base = 0; base < cell.size; base += kChunk) {
      const size_t n = std::min(kChunk, cell.size - base);
      const float* xs = cell.x + base;
      const float* ys = cell.y + base;
      const float* zs = cell.z + base;
      for (size_t k = 0; k < n; ++k) {
        const float dx = xs[k] - px;
        const float dy = ys[k] - py;
        const float dz = zs[k] - pz;
        d2s[k] = (dx * dx + dy * dy) + dz * dz;
      }
      // The entries within the bound (one store each, no branch), then the filter on those.
      uint8_t near[kChunk];
      size_t within = 0;
      for (size_t k = 0; k < n; ++k) {
        near[within] = static_cast<uint8_t>(k);
        within += d2s[k] <= limit ? 1 : 0;
      }
      if (plain) {
        for (size_t f = 0; f < within; ++f) {
          const size_t k = near[f];
          const size_t e = base + k;
          const uint32_t slot = cell.slot[e];
          const bool in =
              (slot != host) & ((mask & cell.category[e]) != 0) & ((cell.mask[e] & category) != 0);
          keys[found] = uint64_t{std::bit_cast<uint32_t>(d2s[k])} << 32 | found;
          ids[found] = cell.id[e];
          slots[found] = slot;
          found += in ? 1 : 0;
        }
      } else {
        for (size_t f = 0; f < within; ++f) {
          const size_t k = near[f];
          const float d2 = d2s[k];
          const size_t e = base + k;
          const uint32_t slot = cell.slot[e];
          if (slot == host) continue;
          if ((mask & cell.category[e]) == 0 || (cell.mask[e] & category) == 0) continue;
          const Vec3 position{xs[k], ys[k], zs[k]};
          if (!Eligible(rules, frame, position, d2, [&] { return Member(slot); })) continue;
          keys[found] = uint64_t{std::bit_cast<uint32_t>(d2)} << 32 | found;
          ids[found] = cell.id[e];
          slots[found] = slot;
          ++found;
        }
      }
    }
    found_ = found;
    if (found_ >= cap) {
      // Keep the best `keep`: nothing farther than the farthest of them can be in the set.
      KeepNearest(keep, kInfinity);
      uint32_t bits = 0;
      for (size_t i = 0; i < found_; ++i) bits = std::max(bits, BitsOf(i));
      bound = std::bit_cast<float>(bits);
    }
  });
}

void InterestSet::KeepNearest(size_t keep, float guess2) {
  const size_t n = found_;
  if (n <= keep) return;
  // Selected on (distance, index) (the keys, all different). With a guess of the distance of
  // the last one kept (the last evaluation's), the keys are split at it without a branch, and
  // the few that land on the wrong side of `keep` moved across one at a time; else, or when
  // many are, by partial selection.
  uint64_t* keys = keys_.data();
  size_t cut = 0;
  bool sorted = false;
  if (guess2 < kInfinity) {
    part_.resize(std::max(part_.size(), n));
    uint64_t* part = part_.data();
    const uint64_t pivot = uint64_t{std::bit_cast<uint32_t>(guess2)} << 32 | 0xFFFFFFFFu;
    size_t low = 0, high = n;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t key = keys[i];
      const bool below = key <= pivot;
      part[low] = key;
      part[high - 1] = key;
      low += below ? 1 : 0;
      high -= below ? 0 : 1;
    }
    part_.swap(keys_);
    keys = keys_.data();
    cut = low;
    constexpr size_t kMoves = 8;
    if (cut > keep && cut - keep <= kMoves) {
      // The largest of [0, cut) to the end of it, until `keep` remain.
      for (; cut > keep; --cut) {
        size_t at = 0;
        for (size_t i = 1; i < cut; ++i) at = keys[i] > keys[at] ? i : at;
        std::swap(keys[at], keys[cut - 1]);
      }
      sorted = true;
    } else if (cut <= keep && keep - cut <= kMoves) {
      // The smallest of [cut, n) to the start of it, until `keep` are before.
      for (; cut < keep; ++cut) {
        size_t at = cut;
        for (size_t i = cut + 1; i < n; ++i) at = keys[i] < keys[at] ? i : at;
        std::swap(keys[at], keys[cut]);
      }
      sorted = true;
    }
  }
  if (!sorted) {
    std::nth_element(keys, keys + (keep - 1), keys + n);
  }
  // Ties at the last distance kept, if some fell on each side of the cut, are decided by id.
  uint64_t last = 0;
  for (size_t j = 0; j < keep; ++j) last = std::max(last, keys[j] >> 32);
  bool straddle = false;
  for (size_t j = keep; j < n; ++j) straddle |= (keys[j] >> 32) == last;
  if (straddle) {
    // The closer ones first, then those at the last distance by id.
    size_t closer = 0;
    for (size_t j = 0; j < n; ++j) {
      if ((keys[j] >> 32) < last) std::swap(keys[closer++], keys[j]);
    }
    std::sort(keys + closer, keys + n, [&](uint64_t a, uint64_t b) {
      return (a >> 32) != (b >> 32) ? a < b
                                    : found_ids_[a & 0xFFFFFFFFu] < found_ids_[b & 0xFFFFFFFFu];
    });
  }
  kept_ids_.resize(std::max(kept_ids_.size(), keys_.size()));
  kept_slots_.resize(std::max(kept_slots_.size(), keys_.size()));
  for (size_t j = 0; j < keep; ++j) {
    const size_t i = keys[j] & 0xFFFFFFFFu;
    kept_ids_[j] = found_ids_[i];
    kept_slots_[j] = found_slots_[i];
    keys[j] = (keys[j] & ~uint64_t{0xFFFFFFFFu}) | j;
  }
  found_ids_.swap(kept_ids_);
  found_slots_.swap(kept_slots_);
  found_ = keep;
}

void InterestSet::MarkMembers(Observer& o, const SceneMirror& mirror) {
  const bool check = o.layout != mirror.layout();
  for (size_t i = 0; i < o.set.size(); ++i) {
    uint32_t slot = o.set_slots[i];
    if (check) {
      const Body* body = slot != kNoSlot ? mirror.BodyAt(slot) : nullptr;
      if (body == nullptr || body->id != o.set[i]) {
        // The slot was freed (or the mirror copied again): find the body by id.
        const int64_t found = mirror.SlotOf(o.set[i]);
        slot = found < 0 ? kNoSlot : static_cast<uint32_t>(found);
        o.set_slots[i] = slot;
      }
    }
    if (slot != kNoSlot) marks_[slot] = epoch_;
  }
}

bool InterestSet::Evaluate(uint32_t slot, const SceneMirror& mirror, bool full, InterestUpdate* out,
                           ContentsMeter* meter) {
  Observer& o = observers_[slot];
  const Body* host = nullptr;
  if (o.spec.attached_to.has_value()) {
    const uint64_t id = *o.spec.attached_to;
    // The slot it was in last time, unless it is another body's now (or the host changed).
    host = o.host_slot != kNoSlot ? mirror.BodyAt(o.host_slot) : nullptr;
    if (host == nullptr || host->id != id) {
      const int64_t found = mirror.SlotOf(id);
      o.host_slot = found < 0 ? kNoSlot : static_cast<uint32_t>(found);
      host = found < 0 ? nullptr : mirror.BodyAt(o.host_slot);
    }
  }
  const uint32_t host_slot = host != nullptr ? o.host_slot : kNoSlot;
  const ObserverFrame frame = collide::FrameOf(o.spec, o.rules, host);
  const bool moved =
      frame.active != o.frame.active || (frame.active && !(frame.position == o.frame.position));
  o.frame = frame;
  // The set before, by the bodies' slots: for the hysteresis, then for the delta. The marks are
  // the thread's, shared by every set it evaluates (one at a time: each takes a new epoch).
  ThreadMarks& marks = thread_marks;
  if (marks.of.size() < mirror.slot_count()) marks.of.resize(mirror.slot_count(), 0);
  if (marks.epoch >= UINT32_MAX - 2) {
    std::fill(marks.of.begin(), marks.of.end(), 0);
    marks.epoch = 0;
  }
  marks.epoch += 2;
  marks_ = marks.of.data();
  epoch_ = marks.epoch;
  MarkMembers(o, mirror);
  o.layout = mirror.layout();
  found_ = 0;
  float kth2 = kInfinity;
  if (frame.active) {
    const BodyGrid* grid = mirror.grid();
    assert(grid != nullptr);
    const size_t keep = o.spec.max_relevant;
    // The nearest `keep` eligible bodies are searched for within a radius first: the distance of
    // the farthest member last time plus a slack that adapts to how far things move between
    // batches (it grows when the radius held too few, shrinks while it holds enough), or, for a
    // new search, the radius that holds `keep` bodies at the grid's mean density. Only when that
    // holds fewer than `keep` eligible bodies (the set is not full) is the whole leave radius
    // searched. Every radius is exact: all eligible bodies within it are gathered.
    const double leave = std::sqrt(static_cast<double>(o.rules.leave2));
    double radius = o.kth2 < kInfinity ? std::sqrt(static_cast<double>(o.kth2)) + o.slack
                                       : grid->RadiusHolding(static_cast<double>(keep));
    bool done = false;
    for (int attempt = 0; attempt < 3 && radius < leave; ++attempt) {
      Gather(o, *grid, static_cast<float>(radius * radius), host_slot);
      if (found_ >= keep) {
        done = true;
        break;
      }
      found_ = 0;
      o.slack = std::max(2.0f * o.slack, static_cast<float>(0.25 * grid->cell_size()));
      radius = o.kth2 < kInfinity ? std::sqrt(static_cast<double>(o.kth2)) + o.slack : radius * 1.6;
    }
    if (done) {
      o.slack *= 0.9f;
    } else {
      Gather(o, *grid, o.rules.leave2, host_slot);
    }
    KeepNearest(keep, o.kth2);
    if (found_ == keep) {
      uint32_t bits = 0;
      for (size_t i = 0; i < found_; ++i) bits = std::max(bits, BitsOf(i));
      kth2 = std::bit_cast<float>(bits);
    }
  }
  o.kth2 = kth2;
  const size_t count = found_;
  if (meter != nullptr) {
    if (count > o.set.size()) {
      if (!meter->Add(count - o.set.size())) return false;
    } else {
      meter->Remove(o.set.size() - count);
    }
  }
  held_ += count;
  held_ -= o.set.size();
  // The delta: entered then left, each ascending. The sets are kept in no order; the marks (of
  // the set before, for the eligibility test) tell which members stayed.
  next_.clear();
  next_slots_.clear();
  const size_t first = out->ids.size();
  uint32_t entered = 0, left = 0;
  if (full) {
    for (size_t i = 0; i < count; ++i) {
      next_.push_back(found_ids_[i]);
      next_slots_.push_back(found_slots_[i]);
      out->ids.push_back(found_ids_[i]);
    }
    std::sort(out->ids.begin() + static_cast<ptrdiff_t>(first), out->ids.end());
    entered = static_cast<uint32_t>(count);
  } else {
    const uint32_t stays = epoch_ + 1;
    for (size_t i = 0; i < count; ++i) {
      const uint32_t s = found_slots_[i];
      next_.push_back(found_ids_[i]);
      next_slots_.push_back(s);
      if (marks_[s] == epoch_) {
        marks_[s] = stays;
      } else {
        out->ids.push_back(found_ids_[i]);
      }
    }
    entered = static_cast<uint32_t>(out->ids.size() - first);
    if (entered > 1) std::sort(out->ids.begin() + static_cast<ptrdiff_t>(first), out->ids.end());
    for (size_t i = 0; i < o.set.size(); ++i) {
      const uint32_t s = o.set_slots[i];
      if (s == kNoSlot || marks_[s] != stays) out->ids.push_back(o.set[i]);
    }
    left = static_cast<uint32_t>(out->ids.size() - first - entered);
    if (left > 1) {
      std::sort(out->ids.begin() + static_cast<ptrdiff_t>(first + entered), out->ids.end());
    }
  }
  if (full || entered + left > 0) {
    out->deltas.push_back(
        ObserverDelta{.observer_id = o.spec.id, .full = full, .entered = entered, .left = left});
  }
  // The set keeps its capacity when it stays about as large (a set changes by a few bodies per
  // batch); a set that shrank a lot gives its memory back.
  if (next_.size() * 2 + 8 < o.set.capacity()) {
    o.set.assign(next_.begin(), next_.end());
    o.set_slots.assign(next_slots_.begin(), next_slots_.end());
  } else {
    o.set.swap(next_);
    o.set_slots.swap(next_slots_);
  }
  if (defer_listing_) {
    // Every observer is being evaluated: the observers' grid is brought up to date once, when a
    // batch next needs it.
    listing_stale_ = listing_stale_ || moved;
  } else if (moved && o.listed) {
    Unlist(slot);
    List(slot);
  } else if (!o.listed) {
    List(slot);
  }
  return true;
}

bool InterestSet::EvaluateEach(const std::vector<uint32_t>& by_id, const SceneMirror& mirror,
                               InterestUpdate* out, ContentsMeter* meter) {
  // Evaluated in the grid's order of their positions, so that one observer's search finds the
  // cells its neighbour just read still in cache; the deltas then go out in observer id order.
  const BodyGrid* grid = mirror.grid();
  visit_.clear();
  visit_.reserve(by_id.size());
  for (uint32_t slot : by_id) {
    const Observer& o = observers_[slot];
    visit_.push_back({o.frame.active ? grid->CellIndexOf(o.frame.position) : 0u, slot});
  }
  std::sort(visit_.begin(), visit_.end());
  if (delta_at_.size() < observers_.size()) {
    delta_at_.resize(observers_.size(), -1);
    ids_at_.resize(observers_.size(), 0);
  }
  scratch_.deltas.clear();
  scratch_.ids.clear();
  for (const auto& [cell, slot] : visit_) {
    const size_t deltas = scratch_.deltas.size();
    const size_t ids = scratch_.ids.size();
    if (!Evaluate(slot, mirror, /*full=*/false, &scratch_, meter)) return false;
    delta_at_[slot] = scratch_.deltas.size() > deltas ? static_cast<int32_t>(deltas) : -1;
    ids_at_[slot] = static_cast<uint32_t>(ids);
  }
  for (uint32_t slot : by_id) {
    if (delta_at_[slot] < 0) continue;
    const ObserverDelta& d = scratch_.deltas[static_cast<size_t>(delta_at_[slot])];
    out->deltas.push_back(d);
    const auto first = scratch_.ids.begin() + ids_at_[slot];
    out->ids.insert(out->ids.end(), first, first + d.entered + d.left);
    delta_at_[slot] = -1;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Batches and changes.

bool InterestSet::ApplyChanges(std::span<const Change> changes, const SceneMirror& mirror,
                               InterestUpdate* out, ContentsMeter* meter) {
  for (const Change& change : changes) {
    auto it = index_.find(change.id);
    if (it != index_.end() && (change.reset || !change.spec.has_value())) {
      RemoveObserver(it->second, meter);
      it = index_.end();
    }
    if (!change.spec.has_value()) continue;
    if (it == index_.end()) {
      if (!Evaluate(AddObserver(*change.spec), mirror, /*full=*/true, out, meter)) return false;
      continue;
    }
    // A change: the set carries on under the new rules (its hysteresis too).
    const uint32_t slot = it->second;
    Observer& o = observers_[slot];
    Host(slot, false);
    Unlist(slot);
    o.spec = *change.spec;
    o.rules = RulesOf(o.spec);
    o.kth2 = kInfinity;
    Host(slot, true);
    if (!Evaluate(slot, mirror, /*full=*/false, out, meter)) return false;
  }
  return true;
}

bool InterestSet::Recompute(const SceneMirror& mirror, ContentsMeter* meter) {
  InterestUpdate scratch;
  for (uint32_t slot : Order()) {
    if (!Evaluate(slot, mirror, /*full=*/false, &scratch, meter)) return false;
    scratch.deltas.clear();
    scratch.ids.clear();
  }
  return true;
}

bool InterestSet::Apply(const AppliedBatch& batch, const SceneMirror& mirror, InterestUpdate* out,
                        ContentsMeter* meter) {
  last_evaluated_ = 0;
  if (index_.empty()) return true;
  ++stamp_;
  dirty_.clear();
  bool all = EvaluatesAll(batch.size());
  // Else the observers whose host the batch touched (moved, created, replaced, removed)...
  for (size_t i = 0; i < batch.changes.size() && !all; ++i) {
    auto it = hosts_.find(batch.changes[i].id);
    if (it == hosts_.end()) continue;
    for (uint32_t slot : it->second) Mark(slot);
  }
  // ... and those a touched body came near or left, through the observers' grid.
  if (!all && listing_stale_) {
    Relist();
    listing_stale_ = false;
  }
  if (!all) {
    int64_t budget = 4 * static_cast<int64_t>(index_.size()) + 64;
    for (const BodyChange& change : batch.changes) {
      if (change.before.has_value() && !MarkNear(change.before->pose.position, &budget)) {
        all = true;
        break;
      }
      if (change.after.has_value() && !MarkNear(change.after->pose.position, &budget)) {
        all = true;
        break;
      }
    }
  }
  if (all) {
    defer_listing_ = true;
    const bool ok = EvaluateEach(Order(), mirror, out, meter);
    defer_listing_ = false;
    last_evaluated_ = index_.size();
    return ok;
  }
  std::sort(dirty_.begin(), dirty_.end(),
            [&](uint32_t a, uint32_t b) { return observers_[a].spec.id < observers_[b].spec.id; });
  last_evaluated_ = dirty_.size();
  return EvaluateEach(dirty_, mirror, out, meter);
}

void InterestSet::Snapshot(InterestSnapshot* out) const {
  out->sets.clear();
  out->ids.clear();
  std::vector<uint32_t> slots;
  slots.reserve(index_.size());
  size_t total = 0;
  for (const auto& [id, slot] : index_) {
    slots.push_back(slot);
    total += observers_[slot].set.size();
  }
  std::sort(slots.begin(), slots.end(),
            [&](uint32_t a, uint32_t b) { return observers_[a].spec.id < observers_[b].spec.id; });
  out->sets.reserve(slots.size());
  out->ids.reserve(total);
  for (uint32_t slot : slots) {
    const Observer& o = observers_[slot];
    out->sets.push_back(
        RelevantSet{.observer_id = o.spec.id, .count = static_cast<uint32_t>(o.set.size())});
    const size_t first = out->ids.size();
    out->ids.insert(out->ids.end(), o.set.begin(), o.set.end());
    std::sort(out->ids.begin() + first, out->ids.end());
  }
}

std::optional<std::vector<uint64_t>> InterestSet::SetOf(uint64_t id) const {
  auto it = index_.find(id);
  if (it == index_.end()) return std::nullopt;
  std::vector<uint64_t> ids = observers_[it->second].set;
  std::sort(ids.begin(), ids.end());
  return ids;
}

ObserverFrame InterestSet::FrameOf(uint64_t id) const {
  auto it = index_.find(id);
  return it == index_.end() ? ObserverFrame{} : observers_[it->second].frame;
}

size_t InterestSet::MemoryBytes() const {
  size_t bytes =
      observers_.capacity() * sizeof(Observer) + free_.capacity() * sizeof(uint32_t) +
      index_.capacity() * (sizeof(std::pair<const uint64_t, uint32_t>) + 1) +
      hosts_.capacity() * (sizeof(std::pair<const uint64_t, std::vector<uint32_t>>) + 1) +
      order_.capacity() * sizeof(uint32_t) + dirty_.capacity() * sizeof(uint32_t) +
      (keys_.capacity() + found_ids_.capacity() + kept_ids_.capacity() + next_.capacity()) *
          sizeof(uint64_t) +
      (found_slots_.capacity() + kept_slots_.capacity() + next_slots_.capacity()) *
          sizeof(uint32_t) +
      cells_.capacity() * (sizeof(std::pair<const CellKey, std::vector<uint32_t>>) + 1);
  for (const Observer& o : observers_) {
    bytes += o.set.capacity() * sizeof(uint64_t) + o.set_slots.capacity() * sizeof(uint32_t);
  }
  for (const auto& [host, slots] : hosts_) bytes += slots.capacity() * sizeof(uint32_t);
  for (const auto& [key, slots] : cells_) bytes += slots.capacity() * sizeof(uint32_t);
  return bytes;
}

}  // namespace collide
