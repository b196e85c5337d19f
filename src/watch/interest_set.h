#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "scene/scene_observer.h"
#include "watch/body_grid.h"
#include "watch/interest_rules.h"
#include "watch/interest_types.h"
#include "watch/scene_mirror.h"
#include "watch/watch_budget.h"

namespace collide {

/// One interest stream's observers and, per observer, its set of relevant bodies, kept after
/// every applied batch (the rules: interest_rules.h). Each batch's result is exactly what a
/// brute force over every body gives, with the hysteresis of the sets before it.
///
/// Cost of a batch. Only the observers whose set may change are evaluated again ("dirty"):
/// those whose host the batch touched, and those within their leave radius of a touched body's
/// position before or after the batch (found through a hash grid of the observers' positions);
/// when the batch touched at least half as many bodies as there are observers, every observer.
/// An evaluation searches the mirror's BodyGrid around the observer: first within a radius
/// guessed from the distance of its farthest member last time (when its set was full) plus a
/// slack that adapts to how far bodies move between batches, which holds its max_relevant
/// nearest eligible bodies in the common case, else within its leave radius; the nearest are
/// kept by selection on (distance, id) (split at last time's farthest distance, the few on the
/// wrong side moved across), the candidates bounded by 4 * max_relevant + 64 at any time. No id
/// is hashed: a set keeps the mirror slot of each member, members are marked per slot (in an
/// array of the evaluating thread) for the hysteresis and the delta, and the slots are trusted
/// while the mirror's layout (SceneMirror::layout) is the same, else found again by id.
///
/// Memory: per observer its spec and state (about 300 bytes) and its set (12 bytes per body,
/// at most max_relevant); per thread that evaluates sets, 4 bytes per slot of the largest
/// mirror; the set entries are counted in a ContentsMeter when one is given (one
/// entry per relevant body): when it refuses, the call returns false and the set must not be
/// used again. Not thread-safe.
class InterestSet {
 public:
  /// No slot (a body or host that does not exist).
  static constexpr uint32_t kNoSlot = UINT32_MAX;

  /// One observer's change, coalesced from a client's messages.
  struct Change {
    uint64_t id = 0;
    /// The new spec (validated), or none: the observer is removed.
    std::optional<ObserverSpec> spec = std::nullopt;
    /// The observer was removed since the set last saw it: it starts afresh (a full set) rather
    /// than changing.
    bool reset = false;
  };

  InterestSet() = default;
  InterestSet(InterestSet&&) = default;
  InterestSet& operator=(InterestSet&&) = default;

  /// Applies `changes` (sorted by id, each id once) at `mirror`'s state (which must keep its
  /// grid): appends to `out` a delta for each new observer (full), and for each changed one
  /// whose set changed. A removal of an id not held does nothing. False when `meter` refused.
  bool ApplyChanges(std::span<const Change> changes, const SceneMirror& mirror, InterestUpdate* out,
                    ContentsMeter* meter = nullptr);
  /// Evaluates every observer again at `mirror` (a start or a resync: the batches in between
  /// were not seen; the sets held give the hysteresis), without deltas. False when `meter`
  /// refused.
  bool Recompute(const SceneMirror& mirror, ContentsMeter* meter = nullptr);
  /// Applies one batch, which produced `mirror`'s state: appends to `out` the delta of each
  /// observer whose set changed, in observer id order. False when `meter` refused.
  bool Apply(const AppliedBatch& batch, const SceneMirror& mirror, InterestUpdate* out,
             ContentsMeter* meter = nullptr);
  /// Whether Apply reads the change records of a batch that touched `touched` bodies (not when
  /// it evaluates every observer: a batch that touched at least half as many bodies as there are
  /// observers).
  bool ReadsChanges(size_t touched) const { return !index_.empty() && !EvaluatesAll(touched); }

  /// Every observer's set, by observer id (`out`'s sets and ids are replaced).
  void Snapshot(InterestSnapshot* out) const;
  /// The set of observer `id` (ascending), or none when there is no such observer.
  std::optional<std::vector<uint64_t>> SetOf(uint64_t id) const;
  /// Where observer `id` was at its last evaluation (inactive when unknown or without a host).
  ObserverFrame FrameOf(uint64_t id) const;

  /// Observers held.
  size_t size() const { return index_.size(); }
  /// Bodies in all sets (the entries counted in the meter).
  uint64_t held() const { return held_; }
  /// Observers evaluated by the last Apply (how many were dirty).
  size_t last_evaluated() const { return last_evaluated_; }
  /// Bytes held by the observers, their sets and the scratch.
  size_t MemoryBytes() const;

 private:
  // When the batch touched so many bodies that evaluating every observer costs less than finding
  // those it may change, every one is evaluated.
  bool EvaluatesAll(size_t touched) const { return 2 * touched >= index_.size(); }
  struct Observer {
    ObserverSpec spec;
    ObserverRules rules;
    ObserverFrame frame;
    /// The relevant body ids, in no order, and beside each the mirror slot its body was in at
    /// the last evaluation (checked against the mirror before use: slots are reused).
    std::vector<uint64_t> set;
    std::vector<uint32_t> set_slots;
    /// The squared distance of the farthest member when the set was full, else +inf.
    float kth2 = 0.0f;
    /// How far beyond that distance the next search starts (length units).
    float slack = 0.0f;
    /// The host's mirror slot at the last evaluation (kNoSlot: none; checked before use).
    uint32_t host_slot = kNoSlot;
    /// The mirror's slot layout (SceneMirror::layout) set_slots were found in: while it holds,
    /// they still hold those bodies.
    uint64_t layout = 0;
    /// The cell of the observers' hash grid it is listed in (while active).
    bool listed = false;
    int64_t cell[3] = {0, 0, 0};
    /// The stamp of the batch it was last marked dirty in.
    uint64_t stamp = 0;
    bool live = false;
  };
  struct CellKey {
    int64_t x, y, z;
    bool operator==(const CellKey&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const CellKey& k) {
      return H::combine(std::move(h), k.x, k.y, k.z);
    }
  };

