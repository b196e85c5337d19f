#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "geom/pose.h"
#include "geom/vec3.h"

namespace collide {

// Interest management: observers (a player's point of view) and, per observer, the set of
// bodies relevant to it, kept after every applied batch and sent as deltas (interest_set.h says
// exactly which bodies are relevant).

/// An optional view cone of an observer: the bodies whose direction from the observer lies
/// within `half_angle` of `direction`.
struct ViewCone {
  /// The cone's axis in the observer's frame (unit length once validated).
  Vec3 direction{1.0f, 0.0f, 0.0f};
  /// The half-angle a body must be within to enter, in radians (0, pi].
  float half_angle = 0.0f;
  /// The half-angle a relevant body stays relevant within, in radians [half_angle, pi]
  /// (hysteresis, like leave_radius).
  float leave_half_angle = 0.0f;
};

/// One observer a client declares: a point of view fixed in the world or attached to a body,
/// with the rules that decide which bodies are relevant to it.
struct ObserverSpec {
  /// The client's id for the observer (unique among its stream's observers).
  uint64_t id = 0;
  /// The body the observer rides on (`pose` is then in the body's frame). While no body with
  /// that id exists the observer's set is empty; the host is never in its own set.
  std::optional<uint64_t> attached_to = std::nullopt;
  /// World pose, or the pose in the host's frame.
  Pose pose{};
  /// A body comes in within this distance (length units, [0, kMaxCoordinate]).
  float enter_radius = 0.0f;
  /// A relevant body stays relevant within this distance ([enter_radius, kMaxCoordinate]).
  float leave_radius = 0.0f;
  /// The view cone, if any.
  std::optional<ViewCone> cone = std::nullopt;
  /// The observer's category bits and the body categories it sees: a body can be relevant when
  /// `(mask & body.category) != 0 && (body.mask & category) != 0` (as queries filter).
  uint32_t category = ~0u;
  uint32_t mask = ~0u;
  /// At most this many bodies, the nearest (ties by body id); 0 until validated, which puts the
  /// server's limit (InterestLimits::max_relevant) in its place.
  uint32_t max_relevant = 0;
};

/// What one message of a client changes: observers created or replaced, observers removed.
struct ObserverChanges {
  std::vector<ObserverSpec> upserts{};
  /// Ids of observers to remove (an id the stream does not hold is ignored).
  std::vector<uint64_t> removes{};
};

/// The change of one observer's set in an update: its `entered` ids, then its `left` ids, in
/// the update's `ids`.
struct ObserverDelta {
  uint64_t observer_id = 0;
  /// True when `entered` is the observer's whole set (it was just added, or added again after a
  /// removal): the client replaces what it held rather than applying a change. `left` is empty.
  bool full = false;
  uint32_t entered = 0;
  uint32_t left = 0;
  friend bool operator==(const ObserverDelta&, const ObserverDelta&) = default;
};

/// The changes of an interest stream's sets at one version: one applied batch, or the client's
/// own observer changes taking effect (or both), in observer id order; never empty unless it
/// only reports client messages taking effect (`requests_applied` grew).
struct InterestUpdate {
  /// The scene version and tick the sets are at.
  uint64_t version = 0;
  uint64_t tick = 0;
  /// How many of the stream's client messages are in effect (their observer changes applied).
  uint64_t requests_applied = 0;
  std::vector<ObserverDelta> deltas{};
  /// Per delta in order: its entered ids (ascending), then its left ids (ascending).
  std::vector<uint64_t> ids{};
};

/// One observer's whole set in a snapshot: `count` ids of the snapshot's `ids`.
struct RelevantSet {
  uint64_t observer_id = 0;
  uint32_t count = 0;
  friend bool operator==(const RelevantSet&, const RelevantSet&) = default;
};

/// Every observer's set at one version, from which later updates continue (sent when a stream
/// starts and after its queue overflowed).
struct InterestSnapshot {
  uint64_t version = 0;
  uint64_t tick = 0;
  /// False for the snapshot a stream starts with; true when it replaces updates a slow client
  /// did not take in time.
  bool resync = false;
  /// How many of the stream's client messages are in effect.
  uint64_t requests_applied = 0;
  /// One entry per observer, by observer id (empty sets included).
  std::vector<RelevantSet> sets{};
  /// Per set in order: its body ids, ascending.
  std::vector<uint64_t> ids{};
};

/// An update's weight in its queue's event bound: a delta plus each id.
inline size_t QueuedEvents(const InterestUpdate& update) {
  return update.deltas.size() + update.ids.size();
}
/// The bytes an update holds: the message, its two arrays and a malloc header for each.
size_t QueuedBytes(const InterestUpdate& update);

}  // namespace collide
