#pragma once

// collide-arena's level (--level): a terrain of rolling hills (a heightfield asset) and box
// buildings (one mesh asset), generated the same way every run, uploaded at start and placed by
// two static bodies. The game server keeps the same level to stand its players on the ground and
// steer them round the buildings; its shots stop at the level because the server's queries meet
// the level's triangles like any body's.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "client/cpp/client.h"
#include "collide/v1/collide.pb.h"

namespace collide::arena {

/// A building: an axis-aligned box over the footprint [min_x, max_x] x [min_z, max_z], from
/// below the lowest ground (Level::bottom) up to `top` (metres).
struct Building {
  float min_x = 0, min_z = 0, max_x = 0, max_z = 0, top = 0;
};

/// The level. The terrain is rows x columns heights, row-major (sample (i, j) at i x columns +
/// j), `spacing` metres apart; the terrain body puts sample (0, 0) at (origin_x, 0, origin_z),
/// so sample (i, j) is at (origin_x + j x spacing, height, origin_z + i x spacing).
struct Level {
  uint32_t rows = 0, columns = 0;
  float spacing = 0;
  float origin_x = 0, origin_z = 0;
  std::vector<float> heights;
  std::vector<Building> buildings;
  float bottom = 0;  // the buildings' base, below every height
};

/// The names of the level's assets in the scene.
inline constexpr char kTerrainAsset[] = "terrain";
inline constexpr char kBuildingsAsset[] = "buildings";

/// The level for a play field [-half_side, half_side] on x and z (the terrain reaches 10 metres
/// beyond it, under the arena's walls): hills of a few metres and 16 buildings of 8 to 20
/// metres on a 4 x 4 grid.
Level MakeLevel(float half_side);

/// The ground's height at (x, z): the heightfield's own surface (cell (i, j) split on the
/// diagonal from sample (i, j) to (i + 1, j + 1), collide.proto's Hit.triangle), clamped to the
/// terrain's edge outside it.
float GroundHeight(const Level& level, float x, float z);

/// Whether (x, z) is within `margin` of a building's footprint.
bool InsideBuilding(const Level& level, float x, float z, float margin);

/// The buildings as one triangle mesh: x, y, z per vertex and three indices per triangle (each
/// box closed, its 12 triangles counter-clockwise seen from outside).
void BuildingMesh(const Level& level, std::vector<float>* vertices, std::vector<uint32_t>* indices);

/// Uploads the level's two assets to `scene` through the C++ client and places them with the
/// static bodies `terrain_id` and `buildings_id`.
absl::Status UploadLevel(client::Client& client, const std::string& scene, const Level& level,
                         uint64_t terrain_id, uint64_t buildings_id);

/// A hitscan shot from `eye` at `target` (a line-of-sight check: the closest hit of a ray as far
/// as the target and half a metre beyond), the shooter's body excluded.
v1::Query AimedShot(uint64_t request_id, uint64_t shooter, const v1::Vec3& eye,
                    const v1::Vec3& target);

/// Where a shot's closest hit ended it.
enum class ShotEnd { kNothing, kTerrain, kBuildings, kBody };

/// The end of a shot (AimedShot's answer, or any query's: its first hit) in a scene whose level
/// bodies are `terrain_id` and `buildings_id`.
ShotEnd EndOf(const v1::QueryResult& result, uint64_t terrain_id, uint64_t buildings_id);

}  // namespace collide::arena
