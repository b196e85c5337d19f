#include "bench/mesh_levels.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

namespace collide::bench {
namespace {

// A box [lo, hi] as triangles: each face a grid of split x split quads over the box's welded
// vertices.
void AddBox(LevelMesh* m, const Vec3& lo, const Vec3& hi, int split) {
  const Vec3 size = hi - lo;
  // Each face: an origin corner and two edge vectors, counter-clockwise seen from outside.
  struct Face {
    Vec3 origin, u, v;
  };
  const Face faces[6] = {
      {lo, {0, size.y, 0}, {size.x, 0, 0}},                  // z = lo (facing -z)
      {{lo.x, lo.y, hi.z}, {size.x, 0, 0}, {0, size.y, 0}},  // z = hi
      {lo, {size.x, 0, 0}, {0, 0, size.z}},                  // y = lo (facing -y)
      {{lo.x, hi.y, lo.z}, {0, 0, size.z}, {size.x, 0, 0}},  // y = hi
      {lo, {0, 0, size.z}, {0, size.y, 0}},                  // x = lo (facing -x)
      {{hi.x, lo.y, lo.z}, {0, size.y, 0}, {0, 0, size.z}},  // x = hi
  };
  const float inv = 1.0f / static_cast<float>(split);
  // The box's vertices, welded: a vertex on an edge shared by two faces (equal coordinates) is
  // one vertex, as in a collision mesh exported from an editor.
  const uint32_t box_base = static_cast<uint32_t>(m->vertices.size());
  auto vertex = [&](const Vec3& p) {
    for (uint32_t k = box_base; k < m->vertices.size(); ++k) {
      if (m->vertices[k] == p) return k;
    }
    m->vertices.push_back(p);
    return static_cast<uint32_t>(m->vertices.size() - 1);
  };
  std::vector<uint32_t> grid(static_cast<size_t>((split + 1) * (split + 1)));
  for (const Face& f : faces) {
    for (int i = 0; i <= split; ++i) {
      for (int j = 0; j <= split; ++j) {
        // Ends exactly at the corners: i == split gives origin + u.
        const float a = i == split ? 1.0f : static_cast<float>(i) * inv;
        const float b = j == split ? 1.0f : static_cast<float>(j) * inv;
        grid[static_cast<size_t>(i * (split + 1) + j)] = vertex(f.origin + f.u * a + f.v * b);
      }
    }
    const int row = split + 1;
    for (int i = 0; i < split; ++i) {
      for (int j = 0; j < split; ++j) {
        const uint32_t a = grid[i * row + j], b = grid[(i + 1) * row + j],
                       c = grid[(i + 1) * row + j + 1], d = grid[i * row + j + 1];
        m->indices.insert(m->indices.end(), {a, b, c, a, c, d});
      }
    }
  }
}

// Smooth value noise: a lattice of random values, bicubic-smoothed (smoothstep) interpolation.
struct ValueNoise {
  explicit ValueNoise(uint32_t seed) : values(256 * 256) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (float& v : values) v = u(rng);
  }
  float At(int x, int y) const { return values[((y & 255) << 8) | (x & 255)]; }
  float operator()(float x, float y) const {
    const int x0 = static_cast<int>(std::floor(x)), y0 = static_cast<int>(std::floor(y));
    const float fx = x - static_cast<float>(x0), fy = y - static_cast<float>(y0);
    const float sx = fx * fx * (3 - 2 * fx), sy = fy * fy * (3 - 2 * fy);
    const float a = At(x0, y0) + sx * (At(x0 + 1, y0) - At(x0, y0));
    const float b = At(x0, y0 + 1) + sx * (At(x0 + 1, y0 + 1) - At(x0, y0 + 1));
    return a + sy * (b - a);
  }
  std::vector<float> values;
};

}  // namespace

LevelMesh MakeCity(int lots, int split, uint32_t seed) {
  LevelMesh m;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  const float lot = 20.0f;
  for (int i = 0; i < lots; ++i) {
    for (int j = 0; j < lots; ++j) {
      const float x0 = static_cast<float>(i) * lot + 2.0f;
      const float z0 = static_cast<float>(j) * lot + 2.0f;
      // A footprint of 6 to 15 m a side, 4 to 80 m high (log-uniform), up to 3 setbacks.
      float w = 6.0f + 9.0f * unit(rng), d = 6.0f + 9.0f * unit(rng);
      float height = 4.0f * std::exp(unit(rng) * std::log(20.0f));
      const int tiers = 1 + static_cast<int>(unit(rng) * 3.0f);
      float y = 0.0f, x = x0, z = z0;
      for (int t = 0; t < tiers && w > 2.0f && d > 2.0f; ++t) {
        const float h = height / static_cast<float>(tiers);
        AddBox(&m, {x, y, z}, {x + w, y + h, z + d}, split);
        y += h;
        x += 0.15f * w;
        z += 0.15f * d;
        w *= 0.7f;
        d *= 0.7f;
      }
      if ((i * lots + j) % 5 == 0) {
        // A staircase along the building's side: 12 steps of 0.3 m run, 0.18 m rise.
        for (int s = 0; s < 12; ++s) {
          const float sx = x0 + static_cast<float>(s) * 0.3f;
          AddBox(&m, {sx, 0.0f, z0 - 1.8f},
                 {sx + 0.3f, 0.18f * static_cast<float>(s + 1), z0 - 0.2f}, 1);
        }
      }
    }
  }
  const float size = static_cast<float>(lots) * lot;
  const uint32_t base = static_cast<uint32_t>(m.vertices.size());
  m.vertices.push_back({0, 0, 0});
  m.vertices.push_back({size, 0, 0});
  m.vertices.push_back({size, 0, size});
  m.vertices.push_back({0, 0, size});
  m.indices.insert(m.indices.end(), {base, base + 2, base + 1, base, base + 3, base + 2});
  m.bounds = Aabb{m.vertices[0], m.vertices[0]};
  for (const Vec3& v : m.vertices) m.bounds = Union(m.bounds, Aabb{v, v});
  return m;
}

