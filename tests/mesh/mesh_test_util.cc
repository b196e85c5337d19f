#include "mesh/mesh_test_util.h"

#include <array>
#include <cmath>

#include "geom/oracle.h"
#include "geom/triangle_oracle.h"

namespace collide::mesh_test {

void TestMesh::AddTriangle(const Vec3& a, const Vec3& b, const Vec3& c) {
  const uint32_t base = static_cast<uint32_t>(vertices.size());
  vertices.push_back(a);
  vertices.push_back(b);
  vertices.push_back(c);
  indices.push_back(base);
  indices.push_back(base + 1);
  indices.push_back(base + 2);
}

void TestMesh::AddBox(const Vec3& lo, const Vec3& hi) {
  const uint32_t base = static_cast<uint32_t>(vertices.size());
  for (int i = 0; i < 8; ++i) {
    vertices.push_back(Vec3{(i & 1) ? hi.x : lo.x, (i & 2) ? hi.y : lo.y, (i & 4) ? hi.z : lo.z});
  }
  // Faces counter-clockwise seen from outside.
  const int quads[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                           {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  for (const auto& q : quads) {
    const uint32_t t[6] = {base + q[0], base + q[1], base + q[2],
                           base + q[0], base + q[2], base + q[3]};
    indices.insert(indices.end(), t, t + 6);
  }
}

void TestMesh::Translate(const Vec3& offset) {
  for (Vec3& v : vertices) v += offset;
}

TestMesh RandomSoup(std::mt19937& rng, int count, float size, float extent) {
  TestMesh m;
  m.name = "random soup";
  for (int i = 0; i < count; ++i) {
    const char* kind = "";
    const Triangle t = oracle::RandomTriangle(rng, size, &kind);
    const Vec3 at{static_cast<float>(oracle::Uniform(rng, -extent, extent)),
                  static_cast<float>(oracle::Uniform(rng, -extent, extent)),
                  static_cast<float>(oracle::Uniform(rng, -extent, extent))};
    m.AddTriangle(t.a + at, t.b + at, t.c + at);
  }
  return m;
}

TestMesh City(std::mt19937& rng, int n) {
  TestMesh m;
  m.name = "city";
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const float x = 10.0f * static_cast<float>(i), z = 10.0f * static_cast<float>(j);
      const float w = static_cast<float>(oracle::Uniform(rng, 2.0, 8.0));
      const float d = static_cast<float>(oracle::Uniform(rng, 2.0, 8.0));
      const float h = static_cast<float>(oracle::LogUniform(rng, 1.0, 60.0));
      m.AddBox({x, 0, z}, {x + w, h, z + d});
      if ((i + j) % 3 == 0) {
        for (int s = 0; s < 4; ++s) {
          const float sx = x + w + 0.5f * static_cast<float>(s);
          m.AddBox({sx, 0, z}, {sx + 0.5f, 0.25f * static_cast<float>(s + 1), z + 1.0f});
        }
      }
    }
  }
  // The ground: one quad under everything.
  const float size = 10.0f * static_cast<float>(n);
  const uint32_t base = static_cast<uint32_t>(m.vertices.size());
  m.vertices.push_back({-5, 0, -5});
  m.vertices.push_back({size, 0, -5});
  m.vertices.push_back({size, 0, size});
  m.vertices.push_back({-5, 0, size});
  const uint32_t g[6] = {base, base + 2, base + 1, base, base + 3, base + 2};
  m.indices.insert(m.indices.end(), g, g + 6);
  return m;
}

TestMesh Stairs(int steps) {
  TestMesh m;
  m.name = "stairs";
  for (int s = 0; s < steps; ++s) {
    const float x = 0.3f * static_cast<float>(s);
    m.AddBox({x, 0, 0}, {x + 0.3f, 0.2f * static_cast<float>(s + 1), 2.0f});
  }
  return m;
}

TestMesh Terrain(std::mt19937& rng, int n) {
  TestMesh m;
  m.name = "terrain";
  const double p1 = oracle::Uniform(rng, 0, 6.28), p2 = oracle::Uniform(rng, 0, 6.28);
  for (int i = 0; i <= n; ++i) {
    for (int j = 0; j <= n; ++j) {
      const double x = i, z = j;
      const double h = 3.0 * std::sin(0.21 * x + p1) * std::cos(0.17 * z + p2) +
                       0.7 * std::sin(0.9 * x + 1.3 * z);
      m.vertices.push_back({static_cast<float>(x), static_cast<float>(h), static_cast<float>(z)});
    }
  }
  const uint32_t row = static_cast<uint32_t>(n + 1);
  for (uint32_t i = 0; i < static_cast<uint32_t>(n); ++i) {
    for (uint32_t j = 0; j < static_cast<uint32_t>(n); ++j) {
      const uint32_t a = i * row + j, b = a + 1, c = a + row, d = c + 1;
      const uint32_t t[6] = {a, b, d, a, d, c};
      m.indices.insert(m.indices.end(), t, t + 6);
    }
  }
  return m;
}

TestMesh ThinWallsWithDuplicates(int n) {
  TestMesh m;
  m.name = "thin walls and duplicates";
  for (float z : {0.0f, 1e-3f}) {
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        const float x = static_cast<float>(i), y = static_cast<float>(j);
        m.AddTriangle({x, y, z}, {x + 1, y, z}, {x + 1, y + 1, z});
        m.AddTriangle({x, y, z}, {x + 1, y + 1, z}, {x, y + 1, z});
      }
    }
  }
  const uint32_t first_wall = 2 * static_cast<uint32_t>(n * n);
  for (uint32_t t = 0; t < first_wall; ++t) {
    const uint32_t* idx = &m.indices[3 * t];
    const uint32_t copy[3] = {idx[0], idx[1], idx[2]};
    m.indices.insert(m.indices.end(), copy, copy + 3);
  }
  return m;
}

