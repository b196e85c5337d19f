#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "client/cpp/message_iterator.h"
#include "collide/v1/collide.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/sync_stream.h"

namespace collide::client {

class Client;

/// How an InterestStream bounds its queue and reconnects.
struct InterestOptions {
  /// InterestRequest.max_queued_events (0: the server's default).
  uint32_t max_queued_events = 0;
  /// Reopen the stream after a retryable break (the server restarted or went away): the new
  /// stream sends every declared observer again and starts with a snapshot of full sets.
  bool reconnect = true;
  /// The wait before the first reopening; each failed attempt multiplies it by
  /// backoff_multiplier, up to max_backoff.
  absl::Duration initial_backoff = absl::Milliseconds(20);
  absl::Duration max_backoff = absl::Seconds(1);
  double backoff_multiplier = 2.0;
  /// How long the stream keeps trying to reopen before Read fails with the last error.
  absl::Duration give_up_after = absl::Seconds(30);
};

/// One interest stream (collide.v1 Interest) on one scene: observers the client declares, added,
/// changed and removed on the open stream (Upsert, Remove), and the server's messages (Read): a
/// snapshot of every observer's relevant set, then the deltas of each batch that changed a set
/// and of each change of the client's taking effect. The stream keeps the sets as the messages
/// say (Set, sets), for the observers still declared. After a retryable break it reopens (with
/// backoff), resubscribes every declared observer in its first message, and the next message
/// Read returns is that stream's snapshot. Iterable:
///
///     for (const v1::InterestResponse& message : *interest) { ... interest->Set(7) ... }
///     absl::Status why = interest->Finish();
///
/// Read (and iteration) and Finish from one thread; Upsert, Remove and Cancel from any.
class InterestStream {
 public:
  /// Opens the stream and sends `observers` (Client::OpenInterest).
  static absl::StatusOr<std::unique_ptr<InterestStream>> Open(Client* client,
                                                              std::string_view scene,
                                                              std::vector<v1::Observer> observers,
                                                              InterestOptions options = {});
  InterestStream(const InterestStream&) = delete;
  InterestStream& operator=(const InterestStream&) = delete;
  /// Cancels the stream if it is still open.
  ~InterestStream();

  /// Adds or changes observers (one message). UNAVAILABLE when the stream is broken: they are
  /// declared anyway, and sent with the rest when it reopens.
  absl::Status Upsert(const std::vector<v1::Observer>& observers);
  /// Removes observers (one message); their sets are dropped at once.
  absl::Status Remove(const std::vector<uint64_t>& ids);

  /// Blocks for the next message and applies it to the sets. Once the stream has ended for
  /// good: its final status (NOT_FOUND when the scene was deleted, INVALID_ARGUMENT for a bad
  /// observer, CANCELLED after Cancel, the last break's status after give_up_after).
  absl::StatusOr<v1::InterestResponse> Read();
  /// The set of observer `id` (ascending) as of the last message read; null when the observer
  /// is not declared or its set has not arrived yet.
  const std::set<uint64_t>* Set(uint64_t id) const;
  /// Every declared observer's set that has arrived.
  const std::map<uint64_t, std::set<uint64_t>>& sets() const { return sets_; }
  /// How many times the stream was reopened.
  uint64_t reconnects() const { return reconnects_; }

  /// Ends the stream from any thread (a blocked Read returns CANCELLED).
  void Cancel();
  /// Cancels the stream if needed and returns its final status.
  absl::Status Finish();

  /// An input iterator over the messages (Read): it equals end() once the stream has ended
  /// (Finish then says why).
  using Iterator = MessageIterator<InterestStream, v1::InterestResponse>;
  Iterator begin() { return Iterator(this); }
  Iterator end() { return Iterator(); }

 private:
  using Stream = grpc::ClientReaderWriter<v1::InterestRequest, v1::InterestResponse>;
  InterestStream(Client* client, std::string scene, InterestOptions options);
  // Opens a stream and sends every declared observer (the first message names the scene).
  absl::Status Connect() ABSL_LOCKS_EXCLUDED(mu_);
  // Sends `request` on the current stream.
  absl::Status Send(v1::InterestRequest request) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Take(const v1::InterestResponse& message);

  Client* const client_;
  const std::unique_ptr<v1::Collide::Stub> stub_;
  const std::string scene_;
  const InterestOptions options_;
  mutable absl::Mutex mu_;
  std::unique_ptr<grpc::ClientContext> context_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Stream> stream_ ABSL_GUARDED_BY(mu_);
  bool broken_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool first_sent_ ABSL_GUARDED_BY(mu_) = false;
  // The observers declared, by id (what a reopened stream sends).
  std::map<uint64_t, v1::Observer> declared_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Status> final_;
  // The reader's state.
  std::map<uint64_t, std::set<uint64_t>> sets_;
  uint64_t reconnects_ = 0;
};

}  // namespace collide::client
