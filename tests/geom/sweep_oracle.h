#pragma once

// A brute-force oracle of swept (translational) contact: the translation sampled densely with
// the boolean Overlap, the first contact refined by bisection, and a tie guard that says when
// float rounding could decide the answer. Independent of ShapeCast's conservative advancement
// and separating-axis intervals.

#include <string>

#include "geom/pose.h"
#include "geom/shapes.h"
#include "geom/vec3.h"

namespace collide::testing {

/// `shape` grown (by > 0) or shrunk (by < 0) by |by| on every side; a dimension never goes
/// below 0.
Shape Inflated(const Shape& shape, float by);

/// The oracle's verdict on one translation.
struct SweepVerdict {
  /// True when the shapes come within `eps` of touching without touching, or touch by less than
  /// `eps`: the answer is then left to rounding and the case should not be judged.
  bool ambiguous = false;
  /// True when the moving shape touches the target somewhere along the translation.
  bool hits = false;
  /// The first contact's fraction of the translation (bisection to ~1e-7), when `hits`.
  float fraction = 0.0f;
};

/// `moving` at `start.rotation` translated from `start.position` by `translation`, against
/// `target` at `target_pose`: samples every eps / 2 length units of the translation (both ends
/// included) with Overlap against the target shrunk by eps, as is, and grown by eps. A sample
/// overlapping the shrunk target proves a hit; no sample overlapping the grown target proves a
/// miss (a touch of the real target overlaps the grown one over a stretch of length >= eps);
/// anything else is ambiguous. Every dimension of `target` must be >= 2 eps.
SweepVerdict SampledSweep(const Shape& moving, const Pose& start, const Vec3& translation,
                          const Shape& target, const Pose& target_pose, float eps);

/// The same tie guard for two shapes at rest: ambiguous when Overlap against the target shrunk
/// by eps and grown by eps disagree.
SweepVerdict RestingOverlap(const Shape& moving, const Pose& pose, const Shape& target,
                            const Pose& target_pose, float eps);

/// Checks a reported contact of `moving` at `pose` with `target`: `point` on both surfaces and
/// `normal` (out of the target) a separating direction whose plane through `point` supports
/// both shapes, each within `tolerance` (length units), by the double-precision signed
/// distances and support functions of geom/oracle.h. Returns "" when it holds, else why not.
std::string CheckContact(const Shape& moving, const Pose& pose, const Shape& target,
                         const Pose& target_pose, const Vec3& point, const Vec3& normal,
                         double tolerance);

}  // namespace collide::testing
