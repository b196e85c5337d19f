#include "server/infra/memory_release.h"

#include <malloc.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "spdlog/spdlog.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define COLLIDE_SANITIZER_ALLOCATOR 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define COLLIDE_SANITIZER_ALLOCATOR 1
#endif

namespace collide {
namespace {

#ifndef COLLIDE_SANITIZER_ALLOCATOR
// The process's resident set, in bytes (0 if unreadable).
uint64_t ResidentBytes() {
  std::FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr) return 0;
  unsigned long long size = 0;
  unsigned long long resident = 0;
  const int read = std::fscanf(statm, "%llu %llu", &size, &resident);
  std::fclose(statm);
  if (read != 2) return 0;
  return static_cast<uint64_t>(resident) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// What malloc has handed out, and the process's resident set; resident minus allocated is
// free pages in malloc's arenas plus what is not malloc's at all (code, stacks), which moves
// little.
struct Usage {
  uint64_t allocated = 0;
  uint64_t resident = 0;
  uint64_t free_resident() const { return resident > allocated ? resident - allocated : 0; }
};

Usage CurrentUsage() {
  const struct mallinfo2 info = mallinfo2();
  return Usage{.allocated = info.uordblks + info.hblkhd, .resident = ResidentBytes()};
}

int64_t CpuMicros() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000 + now.tv_nsec / 1000;
}
#endif

}  // namespace

void TuneAllocator() {
#ifndef COLLIDE_SANITIZER_ALLOCATOR
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMmapThresholdBytes));
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(kHeapTopTrimBytes));
#endif
}

bool MemoryReleaser::Supported() {
#ifdef COLLIDE_SANITIZER_ALLOCATOR
  return false;
#else
  return true;
#endif
}

MemoryReleaser::MemoryReleaser(std::chrono::milliseconds period, size_t min_free_bytes)
    : period_(period), min_free_bytes_(min_free_bytes) {
  if (Supported()) thread_ = std::thread(&MemoryReleaser::Run, this);
}

MemoryReleaser::~MemoryReleaser() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  stop_cv_.NotifyAll();
  if (thread_.joinable()) thread_.join();
}

uint64_t MemoryReleaser::CheckNow() {
#ifdef COLLIDE_SANITIZER_ALLOCATOR
  return 0;
#else
  MutexLock lock(&check_mu_);
  const Usage before = CurrentUsage();
  const uint64_t last_allocated = std::exchange(last_allocated_, before.allocated);
  floor_ = std::min(floor_, before.free_resident());
  // Not while allocations grow: free pages are then being reused, and a trim would only make
  // the next allocations fault them in again.
  if (before.free_resident() < floor_ + min_free_bytes_ || before.allocated > last_allocated) {
    return 0;
  }
  const auto start = std::chrono::steady_clock::now();
  const int64_t cpu_start = CpuMicros();
  malloc_trim(0);
  const int64_t cpu = CpuMicros() - cpu_start;
  const Usage after = CurrentUsage();
  // What could not be given back (pages partly in use) is the level the next trim waits to grow
  // past; without this, such pages would make every check trim again.
  floor_ = after.free_resident();
  const uint64_t released = before.resident > after.resident ? before.resident - after.resident : 0;
  spdlog::debug("gave {} KiB of free memory back to the system in {} us ({} us of CPU)",
                released >> 10,
                std::chrono::duration_cast<std::chrono::microseconds>(
                    std::chrono::steady_clock::now() - start)
                    .count(),
                cpu);
  return released;
#endif
}

void MemoryReleaser::Run() {
  std::unique_lock<Mutex> lock(mu_);
  while (!stop_cv_.WaitFor(lock, period_, [this] { return stopping_; })) {
    lock.unlock();
    CheckNow();
    lock.lock();
  }
}

}  // namespace collide
