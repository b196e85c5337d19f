#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <span>
#include <variant>

#include "absl/status/status.h"
#include "query/batch.h"
#include "scene/update_batch.h"

namespace collide {

/// The rpcs that answer queries, as collide_query_batches_total labels them.
enum class QueryRpc : uint8_t { kQueryStream = 0, kRaycast = 1, kSphereCast = 2, kOverlap = 3 };
/// How many QueryRpcs there are.
inline constexpr int kQueryRpcCount = 4;
/// How many query kinds (the alternatives of ShapeQuery, query/batch.h) and modes there are.
inline constexpr int kQueryKindCount = static_cast<int>(std::variant_size_v<ShapeQuery>);
inline constexpr int kCollectModeCount = 3;
/// How many status codes there are (absl::StatusCode, the same numbers as gRPC's codes).
inline constexpr int kStatusCodeCount = 17;

/// What the service counts as it answers queries and applies updates, for the server's
/// /metrics (server/infra/metrics_service.h reads them at scrape time). Plain relaxed atomics,
/// added once per batch (never per hit). The service counts only when the server has metrics on
/// (ServiceContext::counters is null otherwise).
struct ServiceCounters {
  /// Queries run, by kind (the index of ShapeQuery's alternative) and CollectMode.
  alignas(64)
      std::array<std::array<std::atomic<uint64_t>, kCollectModeCount>, kQueryKindCount> queries{};
  /// Hits those queries returned.
  std::atomic<uint64_t> query_hits{0};
  /// Batches answered, by QueryRpc (a unary query is a batch of one).
  std::array<std::atomic<uint64_t>, kQueryRpcCount> query_batches{};

  /// Update batches applied (UpdateStream messages, UpsertBodies and RemoveBodies calls).
  alignas(64) std::atomic<uint64_t> update_batches{0};
  /// Operations of those batches, by UpdateOpType (kSetPose: the moves).
  std::array<std::atomic<uint64_t>, kUpdateOpTypeCount> update_ops{};
  /// Update batches refused, by status code.
  std::array<std::atomic<uint64_t>, kStatusCodeCount> update_batches_rejected{};

  /// Counts one answered batch of `rpc` whose queries that ran are `queries` and returned `hits`
  /// hits together; with `errors` (one per query), a query whose entry is not OK (its tick was
  /// not retained) is not counted. `new_batch` false: a later segment of a batch already counted
  /// (its queries and hits are counted, not another batch).
  void CountQueryBatch(QueryRpc rpc, std::span<const Query> queries, uint64_t hits,
                       std::span<const absl::Status> errors = {}, bool new_batch = true) {
    uint32_t counts[kQueryKindCount][kCollectModeCount] = {};
    for (size_t i = 0; i < queries.size(); ++i) {
      if (!errors.empty() && !errors[i].ok()) continue;
      ++counts[queries[i].shape_query.index()][static_cast<int>(queries[i].mode)];
    }
    for (int kind = 0; kind < kQueryKindCount; ++kind) {
      for (int mode = 0; mode < kCollectModeCount; ++mode) {
        if (counts[kind][mode] != 0) {
          this->queries[kind][mode].fetch_add(counts[kind][mode], std::memory_order_relaxed);
        }
      }
    }
    if (hits != 0) query_hits.fetch_add(hits, std::memory_order_relaxed);
    if (new_batch) query_batches[static_cast<int>(rpc)].fetch_add(1, std::memory_order_relaxed);
  }

  /// Counts a batch of `rpc` of one query of `kind` (the index of its ShapeQuery's alternative)
  /// and `mode` that returned `hits` hits.
  void CountQuery(QueryRpc rpc, size_t kind, CollectMode mode, uint64_t hits) {
    queries[kind][static_cast<int>(mode)].fetch_add(1, std::memory_order_relaxed);
    if (hits != 0) query_hits.fetch_add(hits, std::memory_order_relaxed);
    query_batches[static_cast<int>(rpc)].fetch_add(1, std::memory_order_relaxed);
  }

  /// Operations of a batch per UpdateOpType (computed before the batch goes to the store).
  using OpCounts = std::array<uint32_t, kUpdateOpTypeCount>;
  static OpCounts CountOps(const UpdateBatch& batch) {
    OpCounts counts{};
    for (const UpdateOp& op : batch.ops) ++counts[static_cast<int>(op.type)];
    return counts;
  }

  /// Counts the outcome of an update batch of `ops`: applied, a duplicate (not counted), or
  /// refused with `status`.
  void CountUpdate(const absl::Status& status, bool duplicate, const OpCounts& ops) {
    if (!status.ok()) {
      CountRejectedUpdate(status);
      return;
    }
    if (duplicate) return;
    update_batches.fetch_add(1, std::memory_order_relaxed);
    for (int op = 0; op < kUpdateOpTypeCount; ++op) {
      if (ops[op] != 0) update_ops[op].fetch_add(ops[op], std::memory_order_relaxed);
    }
  }

  /// Counts an update batch refused with `status` (not OK).
  void CountRejectedUpdate(const absl::Status& status) {
    const int code = static_cast<int>(status.code());
    update_batches_rejected[code >= 0 && code < kStatusCodeCount ? code : 2].fetch_add(
        1, std::memory_order_relaxed);
  }
};

}  // namespace collide
