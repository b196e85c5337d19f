#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "geom/pose.h"
#include "geom/shapes.h"
#include "geom/vec3.h"

namespace collide {

/// A trigger volume a watcher registers: a posed shape, fixed in the world or attached to a body
/// (then `pose` is relative to the body's frame and the fence moves with it), and filter bits.
struct FenceSpec {
  /// The watcher's id for the fence (unique among its fences).
  uint64_t id = 0;
  /// The fence's shape (dimensions >= 0).
  Shape shape{};
  /// World pose, or the pose in the host body's frame when `attached_to` is set.
  Pose pose{};
  /// The body the fence rides on. While no body with that id exists the fence holds nothing.
  /// The host itself is never reported by its own fences.
  std::optional<uint64_t> attached_to = std::nullopt;
  /// The fence's category bits, tested against each body's mask.
  uint32_t category = ~0u;
  /// The body categories the fence reports: a body is tracked when
  /// `(mask & body.category) != 0 && (body.mask & category) != 0` (as queries filter).
  uint32_t mask = ~0u;
};

/// A contact watch: pairs of bodies, one of categories `category_a` and the other of
/// `category_b`, that begin or stop overlapping (a pair (x, y) qualifies when
/// `(x.category & category_a) && (y.category & category_b)` or the other way round).
struct ContactWatchSpec {
  /// The watcher's id for the contact watch (unique among its contact watches).
  uint64_t id = 0;
  uint32_t category_a = ~0u;
  uint32_t category_b = ~0u;
};

/// What a watch event reports.
enum class WatchEventKind : uint8_t {
  /// A body came into a fence.
  kEnter = 0,
  /// A body left a fence.
  kExit = 1,
  /// Two bodies began to overlap.
  kContactBegin = 2,
  /// Two bodies stopped overlapping.
  kContactEnd = 3,
};

/// One event of an applied batch.
struct WatchEvent {
  WatchEventKind kind = WatchEventKind::kEnter;
  /// The fence (kEnter, kExit) or contact watch (kContactBegin, kContactEnd) id.
  uint64_t watch_id = 0;
  /// The body (kEnter, kExit), or the smaller id of the pair (contacts).
  uint64_t body_id = 0;
  /// The larger id of the pair (contacts); 0 for fence events.
  uint64_t other_body_id = 0;
  /// kEnter: where the body first touched the fence (on the fence's surface, world frame) and
  /// the fence's outward normal there; zero for the other kinds.
  Vec3 point{};
  Vec3 normal{};
  friend bool operator==(const WatchEvent&, const WatchEvent&) = default;
};

/// The events one applied batch produced, in order: fence events by (fence id, body id), an
/// enter before the exit of the same pair; then contact events by (contact watch id, body id,
/// other body id).
struct WatchUpdate {
  /// The version the batch produced, and the scene's tick after it.
  uint64_t version = 0;
  uint64_t tick = 0;
  std::vector<WatchEvent> events{};
};

/// The bodies inside one fence.
struct FenceContents {
  uint64_t fence_id = 0;
  /// Sorted ascending.
  std::vector<uint64_t> body_ids{};
  friend bool operator==(const FenceContents&, const FenceContents&) = default;
};

/// One overlapping pair of a contact watch.
struct ContactPair {
  uint64_t watch_id = 0;
  /// body_id < other_body_id.
  uint64_t body_id = 0;
  uint64_t other_body_id = 0;
  friend bool operator==(const ContactPair&, const ContactPair&) = default;
};

/// A watcher's whole state at one version: what every fence holds and every overlapping pair,
/// from which later updates continue (sent when a watch starts and after a queue overflow).
struct WatchSnapshot {
  uint64_t version = 0;
  uint64_t tick = 0;
  /// False for the snapshot a watch starts with; true when it replaces updates a slow watcher
  /// did not take in time (the queue overflowed): the watcher resumes from this state.
  bool resync = false;
  /// One entry per fence, sorted by fence id (empty fences included).
  std::vector<FenceContents> fences{};
  /// Sorted by (watch id, body id, other body id).
  std::vector<ContactPair> contacts{};
};

}  // namespace collide
