#include "server/infra/memory_release.h"

#include <gtest/gtest.h>

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
