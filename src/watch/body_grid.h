#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "geom/vec3.h"
#include "query/body.h"

namespace collide {

/// The bodies of a SceneMirror by position (each body's pose.position, its origin) in a uniform
/// grid of cubic cells: where interest sets find the bodies near an observer. Each cell holds its
/// bodies' entries contiguously (position, filter bits, id), so a search reads a few arrays
/// rather than the bodies themselves.
///
/// The grid covers the box of the positions it was last built with, padded; the outermost cells
/// reach to infinity on their outer sides, so a body that moves out of the box still belongs to
/// exactly one cell (the nearest border cell), and every lower bound below stays exact. When too
/// many bodies have left the box, or their number changed much since the build, NeedsRebuild()
/// says so and the owner rebuilds (O(bodies)). The cell size gives about kBodiesPerCell bodies
/// per cell of the box.
///
/// Slots are the owner's (the mirror's body table); entries are moved in place on a move.
/// Not thread-safe.
class BodyGrid {
 public:
  /// One body in a cell.
  struct Entry {
    float x = 0.0f;
    float y = 0.0f;
    float z = 0.0f;
    uint32_t category = 0;
    uint32_t mask = 0;
    /// The owner's slot of the body.
    uint32_t slot = 0;
    uint64_t id = 0;
  };
  /// The bodies per cell the build aims at, over the box of the positions.
  static constexpr double kBodiesPerCell = 4.0;

  /// Rebuilds the grid from `bodies` (each live slot's body; a null pointer for a free slot),
  /// choosing the box and cell size from their positions.
  void Build(std::span<const Body* const> bodies);
  /// Adds the body in `slot` (not in the grid).
  void Insert(uint32_t slot, const Body& body);
  /// Brings the entry of `slot` to `body`'s position and filter bits.
  void Update(uint32_t slot, const Body& body);
  /// Removes the body in `slot`.
  void Erase(uint32_t slot);
  /// True when a rebuild would serve the searches better (bodies outside the box, or their
  /// number changed by more than half since the build).
  bool NeedsRebuild() const;

  /// Bodies held.
  size_t size() const { return size_; }
  /// The cell size (length units).
  double cell_size() const { return cell_; }
  /// Bytes held by the cells and the slot table.
  size_t MemoryBytes() const;

  /// Calls `f(std::span<const Entry> cell)` for every cell that may hold a body whose squared
  /// distance from `p` (InterestDistance2, in float) is at most `bound2`: the cells whose box
  /// lies within sqrt(bound2) of `p`, by a conservative lower bound (a cell is skipped only when
  /// every point of it is farther, float rounding included). Stops early when `f` returns false.
  template <typename F>
  void ForEachCellNear(const Vec3& p, float bound2, F&& f) const;

 private:
  struct Location {
    uint32_t cell = kNoCell;
    uint32_t index = 0;
  };
  static constexpr uint32_t kNoCell = UINT32_MAX;

  // The cell of a coordinate on `axis`, clamped to the grid.
  int32_t CellOn(int axis, double v) const {
    const double t = std::floor((v - origin_[axis]) * inverse_cell_);
    if (!(t >= 0.0)) return 0;  // below the box (or NaN, which valid positions never are)
    return t >= dims_[axis] - 1 ? dims_[axis] - 1 : static_cast<int32_t>(t);
  }
  bool Outside(const Vec3& p) const;
  uint32_t CellOf(const Vec3& p) const {
    const int32_t i = CellOn(0, p.x), j = CellOn(1, p.y), k = CellOn(2, p.z);
    return static_cast<uint32_t>((static_cast<int64_t>(k) * dims_[1] + j) * dims_[0] + i);
  }
  // The squared distance from `v` to cell `c`'s interval on `axis` (border cells unbounded).
  double AxisGap(int axis, int32_t c, double v) const {
    if (c > 0) {
      const double lo = origin_[axis] + c * cell_;
      if (v < lo) return (lo - v) * (lo - v);
    }
    if (c < dims_[axis] - 1) {
      const double hi = origin_[axis] + (c + 1) * cell_;
      if (v > hi) return (v - hi) * (v - hi);
    }
    return 0.0;
  }
  void Place(uint32_t slot, uint32_t cell, const Entry& entry);
  void Unplace(uint32_t slot);

  double origin_[3] = {0.0, 0.0, 0.0};
  double cell_ = 1.0;
  double inverse_cell_ = 1.0;
  int32_t dims_[3] = {1, 1, 1};
  std::vector<std::vector<Entry>> cells_ = std::vector<std::vector<Entry>>(1);
  std::vector<Location> where_;
  size_t size_ = 0;
  size_t built_size_ = 0;
  // Bodies whose position lies outside the grid's box (in a border cell's unbounded part).
  size_t outside_ = 0;
  std::vector<bool> outside_slot_;
};

/// The squared distance interest sets are decided on, in float: ((dx*dx + dy*dy) + dz*dz) of
/// `b - a`, in that order, so that every evaluation of a pair gives the same value.
inline float InterestDistance2(const Vec3& a, const Vec3& b) {
  const float dx = b.x - a.x;
  const float dy = b.y - a.y;
  const float dz = b.z - a.z;
  return (dx * dx + dy * dy) + dz * dz;
}

template <typename F>
void BodyGrid::ForEachCellNear(const Vec3& p, float bound2, F&& f) const {
  if (size_ == 0 || !(bound2 >= 0.0f)) return;
  // A body's float distance is within a few ulps of the exact one: widen the reach by a relative
  // 1e-5 so no body within the bound is left out of the index ranges or the cell test.
  const double reach = std::sqrt(static_cast<double>(bound2)) * (1.0 + 1e-5) + 1e-30;
  const double limit2 = reach * reach;
  const double v[3] = {p.x, p.y, p.z};
  int32_t lo[3], hi[3];
  for (int a = 0; a < 3; ++a) {
    lo[a] = CellOn(a, v[a] - reach);
    hi[a] = CellOn(a, v[a] + reach);
  }
  for (int32_t k = lo[2]; k <= hi[2]; ++k) {
    const double gz = AxisGap(2, k, v[2]);
    if (gz > limit2) continue;
    for (int32_t j = lo[1]; j <= hi[1]; ++j) {
      const double gyz = gz + AxisGap(1, j, v[1]);
      if (gyz > limit2) continue;
      const size_t row = (static_cast<size_t>(k) * dims_[1] + j) * dims_[0];
      for (int32_t i = lo[0]; i <= hi[0]; ++i) {
        if (gyz + AxisGap(0, i, v[0]) > limit2) continue;
        const std::vector<Entry>& cell = cells_[row + i];
        if (cell.empty()) continue;
        if (!f(std::span<const Entry>(cell))) return;
      }
    }
  }
}

}  // namespace collide
