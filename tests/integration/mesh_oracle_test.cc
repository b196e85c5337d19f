// Mesh and heightfield bodies through the real server against an independent oracle: every
// triangle of every placed asset, in world coordinates computed in double, tested by the plainest
// definitions of tests/geom/triangle_oracle.h (a ray meets a triangle's plane at a point whose
// barycentric coordinates are >= 0; a ball's cast is the first root of its distance function;
// a point's distance is the least over faces and edges). Random meshes (soups with slivers and
// degenerate triangles), closed boxes and terrains, placed rotated and scaled; rays aimed at
// shared edges and vertices of closed boxes and terrains hit exactly once there; a moving mesh
// instance answers past-tick queries where it was.

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "geom/oracle.h"
#include "geom/triangle_oracle.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

using oracle::DTriangle;
using oracle::DVec3;

constexpr uint32_t kSeed = 4242;
constexpr char kScene[] = "level";

// An asset's triangles in its own frame, in double, with their indices (holes skipped).
struct OracleAsset {
  std::vector<DTriangle> triangles;
  std::vector<uint32_t> ids;
  // How far the stored surface may be from these triangles (a heightfield's quantisation).
  double slack = 0.0;
};

// A placed asset: its body id and where.
struct OracleBody {
  uint64_t id = 0;
  const OracleAsset* asset = nullptr;
  Quat rotation = Quat::Identity();
  DVec3 position{};
  double scale = 1.0;
};

DVec3 Rotate(const Quat& q, const DVec3& v) {
  const Vec3 f = collide::Rotate(q, Vec3{1, 0, 0});
  const Vec3 g = collide::Rotate(q, Vec3{0, 1, 0});
  const Vec3 h = collide::Rotate(q, Vec3{0, 0, 1});
  return oracle::ToDouble(f) * v.x + oracle::ToDouble(g) * v.y + oracle::ToDouble(h) * v.z;
}

DTriangle ToWorld(const OracleBody& b, const DTriangle& t) {
  auto place = [&](const DVec3& p) { return Rotate(b.rotation, p * b.scale) + b.position; };
  return DTriangle{place(t.a), place(t.b), place(t.c)};
}

// One hit of the oracle: the body, the triangle, the distance, and how clear the decision is
// (the barycentric margin of a ray, in length; large for the other kinds).
struct OracleHit {
  uint64_t body = 0;
  uint32_t triangle = 0;
  double distance = 0.0;
  double margin = 1.0;
};

// Every triangle the ray meets (margin > -`eps`).
std::vector<OracleHit> RayHits(const std::vector<OracleBody>& bodies, const DVec3& origin,
                               const DVec3& direction, double max_distance, double eps) {
  std::vector<OracleHit> out;
  for (const OracleBody& body : bodies) {
    for (size_t k = 0; k < body.asset->triangles.size(); ++k) {
      const DTriangle t = ToWorld(body, body.asset->triangles[k]);
      // A generous reach: the margin decides.
      const oracle::RayTriangleOracle r =
          oracle::RayTriangleByPlane(origin, direction, max_distance + eps, t);
      if (!std::isfinite(r.t) || r.t < -eps || r.t > max_distance + eps) continue;
      if (r.margin < -eps - body.asset->slack) continue;
      // Degenerate triangles are never hit by rays.
      if (Length(Cross(t.b - t.a, t.c - t.a)) == 0.0) continue;
      out.push_back(OracleHit{body.id, body.asset->ids[k], std::max(r.t, 0.0), r.margin});
    }
  }
  return out;
}

// The distance from `p` to the nearest triangle of each body within `radius` (+ eps).
std::vector<OracleHit> PointHits(const std::vector<OracleBody>& bodies, const DVec3& p,
                                 double radius) {
  std::vector<OracleHit> out;
  for (const OracleBody& body : bodies) {
    for (size_t k = 0; k < body.asset->triangles.size(); ++k) {
      const double d = oracle::PointTriangleDistance(p, ToWorld(body, body.asset->triangles[k]));
      if (d <= radius) out.push_back(OracleHit{body.id, body.asset->ids[k], d, radius - d});
    }
  }
  return out;
}

DVec3 D(const v1::Vec3& v) { return DVec3{v.x(), v.y(), v.z()}; }

