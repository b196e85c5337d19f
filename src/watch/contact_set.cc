#include "watch/contact_set.h"

#include <algorithm>

#include "geom/bounds.h"
#include "geom/overlap.h"
#include "watch/batch_lookup.h"
#include "watch/body_overlap.h"

namespace collide {
namespace {

// A batch's candidate array is kept for the next batch up to this many pairs (larger ones are
// freed: the meter counts them only while the batch is evaluated).
constexpr size_t kKeptCandidates = 256;

}  // namespace

using watch_internal::FindChange;
using watch_internal::ForEachBody;

ContactSet::ContactSet(std::vector<ContactWatchSpec> watches) : watches_(std::move(watches)) {
  std::sort(watches_.begin(), watches_.end(),
            [](const ContactWatchSpec& a, const ContactWatchSpec& b) { return a.id < b.id; });
  for (const ContactWatchSpec& w : watches_) relevant_ |= w.category_a | w.category_b;
}

bool ContactSet::Link(uint64_t x, uint64_t y, ContentsMeter* meter) {
  if (meter != nullptr && !meter->Add(PairWeight())) return false;
  partners_[x].push_back(y);
  partners_[y].push_back(x);
  ++pairs_;
  return true;
}

void ContactSet::Unlink(uint64_t x, uint64_t y, ContentsMeter* meter) {
  for (auto [a, b] : {std::pair{x, y}, std::pair{y, x}}) {
    auto it = partners_.find(a);
    if (it == partners_.end()) continue;
    std::vector<uint64_t>& list = it->second;
    list.erase(std::remove(list.begin(), list.end(), b), list.end());
    if (list.empty()) partners_.erase(it);
  }
  --pairs_;
  if (meter != nullptr) meter->Remove(PairWeight());
}

bool ContactSet::Linked(uint64_t x, uint64_t y) const {
  auto it = partners_.find(x);
  return it != partners_.end() &&
         std::find(it->second.begin(), it->second.end(), y) != it->second.end();
}

bool ContactSet::Start(const SceneView& scene, ContentsMeter* meter) {
  // Forget any earlier state (a resync starts over).
  if (meter != nullptr) meter->Remove(held());
  pairs_ = 0;
  partners_ = absl::flat_hash_map<uint64_t, std::vector<uint64_t>>();
  if (watches_.empty()) return true;
  const CollisionWorld& world = scene.world;
  bool refused = false;
  for (BodyHandle h = 0; h < world.slot_count() && !refused; ++h) {
    if (!world.IsLive(h)) continue;
    const Body& x = world.body(h);
    if (!Relevant(x)) continue;
    ForEachBody(world, world.BoundsOf(x), [&](BodyHandle handle) {
      const Body& y = world.body(handle);
      if (refused) return;
      if (y.id > x.id && Relevant(y) && watch_internal::BodiesOverlap(world, x, y)) {
        refused = !Link(x.id, y.id, meter);
      }
    });
  }
  return !refused;
}

bool ContactSet::Apply(const AppliedBatch& batch, const SceneView& scene,
                       std::vector<WatchEvent>* events, ContentsMeter* meter) {
  events->clear();
  if (watches_.empty()) return true;
  candidates_.clear();
  uint64_t counted = 0;
  // Hands the batch's candidate pairs back to the meter, and their memory when it was large.
  auto finish = [&](bool ok) {
    if (meter != nullptr) meter->Remove(counted);
    if (candidates_.capacity() > kKeptCandidates) candidates_ = {};
    return ok;
  };
  auto add = [&](uint64_t a, uint64_t b) {
    if (meter != nullptr && !meter->Add(1)) return false;
    ++counted;
    candidates_.emplace_back(std::min(a, b), std::max(a, b));
    return true;
  };
  bool refused = false;
  // Each touched body against its previous partners and everything near it now.
  for (const BodyChange& change : batch.changes) {
    const uint64_t x = change.id;
    if (auto it = partners_.find(x); it != partners_.end()) {
      for (uint64_t y : it->second) {
        if (!add(x, y)) return finish(false);
      }
    }
    if (!change.after.has_value() || !Relevant(*change.after)) continue;
    const Body& body = *change.after;
    ForEachBody(scene.world, scene.world.BoundsOf(body), [&](BodyHandle handle) {
      const Body& other = scene.world.body(handle);
      if (!refused && other.id != x) refused = !add(x, other.id);
    });
    if (refused) return finish(false);
  }
  std::sort(candidates_.begin(), candidates_.end());
  candidates_.erase(std::unique(candidates_.begin(), candidates_.end()), candidates_.end());
  for (const auto& [x, y] : candidates_) {
    // Each body before and after: from the batch when it touched it, else from the scene.
    const Body* now_x = scene.find_body(x);
    const Body* now_y = scene.find_body(y);
    const Body* was_x = now_x;
    const Body* was_y = now_y;
    if (const BodyChange* c = FindChange(batch, x)) was_x = c->before ? &*c->before : nullptr;
    if (const BodyChange* c = FindChange(batch, y)) was_y = c->before ? &*c->before : nullptr;
    const bool was = Linked(x, y);
    const bool now = now_x != nullptr && now_y != nullptr && Relevant(*now_x) && Relevant(*now_y) &&
                     watch_internal::BodiesOverlap(scene.world, *now_x, *now_y);
    if (!was && !now) continue;
    for (const ContactWatchSpec& w : watches_) {
      const bool in_before = was && Qualifies(w, *was_x, *was_y);
      const bool in_after = now && Qualifies(w, *now_x, *now_y);
      if (in_before == in_after) continue;
      events->push_back(
          WatchEvent{.kind = in_after ? WatchEventKind::kContactBegin : WatchEventKind::kContactEnd,
                     .watch_id = w.id,
                     .body_id = x,
                     .other_body_id = y});
    }
    if (was && !now) Unlink(x, y, meter);
    if (!was && now && !Link(x, y, meter)) return finish(false);
  }
  std::sort(events->begin(), events->end(), [](const WatchEvent& a, const WatchEvent& b) {
    if (a.watch_id != b.watch_id) return a.watch_id < b.watch_id;
    if (a.body_id != b.body_id) return a.body_id < b.body_id;
    return a.other_body_id < b.other_body_id;
  });
  return finish(true);
}

void ContactSet::Snapshot(const SceneView& scene, std::vector<ContactPair>* out) const {
  out->clear();
  for (const auto& [x, list] : partners_) {
    const Body* body_x = scene.find_body(x);
    for (uint64_t y : list) {
      const Body* body_y = scene.find_body(y);
      if (y < x || body_x == nullptr || body_y == nullptr) continue;
      for (const ContactWatchSpec& w : watches_) {
        if (Qualifies(w, *body_x, *body_y)) {
          out->push_back(ContactPair{.watch_id = w.id, .body_id = x, .other_body_id = y});
        }
      }
    }
  }
  std::sort(out->begin(), out->end(), [](const ContactPair& a, const ContactPair& b) {
    if (a.watch_id != b.watch_id) return a.watch_id < b.watch_id;
    if (a.body_id != b.body_id) return a.body_id < b.body_id;
    return a.other_body_id < b.other_body_id;
  });
}

}  // namespace collide
