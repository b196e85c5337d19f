#include "history/pose_history.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "geom/bounds.h"

namespace collide {
namespace {

// Float rounding slack for a length near coordinates of magnitude `scale`: the grown boxes are
// computed in float, so every bound gets a few ulps of the largest coordinate involved.
float Slack(float scale) { return 8.0f * 1.2e-7f * scale + 1e-6f; }

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

PoseHistory::PoseHistory(uint32_t retained_ticks, uint64_t start_tick, uint32_t segment_ticks)
    : capacity_(std::max<uint32_t>(retained_ticks, 1)),
      segment_ticks_(segment_ticks > 0 ? segment_ticks : std::clamp<uint32_t>(capacity_ / 8, 1, 8)),
      start_tick_(start_tick),
      tick_(start_tick),
      base_(start_tick),
      ring_(capacity_) {
  assert(capacity_ < kRebaseSpan);
  Record(tick_).tick = tick_;
}

uint64_t PoseHistory::oldest_tick() const {
  const uint64_t window_start = tick_ + 1 >= capacity_ ? tick_ + 1 - capacity_ : 0;
  return std::max(start_tick_, window_start);
}

void PoseHistory::AdvanceTo(uint64_t t) {
  assert(t >= tick_ && t <= kMaxTick);
  if (t == tick_) return;
  // Clear the records the new ticks reuse: those of ticks t - n + 1 .. t, where n is the jump
  // capped at the ring's size (a jump of any length costs at most one pass over the ring). A
  // slot whose oldest held entry goes holds the next one from now on; the dropped records are
  // taken oldest first, so that the next one is never in a record dropped before.
  const uint64_t n = std::min<uint64_t>(t - tick_, capacity_);
  const uint64_t first = t - (n - 1);
  std::vector<TickRecord*> dropped;
  dropped.reserve(static_cast<size_t>(n));
  for (uint64_t i = 0; i < n; ++i) dropped.push_back(&Record(first + i));
  std::sort(dropped.begin(), dropped.end(),
            [](const TickRecord* a, const TickRecord* b) { return a->tick < b->tick; });
  for (const TickRecord* record : dropped) {
    for (size_t j = 0; j < record->entries.size(); ++j) {
      const Entry& e = record->entries[j];
      Ref& tail = tail_[e.slot];
      if (tail.mark == Mark(record->tick) && tail.index == static_cast<int32_t>(j)) tail = e.next;
    }
  }
  for (uint64_t i = 0; i < n; ++i) {
    TickRecord& record = Record(first + i);
    record.tick = first + i;
    record.entries.clear();
    record.full.clear();
    record.max_lerp_slack = 0.0f;
  }
  ReleaseBurstCapacity(first, n);
  tick_ = t;
  if (tick_ - base_ >= kRebaseSpan) Rebase();
  // A segment closed by a tick of bulk creations takes no change after that tick: its scratch
  // goes now rather than when the next change starts a segment.
  if (!segments_.empty() && segments_.back().ClosedBefore(tick_)) SealNewest();
  // A segment older than one whose start covers the oldest retained tick answers no query.
  const uint64_t oldest = oldest_tick();
  while (segments_.size() >= 2 && segments_[1].start() <= oldest + 1) segments_.pop_front();
  // No change since the oldest retained tick: every retained state is the current one, which the
  // world's trees index, so the segments (say a load's index of the bodies it added) would answer
  // nothing the world does not.
  if (!segments_.empty() && last_change_tick_ < oldest) segments_.clear();
}

void PoseHistory::ReleaseBurstCapacity(uint64_t first, uint64_t n) {
  // A record reused for a new tick keeps its capacity, so that a steady stream of changes reuses
  // it without allocating. Capacity far above what the retained ticks use is a burst's (a load
  // records one entry per body it creates) and is given back: else the burst would hold its
  // memory for as long as the scene lives.
  size_t peak_entries = 0;
  size_t peak_full = 0;
  bool measured = false;
  for (uint64_t i = 0; i < n; ++i) {
    TickRecord& record = Record(first + i);
    if (record.entries.capacity() <= kKeptRecordCapacity &&
        record.full.capacity() <= kKeptRecordCapacity) {
      continue;
    }
    if (!measured) {
      for (const TickRecord& r : ring_) {
        peak_entries = std::max(peak_entries, r.entries.size());
        peak_full = std::max(peak_full, r.full.size());
      }
      measured = true;
    }
    if (record.entries.capacity() > std::max(kKeptRecordCapacity, 2 * peak_entries)) {
      std::vector<Entry>().swap(record.entries);
      record.entries.reserve(peak_entries);
    }
    if (record.full.capacity() > std::max(kKeptRecordCapacity, 2 * peak_full)) {
      std::vector<Full>().swap(record.full);
      record.full.reserve(peak_full);
    }
  }
}

void PoseHistory::EnsureSlot(BodyHandle slot) {
  const size_t need = static_cast<size_t>(slot) + 1;
  if (head_.size() < need) {
    head_.resize(need);
    tail_.resize(need);
    generation_.resize(need, 0);
    full_at_.resize(need, 0);
  }
}

void PoseHistory::EnsureSegment(const CollisionWorld& world) {
  if (!segments_.empty()) {
    const HistorySegment& newest = segments_.back();
    if (tick_ < newest.start() + segment_ticks_ && !newest.ClosedBefore(tick_)) return;
  }
  SealNewest();
  segments_.emplace_back(world, generation_, tick_);
  created_in_segment_ = 0;
}

void PoseHistory::SealNewest() {
  if (segments_.empty()) return;
  segments_.back().Seal([&](BodyHandle slot, uint32_t /*generation*/) {
    return static_cast<size_t>(slot) < head_.size() ? EncodeAnchor(head_[slot]) : 0;
  });
}

bool PoseHistory::CreatedThisTick(BodyHandle slot) const {
  const Ref& head = head_[slot];
  if (!(head.index >= 0 && head.mark == Mark(tick_))) return BornThisTick(slot);
  const Entry& e = Record(tick_).entries[head.index];
  return !e.alive || e.generation != generation_[slot];
}

void PoseHistory::Touch(const CollisionWorld& world, BodyHandle slot, bool need_full) {
  EnsureSegment(world);
  last_change_tick_ = tick_;
  EnsureSlot(slot);
  const uint32_t now = Mark(tick_);
  // A record of more than a move replaces the slot's tick of birth in full_at_: the birth gets
  // its record first (unless it was this tick, which the branch below keeps).
  if (need_full && (full_at_[slot] & kBorn) != 0 && !BornThisTick(slot)) {
    RecordBirth(slot);
  }
  TickRecord& record = Record(tick_);
  touched_.push_back(slot);
  Ref& head = head_[slot];
  const bool alive = world.IsLive(slot);
  if (head.index >= 0 && head.mark == now) {
    Entry& e = record.entries[head.index];
    // Recorded already this tick: a pose-only record gains the rest of the body (unchanged
    // since the start of the tick, or the record would be full already).
    if (need_full) full_at_[slot] = now;
    if (need_full && e.full < 0 && e.alive) {
      const Body& b = world.body(slot);
      e.full = static_cast<int32_t>(record.full.size());
      record.full.push_back(Full::Of(b));
    }
    return;
  }
  if (BornThisTick(slot)) {
    // Created this tick with no record (AfterCreate): the slot was empty at the tick's start,
    // which full_at_ says already.
    return;
  }
  Entry e;
  e.slot = slot;
  e.generation = generation_[slot];
  e.alive = alive;
  if (need_full) full_at_[slot] = now;
  if (alive) {
    const Body& b = world.body(slot);
    e.pose = b.pose;
    if (need_full) {
      e.full = static_cast<int32_t>(record.full.size());
      record.full.push_back(Full::Of(b));
    }
  }
  Push(slot, e);
}

void PoseHistory::Push(BodyHandle slot, const Entry& entry) {
  TickRecord& record = Record(tick_);
  Ref& head = head_[slot];
  const Ref ref{.mark = Mark(tick_), .index = static_cast<int32_t>(record.entries.size())};
  record.entries.push_back(entry);
  record.entries.back().prev = head;
  if (Held(head)) Record(head).entries[head.index].next = ref;
  if (tail_[slot].index < 0) tail_[slot] = ref;
  head = ref;
}

void PoseHistory::RecordBirth(BodyHandle slot) {
  const uint64_t born = TickOf(full_at_[slot] & ~kBorn);
  full_at_[slot] &= ~kBorn;
  if (born < oldest_tick()) return;  // no retained tick is before it
  // The first body created with no record: its slot was empty at the start of `born`. Every
  // record of the slot is of that body (a later creation would have made this one first), so
  // this one goes before them all, at the end of its tick's records.
  Ref& tail = tail_[slot];
  Entry e;
  e.slot = slot;
  e.generation = GenerationBeforeFirst(slot);
  e.alive = false;
  e.next = Held(tail) ? tail : Ref{};
  TickRecord& record = Record(born);
  const Ref ref{.mark = Mark(born), .index = static_cast<int32_t>(record.entries.size())};
  record.entries.push_back(e);
  if (Held(tail)) {
    Record(tail).entries[tail.index].prev = ref;
  } else {
    head_[slot] = ref;
  }
  tail = ref;
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
    EnsureSegment(world);
    last_change_tick_ = tick_;
    // The slot was free just before, so unless it changed earlier this tick it was empty at the
    // tick's start; Touch must see it as such, hence the record comes before the new generation.
    // A slot with no record in the window needs none: full_at_ keeps the tick with kBorn, which
    // says it was empty before (a load records nothing per body but that tick).
    const Ref& head = head_[slot];
    const uint32_t now = Mark(tick_);
    full_at_[slot] = now;
    if (!(head.index >= 0 && head.mark == now)) {
      if (Held(head)) {
        Entry e;
        e.slot = slot;
        e.generation = generation_[slot];
        e.alive = false;
        Push(slot, e);
      } else {
        full_at_[slot] = now | kBorn;
      }
    }
    touched_.push_back(slot);
    ++created_in_segment_;
  }
  ++generation_[slot];
}

void PoseHistory::Classify(const CollisionWorld& world, BodyHandle slot) {
  if (!world.IsLive(slot)) return;  // removed: its states are in the index already
  const Body& now = world.body(slot);
  const Aabb box = world.BoundsOf(now);
  const uint32_t generation = generation_[slot];
  HistorySegment& segment = segments_.back();
  // A segment closed this tick answers no tick a body created in it is alive at.
  const bool created = CreatedThisTick(slot);
  if (!(created && segment.closed())) segment.Include(slot, generation, box, now.category);
  // Interpolation from the end of the tick before: a body created this tick has no pose there.
  if (created) return;
  TickRecord& record = Record(tick_);
  const Entry& e = record.entries[head_[slot].index];
  const Quat& a = e.pose.rotation;
  const Quat& b = now.pose.rotation;
  const bool same_rotation = (a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w) ||
                             (a.x == -b.x && a.y == -b.y && a.z == -b.z && a.w == -b.w);
  const float radius = world.BoundingRadiusOf(now);
  float slack;
  if (same_rotation && e.full < 0) {
    // A pure translation: every lerped box lies in the union of the boxes at both ends, which
    // the segment answering the tick before holds (see SegmentFor), up to rounding.
    slack = Slack(Magnitude(box) + radius);
  } else {
    // Otherwise the lerped pose lies within `moved` of the pose at the tick before (whose box
    // holds the pose's origin) and the shape within its bounding radius of that.
    const float moved = MaxComponent(Abs(now.pose.position - e.pose.position));
    float before = radius;
    if (e.full >= 0) {
      Body then = now;
      record.full[e.full].CopyTo(then);
      before = world.BoundingRadiusOf(then);
    }
    slack = moved + std::max(radius, before) + Slack(Magnitude(box) + moved + radius);
  }
  record.max_lerp_slack = std::max(record.max_lerp_slack, slack);
}

void PoseHistory::EndBatch(const CollisionWorld& world) {
  if (!Recording()) {
    touched_.clear();
    return;
  }
  // Bulk creations close the segment: the next one, started at the next change after this tick,
  // copies the created bodies with the rest, so this one need not index them (see
  // kCloseAfterCreated).
  if (!segments_.empty()) {
    HistorySegment& segment = segments_.back();
    if (!segment.closed() &&
        created_in_segment_ > std::max(kCloseAfterCreated, segment.CopiedCount() / 2)) {
      segment.Close(tick_);
    }
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
  if (BornAfter(slot, t)) return BeforeBirth(slot);
  Ref ref = head_[slot];
  // Newest to oldest: each record turns the state at the end of its tick into the state at the
  // end of the tick before. Records older than the window are never reached (t >= oldest_tick).
  const uint32_t mark = Mark(t);
  while (ref.index >= 0 && ref.mark > mark) {
    const TickRecord& record = Record(ref);
    const Entry& e = record.entries[ref.index];
    past.alive = e.alive;
    past.generation = e.generation;
    if (e.alive) {
      past.body.pose = e.pose;
      if (e.full >= 0) record.full[e.full].CopyTo(past.body);
    }
    ref = e.prev;
  }
  return past;
}

PastBody PoseHistory::StateFrom(const CollisionWorld& world, BodyHandle slot, uint64_t t,
                                uint64_t anchor) const {
  if (anchor == kUnknownAnchor || static_cast<size_t>(slot) >= head_.size()) {
    return StateAt(world, slot, t);
  }
  if (BornAfter(slot, t)) return BeforeBirth(slot);
  const bool open = anchor == HistorySegment::kOpen;
  // The slot's newest entry when the segment was sealed (now for an open segment).
  const Ref start = open ? head_[slot] : DecodeAnchor(anchor);
  // Find the slot's oldest entry after t: its undo record is the state at the end of t.
  const uint32_t mark = Mark(t);
  Ref after;
  if (start.index >= 0 && start.mark > mark) {
    // Back over the entries of the segment after t.
    Ref ref = start;
    while (ref.index >= 0 && ref.mark > mark) {
      after = ref;
      ref = Record(ref).entries[ref.index].prev;
    }
  } else if (!open) {
    // No change between t and the seal: the oldest change after t is the first after the seal,
    // the one after `start` (or the oldest held when `start` was dropped or there was none).
    after = Held(start) ? Record(start).entries[start.index].next : tail_[slot];
    // Every entry after `start` is newer than the seal but one: a creation's record written
    // later (RecordBirth) goes before the slot's oldest, at its own tick.
    while (after.index >= 0 && after.mark <= mark) after = Record(after).entries[after.index].next;
  }
  PastBody past;
  if (after.index < 0) {
    // No change since t.
    past.alive = world.IsLive(slot);
    if (past.alive) past.body = world.body(slot);
    past.generation = generation_[slot];
    return past;
  }
  const TickRecord& record = Record(after);
  const Entry& e = record.entries[after.index];
  past.alive = e.alive;
  past.generation = e.generation;
  if (!e.alive) return past;
  if (e.full >= 0) {
    record.full[e.full].CopyTo(past.body);
  } else if ((full_at_[slot] & ~kBorn) > mark) {
    // The rest of the body is in a later record.
    return StateAt(world, slot, t);
  } else {
    // Unchanged since t but for the pose: the body lives on.
    past.body = world.body(slot);
  }
  past.body.pose = e.pose;
  return past;
}

PastBody PoseHistory::BeforeBirth(BodyHandle slot) const {
  // The slot was empty from the oldest retained tick until its tick of birth, where the first
  // body of its records was created (every later body's creation has a record).
  PastBody past;
  past.generation = GenerationBeforeFirst(slot);
  return past;
}

uint32_t PoseHistory::GenerationBeforeFirst(BodyHandle slot) const {
  const Ref& tail = tail_[slot];
  return (Held(tail) ? Record(tail).entries[tail.index].generation : generation_[slot]) - 1;
}

void PoseHistory::Rebase() {
  // Every ref and mark is re-encoded against the oldest retained tick; those of ticks no longer
  // held become none (a mark of a dropped tick could otherwise alias a retained one later).
  const uint64_t base = oldest_tick();
  auto rebased = [&](const Ref& ref) {
    return Held(ref)
               ? Ref{.mark = static_cast<uint32_t>(TickOf(ref.mark) - base + 1), .index = ref.index}
               : Ref{};
  };
  for (size_t s = 0; s < head_.size(); ++s) {
    head_[s] = rebased(head_[s]);
    tail_[s] = rebased(tail_[s]);
    const uint32_t mark = full_at_[s] & ~kBorn;
    full_at_[s] = mark == 0 || TickOf(mark) < base
                      ? 0
                      : static_cast<uint32_t>(TickOf(mark) - base + 1) | (full_at_[s] & kBorn);
  }
  for (TickRecord& record : ring_) {
    for (Entry& e : record.entries) {
      e.prev = rebased(e.prev);
      e.next = rebased(e.next);
    }
  }
  for (HistorySegment& segment : segments_) {
    segment.RewriteAnchors([&](uint64_t anchor) {
      if (anchor == kUnknownAnchor) return anchor;
      return EncodeAnchor(rebased(DecodeAnchor(anchor)));
    });
  }
  base_ = base;
}

uint64_t PoseHistory::EncodeAnchor(const Ref& ref) {
  if (ref.index < 0) return 0;
  if (ref.index >= (1 << 24) - 1) return kUnknownAnchor;
  return uint64_t{ref.mark} << 24 | static_cast<uint64_t>(ref.index + 1);
}

PoseHistory::Ref PoseHistory::DecodeAnchor(uint64_t anchor) {
  return Ref{.mark = static_cast<uint32_t>(anchor >> 24),
             .index = static_cast<int32_t>(anchor & 0xffffff) - 1};
}

const HistorySegment* PoseHistory::SegmentFor(uint64_t t) const {
  if (segments_.empty()) return nullptr;
  // The newest segment started by the tick after t: it holds the states at the end of t (taken
  // at the end of its start - 1 or later) and of t + 1 (the next one starts after t + 1), so
  // also every interpolated pose up to the lerp slack. Ticks before the oldest segment saw no
  // change until it started, so that segment holds them too.
  size_t i = segments_.size() - 1;
  while (i > 0 && segments_[i].start() > t + 1) --i;
  if (segments_[i].Answers(t)) return &segments_[i];
  // Closed at or before t (by a tick c <= t of bulk creations): nothing changed from c + 1 until
  // the next segment started, so its copy holds the states at the end of t and t + 1; with no
  // next segment nothing changed since c, and the world's trees hold them.
  return i + 1 < segments_.size() ? &segments_[i + 1] : nullptr;
}

float PoseHistory::LerpSlackOf(uint64_t t) const {
  if (!Recording() || t > tick_) return 0.0f;
  return Record(t).max_lerp_slack * (1.0f + 1e-6f);
}

size_t PoseHistory::MemoryBytes() const {
  size_t bytes = sizeof(*this) + ring_.capacity() * sizeof(TickRecord) +
                 head_.capacity() * sizeof(Ref) + tail_.capacity() * sizeof(Ref) +
                 generation_.capacity() * sizeof(uint32_t) +
                 full_at_.capacity() * sizeof(uint32_t) + touched_.capacity() * sizeof(BodyHandle);
  for (const TickRecord& r : ring_) {
    bytes += r.entries.capacity() * sizeof(Entry) + r.full.capacity() * sizeof(Full);
  }
  return bytes + IndexBytes();
}

size_t PoseHistory::IndexBytes() const {
  size_t bytes = 0;
  for (const HistorySegment& segment : segments_) bytes += segment.MemoryBytes();
  return bytes;
}

size_t PoseHistory::EntryCount() const {
  size_t n = 0;
  // Every retained tick but the oldest (at most the ring's size).
  for (uint64_t k = oldest_tick(); k < tick_; ++k) n += Record(k + 1).entries.size();
  return n;
}

}  // namespace collide