// A closed box [0, 1]^3: 12 triangles sharing 8 corners.
void AddBox(std::vector<float>* v, std::vector<uint32_t>* i, float x0, float y0, float z0, float sx,
            float sy, float sz) {
  static const uint32_t kFaces[] = {0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
                                    2, 3, 7, 2, 7, 6, 1, 2, 6, 1, 6, 5, 0, 4, 7, 0, 7, 3};
  const uint32_t base = static_cast<uint32_t>(v->size() / 3);
  for (int c = 0; c < 8; ++c) {
    v->push_back(x0 + ((c == 1 || c == 2 || c == 5 || c == 6) ? sx : 0.0f));
    v->push_back(y0 + ((c == 2 || c == 3 || c == 6 || c == 7) ? sy : 0.0f));
    v->push_back(z0 + (c >= 4 ? sz : 0.0f));
  }
  for (uint32_t f : kFaces) i->push_back(base + f);
}

OracleAsset MeshOracle(const std::vector<float>& v, const std::vector<uint32_t>& idx) {
  OracleAsset out;
  auto at = [&](uint32_t k) { return DVec3{v[3 * k], v[3 * k + 1], v[3 * k + 2]}; };
  for (size_t t = 0; t + 2 < idx.size(); t += 3) {
    out.triangles.push_back(DTriangle{at(idx[t]), at(idx[t + 1]), at(idx[t + 2])});
    out.ids.push_back(static_cast<uint32_t>(t / 3));
  }
  return out;
}

OracleAsset FieldOracle(int rows, int columns, double sx, double sz,
                        const std::vector<float>& heights, const std::vector<uint8_t>& hole_bits,
                        double slack) {
  OracleAsset out;
  out.slack = slack;
  auto s = [&](int i, int j) {
    return DVec3{j * sx, heights[static_cast<size_t>(i * columns + j)], i * sz};
  };
  for (int i = 0; i + 1 < rows; ++i) {
    for (int j = 0; j + 1 < columns; ++j) {
      const int c = i * (columns - 1) + j;
      if (!hole_bits.empty() && ((hole_bits[c / 8] >> (c % 8)) & 1)) continue;
      out.triangles.push_back(DTriangle{s(i, j), s(i + 1, j), s(i + 1, j + 1)});
      out.ids.push_back(static_cast<uint32_t>(2 * c));
      out.triangles.push_back(DTriangle{s(i, j), s(i + 1, j + 1), s(i, j + 1)});
      out.ids.push_back(static_cast<uint32_t>(2 * c + 1));
    }
  }
  return out;
}

// Each test runs at several fat margins: leaves that reach past their bodies by 0, a little and
// more than the meshes' own sizes must not change an answer.
class MeshOracleTest : public ::testing::TestWithParam<float> {
 protected:
  void SetUp() override {
    auto server = ServerProcess::Start();
    ASSERT_TRUE(IsOk(server));
    server_ = *std::move(server);
    client_ = server_->NewClient();
    v1::SceneOptions options;
    options.set_fat_margin(GetParam());
    options.set_history_ticks(32);
    ASSERT_TRUE(IsOk(client_->CreateScene(kScene, options)));
  }

  // Uploads a mesh and keeps its oracle.
  void UploadMesh(const std::string& name, const std::vector<float>& v,
                  const std::vector<uint32_t>& idx) {
    ASSERT_TRUE(IsOk(client_->UploadMesh(kScene, name, client::MeshArrays{v, idx})));
    assets_[name] = MeshOracle(v, idx);
  }

  void UploadField(const std::string& name, int rows, int columns, float sx, float sz,
                   const std::vector<float>& heights, const std::vector<uint8_t>& holes) {
    absl::StatusOr<v1::UploadAssetResponse> uploaded = client_->UploadHeightfield(
        kScene, name,
        client::HeightfieldArrays{.rows = static_cast<uint64_t>(rows),
                                  .columns = static_cast<uint64_t>(columns),
                                  .spacing_x = sx,
                                  .spacing_z = sz,
                                  .heights = heights,
                                  .holes = holes});
    ASSERT_TRUE(IsOk(uploaded));
    assets_[name] = FieldOracle(rows, columns, sx, sz, heights, holes,
                                2.0 * uploaded->asset().max_height_error());
  }

