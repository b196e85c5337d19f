#include "scene/query_sampler.h"

#include <algorithm>
#include <type_traits>
#include <variant>

namespace collide {

uint64_t QuerySampler::Follow(const Scene* scene) {
  MutexLock lock(&mu_);
  PerScene& per = scenes_[scene];
  if (per.followers++ == 0) followed_.fetch_add(1, std::memory_order_relaxed);
  return per.last;
}

void QuerySampler::Unfollow(const Scene* scene) {
  MutexLock lock(&mu_);
  auto it = scenes_.find(scene);
  if (it == scenes_.end()) return;
  if (--it->second.followers == 0) {
    followed_.fetch_sub(1, std::memory_order_relaxed);
    scenes_.erase(it);
  }
}

void QuerySampler::Offer(const Scene* scene, uint64_t version, std::span<const Query> queries,
                         std::span<const absl::Status> status, std::span<const QueryResult> results,
                         std::span<const QueryHit> hits) {
  if (!active()) return;
  // The casts of the batch.
  std::vector<size_t> casts;
  for (size_t i = 0; i < queries.size(); ++i) {
    const bool cast = std::holds_alternative<RaycastQuery>(queries[i].shape_query) ||
                      std::holds_alternative<SphereCastQuery>(queries[i].shape_query);
    if (cast && i < status.size() && status[i].ok() && i < results.size()) casts.push_back(i);
  }
  if (casts.empty()) return;
  MutexLock lock(&mu_);
  auto it = scenes_.find(scene);
  if (it == scenes_.end()) return;
  PerScene& per = it->second;
  const Clock::time_point now = Clock::now();
  if (now - per.second_start >= std::chrono::seconds(1)) {
    per.second_start = now;
    per.taken_this_second = 0;
  }
  const size_t room = kMaxPerSecond - std::min(per.taken_this_second, kMaxPerSecond);
  const size_t take = std::min(room, casts.size());
  for (size_t k = 0; k < take; ++k) {
    // Evenly over the batch's casts.
    const size_t i = casts[k * casts.size() / take];
    const Query& query = queries[i];
    QuerySample sample;
    sample.sequence = ++per.last;
    sample.version = version;
    sample.at_tick = query.at_tick;
    if (const auto* ray = std::get_if<RaycastQuery>(&query.shape_query)) {
      sample.origin = ray->ray.origin;
      sample.direction = ray->ray.direction;
      sample.max_distance = ray->ray.max_distance;
    } else {
      const auto& sphere = std::get<SphereCastQuery>(query.shape_query);
      sample.sphere = true;
      sample.origin = sphere.ray.origin;
      sample.direction = sphere.ray.direction;
      sample.max_distance = sphere.ray.max_distance;
      sample.radius = sphere.radius;
    }
    const QueryResult& result = results[i];
    if (result.hit_count > 0 && result.first_hit < hits.size()) {
      sample.hit_id = hits[result.first_hit].body_id;
      sample.hit_distance = hits[result.first_hit].distance;
    }
    per.kept.push_back(sample);
    if (per.kept.size() > kMaxKept) per.kept.pop_front();
  }
  per.taken_this_second += take;
}

SampledQueries QuerySampler::After(const Scene* scene, uint64_t cursor, size_t max) const {
  SampledQueries out;
  out.next = cursor;
  MutexLock lock(&mu_);
  auto it = scenes_.find(scene);
  if (it == scenes_.end()) return out;
  const PerScene& per = it->second;
  if (per.last <= cursor) return out;
  const uint64_t first_held = per.last - per.kept.size() + 1;
  if (cursor + 1 < first_held) {
    out.dropped = first_held - cursor - 1;
    out.next = first_held - 1;
  }
  for (size_t i = static_cast<size_t>(out.next + 1 - first_held);
       i < per.kept.size() && out.samples.size() < max; ++i) {
    out.samples.push_back(per.kept[i]);
    out.next = per.kept[i].sequence;
  }
  return out;
}

}  // namespace collide
