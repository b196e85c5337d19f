#include "watch/fence_set.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "geom/bounds.h"
#include "geom/overlap.h"
#include "geom/penetration.h"
#include "geom/shape_cast.h"
#include "query/query_engine.h"
#include "watch/batch_lookup.h"
#include "watch/body_overlap.h"

namespace collide {
namespace {

// A batch's candidate array is kept for the next batch up to this many entries (larger ones are
// freed: the meter counts them only while the batch is evaluated).
constexpr size_t kKeptCandidates = 256;

bool Tracks(const FenceSpec& fence, const Body& body) {
  return (fence.mask & body.category) != 0 && (body.mask & fence.category) != 0 &&
         !(fence.attached_to.has_value() && *fence.attached_to == body.id);
}

// The world pose of a fence whose pose is `local` in the frame of a body at `host`.
Pose Compose(const Pose& host, const Pose& local) {
  return Pose{host.rotation * local.rotation,
              host.position + Rotate(host.rotation, local.position)};
}

// The box of a shape's motion in a batch: at `before`, slid at its old rotation to the new
// position, and at `after` (the final rotation).
Aabb MotionBox(const Shape& shape, const Pose& before, const Pose& after) {
  const Aabb slid =
      Union(Bounds(shape, before), Bounds(shape, Pose{before.rotation, after.position}));
  return Union(slid, Bounds(shape, after));
}

}  // namespace

using watch_internal::BodyMotionBox;
using watch_internal::BodyOverlapsShape;
using watch_internal::FindChange;
using watch_internal::ForEachBody;
using watch_internal::PenetrateShapeBody;

FenceSet::FenceSet(std::vector<FenceSpec> fences) {
  std::sort(fences.begin(), fences.end(),
            [](const FenceSpec& a, const FenceSpec& b) { return a.id < b.id; });
  fences_.resize(fences.size());
  for (size_t i = 0; i < fences.size(); ++i) {
    fences_[i].spec = std::move(fences[i]);
    if (fences_[i].spec.attached_to.has_value()) {
      attached_[*fences_[i].spec.attached_to].push_back(static_cast<uint32_t>(i));
    }
  }
  motion_of_.assign(fences_.size(), -1);
}

bool FenceSet::Start(const SceneView& scene, ContentsMeter* meter) {
  // Forget any earlier state (a resync starts over).
  if (meter != nullptr) meter->Remove(held_);
  held_ = 0;
  fixed_tree_ = DynamicTree();
  attached_tree_ = DynamicTree();
  for (Fence& f : fences_) {
    f.active = false;
    f.pose = Pose{};
    f.proxy = kNullProxy;
    f.inside = absl::flat_hash_set<uint64_t>();
  }
  std::vector<Aabb> boxes;
  std::vector<uint32_t> users;
  std::vector<uint32_t> categories;
  std::vector<uint32_t> fixed;
  for (uint32_t i = 0; i < fences_.size(); ++i) {
    Fence& f = fences_[i];
    if (f.spec.attached_to.has_value()) {
      const Body* host = scene.find_body(*f.spec.attached_to);
      if (host == nullptr) continue;
      f.active = true;
      f.pose = Compose(host->pose, f.spec.pose);
      const Aabb box = Bounds(f.spec.shape, f.pose);
      magnitude_ = std::max(magnitude_, Magnitude(box));
      f.proxy = attached_tree_.CreateProxy(box, i, ~0u);
    } else {
      f.active = true;
      f.pose = f.spec.pose;
      boxes.push_back(Bounds(f.spec.shape, f.pose));
      magnitude_ = std::max(magnitude_, Magnitude(boxes.back()));
      users.push_back(i);
      categories.push_back(~0u);
      fixed.push_back(i);
    }
  }
  // The fixed fences in one binned-SAH build, queried through the 8-wide form from then on.
  std::vector<int32_t> proxies(boxes.size());
  fixed_tree_.Build(boxes, users, categories, proxies);
  fixed_tree_.Optimize();
  for (size_t k = 0; k < fixed.size(); ++k) fences_[fixed[k]].proxy = proxies[k];

  bool refused = false;
  for (Fence& f : fences_) {
    if (!f.active) continue;
    ForEachBody(scene.world, Bounds(f.spec.shape, f.pose), [&](BodyHandle handle) {
      if (refused) return;
      const Body& body = scene.world.body(handle);
      if (Tracks(f.spec, body) && BodyOverlapsShape(scene.world, body, f.spec.shape, f.pose)) {
        if (meter != nullptr && !meter->Add(1)) {
          refused = true;
          return;
        }
        f.inside.insert(body.id);
        ++held_;
      }
    });
    if (refused) return false;
  }
  return true;
}

bool FenceSet::CountCandidates(size_t n, ContentsMeter* meter) {
  if (meter != nullptr && !meter->Add(n)) return false;
  counted_candidates_ += n;
  return true;
}

void FenceSet::Forget(Fence& fence, uint64_t body, ContentsMeter* meter) {
  if (fence.inside.erase(body) == 0) return;
  --held_;
  if (meter != nullptr) meter->Remove(1);
  // A set that emptied out gives its memory back (the meter counts bodies, not slots).
  if (fence.inside.capacity() > 64 && fence.inside.size() * 4 < fence.inside.capacity()) {
    fence.inside.rehash(0);
  }
}

bool FenceSet::Apply(const AppliedBatch& batch, const SceneView& scene,
                     std::vector<WatchEvent>* events, ContentsMeter* meter) {
  events->clear();
  candidates_.clear();
  counted_candidates_ = 0;
  // Hands the batch's candidate pairs back to the meter, and their memory when it was large.
  auto finish = [&](bool ok) {
    if (meter != nullptr) meter->Remove(counted_candidates_);
    counted_candidates_ = 0;
    if (candidates_.capacity() > kKeptCandidates) candidates_ = std::vector<Candidate>();
    return ok;
  };
  bool refused = false;
  motions_.clear();
  moved_.clear();
  // Attached fences whose host the batch touched: record the motion, and give the proxy the box
  // of the whole motion for this batch, so that the queries below find every pair it passes.
  if (!attached_.empty()) {
    for (const BodyChange& change : batch.changes) {
      auto it = attached_.find(change.id);
      if (it == attached_.end()) continue;
      for (uint32_t index : it->second) {
        Fence& f = fences_[index];
        Motion m;
        m.active_before = f.active;
        m.before = f.pose;
        m.active_after = change.after.has_value();
        if (m.active_after) m.after = Compose(change.after->pose, f.spec.pose);
        m.jumped = change.replaced;
        if (m.active_after) {
          m.box = m.active_before ? MotionBox(f.spec.shape, m.before, m.after)
                                  : Bounds(f.spec.shape, m.after);
          magnitude_ = std::max(magnitude_, Magnitude(m.box));
          if (f.proxy == kNullProxy) {
            f.proxy = attached_tree_.CreateProxy(m.box, index, ~0u);
          } else {
            attached_tree_.MoveProxy(f.proxy, m.box);
          }
        } else if (m.active_before) {
          // The host is gone: everything inside leaves, and the fence holds nothing until a
          // body with the host's id comes back.
          std::vector<uint64_t> ids(f.inside.begin(), f.inside.end());
          std::sort(ids.begin(), ids.end());
          for (uint64_t id : ids) {
            events->push_back(
                WatchEvent{.kind = WatchEventKind::kExit, .watch_id = f.spec.id, .body_id = id});
          }
          held_ -= f.inside.size();
          if (meter != nullptr) meter->Remove(f.inside.size());
          f.inside = absl::flat_hash_set<uint64_t>();
          attached_tree_.DestroyProxy(f.proxy);
          f.proxy = kNullProxy;
          f.active = false;
          continue;
        }
        motion_of_[index] = static_cast<int32_t>(motions_.size());
        motions_.push_back(m);
        moved_.push_back(index);
      }
    }
  }
  // Every fence near a touched body's old-to-new box.
  for (const BodyChange& change : batch.changes) {
    // A move or filter change keeps the shape: its motion box covers both end states.
    Aabb box;
    const CollisionWorld& world = scene.world;
    if (change.before.has_value() && change.after.has_value()) {
      box = change.replaced ? Union(world.BoundsOf(*change.before), world.BoundsOf(*change.after))
                            : BodyMotionBox(world, *change.before, change.after->pose);
    } else if (change.before.has_value()) {
      box = world.BoundsOf(*change.before);
    } else if (change.after.has_value()) {
      box = world.BoundsOf(*change.after);
    } else {
      continue;
    }
    auto add = [&](uint32_t index, int32_t) {
      const FenceSpec& spec = fences_[index].spec;
      if (!(spec.attached_to.has_value() && *spec.attached_to == change.id)) {
        if (!CountCandidates(1, meter)) {
          refused = true;
          return false;
        }
        candidates_.push_back(Candidate{index, change.id, kNullBody});
      }
      return true;
    };
    // Padded like every broad phase, so a touching contact the narrow phase sees is a
    // candidate however the boxes rounded (query/query_engine.h, RoundingPad).
    box = Expand(box, RoundingPad(std::max(magnitude_, Magnitude(box))));
    fixed_tree_.QueryAabb(box, ~0u, add);
    if (!refused) attached_tree_.QueryAabb(box, ~0u, add);
    if (refused) return finish(false);
  }
  // Every untouched body near a moved fence's old-to-new box.
  for (uint32_t index : moved_) {
    ForEachBody(scene.world, motions_[motion_of_[index]].box, [&](BodyHandle handle) {
      if (refused) return;
      const uint64_t id = scene.world.body(handle).id;
      if (FindChange(batch, id) == nullptr) {
        if (!CountCandidates(1, meter)) {
          refused = true;
          return;
        }
        candidates_.push_back(Candidate{index, id, handle});
      }
    });
    if (refused) return finish(false);
  }
  std::sort(candidates_.begin(), candidates_.end(), [](const Candidate& a, const Candidate& b) {
    return a.fence != b.fence ? a.fence < b.fence : a.body < b.body;
  });
  candidates_.erase(std::unique(candidates_.begin(), candidates_.end(),
                                [](const Candidate& a, const Candidate& b) {
                                  return a.fence == b.fence && a.body == b.body;
                                }),
                    candidates_.end());
  for (const Candidate& c : candidates_) {
    if (!Evaluate(c, batch, scene, events, meter)) return finish(false);
  }
  // Moved fences take their end poses (the proxies keep their motion's fat box until they next
  // leave it).
  for (uint32_t index : moved_) {
    Fence& f = fences_[index];
    const Motion& m = motions_[motion_of_[index]];
    f.active = true;
    f.pose = m.after;
    motion_of_[index] = -1;
  }
  // The exits of vanished fences come first in `events`; restore the (fence id, body id) order.
  std::stable_sort(events->begin(), events->end(), [](const WatchEvent& a, const WatchEvent& b) {
    return a.watch_id < b.watch_id;
  });
  return finish(true);
}

bool FenceSet::Evaluate(const Candidate& c, const AppliedBatch& batch, const SceneView& scene,
                        std::vector<WatchEvent>* events, ContentsMeter* meter) {
  Fence& f = fences_[c.fence];
  // The fence before and after the batch.
  bool fence_before = f.active;
  bool fence_after = f.active;
  Pose pose_before = f.pose;
  Pose pose_after = f.pose;
  bool fence_jumped = false;
  if (motion_of_[c.fence] >= 0) {
    const Motion& m = motions_[motion_of_[c.fence]];
    fence_before = m.active_before;
    fence_after = m.active_after;
    pose_before = m.before;
    pose_after = m.after;
    fence_jumped = m.jumped;
  }
  // The body before and after the batch.
  const Body* before = nullptr;
  const Body* after = nullptr;
  bool body_jumped = false;
  if (c.handle != kNullBody) {
    before = after = &scene.world.body(c.handle);
  } else {
    const BodyChange* change = FindChange(batch, c.body);
    assert(change != nullptr);
    if (change->before.has_value()) before = &*change->before;
    if (change->after.has_value()) after = &*change->after;
    body_jumped = change->replaced;
  }
  const bool was_inside = f.inside.contains(c.body);
  const bool tracked = fence_after && after != nullptr && Tracks(f.spec, *after);
  const bool is_inside =
      tracked && BodyOverlapsShape(scene.world, *after, f.spec.shape, pose_after);
  // A body that places an asset is tested at its poses after each batch only (no sweep of a
  // mesh against a fence).
  const bool slides = tracked && before != nullptr && fence_before && !body_jumped &&
                      !fence_jumped && after->asset == kNoAsset && before->asset == kNoAsset;
  if (was_inside == is_inside && (was_inside || !slides)) return true;
  if (is_inside && !was_inside && meter != nullptr && !meter->Add(1)) return false;

  // The first contact along the slide, if any: the body's translation relative to the fence,
  // both at their rotations from before the batch.
  ShapeCastHit hit;
  bool touched = false;
  if (!was_inside && slides) {
    const Vec3 fence_shift = pose_after.position - pose_before.position;
    const Vec3 relative = (after->pose.position - before->pose.position) - fence_shift;
    touched = ShapeCast(before->shape, before->pose, relative, f.spec.shape, pose_before, &hit);
    if (touched) hit.point += fence_shift * hit.fraction;  // where the fence was at that moment
  }
  if (!was_inside && (is_inside || touched)) {
    WatchEvent enter{.kind = WatchEventKind::kEnter, .watch_id = f.spec.id, .body_id = c.body};
    if (touched) {
      enter.point = hit.point;
      enter.normal = hit.normal;
    } else {
      Penetration p;
      if (PenetrateShapeBody(scene.world, f.spec.shape, pose_after, *after, &p)) {
        enter.point = p.point;
        enter.normal = p.normal;
      }
    }
    events->push_back(enter);
  }
  if (!is_inside && (was_inside || touched)) {
    events->push_back(
        WatchEvent{.kind = WatchEventKind::kExit, .watch_id = f.spec.id, .body_id = c.body});
  }
  if (is_inside && !was_inside) {
    f.inside.insert(c.body);
    ++held_;
  } else if (!is_inside && was_inside) {
    Forget(f, c.body, meter);
  }
  return true;
}

void FenceSet::Snapshot(std::vector<FenceContents>* out) const {
  out->clear();
  out->reserve(fences_.size());
  for (const Fence& f : fences_) {
    FenceContents contents{.fence_id = f.spec.id,
                           .body_ids = std::vector<uint64_t>(f.inside.begin(), f.inside.end())};
    std::sort(contents.body_ids.begin(), contents.body_ids.end());
    out->push_back(std::move(contents));
  }
}

}  // namespace collide
