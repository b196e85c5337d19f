#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"

namespace collide {

// glibc's malloc keeps memory a program frees: a large block below its (dynamically raised)
// mmap threshold stays in the heap, and the small allocations of thousands of calls opened and
// cancelled leave free pages scattered through its arenas, which free() gives back only from the
// top of each heap. A server that once held large answers, or served a burst of streams, would
// keep that peak resident forever (measured: RSS grew 53 -> 204 MiB over 20 rounds of 1,200
// QueryStreams opened and cancelled, with under 4 MiB of it in use; 8 stalled answers left
// 1 GiB behind). Two measures give it back:
//  - TuneAllocator fixes the mmap threshold at 128 KiB, so that every large block (an answer's
//    slices, a large batch's hit vector) is its own mapping, returned the moment it is freed;
//  - MemoryReleaser calls malloc_trim(0), which returns every free page of every arena, once
//    the memory resident but not allocated has grown by `min_free_bytes` since the last trim.
// Under AddressSanitizer or ThreadSanitizer, whose allocators replace glibc's, both do nothing.

/// Fixes glibc's mmap threshold at 128 KiB (mallopt; disables its dynamic raise). Call once,
/// before the server starts its threads.
void TuneAllocator();

/// A thread that gives free memory back to the operating system (see above). Every `period` it
/// compares the process's resident set (/proc/self/statm) with what malloc has allocated
/// (mallinfo2); when the difference has grown by `min_free_bytes` beyond its level after the
/// last trim (or its lowest since), and allocations did not grow since the previous check (a
/// burst is over rather than going on), it calls malloc_trim(0). A check costs a few
/// microseconds; a trim returns about 20 MiB in 10 to 50 ms of CPU (measured after bursts of
/// 1,200 streams), during which each arena is locked in turn.
class MemoryReleaser {
 public:
  /// Starts the thread.
  explicit MemoryReleaser(std::chrono::milliseconds period = std::chrono::seconds(1),
                          size_t min_free_bytes = 16 << 20);
  MemoryReleaser(const MemoryReleaser&) = delete;
  MemoryReleaser& operator=(const MemoryReleaser&) = delete;
  /// Stops the thread.
  ~MemoryReleaser();

  /// Checks once, trimming when due; returns the bytes the trim gave back (0 when none ran).
  /// Thread-safe.
  uint64_t CheckNow();

  /// False when the allocator is not glibc's (sanitizers): the thread is not started.
  static bool Supported();

 private:
  void Run();

  const std::chrono::milliseconds period_;
  const uint64_t min_free_bytes_;
  // Serialises CheckNow.
  Mutex check_mu_;
  // Resident minus allocated bytes after the last trim, or the lowest seen since.
  uint64_t floor_ ABSL_GUARDED_BY(check_mu_) = UINT64_MAX;
  // Bytes allocated at the previous check.
  uint64_t last_allocated_ ABSL_GUARDED_BY(check_mu_) = 0;
  Mutex mu_;
  CondVar stop_cv_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace collide
