#pragma once

// The two reference levels of collide-bench-mesh and their query sets, deterministic (fixed
// seeds): a city of box buildings (some stepped, some with stairs) over a ground plane, and a
// terrain of a few octaves of smooth value noise.

#include <cstdint>
#include <vector>

#include "geom/aabb.h"
#include "geom/cast.h"
#include "geom/vec3.h"

namespace collide::bench {

/// The reference levels' parameters, shared by collide-bench-mesh and collide-load: the city's
/// lots a side, cells per box face side and seed; the terrain's samples a side, spacing (metres)
/// and seed; a player's eye height above the floor (metres).
inline constexpr int kCityLots = 100;
inline constexpr int kCitySplit = 2;
inline constexpr uint32_t kCitySeed = 0xC17E5EEDu;
inline constexpr int kTerrainSide = 1000;
inline constexpr float kTerrainSpacing = 1.0f;
inline constexpr uint32_t kTerrainSeed = 0x7E55A1Au;
inline constexpr float kEye = 1.7f;

/// An indexed triangle mesh.
struct LevelMesh {
  std::vector<Vec3> vertices;
  std::vector<uint32_t> indices;
  Aabb bounds{};
  uint32_t triangle_count() const { return static_cast<uint32_t>(indices.size() / 3); }
};

/// A city on a grid of `lots` x `lots` lots of 20 x 20 m: each lot a building of 1 to 3 stacked
/// boxes (setbacks) of varied footprint and height, every fifth lot a staircase of 12 steps
/// beside it, each box split into `split` x `split` x `split` cells per face side (more, smaller
/// triangles, as real facades have), over one ground quad. Boxes share their corners.
LevelMesh MakeCity(int lots, int split, uint32_t seed);

/// A terrain's heights: rows x columns samples of a few octaves of smooth value noise, in
/// metres (about +-40), row-major.
std::vector<float> MakeTerrainHeights(int rows, int columns, uint32_t seed);

/// The terrain as a triangle mesh (the heightfield's own triangulation: cell (i, j) split on
/// the diagonal from sample (i, j) to (i + 1, j + 1)), for the peers that take triangles.
LevelMesh TerrainMesh(const std::vector<float>& heights, int rows, int columns, float spacing);

/// Rays for a level with bounds `bounds`: incoherent (origins uniform in the bounds, directions
/// uniform on the sphere, reaching across the level) or game-like (from a player's eye height,
/// `eye` above the level's floor at a uniform point, towards a uniform target point of the
/// bounds, as far as the target).
std::vector<Ray> IncoherentRays(const Aabb& bounds, int count, uint32_t seed);
std::vector<Ray> GameRays(const Aabb& bounds, float floor_y, float eye, int count, uint32_t seed);

/// Game rays over a terrain (`heights`, rows x columns samples `spacing` apart, as TerrainMesh
/// lays them out; `bounds` its triangulation's bounds): from `eye` above the sample at a uniform
/// point (the sample at or before it on each axis) towards a uniform target point of the bounds,
/// as far as the target.
std::vector<Ray> TerrainGameRays(const std::vector<float>& heights, int rows, int columns,
                                 float spacing, const Aabb& bounds, float eye, int count,
                                 uint32_t seed);

}  // namespace collide::bench
