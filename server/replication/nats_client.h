#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

// The NATS C client's types, kept out of this header's users.
typedef struct __natsConnection natsConnection;
typedef struct __natsSubscription natsSubscription;
typedef struct __jsCtx jsCtx;
typedef struct __kvStore kvStore;
typedef struct __kvWatcher kvWatcher;

namespace collide {

/// A message as a JetStream stream stores it.
struct StoredMessage {
  uint64_t sequence = 0;
  std::string subject;
  std::string data;
  /// The Collide-Message header (stream_message.h); empty when absent.
  std::string header;
  /// The Nats-Msg-Id header; empty when absent.
  std::string id;
  /// When the stream stored it, in nanoseconds since the Unix epoch.
  int64_t time_ns = 0;
};

/// A message a follower's subscription delivered.
struct DeliveredMessage {
  StoredMessage message;
  /// Messages of the subscription's subject after this one in the stream at delivery.
  uint64_t pending = 0;
};

/// A message to publish, with JetStream's expectations.
struct OutgoingMessage {
  /// The stream sequence it is meant to get (its publisher's bookkeeping; not sent).
  uint64_t sequence = 0;
  std::string subject;
  std::string header;
  std::string data;
  /// Nats-Msg-Id.
  std::string id;
  /// Nats-Expected-Last-Sequence (0: not checked).
  uint64_t expect_last_sequence = 0;
  /// Nats-Expected-Last-Msg-Id (empty: not checked).
  std::string expect_last_id;
  /// How long to wait for JetStream's answer, in milliseconds.
  int64_t timeout_ms = 5000;
};

/// JetStream's answer to an asynchronous publish of the message with `id` to `subject`: the
/// stored sequence (and whether it was a duplicate of a message already stored under the same
/// id), or the error (ABORTED when an expectation failed: someone else wrote there; UNAVAILABLE
/// for no answer or no quorum).
struct PublishOutcome {
  std::string subject;
  std::string id;
  absl::StatusOr<uint64_t> sequence;
  bool duplicate = false;
};

/// A key of the KV bucket as read.
struct KvValue {
  std::string value;
  uint64_t revision = 0;
  /// The key was deleted (or purged) at this revision (a watch only).
  bool deleted = false;
};

/// The state of a stream.
struct StreamState {
  uint64_t first_sequence = 0;
  uint64_t last_sequence = 0;
  uint64_t messages = 0;
  uint64_t bytes = 0;
  int64_t last_time_ns = 0;
};

/// What a NatsClient is built with.
struct NatsClientOptions {
  /// nats://host:port URLs of the cluster's nodes.
  std::vector<std::string> urls;
  /// The connection's name (seen by the NATS server's monitoring).
  std::string name;
  /// JetStream API requests' timeout, in milliseconds.
  int64_t request_timeout_ms = 2000;
  /// Replicas of the owners' KV bucket when this client creates it.
  int replicas = 3;
  /// Called for every asynchronous publish's answer, on a NATS thread (quick; must not block).
  std::function<void(PublishOutcome)> on_published;
  /// Called when the connection is lost (false) and back (true), on a NATS thread.
  std::function<void(bool connected)> on_connection;
};

/// One connection to a NATS cluster with JetStream, and the calls replication makes. Every call
/// answers an absl::Status: NOT_FOUND (no such stream, message or key), ALREADY_EXISTS (a KV
/// create of an existing key), ABORTED (a compare-and-set or a publish expectation failed),
/// UNAVAILABLE (no connection, no answer in time, no quorum), INTERNAL otherwise; messages
/// begin with `nats: `. Thread-safe (the C client's objects are).
class NatsClient {
 public:
  /// Connects (retrying in the background while no node answers: the call itself does not wait
  /// for one) and opens the owners' KV bucket lazily.
  static absl::StatusOr<std::unique_ptr<NatsClient>> Connect(NatsClientOptions options);
  ~NatsClient();
  NatsClient(const NatsClient&) = delete;
  NatsClient& operator=(const NatsClient&) = delete;

  /// Connected to a node now.
  bool connected() const;

  // Streams.
  /// Creates the stream of `names` (R `replicas`, file storage, a duplicate window of
  /// `duplicates_ms`) or returns the existing one's state.
  absl::StatusOr<StreamState> EnsureStream(const std::string& stream, const std::string& subjects,
                                           int replicas, int64_t duplicates_ms);
  absl::StatusOr<StreamState> GetStreamState(const std::string& stream);
  absl::Status DeleteStream(const std::string& stream);
  /// Deletes every message before `sequence` (0: every message).
  absl::Status Purge(const std::string& stream, uint64_t sequence);
  absl::StatusOr<StoredMessage> GetMessage(const std::string& stream, uint64_t sequence);
  absl::StatusOr<StoredMessage> GetLastMessage(const std::string& stream,
                                               const std::string& subject);
  /// Publishes and waits for JetStream's answer; the stored sequence.
  absl::StatusOr<uint64_t> Publish(const OutgoingMessage& message);
  /// Publishes without waiting: options.on_published gets the answer. An error here means the
  /// message was not handed to the connection.
  absl::Status PublishAsync(const OutgoingMessage& message);

  /// Follows `subject` of `stream` from stream sequence `start` with an ordered consumer (no
  /// acks; the client restarts it where it was after a gap or a lost connection): `deliver` runs
  /// for each message in order, on a NATS thread. Stop by destroying the returned handle.
  class Subscription {
   public:
    ~Subscription();
    Subscription(const Subscription&) = delete;
    Subscription& operator=(const Subscription&) = delete;

   private:
    friend class NatsClient;
    Subscription() = default;
    natsSubscription* sub_ = nullptr;
    std::unique_ptr<std::function<void(DeliveredMessage)>> deliver_;
  };
  absl::StatusOr<std::unique_ptr<Subscription>> Follow(
      const std::string& stream, const std::string& subject, uint64_t start,
      std::function<void(DeliveredMessage)> deliver);

  // The owners' KV bucket.
  absl::StatusOr<KvValue> KvGet(const std::string& key);
  /// Creates `key` (ALREADY_EXISTS when it exists); its revision.
  absl::StatusOr<uint64_t> KvCreate(const std::string& key, const std::string& value);
  /// Updates `key` if its revision is `revision` (ABORTED otherwise); the new revision.
  absl::StatusOr<uint64_t> KvUpdate(const std::string& key, const std::string& value,
                                    uint64_t revision);
  absl::Status KvDelete(const std::string& key);
  /// Every key's current value, then each change, until stopped.
  class Watch {
   public:
    ~Watch();
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;
    /// The next change (key and value), waiting at most `timeout_ms`: nullopt after the current
    /// values (once) and on a timeout; an error once the watch broke or was stopped.
    absl::StatusOr<std::optional<std::pair<std::string, KvValue>>> Next(int64_t timeout_ms);
    /// Wakes a Next in progress; every later Next fails.
    void Stop();

   private:
    friend class NatsClient;
    Watch() = default;
    kvWatcher* watcher_ = nullptr;
  };
  absl::StatusOr<std::unique_ptr<Watch>> WatchOwners();

  /// What the C client's callbacks reach (it outlives the connection).
  struct State;

 private:
  explicit NatsClient(NatsClientOptions options);
  absl::StatusOr<kvStore*> Owners();

  NatsClientOptions options_;
  std::unique_ptr<State> state_;
  natsConnection* connection_ = nullptr;
  jsCtx* js_ = nullptr;
  kvStore* owners_ = nullptr;  // set once, under the state's lock
};

}  // namespace collide
