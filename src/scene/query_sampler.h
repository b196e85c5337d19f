#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "base/mutex.h"
#include "geom/vec3.h"
#include "query/batch.h"
#include "query/hit.h"

namespace collide {

class Scene;

/// One answered ray or sphere cast, as a reader (the browser viewer) draws it.
struct QuerySample {
  /// Position in the scene's sample sequence (from 1, no gaps).
  uint64_t sequence = 0;
  /// The version the query read.
  uint64_t version = 0;
  /// False: a ray cast; true: a sphere cast of `radius`.
  bool sphere = false;
  Vec3 origin{};
  /// Unit.
  Vec3 direction{};
  float max_distance = 0.0f;
  float radius = 0.0f;
  std::optional<uint64_t> at_tick{};
  /// The first hit's body and distance, when it hit.
  std::optional<uint64_t> hit_id{};
  float hit_distance = 0.0f;
};

/// The samples a reader took after its cursor, and how many it missed.
struct SampledQueries {
  std::vector<QuerySample> samples;
  /// Samples after the cursor that the ring no longer held.
  uint64_t dropped = 0;
  /// The cursor for the next call.
  uint64_t next = 0;
};

/// A bounded sample of the ray and sphere casts answered on the scenes some reader follows (the
/// browser viewer's fading rays): at most kMaxPerSecond per scene and second (the first casts of
/// each second; a batch larger than what is left is taken evenly), the latest kMaxKept per scene
/// kept. Nothing is taken for a scene no reader follows, and when no scene is followed an
/// offer costs one relaxed atomic load. Thread-safe; keyed by the scene's address, which is
/// stable while a reader follows it (the reader holds the scene). The server owns one and hands
/// it to whoever answers queries (the rpcs, the viewer's own casts: they offer what
/// AnswerQueries answered) and to the viewer's streams (they follow and read); the query path
/// below the server never sees it.
class QuerySampler {
 public:
  static constexpr size_t kMaxPerSecond = 20;
  static constexpr size_t kMaxKept = 64;

  /// True when some reader follows some scene.
  bool active() const { return followed_.load(std::memory_order_relaxed) > 0; }

  /// A reader follows `scene` (samples are taken from now on) or stops following it. Follow
  /// returns the cursor of "now".
  uint64_t Follow(const Scene* scene);
  void Unfollow(const Scene* scene);

  /// Offers one batch of `scene` as AnswerQueries answered it at `version` (its `queries`,
  /// `status`, `results` and `hits`; `status` OK for the queries that ran), after the scene's
  /// read. Takes what the scene's budget for this second allows; nothing, after one relaxed
  /// atomic load, while no reader follows any scene.
  void Offer(const Scene* scene, uint64_t version, std::span<const Query> queries,
             std::span<const absl::Status> status, std::span<const QueryResult> results,
             std::span<const QueryHit> hits);

  /// The samples of `scene` after `cursor`, at most `max`.
  SampledQueries After(const Scene* scene, uint64_t cursor, size_t max) const;

 private:
  using Clock = std::chrono::steady_clock;
  struct PerScene {
    int followers = 0;
    std::deque<QuerySample> kept;
    uint64_t last = 0;
    Clock::time_point second_start{};
    size_t taken_this_second = 0;
  };

  std::atomic<int> followed_{0};
  mutable Mutex mu_;
  absl::flat_hash_map<const Scene*, PerScene> scenes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace collide
