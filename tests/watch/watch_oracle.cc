#include "watch/watch_oracle.h"

#include <algorithm>
#include <optional>

#include "geom/bounds.h"
#include "geom/overlap.h"
#include "geom/sweep_oracle.h"

namespace collide::testing {
namespace {

using Bodies = std::map<uint64_t, WatchOracle::OracleBody>;

// The fence's world pose in a body table, if it has one there.
std::optional<Pose> FencePose(const FenceSpec& f, const Bodies& bodies) {
  if (!f.attached_to.has_value()) return f.pose;
  auto it = bodies.find(*f.attached_to);
  if (it == bodies.end()) return std::nullopt;
  const Pose& host = it->second.pose;
  return Pose{host.rotation * f.pose.rotation, TransformPoint(host, f.pose.position)};
}

bool Tracks(const FenceSpec& f, uint64_t id, const WatchOracle::OracleBody& b) {
  return (f.mask & b.category) != 0 && (b.mask & f.category) != 0 &&
         !(f.attached_to.has_value() && *f.attached_to == id);
}

bool Qualifies(const ContactWatchSpec& w, const WatchOracle::OracleBody& x,
               const WatchOracle::OracleBody& y) {
  return ((x.category & w.category_a) && (y.category & w.category_b)) ||
         ((x.category & w.category_b) && (y.category & w.category_a));
}

bool BoxesMeet(const Aabb& a, const Aabb& b) {
  return a.min.x <= b.max.x && b.min.x <= a.max.x && a.min.y <= b.max.y && b.min.y <= a.max.y &&
         a.min.z <= b.max.z && b.min.z <= a.max.z;
}

}  // namespace

WatchOracle::WatchOracle(std::vector<FenceSpec> fences, std::vector<ContactWatchSpec> contacts,
                         float eps)
    : fences_(std::move(fences)), contacts_(std::move(contacts)), eps_(eps) {
  std::sort(fences_.begin(), fences_.end(),
            [](const FenceSpec& a, const FenceSpec& b) { return a.id < b.id; });
  std::sort(contacts_.begin(), contacts_.end(),
            [](const ContactWatchSpec& a, const ContactWatchSpec& b) { return a.id < b.id; });
}

WatchOracle::Result WatchOracle::Run(const UpdateBatch& batch) const {
  Result r;
  r.bodies = bodies_;
  std::set<uint64_t> touched;
  std::set<uint64_t> jumped;
  for (const UpdateOp& op : batch.ops) {
    touched.insert(op.body_id);
    switch (op.type) {
      case UpdateOpType::kUpsert:
        jumped.insert(op.body_id);
        r.bodies[op.body_id] = OracleBody{op.shape, NormalizedPose(op.pose), op.category, op.mask};
        break;
      case UpdateOpType::kSetPose:
        r.bodies[op.body_id].pose = NormalizedPose(op.pose);
        break;
      case UpdateOpType::kSetFilter:
        r.bodies[op.body_id].category = op.category;
        r.bodies[op.body_id].mask = op.mask;
        break;
      case UpdateOpType::kRemove:
        r.bodies.erase(op.body_id);
        break;
    }
  }
  // Every fence against every body that exists before or after.
  std::set<uint64_t> ids;
  for (const auto& [id, b] : bodies_) ids.insert(id);
  for (const auto& [id, b] : r.bodies) ids.insert(id);
  for (const FenceSpec& f : fences_) {
    const std::optional<Pose> f0 = FencePose(f, bodies_);
    const std::optional<Pose> f1 = FencePose(f, r.bodies);
    const bool fence_jumped = f.attached_to.has_value() && jumped.contains(*f.attached_to);
    std::set<uint64_t>& inside = r.inside[f.id];
    auto old_inside = inside_.find(f.id);
    for (uint64_t id : ids) {
      auto b0 = bodies_.find(id);
      auto b1 = r.bodies.find(id);
      const bool was = old_inside != inside_.end() && old_inside->second.contains(id);
      const bool tracked = f1.has_value() && b1 != r.bodies.end() && Tracks(f, id, b1->second);
      const bool is = tracked && Overlap(b1->second.shape, b1->second.pose, f.shape, *f1);
      if (is) inside.insert(id);
      const bool slides =
          tracked && b0 != bodies_.end() && f0.has_value() && !jumped.contains(id) && !fence_jumped;
      bool touched_on_slide = false;
      SweepVerdict v;
      Vec3 relative{};
      if (!was && slides) {
        const Vec3 shift = f1->position - f0->position;
        relative = (b1->second.pose.position - b0->second.pose.position) - shift;
        // A box test first: the slide's bounds against the fence grown by eps.
        const OracleBody& body = b0->second;
        Aabb sweep = Bounds(body.shape, body.pose);
        const Pose end{body.pose.rotation, body.pose.position + relative};
        const Aabb end_box = Bounds(body.shape, end);
        sweep = Aabb{Min(sweep.min, end_box.min), Max(sweep.max, end_box.max)};
        if (BoxesMeet(sweep, Bounds(Inflated(f.shape, eps_), *f0))) {
          v = SampledSweep(body.shape, body.pose, relative, f.shape, *f0, eps_);
          if (v.ambiguous) r.ambiguous = true;
          touched_on_slide = v.hits;
        }
      }
      if (!was && (is || touched_on_slide)) {
        OracleEvent e;
        e.event = WatchEvent{.kind = WatchEventKind::kEnter, .watch_id = f.id, .body_id = id};
        if (touched_on_slide) {
          const Vec3 shift = f1->position - f0->position;
          e.swept = v.fraction > 0.0f;  // else a start overlap: the MTV's contact
          e.body_shape = b0->second.shape;
          e.body_pose =
              Pose{b0->second.pose.rotation,
                   b0->second.pose.position +
                       (b1->second.pose.position - b0->second.pose.position) * v.fraction};
          e.fence_shape = f.shape;
          e.fence_pose = Pose{f0->rotation, f0->position + shift * v.fraction};
        } else {
          e.body_shape = b1->second.shape;
          e.body_pose = b1->second.pose;
          e.fence_shape = f.shape;
          e.fence_pose = *f1;
        }
        r.events.push_back(e);
      }
      if (!is && (was || touched_on_slide)) {
        r.events.push_back(OracleEvent{
            .event = WatchEvent{.kind = WatchEventKind::kExit, .watch_id = f.id, .body_id = id}});
      }
    }
  }
  // Every pair of bodies, at the end poses.
  std::vector<OracleEvent> contact_events;
  for (auto x = r.bodies.begin(); x != r.bodies.end(); ++x) {
    for (auto y = std::next(x); y != r.bodies.end(); ++y) {
      if (!Overlap(x->second.shape, x->second.pose, y->second.shape, y->second.pose)) continue;
      for (const ContactWatchSpec& w : contacts_) {
        if (Qualifies(w, x->second, y->second)) r.contacts.insert({w.id, x->first, y->first});
      }
    }
  }
  for (const ContactWatchSpec& w : contacts_) {
    std::set<std::pair<uint64_t, uint64_t>> changed;
    for (const auto& [wid, a, b] : contact_pairs_) {
      if (wid == w.id && !r.contacts.contains({wid, a, b})) changed.insert({a, b});
    }
    for (const auto& [wid, a, b] : r.contacts) {
      if (wid == w.id && !contact_pairs_.contains({wid, a, b})) changed.insert({a, b});
    }
    for (const auto& [a, b] : changed) {
      const bool now = r.contacts.contains({w.id, a, b});
      r.events.push_back(OracleEvent{.event = WatchEvent{.kind = now ? WatchEventKind::kContactBegin
                                                                     : WatchEventKind::kContactEnd,
                                                         .watch_id = w.id,
                                                         .body_id = a,
                                                         .other_body_id = b}});
    }
  }
  return r;
}

std::vector<OracleEvent> WatchOracle::Preview(const UpdateBatch& batch, bool* ambiguous) const {
  Result r = Run(batch);
  *ambiguous = r.ambiguous;
  return r.events;
}

void WatchOracle::Commit(const UpdateBatch& batch) {
  Result r = Run(batch);
  bodies_ = std::move(r.bodies);
  inside_ = std::move(r.inside);
  contact_pairs_ = std::move(r.contacts);
}

WatchSnapshot WatchOracle::Snapshot() const {
  WatchSnapshot s;
  for (const FenceSpec& f : fences_) {
    FenceContents c{.fence_id = f.id};
    if (auto it = inside_.find(f.id); it != inside_.end()) {
      c.body_ids.assign(it->second.begin(), it->second.end());
    }
    s.fences.push_back(c);
  }
  for (const auto& [w, a, b] : contact_pairs_) {
    s.contacts.push_back(ContactPair{.watch_id = w, .body_id = a, .other_body_id = b});
  }
  return s;
}

}  // namespace collide::testing
