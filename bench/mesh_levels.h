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

}  // namespace collide::bench
