#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "geom/pose.h"
#include "geom/shapes.h"
#include "scene/query_sampler.h"
#include "scene/scene.h"
#include "watch/watch_directory.h"

namespace collide {

// The viewer's live stream of a scene (/viewer/api/stream, server-sent events): the scene's
// changes, the Watch streams open on it and a sample of the casts answered on it. Each event's
// data is one collide.viewer.v1 message printed by ToJson (viewer_json.h).

/// One viewer's live stream of a scene: remembers what it has sent of each body and, on each
/// Poll, sends what changed since as an `event: update` (collide.viewer.v1.SceneUpdate: new or
/// reshaped bodies in full, moved ones as pose columns, with the rotation only when it changed,
/// removed ids), at most `max_event_bytes` per event; what did not fit goes in the next one.
/// Changes between two polls are coalesced: a body that moved ten times is sent once, where it
/// is now.
class SceneStream {
 public:
  /// Starts from the scene as it is now: nothing of it is sent (the page reads it with
  /// /viewer/api/scene after the stream's first event, `hello`). `max_event_bytes` is at least
  /// 4096.
  SceneStream(std::shared_ptr<const Scene> scene, size_t max_event_bytes);

  /// The `hello` event (collide.viewer.v1.StreamHello) of the starting point.
  std::string Hello() const;
  /// The next event (`update`, or `deleted` once the scene was deleted), or empty when nothing
  /// changed. After `deleted`, done() is true.
  std::string Poll();
  /// The scene was deleted (the stream should end).
  bool done() const { return done_; }

 private:
  struct Sent {
    Shape shape{};
    Pose pose{};
    uint32_t category = 0;
    BodyKind kind = BodyKind::kDynamic;
    uint64_t generation = 0;
    // A body that places an asset: its name and scale.
    std::string asset;
    float scale = 1.0f;
  };

  std::shared_ptr<const Scene> scene_;
  size_t max_event_bytes_;
  absl::flat_hash_map<uint64_t, Sent> sent_;
  uint64_t version_ = 0;
  uint64_t tick_ = 0;
  uint64_t generation_ = 0;
  // Changes did not all fit the last event: poll again even if the version is the same.
  bool backlog_ = false;
  bool done_ = false;
};

/// One viewer's view of the Watch streams open on a scene (WatchDirectory): on each Poll, an
/// `event: watches` (collide.viewer.v1.WatchList) when the set of watches changed (every
/// watch's fences, at most `max_event_bytes`; fences past it are left out and `truncated`), and
/// an `event: watch_events` (collide.viewer.v1.FenceEvents) with the fence enter/exit events
/// since the last poll (at most kMaxEventsPerPoll; the directory keeps the latest
/// WatchDirectory::kMaxEventsPerScene per followed scene, and events a viewer missed are
/// counted in `dropped`). Events are kept only while some viewer follows the scene. Reads only.
class WatchFeed {
 public:
  /// Fence events per live-stream event at most.
  static constexpr size_t kMaxEventsPerPoll = 256;

  /// Follows `scene`'s watches in `directory` (null: no watches are ever sent).
  WatchFeed(WatchDirectory* directory, const Scene* scene, size_t max_event_bytes);
  ~WatchFeed();
  WatchFeed(const WatchFeed&) = delete;
  WatchFeed& operator=(const WatchFeed&) = delete;

  /// The events to send now (zero, one or two), or empty.
  std::string Poll();

 private:
  WatchDirectory* directory_;
  const Scene* scene_;
  size_t max_event_bytes_;
  uint64_t generation_ = 0;
  bool sent_watches_ = false;
  uint64_t cursor_ = 0;
};

/// One viewer's sample of the ray and sphere casts answered on a scene (QuerySampler: at most
/// QuerySampler::kMaxPerSecond per scene and second, the latest kMaxKept kept, taken only while
/// some viewer follows the scene): on each Poll, an `event: query_samples`
/// (collide.viewer.v1.QuerySamples) with those since the last poll, and how many it missed in
/// `dropped`. Reads only.
class QuerySampleFeed {
 public:
  /// Follows `scene`'s samples in `sampler` (null: none are sent).
  QuerySampleFeed(QuerySampler* sampler, const Scene* scene);
  ~QuerySampleFeed();
  QuerySampleFeed(const QuerySampleFeed&) = delete;
  QuerySampleFeed& operator=(const QuerySampleFeed&) = delete;

  /// The event to send now, or empty.
  std::string Poll();

 private:
  QuerySampler* sampler_;
  const Scene* scene_;
  uint64_t cursor_ = 0;
};

}  // namespace collide
