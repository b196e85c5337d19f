#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <limits>
#include <vector>

#include "query/hit.h"

namespace collide {

/// A collector receives narrow-phase hits during a query and tells the traversal how far it
/// still needs to look (Jolt's early-out fraction, Box2D's clip):
///   float MaxDistance() const  — hits beyond this cannot change the result;
///   bool Done() const          — the query may stop now;
///   void Add(const QueryHit&)  — a hit at distance <= MaxDistance().
/// Collectors are templates' arguments, not virtual classes: the hot loop inlines them.
template <typename C>
concept HitCollector = requires(C& collector, const C& view, const QueryHit& hit) {
  { view.MaxDistance() } -> std::convertible_to<float>;
  { view.Done() } -> std::convertible_to<bool>;
  collector.Add(hit);
};

/// Which hits of one body that places an asset (a mesh or heightfield: many triangles) a
/// collector wants: the body's first in the query's order (its nearest triangle; for overlaps
/// with detail its deepest), any one, or one per triangle. A collector says so with a
/// `static constexpr BodyHits kBodyHits`; one that does not gets kFirst.
enum class BodyHits : uint8_t { kFirst, kAny, kEvery };

/// The BodyHits of collector type `C`.
template <typename C>
constexpr BodyHits BodyHitsOf() {
  if constexpr (requires { C::kBodyHits; }) {
    return C::kBodyHits;
  } else {
    return BodyHits::kFirst;
  }
}

/// Keeps the first hit in (distance, id, triangle) order.
class ClosestHitCollector {
 public:
  static constexpr BodyHits kBodyHits = BodyHits::kFirst;
  explicit ClosestHitCollector(float max_distance) : max_distance_(max_distance) {}

  float MaxDistance() const { return max_distance_; }
  bool Done() const { return false; }
  void Add(const QueryHit& hit) {
    if (!has_hit_ || HitBefore(hit, hit_)) {
      hit_ = hit;
      has_hit_ = true;
      // Ties at the same distance are still visited so the smaller id can win.
      max_distance_ = hit.distance;
    }
  }

  bool has_hit() const { return has_hit_; }
  const QueryHit& hit() const { return hit_; }

 private:
  float max_distance_;
  bool has_hit_ = false;
  QueryHit hit_{};
};

/// Stops at the first hit found (not necessarily the closest).
class AnyHitCollector {
 public:
  static constexpr BodyHits kBodyHits = BodyHits::kAny;
  explicit AnyHitCollector(float max_distance) : max_distance_(max_distance) {}

  float MaxDistance() const { return max_distance_; }
  bool Done() const { return has_hit_; }
  void Add(const QueryHit& hit) {
    if (!has_hit_) {
      hit_ = hit;
      has_hit_ = true;
    }
  }

  bool has_hit() const { return has_hit_; }
  const QueryHit& hit() const { return hit_; }

 private:
  float max_distance_;
  bool has_hit_ = false;
  QueryHit hit_{};
};

/// Keeps the best `max_hits` hits in (distance, id, triangle) order; `truncated()` tells whether
/// more existed. Once more than `max_hits` were seen, the search range shrinks to the worst kept
/// hit.
class AllHitsCollector {
 public:
  static constexpr BodyHits kBodyHits = BodyHits::kEvery;
  /// `out` receives the hits (cleared first); its capacity is reused across queries.
  AllHitsCollector(float max_distance, size_t max_hits, std::vector<QueryHit>* out)
      : max_distance_(max_distance), max_hits_(max_hits), hits_(out) {
    hits_->clear();
  }

  float MaxDistance() const { return max_distance_; }
  bool Done() const { return max_hits_ == 0 && truncated_; }
  void Add(const QueryHit& hit) {
    if (hits_->size() < max_hits_) {
      hits_->push_back(hit);
      std::push_heap(hits_->begin(), hits_->end(), HitBefore);
      return;
    }
    // One hit more than fits: the result is truncated for certain, so from now on only hits
    // before the worst kept one matter and the search range may shrink to it.
    truncated_ = true;
    if (max_hits_ == 0) return;
    if (HitBefore(hit, hits_->front())) {
      // Replace the worst kept hit (the heap's top under HitBefore).
      std::pop_heap(hits_->begin(), hits_->end(), HitBefore);
      hits_->back() = hit;
      std::push_heap(hits_->begin(), hits_->end(), HitBefore);
    }
    max_distance_ = hits_->front().distance;
  }

  /// Sorts the kept hits by (distance, id, triangle); call once after the query.
  void Finish() { std::sort_heap(hits_->begin(), hits_->end(), HitBefore); }
  bool truncated() const { return truncated_; }

 private:
  float max_distance_;
  size_t max_hits_;
  std::vector<QueryHit>* hits_;
  bool truncated_ = false;
};

}  // namespace collide
