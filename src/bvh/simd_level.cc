#include "bvh/simd_level.h"

#include <atomic>

namespace collide {
namespace {

#if defined(__x86_64__) || defined(__i386__)
bool CpuHas(SimdLevel level) {
  // libgcc's (and compiler-rt's) cpu model also checks, through XGETBV, that the operating
  // system saves the YMM and ZMM state: a CPU flag alone is not enough.
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                    __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
  switch (level) {
    case SimdLevel::kSse:
      return true;
    case SimdLevel::kAvx2:
      return avx2;
    case SimdLevel::kAvx512:
      return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
  }
  return false;
}
#else
bool CpuHas(SimdLevel level) { return level == SimdLevel::kSse; }
#endif

std::atomic<SimdLevel>& Active() {
  static std::atomic<SimdLevel> active{BestSimdLevel()};
  return active;
}

}  // namespace

SimdLevel BestSimdLevel() {
  static const SimdLevel best = CpuHas(SimdLevel::kAvx512) ? SimdLevel::kAvx512
                                : CpuHas(SimdLevel::kAvx2) ? SimdLevel::kAvx2
                                                           : SimdLevel::kSse;
  return best;
}

bool SimdLevelSupported(SimdLevel level) { return CpuHas(level); }

SimdLevel ActiveSimdLevel() { return Active().load(std::memory_order_relaxed); }

bool SetSimdLevel(SimdLevel level) {
  if (!SimdLevelSupported(level)) return false;
  Active().store(level, std::memory_order_relaxed);
  return true;
}

std::string_view SimdLevelName(SimdLevel level) {
  switch (level) {
    case SimdLevel::kSse:
      return "sse";
    case SimdLevel::kAvx2:
      return "avx2";
    case SimdLevel::kAvx512:
      return "avx512";
  }
  return "unknown";
}

bool ParseSimdLevel(std::string_view name, SimdLevel* level) {
  for (SimdLevel l : {SimdLevel::kSse, SimdLevel::kAvx2, SimdLevel::kAvx512}) {
    if (name == SimdLevelName(l)) {
      *level = l;
      return true;
    }
  }
  return false;
}

}  // namespace collide
