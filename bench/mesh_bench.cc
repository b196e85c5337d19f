// collide-bench-mesh: the level-geometry figures of issue 29. Two reference levels, built
// deterministically: a city of box buildings (stepped towers, staircases, a ground plane; over
// a million triangles) as a triangle mesh, and a 1,000 x 1,000 terrain of smooth noise as a
// heightfield. The same geometry goes to Embree 3 (native triangles, one scene, one thread:
// rtcIntersect1 / rtcOccluded1) and to Bullet (btBvhTriangleMeshShape and
// btHeightfieldTerrainShape in a btCollisionWorld), one thread each, alternating per run.
//
//   collide-bench-mesh [--quick] [--runs R] [--rays N] [--lots L] [--simd auto|sse|avx2|avx512]
//
// Figures per run: builds (triangles per second), closest and any rays (incoherent: origins in
// the level's box, directions uniform; game: from eye height 1.7 m towards uniform targets, as
// far as the target), sphere casts (radius 0.5 m) and sphere overlaps (radius 2 m, every
// contact). The tables at the end are medians over the runs: collide against Embree in its
// robust (watertight) mode, which is the guarantee collide's rays give, then against Embree's
// default mode, then against Bullet. Every run also compares the triangle each ray hits with
// Embree's and checks that the rays where they differ are ties (both distances within 1e-4
// relative).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <string>
#include <vector>

#include "bench/bullet_mesh_peer.h"
#include "bench/embree_mesh_peer.h"
#include "bench/mesh_levels.h"
#include "bench/stats.h"
#include "bvh/simd_level.h"
#include "mesh/heightfield.h"
#include "mesh/heightfield_query.h"
#include "mesh/mesh_query.h"

namespace collide::bench {
namespace {

// Time is the process's CPU time: the machine is shared, and a run that the scheduler
// interrupts is not slower for it. One thread does all the work (Embree's device has one), so
// CPU time is the work's time.
struct Clock {
  using time_point = double;
  static double now() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  }
};
double SecondsSince(double start) { return Clock::now() - start; }

constexpr float kCastRadius = 0.5f;
constexpr float kOverlapRadius = 2.0f;

// Operations per second of `body` over `count` items (body(i) for i in [0, count)).
template <typename F>
double Rate(int count, F&& body) {
  const auto start = Clock::now();
  for (int i = 0; i < count; ++i) body(i);
  const double s = SecondsSince(start);
  return s > 0.0 ? count / s : 0.0;
}

// A figure's per-run values by system.
struct Samples {
  std::map<std::string, std::vector<double>> collide, embree, embree_fast, bullet;
  std::map<std::string, long> triangles;
};

// Rays of one set where collide and Embree name different triangles, and how many are ties.
struct Agreement {
  long rays = 0;
  long hits = 0;
  long differ = 0;
  long ties = 0;
};

template <typename CollideRay>
Agreement Compare(const std::vector<Ray>& rays, CollideRay&& collide, EmbreeMeshPeer& embree) {
  Agreement a;
  for (const Ray& ray : rays) {
    ++a.rays;
    uint32_t tri = 0;
    float t = 0.0f;
    const bool hit = collide(ray, &tri, &t);
    float et = 0.0f;
    const int e = embree.Intersect(ray, &et);
    a.hits += hit;
    if (hit == (e >= 0) && (!hit || static_cast<int>(tri) == e)) continue;
    ++a.differ;
    // A tie: both hit at the same distance (a shared edge, coplanar or duplicated triangles).
    if (hit && e >= 0 && std::fabs(t - et) <= 1e-4f * (1.0f + t)) {
      ++a.ties;
    } else if (a.differ - a.ties <= 5) {
      std::printf(
          "  disagreement: ray o=(%.4f %.4f %.4f) d=(%.6f %.6f %.6f): collide %s %u at "
          "%.6f, embree %d at %.6f\n",
          ray.origin.x, ray.origin.y, ray.origin.z, ray.direction.x, ray.direction.y,
          ray.direction.z, hit ? "hit" : "miss", tri, t, e, et);
    }
  }
  return a;
}

void PrintAgreement(const char* what, const Agreement& a) {
  std::printf(
      "  agreement with Embree, %s: %ld rays, %ld hits, %ld name another triangle, "
      "%ld of them ties, %ld not\n",
      what, a.rays, a.hits, a.differ, a.ties, a.differ - a.ties);
}

}  // namespace
}  // namespace collide::bench

