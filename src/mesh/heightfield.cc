#include "mesh/heightfield.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "mesh/triangle_mesh.h"

namespace collide {

std::optional<HeightfieldError> ValidateHeightfield(const HeightfieldDesc& desc,
                                                    const HeightfieldLimits& limits) {
  const uint64_t max_side = std::min(limits.max_side, kMaxHeightfieldSide);
  if (desc.rows < 2) {
    return HeightfieldError{HeightfieldField::kRows, desc.rows, HeightfieldProblem::kTooFewSamples};
  }
  if (desc.columns < 2) {
    return HeightfieldError{HeightfieldField::kColumns, desc.columns,
                            HeightfieldProblem::kTooFewSamples};
  }
  if (desc.rows > max_side) {
    return HeightfieldError{HeightfieldField::kRows, desc.rows,
                            HeightfieldProblem::kTooManySamplesOnASide};
  }
  if (desc.columns > max_side) {
    return HeightfieldError{HeightfieldField::kColumns, desc.columns,
                            HeightfieldProblem::kTooManySamplesOnASide};
  }
  // Both <= 2^15 here: the product cannot overflow.
  const uint64_t samples = desc.rows * desc.columns;
  if (samples > limits.max_samples) {
    return HeightfieldError{HeightfieldField::kRows, samples, HeightfieldProblem::kTooManySamples};
  }
  auto bad_spacing = [](float s, uint64_t count) {
    return !std::isfinite(s) || !(s > 0.0f) ||
           static_cast<double>(s) * static_cast<double>(count - 1) > kMaxMeshCoordinate;
  };
  if (bad_spacing(desc.spacing_x, desc.columns)) {
    return HeightfieldError{HeightfieldField::kSpacingX, 0, HeightfieldProblem::kBadSpacing};
  }
  if (bad_spacing(desc.spacing_z, desc.rows)) {
    return HeightfieldError{HeightfieldField::kSpacingZ, 0, HeightfieldProblem::kBadSpacing};
  }
  if (desc.heights.size() != samples) {
    return HeightfieldError{HeightfieldField::kHeights, desc.heights.size(),
                            HeightfieldProblem::kWrongCount};
  }
  for (uint64_t i = 0; i < samples; ++i) {
    const float h = desc.heights[i];
    if (!std::isfinite(h)) {
      return HeightfieldError{HeightfieldField::kHeights, i, HeightfieldProblem::kNotFinite};
    }
    if (std::fabs(h) > kMaxMeshCoordinate) {
      return HeightfieldError{HeightfieldField::kHeights, i, HeightfieldProblem::kTooLarge};
    }
  }
  const uint64_t cells = (desc.rows - 1) * (desc.columns - 1);
  if (!desc.holes.empty() && desc.holes.size() != cells) {
    return HeightfieldError{HeightfieldField::kHoles, desc.holes.size(),
                            HeightfieldProblem::kWrongCount};
  }
  return std::nullopt;
}

std::string_view HeightfieldFieldName(HeightfieldField field) {
  switch (field) {
    case HeightfieldField::kRows:
      return "rows";
    case HeightfieldField::kColumns:
      return "columns";
    case HeightfieldField::kSpacingX:
      return "spacing_x";
    case HeightfieldField::kSpacingZ:
      return "spacing_z";
    case HeightfieldField::kHeights:
      return "heights";
    case HeightfieldField::kHoles:
      return "holes";
  }
  return "heightfield";
}

std::string_view HeightfieldProblemReason(HeightfieldProblem problem) {
  switch (problem) {
    case HeightfieldProblem::kTooFewSamples:
      return "must be at least 2 (a heightfield needs a cell)";
    case HeightfieldProblem::kTooManySamplesOnASide:
      return "too many samples on a side";
    case HeightfieldProblem::kTooManySamples:
      return "too many samples";
    case HeightfieldProblem::kBadSpacing:
      return "must be finite and > 0, and the field within +-1e9";
    case HeightfieldProblem::kWrongCount:
      return "wrong count (heights: rows x columns; holes: none or (rows - 1) x (columns - 1))";
    case HeightfieldProblem::kNotFinite:
      return "must be finite";
    case HeightfieldProblem::kTooLarge:
      return "must be within +-1e9";
  }
  return "invalid";
}

void HeightfieldShape::CellRange(uint32_t i, uint32_t j, uint32_t* qmin, uint32_t* qmax) const {
  if (IsHole(i, j)) {
    *qmin = 0xFFFFu;
    *qmax = 0;
    return;
  }
  const uint16_t* row0 = &samples_[static_cast<size_t>(i) * columns_ + j];
  const uint16_t* row1 = row0 + columns_;
  *qmin = std::min(std::min(row0[0], row0[1]), std::min(row1[0], row1[1]));
  *qmax = std::max(std::max(row0[0], row0[1]), std::max(row1[0], row1[1]));
}

HeightfieldShape HeightfieldShape::Build(const HeightfieldDesc& desc) {
  assert(!ValidateHeightfield(desc).has_value() && "validate the heightfield first");
  HeightfieldShape hf;
  hf.rows_ = static_cast<uint32_t>(desc.rows);
  hf.columns_ = static_cast<uint32_t>(desc.columns);
  hf.spacing_x_ = desc.spacing_x;
  hf.spacing_z_ = desc.spacing_z;
  const size_t n = static_cast<size_t>(desc.rows * desc.columns);
  const auto [lo_it, hi_it] = std::minmax_element(desc.heights.begin(), desc.heights.end());
  const float lo = *lo_it, hi = *hi_it;
  hf.min_height_ = lo;
  // 65535 steps over [lo, hi] (computed in double: hi - lo may exceed float's range of exact
  // differences, never its range).
  hf.step_ = hi > lo ? static_cast<float>((static_cast<double>(hi) - lo) / 65535.0) : 0.0f;
  hf.samples_.resize(n);
  float max_error = 0.0f;
  for (size_t k = 0; k < n; ++k) {
    const float h = desc.heights[k];
    uint32_t q = 0;
    if (hf.step_ > 0.0f) {
      const double x = std::nearbyint((static_cast<double>(h) - lo) / hf.step_);
      q = static_cast<uint32_t>(std::clamp(x, 0.0, 65535.0));
      // Rounding of the step may leave a neighbour level nearer: take the nearest stored height.
      for (int dq : {-1, 1}) {
        const int64_t other = static_cast<int64_t>(q) + dq;
        if (other < 0 || other > 65535) continue;
        if (std::fabs(hf.Dequantize(static_cast<uint32_t>(other)) - h) <
            std::fabs(hf.Dequantize(q) - h)) {
          q = static_cast<uint32_t>(other);
        }
      }
    }
    hf.samples_[k] = static_cast<uint16_t>(q);
    max_error = std::max(max_error, std::fabs(hf.Dequantize(q) - h));
  }
  hf.max_error_ = max_error;
  // Holes.
  const uint32_t cr = hf.cell_rows(), cc = hf.cell_columns();
  bool any_hole = false;
  for (const uint8_t h : desc.holes) any_hole |= h != 0;
  if (any_hole) {
    hf.holes_.assign((static_cast<size_t>(cr) * cc + 63) / 64, 0);
    for (size_t c = 0; c < desc.holes.size(); ++c) {
      if (desc.holes[c] != 0) hf.holes_[c >> 6] |= uint64_t{1} << (c & 63);
    }
  }
  // The pyramid: level 1 over the cells, then each level over the last, until one node.
  uint32_t below_rows = cr, below_columns = cc;
  int level = 0;
  while (level == 0 || below_rows > 1 || below_columns > 1) {
    const uint32_t r = (below_rows + 1) / 2, c = (below_columns + 1) / 2;
    const uint32_t block_columns = (c + 1) / 2;
    hf.level_rows_.push_back(r);
    hf.level_columns_.push_back(c);
    hf.level_block_columns_.push_back(block_columns);
    // Whole 2 x 2 blocks; the padding nodes are empty (min 0xFFFF > max 0).
    std::vector<uint32_t> nodes(static_cast<size_t>((r + 1) / 2) * block_columns * 4, 0xFFFFu);
    for (uint32_t i = 0; i < r; ++i) {
      for (uint32_t j = 0; j < c; ++j) {
        uint32_t mn = 0xFFFFu, mx = 0;
        for (uint32_t di = 0; di < 2; ++di) {
          for (uint32_t dj = 0; dj < 2; ++dj) {
            const uint32_t bi = 2 * i + di, bj = 2 * j + dj;
            if (bi >= below_rows || bj >= below_columns) continue;
            uint32_t a, b;
            if (level == 0) {
              hf.CellRange(bi, bj, &a, &b);
            } else {
              hf.NodeRange(level, bi, bj, &a, &b);
            }
            if (a > b) continue;  // all holes
            mn = std::min(mn, a);
            mx = std::max(mx, b);
          }
        }
        nodes[(static_cast<size_t>(i >> 1) * block_columns + (j >> 1)) * 4 + (i & 1) * 2 +
              (j & 1)] = mn | (mx << 16);
      }
    }
    hf.pyramid_.push_back(std::move(nodes));
    below_rows = r;
    below_columns = c;
    ++level;
  }
  // The bounds of the stored surface (holes included: a box need only contain it).
  const uint16_t* q = hf.samples_.data();
  const auto [qlo, qhi] = std::minmax_element(q, q + n);
  hf.bounds_ = Aabb{{0.0f, hf.Dequantize(*qlo), 0.0f},
                    {static_cast<float>(hf.columns_ - 1) * hf.spacing_x_, hf.Dequantize(*qhi),
                     static_cast<float>(hf.rows_ - 1) * hf.spacing_z_}};
  return hf;
}

size_t HeightfieldShape::MemoryBytes() const {
  size_t bytes =
      sizeof(HeightfieldShape) + samples_.capacity() * sizeof(uint16_t) +
      holes_.capacity() * sizeof(uint64_t) +
      (level_rows_.capacity() + level_columns_.capacity() + level_block_columns_.capacity()) *
          sizeof(uint32_t);
  for (const auto& l : pyramid_) bytes += sizeof(l) + l.capacity() * sizeof(uint32_t);
  return bytes;
}

}  // namespace collide