  // Places body `id` and keeps it for the oracle.
  void Place(uint64_t id, const std::string& name, bool heightfield, const Quat& rotation,
             const Vec3& position, float scale) {
    v1::Body body = client::MakeStaticBody(
        id, heightfield ? client::MakeHeightfield(name, scale) : client::MakeMesh(name, scale),
        client::MakePose(client::MakeVec3(position.x, position.y, position.z),
                         client::MakeQuat(rotation.x, rotation.y, rotation.z, rotation.w)));
    ASSERT_TRUE(IsOk(client_->UpsertBodies(kScene, std::vector<v1::Body>{body})));
    bodies_.push_back(
        OracleBody{id, &assets_[name], Normalize(rotation), oracle::ToDouble(position), scale});
  }

  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<client::Client> client_;
  std::map<std::string, OracleAsset> assets_;
  std::vector<OracleBody> bodies_;
};

// Checks the server's MODE_ALL ray answer against the oracle: every clear oracle hit is in it,
// everything in it is an oracle hit, in (distance, id, triangle) order.
void CheckRay(const std::vector<OracleBody>& bodies, const v1::Raycast& ray,
              const v1::QueryResponse& got, const std::string& where) {
  const DVec3 origin = D(ray.origin());
  const DVec3 direction = Normalized(D(ray.direction()));
  const double eps = 2e-4 * (1.0 + oracle::MaxAbs(origin) + ray.max_distance());
  const std::vector<OracleHit> hits = RayHits(bodies, origin, direction, ray.max_distance(), eps);
  for (const v1::Hit& h : got.hits()) {
    ASSERT_TRUE(h.has_triangle()) << where;
    auto match = std::find_if(hits.begin(), hits.end(), [&](const OracleHit& o) {
      return o.body == h.body_id() && o.triangle == h.triangle() &&
             std::fabs(o.distance - h.distance()) <= eps;
    });
    EXPECT_NE(match, hits.end()) << where << ": body " << h.body_id() << " triangle "
                                 << h.triangle() << " at " << h.distance() << " is no hit";
  }
  for (const OracleHit& o : hits) {
    const bool clear = o.margin > eps && o.distance > eps && o.distance < ray.max_distance() - eps;
    if (!clear) continue;
    auto found = std::find_if(got.hits().begin(), got.hits().end(), [&](const v1::Hit& h) {
      return h.body_id() == o.body && h.triangle() == o.triangle;
    });
    EXPECT_NE(found, got.hits().end())
        << where << ": missed body " << o.body << " triangle " << o.triangle << " at " << o.distance
        << " (margin " << o.margin << ")";
  }
  for (int i = 1; i < got.hits_size(); ++i) {
    const v1::Hit& a = got.hits(i - 1);
    const v1::Hit& b = got.hits(i);
    EXPECT_TRUE(a.distance() < b.distance() ||
                (a.distance() == b.distance() &&
                 (a.body_id() < b.body_id() ||
                  (a.body_id() == b.body_id() && a.triangle() < b.triangle()))))
        << where << ": hits " << i - 1 << " and " << i << " out of order";
  }
}

