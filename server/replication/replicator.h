#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/mutex.h"
#include "server/infra/replication_control.h"
#include "server/replication/nats_client.h"
#include "server/replication/owner_record.h"
#include "server/replication/replication_names.h"
#include "server/replication/scene_publisher.h"
#include "server/replication/stream_message.h"
#include "store/database.h"
#include "store/replication_hook.h"

namespace collide {

/// How a Replicator runs.
struct ReplicatorOptions {
  /// nats://host:port of the NATS cluster's nodes.
  std::vector<std::string> nats_urls;
  /// This server's gRPC address as clients reach it: written in the owner records of the scenes
  /// it owns, told to writers of the scenes it follows.
  std::string address;
  /// Its backend in the router's map (may be empty), written in its owner records.
  std::string backend;
  /// How long an owner holds a scene without renewing it; a follower takes the scene over once
  /// it saw no renewal for this long.
  std::chrono::milliseconds lease{5000};
  /// JetStream replicas of new scenes' streams and of the owners' bucket.
  int replicas = 3;
  /// How long JetStream may take to store one message before the owner looks at the stream.
  std::chrono::milliseconds publish_timeout{5000};
  /// The most payload bytes per stream message (a larger record or snapshot is cut in parts).
  size_t part_bytes = 256 << 10;
  /// The stream's window of duplicate detection (a resent message already stored is recognised
  /// within it).
  std::chrono::milliseconds duplicate_window{120000};
  /// Called on a worker thread when this server becomes the owner of a scene (a creation, a
  /// takeover) and when a scene it owned is deleted (quick; must not call the replicator).
  std::function<void(const std::string& scene)> on_owned;
  std::function<void(const std::string& scene)> on_deleted;
};

/// Replication of scenes whose durability is DURABILITY_REPLICATED on NATS JetStream
/// (docs/SCALING.md, "Replicated scenes"): every scene has a stream (replication_names.h) holding
/// its records in order, and a key in the owners' bucket naming the one server that may write it
/// (owner_record.h). Every server started with the same NATS cluster follows every replicated
/// scene; one owns each.
///
/// The owner: the Database hands it each record (ReplicationHook); it publishes the records in
/// order, pipelined, each fenced by JetStream's expectations of the previous message
/// (ScenePublisher), and acknowledges a write once its record is stored. It renews its key every
/// third of the lease; while it cannot, writes are refused once the lease ran out. A failed
/// publish stops writes until it found out what the stream holds (ours, nothing: send again;
/// another server's message: it no longer owns the scene).
///
/// A follower: an ordered consumer of the scene's log subject, each record applied to the local
/// copy (Database::ApplyReplicated); a gap, a record that does not apply or one of another
/// incarnation makes it rebuild the copy from the stream's latest snapshot and the records after
/// it. When it sees no renewal of the owner's key for a whole lease (or the owner released it),
/// it takes the key over with a compare-and-set one epoch higher, catches up with the stream,
/// and writes a takeover mark expected right after the stream's last message: from then on no
/// earlier owner's message can be stored (each expects its predecessor, which is no longer the
/// stream's last), and it owns the scene.
///
/// Start-up: a replicated scene's local copy is checked against its stream (the message at its
/// position must be the record it holds) before it is readable, and rebuilt when it is not (a
/// server killed while it owned the scene may hold records never stored).
///
/// Threads: the owners' watch, the leases (renewals and expiries), the sender, and workers that
/// run each scene's tasks one at a time (checks, rebuilds, takeovers, resolving a failed
/// publish, snapshot copies). The Database is never called under a lock of the replicator.
class Replicator final : public ReplicationHook, public ReplicationControl {
 public:
  /// Connects to NATS (in the background: the cluster may be down) and prepares; nothing runs
  /// until Start. INVALID_ARGUMENT for bad options.
  static absl::StatusOr<std::unique_ptr<Replicator>> Create(ReplicatorOptions options);
  /// Stop()s.
  ~Replicator() override;
  Replicator(const Replicator&) = delete;
  Replicator& operator=(const Replicator&) = delete;

  /// Starts on the opened database (whose DatabaseOptions::replication is this): checks its
  /// replicated scenes, follows every scene of the owners' bucket, takes part in ownership.
  void Start(Database* db);
  /// Hands the scenes this server owns to their followers at once (their keys marked released,
  /// once what was written is stored, waiting at most `timeout`), instead of their leases
  /// running out: the graceful stop's faster failover. Writes are refused from here on.
  void Release(std::chrono::milliseconds timeout);
  /// Stops every thread and subscription and closes the connection; waiters of unstored records
  /// fail. Idempotent. Call before the database closes.
  void Stop();

  // ReplicationHook.
  absl::StatusOr<ReplicationPosition> Reserve(absl::string_view scene,
                                              ReplicatedRecordKind kind) override;
  uint64_t Publish(absl::string_view scene, const ReplicationPosition& position,
                   std::string payload) override;
  void WhenReplicated(absl::string_view scene, uint64_t ticket,
                      absl::AnyInvocable<void(absl::Status)> done) override;
  void OnSnapshot(absl::string_view scene, const ReplicationPosition& covers,
                  std::string payload) override;

