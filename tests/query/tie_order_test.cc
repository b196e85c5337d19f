// Hit order on ties. Bodies hit at exactly the same distance (duplicated bodies at one pose,
// boxes sharing a face plane, rays along axes, faces and edges, queries touching a face) come
// back in (distance, id) order, and every body the narrow phase hits is found, at every fat
// margin, 0 included (leaf boxes that are the bodies' own bounds, so the tree's slab distances
// and the narrow phase's distances round to neighbouring floats). Every query kind and mode runs
// at the present tick one by one (binary tree and 4-wide form), in batches (interleaved casts),
// and at past ticks and between them (the history's index), each against a brute force over
// every body with the same narrow-phase functions (brute_force.h).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "geom/bounds.h"
#include "query/batch.h"
#include "query/brute_force.h"
#include "query/collector.h"
#include "query/collision_world.h"
#include "query/pose_history.h"
#include "query/query_engine.h"

namespace collide {
namespace {

using testing::BruteForce;
using testing::ExpectAnswer;

constexpr uint32_t kSeed = 20260516;
// Every fat margin the tests run at: tight leaves, a hair, and the usual sizes.
constexpr float kMargins[] = {0.0f, 1e-6f, 0.01f, 0.1f, 1.0f};

class Random {
 public:
  explicit Random(uint32_t seed) : rng_(seed) {}
  float Uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng_); }
  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  float Sign() { return Chance(0.5) ? 1.0f : -1.0f; }
  Vec3 UnitVector() {
    while (true) {
      Vec3 v{Uniform(-1, 1), Uniform(-1, 1), Uniform(-1, 1)};
      float l = Length(v);
      if (l > 0.1f && l <= 1.0f) return v / l;
    }
  }
  std::mt19937& engine() { return rng_; }

 private:
  std::mt19937 rng_;
};

// ---------------------------------------------------------------------------------------------
// Scenes made of ties.

// Where the bodies of a scene sit: near the origin, or far from it (coordinates about `centre`,
// shapes large enough that an error at their own scale still shows: float32 spacing at 1e5 is
// 2^-7, so sizes of 1 to 20 there).
struct Placement {
  float centre;
  float spread;
  float min_size;
  float max_size;
};
constexpr Placement kNear{0.0f, 30.0f, 0.2f, 3.0f};
constexpr Placement kFar{1e5f, 200.0f, 1.0f, 20.0f};

// A shape and pose for a group of duplicates; unrotated boxes most often (their faces are their
// bounds' faces), then boxes turned a quarter, random rotations, spheres and capsules.
BodyDesc RandomBase(Random& r, const Placement& p) {
  const float size = r.Uniform(p.min_size, p.max_size);
  auto extent = [&] { return r.Uniform(0.2f, 1.0f) * size; };
  BodyDesc d;
  d.pose.position =
      Vec3{p.centre + r.Uniform(-p.spread, p.spread), -p.centre + r.Uniform(-p.spread, p.spread),
           r.Uniform(-p.spread, p.spread)};
  switch (r.Int(0, 9)) {
    case 0:
      d.shape = Box{Vec3{extent(), extent(), extent()}};
      d.pose.rotation = QuatFromAxisAngle(Vec3{0, 1, 0}, 1.5707963f);
      break;
    case 1: {
      d.shape = Box{Vec3{extent(), extent(), extent()}};
      Quat q{r.Uniform(-1, 1), r.Uniform(-1, 1), r.Uniform(-1, 1), r.Uniform(-1, 1)};
      d.pose.rotation = Length(q) > 0.1f ? Normalize(q) : Quat::Identity();
      break;
    }
    case 2:
    case 3:
      d.shape = Sphere{extent()};
      break;
    case 4:
      d.shape = Capsule{0.5f * extent(), extent()};
      if (r.Chance(0.5)) d.pose.rotation = QuatFromAxisAngle(Vec3{0, 0, 1}, 1.5707963f);
      break;
    default:
      d.shape = Box{Vec3{extent(), extent(), extent()}};
      break;
  }
  return d;
}

