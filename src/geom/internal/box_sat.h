#pragma once

// Separating-axis tests for box-box and box-segment pairs, shared by overlap.cc and
// penetration.cc. Not part of the public API.
//
// Everything is in the first box's local frame, relative to its centre: the second shape's
// position is subtracted before unrotating, so values stay small far from the world origin.

#include <cmath>

#include "geom/mat3.h"
#include "geom/pose.h"
#include "geom/quat.h"
#include "geom/vec3.h"

namespace collide::geom_internal {

/// Cross axes shorter than this (|A_i x B_j| = sin of the angle between the edges) are skipped:
/// the edges are parallel to within 1e-6 rad, so the face axes already decide the test to
/// within 1e-6 of the boxes' size, while a cross axis that short carries no direction.
inline constexpr float kMinCrossLength = 1e-6f;

/// Box B seen from box A, in A's local frame.
struct BoxPair {
  Vec3 ea{};
  Vec3 eb{};
  /// B's centre.
  Vec3 t{};
  /// B's unit axes.
  Vec3 ub[3];
};

inline BoxPair MakeBoxPair(const Vec3& ea, const Pose& pa, const Vec3& eb, const Pose& pb) {
  BoxPair p;
  p.ea = ea;
  p.eb = eb;
  p.t = InverseTransformPoint(pa, pb.position);
  // The relative rotation conj(qa) qb as one quaternion, then its matrix: when A and B are
  // nearly aligned its small off-diagonal terms keep their relative precision, which a product
  // of two world matrices would not.
  const Mat3 r = ToMat3(Conjugate(pa.rotation) * pb.rotation);
  p.ub[0] = r.c0;
  p.ub[1] = r.c1;
  p.ub[2] = r.c2;
  return p;
}

/// The overlap of the projections of A and B on the axis `l` (any length, A's frame), in units
/// of |l|: ra + rb - |t.l|, negative when `l` separates them. `*proj` receives t.l.
///
/// ra and rb are sums of |l . axis| over the boxes' actual axes rather than the entries of the
/// relative rotation (Real-Time Collision Detection 4.4.1 shortcut): every term then has a
/// rounding error relative to |l|, so a short cross axis of near-parallel edges is still
/// tested correctly instead of comparing two values of pure rounding noise. This is the
/// parallel-edge guard of seeds 001/002 without an epsilon that would bias the answer.
inline float ProjectionOverlap(const BoxPair& p, const Vec3& l, float* proj) {
  const float ra = p.ea.x * std::fabs(l.x) + p.ea.y * std::fabs(l.y) + p.ea.z * std::fabs(l.z);
  const float rb = p.eb.x * std::fabs(Dot(l, p.ub[0])) + p.eb.y * std::fabs(Dot(l, p.ub[1])) +
                   p.eb.z * std::fabs(Dot(l, p.ub[2]));
  *proj = Dot(p.t, l);
  return ra + rb - std::fabs(*proj);
}

/// The axis of least overlap, unit, oriented from A towards B, and the overlap along it.
struct SatAxis {
  Vec3 normal{};
  float depth = 0.0f;
  /// Which axis: 0-2 A's face normals, 3-5 B's, 6 + 3 i + j the cross A_i x B_j (box-box);
  /// 0-2 the box's face normals, 3 + i the cross u x e_i (box-segment).
  int index = 0;
};

/// The 15 candidate axes of two boxes, in a fixed order: A's faces, B's faces, then the cross
/// products A_i x B_j. Calls `f(axis, index)` for each (skipping near-zero crosses; `index` as
/// in SatAxis) until it returns false; returns false when it was stopped.
template <typename F>
inline bool ForEachBoxBoxAxis(const BoxPair& p, F&& f) {
  for (int i = 0; i < 3; ++i) {
    Vec3 l{};
    l[i] = 1.0f;
    if (!f(l, i)) return false;
  }
  for (int j = 0; j < 3; ++j) {
    if (!f(p.ub[j], 3 + j)) return false;
  }
  for (int i = 0; i < 3; ++i) {
    Vec3 ai{};
    ai[i] = 1.0f;
    for (int j = 0; j < 3; ++j) {
      const Vec3 l = Cross(ai, p.ub[j]);
      if (LengthSquared(l) < kMinCrossLength * kMinCrossLength) continue;
      if (!f(l, 6 + 3 * i + j)) return false;
    }
  }
  return true;
}

/// True when no axis separates the boxes (closed boxes: touching overlaps).
inline bool BoxBoxOverlap(const BoxPair& p) {
  return ForEachBoxBoxAxis(p, [&](const Vec3& l, int) {
    float proj;
    return ProjectionOverlap(p, l, &proj) >= 0.0f;
  });
}

/// A cross axis must beat the best face axis by this fraction of the boxes' size to be chosen
/// as the minimum: when one box is turned about a single axis of the other, some cross axes
/// are the same direction as a face axis (A_x x B_z = -A_y when B_z = A_z) and their depths
/// differ only by rounding (~1e-7 of the size); the face axis then gives the natural contact
/// (the middle of the touching faces' overlap). The depth can be off by at most this much.
inline constexpr float kCrossAxisBias = 1e-6f;

/// The separating-axis test with the minimum-overlap axis: false when some axis separates;
/// otherwise `*best` is the axis of least overlap (the exact penetration depth and direction,
/// since the faces of the Minkowski difference of two boxes all have normals among these
/// axes). Ties keep the earlier axis, so A's faces win over B's, and faces over cross axes
/// (within kCrossAxisBias).
inline bool BoxBoxMinimumAxis(const BoxPair& p, SatAxis* best) {
  bool have = false;
  const float bias = kCrossAxisBias * (MaxComponent(p.ea) + MaxComponent(p.eb));
  return ForEachBoxBoxAxis(p, [&](const Vec3& l, int index) {
    float proj;
    const float overlap = ProjectionOverlap(p, l, &proj);
    if (overlap < 0.0f) return false;
    const float len = Length(l);
    const float depth = overlap / len;
    if (!have || depth < best->depth - (index >= 6 ? bias : 0.0f)) {
      have = true;
      best->depth = depth;
      best->index = index;
      // Move B along the side its centre is on; a centred B may go either way.
      best->normal = l * ((proj >= 0.0f ? 1.0f : -1.0f) / len);
    }
    return true;
  });
}

/// The minimum-overlap axis of the box of half extents `e` and a segment c + t u (t in [-1, 1])
/// that meets it, in the box's frame: the least over the 3 face normals and the 3 crosses
/// u x e_i (the face normals of the Minkowski difference of a box and a segment) of the
/// distance the segment must move along the axis to leave the box. Oriented from the box
/// towards where the segment leaves.
inline SatAxis BoxSegmentMinimumAxis(const Vec3& e, const Vec3& c, const Vec3& u) {
  SatAxis best;
  bool have = false;
  auto consider = [&](const Vec3& l, int index) {
    const float len = Length(l);
    // The box projects to [-hb, hb], the segment to [m - half, m + half].
    const float hb = e.x * std::fabs(l.x) + e.y * std::fabs(l.y) + e.z * std::fabs(l.z);
    const float m = Dot(c, l);
    const float half = std::fabs(Dot(u, l));
    // Moving the segment by +d along l until m - half + d = hb, or by -d until m + half - d = -hb.
    const float up = hb - m + half;
    const float down = hb + m + half;
    const bool go_up = up <= down;
    const float depth = std::fmax((go_up ? up : down) / len, 0.0f);
    if (!have || depth < best.depth) {
      have = true;
      best.depth = depth;
      best.index = index;
      best.normal = l * ((go_up ? 1.0f : -1.0f) / len);
    }
  };
  for (int i = 0; i < 3; ++i) {
    Vec3 l{};
    l[i] = 1.0f;
    consider(l, i);
  }
  const float uu = LengthSquared(u);
  for (int i = 0; i < 3; ++i) {
    Vec3 ai{};
    ai[i] = 1.0f;
    const Vec3 l = Cross(u, ai);
    // Also skips every cross of a zero-length segment (uu = 0).
    if (!(LengthSquared(l) > kMinCrossLength * kMinCrossLength * uu)) continue;
    consider(l, 3 + i);
  }
  return best;
}

}  // namespace collide::geom_internal
