#pragma once

// Whether this test binary (and so, in the same build, the server it starts) runs under a
// sanitizer, and how to scale a randomised test's case count for it.

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define COLLIDE_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define COLLIDE_TEST_SANITIZED 1
#endif
#endif

namespace collide::testing {

/// True under AddressSanitizer or ThreadSanitizer. Their shadow memory and quarantine of freed
/// blocks make a process's RSS say nothing about a memory bound, and their checks make tight
/// arithmetic loops tens of times slower.
#ifdef COLLIDE_TEST_SANITIZED
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

/// `count` cases in an optimised build, `count / divisor` (at least 1) under a sanitizer. For
/// the oracle tests whose breadth is the optimised build's job: the sanitizer run still drives
/// every code path they reach, on fewer random cases.
constexpr int ScaledForSanitizers(int count, int divisor) {
  if (!kSanitized) return count;
  const int scaled = count / divisor;
  return scaled > 0 ? scaled : 1;
}

}  // namespace collide::testing
