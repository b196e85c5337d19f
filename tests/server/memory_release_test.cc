#include "server/infra/memory_release.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace collide {
namespace {

constexpr uint64_t kMiB = 1 << 20;

// This process's resident set, in bytes.
uint64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0;
  uint64_t pages = 0;
  statm >> size >> pages;
  return pages * 4096;
}

// 64 MiB in 4 KiB blocks (below the mmap threshold: in malloc's heap), every page touched.
std::vector<std::unique_ptr<char[]>> AllocateSmallBlocks() {
  std::vector<std::unique_ptr<char[]>> blocks(16384);
  for (auto& block : blocks) {
    block.reset(new char[4096]);
    std::memset(block.get(), 1, 4096);
  }
  return blocks;
}

// Frees all blocks but every 64th, which keep the freed memory between them in the heap (free()
// alone can return only the top of a heap).
void FreeMostOf(std::vector<std::unique_ptr<char[]>>& blocks) {
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (i % 64 != 63) blocks[i].reset();
  }
}

// Minor page faults this process has taken so far.
uint64_t MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_minflt);
}

TEST(TuneAllocator, BuffersUnderTheMmapThresholdAreReusedWithoutPageFaults) {
  if (!MemoryReleaser::Supported()) GTEST_SKIP() << "the sanitizer's allocator replaces glibc's";
  TuneAllocator();
  // A tick's buffers under the threshold, allocated together, written and freed every tick:
  // they end up at the top of the heap, which free() must not give back every time.
  constexpr int kBuffers = 16;
  constexpr size_t kBytes = kMmapThresholdBytes - 4096;
  auto tick = [&](int i) {
    std::vector<std::unique_ptr<char[]>> buffers(kBuffers);
    for (auto& buffer : buffers) {
      buffer.reset(new char[kBytes]);
      for (size_t page = 0; page < kBytes; page += 4096) buffer[page] = static_cast<char>(i);
    }
    volatile char sink = buffers[kBuffers - 1][kBytes - 1];
    (void)sink;
  };
  tick(0);  // the first tick faults the pages in
  constexpr int kTicks = 100;
  const uint64_t before = MinorFaults();
  for (int i = 1; i <= kTicks; ++i) tick(i);
  const uint64_t faults = MinorFaults() - before;
  std::printf("%d ticks of %d buffers of %zu KiB: %llu minor faults\n", kTicks, kBuffers,
              kBytes >> 10, static_cast<unsigned long long>(faults));
  // With the heap's top given back every tick, each tick faults all of its pages in again
  // (about 500 a tick, 50,000 in all).
  EXPECT_LT(faults, kBuffers * kBytes / 4096);
}

TEST(TuneAllocator, BlocksAtTheMmapThresholdGoBackWhenFreed) {
  if (!MemoryReleaser::Supported()) GTEST_SKIP() << "the sanitizer's allocator replaces glibc's";
  TuneAllocator();
  // A large answer's slices: 32 MiB in blocks of 1 MiB.
  std::vector<std::unique_ptr<char[]>> blocks(32);
  for (auto& block : blocks) {
    block.reset(new char[kMiB]);
    std::memset(block.get(), 1, kMiB);
  }
  const uint64_t before = ResidentBytes();
  blocks.clear();
  const uint64_t after = ResidentBytes();
  std::printf("freed 32 blocks of 1 MiB: resident %.1f -> %.1f MiB\n",
              static_cast<double>(before) / kMiB, static_cast<double>(after) / kMiB);
  EXPECT_LE(after + 30 * kMiB, before);
}

TEST(MemoryReleaser, GivesBackFreeMemoryTheAllocatorKeptOnceAllocationsStopGrowing) {
  if (!MemoryReleaser::Supported()) GTEST_SKIP() << "the sanitizer's allocator replaces glibc's";
  TuneAllocator();
  // A period long enough that only the calls below check.
  MemoryReleaser releaser(std::chrono::hours(1), 16 * kMiB);
  releaser.CheckNow();  // the level to compare with

  std::vector<std::unique_ptr<char[]>> blocks = AllocateSmallBlocks();
  // Allocations grew since the last check: no trim, whatever is free.
  EXPECT_EQ(releaser.CheckNow(), 0u);
  FreeMostOf(blocks);
  const uint64_t before = ResidentBytes();
  const uint64_t released = releaser.CheckNow();
  const uint64_t after = ResidentBytes();
  std::printf("freed 63 MiB: resident %.1f -> %.1f MiB, %.1f MiB released\n",
              static_cast<double>(before) / kMiB, static_cast<double>(after) / kMiB,
              static_cast<double>(released) / kMiB);
  EXPECT_GE(released, 48 * kMiB);
  EXPECT_LE(after + 48 * kMiB, before);
  // Nothing more to give back: the next check does not trim again.
  EXPECT_EQ(releaser.CheckNow(), 0u);
}

TEST(MemoryReleaser, KeepsFreeMemoryUnderItsThreshold) {
  if (!MemoryReleaser::Supported()) GTEST_SKIP() << "the sanitizer's allocator replaces glibc's";
  TuneAllocator();
  MemoryReleaser releaser(std::chrono::hours(1), 256 * kMiB);
  releaser.CheckNow();
  std::vector<std::unique_ptr<char[]>> blocks = AllocateSmallBlocks();
  releaser.CheckNow();
  FreeMostOf(blocks);
  // 63 MiB free is under the 256 MiB threshold: kept for reuse.
  EXPECT_EQ(releaser.CheckNow(), 0u);
}

}  // namespace
}  // namespace collide