TEST_P(MeshOracleTest, RandomRaysPointsAndCastsAgreeWithTheOracle) {
  std::mt19937 rng(kSeed);
  // A soup with slivers and degenerate triangles, a city block of closed boxes, a terrain with
  // holes.
  std::vector<float> soup;
  std::vector<uint32_t> soup_idx;
  std::uniform_real_distribution<float> u(-4, 4);
  for (int t = 0; t < 60; ++t) {
    const float cx = u(rng), cy = u(rng), cz = u(rng);
    for (int c = 0; c < 3; ++c) {
      soup.push_back(cx + 0.8f * u(rng) / 4);
      soup.push_back(t % 10 == 0 ? cy : cy + 0.8f * u(rng) / 4);  // some flat, some slivers
      soup.push_back(cz + 0.8f * u(rng) / 4);
    }
    const uint32_t b = static_cast<uint32_t>(3 * t);
    if (t % 17 == 0) {
      soup_idx.insert(soup_idx.end(), {b, b, b + 1});  // zero area
    } else {
      soup_idx.insert(soup_idx.end(), {b, b + 1, b + 2});
    }
  }
  UploadMesh("soup", soup, soup_idx);
  std::vector<float> block;
  std::vector<uint32_t> block_idx;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      AddBox(&block, &block_idx, 3.0f * j, 0, 3.0f * i, 2, 1.0f + i + j, 2);
    }
  }
  UploadMesh("block", block, block_idx);
  std::vector<float> heights;
  for (int i = 0; i < 12; ++i) {
    for (int j = 0; j < 12; ++j) heights.push_back(0.7f * std::sin(0.5f * i) * std::cos(0.4f * j));
  }
  std::vector<uint8_t> holes(16, 0);
  holes[2] = 0x24;
  UploadField("terrain", 12, 12, 1.5f, 1.25f, heights, holes);

  Place(1, "soup", false, Quat::Identity(), Vec3{0, 2, 0}, 1.0f);
  Place(2, "block", false, oracle::RandomRotation(rng), Vec3{12, 0, -3}, 0.75f);
  Place(3, "terrain", true, Quat::Identity(), Vec3{-10, -3, -8}, 1.0f);
  Place(4, "block", false, Quat::Identity(), Vec3{-5, 3, 5}, 2.0f);

  std::unique_ptr<client::QueryStreamSession> session = *client_->OpenQueryStream(kScene);
  for (int round = 0; round < 40; ++round) {
    v1::QueryBatch batch;
    batch.set_scene(kScene);
    std::vector<v1::Raycast> rays;
    for (int k = 0; k < 16; ++k) {
      const Vec3 origin{u(rng) * 4, u(rng) * 2 + 4, u(rng) * 4};
      const Vec3 target{u(rng) * 3, u(rng), u(rng) * 3};
      v1::Raycast ray = client::MakeRaycast(
          client::MakeVec3(origin.x, origin.y, origin.z),
          client::MakeVec3(target.x - origin.x, target.y - origin.y, target.z - origin.z), 60);
      rays.push_back(ray);
      *batch.add_queries() = client::MakeRaycastQuery(k, ray, v1::MODE_ALL, 4096);
    }
    absl::StatusOr<v1::QueryBatchResult> result = session->Run(batch);
    ASSERT_TRUE(IsOk(result));
    for (int k = 0; k < 16; ++k) {
      v1::QueryResponse response;
      *response.mutable_hits() = result->results(k).hits();
      CheckRay(bodies_, rays[k], response,
               absl::StrCat("seed ", kSeed, " round ", round, " ray ", k));
    }
    if (HasFailure()) return;
  }

  // Point queries: the nearest triangle's distance (MODE_CLOSEST), every triangle within the
  // radius (MODE_ALL).
  for (int k = 0; k < 150; ++k) {
    const DVec3 p{u(rng) * 4.0, u(rng) * 1.5 + 1.0, u(rng) * 4.0};
    const double radius = 0.5 + std::fabs(u(rng)) / 2;
    v1::QueryBatch batch;
    batch.set_scene(kScene);
    const v1::PointQuery point =
        client::MakePoint(client::MakeVec3(p.x, p.y, p.z), static_cast<float>(radius));
    *batch.add_queries() = client::MakePointQuery(1, point, v1::MODE_CLOSEST);
    *batch.add_queries() = client::MakePointQuery(2, point, v1::MODE_ALL, 4096);
    absl::StatusOr<v1::QueryBatchResult> result = session->Run(batch);
    ASSERT_TRUE(IsOk(result));
    const std::vector<OracleHit> within = PointHits(bodies_, p, radius + 1e-3);
    const std::string where = absl::StrCat("seed ", kSeed, " point ", k);
    const double eps = 1e-3;
    double nearest = radius + 1.0;
    for (const OracleHit& o : within) nearest = std::min(nearest, o.distance);
    const v1::QueryResult& closest = result->results(0);
    if (nearest < radius - eps) {
      ASSERT_EQ(closest.hits_size(), 1) << where;
      EXPECT_NEAR(closest.hits(0).distance(), nearest, eps) << where;
    } else if (nearest > radius + eps) {
      EXPECT_EQ(closest.hits_size(), 0) << where;
    }
    for (const v1::Hit& h : result->results(1).hits()) {
      auto match = std::find_if(within.begin(), within.end(), [&](const OracleHit& o) {
        return o.body == h.body_id() && o.triangle == h.triangle() &&
               std::fabs(o.distance - h.distance()) <= eps;
      });
      EXPECT_NE(match, within.end()) << where << ": triangle " << h.triangle();
    }
    for (const OracleHit& o : within) {
      if (o.distance > radius - eps) continue;
      auto found = std::find_if(
          result->results(1).hits().begin(), result->results(1).hits().end(),
          [&](const v1::Hit& h) { return h.body_id() == o.body && h.triangle() == o.triangle; });
      EXPECT_NE(found, result->results(1).hits().end()) << where << ": missed " << o.triangle;
    }
    if (HasFailure()) return;
  }

  // Sphere casts: the first contact is where the ball's centre first comes `radius` from a
  // triangle (the oracle's conservative advancement on the exact distance).
  for (int k = 0; k < 40; ++k) {
    const DVec3 o{u(rng) * 4.0, 6.0 + std::fabs(u(rng)), u(rng) * 4.0};
    const DVec3 d = Normalized(DVec3{u(rng) * 0.3, -1.0, u(rng) * 0.3});
    const double radius = 0.2 + std::fabs(u(rng)) / 8;
    v1::SphereCastRequest request;
    request.set_scene(kScene);
    *request.mutable_cast() =
        client::MakeSphereCast(client::MakeVec3(o.x, o.y, o.z), client::MakeVec3(d.x, d.y, d.z), 30,
                               static_cast<float>(radius));
    absl::StatusOr<v1::QueryResponse> got = client_->SphereCast(request);
    ASSERT_TRUE(IsOk(got));
    double first = 1e9;
    for (const OracleBody& body : bodies_) {
      for (const DTriangle& t : body.asset->triangles) {
        const oracle::TriangleCastOracle c =
            oracle::SphereCastByDistance(o, d, 30, radius, ToWorld(body, t));
        if (c.hits) first = std::min(first, c.t_hit);
      }
    }
    const std::string where = absl::StrCat("seed ", kSeed, " cast ", k);
    if (first < 1e9) {
      ASSERT_EQ(got->hits_size(), 1) << where;
      EXPECT_NEAR(got->hits(0).distance(), first, 2e-3) << where;
      EXPECT_TRUE(got->hits(0).has_triangle()) << where;
    } else {
      EXPECT_EQ(got->hits_size(), 0) << where;
    }
  }
}

