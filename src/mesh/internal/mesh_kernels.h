#pragma once

// The traversal kernels of MeshShape and HeightfieldShape (src/mesh/internal/mesh_kernels.inc),
// once per instruction set of bvh/simd_level.h, each level in a namespace of its own:
// collide::mesh_sse, collide::mesh_avx2, collide::mesh_avx512. Included only by
// src/mesh/mesh_query.cc and heightfield_query.cc, which are built with -ffp-contract=off (no fused
// multiply-add anywhere: the watertight test needs the products of its edge functions rounded on
// their own, and every level must compute the same floats).
//
// The levels stay apart as the tree layer's do (bvh/internal/wide_kernels.h, and
// docs/ARCHITECTURE.md, "Instruction sets"): every function of the .inc carries its level's
// [[gnu::target(...)]], the levels share no symbol, nothing is built with -m flags, and the
// callbacks the kernels take are plain scalar code (the geometry layer's triangle tests), never
// SIMD code inside a lambda. tests/simd_isolation_test.sh checks the mesh tests' binary for AVX
// instructions outside the mesh_avx2 and mesh_avx512 namespaces.

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define COLLIDE_MESH_DISPATCH 1
#else
#define COLLIDE_MESH_DISPATCH 0
#endif

#include "bvh/simd_level.h"
#include "geom/aabb.h"
#include "geom/triangle.h"
#include "geom/vec3.h"
#include "mesh/heightfield.h"
#include "mesh/mesh_shape.h"

namespace collide::mesh_internal {

/// A ray hit of a leaf's triangle: its leaf and lane, distance and side.
struct RayLeafHit {
  uint32_t leaf = 0;
  uint32_t lane = 0;
  float t = 0.0f;
  /// U + V + W of the watertight test: > 0 front, < 0 back.
  float det = 0.0f;
};

/// The closest hit of a ray: leaf, lane, original index (ties: the lowest), distance, side.
struct RayClosestHit {
  uint32_t leaf = 0;
  uint32_t lane = 0;
  uint32_t id = 0;
  float t = 0.0f;
  float det = 0.0f;
};

/// The stack entry of the ordered traversals: a child reference and its entry distance.
struct StackEntry {
  uint32_t ref;
  float t;
};

/// Enough entries for any tree: each node visited pushes at most kWidth - 1.
inline constexpr int kStackSize = (MeshShape::kWidth - 1) * MeshShape::kMaxDepth + 1;

/// A heightfield walk's stack entry: a pyramid node and its entry distance.
struct HfEntry {
  uint32_t i;
  uint32_t j;
  int level;
  float t;
};
/// Enough for any heightfield: each node pushes at most 3, over at most 16 levels.
inline constexpr int kHfStackSize = 3 * 17 + 1;

/// The slab test's allowance for rounding: an entry distance and an exit distance each err by at
/// most gamma(3) = 3 eps / (1 - 3 eps) relative (a subtraction, a product, the reciprocal of the
/// direction), so exits are scaled by 1 + 2 gamma(3) (Ize, "Robust BVH Ray Traversal", JCGT
/// 2(2), 2013), rounded up: the test never drops a box the exact ray enters.
inline constexpr float kExitScale = 1.0f + 4.0f * 0x1p-23f;
/// The best distance so far is compared with entries scaled up by this: the watertight test's
/// distance of a triangle lying in a box's face can round an ulp or two below that face's entry
/// distance, and a triangle tied with the best (a duplicate, with a lower index) must be seen.
inline constexpr float kBestScale = 1.0f + 16.0f * 0x1p-23f;

}  // namespace collide::mesh_internal

namespace collide {

namespace mesh_sse {
#define COLLIDE_MESH_ISA 0
#define COLLIDE_MESH_KERNEL
#define COLLIDE_MESH_HELPER [[gnu::always_inline]]
#include "mesh/internal/mesh_kernels.inc"
#undef COLLIDE_MESH_ISA
#undef COLLIDE_MESH_KERNEL
#undef COLLIDE_MESH_HELPER
}  // namespace mesh_sse

#if COLLIDE_MESH_DISPATCH
namespace mesh_avx2 {
#define COLLIDE_MESH_ISA 1
#define COLLIDE_MESH_KERNEL [[gnu::target("avx2,fma,bmi,bmi2")]]
#define COLLIDE_MESH_HELPER [[gnu::target("avx2,fma,bmi,bmi2"), gnu::always_inline]]
#include "mesh/internal/mesh_kernels.inc"
#undef COLLIDE_MESH_ISA
#undef COLLIDE_MESH_KERNEL
#undef COLLIDE_MESH_HELPER
}  // namespace mesh_avx2

namespace mesh_avx512 {
#define COLLIDE_MESH_ISA 2
#define COLLIDE_MESH_KERNEL [[gnu::target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,bmi,bmi2")]]
#define COLLIDE_MESH_HELPER \
  [[gnu::target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,bmi,bmi2"), gnu::always_inline]]
#include "mesh/internal/mesh_kernels.inc"
#undef COLLIDE_MESH_ISA
#undef COLLIDE_MESH_KERNEL
#undef COLLIDE_MESH_HELPER
}  // namespace mesh_avx512
#endif

}  // namespace collide

/// `return` the kernel `name` of the active instruction set called with the arguments.
#if COLLIDE_MESH_DISPATCH
#define COLLIDE_MESH_CALL(name, ...)                      \
  do {                                                    \
    switch (::collide::ActiveSimdLevel()) {               \
      case ::collide::SimdLevel::kAvx512:                 \
        return ::collide::mesh_avx512::name(__VA_ARGS__); \
      case ::collide::SimdLevel::kAvx2:                   \
        return ::collide::mesh_avx2::name(__VA_ARGS__);   \
      case ::collide::SimdLevel::kSse:                    \
        break;                                            \
    }                                                     \
    return ::collide::mesh_sse::name(__VA_ARGS__);        \
  } while (false)
#else
#define COLLIDE_MESH_CALL(name, ...) return ::collide::mesh_sse::name(__VA_ARGS__)
#endif
