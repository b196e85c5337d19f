// QuerySampler: the bounded sample of answered casts that the viewer draws.
// - Nothing is taken for a scene nobody follows; a follower gets the casts answered after it
//   started following, with their first hits; other query kinds are never taken.
// - One batch gives at most kMaxPerSecond samples, spread over the batch; a reader reads on
//   from its cursor.

#include "scene/query_sampler.h"

#include <vector>

#include "gtest/gtest.h"

namespace collide {
namespace {

const Scene* SceneKey(int n) {
  static int keys[4];
  return reinterpret_cast<const Scene*>(&keys[n]);
}

Query RayQuery(float x) {
  Query query;
  query.shape_query =
      RaycastQuery{Ray{.origin = Vec3{x, 0, 0}, .direction = Vec3{0, 1, 0}, .max_distance = 10}};
  return query;
}

// Offers `queries` as one answered batch; query i hits body 100 + i at distance i when `hit`.
void Offer(QuerySampler& sampler, const Scene* scene, const std::vector<Query>& queries, bool hit) {
  std::vector<absl::Status> status(queries.size());
  std::vector<QueryResult> results(queries.size());
  std::vector<QueryHit> hits;
  for (size_t i = 0; i < queries.size(); ++i) {
    if (!hit) continue;
    results[i] = QueryResult{.first_hit = static_cast<uint32_t>(hits.size()), .hit_count = 1};
    hits.push_back(QueryHit{.body_id = 100 + i, .distance = static_cast<float>(i)});
  }
  sampler.Offer(scene, 7, queries, status, results, hits);
}

TEST(QuerySamplerTest, TakesCastsOnlyWhileFollowedWithTheirHits) {
  QuerySampler sampler;
  EXPECT_FALSE(sampler.active());
  Offer(sampler, SceneKey(0), {RayQuery(1)}, true);
  const uint64_t cursor = sampler.Follow(SceneKey(0));
  EXPECT_TRUE(sampler.active());
  Query overlap;
  overlap.shape_query = OverlapQuery{};
  Query sphere;
  sphere.shape_query =
      SphereCastQuery{Ray{.origin = Vec3{5, 0, 0}, .direction = Vec3{1, 0, 0}}, 2.0f};
  Offer(sampler, SceneKey(0), {RayQuery(2), overlap, sphere}, true);
  Offer(sampler, SceneKey(1), {RayQuery(3)}, true);  // not followed
  SampledQueries taken = sampler.After(SceneKey(0), cursor, 10);
  ASSERT_EQ(taken.samples.size(), 2u);
  EXPECT_EQ(taken.dropped, 0u);
  EXPECT_EQ(taken.samples[0].origin.x, 2.0f);
  EXPECT_FALSE(taken.samples[0].sphere);
  EXPECT_EQ(taken.samples[0].hit_id, 100u);
  EXPECT_EQ(taken.samples[0].version, 7u);
  EXPECT_TRUE(taken.samples[1].sphere);
  EXPECT_EQ(taken.samples[1].radius, 2.0f);
  EXPECT_EQ(taken.samples[1].hit_id, 102u);
  EXPECT_EQ(taken.samples[1].hit_distance, 2.0f);
  EXPECT_TRUE(sampler.After(SceneKey(1), 0, 10).samples.empty());
  sampler.Unfollow(SceneKey(0));
  EXPECT_FALSE(sampler.active());
}

TEST(QuerySamplerTest, BoundsABatchAndSpreadsOverIt) {
  QuerySampler sampler;
  const uint64_t cursor = sampler.Follow(SceneKey(2));
  std::vector<Query> batch;
  for (int i = 0; i < 100; ++i) batch.push_back(RayQuery(static_cast<float>(i)));
  Offer(sampler, SceneKey(2), batch, false);
  Offer(sampler, SceneKey(2), batch, false);  // within the same second, or a new one
  SampledQueries taken = sampler.After(SceneKey(2), cursor, 1000);
  // At most the bound per second; two batches span at most two seconds.
  ASSERT_GE(taken.samples.size(), QuerySampler::kMaxPerSecond);
  ASSERT_LE(taken.samples.size(), 2 * QuerySampler::kMaxPerSecond);
  EXPECT_EQ(taken.samples[0].origin.x, 0.0f);
  EXPECT_EQ(taken.samples[QuerySampler::kMaxPerSecond - 1].origin.x, 95.0f);
  EXPECT_FALSE(taken.samples[0].hit_id.has_value());
  sampler.Unfollow(SceneKey(2));
}

TEST(QuerySamplerTest, ReadsOnFromTheCursor) {
  QuerySampler sampler;
  const uint64_t cursor = sampler.Follow(SceneKey(3));
  // One cast per batch, read in two steps from the cursor.
  for (size_t i = 0; i < QuerySampler::kMaxPerSecond; ++i) {
    Offer(sampler, SceneKey(3), {RayQuery(static_cast<float>(i))}, false);
  }
  SampledQueries first = sampler.After(SceneKey(3), cursor, 5);
  EXPECT_EQ(first.samples.size(), 5u);
  SampledQueries rest = sampler.After(SceneKey(3), first.next, 1000);
  EXPECT_EQ(rest.samples.size() + 5, std::min(QuerySampler::kMaxPerSecond, QuerySampler::kMaxKept));
  EXPECT_EQ(rest.dropped, 0u);
  sampler.Unfollow(SceneKey(3));
}

}  // namespace
}  // namespace collide