// A scene: each base body duplicated 1 to 4 times at exactly its pose, and next to some
// unrotated boxes 1 to 3 boxes that share one face plane with it (same position and half extent
// on that axis, so the face computes to the same float) and overlap it across, duplicated too.
// Ids are shuffled so that neither insertion order nor tree order is id order, and some bodies
// are static, so ties also span the two trees.
std::vector<BodyDesc> TieScene(Random& r, const Placement& p, int bases) {
  std::vector<BodyDesc> bodies;
  auto duplicate = [&](const BodyDesc& d, int copies) {
    for (int k = 0; k < copies; ++k) bodies.push_back(d);
  };
  for (int i = 0; i < bases; ++i) {
    const BodyDesc base = RandomBase(r, p);
    duplicate(base, r.Int(1, 4));
    if (base.shape.type != ShapeType::kBox || !(base.pose.rotation == Quat::Identity())) continue;
    const int neighbours = r.Int(0, 3);
    for (int k = 0; k < neighbours; ++k) {
      const int axis = r.Int(0, 2);
      BodyDesc n = base;
      const Vec3 e = base.shape.box.half_extents;
      for (int a = 0; a < 3; ++a) {
        if (a == axis) continue;
        const float ne = r.Uniform(0.3f, 1.2f) * e[a];
        n.shape.box.half_extents[a] = ne;
        // Overlapping across the shared plane: shifted by less than the two half extents.
        n.pose.position[a] += r.Sign() * r.Uniform(0.0f, 0.9f) * (e[a] + ne);
      }
      duplicate(n, r.Int(1, 2));
    }
  }
  std::vector<uint64_t> ids(bodies.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = i + 1;
  std::shuffle(ids.begin(), ids.end(), r.engine());
  for (size_t i = 0; i < bodies.size(); ++i) {
    bodies[i].id = ids[i];
    bodies[i].kind = r.Chance(0.25) ? BodyKind::kStatic : BodyKind::kDynamic;
  }
  std::shuffle(bodies.begin(), bodies.end(), r.engine());
  return bodies;
}

// ---------------------------------------------------------------------------------------------
// Queries aimed at ties.

// A face of a body's bounds to aim at: axis, side (+1: the max face) and its coordinate.
struct Face {
  Aabb box;
  int axis;
  float side;
  float at() const { return side > 0 ? box.max[axis] : box.min[axis]; }
};

Face RandomFace(Random& r, const BodyDesc& d) {
  return Face{Bounds(d.shape, d.pose), r.Int(0, 2), r.Sign()};
}

// A point of the face: inside it, or on one of its edges or corners now and then.
Vec3 PointOn(Random& r, const Face& f) {
  Vec3 p;
  for (int a = 0; a < 3; ++a) {
    if (a == f.axis) {
      p[a] = f.at();
    } else if (r.Chance(0.2)) {
      p[a] = r.Chance(0.5) ? f.box.min[a] : f.box.max[a];
    } else {
      p[a] = r.Uniform(f.box.min[a], f.box.max[a]);
    }
  }
  return p;
}

Vec3 AxisVector(int axis, float sign) {
  Vec3 v{};
  v[axis] = sign;
  return v;
}

// A path that reaches `target` on face `f`, from `back` away: along the axis, nearly along it,
// obliquely, or (for a ray) lying in the face's plane, or along one of its edges.
Ray PathTo(Random& r, const Face& f, const Vec3& target, float back, float radius) {
  const Vec3 inward = AxisVector(f.axis, -f.side);
  Vec3 dir;
  switch (r.Int(0, 5)) {
    case 0:
    case 1:
      dir = inward;
      break;
    case 2: {
      Vec3 tilt = r.UnitVector() * std::pow(10.0f, r.Uniform(-6.0f, -2.0f));
      dir = Normalize(inward + tilt);
      break;
    }
    case 3: {
      dir = r.UnitVector();
      if (Dot(dir, inward) < 0.2f) dir = Normalize(dir + inward);
      break;
    }
    case 4: {
      // In the face's plane, towards the target from outside the box across another axis.
      const int across = (f.axis + r.Int(1, 2)) % 3;
      const float s = r.Sign();
      Vec3 origin = target;
      origin[across] = (s > 0 ? f.box.max[across] : f.box.min[across]) + s * back;
      return Ray{origin, AxisVector(across, -s), 4.0f * back};
    }
    default: {
      // Along an edge of the face: on the face's plane and one more.
      const int other = (f.axis + r.Int(1, 2)) % 3;
      const int along = 3 - f.axis - other;
      Vec3 origin = target;
      origin[other] = r.Chance(0.5) ? f.box.min[other] : f.box.max[other];
      const float s = r.Sign();
      origin[along] = (s > 0 ? f.box.max[along] : f.box.min[along]) + s * back;
      return Ray{origin, AxisVector(along, -s), 4.0f * back};
    }
  }
  // Back off by `back` plus the ball's radius, so a ball touches the face about `back` along.
  return Ray{target - dir * (back + radius), dir, 4.0f * back + radius};
}

// One query of `kind` aimed at the bodies of `scene`.
Query TieQuery(Random& r, const std::vector<BodyDesc>& scene, QueryKind kind) {
  const BodyDesc& d = scene[r.Int(0, static_cast<int>(scene.size()) - 1)];
  const Face face = RandomFace(r, d);
  const Vec3 target = PointOn(r, face);
  const float size = MaxComponent(HalfExtents(face.box));
  const float back = r.Uniform(0.1f, 3.0f) * size;
  Query q;
  q.kind = kind;
  switch (r.Int(0, 4)) {
    case 0:
      q.mode = CollectMode::kClosest;
      break;
    case 1:
      q.mode = CollectMode::kAny;
      break;
    default:
      // Small caps, so that lists are cut inside a group of ties.
      q.mode = CollectMode::kAll;
      q.max_hits = r.Chance(0.8) ? r.Int(1, 3) : 64;
      break;
  }
  const float radius_choice[] = {0.0f, 1e-3f * size, r.Uniform(0.05f, 0.5f) * size};
  switch (kind) {
    case QueryKind::kRaycast:
      q.ray = PathTo(r, face, target, back, 0.0f);
      break;
    case QueryKind::kSphereCast:
      q.radius = radius_choice[r.Int(0, 2)];
      q.ray = PathTo(r, face, target, back, q.radius);
      break;
    case QueryKind::kWithinRadius: {
      // A point in front of the face with the radius reaching exactly to it, or from inside.
      const float gap = r.Chance(0.2) ? 0.0f : back;
      q.ray.origin = target + AxisVector(face.axis, face.side) * gap;
      q.radius = gap;
      break;
    }
    case QueryKind::kOverlap: {
      // An unrotated box or a ball resting on the face from outside, or a duplicate of the body.
      if (r.Chance(0.2)) {
        q.shape = d.shape;
        q.pose = d.pose;
      } else if (r.Chance(0.5)) {
        const Vec3 e{r.Uniform(0.1f, 1.0f) * size, r.Uniform(0.1f, 1.0f) * size,
                     r.Uniform(0.1f, 1.0f) * size};
        q.shape = Box{e};
        q.pose = Pose{Quat::Identity(), target + AxisVector(face.axis, face.side) * e[face.axis]};
      } else {
        const float radius = r.Uniform(0.1f, 1.0f) * size;
        q.shape = Sphere{radius};
        q.pose = Pose{Quat::Identity(), target + AxisVector(face.axis, face.side) * radius};
      }
      q.detail = r.Chance(0.5);
      break;
    }
    case QueryKind::kRegion: {
      // A box sharing the face's plane from outside (touching), or overlapping it a little.
      Aabb region;
      for (int a = 0; a < 3; ++a) {
        const float reach = r.Uniform(0.0f, 1.0f) * size;
        region.min[a] = target[a] - reach;
        region.max[a] = target[a] + reach;
      }
      if (r.Chance(0.7)) {
        if (face.side > 0) {
          region.min[face.axis] = face.at();
        } else {
          region.max[face.axis] = face.at();
        }
      }
      q.region = region;
      break;
    }
  }
  return q;
}

std::string Describe(const Query& q, const char* path, float margin, int index) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "seed %u %s margin %g query %d kind %d mode %d max_hits %u ray (%.9g %.9g %.9g) "
                "dir (%.9g %.9g %.9g) max %.9g radius %.9g",
                kSeed, path, margin, index, static_cast<int>(q.kind), static_cast<int>(q.mode),
                q.max_hits, q.ray.origin.x, q.ray.origin.y, q.ray.origin.z, q.ray.direction.x,
                q.ray.direction.y, q.ray.direction.z, q.ray.max_distance, q.radius);
  return buf;
}

