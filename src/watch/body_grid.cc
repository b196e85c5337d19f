#include "watch/body_grid.h"

#include <cassert>
#include <limits>

namespace collide {

void BodyGrid::Build(std::span<const Body* const> bodies) {
  double lo[3] = {std::numeric_limits<double>::max(), std::numeric_limits<double>::max(),
                  std::numeric_limits<double>::max()};
  double hi[3] = {std::numeric_limits<double>::lowest(), std::numeric_limits<double>::lowest(),
                  std::numeric_limits<double>::lowest()};
  size_t n = 0;
  for (const Body* body : bodies) {
    if (body == nullptr) continue;
    const double v[3] = {body->pose.position.x, body->pose.position.y, body->pose.position.z};
    for (int a = 0; a < 3; ++a) {
      lo[a] = std::min(lo[a], v[a]);
      hi[a] = std::max(hi[a], v[a]);
    }
    ++n;
  }
  if (n == 0) {
    for (int a = 0; a < 3; ++a) lo[a] = hi[a] = 0.0;
  }
  // The box, padded by a tenth of its extent (bodies wander out of it slowly), and the cell
  // size that puts about kBodiesPerCell bodies in a cell of it.
  double extent[3];
  for (int a = 0; a < 3; ++a) {
    const double pad = 0.05 * (hi[a] - lo[a]);
    lo[a] -= pad;
    hi[a] += pad;
    extent[a] = hi[a] - lo[a];
  }
  const double cells_wanted = std::max(1.0, static_cast<double>(n) / kBodiesPerCell);
  // The `used` largest extents share the cells, each at least one cell long; the others are
  // then shorter than a cell (one layer: a flat world). Rounding up on each used axis gives at
  // most 2^used times the cells wanted: at most one per body.
  double sorted[3] = {extent[0], extent[1], extent[2]};
  std::sort(sorted, sorted + 3, [](double a, double b) { return a > b; });
  double cell = 0.0;
  for (int used = 3; used >= 1 && cell == 0.0; --used) {
    double volume = 1.0;
    for (int a = 0; a < used; ++a) volume *= sorted[a];
    if (!(volume > 0.0)) continue;
    const double candidate = std::pow(volume / cells_wanted, 1.0 / used);
    if (sorted[used - 1] >= candidate) cell = candidate;
  }
  if (!(cell > 0.0) || !std::isfinite(cell)) cell = 1.0;
  cell_ = cell;
  inverse_cell_ = 1.0 / cell;
  size_t total = 1;
  for (int a = 0; a < 3; ++a) {
    const double d = std::ceil(extent[a] * inverse_cell_);
    dims_[a] = static_cast<int32_t>(std::clamp(d, 1.0, 1.0 * (1 << 20)));
    origin_[a] = lo[a];
    total *= static_cast<size_t>(dims_[a]);
  }
  // Count, lay out the runs, then fill them.
  count_.assign(total, 0);
  where_.assign(bodies.size(), Location{});
  outside_slot_.assign(bodies.size(), false);
  for (const Body* body : bodies) {
    if (body != nullptr) ++count_[CellOf(body->pose.position)];
  }
  start_.assign(total + 1, 0);
  uint32_t at = 0;
  for (size_t c = 0; c < total; ++c) {
    start_[c] = at;
    at += count_[c] + count_[c] / 4 + 2;
  }
  start_[total] = at;
  Resize(at);
  std::fill(count_.begin(), count_.end(), 0);
  size_ = 0;
  outside_ = 0;
  for (uint32_t slot = 0; slot < bodies.size(); ++slot) {
    if (bodies[slot] != nullptr) Insert(slot, *bodies[slot]);
  }
  built_size_ = size_;
}

void BodyGrid::Resize(size_t entries) {
  x_.resize(entries);
  y_.resize(entries);
  z_.resize(entries);
  category_.resize(entries);
  mask_.resize(entries);
  slot_.resize(entries);
  id_.resize(entries);
}

bool BodyGrid::Outside(const Vec3& p) const {
  const double v[3] = {p.x, p.y, p.z};
  for (int a = 0; a < 3; ++a) {
    if (v[a] < origin_[a] || v[a] > origin_[a] + dims_[a] * cell_) return true;
  }
  return false;
}

void BodyGrid::Write(uint32_t index, uint32_t slot, const Body& body) {
  x_[index] = body.pose.position.x;
  y_[index] = body.pose.position.y;
  z_[index] = body.pose.position.z;
  category_[index] = body.category;
  mask_[index] = body.mask;
  slot_[index] = slot;
  id_[index] = body.id;
}

bool BodyGrid::Append(uint32_t cell, uint32_t slot, const Body& body) {
  const uint32_t index = start_[cell] + count_[cell];
  if (index >= start_[cell + 1]) return false;
  Write(index, slot, body);
  ++count_[cell];
  where_[slot] = Location{.cell = cell, .index = index};
  return true;
}

void BodyGrid::Unplace(uint32_t slot) {
  const Location at = where_[slot];
  const uint32_t last = start_[at.cell] + count_[at.cell] - 1;
  if (at.index != last) {
    x_[at.index] = x_[last];
    y_[at.index] = y_[last];
    z_[at.index] = z_[last];
    category_[at.index] = category_[last];
    mask_[at.index] = mask_[last];
    slot_[at.index] = slot_[last];
    id_[at.index] = id_[last];
    where_[slot_[at.index]].index = at.index;
  }
  --count_[at.cell];
  where_[slot] = Location{};
}

void BodyGrid::Pack(uint32_t extra_cell) {
  const size_t cells = count_.size();
  std::vector<uint32_t> start(cells + 1);
  uint32_t at = 0;
  for (size_t c = 0; c < cells; ++c) {
    start[c] = at;
    at += count_[c] + count_[c] / 4 + 2 + (c == extra_cell ? 1 : 0);
  }
  start[cells] = at;
  auto move = [&](auto& array) {
    std::remove_reference_t<decltype(array)> packed(at);
    for (size_t c = 0; c < cells; ++c) {
      std::copy_n(array.begin() + start_[c], count_[c], packed.begin() + start[c]);
    }
    array.swap(packed);
  };
  move(x_);
  move(y_);
  move(z_);
  move(category_);
  move(mask_);
  move(slot_);
  move(id_);
  start_.swap(start);
  for (size_t c = 0; c < cells; ++c) {
    for (uint32_t k = 0; k < count_[c]; ++k) where_[slot_[start_[c] + k]].index = start_[c] + k;
  }
}

void BodyGrid::Insert(uint32_t slot, const Body& body) {
  if (slot >= where_.size()) {
    where_.resize(slot + 1, Location{});
    outside_slot_.resize(slot + 1, false);
  }
  assert(where_[slot].cell == kNoCell);
  const uint32_t cell = CellOf(body.pose.position);
  if (!Append(cell, slot, body)) {
    Pack(cell);
    Append(cell, slot, body);
  }
  ++size_;
  if (Outside(body.pose.position)) {
    outside_slot_[slot] = true;
    ++outside_;
  }
}

void BodyGrid::Update(uint32_t slot, const Body& body, bool refiltered) {
  assert(slot < where_.size() && where_[slot].cell != kNoCell);
  const uint32_t cell = CellOf(body.pose.position);
  const Location at = where_[slot];
  if (cell == at.cell && !refiltered) {
    x_[at.index] = body.pose.position.x;
    y_[at.index] = body.pose.position.y;
    z_[at.index] = body.pose.position.z;
  } else if (cell == at.cell) {
    Write(at.index, slot, body);
  } else {
    Unplace(slot);
    if (!Append(cell, slot, body)) {
      Pack(cell);
      Append(cell, slot, body);
    }
  }
  const bool outside = Outside(body.pose.position);
  if (outside != outside_slot_[slot]) {
    outside_slot_[slot] = outside;
    if (outside) {
      ++outside_;
    } else {
      --outside_;
    }
  }
}

void BodyGrid::Erase(uint32_t slot) {
  assert(slot < where_.size() && where_[slot].cell != kNoCell);
  Unplace(slot);
  --size_;
  if (outside_slot_[slot]) {
    outside_slot_[slot] = false;
    --outside_;
  }
}

double BodyGrid::RadiusHolding(double count) const {
  double volume = 1.0;
  for (int a = 0; a < 3; ++a) volume *= dims_[a] * cell_;
  if (size_ == 0 || !(volume > 0.0)) return cell_;
  // (4/3) pi r^3 * (size / volume) = count
  const double r = std::cbrt(count * volume / (static_cast<double>(size_) * 4.18879020478639));
  return std::max(r, cell_);
}

bool BodyGrid::NeedsRebuild() const {
  return outside_ > size_ / 8 + 16 || size_ > 2 * built_size_ + 64 || 4 * size_ + 64 < built_size_;
}

size_t BodyGrid::MemoryBytes() const {
  return (start_.capacity() + count_.capacity()) * sizeof(uint32_t) +
         (x_.capacity() + y_.capacity() + z_.capacity()) * sizeof(float) +
         (category_.capacity() + mask_.capacity() + slot_.capacity()) * sizeof(uint32_t) +
         id_.capacity() * sizeof(uint64_t) + where_.capacity() * sizeof(Location) +
         outside_slot_.capacity() / 8;
}

}  // namespace collide
