#pragma once

#include <algorithm>
#include <cstdint>
#include <span>

namespace collide {

/// Which bodies a query may hit. A body is hit when
/// `(query.mask & body.category) != 0 && (body.mask & query.category) != 0`
/// and its id is not in `excluded_ids`.
struct QueryFilter {
  /// The query's own category bits, tested against each body's mask.
  uint32_t category = ~0u;
  /// The body categories the query hits.
  uint32_t mask = ~0u;
  /// Bodies never hit; a short list, scanned linearly (the service bounds its length).
  std::span<const uint64_t> excluded_ids{};
};

/// True when the filter lets a query hit a body with these bits and id.
inline bool Accepts(const QueryFilter& filter, uint64_t body_id, uint32_t body_category,
                    uint32_t body_mask) {
  if ((filter.mask & body_category) == 0 || (body_mask & filter.category) == 0) return false;
  if (filter.excluded_ids.empty()) return true;
  return std::find(filter.excluded_ids.begin(), filter.excluded_ids.end(), body_id) ==
         filter.excluded_ids.end();
}

}  // namespace collide
