#pragma once

#include <vector>

#include "absl/status/status.h"
#include "collide/v1/collide.pb.h"
#include "server/service_options.h"
#include "watch/watch_queue.h"
#include "watch/watch_types.h"

namespace collide {

// A WatchRequest's standing queries as the watch layer's specs, translated as they are (the watch
// layer checks them: PrepareWatch), and the watch layer's messages back as the API's.

/// The default WatchRequest.max_queued_events.
inline constexpr uint32_t kDefaultWatchQueuedEvents = 65536;
/// The most contact watches per WatchRequest.
inline constexpr int kMaxContactWatches = 64;

/// The fences and contact watches a WatchRequest asks for. RESOURCE_EXHAUSTED `fences` /
/// `contacts` over the limits; INVALID_ARGUMENT `fences[i].shape` (none set),
/// `fences[i].filter.excluded_ids` (fences exclude no ids).
absl::Status WatchSpecsFromProto(const v1::WatchRequest& request, const ServiceLimits& limits,
                                 std::vector<FenceSpec>* fences,
                                 std::vector<ContactWatchSpec>* contacts);

/// A core message as the proto the stream sends.
void WatchMessageToProto(const WatchMessage& message, v1::WatchResponse* out);

/// One event as the API's message (the fields of its kind set, as WatchUpdate.events holds it).
void WatchEventToProto(const WatchEvent& event, v1::WatchEvent* out);

/// A fence as its WatchRequest gave it (the filter's category and mask always set).
void FenceSpecToProto(const FenceSpec& fence, v1::Fence* out);

}  // namespace collide
