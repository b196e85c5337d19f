#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "collide/v1/collide.pb.h"
#include "server/service_options.h"
#include "watch/interest_types.h"
#include "watch/watch_queue.h"

namespace collide {

// An InterestRequest's observer changes as the watch layer's, translated as they are (the watch
// layer checks them: ValidateObserverChanges), and the interest stream's messages back as the
// API's.

/// The default InterestRequest.max_queued_events.
inline constexpr uint32_t kDefaultInterestQueuedEvents = 65536;

/// The observers `request` upserts and the ids it removes; absent optional fields take their
/// documented defaults (leave_radius: enter_radius; the cone's leave_half_angle: its
/// half_angle; filter bits: all). RESOURCE_EXHAUSTED `observers` when the message alone holds
/// more than limits.max_observers_per_stream observers (before any is converted);
/// INVALID_ARGUMENT `observers[i].filter.excluded_ids` (observers exclude no ids).
absl::Status ObserverChangesFromProto(const v1::InterestRequest& request,
                                      const ServiceLimits& limits, ObserverChanges* out);

/// A core message as the proto the stream sends.
void InterestMessageToProto(const InterestMessage& message, v1::InterestResponse* out);

}  // namespace collide
