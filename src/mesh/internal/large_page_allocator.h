#pragma once

// The allocator of an asset's large arrays (src/mesh): a block of 4 MiB or more starts on a
// 2 MiB boundary and is marked for transparent huge pages (madvise(MADV_HUGEPAGE), where the
// system offers them on request), so that a walk over a tree of tens of megabytes misses the
// TLB far less; Embree allocates its trees the same way. Smaller blocks are ordinary
// allocations. Not part of the public API.

#include <cstddef>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace collide::mesh_internal {

template <typename T>
struct LargePageAllocator {
  using value_type = T;

  LargePageAllocator() = default;
  template <typename U>
  LargePageAllocator(const LargePageAllocator<U>&) {}  // NOLINT: rebinding

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    constexpr size_t kHugePage = size_t{2} << 20;
    const size_t alignment = bytes >= 2 * kHugePage ? kHugePage : alignof(std::max_align_t) * 4;
    void* p = nullptr;
    if (posix_memalign(&p, alignment, bytes == 0 ? alignment : bytes) != 0) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (alignment == kHugePage) madvise(p, bytes & ~(kHugePage - 1), MADV_HUGEPAGE);
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) { std::free(p); }

  friend bool operator==(const LargePageAllocator&, const LargePageAllocator&) { return true; }
};

}  // namespace collide::mesh_internal
