#include "query/pose_history.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "geom/bounds.h"

namespace collide {
namespace {

// The radius of the smallest ball about the pose's origin holding the shape at any rotation.
float BoundingRadius(const Shape& shape) {
  switch (shape.type) {
    case ShapeType::kBox:
      return Length(shape.box.half_extents);
    case ShapeType::kCapsule:
      return shape.capsule.half_height + shape.capsule.radius;
    case ShapeType::kSphere:
    default:
      return shape.sphere.radius;
  }
}

// Float rounding slack for a length near coordinates of magnitude `scale`: the grown boxes are
// computed in float, so every bound gets a few ulps of the largest coordinate involved.
float Slack(float scale) { return 8.0f * 1.2e-7f * scale + 1e-6f; }

float MagnitudeOf(const Aabb& b) {
  return std::max(MaxComponent(Abs(b.min)), MaxComponent(Abs(b.max)));
}

// The least d with `from` inside `to` grown by d on every side (plus rounding slack).
float ShiftBetween(const Aabb& from, const Aabb& to) {
  const float d =
      std::max(MaxComponent(Abs(from.min - to.min)), MaxComponent(Abs(from.max - to.max)));
  return d + Slack(std::max(MagnitudeOf(from), MagnitudeOf(to)));
}

}  // namespace

Pose LerpPose(const Pose& a, const Pose& b, float fraction) {
  Quat qb = b.rotation;
  // nlerp along the shorter arc: q and -q are the same rotation.
  if (Dot(a.rotation, qb) < 0.0f) qb = Quat{-qb.x, -qb.y, -qb.z, -qb.w};
  const float u = 1.0f - fraction;
  const Quat q{u * a.rotation.x + fraction * qb.x, u * a.rotation.y + fraction * qb.y,
               u * a.rotation.z + fraction * qb.z, u * a.rotation.w + fraction * qb.w};
  return Pose{.rotation = Normalize(q),
              .position = a.position + fraction * (b.position - a.position)};
}

PoseHistory::PoseHistory(uint32_t retained_ticks, uint64_t start_tick, float far_shift)
    : capacity_(std::max<uint32_t>(retained_ticks, 1)),
      far_shift_(far_shift),
      start_tick_(start_tick),
      tick_(start_tick),
      ring_(capacity_) {
  Record(tick_).tick = tick_;
}

uint64_t PoseHistory::oldest_tick() const {
  const uint64_t window_start = tick_ + 1 >= capacity_ ? tick_ + 1 - capacity_ : 0;
  return std::max(start_tick_, window_start);
}

void PoseHistory::AdvanceTo(uint64_t t) {
  assert(t >= tick_);
  if (t == tick_) return;
  // Clear the records the new ticks reuse (at most the whole ring).
  const uint64_t first = std::max(tick_ + 1, t + 1 >= capacity_ ? t + 1 - capacity_ : 0);
  for (uint64_t k = first; k <= t; ++k) {
    TickRecord& record = Record(k);
    record.tick = k;
    record.entries.clear();
    record.full.clear();
    record.side.clear();
    record.growth = 0.0f;
    record.max_lerp_slack = 0.0f;
  }
  tick_ = t;
}

void PoseHistory::EnsureSlot(BodyHandle slot) {
  const size_t need = static_cast<size_t>(slot) + 1;
  if (head_.size() < need) {
    head_.resize(need);
    generation_.resize(need, 0);
    last_side_.resize(need, 0);
  }
}

PoseHistory::Entry& PoseHistory::Touch(const CollisionWorld& world, BodyHandle slot,
                                       bool need_full) {
  EnsureSlot(slot);
  TickRecord& record = Record(tick_);
  touched_.push_back(slot);
  Ref& head = head_[slot];
  const bool alive = world.IsLive(slot);
  if (head.index >= 0 && head.tick == tick_) {
    Entry& e = record.entries[head.index];
    // Recorded already this tick: a pose-only record gains the rest of the body (unchanged
    // since the start of the tick, or the record would be full already).
    if (need_full && e.full < 0 && e.alive) {
      const Body& b = world.body(slot);
      e.full = static_cast<int32_t>(record.full.size());
      record.full.push_back(Full{
          .shape = b.shape, .id = b.id, .category = b.category, .mask = b.mask, .kind = b.kind});
    }
    return e;
  }
  Entry e;
  e.prev = head;
  e.slot = slot;
  e.generation = generation_[slot];
  e.prev_side = last_side_[slot];
  e.alive = alive;
  if (alive) {
    const Body& b = world.body(slot);
    e.pose = b.pose;
    if (need_full) {
      e.full = static_cast<int32_t>(record.full.size());
      record.full.push_back(Full{
          .shape = b.shape, .id = b.id, .category = b.category, .mask = b.mask, .kind = b.kind});
    }
  }
  head = Ref{.tick = tick_, .index = static_cast<int32_t>(record.entries.size())};
  record.entries.push_back(e);
  return record.entries.back();
}

void PoseHistory::BeforeMove(const CollisionWorld& world, BodyHandle slot) {
  if (Recording()) Touch(world, slot, /*need_full=*/false);
}

void PoseHistory::BeforeChange(const CollisionWorld& world, BodyHandle slot) {
  if (Recording()) Touch(world, slot, /*need_full=*/true);
}

void PoseHistory::AfterCreate(const CollisionWorld& world, BodyHandle slot) {
  EnsureSlot(slot);
  if (Recording()) {
    // The slot was free just before, so unless it changed earlier this tick it was empty at the
    // tick's start; Touch must see it as such, hence the record comes before the new generation.
    Ref& head = head_[slot];
    if (!(head.index >= 0 && head.tick == tick_)) {
      TickRecord& record = Record(tick_);
      Entry e;
      e.prev = head;
      e.slot = slot;
      e.generation = generation_[slot];
      e.alive = false;
      head = Ref{.tick = tick_, .index = static_cast<int32_t>(record.entries.size())};
      record.entries.push_back(e);
    }
    touched_.push_back(slot);
  }
  ++generation_[slot];
  last_side_[slot] = 0;
  (void)world;
}

void PoseHistory::SetSide(TickRecord& record, int32_t index, bool side) {
  Entry& e = record.entries[index];
  if (side == (e.side >= 0)) return;
  if (side) {
    e.side = static_cast<int32_t>(record.side.size());
    record.side.push_back(index);
  } else {
    const int32_t last = record.side.back();
    record.side[e.side] = last;
    record.entries[last].side = e.side;
    record.side.pop_back();
    e.side = -1;
  }
}

void PoseHistory::Classify(const CollisionWorld& world, BodyHandle slot) {
  TickRecord& record = Record(tick_);
  const int32_t index = head_[slot].index;
  Entry& e = record.entries[index];
  if (!e.alive) return;  // created this tick: the tree walk or a later record covers it
  const bool same = world.IsLive(slot) && generation_[slot] == e.generation;
  bool side = !same;
  if (same) {
    const Body& now = world.body(slot);
    const Shape& shape = e.full >= 0 ? record.full[e.full].shape : now.shape;
    const uint32_t category = e.full >= 0 ? record.full[e.full].category : now.category;
    const Aabb before = Bounds(shape, e.pose);
    const Aabb after = Bounds(now.shape, now.pose);
    const float shift = ShiftBetween(before, after);
    // The tree prunes by the current category bits, so a body whose bits changed is found
    // through the side list.
    side = shift > far_shift_ || category != now.category;
    SetSide(record, index, side);
    if (!side) {
      Grow(slot, now.shape, after);
      const float moved = MaxComponent(Abs(now.pose.position - e.pose.position));
      record.max_lerp_slack =
          std::max(record.max_lerp_slack,
                   moved + BoundingRadius(now.shape) + Slack(MagnitudeOf(after) + moved));
    }
    last_side_[slot] = side ? tick_ + 1 : e.prev_side;
    return;
  }
  SetSide(record, index, side);
}

void PoseHistory::Grow(BodyHandle slot, const Shape& shape, const Aabb& now) {
  // The body's states at the ends of past ticks are piecewise constant between its records: the
  // record of tick k holds its state at the end of ticks prev.tick .. k - 1. One shift per record
  // raises the growth of each tick in its range. Older than a side record, the side list has the
  // body; older than its creation, it did not exist.
  const uint64_t lo = oldest_tick();
  const uint32_t generation = generation_[slot];
  Ref ref = head_[slot];
  while (ref.index >= 0 && ref.tick > lo) {
    const TickRecord& record = Record(ref.tick);
    const Entry& e = record.entries[ref.index];
    if (!e.alive || e.generation != generation || e.side >= 0) break;
    const float shift = ShiftBetween(Bounds(shape, e.pose), now);
    const uint64_t first = e.prev.index >= 0 ? std::max(e.prev.tick, lo) : lo;
    for (uint64_t t = first; t < ref.tick; ++t) {
      TickRecord& r = Record(t);
      r.growth = std::max(r.growth, shift);
    }
    ref = e.prev;
  }
}

void PoseHistory::EndBatch(const CollisionWorld& world) {
  if (!Recording()) {
    touched_.clear();
    return;
  }
  for (BodyHandle slot : touched_) Classify(world, slot);
  touched_.clear();
}

PastBody PoseHistory::StateAt(const CollisionWorld& world, BodyHandle slot, uint64_t t) const {
  PastBody past;
  past.alive = world.IsLive(slot);
  if (static_cast<size_t>(slot) < static_cast<size_t>(world.slot_count())) {
    past.body = world.body(slot);
  }
  if (static_cast<size_t>(slot) >= head_.size()) return past;
  past.generation = generation_[slot];
  Ref ref = head_[slot];
  // Newest to oldest: each record turns the state at the end of its tick into the state at the
  // end of the tick before. Records older than the window are never reached (t >= oldest_tick).
  while (ref.index >= 0 && ref.tick > t) {
    const TickRecord& record = Record(ref.tick);
    const Entry& e = record.entries[ref.index];
    past.alive = e.alive;
    past.generation = e.generation;
    if (e.alive) {
      past.body.pose = e.pose;
      if (e.full >= 0) {
        const Full& f = record.full[e.full];
        past.body.shape = f.shape;
        past.body.id = f.id;
        past.body.category = f.category;
        past.body.mask = f.mask;
        past.body.kind = f.kind;
      }
    }
    ref = e.prev;
  }
  return past;
}

float PoseHistory::GrowthSince(uint64_t t) const {
  if (!Recording() || t >= tick_) return 0.0f;
  return Record(t).growth;
}

float PoseHistory::LerpSlackOf(uint64_t t) const {
  if (!Recording() || t > tick_) return 0.0f;
  return Record(t).max_lerp_slack * (1.0f + 1e-6f);
}

size_t PoseHistory::MemoryBytes() const {
  size_t bytes = sizeof(*this) + ring_.capacity() * sizeof(TickRecord) +
                 head_.capacity() * sizeof(Ref) + generation_.capacity() * sizeof(uint32_t) +
                 last_side_.capacity() * sizeof(uint64_t) +
                 touched_.capacity() * sizeof(BodyHandle);
  for (const TickRecord& r : ring_) {
    bytes += r.entries.capacity() * sizeof(Entry) + r.full.capacity() * sizeof(Full) +
             r.side.capacity() * sizeof(int32_t);
  }
  return bytes;
}

size_t PoseHistory::EntryCount() const {
  size_t n = 0;
  for (uint64_t k = oldest_tick() + 1; k <= tick_; ++k) n += Record(k).entries.size();
  return n;
}

}  // namespace collide
