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
/// grid of cubic cells: where interest sets find the bodies near an observer.
///
/// Layout. The cells' bodies lie in one set of arrays, structure of arrays (x, y, z, filter
/// bits, id, slot), each cell a contiguous run with room to spare (a quarter more than it held
/// at the last packing, and at least 2), the cells in index order (neighbours along x are
/// neighbours in memory): a search reads a few short runs of floats, which the distance test
/// takes several at a time. A move within a cell rewrites the body's entry in place; a move to
/// another cell takes the last entry of the old run into the hole and appends to the new run;
/// a run that is full makes the grid pack every run again (O(bodies + cells)).
///
/// The grid covers the box of the positions it was last built with, padded; the outermost cells
/// reach to infinity on their outer sides, so a body that moves out of the box still belongs to
/// exactly one cell (the nearest border cell), and every lower bound below stays exact. When too
/// many bodies have left the box, or their number changed much since the build, NeedsRebuild()
/// says so and the owner rebuilds (O(bodies)). The cell size gives about kBodiesPerCell bodies
/// per cell of the box.
///
/// Slots are the owner's (the mirror's body table). Not thread-safe.
class BodyGrid {
 public:
  /// The bodies of one cell: `size` entries of each array.
  struct Cell {
    const float* x;
    const float* y;
    const float* z;
    const uint32_t* category;
    const uint32_t* mask;
    const uint64_t* id;
    /// The owner's slot of each body.
    const uint32_t* slot;
    size_t size;
  };
  /// The bodies per cell the build aims at, over the box of the positions.
  static constexpr double kBodiesPerCell = 16.0;

  /// Rebuilds the grid from `bodies` (each live slot's body; a null pointer for a free slot),
  /// choosing the box and cell size from their positions.
  void Build(std::span<const Body* const> bodies);
  /// Adds the body in `slot` (not in the grid).
  void Insert(uint32_t slot, const Body& body);
  /// Brings the entry of `slot` to `body`'s position and filter bits (`refiltered`: they may
  /// differ from the entry's; else only the position is written when the cell stays).
  void Update(uint32_t slot, const Body& body, bool refiltered = true);
  /// Removes the body in `slot`.
  void Erase(uint32_t slot);
  /// True when a rebuild would serve the searches better (bodies outside the box, or their
  /// number changed by more than half since the build).
  bool NeedsRebuild() const;

  /// Bodies held.
  size_t size() const { return size_; }
  /// The cell size (length units).
  double cell_size() const { return cell_; }
  /// The radius of a ball that holds `count` bodies at the mean density of the grid's box (an
  /// estimate to start a search with; a cell's size when the box is flat or empty).
  double RadiusHolding(double count) const;
  /// The index of the cell a position belongs to (cells are numbered along x, then y, then z).
  uint32_t CellIndexOf(const Vec3& p) const { return CellOf(p); }
  /// Bytes held by the arrays and the slot table.
  size_t MemoryBytes() const;

  /// Calls `f(const Cell& cell)` for every non-empty cell that may hold a body whose squared
  /// distance from `p` (InterestDistance2, in float) is at most `bound2`: the cells whose box
  /// lies within sqrt(bound2) of `p`, by a conservative lower bound (a cell is skipped only when
  /// every point of it is farther, float rounding included).
  template <typename F>
  void ForEachCellNear(const Vec3& p, float bound2, F&& f) const;

 private:
  struct Location {
    uint32_t cell = kNoCell;
    /// The entry's index in the arrays.
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
  // Writes `body` (in `slot`) into entry `index`.
  void Write(uint32_t index, uint32_t slot, const Body& body);
  // Appends `body` to `cell`'s run; false when the run is full.
  bool Append(uint32_t cell, uint32_t slot, const Body& body);
  // Removes entry `slot` from its run (the run's last entry takes its place).
  void Unplace(uint32_t slot);
  // Lays the runs out again, each with room to spare, plus `extra` in `extra_cell`'s.
  void Pack(uint32_t extra_cell);
  void Resize(size_t entries);

  double origin_[3] = {0.0, 0.0, 0.0};
  double cell_ = 1.0;
  double inverse_cell_ = 1.0;
  int32_t dims_[3] = {1, 1, 1};
  // Per cell: its run's first entry (cells + 1 values: a run ends where the next begins) and
  // how many entries it holds.
  std::vector<uint32_t> start_ = {0, 0};
  std::vector<uint32_t> count_ = {0};
  // The entries.
  std::vector<float> x_, y_, z_;
  std::vector<uint32_t> category_, mask_, slot_;
  std::vector<uint64_t> id_;
  std::vector<Location> where_;
  size_t size_ = 0;
  size_t built_size_ = 0;
  // Bodies whose position lies outside the grid's box (in a border cell's unbounded part).
  size_t outside_ = 0;
  std::vector<bool> outside_slot_;
};

/// The squared distance interest sets are decided on, in float: ((dx*dx + dy*dy) + dz*dz) of
/// `b - a`, in that order, so that every evaluation of a pair gives the same value (the watch
/// layer is built without fused multiply-adds).
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
        const size_t c = row + i;
        if (count_[c] == 0 || gyz + AxisGap(0, i, v[0]) > limit2) continue;
        const uint32_t s = start_[c];
        f(Cell{.x = &x_[s],
               .y = &y_[s],
               .z = &z_[s],
               .category = &category_[s],
               .mask = &mask_[s],
               .id = &id_[s],
               .slot = &slot_[s],
               .size = count_[c]});
      }
    }
  }
}

}  // namespace collide
