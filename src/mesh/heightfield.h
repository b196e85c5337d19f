#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "geom/aabb.h"
#include "geom/triangle.h"
#include "geom/vec3.h"

namespace collide {

// A heightfield asset: a regular grid of heights, queried as the triangles it stands for without
// ever building them.
//
// The surface. Sample (i, j) (row i, column j) is the local point (j * spacing_x, h(i, j),
// i * spacing_z): rows run along local z, columns along local x, y is up, sample (0, 0) at the
// origin. Cell (i, j) is the square between samples (i, j) and (i + 1, j + 1); it holds two
// triangles split on its diagonal from sample (i, j) to sample (i + 1, j + 1) (the fixed
// diagonal; both counter-clockwise seen from above, so their front faces up):
//   triangle 2 c     = (s(i, j), s(i + 1, j), s(i + 1, j + 1)),
//   triangle 2 c + 1 = (s(i, j), s(i + 1, j + 1), s(i, j + 1)),
// with c = i * (columns - 1) + j the cell's index. A cell may be a hole: neither triangle
// exists.
//
// Storage: 16 bits per sample. The heights are quantised once, at the build, to 65,536 levels
// spanning [min, max] of the input (h = min + q * (max - min) / 65535, rounded to nearest): the
// asset's surface is the quantised one, and every query is exact against it. The error against
// the input is at most half a level, (max - min) / 131070 plus float rounding
// (max_quantization_error()): 0.8 mm for a 100 m range. Over the cells, a min/max pyramid of
// the quantised heights (4 bytes per node, level 1 holding a node per 2 x 2 cells, each level
// half the last, up to one node; each level stored in 2 x 2 blocks, a node's children
// together): a ray descends it nearest node first, testing a node's four children at once, and
// tests the 8 triangles of a level-1 node together. Holes: one bit per cell (none stored
// without holes). In all, about 3.4 bytes per sample.

/// The most samples along either side of a heightfield (so that the triangle indices fit in 32
/// bits).
inline constexpr uint64_t kMaxHeightfieldSide = 32768;

/// A heightfield's bounds, chosen by whoever accepts heightfields (a server's flags).
struct HeightfieldLimits {
  /// Samples per side, in [2, kMaxHeightfieldSide].
  uint64_t max_side = kMaxHeightfieldSide;
  /// Samples in all (rows x columns).
  uint64_t max_samples = uint64_t{1} << 26;
};

/// A heightfield as a client gives it, not owned.
struct HeightfieldDesc {
  /// Samples along local z (>= 2).
  uint64_t rows = 0;
  /// Samples along local x (>= 2).
  uint64_t columns = 0;
  /// Distances between neighbouring samples along x and z (length units, > 0).
  float spacing_x = 1.0f;
  float spacing_z = 1.0f;
  /// rows x columns heights, row-major (sample (i, j) at i * columns + j).
  std::span<const float> heights;
  /// Empty (no holes), or (rows - 1) x (columns - 1) cells, row-major: non-zero is a hole.
  std::span<const uint8_t> holes;
};

/// The field a HeightfieldError is about.
enum class HeightfieldField : uint8_t {
  kRows = 0,
  kColumns,
  kSpacingX,
  kSpacingZ,
  kHeights,
  kHoles,
};

/// Why a heightfield is refused.
enum class HeightfieldProblem : uint8_t {
  /// Fewer than 2 samples on a side (no cell).
  kTooFewSamples = 0,
  /// More samples on a side than the limit.
  kTooManySamplesOnASide,
  /// More samples in all than the limit (field: kRows).
  kTooManySamples,
  /// A spacing not finite, <= 0, or so large that the field leaves +-kMaxMeshCoordinate.
  kBadSpacing,
  /// The heights list is not rows x columns long (index: its length).
  kWrongCount,
  /// A height NaN or infinite (index: the sample).
  kNotFinite,
  /// A height beyond +-kMaxMeshCoordinate (index: the sample).
  kTooLarge,
};

/// Which field, which element, why.
struct HeightfieldError {
  HeightfieldField field = HeightfieldField::kRows;
  uint64_t index = 0;
  HeightfieldProblem problem = HeightfieldProblem::kTooFewSamples;

  bool operator==(const HeightfieldError&) const = default;
};

/// Checks `desc`; nothing when it is acceptable.
std::optional<HeightfieldError> ValidateHeightfield(const HeightfieldDesc& desc,
                                                    const HeightfieldLimits& limits = {});

/// The field's name in messages ("rows", "columns", "spacing_x", ...).
std::string_view HeightfieldFieldName(HeightfieldField field);
/// The reason's wording in messages.
std::string_view HeightfieldProblemReason(HeightfieldProblem problem);

/// A heightfield asset built for queries (heightfield_query.h); immutable once built.
class HeightfieldShape {
 public:
  /// An empty heightfield (no cell; every query misses).
  HeightfieldShape() = default;

  /// Builds the asset from `desc`, which must have passed ValidateHeightfield.
  static HeightfieldShape Build(const HeightfieldDesc& desc);