  uint32_t AddObserver(const ObserverSpec& spec);
  void RemoveObserver(uint32_t slot, ContentsMeter* meter);
  void Host(uint32_t slot, bool add);
  // Evaluates observer `slot` at `mirror`; appends its delta to `out` when its set changed (or
  // always, as a full set, with `full`). False when the meter refused.
  bool Evaluate(uint32_t slot, const SceneMirror& mirror, bool full, InterestUpdate* out,
                ContentsMeter* meter);
  // Evaluates the observers of `by_id` (slots in observer id order), appending their deltas to
  // `out` in that order.
  bool EvaluateEach(const std::vector<uint32_t>& by_id, const SceneMirror& mirror,
                    InterestUpdate* out, ContentsMeter* meter);
  // Gathers the eligible bodies within `bound2` of the observer as candidates, keeping the best
  // 4 * max_relevant + 64 at most. `host`: the host's slot (kNoSlot: none).
  void Gather(const Observer& o, const BodyGrid& grid, float bound2, uint32_t host);
  // Keeps (in no order) the `keep` candidates smallest by (d2, id); `guess2`: about the d2 of
  // the last one kept, or +inf.
  void KeepNearest(size_t keep, float guess2);
  // Appends a candidate (room for it was made).
  void AddCandidate(float d2, uint32_t slot, uint64_t id) {
    keys_[found_] = uint64_t{std::bit_cast<uint32_t>(d2)} << 32 | found_;
    found_ids_[found_] = id;
    found_slots_[found_] = slot;
    ++found_;
  }
  // Makes room for `more` candidates.
  void Reserve(size_t more);
  // The squared distance of candidate `i`, as bits.
  uint32_t BitsOf(size_t i) const { return static_cast<uint32_t>(keys_[i] >> 32); }
  // Marks the members of `o`'s set in marks_ (with epoch_), bringing their slots up to date
  // (kNoSlot: the body is gone).
  void MarkMembers(Observer& o, const SceneMirror& mirror);
  bool Member(uint32_t slot) const { return marks_[slot] == epoch_; }
  // The observers' hash grid.
  CellKey KeyOf(const Vec3& p) const;
  void List(uint32_t slot);
  void Unlist(uint32_t slot);
  void Relist();
  // Marks the observers within their leave radius of `p`; false once `budget` tests ran out.
  bool MarkNear(const Vec3& p, int64_t* budget);
  void Mark(uint32_t slot);
  const std::vector<uint32_t>& Order();

  std::vector<Observer> observers_;
  std::vector<uint32_t> free_;
  absl::flat_hash_map<uint64_t, uint32_t> index_;
  // Host body id -> the slots of the observers attached to it.
  absl::flat_hash_map<uint64_t, std::vector<uint32_t>> hosts_;
  // Live slots by observer id (rebuilt when observers come or go).
  std::vector<uint32_t> order_;
  bool order_stale_ = true;
  // The active observers by position, in cells of observer_cell_ (at least the largest leave
  // radius of any observer listed, so one ring of cells around a point holds every observer
  // whose leave radius reaches it).
  double observer_cell_ = 0.0;
  absl::flat_hash_map<CellKey, std::vector<uint32_t>> cells_;
  uint64_t stamp_ = 0;
  std::vector<uint32_t> dirty_;
  // The candidates of a search: found_ of them, each a key (the bits of its squared distance,
  // then its index: candidates order by distance as the keys do), an id and a slot by index.
  size_t found_ = 0;
  std::vector<uint64_t> keys_, part_;
  std::vector<uint64_t> found_ids_, kept_ids_;
  std::vector<uint32_t> found_slots_, kept_slots_;
  std::vector<uint64_t> next_;
  std::vector<uint32_t> next_slots_;
  // While an observer is evaluated: per mirror slot, epoch_ while the body in it is a member of
  // its set, epoch_ + 1 once it is known to stay; anything else: not a member (the thread's
  // array, interest_set.cc).
  uint32_t* marks_ = nullptr;
  uint32_t epoch_ = 0;
  // EvaluateEach's order (grid cell, slot), its deltas in that order, and per slot where its
  // delta and ids are there (-1: none).
  std::vector<std::pair<uint32_t, uint32_t>> visit_;
  InterestUpdate scratch_;
  std::vector<int32_t> delta_at_;
  std::vector<uint32_t> ids_at_;
  // While every observer is evaluated, the observers' grid is left alone (listing_stale_: it
  // is rebuilt when next needed).
  bool defer_listing_ = false;
  bool listing_stale_ = false;
  uint64_t held_ = 0;
  size_t last_evaluated_ = 0;
};

}  // namespace collide