std::vector<float> MakeTerrainHeights(int rows, int columns, uint32_t seed) {
  ValueNoise noise(seed);
  std::vector<float> h(static_cast<size_t>(rows) * columns);
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < columns; ++j) {
      float sum = 0.0f, amplitude = 24.0f, frequency = 1.0f / 90.0f;
      for (int octave = 0; octave < 5; ++octave) {
        sum += amplitude * noise(static_cast<float>(j) * frequency + 17.0f * octave,
                                 static_cast<float>(i) * frequency);
        amplitude *= 0.45f;
        frequency *= 2.1f;
      }
      h[static_cast<size_t>(i) * columns + j] = sum;
    }
  }
  return h;
}

LevelMesh TerrainMesh(const std::vector<float>& heights, int rows, int columns, float spacing) {
  LevelMesh m;
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < columns; ++j) {
      m.vertices.push_back({static_cast<float>(j) * spacing,
                            heights[static_cast<size_t>(i) * columns + j],
                            static_cast<float>(i) * spacing});
    }
  }
  const uint32_t c = static_cast<uint32_t>(columns);
  for (uint32_t i = 0; i + 1 < static_cast<uint32_t>(rows); ++i) {
    for (uint32_t j = 0; j + 1 < c; ++j) {
      const uint32_t s00 = i * c + j, s01 = s00 + 1, s10 = s00 + c, s11 = s10 + 1;
      m.indices.insert(m.indices.end(), {s00, s10, s11, s00, s11, s01});
    }
  }
  m.bounds = Aabb{m.vertices[0], m.vertices[0]};
  for (const Vec3& v : m.vertices) m.bounds = Union(m.bounds, Aabb{v, v});
  return m;
}

std::vector<Ray> IncoherentRays(const Aabb& bounds, int count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  const Vec3 size = bounds.max - bounds.min;
  const float reach = 2.0f * Length(size);
  std::vector<Ray> rays;
  rays.reserve(count);
  for (int i = 0; i < count; ++i) {
    const Vec3 o = bounds.min + Mul(size, Vec3{unit(rng), unit(rng), unit(rng)});
    const float z = 2.0f * unit(rng) - 1.0f, a = 2.0f * std::numbers::pi_v<float> * unit(rng);
    const float r = std::sqrt(std::max(0.0f, 1.0f - z * z));
    rays.push_back(Ray{o, Vec3{r * std::cos(a), z, r * std::sin(a)}, reach});
  }
  return rays;
}

std::vector<Ray> GameRays(const Aabb& bounds, float floor_y, float eye, int count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  const Vec3 size = bounds.max - bounds.min;
  std::vector<Ray> rays;
  rays.reserve(count);
  while (static_cast<int>(rays.size()) < count) {
    const Vec3 o{bounds.min.x + size.x * unit(rng), floor_y + eye,
                 bounds.min.z + size.z * unit(rng)};
    const Vec3 target = bounds.min + Mul(size, Vec3{unit(rng), unit(rng), unit(rng)});
    const Vec3 to = target - o;
    const float len = Length(to);
    if (!(len > 1e-3f)) continue;
    rays.push_back(Ray{o, to * (1.0f / len), len});
  }
  return rays;
}

std::vector<Ray> TerrainGameRays(const std::vector<float>& heights, int rows, int columns,
                                 float spacing, const Aabb& bounds, float eye, int count,
                                 uint32_t seed) {
  std::vector<Ray> rays;
  rays.reserve(count);
  for (Ray r : GameRays(bounds, 0.0f, 0.0f, count, seed)) {
    const int j = std::clamp(static_cast<int>(r.origin.x / spacing), 0, columns - 1);
    const int i = std::clamp(static_cast<int>(r.origin.z / spacing), 0, rows - 1);
    const Vec3 target = r.origin + r.direction * r.max_distance;
    r.origin.y = heights[static_cast<size_t>(i) * columns + j] + eye;
    const Vec3 to = target - r.origin;
    r.max_distance = Length(to);
    r.direction = to * (1.0f / r.max_distance);
    rays.push_back(r);
  }
  return rays;
}

}  // namespace collide::bench
