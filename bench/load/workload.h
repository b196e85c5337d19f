#pragma once

// collide-load's workload: the query kinds and the messages it sends (the reference scene's
// geometry as messages: bench/reference_messages.h).

#include <cstdint>
#include <string>
#include <vector>

#include "collide/v1/collide.pb.h"
#include "geom/cast.h"

namespace collide::load {

/// The kinds of query a workload mixes.
enum class Kind { kRay, kSphere, kOverlap };

/// The messages of one run: the scene's name, the query batches (stream workloads), one query
/// per reference ray (unary calls) and the update batches (ingest).
struct Workload {
  std::string scene;
  std::vector<v1::QueryBatch> query_batches;
  std::vector<v1::Query> queries;  // one per ray, for unary calls
  std::vector<v1::UpdateBatch> update_batches;
};

/// The query kinds in proportion to `mix` (--query_mix: `kind:weight,...`, kinds ray, sphere and
/// overlap), 64 entries to cycle through, shuffled with a fixed seed.
std::vector<Kind> ParseMix(const std::string& mix);

/// The query `id` of `kind` along `r`: a raycast, a sphere cast of radius 0.5 or an overlap of a
/// sphere of radius 2 at the ray's origin.
v1::Query MakeQuery(uint64_t id, Kind kind, const Ray& r);

}  // namespace collide::load
