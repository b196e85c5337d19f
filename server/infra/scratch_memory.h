#pragma once

#include <cstddef>
#include <vector>

namespace collide {

// Scratch reused from request to request (hit vectors, query vectors) keeps what it grew to: a
// single large request would otherwise pin its peak for the life of a stream or a thread. Each
// holder keeps at most kKeptScratchBytes per vector between requests and frees the rest.

/// The most bytes one scratch vector keeps between two requests.
inline constexpr size_t kKeptScratchBytes = 64 << 10;

/// The most bytes an UpdateStream keeps of its last batch as parsed (the message and its core
/// ops) for the next one: a game server's whole-world batch of 10,000 moves takes about 1.2 MB
/// and reusing it spares every tick the page faults of allocating it afresh.
inline constexpr size_t kKeptUpdateBytes = 2 << 20;

/// Frees `v`'s storage (leaving it empty) when its capacity exceeds `max_bytes`; keeps it
/// otherwise (its elements are left as they are).
template <typename T>
void ReleaseIfLarger(std::vector<T>& v, size_t max_bytes = kKeptScratchBytes) {
  if (v.capacity() * sizeof(T) > max_bytes) std::vector<T>().swap(v);
}

}  // namespace collide
