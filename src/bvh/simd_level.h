#pragma once

#include <cstdint>
#include <string_view>

namespace collide {

/// The instruction sets the 8-wide traversal kernels (wide_tree.h) are built for. Every kernel
/// is compiled into the one portable binary for each level; `ActiveSimdLevel` picks the one the
/// queries run, once at start-up (the best the CPU has) or by `SetSimdLevel`. Every level gives
/// the same answers: the kernels compute the same float operations in the same order per child
/// box, only with wider registers.
enum class SimdLevel : uint8_t {
  /// x86-64's baseline SSE2 (a scalar loop on other architectures): runs everywhere.
  kSse = 0,
  /// AVX2 with FMA, BMI1 and BMI2 (x86-64-v3).
  kAvx2 = 1,
  /// AVX-512 F, VL, BW and DQ, besides AVX2's.
  kAvx512 = 2,
};

/// The best level the CPU (and its operating system, which must save the wider registers)
/// supports; kSse on non-x86 machines.
SimdLevel BestSimdLevel();

/// True when the CPU supports `level`.
bool SimdLevelSupported(SimdLevel level);

/// The level the traversal kernels use now: BestSimdLevel() until `SetSimdLevel` chose another.
SimdLevel ActiveSimdLevel();

/// Makes the traversal kernels use `level`; false (nothing changed) when the CPU lacks it. Meant
/// for start-up (the server's --simd), benchmarks and tests: queries running meanwhile each use
/// one level or the other, with the same answers.
bool SetSimdLevel(SimdLevel level);

/// The level's name: "sse", "avx2" or "avx512".
std::string_view SimdLevelName(SimdLevel level);

/// Parses a name of SimdLevelName into `*level`; false for any other text.
bool ParseSimdLevel(std::string_view name, SimdLevel* level);

}  // namespace collide