TEST_P(MeshOracleTest, RaysThroughSharedEdgesAndVerticesHitExactlyOnce) {
  // A closed box at (1, 1, 1) of side 2, and a terrain whose samples sit on a 1 m grid.
  std::vector<float> box;
  std::vector<uint32_t> box_idx;
  AddBox(&box, &box_idx, 0, 0, 0, 2, 2, 2);
  UploadMesh("box", box, box_idx);
  std::vector<float> heights(10 * 10);
  for (int i = 0; i < 10; ++i) {
    for (int j = 0; j < 10; ++j) heights[i * 10 + j] = static_cast<float>((i + 2 * j) % 3);
  }
  UploadField("grid", 10, 10, 1.0f, 1.0f, heights, {});
  Place(1, "box", false, Quat::Identity(), Vec3{1, 1, 1}, 1.0f);
  Place(2, "grid", true, Quat::Identity(), Vec3{20, 0, 0}, 1.0f);

  std::unique_ptr<client::QueryStreamSession> session = *client_->OpenQueryStream(kScene);
  v1::QueryBatch batch;
  batch.set_scene(kScene);
  std::vector<std::string> names;
  auto add = [&](const std::string& name, const Vec3& origin, const Vec3& target, int expected) {
    const Vec3 d = target - origin;
    *batch.add_queries() =
        client::MakeRaycastQuery(static_cast<uint64_t>(expected),
                                 client::MakeRaycast(client::MakeVec3(origin.x, origin.y, origin.z),
                                                     client::MakeVec3(d.x, d.y, d.z), 100),
                                 v1::MODE_ALL, 64);
    names.push_back(name);
  };
  // Straight through the box: in and out, across a face's diagonal (shared by its two
  // triangles), an edge between two faces, a corner of three.
  add("face diagonal", Vec3{2, 10, 2}, Vec3{2, 0, 2}, 2);
  add("face diagonal, skew", Vec3{1.5f, 10, 1.5f}, Vec3{2.5f, -5, 2.5f}, 2);
  // Along x + z = 4 at y = 2: in across the vertical edge (1, y, 3) of faces x = 1 and z = 3,
  // out across the edge (3, y, 1).
  add("edges between two faces", Vec3{-1, 2, 5}, Vec3{5, 2, -1}, 2);
  add("corner to corner", Vec3{-1, -1, -1}, Vec3{5, 5, 5}, 2);
  add("corner to corner, other diagonal", Vec3{4, -1, 4}, Vec3{-2, 5, -2}, 2);
  // Down onto the terrain at its samples (vertices of up to six triangles) and edges.
  for (int i = 1; i < 9; ++i) {
    for (int j = 1; j < 9; ++j) {
      add(absl::StrCat("sample ", i, " ", j), Vec3{20.0f + j, 10, static_cast<float>(i)},
          Vec3{20.0f + j, 0, static_cast<float>(i)}, 1);
      add(absl::StrCat("edge ", i, " ", j), Vec3{20.5f + j, 10, static_cast<float>(i)},
          Vec3{20.5f + j, 0, static_cast<float>(i)}, 1);
      add(absl::StrCat("diagonal ", i, " ", j), Vec3{20.5f + j, 10, 0.5f + i},
          Vec3{20.5f + j, 0, 0.5f + i}, 1);
    }
  }
  absl::StatusOr<v1::QueryBatchResult> result = session->Run(batch);
  ASSERT_TRUE(IsOk(result));
  for (int k = 0; k < batch.queries_size(); ++k) {
    const v1::QueryResult& r = result->results(k);
    const int expected = static_cast<int>(r.request_id());
    EXPECT_EQ(r.hits_size(), expected) << names[k] << ": " << r.ShortDebugString();
    // Two hits on the box: entering (front) and leaving (back).
    if (expected == 2 && r.hits_size() == 2) {
      EXPECT_FALSE(r.hits(0).back_face()) << names[k];
      EXPECT_TRUE(r.hits(1).back_face()) << names[k];
    }
  }
}

