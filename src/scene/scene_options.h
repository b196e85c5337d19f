#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace collide {

/// When an applied update batch is acknowledged, relative to the durable log (src/store/).
enum class DurabilityPolicy : uint8_t {
  /// The policy of the database the scene lives in (DatabaseOptions::durability).
  kDefault = 0,
  /// Acknowledged once applied in memory; the log is written behind and never fsynced for it. A
  /// crash of the process may lose the last batches; a crash of the machine may lose more.
  kNone = 1,
  /// Acknowledged once written to the operating system; fsynced at least every sync interval
  /// (100 ms by default). A crash of the process loses nothing acknowledged; a crash of the
  /// machine loses at most the batches acknowledged in the last interval.
  kPeriodic = 2,
  /// Acknowledged only after the fsync that covers the batch (one fsync covers every batch that
  /// arrived meanwhile). Nothing acknowledged is ever lost.
  kAlways = 3,
  /// Acknowledged only after the replicated log (NATS JetStream, on a quorum of its nodes)
  /// stored the batch, and the local log wrote it to the operating system; other servers follow
  /// the scene and one of them takes it over when its owner stops (server/replication/).
  kReplicated = 4,
};

/// "default", "none", "periodic", "always" or "replicated".
absl::string_view DurabilityPolicyName(DurabilityPolicy policy);
/// The policy named by DurabilityPolicyName(); INVALID_ARGUMENT for anything else.
absl::StatusOr<DurabilityPolicy> ParseDurabilityPolicy(absl::string_view name);

/// The most bodies any scene may be configured to hold (body handles are int32 slots).
inline constexpr uint32_t kMaxBodiesLimit = 1u << 30;

/// A scene's settings, fixed at creation.
struct SceneOptions {
  /// Kept, stored and reported for compatibility (length units, >= 0): the scene's trees hold
  /// every body's exact box and refit once per batch, so no margin is used.
  float fat_margin = 0.1f;
  /// The most bodies the scene may hold, in [1, kMaxBodiesLimit]; a batch that would exceed it is
  /// RESOURCE_EXHAUSTED.
  uint32_t max_bodies = 1'000'000;
  /// When batches of this scene are acknowledged.
  DurabilityPolicy durability = DurabilityPolicy::kDefault;
  /// How many ticks (the current one included) queries may name with `at_tick`, in
  /// [0, kMaxHistoryTicks]; 0 and 1 keep no history (only the current tick is answered).
  uint32_t history_ticks = 64;
};

/// The most ticks a scene may retain (SceneOptions::history_ticks).
inline constexpr uint32_t kMaxHistoryTicks = 4096;

/// The largest fat margin a scene may have (length units).
inline constexpr float kMaxFatMargin = 1e6f;

/// OK when every option is in range, max_bodies at most `max_bodies_cap` (a server's limit, at
/// most kMaxBodiesLimit); INVALID_ARGUMENT with a FieldError naming `options.<field>` otherwise.
absl::Status ValidateSceneOptions(const SceneOptions& options,
                                  uint32_t max_bodies_cap = kMaxBodiesLimit);

}  // namespace collide
