#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "query/body.h"
#include "scene/scene_observer.h"
#include "watch/watch_budget.h"
#include "watch/watch_types.h"

namespace collide {

/// A watcher's contact watches: which pairs of bodies overlap, and the begin/end events of each
/// applied batch. Contacts are decided at the poses after each batch (no sweep: a pair that
/// passes through each other within one batch reports nothing). A pair (x, y), x < y, is in a
/// watch when both bodies exist, the pair qualifies under the watch's categories, and the
/// closed shapes overlap; a begin or end is reported when that changes.
///
/// Cost of a batch: a tree query per touched body plus the exact tests of what it finds and of
/// its previous partners.
///
/// Memory: each overlapping pair counts as 2 + 2 * (contact watches) entries in a ContentsMeter
/// when one is given (the pair's two links in the partner table, and its rows in a snapshot),
/// and each candidate pair of the batch being applied as one; when the meter refuses, Start or
/// Apply stops at once and returns false, and the set must not be used again.
class ContactSet {
 public:
  /// The contact watches (ids unique).
  explicit ContactSet(std::vector<ContactWatchSpec> watches);

  /// Finds every overlapping pair in `scene` (no events), forgetting any earlier state. False
  /// when `meter` refused an entry.
  bool Start(const SceneView& scene, ContentsMeter* meter = nullptr);

  /// Applies one batch: replaces `events` with its events, sorted by (watch id, body id, other
  /// body id). False when `meter` refused an entry.
  bool Apply(const AppliedBatch& batch, const SceneView& scene, std::vector<WatchEvent>* events,
             ContentsMeter* meter = nullptr);

  /// Every pair in every watch, sorted; `scene` is the state the last Start or Apply saw.
  void Snapshot(const SceneView& scene, std::vector<ContactPair>* out) const;

  /// True when there are no contact watches (then Apply does nothing).
  bool empty() const { return watches_.empty(); }
  /// The entries counted in the meter for the pairs held.
  uint64_t held() const { return pairs_ * PairWeight(); }

 private:
  bool Relevant(const Body& body) const { return (body.category & relevant_) != 0; }
  static bool Qualifies(const ContactWatchSpec& w, const Body& x, const Body& y) {
    return ((x.category & w.category_a) != 0 && (y.category & w.category_b) != 0) ||
           ((x.category & w.category_b) != 0 && (y.category & w.category_a) != 0);
  }
  uint64_t PairWeight() const { return 2 + 2 * static_cast<uint64_t>(watches_.size()); }
  // False when the meter refused the pair.
  bool Link(uint64_t x, uint64_t y, ContentsMeter* meter);
  void Unlink(uint64_t x, uint64_t y, ContentsMeter* meter);
  bool Linked(uint64_t x, uint64_t y) const;

  // Sorted by id.
  std::vector<ContactWatchSpec> watches_;
  // The union of every watch's categories: bodies outside it are in no pair.
  uint32_t relevant_ = 0;
  // The overlapping pairs of relevant bodies, both ways (each body's partners).
  absl::flat_hash_map<uint64_t, std::vector<uint64_t>> partners_;
  std::vector<std::pair<uint64_t, uint64_t>> candidates_;
  // Pairs linked.
  uint64_t pairs_ = 0;
};

}  // namespace collide
