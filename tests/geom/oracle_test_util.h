#pragma once

// Scaffolding shared by the randomised oracle tests (tests/geom/*_oracle_test.cc): failure
// collection with full case reports, and the summary printed after the last test.

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <utility>

#include "geom/cast.h"

namespace collide::oracle {

/// How many failures each test reports in full (the rest are only counted): 15, or
/// COLLIDE_ORACLE_REPORTS=<n> from the environment.
inline int MaxReports() {
  static const int n = [] {
    const char* env = std::getenv("COLLIDE_ORACLE_REPORTS");
    return env != nullptr ? std::atoi(env) : 15;
  }();
  return n;
}

/// Collects the failures of one test, reporting the first MaxReports() with their case.
class Failures {
 public:
  /// Records one failure: `what` went wrong in the case described by `context`.
  void Add(const std::string& what, const std::string& context) {
    ++count_;
    if (count_ <= MaxReports()) ADD_FAILURE() << what << "\n    " << context;
  }
  int count() const { return count_; }

 private:
  int count_ = 0;
};

/// Runs `print` once after all tests of the executable have run (registered at static
/// initialisation, before gtest_main runs the tests).
class SummaryEnvironment : public ::testing::Environment {
 public:
  explicit SummaryEnvironment(std::function<void()> print) : print_(std::move(print)) {}
  void TearDown() override { print_(); }

 private:
  std::function<void()> print_;
};

/// A CastHit no cast produces, to check that a miss leaves the output untouched.
inline CastHit SentinelHit() { return CastHit{-123.0f, Vec3{-7, -7, -7}, Vec3{-7, -7, -7}, true}; }

/// Bitwise equality of two hits.
inline bool SameHit(const CastHit& a, const CastHit& b) {
  return a.distance == b.distance && a.point == b.point && a.normal == b.normal &&
         a.start_overlapping == b.start_overlapping;
}

}  // namespace collide::oracle
