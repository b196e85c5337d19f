#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "base/mutex.h"
#include "watch/watch_types.h"

namespace collide {

class Scene;

/// One open watch of a scene as a reader sees it: an id the directory gave it and its fences.
struct ListedWatch {
  uint64_t watch = 0;
  std::vector<FenceSpec> fences;
};

/// One fence event (enter or exit) of a listed watch.
struct ListedEvent {
  /// Position in the scene's event sequence (from 1, no gaps).
  uint64_t sequence = 0;
  uint64_t watch = 0;
  /// The scene version of the batch that produced it.
  uint64_t version = 0;
  WatchEvent event{};
};

/// The fence events a reader took: those after its cursor still held, and how many it missed.
struct ListedEvents {
  std::vector<ListedEvent> events;
  /// Events after the cursor that the ring no longer held (or that passed `max`: those stay).
  uint64_t dropped = 0;
  /// The cursor for the next call (the last sequence taken or dropped).
  uint64_t next = 0;
};

class WatchDirectory;

/// A watcher's entry in a WatchDirectory: posts its fence events while someone reads the scene's,
/// and removes the watch from the listing when destroyed. Thread-safe.
class WatchTap {
 public:
  ~WatchTap();
  WatchTap(const WatchTap&) = delete;
  WatchTap& operator=(const WatchTap&) = delete;

  /// The fence events of one update (contact events are left out). Copies nothing when no
  /// reader follows the scene's events.
  void Post(const WatchUpdate& update);

 private:
  friend class WatchDirectory;
  struct State;
  WatchTap(std::shared_ptr<State> state, const Scene* scene, uint64_t watch)
      : state_(std::move(state)), scene_(scene), watch_(watch) {}
  std::shared_ptr<State> state_;
  const Scene* scene_;
  uint64_t watch_;
};

/// Which watches are open on each scene, with their fences, and, for scenes some reader follows,
/// a ring of their latest fence events (the browser viewer's fences and flashes). Read-only for
/// its readers: nothing here changes a watch. Thread-safe; its state lives as long as the last
/// tap or the directory.
class WatchDirectory {
 public:
  /// The fence events kept per followed scene; older ones are dropped (readers count them).
  static constexpr size_t kMaxEventsPerScene = 1024;

  WatchDirectory();

  /// Lists a watch of `scene` with `fences`; it is listed while the returned tap lives.
  std::unique_ptr<WatchTap> Register(const Scene* scene, std::vector<FenceSpec> fences);

  /// The watches open on `scene`, by id.
  std::vector<ListedWatch> Watches(const Scene* scene) const;
  /// Grows each time a watch of `scene` opens or closes (a reader redraws when it changed).
  uint64_t WatchesGeneration(const Scene* scene) const;

  /// A reader follows (Follow) or stops following (Unfollow) the fence events of `scene`; events
  /// are kept only while at least one reader follows. Follow returns the cursor of "now".
  uint64_t Follow(const Scene* scene);
  void Unfollow(const Scene* scene);
  /// The events of `scene` after `cursor`, at most `max` of them (the rest stay for the next
  /// call unless the ring drops them first).
  ListedEvents EventsAfter(const Scene* scene, uint64_t cursor, size_t max) const;

 private:
  std::shared_ptr<WatchTap::State> state_;
};

}  // namespace collide