TEST_P(MeshOracleTest, AMovingInstanceAnswersPastTicksWhereItWas) {
  std::vector<float> box;
  std::vector<uint32_t> box_idx;
  AddBox(&box, &box_idx, -1, -1, -1, 2, 2, 2);
  UploadMesh("lift", box, box_idx);
  // A dynamic body: a lift going up 1 m per tick.
  v1::Body lift =
      client::MakeBody(1, client::MakeMesh("lift"), client::MakePose(client::MakeVec3(0, 0, 0)));
  ASSERT_TRUE(IsOk(client_->UpsertBodies(kScene, std::vector<v1::Body>{lift})));
  absl::StatusOr<std::unique_ptr<client::UpdateWriter>> writer =
      client_->OpenUpdateStream(kScene, 0);
  ASSERT_TRUE(IsOk(writer));
  for (uint64_t tick = 1; tick <= 10; ++tick) {
    v1::UpdateBatch batch;
    batch.set_scene(kScene);
    batch.set_tick(tick);
    *batch.add_ops() = client::MakeSetPoseOp(
        1, client::MakePose(client::MakeVec3(0, static_cast<float>(tick), 0)));
    absl::StatusOr<v1::UpdateAck> ack = (*writer)->Apply(batch);
    ASSERT_TRUE(IsOk(ack));
    ASSERT_FALSE(ack->has_error()) << ack->ShortDebugString();
  }
  std::unique_ptr<client::QueryStreamSession> session = *client_->OpenQueryStream(kScene);
  v1::QueryBatch batch;
  batch.set_scene(kScene);
  for (uint64_t tick = 2; tick <= 10; ++tick) {
    v1::Query query = client::MakeRaycastQuery(
        tick,
        client::MakeRaycast(client::MakeVec3(0.3f, 50, 0.2f), client::MakeVec3(0, -1, 0), 100),
        v1::MODE_ALL, 64);
    *batch.add_queries() = client::AtTick(query, tick);
    // Halfway to the next tick.
    if (tick < 10) *batch.add_queries() = client::AtTick(query, tick, 0.5f);
  }
  absl::StatusOr<v1::QueryBatchResult> result = session->Run(batch);
  ASSERT_TRUE(IsOk(result));
  int index = 0;
  for (uint64_t tick = 2; tick <= 10; ++tick) {
    for (double fraction : {0.0, 0.5}) {
      if (tick == 10 && fraction > 0) continue;
      const v1::QueryResult& r = result->results(index++);
      const double y = static_cast<double>(tick) + fraction;
      std::vector<OracleBody> then = {
          OracleBody{1, &assets_["lift"], Quat::Identity(), DVec3{0, y, 0}, 1.0}};
      v1::QueryResponse response;
      *response.mutable_hits() = r.hits();
      CheckRay(
          then,
          client::MakeRaycast(client::MakeVec3(0.3f, 50, 0.2f), client::MakeVec3(0, -1, 0), 100),
          response, absl::StrCat("tick ", tick, " + ", fraction));
      ASSERT_EQ(r.hits_size(), 2) << tick << " " << fraction;
      EXPECT_NEAR(r.hits(0).distance(), 50.0 - (y + 1), 1e-4) << tick << " " << fraction;
    }
  }
  ASSERT_TRUE(IsOk((*writer)->Finish()));
}

INSTANTIATE_TEST_SUITE_P(FatMargins, MeshOracleTest, ::testing::Values(0.0f, 0.1f, 4.0f));

}  // namespace
}  // namespace collide::integration