  // ReplicationControl.
  void CreateScene(const std::string& name, const SceneOptions& options,
                   std::function<void(absl::Status)> done) override;
  std::optional<SceneReplicaFigures> SceneFigures(absl::string_view scene) const override;
  std::vector<SceneReplicaFigures> AllSceneFigures() const override;
  ReplicationFigures Figures() const override;

 private:
  using Clock = std::chrono::steady_clock;
  struct Replica;
  using Task = absl::AnyInvocable<void()>;

  explicit Replicator(ReplicatorOptions options);

  // The replica of `scene`: found, or made (new: it follows).
  std::shared_ptr<Replica> Find(absl::string_view scene) const ABSL_LOCKS_EXCLUDED(mu_);
  std::shared_ptr<Replica> FindOrMake(const std::string& scene) ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<std::shared_ptr<Replica>> All() const ABSL_LOCKS_EXCLUDED(mu_);

  // Runs `task` on a worker, after the replica's earlier tasks.
  void Post(const std::shared_ptr<Replica>& replica, Task task);
  // Posts one reconciliation of the replica (at most one waits at a time).
  void Reconcile(const std::shared_ptr<Replica>& replica);
  void RunWorker();
  // What the replica needs now: check or rebuild its copy and follow, take it over, resolve a
  // failed publish, forget it once deleted.
  void DoReconcile(const std::shared_ptr<Replica>& replica);

  // Followers.
  absl::Status Verify(const std::shared_ptr<Replica>& replica);
  absl::Status Rebuild(const std::shared_ptr<Replica>& replica);
  absl::Status Follow(const std::shared_ptr<Replica>& replica, uint64_t start);
  void StopFollowing(const std::shared_ptr<Replica>& replica);
  void OnDelivered(const std::shared_ptr<Replica>& replica, uint64_t generation,
                   DeliveredMessage message);
  // The copy here must be rebuilt (a gap, a record that does not apply).
  void NeedRebuild(const std::shared_ptr<Replica>& replica, const std::string& why);

  // Owners.
  bool TakeoverDue(const Replica& replica, Clock::time_point now) const;
  absl::Status TakeOver(const std::shared_ptr<Replica>& replica);
  void Depose(const std::shared_ptr<Replica>& replica, const std::string& owner);
  void Resolve(const std::shared_ptr<Replica>& replica, std::shared_ptr<ScenePublisher> publisher);
  void CleanUp(const std::shared_ptr<Replica>& replica);
  std::shared_ptr<ScenePublisher> MakePublisher(const std::shared_ptr<Replica>& replica,
                                                PublisherStart start);
  OwnerRecord MyRecord(uint64_t epoch, uint64_t incarnation) const;

  // Threads.
  void RunWatch();
  void RunLeases();
  void RunSender();
  void OnPublished(PublishOutcome outcome);
  void WakeSender(std::weak_ptr<ScenePublisher> publisher);
  // Waits up to `delay` unless stopping; false once stopping.
  bool Sleep(std::chrono::milliseconds delay);

  const ReplicatorOptions options_;
  // This process's instance id (random), in its owner records.
  const std::string instance_;
  std::unique_ptr<NatsClient> nats_;
  Database* db_ = nullptr;

  mutable Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<Replica>> replicas_ ABSL_GUARDED_BY(mu_);
  // The owners' watch delivered its first complete picture.
  bool directory_loaded_ ABSL_GUARDED_BY(mu_) = false;

  // Workers: replicas with tasks, in order.
  Mutex work_mu_;
  CondVar work_cv_;
  std::deque<std::shared_ptr<Replica>> ready_ ABSL_GUARDED_BY(work_mu_);
  // The sender: publishers with messages to send.
  Mutex send_mu_;
  CondVar send_cv_;
  std::vector<std::weak_ptr<ScenePublisher>> to_send_ ABSL_GUARDED_BY(send_mu_);
  // Stopping: every thread ends.
  Mutex stop_mu_;
  CondVar stop_cv_;
  bool stopping_ ABSL_GUARDED_BY(stop_mu_) = false;
  std::atomic<bool> stopping_flag_{false};
  std::atomic<bool> released_{false};
  std::vector<std::thread> threads_;

  std::atomic<uint64_t> takeovers_{0};
  std::atomic<uint64_t> depositions_{0};
  std::atomic<uint64_t> rebuilds_{0};
  std::atomic<uint64_t> records_published_{0};
  std::atomic<uint64_t> records_applied_{0};
  std::atomic<uint64_t> snapshots_published_{0};
};

/// The error of a write to a replicated scene this server does not own: FAILED_PRECONDITION
/// `scene: scene "x" is owned by <owner> (this server follows it)`, with the owner as the
/// moved-to payload (scene/move_destination.h: the ack's Error.moved_to, the x-collide-moved-to
/// trailer), so that the client is told where to write.
absl::Status OwnedElsewhereError(absl::string_view scene, absl::string_view owner);

}  // namespace collide
