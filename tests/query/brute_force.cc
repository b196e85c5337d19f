#include "query/brute_force.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <variant>

#include "geom/aabb.h"
#include "geom/bounds.h"
#include "geom/closest_point.h"
#include "geom/overlap.h"
#include "geom/penetration.h"
#include "geom/ray_cast.h"
#include "geom/sphere_cast.h"
#include "query/filter.h"

namespace collide::testing {

std::vector<QueryHit> BruteForce(std::span<const BodyDesc> bodies, const Query& q) {
  std::vector<QueryHit> hits;
  for (const BodyDesc& d : bodies) {
    if (!Accepts(q.filter, d.id, d.category, d.mask)) continue;
    QueryHit hit{.body_id = d.id};
    bool ok = false;
    const auto* ray = std::get_if<RaycastQuery>(&q.shape_query);
    const auto* sphere = std::get_if<SphereCastQuery>(&q.shape_query);
    if (ray != nullptr || sphere != nullptr) {
      CastHit c;
      ok = ray != nullptr ? Raycast(d.shape, d.pose, ray->ray, &c)
                          : SphereCast(d.shape, d.pose, sphere->ray, sphere->radius, &c);
      if (ok) {
        hit.distance = c.distance;
        hit.point = c.point;
        hit.normal = c.normal;
        hit.start_overlapping = c.start_overlapping;
      }
    } else if (const auto* overlap = std::get_if<OverlapQuery>(&q.shape_query)) {
      if (overlap->detail) {
        Penetration p;
        ok = Penetrate(d.shape, d.pose, overlap->shape, overlap->pose, &p);
        hit.depth = p.depth;
        hit.point = p.point;
        hit.normal = p.normal;
      } else {
        ok = Overlap(d.shape, d.pose, overlap->shape, overlap->pose);
      }
    } else if (const auto* within = std::get_if<WithinRadiusQuery>(&q.shape_query)) {
      ClosestPointResult c = ClosestPoint(d.shape, d.pose, within->point);
      ok = c.signed_distance <= within->radius;
      hit.distance = std::max(c.signed_distance, 0.0f);
      hit.point = c.point;
      hit.normal = c.normal;
    } else {
      ok = Overlaps(Bounds(d.shape, d.pose), std::get<RegionQuery>(q.shape_query).region);
    }
    if (ok) hits.push_back(hit);
  }
  std::sort(hits.begin(), hits.end(), HitBefore);
  return hits;
}

namespace {

void ExpectSameHit(const QueryHit& got, const QueryHit& want, size_t k) {
  EXPECT_EQ(got.body_id, want.body_id) << "hit " << k;
  EXPECT_EQ(got.distance, want.distance) << "hit " << k;
  EXPECT_EQ(got.depth, want.depth) << "hit " << k;
  EXPECT_EQ(got.point, want.point) << "hit " << k;
  EXPECT_EQ(got.normal, want.normal) << "hit " << k;
  EXPECT_EQ(got.start_overlapping, want.start_overlapping) << "hit " << k;
}

}  // namespace

void ExpectAnswer(const Query& q, const std::vector<QueryHit>& expected, const QueryResult& got,
                  const QueryHit* hits) {
  switch (q.mode) {
    case CollectMode::kClosest:
      ASSERT_EQ(got.hit_count, expected.empty() ? 0u : 1u);
      if (!expected.empty()) ExpectSameHit(hits[0], expected[0], 0);
      EXPECT_FALSE(got.truncated);
      break;
    case CollectMode::kAny:
      ASSERT_EQ(got.hit_count, expected.empty() ? 0u : 1u);
      if (!expected.empty()) {
        auto same = std::find_if(expected.begin(), expected.end(),
                                 [&](const QueryHit& h) { return h.body_id == hits[0].body_id; });
        ASSERT_NE(same, expected.end()) << "any-hit body " << hits[0].body_id << " is no hit";
        ExpectSameHit(hits[0], *same, 0);
      }
      EXPECT_FALSE(got.truncated);
      break;
    case CollectMode::kAll: {
      const size_t keep = std::min<size_t>(expected.size(), q.max_hits);
      ASSERT_EQ(got.hit_count, keep);
      EXPECT_EQ(got.truncated, expected.size() > q.max_hits);
      for (size_t k = 0; k < keep; ++k) ExpectSameHit(hits[k], expected[k], k);
      break;
    }
  }
}

}  // namespace collide::testing
