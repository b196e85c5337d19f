#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "geom/cast.h"
#include "geom/pose.h"
#include "geom/shapes.h"

namespace collide::bench {

/// The reference workload of shared/bench/README.md: N bodies in a cube of side L, then Q rays,
/// drawn from std::mt19937(42) in exactly the order the Bullet reference draws them.
struct ReferenceScene {
  std::vector<Shape> shapes;
  std::vector<Pose> poses;
  /// Ray i: origin, unit direction, length 0.1 L.
  std::vector<Ray> rays;
  /// The random steps of the update rounds: moves[round * N + i] for body i.
  std::vector<Vec3> moves;
  int rounds = 0;
};

/// Draws the scene, the rays and `rounds` rounds of body moves.
inline ReferenceScene MakeReferenceScene(int n, float side, int q, int rounds) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> uniform(0, 1);
  // One draw per statement, so the sequence does not depend on evaluation order.
  auto u = [&] { return uniform(rng); };
  auto vec = [&](float scale, float offset) {
    float x = u();
    float y = u();
    float z = u();
    return Vec3{scale * (x + offset), scale * (y + offset), scale * (z + offset)};
  };
  ReferenceScene scene;
  scene.shapes.reserve(n);
  scene.poses.reserve(n);
  for (int i = 0; i < n; ++i) {
    switch (i % 3) {
      case 0:
        scene.shapes.push_back(Sphere{0.25f + 1.25f * u()});
        break;
      case 1:
        scene.shapes.push_back(Box{vec(1.f, 0.f) + Vec3{0.25f, 0.25f, 0.25f}});
        break;
      default: {
        float radius = 0.25f + 0.5f * u();
        float length = 0.5f + 2 * u();
        scene.shapes.push_back(Capsule{radius, 0.5f * length});
      }
    }
    Pose pose;
    pose.position = vec(side, 0.f);
    float qx = u();
    float qy = u();
    float qz = u();
    float qw = u();
    pose.rotation = Normalize(Quat{qx - .5f, qy - .5f, qz - .5f, qw - .5f});
    scene.poses.push_back(pose);
  }
  scene.rays.reserve(q);
  for (int i = 0; i < q; ++i) {
    Vec3 origin = vec(side, 0.f);
    Vec3 dir = Normalize(vec(1.f, -.5f));
    scene.rays.push_back(Ray{origin, dir, 0.1f * side});
  }
  scene.rounds = rounds;
  scene.moves.reserve(static_cast<size_t>(rounds) * n);
  for (int k = 0; k < rounds * n; ++k) scene.moves.push_back(vec(1.f, -.5f));
  return scene;
}

}  // namespace collide::bench