int main(int argc, char** argv) {
  using namespace collide;
  using namespace collide::bench;
  int runs = 3;
  int ray_count = 400000;
  int lots = kCityLots;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) {
      runs = 1;
      ray_count = 50000;
    } else if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--rays") && i + 1 < argc) {
      ray_count = std::max(100, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--lots") && i + 1 < argc) {
      lots = std::max(2, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--simd") && i + 1 < argc) {
      const std::string name = argv[++i];
      SimdLevel level = BestSimdLevel();
      if (name != "auto" && !ParseSimdLevel(name, &level)) {
        std::fprintf(stderr, "--simd: must be auto, sse, avx2 or avx512, got \"%s\"\n",
                     name.c_str());
        return 2;
      }
      if (!SetSimdLevel(level)) {
        std::fprintf(stderr, "--simd: this CPU lacks %s\n", name.c_str());
        return 2;
      }
    } else {
      std::fprintf(stderr,
                   "usage: %s [--quick] [--runs R] [--rays N] [--lots L] "
                   "[--simd auto|sse|avx2|avx512]\n",
                   argv[0]);
      return 2;
    }
  }
  // Bullet's casts and overlaps are slower: a tenth of the queries (a rate is a rate).
  const int bullet_count = std::max(100, ray_count / 10);

  const LevelMesh city = MakeCity(lots, kCitySplit, kCitySeed);
  const std::vector<float> input_heights =
      MakeTerrainHeights(kTerrainSide, kTerrainSide, kTerrainSeed);
  HeightfieldDesc desc;
  desc.rows = kTerrainSide;
  desc.columns = kTerrainSide;
  desc.spacing_x = kTerrainSpacing;
  desc.spacing_z = kTerrainSpacing;
  desc.heights = input_heights;
  // The peers get the surface collide stores (its heights quantised to 16 bits), so that every
  // system answers for the same triangles.
  std::vector<float> heights(input_heights.size());
  {
    const HeightfieldShape stored = HeightfieldShape::Build(desc);
    for (int i = 0; i < kTerrainSide; ++i) {
      for (int j = 0; j < kTerrainSide; ++j) {
        heights[static_cast<size_t>(i) * kTerrainSide + j] =
            stored.Height(static_cast<uint32_t>(i), static_cast<uint32_t>(j));
      }
    }
    std::printf("terrain heights quantised to 16 bits: largest change %.5f m\n",
                stored.max_quantization_error());
  }
  const LevelMesh terrain = TerrainMesh(heights, kTerrainSide, kTerrainSide, kTerrainSpacing);
  const long city_tris = city.triangle_count();
  const long terrain_tris = terrain.triangle_count();
  std::printf("levels: city %ld triangles (%zu vertices), terrain %dx%d samples (%ld triangles)\n",
              city_tris, city.vertices.size(), kTerrainSide, kTerrainSide, terrain_tris);

  const std::vector<Ray> city_rays = IncoherentRays(city.bounds, ray_count, 1);
  const std::vector<Ray> city_game = GameRays(city.bounds, 0.0f, kEye, ray_count, 2);
  const std::vector<Ray> terrain_rays = IncoherentRays(terrain.bounds, ray_count, 3);
  // From eye height above the terrain at the origin's sample.
  const std::vector<Ray> terrain_game = TerrainGameRays(
      heights, kTerrainSide, kTerrainSide, kTerrainSpacing, terrain.bounds, kEye, ray_count, 4);
  std::vector<Vec3> overlap_centres;
  for (int i = 0; i < ray_count; ++i) {
    const Ray& r = city_game[static_cast<size_t>(i)];
    overlap_centres.push_back(r.origin + r.direction * std::fmin(r.max_distance, 8.0f) -
                              Vec3{0, kEye - 1.0f, 0});
  }

  Samples s;
  const char* kFigures[] = {
      "mesh_raycast_closest",    "mesh_raycast_closest_game",    "mesh_raycast_any",
      "mesh_raycast_any_game",   "heightfield_raycast_closest",  "heightfield_raycast_closest_game",
      "heightfield_raycast_any", "heightfield_raycast_any_game", "mesh_spherecast_closest",
      "mesh_overlap_sphere",     "mesh_build_triangles",         "heightfield_build_triangles",
  };
  for (const char* f : kFigures) {
    s.triangles[f] = std::strncmp(f, "heightfield", 11) == 0 ? terrain_tris : city_tris;
  }
  double collide_bytes = 0, embree_bytes = 0, embree_fast_bytes = 0, hf_bytes = 0;

  for (int run = 0; run < runs; ++run) {
    std::printf("run %d (simd %s)\n", run + 1,
                std::string(SimdLevelName(ActiveSimdLevel())).c_str());
    // Builds.
    auto t0 = Clock::now();
    const MeshShape mesh = MeshShape::Build(TriangleMeshView{city.vertices, city.indices});
    s.collide["mesh_build_triangles"].push_back(city_tris / SecondsSince(t0));
    collide_bytes = static_cast<double>(mesh.MemoryBytes());
    t0 = Clock::now();
    const HeightfieldShape hf = HeightfieldShape::Build(desc);
    s.collide["heightfield_build_triangles"].push_back(terrain_tris / SecondsSince(t0));
    hf_bytes = static_cast<double>(hf.MemoryBytes());

    EmbreeMeshPeer embree(city, /*robust=*/true);
    EmbreeMeshPeer embree_fast(city, /*robust=*/false);
    EmbreeMeshPeer embree_terrain(terrain, true);
    EmbreeMeshPeer embree_terrain_fast(terrain, false);
    s.embree["mesh_build_triangles"].push_back(city_tris / embree.build_seconds());
    s.embree_fast["mesh_build_triangles"].push_back(city_tris / embree_fast.build_seconds());
    s.embree["heightfield_build_triangles"].push_back(terrain_tris /
                                                      embree_terrain.build_seconds());
    s.embree_fast["heightfield_build_triangles"].push_back(terrain_tris /
                                                           embree_terrain_fast.build_seconds());
    embree_bytes = static_cast<double>(embree.bytes());
    embree_fast_bytes = static_cast<double>(embree_fast.bytes());
    BulletMeshPeer bullet(city);
    BulletMeshPeer bullet_terrain(heights, kTerrainSide, kTerrainSide, kTerrainSpacing);
    s.bullet["mesh_build_triangles"].push_back(city_tris / bullet.build_seconds());
    s.bullet["heightfield_build_triangles"].push_back(terrain_tris /
                                                      bullet_terrain.build_seconds());

    const ScaledPose pose;
    long sink = 0;
    MeshHit h;
    auto mesh_closest = [&](const std::vector<Ray>& rays) {
      return Rate(static_cast<int>(rays.size()),
                  [&](int i) { sink += Raycast(mesh, pose, rays[static_cast<size_t>(i)], &h); });
    };
    auto mesh_any = [&](const std::vector<Ray>& rays) {
      return Rate(static_cast<int>(rays.size()),
                  [&](int i) { sink += RaycastAny(mesh, pose, rays[static_cast<size_t>(i)], &h); });
    };
    auto hf_closest = [&](const std::vector<Ray>& rays) {
      return Rate(static_cast<int>(rays.size()),
                  [&](int i) { sink += Raycast(hf, pose, rays[static_cast<size_t>(i)], &h); });
    };
    auto hf_any = [&](const std::vector<Ray>& rays) {
      return Rate(static_cast<int>(rays.size()),
                  [&](int i) { sink += RaycastAny(hf, pose, rays[static_cast<size_t>(i)], &h); });
    };
    auto embree_closest = [&](EmbreeMeshPeer& e, const std::vector<Ray>& rays) {
      float t;
      return Rate(static_cast<int>(rays.size()),
                  [&](int i) { sink += e.Intersect(rays[static_cast<size_t>(i)], &t) >= 0; });
    };
    auto embree_any = [&](EmbreeMeshPeer& e, const std::vector<Ray>& rays) {
      return Rate(static_cast<int>(rays.size()),
                  [&](int i) { sink += e.Occluded(rays[static_cast<size_t>(i)]); });
    };
    auto bullet_closest = [&](BulletMeshPeer& b, const std::vector<Ray>& rays) {
      float t;
      return Rate(bullet_count,
                  [&](int i) { sink += b.RayClosest(rays[static_cast<size_t>(i)], &t) >= 0; });
    };
    auto bullet_any = [&](BulletMeshPeer& b, const std::vector<Ray>& rays) {
      return Rate(bullet_count, [&](int i) { sink += b.RayAny(rays[static_cast<size_t>(i)]); });
    };

    struct RayFigure {
      const char* name;
      const std::vector<Ray>* rays;
      bool terrain;
      bool any;
    };
    const RayFigure ray_figures[] = {
        {"mesh_raycast_closest", &city_rays, false, false},
        {"mesh_raycast_closest_game", &city_game, false, false},
        {"mesh_raycast_any", &city_rays, false, true},
        {"mesh_raycast_any_game", &city_game, false, true},
        {"heightfield_raycast_closest", &terrain_rays, true, false},
        {"heightfield_raycast_closest_game", &terrain_game, true, false},
        {"heightfield_raycast_any", &terrain_rays, true, true},
        {"heightfield_raycast_any_game", &terrain_game, true, true},
    };
    for (const RayFigure& f : ray_figures) {
      double c, e, ef, b;
      if (!f.terrain) {
        c = f.any ? mesh_any(*f.rays) : mesh_closest(*f.rays);
        e = f.any ? embree_any(embree, *f.rays) : embree_closest(embree, *f.rays);
        ef = f.any ? embree_any(embree_fast, *f.rays) : embree_closest(embree_fast, *f.rays);
        b = f.any ? bullet_any(bullet, *f.rays) : bullet_closest(bullet, *f.rays);
      } else {
        c = f.any ? hf_any(*f.rays) : hf_closest(*f.rays);
        e = f.any ? embree_any(embree_terrain, *f.rays) : embree_closest(embree_terrain, *f.rays);
        ef = f.any ? embree_any(embree_terrain_fast, *f.rays)
                   : embree_closest(embree_terrain_fast, *f.rays);
        b = f.any ? bullet_any(bullet_terrain, *f.rays) : bullet_closest(bullet_terrain, *f.rays);
      }
      s.collide[f.name].push_back(c);
      s.embree[f.name].push_back(e);
      s.embree_fast[f.name].push_back(ef);
      s.bullet[f.name].push_back(b);
      std::printf(
          "  %-34s collide %11.0f/s  embree %11.0f/s (default mode %11.0f/s)  "
          "bullet %11.0f/s\n",
          f.name, c, e, ef, b);
    }

    // Sphere casts and overlaps: collide against Bullet (Embree has neither).
    {
      const double c = Rate(ray_count, [&](int i) {
        sink += SphereCast(mesh, pose, city_game[static_cast<size_t>(i)], kCastRadius, &h);
      });
      float t;
      const double b = Rate(bullet_count, [&](int i) {
        sink += bullet.SphereCastClosest(city_game[static_cast<size_t>(i)], kCastRadius, &t);
      });
      s.collide["mesh_spherecast_closest"].push_back(c);
      s.bullet["mesh_spherecast_closest"].push_back(b);
      std::printf("  %-34s collide %11.0f/s  bullet %11.0f/s\n", "mesh_spherecast_closest", c, b);
    }
    {
      long contacts = 0, bullet_contacts = 0;
      const double c = Rate(ray_count, [&](int i) {
        OverlapAll(mesh, pose, Sphere{kOverlapRadius},
                   Pose{Quat::Identity(), overlap_centres[static_cast<size_t>(i)]}, true,
                   [&](const MeshContact&) {
                     ++contacts;
                     return true;
                   });
      });
      const double b = Rate(bullet_count, [&](int i) {
        bullet_contacts +=
            bullet.OverlapSphereContacts(overlap_centres[static_cast<size_t>(i)], kOverlapRadius);
      });
      s.collide["mesh_overlap_sphere"].push_back(c);
      s.bullet["mesh_overlap_sphere"].push_back(b);
      std::printf(
          "  %-34s collide %11.0f/s  bullet %11.0f/s  (contacts per query: collide "
          "%.2f, bullet %.2f)\n",
          "mesh_overlap_sphere", c, b, static_cast<double>(contacts) / ray_count,
          static_cast<double>(bullet_contacts) / bullet_count);
    }

    // Agreement with Embree (robust mode) on every ray set.
    auto collide_mesh_ray = [&](const Ray& r, uint32_t* tri, float* t) {
      MeshHit hit;
      if (!Raycast(mesh, pose, r, &hit)) return false;
      *tri = hit.triangle;
      *t = hit.distance;
      return true;
    };
    auto collide_hf_ray = [&](const Ray& r, uint32_t* tri, float* t) {
      MeshHit hit;
      if (!Raycast(hf, pose, r, &hit)) return false;
      *tri = hit.triangle;
      *t = hit.distance;
      return true;
    };
    PrintAgreement("city, incoherent rays", Compare(city_rays, collide_mesh_ray, embree));
    PrintAgreement("city, game rays", Compare(city_game, collide_mesh_ray, embree));
    PrintAgreement("terrain, incoherent rays",
                   Compare(terrain_rays, collide_hf_ray, embree_terrain));
    PrintAgreement("terrain, game rays", Compare(terrain_game, collide_hf_ray, embree_terrain));
    if (sink == 42) std::printf(" ");
  }

  std::printf(
      "\nmemory: collide mesh %.1f bytes per triangle (%.1f MB), Embree robust %.1f "
      "(%.1f MB), Embree default %.1f (%.1f MB); collide heightfield %.2f bytes per "
      "sample (%.1f MB)\n",
      collide_bytes / city_tris, collide_bytes / 1e6, embree_bytes / city_tris, embree_bytes / 1e6,
      embree_fast_bytes / city_tris, embree_fast_bytes / 1e6,
      hf_bytes / (static_cast<double>(kTerrainSide) * kTerrainSide), hf_bytes / 1e6);

  auto table = [&](const char* title, const char* column,
                   std::map<std::string, std::vector<double>>& theirs) {
    std::printf("\n%s, medians over %d run(s), one thread, simd %s\n", title, runs,
                std::string(SimdLevelName(ActiveSimdLevel())).c_str());
    std::printf("%-34s %8s %14s %14s %8s\n", "figure", "N", "collide_per_s", column, "ratio");
    for (const char* f : kFigures) {
      const double c = Median(s.collide[f]);
      if (theirs[f].empty()) {
        std::printf("%-34s %8ld %14.0f %14s %8s\n", f, s.triangles[f], c, "-", "-");
        continue;
      }
      const double t = Median(theirs[f]);
      std::printf("%-34s %8ld %14.0f %14.0f %8.2f\n", f, s.triangles[f], c, t, c / t);
    }
  };
  table("collide against Embree 3.13 (robust mode: watertight, as collide)", "embree_per_s",
        s.embree);
  table("collide against Embree 3.13 (default mode: not watertight)", "embree_per_s",
        s.embree_fast);
  table("collide against Bullet 3.24", "bullet_per_s", s.bullet);
  return 0;
}
