#pragma once

#include <gtest/gtest.h>

#include <string>

#include "bvh/simd_level.h"

namespace collide::testing {

/// Every level of the traversal kernels, baseline first.
inline constexpr SimdLevel kAllSimdLevels[] = {SimdLevel::kSse, SimdLevel::kAvx2,
                                               SimdLevel::kAvx512};

/// Makes the kernels use a level for the scope; `ok()` is false (nothing changed) when the CPU
/// lacks it. Restores the level from before on exit.
class ScopedSimdLevel {
 public:
  explicit ScopedSimdLevel(SimdLevel level) : saved_(ActiveSimdLevel()), ok_(SetSimdLevel(level)) {}
  ~ScopedSimdLevel() { SetSimdLevel(saved_); }
  ScopedSimdLevel(const ScopedSimdLevel&) = delete;
  ScopedSimdLevel& operator=(const ScopedSimdLevel&) = delete;
  bool ok() const { return ok_; }

 private:
  SimdLevel saved_;
  bool ok_;
};

/// A test parametrized by level: SetUp switches to it, or skips the test (saying which level
/// the CPU lacks).
class SimdLevelTest : public ::testing::TestWithParam<SimdLevel> {
 protected:
  void SetUp() override {
    if (!SimdLevelSupported(GetParam())) {
      GTEST_SKIP() << "this CPU lacks " << SimdLevelName(GetParam())
                   << " (best: " << SimdLevelName(BestSimdLevel())
                   << "): its kernels are not run here";
    }
    ASSERT_TRUE(SetSimdLevel(GetParam()));
  }
  void TearDown() override { SetSimdLevel(saved_); }

 private:
  SimdLevel saved_ = ActiveSimdLevel();
};

/// The test name suffix of a level.
inline std::string SimdLevelParamName(const ::testing::TestParamInfo<SimdLevel>& info) {
  return std::string(SimdLevelName(info.param));
}

}  // namespace collide::testing
