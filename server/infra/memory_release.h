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
//  - TuneAllocator fixes the mmap threshold at kMmapThresholdBytes (128 KiB), so that every
//    large block (an answer's slices, a large batch's hit vector) is its own mapping, returned
//    the moment it is freed;
//  - MemoryReleaser calls malloc_trim(0), which returns every free page of every arena, once
//    the memory resident but not allocated has grown by `min_free_bytes` since the last trim.
// Fixing the mmap threshold also fixes glibc's trim threshold, which its dynamic adjustment
// would otherwise raise with it: left at its default of 128 KiB, free() gives back the top of a
// heap whenever more than that is free there, and a tick loop, whose buffers under the mmap
// threshold are freed and allocated again at the top of a heap every tick, then faults those
// pages in again every tick (measured with collide-arena, 10,000 bodies: half of the server's
// page faults). TuneAllocator raises it to kHeapTopTrimBytes; the free memory a heap's top
// keeps under that, the releaser returns once allocations stop growing. Blocks over the mmap
// threshold that a tick loop frees and allocates again every tick are kept by their owners
// instead: the scene's log record encoder, the log's write buffer, an UpdateStream's batch.
// Under AddressSanitizer or ThreadSanitizer, whose allocators replace glibc's, both do nothing.

/// Blocks of this size and more are mappings of their own, given back when freed.
inline constexpr size_t kMmapThresholdBytes = 128 << 10;

/// Free memory at the top of a heap past this is given back by free() itself (glibc's
/// M_TRIM_THRESHOLD).
inline constexpr size_t kHeapTopTrimBytes = 8 << 20;

/// Fixes glibc's mmap threshold at kMmapThresholdBytes and its trim threshold at
/// kHeapTopTrimBytes (mallopt; disables glibc's dynamic raise of both). Call once, before the
/// server starts its threads.
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