  uint32_t rows() const { return rows_; }
  uint32_t columns() const { return columns_; }
  float spacing_x() const { return spacing_x_; }
  float spacing_z() const { return spacing_z_; }
  /// The number of cells along z and x.
  uint32_t cell_rows() const { return rows_ > 0 ? rows_ - 1 : 0; }
  uint32_t cell_columns() const { return columns_ > 0 ? columns_ - 1 : 0; }
  /// The triangle count: 2 per cell (holes included: their indices stay reserved).
  uint32_t triangle_count() const { return 2 * cell_rows() * cell_columns(); }
  /// The box of every sample, local frame.
  const Aabb& local_bounds() const { return bounds_; }
  /// The largest difference between an input height and its stored height.
  float max_quantization_error() const { return max_error_; }
  /// Bytes held.
  size_t MemoryBytes() const;

  /// The stored height of a quantised level.
  float Dequantize(uint32_t q) const { return min_height_ + static_cast<float>(q) * step_; }
  /// The stored height of sample (i, j).
  float Height(uint32_t i, uint32_t j) const {
    return Dequantize(samples_[static_cast<size_t>(i) * columns_ + j]);
  }
  /// Sample (i, j) as a local point.
  Vec3 Sample(uint32_t i, uint32_t j) const {
    return Vec3{static_cast<float>(j) * spacing_x_, Height(i, j),
                static_cast<float>(i) * spacing_z_};
  }
  /// True when cell (i, j) is a hole.
  bool IsHole(uint32_t i, uint32_t j) const {
    if (holes_.empty()) return false;
    const size_t c = static_cast<size_t>(i) * cell_columns() + j;
    return (holes_[c >> 6] >> (c & 63)) & 1u;
  }
  /// The index of triangle `k` (0 or 1) of cell (i, j).
  uint32_t TriangleIndex(uint32_t i, uint32_t j, uint32_t k) const {
    return 2 * (i * cell_columns() + j) + k;
  }
  /// Triangle `k` (0 or 1) of cell (i, j).
  Triangle CellTriangle(uint32_t i, uint32_t j, uint32_t k) const {
    const Vec3 s00 = Sample(i, j), s11 = Sample(i + 1, j + 1);
    return k == 0 ? Triangle{s00, Sample(i + 1, j), s11} : Triangle{s00, s11, Sample(i, j + 1)};
  }
  /// The triangle of index `index` (< triangle_count()).
  Triangle TriangleAt(uint32_t index) const {
    const uint32_t c = index / 2;
    return CellTriangle(c / cell_columns(), c % cell_columns(), index % 2);
  }

  // The pyramid, for the queries.

  /// Levels above the cells: level 1 has a node per 2 x 2 cells; the last has one node.
  int levels() const { return static_cast<int>(pyramid_.size()); }
  /// The nodes of level `l` (1 .. levels()) along z and x.
  uint32_t level_rows(int l) const { return level_rows_[l - 1]; }
  uint32_t level_columns(int l) const { return level_columns_[l - 1]; }
  /// Node (i, j) of level `l`: quantised (min, max) of the cells under it that are not holes;
  /// min > max when every one is a hole.
  void NodeRange(int l, uint32_t i, uint32_t j, uint32_t* qmin, uint32_t* qmax) const {
    const uint32_t v = pyramid_[l - 1][NodeIndex(l, i, j)];
    *qmin = v & 0xFFFFu;
    *qmax = v >> 16;
  }
  /// The four children of node (i, j) of level `l` >= 2, nodes (2 i + di, 2 j + dj) of level
  /// l - 1 at [2 di + dj], as (min | max << 16) (children beyond the grid are empty: min > max).
  /// A level's nodes are stored in 2 x 2 blocks, a parent's children together.
  const uint32_t* Children(int l, uint32_t i, uint32_t j) const {
    return &pyramid_[l - 2][(static_cast<size_t>(i) * level_block_columns_[l - 2] + j) * 4];
  }
  /// The quantised heights, row-major.
  const uint16_t* sample_data() const { return samples_.data(); }
  /// The height of level 0 and the step between levels (Dequantize: min + q * step).
  float min_height() const { return min_height_; }
  float step() const { return step_; }
  /// True when the heightfield has holes.
  bool has_holes() const { return !holes_.empty(); }
  /// Cell (i, j)'s quantised range (min > max for a hole).
  void CellRange(uint32_t i, uint32_t j, uint32_t* qmin, uint32_t* qmax) const;

 private:
  uint32_t rows_ = 0;
  uint32_t columns_ = 0;
  float spacing_x_ = 1.0f;
  float spacing_z_ = 1.0f;
  float min_height_ = 0.0f;
  float step_ = 0.0f;
  float max_error_ = 0.0f;
  Aabb bounds_{};
  std::vector<uint16_t> samples_;
  std::vector<uint64_t> holes_;
  std::vector<std::vector<uint32_t>> pyramid_;
  // The position of node (i, j) in level l's storage (2 x 2 blocks).
  size_t NodeIndex(int l, uint32_t i, uint32_t j) const {
    return (static_cast<size_t>(i >> 1) * level_block_columns_[l - 1] + (j >> 1)) * 4 +
           (i & 1) * 2 + (j & 1);
  }

  std::vector<uint32_t> level_rows_;
  std::vector<uint32_t> level_columns_;
  std::vector<uint32_t> level_block_columns_;
};

}  // namespace collide
