#include "watch/interest_set.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <utility>

namespace collide {
namespace {

constexpr float kInfinity = std::numeric_limits<float>::infinity();

bool Before(float ad2, uint64_t aid, float bd2, uint64_t bid) {
  return ad2 < bd2 || (ad2 == bd2 && aid < bid);
}

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

void InterestSet::Gather(const Observer& o, const BodyGrid& grid, float bound2) {
  const ObserverSpec& spec = o.spec;
  const ObserverFrame& frame = o.frame;
  const bool hosted = spec.attached_to.has_value();
  const uint64_t host = hosted ? *spec.attached_to : 0;
  const size_t keep = spec.max_relevant;
  const size_t cap = 4 * keep + 64;
  const float px = frame.position.x, py = frame.position.y, pz = frame.position.z;
  float bound = bound2;
  grid.ForEachCellNear(frame.position, bound2, [&](const BodyGrid::Cell& cell) {
    // The distances of a run, several at a time (the same float operations, in the same order,
    // as InterestDistance2: the compiler vectorises this loop without changing a result), then
    // the few within the bound one by one.
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
      // The indices within the bound, without a branch per entry (which half the entries would
      // mispredict).
      uint32_t near[kChunk];
      size_t found = 0;
      for (size_t k = 0; k < n; ++k) {
        near[found] = static_cast<uint32_t>(k);
        found += d2s[k] <= bound ? 1 : 0;
      }
      for (size_t f = 0; f < found; ++f) {
        const size_t k = near[f];
        const float d2 = d2s[k];
        if (d2 > bound) continue;  // the bound shrank since (a trim below)
        const size_t e = base + k;
        const uint64_t id = cell.id[e];
        if (hosted && id == host) continue;
        if (!Accepts(spec, cell.category[e], cell.mask[e])) continue;
        const Vec3 position{xs[k], ys[k], zs[k]};
        const bool eligible =
            Eligible(o.rules, frame, position, d2, [&] { return members_.Contains(id); });
        if (!eligible) continue;
        candidates_.push_back(Candidate{d2, id});
        if (candidates_.size() >= cap) {
          // Keep the best `keep`: nothing farther than the last of them can be in the set.
          std::nth_element(candidates_.begin(), candidates_.begin() + (keep - 1), candidates_.end(),
                           [](const Candidate& a, const Candidate& b) {
                             return Before(a.d2, a.id, b.d2, b.id);
                           });
          candidates_.resize(keep);
          bound = candidates_.back().d2;
        }
      }
    }
  });
}

bool InterestSet::Evaluate(uint32_t slot, const SceneMirror& mirror, bool full, InterestUpdate* out,
                           ContentsMeter* meter) {
  Observer& o = observers_[slot];
  const Body* host = o.spec.attached_to.has_value() ? mirror.Find(*o.spec.attached_to) : nullptr;
  const ObserverFrame frame = collide::FrameOf(o.spec, o.rules, host);
  const bool moved =
      frame.active != o.frame.active || (frame.active && !(frame.position == o.frame.position));
  o.frame = frame;
  next_.clear();
  // The set before, by id: for the hysteresis, then for the delta.
  members_.Prepare(o.set);
  float kth2 = kInfinity;
  if (frame.active) {
    const BodyGrid* grid = mirror.grid();
    assert(grid != nullptr);
    const size_t keep = o.spec.max_relevant;
    candidates_.clear();
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
      Gather(o, *grid, static_cast<float>(radius * radius));
      if (candidates_.size() >= keep) {
        done = true;
        break;
      }
      candidates_.clear();
      o.slack = std::max(2.0f * o.slack, static_cast<float>(0.25 * grid->cell_size()));
      radius = o.kth2 < kInfinity ? std::sqrt(static_cast<double>(o.kth2)) + o.slack : radius * 1.6;
    }
    if (done) {
      o.slack *= 0.9f;
    } else {
      Gather(o, *grid, o.rules.leave2);
    }
    auto before = [](const Candidate& a, const Candidate& b) {
      return Before(a.d2, a.id, b.d2, b.id);
    };
    if (candidates_.size() > keep) {
      std::nth_element(candidates_.begin(), candidates_.begin() + (keep - 1), candidates_.end(),
                       before);
      candidates_.resize(keep);
    }
    if (candidates_.size() == keep) {
      kth2 = 0.0f;
      for (const Candidate& c : candidates_) kth2 = std::max(kth2, c.d2);
    }
    next_.reserve(candidates_.size());
    for (const Candidate& c : candidates_) next_.push_back(c.id);
  }
  o.kth2 = kth2;
  if (meter != nullptr) {
    if (next_.size() > o.set.size()) {
      if (!meter->Add(next_.size() - o.set.size())) return false;
    } else {
      meter->Remove(o.set.size() - next_.size());
    }
  }
  held_ += next_.size();
  held_ -= o.set.size();
  // The delta: entered then left, each ascending. The sets are kept in no order; the members'
  // table (built from the set before, for the eligibility test) tells which stayed.
  const size_t first = out->ids.size();
  uint32_t entered = 0, left = 0;
  if (full) {
    out->ids.insert(out->ids.end(), next_.begin(), next_.end());
    std::sort(out->ids.begin() + first, out->ids.end());
    entered = static_cast<uint32_t>(next_.size());
  } else {
    for (uint64_t id : next_) {
      if (!members_.Hit(id)) out->ids.push_back(id);
    }
    entered = static_cast<uint32_t>(out->ids.size() - first);
    std::sort(out->ids.begin() + first, out->ids.end());
    for (size_t i = 0; i < o.set.size(); ++i) {
      if (!members_.was_hit(i)) out->ids.push_back(o.set[i]);
    }
    left = static_cast<uint32_t>(out->ids.size() - first - entered);
    std::sort(out->ids.begin() + first + entered, out->ids.end());
  }
  if (full || entered + left > 0) {
    out->deltas.push_back(
        ObserverDelta{.observer_id = o.spec.id, .full = full, .entered = entered, .left = left});
  }
  // The set keeps its capacity when it stays about as large (a set changes by a few bodies per
  // batch); a set that shrank a lot gives its memory back.
  if (next_.size() * 2 + 8 < o.set.capacity()) {
    o.set.assign(next_.begin(), next_.end());
  } else {
    o.set.swap(next_);
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
  // Observers whose host the batch touched (moved, created, replaced, removed).
  for (const BodyChange& change : batch.changes) {
    auto it = hosts_.find(change.id);
    if (it == hosts_.end()) continue;
    for (uint32_t slot : it->second) Mark(slot);
  }
  // Observers a touched body came near or left: through the observers' grid, unless the batch
  // touched so many bodies that evaluating every observer costs less (then so be it).
  bool all = 2 * batch.changes.size() >= index_.size();
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

// ---------------------------------------------------------------------------------------------
// The members' table.

void InterestSet::MemberTable::Prepare(const std::vector<uint64_t>& set) {
  size_t capacity = 16;
  while (capacity < 2 * set.size()) capacity *= 2;
  if (slots_.size() < capacity) slots_.resize(capacity);
  mask_ = capacity - 1;
  if (++epoch_ == 0) {
    for (Slot& slot : slots_) slot.epoch = 0;
    epoch_ = 1;
  }
  for (uint32_t i = 0; i < set.size(); ++i) {
    size_t h = Hash(set[i]);
    while (slots_[h].epoch == epoch_) h = (h + 1) & mask_;
    slots_[h] = Slot{.id = set[i], .epoch = epoch_, .index = i};
  }
  hits_.assign(set.size(), false);
}

int64_t InterestSet::MemberTable::Find(uint64_t id) const {
  size_t h = Hash(id);
  while (slots_[h].epoch == epoch_) {
    if (slots_[h].id == id) return slots_[h].index;
    h = (h + 1) & mask_;
  }
  return -1;
}

bool InterestSet::MemberTable::Hit(uint64_t id) {
  const int64_t i = Find(id);
  if (i < 0) return false;
  hits_[static_cast<size_t>(i)] = true;
  return true;
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
      candidates_.capacity() * sizeof(Candidate) + next_.capacity() * sizeof(uint64_t) +
      cells_.capacity() * (sizeof(std::pair<const CellKey, std::vector<uint32_t>>) + 1);
  for (const Observer& o : observers_) bytes += o.set.capacity() * sizeof(uint64_t);
  for (const auto& [host, slots] : hosts_) bytes += slots.capacity() * sizeof(uint32_t);
  for (const auto& [key, slots] : cells_) bytes += slots.capacity() * sizeof(uint32_t);
  return bytes;
}

}  // namespace collide
