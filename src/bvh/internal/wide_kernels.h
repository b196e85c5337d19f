#pragma once

// WideTree's traversal kernels, once per instruction set (see bvh/simd_level.h), each level in a
// namespace of its own: collide::wide_sse, collide::wide_avx2, collide::wide_avx512. Include
// only from bvh/wide_tree.h, after WideTree.
//
// Why this way, and not the same code built in several files with different -m flags: the
// kernels are templates over the caller's callback, instantiated in every file that queries.
// Built with -mavx2 in one file and without in another, the linker would keep one copy of each
// inline function and template instantiation they share (Vec3's operators, the callback, the
// collectors ...) for the whole program, possibly the AVX2 one, and the SSE path would then run
// AVX2 instructions (SIGILL on an older CPU). Here nothing is built with -m flags: each level's
// kernels carry `[[gnu::target(...)]]` themselves, live in a namespace of their own (so no two
// levels share a symbol), and what they call without that attribute (Vec3, the callback, the
// stack) is either inlined into them, and so compiled for their level inside their own code only,
// or called as the ordinary baseline function. A lambda does not inherit its enclosing
// function's target, so the kernels call no SIMD code from a lambda.

#include <bit>
#include <cstddef>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define COLLIDE_WIDE_DISPATCH 1
#else
#define COLLIDE_WIDE_DISPATCH 0
#endif

#include "bvh/internal/traversal_stack.h"
#include "geom/aabb.h"
#include "geom/vec3.h"

namespace collide {

/// A stack entry of the casts: a child reference and the distance at which the path enters it.
struct WideCastEntry {
  int32_t ref;
  float t;
};

namespace wide_sse {
#define COLLIDE_WIDE_ISA 0
#define COLLIDE_WIDE_KERNEL
#define COLLIDE_WIDE_HELPER [[gnu::always_inline]]
#include "bvh/internal/wide_kernels.inc"
#undef COLLIDE_WIDE_ISA
#undef COLLIDE_WIDE_KERNEL
#undef COLLIDE_WIDE_HELPER
}  // namespace wide_sse

#if COLLIDE_WIDE_DISPATCH
namespace wide_avx2 {
#define COLLIDE_WIDE_ISA 1
#define COLLIDE_WIDE_KERNEL [[gnu::target("avx2,fma,bmi,bmi2")]]
#define COLLIDE_WIDE_HELPER [[gnu::target("avx2,fma,bmi,bmi2"), gnu::always_inline]]
#include "bvh/internal/wide_kernels.inc"
#undef COLLIDE_WIDE_ISA
#undef COLLIDE_WIDE_KERNEL
#undef COLLIDE_WIDE_HELPER
}  // namespace wide_avx2

namespace wide_avx512 {
#define COLLIDE_WIDE_ISA 2
#define COLLIDE_WIDE_KERNEL [[gnu::target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,bmi,bmi2")]]
#define COLLIDE_WIDE_HELPER \
  [[gnu::target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,bmi,bmi2"), gnu::always_inline]]
#include "bvh/internal/wide_kernels.inc"
#undef COLLIDE_WIDE_ISA
#undef COLLIDE_WIDE_KERNEL
#undef COLLIDE_WIDE_HELPER
}  // namespace wide_avx512
#endif

}  // namespace collide
