#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/mutex.h"
#include "server/replication/nats_client.h"
#include "server/replication/replication_names.h"
#include "store/replication_hook.h"

namespace collide {

/// What a ScenePublisher starts from: the stream as its new owner found it.
struct PublisherStart {
  std::string scene;
  uint64_t incarnation = 0;
  uint64_t epoch = 0;
  /// The stream sequence the first message gets (the stream's last + 1).
  uint64_t next_sequence = 1;
  /// The Nats-Msg-Id of the stream's last message (empty: none to expect).
  std::string last_id;
  /// The stream sequence of the log subject's last message (0: none).
  uint64_t last_log_sequence = 0;
  /// The most payload bytes per message.
  size_t part_bytes = 256 << 10;
  /// How long JetStream may take to answer one publish, in milliseconds.
  int64_t timeout_ms = 5000;
};

/// The owner's side of one replicated scene's stream: its messages in the order they will be
/// stored, each fenced by JetStream's expectations (the stream's last sequence and last message
/// id must be the previous message's), sent ahead without waiting (pipelined), acknowledged to
/// their waiters in order once stored. No I/O here: a sender takes the unsent messages
/// (TakeUnsent) and reports JetStream's answers (OnOutcome); a failed message stops the writes
/// (Reserve refuses) until a resolver (the replicator) found out what the stream holds: ours
/// (MarkStored), nothing (Resend), or another writer's message (Fence: this server no longer owns
/// the scene). Thread-safe.
class ScenePublisher {
 public:
  using Clock = std::chrono::steady_clock;

  enum class State : uint8_t {
    /// Sending; Reserve accepts while the lease holds.
    kWriting,
    /// A message failed: nothing is sent and Reserve refuses until it is resolved.
    kResolving,
    /// Another writer's message is in the stream: every waiter failed; nothing more.
    kFenced,
    /// Closed (the scene deleted, the server stopping).
    kClosed,
  };

  /// `on_trouble` runs (on the caller's thread, outside the lock) when a message fails: the
  /// publisher needs resolving. `on_unsent` runs when messages are queued for the sender.
  ScenePublisher(PublisherStart start, std::function<void()> on_trouble,
                 std::function<void()> on_unsent);

  /// The position of the next record, when this server may write now: kWriting, its lease
  /// (SetLeaseUntil) still holds at `now`. Errors are the writer's (UNAVAILABLE, or the fence's
  /// FAILED_PRECONDITION). Until the record is added, a snapshot waits (AddSnapshot).
  absl::StatusOr<ReplicationPosition> Reserve(Clock::time_point now);
  /// Queues the record reserved at `position` (its payload cut into parts); returns its ticket
  /// (the sequence of its last part).
  uint64_t AddRecord(const ReplicationPosition& position, absl::string_view payload);
  /// Queues a snapshot (its parts, then its manifest) holding the records through `covers`;
  /// `done` runs once the manifest is stored (OK) or will not be. After a reserved record when
  /// one is reserved.
  void AddSnapshot(const ReplicationPosition& covers, std::string payload,
                   absl::AnyInvocable<void(absl::Status)> done);
  /// Runs `done` once every message through `ticket` is stored (ReplicationHook::kEverything:
  /// every message queued so far), or with the error once that will not be.
  void WhenStored(uint64_t ticket, absl::AnyInvocable<void(absl::Status)> done);

  /// The messages to send now, in order; they count as in flight.
  std::vector<OutgoingMessage> TakeUnsent();
  /// JetStream's answer for the message at `sequence`.
  void OnOutcome(uint64_t sequence, const absl::StatusOr<uint64_t>& stored);

  /// For the resolver.
  State state() const;
  /// Messages sent and not answered yet.
  bool InFlight() const;
  /// The first message not known to be stored.
  std::optional<uint64_t> FirstUnstored() const;
  /// The id of our message at `sequence`.
  std::string IdAt(uint64_t sequence) const;
  /// The message at `sequence` is in the stream (found there by its id).
  void MarkStored(uint64_t sequence);
  /// Sends every message not known to be stored again (same ids and expectations: one already
  /// stored answers as a duplicate); back to kWriting.
  void Resend();
  /// Another writer wrote where our message belongs: every waiter gets `status`.
  void Fence(const absl::Status& status);
  /// Every waiter gets `status`; nothing more is sent.
  void Close(const absl::Status& status);
  /// Reserve accepts until `until`.
  void SetLeaseUntil(Clock::time_point until);

  /// Every message through here is stored.
  uint64_t stored_through() const;
  /// The stream sequence of the log subject's last stored message (for the owner record).
  uint64_t stored_log_sequence() const;
  /// The last error a message got (for refusals while resolving).
  absl::Status last_error() const;
  uint64_t epoch() const { return start_.epoch; }
  uint64_t incarnation() const { return start_.incarnation; }

 private:
  struct Entry {
    uint64_t sequence = 0;
    OutgoingMessage message;
    bool log = false;  // on the log subject
    bool sent = false;
    bool answered = false;
    bool stored = false;
  };

  // Queues one message at the next sequence (under mu_).
  uint64_t QueueLocked(const std::string& subject, std::string header, absl::string_view data,
                       bool log) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void QueueSnapshotLocked(const ReplicationPosition& covers, std::string payload,
                           absl::AnyInvocable<void(absl::Status)> done)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves the stored prefix out of the queue and collects the waiters it satisfies.
  void AdvanceLocked(std::vector<absl::AnyInvocable<void(absl::Status)>>* due)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FailAllLocked(const absl::Status& status, State state,
                     std::vector<absl::AnyInvocable<void(absl::Status)>>* due)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const PublisherStart start_;
  const StreamNames names_;
  const std::function<void()> on_trouble_;
  const std::function<void()> on_unsent_;

  mutable Mutex mu_;
  State state_ ABSL_GUARDED_BY(mu_) = State::kWriting;
  Clock::time_point lease_until_ ABSL_GUARDED_BY(mu_){};
  uint64_t next_sequence_ ABSL_GUARDED_BY(mu_);
  uint64_t last_log_sequence_ ABSL_GUARDED_BY(mu_);
  uint64_t stored_through_ ABSL_GUARDED_BY(mu_);
  uint64_t stored_log_sequence_ ABSL_GUARDED_BY(mu_);
  // Messages not yet known to be stored, in sequence order (front: stored_through_ + 1).
  std::deque<Entry> queue_ ABSL_GUARDED_BY(mu_);
  std::multimap<uint64_t, absl::AnyInvocable<void(absl::Status)>> waiters_ ABSL_GUARDED_BY(mu_);
  // A record's position was reserved and its record not added yet: a snapshot waits here.
  bool reserved_ ABSL_GUARDED_BY(mu_) = false;
  struct DeferredSnapshot {
    ReplicationPosition covers;
    std::string payload;
    absl::AnyInvocable<void(absl::Status)> done;
  };
  std::optional<DeferredSnapshot> deferred_ ABSL_GUARDED_BY(mu_);
  absl::Status last_error_ ABSL_GUARDED_BY(mu_);
  absl::Status final_error_ ABSL_GUARDED_BY(mu_);
};

}  // namespace collide