TestMesh ClosedSphere(float radius, int levels) {
  using oracle::DVec3;
  std::vector<std::array<DVec3, 3>> tris = {{DVec3{1, 0, 0}, DVec3{0, 1, 0}, DVec3{0, 0, 1}},
                                            {DVec3{0, 1, 0}, DVec3{-1, 0, 0}, DVec3{0, 0, 1}},
                                            {DVec3{-1, 0, 0}, DVec3{0, -1, 0}, DVec3{0, 0, 1}},
                                            {DVec3{0, -1, 0}, DVec3{1, 0, 0}, DVec3{0, 0, 1}},
                                            {DVec3{0, 1, 0}, DVec3{1, 0, 0}, DVec3{0, 0, -1}},
                                            {DVec3{-1, 0, 0}, DVec3{0, 1, 0}, DVec3{0, 0, -1}},
                                            {DVec3{0, -1, 0}, DVec3{-1, 0, 0}, DVec3{0, 0, -1}},
                                            {DVec3{1, 0, 0}, DVec3{0, -1, 0}, DVec3{0, 0, -1}}};
  for (int l = 0; l < levels; ++l) {
    std::vector<std::array<DVec3, 3>> next;
    for (const auto& t : tris) {
      const DVec3 ab = oracle::Normalized(t[0] + t[1]);
      const DVec3 bc = oracle::Normalized(t[1] + t[2]);
      const DVec3 ca = oracle::Normalized(t[2] + t[0]);
      next.push_back({t[0], ab, ca});
      next.push_back({ab, t[1], bc});
      next.push_back({ca, bc, t[2]});
      next.push_back({ab, bc, ca});
    }
    tris.swap(next);
  }
  TestMesh m;
  m.name = "closed sphere";
  // Shared vertices: every corner rounded once (the same double gives the same float).
  for (const auto& t : tris) {
    m.AddTriangle(oracle::ToFloat(t[0] * radius), oracle::ToFloat(t[1] * radius),
                  oracle::ToFloat(t[2] * radius));
  }
  return m;
}

std::vector<TestMesh> AllKinds(std::mt19937& rng) {
  std::vector<TestMesh> out;
  out.push_back(RandomSoup(rng, 3000, 2.0f, 20.0f));
  out.push_back(City(rng, 8));
  out.push_back(Stairs(12));
  out.push_back(Terrain(rng, 24));
  out.push_back(ThinWallsWithDuplicates(6));
  out.push_back(ClosedSphere(5.0f, 3));
  TestMesh far = City(rng, 4);
  far.name = "city far from the origin";
  far.Translate({1e5f, -2e4f, 1e5f});
  out.push_back(far);
  return out;
}

}  // namespace collide::mesh_test
