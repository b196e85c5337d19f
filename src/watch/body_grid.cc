#include "watch/body_grid.h"

#include <cassert>
#include <limits>

namespace collide {
namespace {

BodyGrid::Entry EntryOf(uint32_t slot, const Body& body) {
  return BodyGrid::Entry{.x = body.pose.position.x,
                         .y = body.pose.position.y,
                         .z = body.pose.position.z,
                         .category = body.category,
                         .mask = body.mask,
                         .slot = slot,
                         .id = body.id};
}

}  // namespace

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
  // size that puts about kBodiesPerCell bodies in a cell of it: over the axes the box really
  // extends along (a flat world has one layer of cells).
  double extent[3];
  for (int a = 0; a < 3; ++a) {
    const double pad = 0.05 * (hi[a] - lo[a]);
    lo[a] -= pad;
    hi[a] += pad;
    extent[a] = hi[a] - lo[a];
  }
  const double cells_wanted = std::max(1.0, static_cast<double>(n) / kBodiesPerCell);
  // The `used` largest extents share the cells, each at least one cell long; the others are
  // then shorter than a cell (one layer). Rounding up on each used axis gives at most 2^used
  // times the cells wanted: at most 2 per body.
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
  cells_.assign(total, {});
  where_.assign(bodies.size(), Location{});
  outside_slot_.assign(bodies.size(), false);
  size_ = 0;
  outside_ = 0;
  for (uint32_t slot = 0; slot < bodies.size(); ++slot) {
    if (bodies[slot] != nullptr) Insert(slot, *bodies[slot]);
  }
  built_size_ = size_;
}

bool BodyGrid::Outside(const Vec3& p) const {
  const double v[3] = {p.x, p.y, p.z};
  for (int a = 0; a < 3; ++a) {
    if (v[a] < origin_[a] || v[a] > origin_[a] + dims_[a] * cell_) return true;
  }
  return false;
}

void BodyGrid::Place(uint32_t slot, uint32_t cell, const Entry& entry) {
  std::vector<Entry>& entries = cells_[cell];
  where_[slot] = Location{.cell = cell, .index = static_cast<uint32_t>(entries.size())};
  entries.push_back(entry);
}

void BodyGrid::Unplace(uint32_t slot) {
  const Location at = where_[slot];
  std::vector<Entry>& entries = cells_[at.cell];
  if (at.index + 1 != entries.size()) {
    entries[at.index] = entries.back();
    where_[entries[at.index].slot].index = at.index;
  }
  entries.pop_back();
  where_[slot] = Location{};
}

void BodyGrid::Insert(uint32_t slot, const Body& body) {
  if (slot >= where_.size()) {
    where_.resize(slot + 1, Location{});
    outside_slot_.resize(slot + 1, false);
  }
  assert(where_[slot].cell == kNoCell);
  Place(slot, CellOf(body.pose.position), EntryOf(slot, body));
  ++size_;
  if (Outside(body.pose.position)) {
    outside_slot_[slot] = true;
    ++outside_;
  }
}

void BodyGrid::Update(uint32_t slot, const Body& body) {
  assert(slot < where_.size() && where_[slot].cell != kNoCell);
  const uint32_t cell = CellOf(body.pose.position);
  const Location at = where_[slot];
  if (cell == at.cell) {
    cells_[cell][at.index] = EntryOf(slot, body);
  } else {
    Unplace(slot);
    Place(slot, cell, EntryOf(slot, body));
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

bool BodyGrid::NeedsRebuild() const {
  return outside_ > size_ / 8 + 16 || size_ > 2 * built_size_ + 64 || 4 * size_ + 64 < built_size_;
}

size_t BodyGrid::MemoryBytes() const {
  size_t bytes = cells_.capacity() * sizeof(std::vector<Entry>) +
                 where_.capacity() * sizeof(Location) + outside_slot_.capacity() / 8;
  for (const std::vector<Entry>& cell : cells_) bytes += cell.capacity() * sizeof(Entry);
  return bytes;
}

}  // namespace collide
