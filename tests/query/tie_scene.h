#pragma once

// The scenes and queries of the tie-order tests (tests/query/tie_order_test.cc at the present
// tick, tests/history/tie_order_past_test.cc at past ticks): bodies hit at exactly the same
// distance (duplicated bodies at one pose, boxes sharing a face plane) and queries aimed at
// faces, edges and along axes.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "geom/bounds.h"
#include "query/batch.h"
#include "query/body.h"
#include "query/brute_force.h"
#include "query/hit.h"

namespace collide::testing {

inline constexpr uint32_t kSeed = 20260516;
// Every fat margin the tests run at: tight leaves, a hair, and the usual sizes.
inline constexpr float kMargins[] = {0.0f, 1e-6f, 0.01f, 0.1f, 1.0f};

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
inline constexpr Placement kNear{0.0f, 30.0f, 0.2f, 3.0f};
inline constexpr Placement kFar{1e5f, 200.0f, 1.0f, 20.0f};

// A shape and pose for a group of duplicates; unrotated boxes most often (their faces are their
// bounds' faces), then boxes turned a quarter, random rotations, spheres and capsules.
inline BodyDesc RandomBase(Random& r, const Placement& p) {
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
inline std::vector<BodyDesc> TieScene(Random& r, const Placement& p, int bases) {
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

inline Face RandomFace(Random& r, const BodyDesc& d) {
  return Face{Bounds(d.shape, d.pose), r.Int(0, 2), r.Sign()};
}

// A point of the face: inside it, or on one of its edges or corners now and then.
inline Vec3 PointOn(Random& r, const Face& f) {
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

inline Vec3 AxisVector(int axis, float sign) {
  Vec3 v{};
  v[axis] = sign;
  return v;
}

// A path that reaches `target` on face `f`, from `back` away: along the axis, nearly along it,
// obliquely, or (for a ray) lying in the face's plane, or along one of its edges.
inline Ray PathTo(Random& r, const Face& f, const Vec3& target, float back, float radius) {
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
inline Query TieQuery(Random& r, const std::vector<BodyDesc>& scene, size_t kind) {
  const BodyDesc& d = scene[r.Int(0, static_cast<int>(scene.size()) - 1)];
  const Face face = RandomFace(r, d);
  const Vec3 target = PointOn(r, face);
  const float size = MaxComponent(HalfExtents(face.box));
  const float back = r.Uniform(0.1f, 3.0f) * size;
  Query q;
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
    case 0:  // RaycastQuery
      q.shape_query = RaycastQuery{.ray = PathTo(r, face, target, back, 0.0f)};
      break;
    case 1: {  // SphereCastQuery
      SphereCastQuery s;
      s.radius = radius_choice[r.Int(0, 2)];
      s.ray = PathTo(r, face, target, back, s.radius);
      q.shape_query = s;
      break;
    }
    case 3: {  // WithinRadiusQuery
      // A point in front of the face with the radius reaching exactly to it, or from inside.
      const float gap = r.Chance(0.2) ? 0.0f : back;
      q.shape_query = WithinRadiusQuery{.point = target + AxisVector(face.axis, face.side) * gap,
                                        .radius = gap};
      break;
    }
    case 2: {  // OverlapQuery
      // An unrotated box or a ball resting on the face from outside, or a duplicate of the body.
      OverlapQuery o;
      if (r.Chance(0.2)) {
        o.shape = d.shape;
        o.pose = d.pose;
      } else if (r.Chance(0.5)) {
        const Vec3 e{r.Uniform(0.1f, 1.0f) * size, r.Uniform(0.1f, 1.0f) * size,
                     r.Uniform(0.1f, 1.0f) * size};
        o.shape = Box{e};
        o.pose = Pose{Quat::Identity(), target + AxisVector(face.axis, face.side) * e[face.axis]};
      } else {
        const float radius = r.Uniform(0.1f, 1.0f) * size;
        o.shape = Sphere{radius};
        o.pose = Pose{Quat::Identity(), target + AxisVector(face.axis, face.side) * radius};
      }
      o.detail = r.Chance(0.5);
      q.shape_query = o;
      break;
    }
    default: {  // RegionQuery
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
      q.shape_query = RegionQuery{.region = region};
      break;
    }
  }
  return q;
}

inline std::string Describe(const Query& q, const char* path, float margin, int index) {
  char buf[320];
  const Ray ray = testing::DescribedPath(q);
  std::snprintf(buf, sizeof buf,
                "seed %u %s margin %g query %d kind %d mode %d max_hits %u ray (%.9g %.9g %.9g) "
                "dir (%.9g %.9g %.9g) max %.9g radius %.9g",
                kSeed, path, margin, index, static_cast<int>(q.shape_query.index()),
                static_cast<int>(q.mode), q.max_hits, ray.origin.x, ray.origin.y, ray.origin.z,
                ray.direction.x, ray.direction.y, ray.direction.z, ray.max_distance,
                testing::DescribedRadius(q));
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

inline std::vector<Query> TieQueries(Random& r, const std::vector<BodyDesc>& scene, int per_kind) {
  std::vector<Query> queries;
  for (size_t kind = 0; kind < std::variant_size_v<ShapeQuery>; ++kind) {
    for (int i = 0; i < per_kind; ++i) {
      queries.push_back(TieQuery(r, scene, kind));
    }
  }
  // Mixed order: runs of casts go through the interleaved batch path.
  std::shuffle(queries.begin(), queries.end(), r.engine());
  return queries;
}

// One randomised case: where the scene sits, its groups of duplicates, the queries per kind.
struct TieCase {
  const char* name;
  Placement placement;
  int bases;
  int queries_per_kind;
};

// The randomised cases both tie-order tests run: near the origin and far from it.
inline constexpr TieCase kTieCases[] = {{"near", kNear, 60, 300}, {"far", kFar, 60, 300}};

// A parameterised test's name for its case.
inline std::string TieCaseName(const ::testing::TestParamInfo<TieCase>& info) {
  return info.param.name;
}

}  // namespace collide::testing
