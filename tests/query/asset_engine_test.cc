// The query engine with bodies that place assets (meshes, heightfields) among shapes: every query
// kind and mode against a brute force that asks every body (no tree) for every triangle it
// touches (the asset layer's all-hits queries, themselves checked against the geometry oracles
// in tests/mesh) and orders them by (distance, id, triangle); filters, scale and rotation, ties.

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "gtest/gtest.h"
#include "mesh/heightfield.h"
#include "mesh/mesh_shape.h"
#include "mesh/scaled_pose.h"
#include "query/asset_narrow.h"
#include "query/brute_force.h"
#include "query/collision_world.h"
#include "query/query_engine.h"
#include "query/run_query.h"

namespace collide {
namespace {

constexpr uint32_t kSeed = 20291;

// A closed box [-1, 1]^3 (12 triangles) and a 6 x 6 terrain with a hole.
std::shared_ptr<const AssetGeometry> BoxAsset() {
  static const std::vector<Vec3> v = {{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1},
                                      {-1, -1, 1},  {1, -1, 1},  {1, 1, 1},  {-1, 1, 1}};
  static const std::vector<uint32_t> i = {0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
                                          2, 3, 7, 2, 7, 6, 1, 2, 6, 1, 6, 5, 0, 4, 7, 0, 7, 3};
  return std::make_shared<const AssetGeometry>(MeshShape::Build(TriangleMeshView{v, i}));
}

std::shared_ptr<const AssetGeometry> TerrainAsset() {
  std::vector<float> heights;
  for (int r = 0; r < 6; ++r) {
    for (int c = 0; c < 6; ++c) heights.push_back(0.3f * std::sin(0.9f * r) * std::cos(0.7f * c));
  }
  std::vector<uint8_t> holes(25, 0);
  holes[12] = 1;
  return std::make_shared<const AssetGeometry>(
      HeightfieldShape::Build(HeightfieldDesc{.rows = 6,
                                              .columns = 6,
                                              .spacing_x = 1.0f,
                                              .spacing_z = 1.5f,
                                              .heights = heights,
                                              .holes = holes}));
}

// Every hit of `query` on the world's live bodies by brute force: shapes as the brute force of
// brute_force.h judges them, asset bodies triangle by triangle (the asset layer's all-hits
// queries over the whole asset), sorted by (distance, id, triangle).
std::vector<QueryHit> BruteForceWorld(const CollisionWorld& world, const Query& q) {
  std::vector<BodyDesc> shapes;
  std::vector<QueryHit> hits;
  for (BodyHandle h = 0; h < world.slot_count(); ++h) {
    if (!world.IsLive(h)) continue;
    const Body& body = world.body(h);
    if (body.asset == kNoAsset) {
      shapes.push_back(DescOf(body));
      continue;
    }
    if (!Accepts(q.filter, body.id, body.category, body.mask)) continue;
    const AssetGeometry& asset = world.asset(body.asset);
    const ScaledPose placement{body.pose, body.scale};
    auto add_hit = [&](const MeshHit& m) -> float {
      hits.push_back(QueryHit{.body_id = body.id,
                              .distance = m.distance,
                              .point = m.point,
                              .normal = m.normal,
                              .start_overlapping = m.start_overlapping,
                              .back_face = m.back_face,
                              .triangle = m.triangle});
      return std::numeric_limits<float>::infinity();
    };
    if (const auto* ray = std::get_if<RaycastQuery>(&q.shape_query)) {
      AssetRaycastAll(asset, placement, ray->ray, add_hit);
    } else if (const auto* cast = std::get_if<SphereCastQuery>(&q.shape_query)) {
      if (cast->radius == 0.0f) {
        AssetRaycastAll(asset, placement, cast->ray, add_hit);
      } else {
        AssetSphereCastAll(asset, placement, cast->ray, cast->radius, add_hit);
      }
    } else if (const auto* overlap = std::get_if<OverlapQuery>(&q.shape_query)) {
      AssetOverlapAll(asset, placement, overlap->shape, overlap->pose, overlap->detail,
                      [&](const MeshContact& c) {
                        QueryHit hit{.body_id = body.id, .triangle = c.triangle};
                        if (overlap->detail) {
                          hit.depth = c.depth;
                          hit.point = c.point;
                          hit.normal = c.normal;
                        }
                        hits.push_back(hit);
                        return true;
                      });
    } else if (const auto* within = std::get_if<WithinRadiusQuery>(&q.shape_query)) {
      AssetWithinRadiusAll(asset, placement, within->point, within->radius,
                           [&](const MeshPoint& p) {
                             hits.push_back(QueryHit{.body_id = body.id,
                                                     .distance = p.distance,
                                                     .point = p.point,
                                                     .normal = p.normal,
                                                     .triangle = p.triangle});
                             return true;
                           });
    } else {
      AssetRegionAll(asset, placement, std::get<RegionQuery>(q.shape_query).region,
                     [&](const MeshContact& c) {
                       hits.push_back(QueryHit{.body_id = body.id, .triangle = c.triangle});
                       return true;
                     });
    }
  }
  std::vector<QueryHit> shape_hits = testing::BruteForce(shapes, q);
  hits.insert(hits.end(), shape_hits.begin(), shape_hits.end());
  std::sort(hits.begin(), hits.end(), HitBefore);
  return hits;
}

bool Near(float a, float b) { return std::fabs(a - b) <= 1e-4f * std::max(1.0f, std::fabs(b)); }
bool NearVec(const Vec3& a, const Vec3& b) {
  return Near(a.x, b.x) && Near(a.y, b.y) && Near(a.z, b.z);
}

::testing::AssertionResult SameHit(const QueryHit& got, const QueryHit& want) {
  if (got.body_id == want.body_id && got.triangle == want.triangle &&
      Near(got.distance, want.distance) && Near(got.depth, want.depth) &&
      NearVec(got.point, want.point) && NearVec(got.normal, want.normal) &&
      got.start_overlapping == want.start_overlapping && got.back_face == want.back_face) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "got id " << got.body_id << " triangle " << got.triangle << " d " << got.distance
         << " depth " << got.depth << "; want id " << want.body_id << " triangle " << want.triangle
         << " d " << want.distance << " depth " << want.depth;
}

// The engine's answer against the brute force's hits by the query's mode.
void Check(const Query& q, const std::vector<QueryHit>& expected, const QueryResult& result,
           const QueryHit* got, const std::string& where) {
  SCOPED_TRACE(where);
  const auto* overlap = std::get_if<OverlapQuery>(&q.shape_query);
  switch (q.mode) {
    case CollectMode::kClosest: {
      ASSERT_EQ(result.hit_count, expected.empty() ? 0u : 1u);
      if (expected.empty()) return;
      QueryHit want = expected[0];
      if (overlap != nullptr && overlap->detail && want.triangle != kNoTriangle) {
        // Overlaps with detail: the first body's deepest triangle (ties: the lowest index).
        for (const QueryHit& h : expected) {
          if (h.body_id == want.body_id &&
              (h.depth > want.depth || (h.depth == want.depth && h.triangle < want.triangle))) {
            want = h;
          }
        }
        // Depths within rounding of each other may pick either.
        if (got[0].triangle != want.triangle) {
          for (const QueryHit& h : expected) {
            if (h.body_id == got[0].body_id && h.triangle == got[0].triangle &&
                Near(h.depth, want.depth)) {
              want = h;
            }
          }
        }
      } else if (got[0].triangle != want.triangle || got[0].body_id != want.body_id) {
        // Distances within rounding of the first may be reported instead.
        for (const QueryHit& h : expected) {
          if (h.body_id == got[0].body_id && h.triangle == got[0].triangle &&
              Near(h.distance, want.distance)) {
            want = h;
            break;
          }
        }
      }
      EXPECT_TRUE(SameHit(got[0], want));
      break;
    }
    case CollectMode::kAny: {
      ASSERT_EQ(result.hit_count, expected.empty() ? 0u : 1u);
      if (expected.empty()) return;
      auto same = std::find_if(expected.begin(), expected.end(), [&](const QueryHit& h) {
        return h.body_id == got[0].body_id && h.triangle == got[0].triangle;
      });
      ASSERT_NE(same, expected.end()) << "any hit on body " << got[0].body_id << " triangle "
                                      << got[0].triangle << " is no hit";
      EXPECT_TRUE(SameHit(got[0], *same));
      break;
    }
    case CollectMode::kAll: {
      const size_t keep = std::min<size_t>(expected.size(), q.max_hits);
      ASSERT_EQ(result.hit_count, keep);
      EXPECT_EQ(result.truncated, expected.size() > q.max_hits);
      for (size_t k = 0; k < keep; ++k) EXPECT_TRUE(SameHit(got[k], expected[k])) << "hit " << k;
      break;
    }
  }
}

float Uniform(std::mt19937& rng, float lo, float hi) {
  return std::uniform_real_distribution<float>(lo, hi)(rng);
}

Quat RandomRotation(std::mt19937& rng) {
  std::normal_distribution<float> n;
  return Normalize(Quat{n(rng), n(rng), n(rng), n(rng)});
}

TEST(AssetEngine, EveryQueryKindAndModeAgreesWithBruteForce) {
  std::mt19937 rng(kSeed);
  for (int world_index = 0; world_index < 12; ++world_index) {
    CollisionWorld world(CollisionWorldOptions{.fat_margin = world_index % 3 == 0 ? 0.0f : 0.2f});
    const AssetSlot box = world.AddAsset(BoxAsset());
    const AssetSlot terrain = world.AddAsset(TerrainAsset());
    uint64_t id = 1;
    for (int b = 0; b < 40; ++b) {
      BodyDesc desc{
          .id = id++,
          .pose = Pose{b % 2 == 0 ? Quat::Identity() : RandomRotation(rng),
                       Vec3{Uniform(rng, -8, 8), Uniform(rng, -3, 3), Uniform(rng, -8, 8)}},
          .category = 1u << (b % 3),
          .kind = b % 4 == 0 ? BodyKind::kDynamic : BodyKind::kStatic};
      switch (b % 5) {
        case 0:
          desc.shape = Sphere{Uniform(rng, 0.2f, 1.0f)};
          break;
        case 1:
          desc.shape =
              Box{Vec3{Uniform(rng, 0.1f, 1), Uniform(rng, 0.1f, 1), Uniform(rng, 0.1f, 1)}};
          break;
        case 2:
        case 3:
          desc.asset = box;
          desc.scale = Uniform(rng, 0.3f, 2.0f);
          break;
        default:
          desc.asset = terrain;
          desc.scale = Uniform(rng, 0.5f, 1.5f);
          break;
      }
      world.Add(desc);
    }
    // Some move, as a moving instance does.
    for (BodyHandle h = 0; h < world.slot_count(); h += 3) {
      Pose pose = world.body(h).pose;
      pose.position.y += 0.5f;
      world.SetPose(h, pose);
    }
    world.FinishUpdates();
    ASSERT_TRUE(world.Validate());
    for (int k = 0; k < 300; ++k) {
      const size_t kind = static_cast<size_t>(k % 5);
      const Vec3 origin{Uniform(rng, -10, 10), Uniform(rng, -4, 4), Uniform(rng, -10, 10)};
      const Vec3 target{Uniform(rng, -8, 8), Uniform(rng, -3, 3), Uniform(rng, -8, 8)};
      Ray ray{origin, Normalize(target - origin), Uniform(rng, 2, 30)};
      const float radius = k % 7 == 0 ? 0.0f : Uniform(rng, 0.05f, 1.2f);
      const Shape shapes[3] = {Sphere{radius + 0.1f}, Box{Vec3{0.5f, radius + 0.1f, 0.3f}},
                               Capsule{radius + 0.1f, 0.4f}};
      const Aabb region{origin - Vec3{1, 1, 1} * (radius + 0.5f),
                        origin + Vec3{1, 1, 1} * (radius + 0.5f)};
      Query q{.shape_query =
                  testing::ShapeQueryOfKind(kind, ray, radius, shapes[k % 3],
                                            Pose{RandomRotation(rng), origin}, k % 2 == 0, region),
              .mode = static_cast<CollectMode>(k % 3),
              .max_hits = static_cast<uint32_t>(k % 11 == 0 ? 2 : 64)};
      if (k % 13 == 0) q.filter.mask = 2;
      const std::vector<QueryHit> expected = BruteForceWorld(world, q);
      std::vector<QueryHit> hits;
      const QueryResult result = RunQuery(CurrentTree(world), q, &hits);
      Check(q, expected, result, hits.data() + result.first_hit,
            "seed " + std::to_string(kSeed) + " world " + std::to_string(world_index) + " query " +
                std::to_string(k) + " kind " + std::to_string(kind) + " mode " +
                std::to_string(k % 3));
      if (HasFailure()) return;
    }
  }
}

TEST(AssetEngine, TiesOrderByDistanceThenIdThenTriangle) {
  // Two copies of the box at one place, ids 9 and 4: a ray along the y axis meets each copy's
  // top at the same distance, on its two top triangles' shared diagonal... away from it here.
  CollisionWorld world(CollisionWorldOptions{.fat_margin = 0.0f});
  const AssetSlot box = world.AddAsset(BoxAsset());
  world.Add(BodyDesc{.id = 9, .pose = Pose{}, .kind = BodyKind::kStatic, .asset = box});
  world.Add(BodyDesc{.id = 4, .pose = Pose{}, .kind = BodyKind::kDynamic, .asset = box});
  world.FinishUpdates();
  Query all{.shape_query = RaycastQuery{.ray = Ray{{0.3f, 5, 0.6f}, {0, -1, 0}, 20}},
            .mode = CollectMode::kAll};
  std::vector<QueryHit> hits;
  QueryResult result = RunQuery(CurrentTree(world), all, &hits);
  ASSERT_EQ(result.hit_count, 4u);
  EXPECT_EQ(hits[0].body_id, 4u);
  EXPECT_EQ(hits[1].body_id, 9u);
  EXPECT_EQ(hits[0].distance, hits[1].distance);
  EXPECT_EQ(hits[0].triangle, hits[1].triangle);
  EXPECT_EQ(hits[2].body_id, 4u);
  EXPECT_EQ(hits[3].body_id, 9u);
  // The closest is body 4's top.
  Query closest = all;
  closest.mode = CollectMode::kClosest;
  hits.clear();
  result = RunQuery(CurrentTree(world), closest, &hits);
  ASSERT_EQ(result.hit_count, 1u);
  EXPECT_EQ(hits[0].body_id, 4u);
  EXPECT_FLOAT_EQ(hits[0].distance, 4.0f);

  // An overlap touching both top triangles of each copy: one hit per triangle, by (id, index).
  Query touching{.shape_query = OverlapQuery{.shape = Sphere{0.5f},
                                             .pose = Pose{Quat::Identity(), Vec3{0, 1.2f, 0}}},
                 .mode = CollectMode::kAll};
  hits.clear();
  result = RunQuery(CurrentTree(world), touching, &hits);
  ASSERT_EQ(result.hit_count, 4u);
  EXPECT_EQ(hits[0].body_id, 4u);
  EXPECT_EQ(hits[0].triangle, 6u);
  EXPECT_EQ(hits[1].triangle, 7u);
  EXPECT_EQ(hits[2].body_id, 9u);
  EXPECT_EQ(hits[2].triangle, 6u);
  // A truncated list keeps the first in that order.
  touching.max_hits = 3;
  hits.clear();
  result = RunQuery(CurrentTree(world), touching, &hits);
  ASSERT_EQ(result.hit_count, 3u);
  EXPECT_TRUE(result.truncated);
  EXPECT_EQ(hits[2].body_id, 9u);
  EXPECT_EQ(hits[2].triangle, 6u);
}

TEST(AssetEngine, AnAssetBodysBoxIsItsPlacedAssetsAndMovesWithIt) {
  CollisionWorld world;
  const AssetSlot box = world.AddAsset(BoxAsset());
  const BodyHandle h = world.Add(BodyDesc{
      .id = 1, .pose = Pose{Quat::Identity(), Vec3{10, 0, 0}}, .asset = box, .scale = 3.0f});
  const Aabb bounds = world.BoundsOf(world.body(h));
  EXPECT_NEAR(bounds.min.x, 7.0f, 1e-5f);
  EXPECT_NEAR(bounds.max.x, 13.0f, 1e-5f);
  EXPECT_NEAR(world.BoundingRadiusOf(world.body(h)), 3.0f * std::sqrt(3.0f), 1e-4f);
  world.SetPose(h, Pose{Quat::Identity(), Vec3{-20, 0, 0}});
  world.FinishUpdates();
  EXPECT_TRUE(world.Validate());
  Query q{.shape_query = RaycastQuery{.ray = Ray{{-20, 10, 0}, {0, -1, 0}, 100}}};
  std::vector<QueryHit> hits;
  ASSERT_EQ(RunQuery(CurrentTree(world), q, &hits).hit_count, 1u);
  EXPECT_FLOAT_EQ(hits[0].distance, 7.0f);
  // A world copy holds the same assets.
  CollisionWorld copy = world;
  EXPECT_EQ(&copy.asset(box), &world.asset(box));
  copy.Remove(h);
  copy.RemoveAsset(box);
  EXPECT_EQ(copy.asset_slot_count(), 0u);
  EXPECT_EQ(world.asset_slot_count(), 1u);
}

}  // namespace
}  // namespace collide
