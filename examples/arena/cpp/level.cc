#include "examples/arena/cpp/level.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "client/cpp/builders.h"

namespace collide::arena {
namespace {

constexpr float kSpacing = 2.0f;       // metres between terrain samples
constexpr float kBeyond = 10.0f;       // the terrain's reach beyond the play field
constexpr uint32_t kLevelSeed = 2929;  // the buildings' sizes: the same level every run
constexpr float kGrid[4] = {-75.0f, -25.0f, 25.0f, 75.0f};

// Rolling hills: a few sines, about +-3.5 m.
float Hills(float x, float z) {
  return 1.8f * std::sin(x / 13.0f) * std::cos(z / 17.0f) +
         1.2f * std::sin((x - 0.6f * z) / 23.0f + 1.0f) + 0.5f * std::cos((0.8f * x + z) / 7.0f);
}

float Sample(const Level& level, uint32_t i, uint32_t j) {
  return level.heights[static_cast<size_t>(i) * level.columns + j];
}

}  // namespace

Level MakeLevel(float half_side) {
  Level level;
  const float reach = half_side + kBeyond;
  level.spacing = kSpacing;
  level.columns = level.rows = static_cast<uint32_t>(std::ceil(2.0f * reach / kSpacing)) + 1;
  level.origin_x = level.origin_z = -reach;
  level.heights.resize(static_cast<size_t>(level.rows) * level.columns);
  float lowest = 0;
  for (uint32_t i = 0; i < level.rows; ++i) {
    for (uint32_t j = 0; j < level.columns; ++j) {
      const float h = Hills(level.origin_x + static_cast<float>(j) * kSpacing,
                            level.origin_z + static_cast<float>(i) * kSpacing);
      level.heights[static_cast<size_t>(i) * level.columns + j] = h;
      lowest = std::min(lowest, h);
    }
  }
  level.bottom = std::floor(lowest) - 2.0f;
  std::mt19937 rng(kLevelSeed);
  std::uniform_real_distribution<float> jitter(-6.0f, 6.0f), half(4.0f, 8.0f), tall(8.0f, 20.0f);
  for (float cx : kGrid) {
    for (float cz : kGrid) {
      const float x = cx + jitter(rng), z = cz + jitter(rng);
      const float hx = half(rng), hz = half(rng), height = tall(rng);
      Building b{.min_x = x - hx, .min_z = z - hz, .max_x = x + hx, .max_z = z + hz, .top = 0};
      // As tall as `height` above the highest ground under the footprint's corners and centre.
      float ground = GroundHeight(level, x, z);
      for (float px : {b.min_x, b.max_x}) {
        for (float pz : {b.min_z, b.max_z}) ground = std::max(ground, GroundHeight(level, px, pz));
      }
      b.top = ground + height;
      level.buildings.push_back(b);
    }
  }
  return level;
}

float GroundHeight(const Level& level, float x, float z) {
  const float u = (x - level.origin_x) / level.spacing, v = (z - level.origin_z) / level.spacing;
  const uint32_t j =
      static_cast<uint32_t>(std::clamp(std::floor(u), 0.0f, static_cast<float>(level.columns - 2)));
  const uint32_t i =
      static_cast<uint32_t>(std::clamp(std::floor(v), 0.0f, static_cast<float>(level.rows - 2)));
  const float fu = std::clamp(u - static_cast<float>(j), 0.0f, 1.0f);
  const float fv = std::clamp(v - static_cast<float>(i), 0.0f, 1.0f);
  const float h00 = Sample(level, i, j), h01 = Sample(level, i, j + 1);
  const float h10 = Sample(level, i + 1, j), h11 = Sample(level, i + 1, j + 1);
  // Triangle (s(i, j), s(i + 1, j), s(i + 1, j + 1)) where fv >= fu, else (s(i, j),
  // s(i + 1, j + 1), s(i, j + 1)): the plane through each triangle's three samples.
  if (fv >= fu) return h00 + fv * (h10 - h00) + fu * (h11 - h10);
  return h00 + fu * (h01 - h00) + fv * (h11 - h01);
}

bool InsideBuilding(const Level& level, float x, float z, float margin) {
  for (const Building& b : level.buildings) {
    if (x >= b.min_x - margin && x <= b.max_x + margin && z >= b.min_z - margin &&
        z <= b.max_z + margin) {
      return true;
    }
  }
  return false;
}

void BuildingMesh(const Level& level, std::vector<float>* vertices,
                  std::vector<uint32_t>* indices) {
  for (const Building& b : level.buildings) {
    const uint32_t base = static_cast<uint32_t>(vertices->size() / 3);
    // Corner k: x from bit 0, y from bit 1, z from bit 2.
    for (int k = 0; k < 8; ++k) {
      vertices->insert(vertices->end(), {k & 1 ? b.max_x : b.min_x, k & 2 ? b.top : level.bottom,
                                         k & 4 ? b.max_z : b.min_z});
    }
    // Each face as two triangles, counter-clockwise seen from outside.
    static constexpr uint32_t kFaces[6][4] = {
        {0, 2, 3, 1},  // z = min
        {4, 5, 7, 6},  // z = max
        {0, 1, 5, 4},  // y = bottom
        {2, 6, 7, 3},  // y = top
        {0, 4, 6, 2},  // x = min
        {1, 3, 7, 5},  // x = max
    };
    for (const auto& f : kFaces) {
      indices->insert(indices->end(), {base + f[0], base + f[1], base + f[2], base + f[0],
                                       base + f[2], base + f[3]});
    }
  }
}

absl::Status UploadLevel(client::Client& client, const std::string& scene, const Level& level,
                         uint64_t terrain_id, uint64_t buildings_id) {
  absl::StatusOr<v1::UploadAssetResponse> terrain =
      client.UploadHeightfield(scene, kTerrainAsset,
                               client::HeightfieldArrays{.rows = level.rows,
                                                         .columns = level.columns,
                                                         .spacing_x = level.spacing,
                                                         .spacing_z = level.spacing,
                                                         .heights = level.heights,
                                                         .holes = {}});
  if (!terrain.ok()) return terrain.status();
  std::vector<float> vertices;
  std::vector<uint32_t> indices;
  BuildingMesh(level, &vertices, &indices);
  absl::StatusOr<v1::UploadAssetResponse> buildings =
      client.UploadMesh(scene, kBuildingsAsset, client::MeshArrays{vertices, indices});
  if (!buildings.ok()) return buildings.status();
  return client
      .UpsertBodies(scene,
                    std::vector<v1::Body>{
                        client::MakeStaticBody(
                            terrain_id, client::MakeHeightfield(kTerrainAsset),
                            client::MakePose(client::MakeVec3(level.origin_x, 0, level.origin_z))),
                        client::MakeStaticBody(buildings_id, client::MakeMesh(kBuildingsAsset),
                                               client::MakePose(client::MakeVec3(0, 0, 0)))})
      .status();
}

v1::Query AimedShot(uint64_t request_id, uint64_t shooter, const v1::Vec3& eye,
                    const v1::Vec3& target) {
  const float dx = target.x() - eye.x(), dy = target.y() - eye.y(), dz = target.z() - eye.z();
  const float length = std::sqrt(dx * dx + dy * dy + dz * dz);
  // A shooter on its target's spot: straight ahead, as far as half a metre.
  const v1::Vec3 direction = length > 1e-4f
                                 ? client::MakeVec3(dx / length, dy / length, dz / length)
                                 : client::MakeVec3(0, 0, 1);
  v1::Query query =
      client::MakeRaycastQuery(request_id, client::MakeRaycast(eye, direction, length + 0.5f));
  *query.mutable_filter() = client::MakeFilter(~0u, ~0u, {&shooter, 1});
  return query;
}

ShotEnd EndOf(const v1::QueryResult& result, uint64_t terrain_id, uint64_t buildings_id) {
  if (result.hits_size() == 0) return ShotEnd::kNothing;
  const uint64_t id = result.hits(0).body_id();
  if (id == terrain_id) return ShotEnd::kTerrain;
  if (id == buildings_id) return ShotEnd::kBuildings;
  return ShotEnd::kBody;
}

}  // namespace collide::arena