// How many queries had two or more hits at the first hit's distance: the tests make sure they
// actually exercised ties.
struct TieCount {
  int queries = 0;
  int tied = 0;
  void Note(const std::vector<QueryHit>& expected) {
    ++queries;
    if (expected.size() >= 2 && expected[1].distance == expected[0].distance) ++tied;
  }
};

std::vector<Query> TieQueries(Random& r, const std::vector<BodyDesc>& scene, int per_kind) {
  std::vector<Query> queries;
  for (int kind = 0; kind <= static_cast<int>(QueryKind::kRegion); ++kind) {
    for (int i = 0; i < per_kind; ++i) {
      queries.push_back(TieQuery(r, scene, static_cast<QueryKind>(kind)));
    }
  }
  // Mixed order: runs of casts go through the interleaved batch path.
  std::shuffle(queries.begin(), queries.end(), r.engine());
  return queries;
}

// Checks `queries` against brute force over `bodies`, through RunQuery one by one and RunBatch.
void CheckPresent(const CollisionWorld& world, const std::vector<BodyDesc>& bodies,
                  const std::vector<Query>& queries, const char* path, float margin,
                  TieCount* ties) {
  std::vector<QueryResult> results;
  std::vector<QueryHit> batch_hits;
  RunBatch(world, queries, &results, &batch_hits);
  ASSERT_EQ(results.size(), queries.size());
  std::vector<QueryHit> single;
  for (size_t i = 0; i < queries.size(); ++i) {
    const Query& q = queries[i];
    SCOPED_TRACE(Describe(q, path, margin, static_cast<int>(i)));
    const std::vector<QueryHit> expected = BruteForce(bodies, q);
    ties->Note(expected);
    {
      SCOPED_TRACE("RunBatch");
      ExpectAnswer(q, expected, results[i], batch_hits.data() + results[i].first_hit);
      if (::testing::Test::HasFatalFailure()) return;
    }
    single.clear();
    const QueryResult one = RunQuery(world, q, &single);
    SCOPED_TRACE("RunQuery");
    ExpectAnswer(q, expected, one, single.data());
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// ---------------------------------------------------------------------------------------------
// Hand-made cases.

// The case of the report: 4 identical unrotated boxes, hit at one distance that the slab test
// of their shared leaf box rounds one ulp beyond the narrow phase's.
std::vector<BodyDesc> FourIdenticalBoxes() {
  std::vector<BodyDesc> bodies;
  for (uint64_t id = 1; id <= 4; ++id) {
    bodies.push_back(
        BodyDesc{.id = id,
                 .shape = Box{{0.59842348f, 2.978003f, 2.5868423f}},
                 .pose = Pose{Quat::Identity(), {33.757797f, 5.6454325f, 14.229436f}}});
  }
  return bodies;
}

Ray FourBoxesRay() {
  return Ray{{18.593395f, -1.0467601f, 23.088812f},
             Normalize(Vec3{15.375594f, 7.128633f, -8.937269f}),
             100.0f};
}

std::vector<uint64_t> Ids(const std::vector<QueryHit>& hits, const QueryResult& result) {
  std::vector<uint64_t> ids;
  for (uint32_t k = 0; k < result.hit_count; ++k) ids.push_back(hits[result.first_hit + k].body_id);
  return ids;
}

TEST(TieOrder, FourIdenticalBoxesComeBackByIdAtEveryMarginOptimizedOrNot) {
  for (float margin : kMargins) {
    for (bool optimized : {false, true}) {
      CollisionWorld world(CollisionWorldOptions{.fat_margin = margin});
      for (const BodyDesc& d : FourIdenticalBoxes()) world.Add(d);
      if (optimized) world.FinishUpdates();
      for (float radius : {-1.0f, 0.0f, 1e-3f, 0.01f, 0.25f}) {
        SCOPED_TRACE(::testing::Message() << "margin " << margin << " optimized " << optimized
                                          << " radius " << radius << " (-1: a ray)");
        Query q{.kind = radius < 0 ? QueryKind::kRaycast : QueryKind::kSphereCast,
                .ray = FourBoxesRay(),
                .radius = std::max(radius, 0.0f)};
        std::vector<QueryHit> hits;
        q.mode = CollectMode::kClosest;
        const QueryResult closest = RunQuery(world, q, &hits);
        q.mode = CollectMode::kAll;
        q.max_hits = 2;
        const QueryResult all = RunQuery(world, q, &hits);
        EXPECT_EQ(Ids(hits, closest), (std::vector<uint64_t>{1}));
        EXPECT_EQ(Ids(hits, all), (std::vector<uint64_t>{1, 2}));
        EXPECT_TRUE(all.truncated);
        // Both orders of the same casts in one batch: interleaved.
        const Query both[] = {q, Query{q.kind, CollectMode::kClosest, q.ray, q.radius}};
        std::vector<QueryResult> results;
        RunBatch(world, both, &results, &hits);
        ASSERT_EQ(results.size(), 2u);
        EXPECT_EQ(Ids(hits, results[0]), (std::vector<uint64_t>{1, 2}));
        EXPECT_EQ(Ids(hits, results[1]), (std::vector<uint64_t>{1}));
      }
    }
  }
}

TEST(TieOrder, ATieAcrossTheStaticAndDynamicTreesGoesToTheSmallerId) {
  // The static tree is walked first and finds id 9; the dynamic tree's ids 4, 7 and 8 tie it.
  for (float margin : kMargins) {
    SCOPED_TRACE(::testing::Message() << "margin " << margin);
    CollisionWorld world(CollisionWorldOptions{.fat_margin = margin});
    const uint64_t ids[] = {9, 7, 4, 8};
    std::vector<BodyDesc> bodies = FourIdenticalBoxes();
    for (size_t i = 0; i < bodies.size(); ++i) {
      bodies[i].id = ids[i];
      bodies[i].kind = ids[i] == 9 ? BodyKind::kStatic : BodyKind::kDynamic;
      world.Add(bodies[i]);
    }
    world.FinishUpdates();
    ClosestHitCollector c(100.0f);
    CastRay(world, FourBoxesRay(), QueryFilter{}, c);
    ASSERT_TRUE(c.has_hit());
    EXPECT_EQ(c.hit().body_id, 4u);
  }
}

// Two copies of one box, met at margin 0 by a query that touches its face from outside: a point
// query whose radius reaches the face and a box resting on it. The numbers are ones where the
// tree's box test of the tight leaf misses the touch by an ulp that the narrow phase counts.
TEST(TieOrder, AQueryTouchingAFaceFindsEveryBodyOfThatFace) {
  struct Case {
    Vec3 half_extents;
    Vec3 position;
    Query query;
  };
  const Case cases[] = {
      {{1.90408933f, 1.18934393f, 2.88398695f},
       {-0.63539505f, 38.0132599f, -2.65120697f},
       Query{.kind = QueryKind::kWithinRadius,
             .mode = CollectMode::kAll,
             .ray = Ray{{5.7494688f, 37.7995224f, -5.26254034f}, {1, 0, 0}, 0.0f},
             .radius = 4.4807744f}},
      {{0.808627427f, 0.166767552f, 1.95264328f},
       {1.70809555f, -12.8759499f, -41.9012108f},
       Query{.kind = QueryKind::kOverlap,
             .mode = CollectMode::kAll,
             .shape = Box{{1.80670655f, 0.903404593f, 1.92337799f}},
             .pose = Pose{Quat::Identity(), {4.32342958f, -12.8677378f, -42.1818008f}}}},
  };
  for (const Case& c : cases) {
    for (float margin : kMargins) {
      SCOPED_TRACE(::testing::Message()
                   << "kind " << static_cast<int>(c.query.kind) << " margin " << margin);
      CollisionWorld world(CollisionWorldOptions{.fat_margin = margin});
      std::vector<BodyDesc> bodies;
      for (uint64_t id : {2, 1}) {
        bodies.push_back(BodyDesc{
            .id = id, .shape = Box{c.half_extents}, .pose = Pose{Quat::Identity(), c.position}});
        world.Add(bodies.back());
      }
      world.FinishUpdates();
      const std::vector<QueryHit> expected = BruteForce(bodies, c.query);
      ASSERT_EQ(expected.size(), 2u) << "the narrow phase counts the touch";
      std::vector<QueryHit> hits;
      const QueryResult got = RunQuery(world, c.query, &hits);
      ExpectAnswer(c.query, expected, got, hits.data());
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Randomised: duplicated and coplanar bodies, near and far, at every margin.

struct TieCase {
  const char* name;
  Placement placement;
  int bases;
  int queries_per_kind;
};

class TieOrderRandom : public ::testing::TestWithParam<TieCase> {};

TEST_P(TieOrderRandom, PresentQueriesMatchBruteForceAtEveryMargin) {
  const TieCase& c = GetParam();
  TieCount ties;
  for (float margin : kMargins) {
    Random r(kSeed);
    const std::vector<BodyDesc> bodies = TieScene(r, c.placement, c.bases);
    const std::vector<Query> queries = TieQueries(r, bodies, c.queries_per_kind);
    // Incremental insertion: the binary tree answers until FinishUpdates makes the 4-wide form.
    CollisionWorld world(CollisionWorldOptions{.fat_margin = margin});
    for (const BodyDesc& d : bodies) world.Add(d);
    CheckPresent(world, bodies, queries, "binary", margin, &ties);
    if (HasFatalFailure()) return;
    world.FinishUpdates();
    CheckPresent(world, bodies, queries, "wide", margin, &ties);
    if (HasFatalFailure()) return;
    // A bulk build.
    CollisionWorld bulk(CollisionWorldOptions{.fat_margin = margin});
    std::vector<BodyHandle> handles(bodies.size());
    bulk.AddBulk(bodies, handles);
    CheckPresent(bulk, bodies, queries, "bulk", margin, &ties);
    if (HasFatalFailure()) return;
  }
  std::printf("%s: %d queries, %d with a tie for the first hit\n", c.name, ties.queries, ties.tied);
  // The scenes are made of ties: most cast queries should meet one (a test of ties that meets
  // none proves nothing).
  EXPECT_GT(ties.tied, ties.queries / 5);
}

// The same scenes moved through ticks: whole groups of duplicates move together (so they stay
// tied), and queries run at every retained tick and between ticks, against brute force over the
// state recorded at the end of each tick.
TEST_P(TieOrderRandom, PastTickQueriesMatchBruteForceAtEveryMargin) {
  const TieCase& c = GetParam();
  constexpr int kTicks = 9;
  TieCount ties;
  for (float margin : kMargins) {
    Random r(kSeed + 1);
    std::vector<BodyDesc> bodies = TieScene(r, c.placement, c.bases);
    CollisionWorld world(CollisionWorldOptions{.fat_margin = margin});
    PoseHistory history(/*retained_ticks=*/16, /*start_tick=*/0, /*segment_ticks=*/4);
    std::vector<BodyHandle> handles;
    for (const BodyDesc& d : bodies) {
      handles.push_back(world.Add(d));
      history.AfterCreate(world, handles.back());
    }
    history.EndBatch(world);
    world.FinishUpdates();
    std::vector<std::vector<BodyDesc>> states{bodies};  // at the end of each tick
    for (uint64_t tick = 1; tick <= kTicks; ++tick) {
      history.AdvanceTo(tick);
      // Move the bodies sharing a pose as one (a shift and sometimes a quarter turn), so that
      // groups of duplicates stay duplicates.
      std::vector<Pose> moved_from;
      std::vector<Pose> moved_to;
      for (size_t i = 0; i < bodies.size(); ++i) {
        if (!r.Chance(0.3)) continue;
        const Pose from = bodies[i].pose;
        if (std::find(moved_from.begin(), moved_from.end(), from) != moved_from.end()) continue;
        Pose to = from;
        to.position += r.UnitVector() * (r.Uniform(0.0f, 2.0f) * c.placement.max_size);
        if (r.Chance(0.2)) to.rotation = QuatFromAxisAngle(Vec3{1, 0, 0}, 1.5707963f);
        moved_from.push_back(from);
        moved_to.push_back(to);
      }
      for (size_t i = 0; i < bodies.size(); ++i) {
        auto it = std::find(moved_from.begin(), moved_from.end(), bodies[i].pose);
        if (it == moved_from.end()) continue;
        bodies[i].pose = moved_to[it - moved_from.begin()];
        history.BeforeMove(world, handles[i]);
        world.SetPose(handles[i], bodies[i].pose);
      }
      history.EndBatch(world);
      world.FinishUpdates();
      states.push_back(bodies);
    }
    for (uint64_t tick = 0; tick <= kTicks; ++tick) {
      for (float fraction : {0.0f, 0.5f, 0.25f}) {
        if (fraction > 0.0f && tick == kTicks) continue;
        std::vector<BodyDesc> at = states[tick];
        if (fraction > 0.0f) {
          for (size_t i = 0; i < at.size(); ++i) {
            at[i].pose = LerpPose(states[tick][i].pose, states[tick + 1][i].pose, fraction);
          }
        }
        std::vector<Query> queries = TieQueries(r, at, std::max(1, c.queries_per_kind / 8));
        for (Query& q : queries) {
          q.at_tick = tick;
          q.tick_fraction = fraction;
        }
        std::vector<QueryResult> results;
        std::vector<QueryHit> hits;
        RunBatch(world, history, queries, &results, &hits);
        ASSERT_EQ(results.size(), queries.size());
        std::vector<QueryHit> single;
        for (size_t i = 0; i < queries.size(); ++i) {
          const Query& q = queries[i];
          SCOPED_TRACE(Describe(q, "past", margin, static_cast<int>(i)));
          SCOPED_TRACE(::testing::Message() << "tick " << tick << " fraction " << fraction);
          const std::vector<QueryHit> expected = BruteForce(at, q);
          ties.Note(expected);
          ExpectAnswer(q, expected, results[i], hits.data() + results[i].first_hit);
          if (HasFatalFailure()) return;
          single.clear();
          const QueryResult one = RunQuery(world, history, q, &single);
          ExpectAnswer(q, expected, one, single.data());
          if (HasFatalFailure()) return;
        }
      }
    }
  }
  std::printf("%s past: %d queries, %d with a tie for the first hit\n", c.name, ties.queries,
              ties.tied);
  EXPECT_GT(ties.tied, ties.queries / 5);
}

INSTANTIATE_TEST_SUITE_P(Scenes, TieOrderRandom,
                         ::testing::Values(TieCase{"near", kNear, 60, 300},
                                           TieCase{"far", kFar, 60, 300}),
                         [](const ::testing::TestParamInfo<TieCase>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace collide
