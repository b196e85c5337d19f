#include "server/replication/replicator.h"

#include <algorithm>
#include <random>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/field_error.h"
#include "base/status_macros.h"
#include "scene/move_destination.h"
#include "spdlog/spdlog.h"
#include "store/crc32c.h"
#include "store/log_codec.h"

namespace collide {

absl::Status OwnedElsewhereError(absl::string_view scene, absl::string_view owner) {
  absl::Status status = FieldStatus(absl::StatusCode::kFailedPrecondition, "scene",
                                    absl::StrCat("scene \"", scene, "\" is owned by ", owner,
                                                 " (this server follows it): write there"));
  status.SetPayload(kMovedToPayload, absl::Cord(owner));
  return status;
}

// One replicated scene as this server sees it.
struct Replicator::Replica {
  enum class Role : uint8_t { kNew, kFollowing, kOwner, kGone };

  explicit Replica(std::string scene) : name(std::move(scene)), names(NamesOf(name)) {}

  const std::string name;
  const StreamNames names;

  Mutex mu;
  // The owners' bucket, as the watch (or a read) last saw it.
  bool known ABSL_GUARDED_BY(mu) = false;
  bool key_deleted ABSL_GUARDED_BY(mu) = false;
  OwnerRecord record ABSL_GUARDED_BY(mu);
  uint64_t revision ABSL_GUARDED_BY(mu) = 0;
  Clock::time_point observed ABSL_GUARDED_BY(mu){};

  Role role ABSL_GUARDED_BY(mu) = Role::kNew;
  // The copy here is checked against the stream (readable).
  bool verified ABSL_GUARDED_BY(mu) = false;
  bool rebuild ABSL_GUARDED_BY(mu) = false;
  bool taking_over ABSL_GUARDED_BY(mu) = false;
  Clock::time_point retry_at ABSL_GUARDED_BY(mu){};

  // Following.
  std::unique_ptr<NatsClient::Subscription> subscription ABSL_GUARDED_BY(mu);
  uint64_t generation ABSL_GUARDED_BY(mu) = 0;
  bool check_prev ABSL_GUARDED_BY(mu) = false;
  // The log subject's last message seen, and the first sequence of the last record applied.
  uint64_t last_log ABSL_GUARDED_BY(mu) = 0;
  uint64_t applied ABSL_GUARDED_BY(mu) = 0;
  uint64_t incarnation ABSL_GUARDED_BY(mu) = 0;
  uint64_t seen_epoch ABSL_GUARDED_BY(mu) = 0;
  PartAssembler assembler ABSL_GUARDED_BY(mu){uint64_t{1} << 32};
  uint64_t pending ABSL_GUARDED_BY(mu) = 0;
  int64_t applied_time_ns ABSL_GUARDED_BY(mu) = 0;

  // Owning (also while taking over: my_revision is the key's revision this server wrote).
  std::shared_ptr<ScenePublisher> publisher ABSL_GUARDED_BY(mu);
  uint64_t my_revision ABSL_GUARDED_BY(mu) = 0;
  // When the key's latest write by this server (the takeover's, or a renewal's) was asked for:
  // the lease runs from there.
  Clock::time_point lease_asked ABSL_GUARDED_BY(mu){};
  OwnerRecord my_record ABSL_GUARDED_BY(mu);
  ReplicatedRecordKind reserved_kind ABSL_GUARDED_BY(mu) = ReplicatedRecordKind::kUpdate;

  // Tasks, run one at a time by a worker.
  std::deque<Task> tasks ABSL_GUARDED_BY(mu);
  bool scheduled ABSL_GUARDED_BY(mu) = false;
  bool reconcile_posted ABSL_GUARDED_BY(mu) = false;
};

namespace {

std::string RandomInstance() {
  std::random_device device;
  std::mt19937_64 random((static_cast<uint64_t>(device()) << 32) ^ device());
  return absl::StrFormat("%016x", random());
}

uint64_t RandomIncarnation() {
  std::random_device device;
  std::mt19937_64 random((static_cast<uint64_t>(device()) << 32) ^ device());
  uint64_t value = 0;
  while (value == 0) value = random();
  return value;
}

// The stream sequence at the end of a message id (replication_names.h, MessageId).
std::optional<uint64_t> SequenceOfId(absl::string_view id) {
  const size_t dash = id.rfind('-');
  uint64_t sequence = 0;
  if (dash == absl::string_view::npos || !absl::SimpleAtoi(id.substr(dash + 1), &sequence)) {
    return std::nullopt;
  }
  return sequence;
}

// Calls its callback exactly once: with the status given, or UNAVAILABLE when dropped
// unanswered (the replicator stopped before the task ran).
class Once {
 public:
  explicit Once(std::function<void(absl::Status)> done) : done_(std::move(done)) {}
  ~Once() {
    if (done_) done_(absl::UnavailableError("replication: the server is stopping"));
  }
  void operator()(absl::Status status) {
    std::function<void(absl::Status)> done = std::move(done_);
    done_ = nullptr;
    if (done) done(std::move(status));
  }

 private:
  std::function<void(absl::Status)> done_;
};

absl::Status NotReady(absl::string_view scene) {
  return FieldStatus(absl::StatusCode::kUnavailable, "scene",
                     absl::StrCat("scene \"", scene,
                                  "\" has no known owner yet (replication is starting or the NATS "
                                  "cluster does not answer); try again shortly"));
}

}  // namespace

Replicator::Replicator(ReplicatorOptions options)
    : options_(std::move(options)), instance_(RandomInstance()) {}

absl::StatusOr<std::unique_ptr<Replicator>> Replicator::Create(ReplicatorOptions options) {
  if (options.nats_urls.empty()) return absl::InvalidArgumentError("nats_url: empty");
  if (options.address.empty()) return absl::InvalidArgumentError("advertise_address: empty");
  if (options.lease.count() <= 0) return absl::InvalidArgumentError("replication_lease_ms: 0");
  if (options.part_bytes == 0) return absl::InvalidArgumentError("part_bytes: 0");
  std::unique_ptr<Replicator> replicator(new Replicator(std::move(options)));
  Replicator* raw = replicator.get();
  NatsClientOptions nats;
  nats.urls = replicator->options_.nats_urls;
  nats.name = absl::StrCat("collide-server ", replicator->options_.address);
  nats.request_timeout_ms =
      std::max<int64_t>(500, std::min<int64_t>(replicator->options_.lease.count(), 5000));
  nats.replicas = replicator->options_.replicas;
  nats.on_published = [raw](PublishOutcome outcome) { raw->OnPublished(std::move(outcome)); };
  nats.on_connection = [raw](bool connected) {
    if (connected) {
      spdlog::info("replication: connected to NATS");
    } else {
      spdlog::warn("replication: lost the connection to NATS; reconnecting");
    }
    (void)raw;
  };
  COLLIDE_ASSIGN_OR_RETURN(replicator->nats_, NatsClient::Connect(std::move(nats)));
  return replicator;
}

Replicator::~Replicator() { Stop(); }

OwnerRecord Replicator::MyRecord(uint64_t epoch, uint64_t incarnation) const {
  return OwnerRecord{.address = options_.address,
                     .backend = options_.backend,
                     .server = instance_,
                     .epoch = epoch,
                     .incarnation = incarnation,
                     .lease_ms = static_cast<uint32_t>(options_.lease.count()),
                     .log = 0,
                     .released = false,
                     .successor = ""};
}

void Replicator::Start(Database* db) {
  db_ = db;
  // The copies on disk: unreadable until checked once the owners' bucket is read.
  for (const ReplicatedSceneFigures& scene : db_->ReplicatedScenes()) FindOrMake(scene.name);
  constexpr int kWorkers = 4;
  for (int i = 0; i < kWorkers; ++i) threads_.emplace_back(&Replicator::RunWorker, this);
  threads_.emplace_back(&Replicator::RunWatch, this);
  threads_.emplace_back(&Replicator::RunLeases, this);
  threads_.emplace_back(&Replicator::RunSender, this);
}

bool Replicator::Sleep(std::chrono::milliseconds delay) {
  std::unique_lock<Mutex> lock(stop_mu_);
  stop_cv_.WaitFor(lock, delay, [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return stopping_; });
  return !stopping_;
}

void Replicator::Stop() {
  {
    MutexLock lock(&stop_mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  stopping_flag_ = true;
  stop_cv_.NotifyAll();
  work_cv_.NotifyAll();
  send_cv_.NotifyAll();
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
  const absl::Status stopping = absl::UnavailableError("replication: the server is stopping");
  for (const std::shared_ptr<Replica>& replica : All()) {
    std::unique_ptr<NatsClient::Subscription> subscription;
    std::shared_ptr<ScenePublisher> publisher;
    std::deque<Task> tasks;
    {
      MutexLock lock(&replica->mu);
      subscription = std::move(replica->subscription);
      ++replica->generation;
      publisher = replica->publisher;
      tasks.swap(replica->tasks);
    }
    subscription.reset();
    tasks.clear();  // (their callbacks are answered: Once)
    if (publisher != nullptr) publisher->Close(stopping);
  }
}

std::shared_ptr<Replicator::Replica> Replicator::Find(absl::string_view scene) const {
  MutexLock lock(&mu_);
  auto it = replicas_.find(scene);
  return it == replicas_.end() ? nullptr : it->second;
}

std::shared_ptr<Replicator::Replica> Replicator::FindOrMake(const std::string& scene) {
  MutexLock lock(&mu_);
  std::shared_ptr<Replica>& slot = replicas_[scene];
  if (slot == nullptr) slot = std::make_shared<Replica>(scene);
  return slot;
}

std::vector<std::shared_ptr<Replicator::Replica>> Replicator::All() const {
  MutexLock lock(&mu_);
  std::vector<std::shared_ptr<Replica>> out;
  out.reserve(replicas_.size());
  for (const auto& [name, replica] : replicas_) out.push_back(replica);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Tasks.

void Replicator::Post(const std::shared_ptr<Replica>& replica, Task task) {
  bool schedule = false;
  {
    MutexLock lock(&replica->mu);
    replica->tasks.push_back(std::move(task));
    if (!replica->scheduled) {
      replica->scheduled = true;
      schedule = true;
    }
  }
  if (schedule) {
    {
      MutexLock lock(&work_mu_);
      ready_.push_back(replica);
    }
    work_cv_.NotifyOne();
  }
}

void Replicator::Reconcile(const std::shared_ptr<Replica>& replica) {
  {
    MutexLock lock(&replica->mu);
    if (replica->reconcile_posted) return;
    replica->reconcile_posted = true;
  }
  Post(replica, [this, replica] {
    {
      MutexLock lock(&replica->mu);
      replica->reconcile_posted = false;
    }
    DoReconcile(replica);
  });
}

void Replicator::RunWorker() {
  while (true) {
    std::shared_ptr<Replica> replica;
    {
      std::unique_lock<Mutex> lock(work_mu_);
      work_cv_.Wait(lock, [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return stopping_flag_.load() || !ready_.empty();
      });
      if (stopping_flag_) return;
      replica = std::move(ready_.front());
      ready_.pop_front();
    }
    // The replica's tasks, one at a time, until none is left (then another worker may take it).
    while (!stopping_flag_) {
      Task task;
      {
        MutexLock lock(&replica->mu);
        if (replica->tasks.empty()) {
          replica->scheduled = false;
          break;
        }
        task = std::move(replica->tasks.front());
        replica->tasks.pop_front();
      }
      task();
    }
  }
}

void Replicator::DoReconcile(const std::shared_ptr<Replica>& replica) {
  if (db_ == nullptr || stopping_flag_) return;
  bool loaded;
  {
    MutexLock lock(&mu_);
    loaded = directory_loaded_;
  }
  Replica::Role role;
  bool known, deleted, verified, rebuild, following;
  std::shared_ptr<ScenePublisher> publisher;
  {
    MutexLock lock(&replica->mu);
    role = replica->role;
    known = replica->known;
    deleted = replica->key_deleted;
    verified = replica->verified;
    rebuild = replica->rebuild;
    following = replica->subscription != nullptr;
    publisher = replica->publisher;
    if (replica->taking_over) return;
  }
  if (role == Replica::Role::kGone) return;
  if ((deleted || (!known && loaded)) && role != Replica::Role::kOwner) {
    // The scene was deleted (maybe while this server was down): its copy here goes.
    StopFollowing(replica);
    const absl::Status dropped = db_->DropReplicated(replica->name);
    if (!dropped.ok() && !absl::IsNotFound(dropped)) {
      spdlog::warn("replication: scene \"{}\": cannot drop the copy of a deleted scene: {}",
                   replica->name, dropped.ToString());
      MutexLock lock(&replica->mu);
      replica->retry_at = Clock::now() + std::chrono::seconds(1);
      return;
    }
    MutexLock lock(&replica->mu);
    replica->role = Replica::Role::kGone;
    replica->verified = false;
    return;
  }
  if (role == Replica::Role::kOwner) {
    if (publisher != nullptr && publisher->state() == ScenePublisher::State::kResolving) {
      Resolve(replica, publisher);
    }
    return;
  }
  if (!known) return;  // the owners' bucket has not named it yet
  if (rebuild || !verified) {
    absl::Status status = rebuild ? Rebuild(replica) : Verify(replica);
    if (!status.ok()) {
      spdlog::warn("replication: scene \"{}\": {}; retrying", replica->name, status.ToString());
      MutexLock lock(&replica->mu);
      replica->retry_at = Clock::now() + std::chrono::milliseconds(500);
      return;
    }
    following = false;
    MutexLock lock(&replica->mu);
    following = replica->subscription != nullptr;
  }
  if (!following) {
    uint64_t start;
    {
      MutexLock lock(&replica->mu);
      start = replica->last_log > 0 ? replica->last_log + 1 : 0;
    }
    if (absl::Status status = Follow(replica, start); !status.ok()) {
      spdlog::warn("replication: scene \"{}\": cannot follow its stream: {}; retrying",
                   replica->name, status.ToString());
      MutexLock lock(&replica->mu);
      replica->retry_at = Clock::now() + std::chrono::milliseconds(500);
      return;
    }
  }
  bool due;
  {
    MutexLock lock(&replica->mu);
    due = replica->role == Replica::Role::kFollowing && TakeoverDue(*replica, Clock::now());
  }
  if (due) {
    if (absl::Status status = TakeOver(replica); !status.ok()) {
      spdlog::warn("replication: scene \"{}\": takeover failed: {}", replica->name,
                   status.ToString());
      MutexLock lock(&replica->mu);
      replica->retry_at = Clock::now() + std::chrono::milliseconds(200);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Followers.

absl::Status Replicator::Verify(const std::shared_ptr<Replica>& replica) {
  const std::optional<ReplicationPosition> position = db_->ReplicatedPosition(replica->name);
  uint64_t incarnation;
  {
    MutexLock lock(&replica->mu);
    incarnation = replica->record.incarnation;
  }
  if (!position.has_value() || position->incarnation != incarnation) return Rebuild(replica);
  absl::StatusOr<StoredMessage> message =
      nats_->GetMessage(replica->names.stream, position->sequence);
  if (absl::IsNotFound(message.status())) return Rebuild(replica);
  if (!message.ok()) return message.status();
  absl::StatusOr<MessageHeader> header = ParseMessageHeader(message->header);
  if (!header.ok() || header->kind != MessageKind::kRecord || header->part != 1 ||
      header->first != position->sequence || header->incarnation != position->incarnation ||
      header->epoch != position->epoch) {
    // Another record at that place: this copy holds one its stream never stored.
    spdlog::info(
        "replication: scene \"{}\": the copy here holds a record its stream does not (sequence "
        "{}, epoch {}); rebuilding it",
        replica->name, position->sequence, position->epoch);
    return Rebuild(replica);
  }
  db_->SetReadable(replica->name, true);
  MutexLock lock(&replica->mu);
  replica->verified = true;
  replica->rebuild = false;
  replica->applied = position->sequence;
  replica->last_log = position->sequence;
  replica->check_prev = true;
  replica->incarnation = position->incarnation;
  replica->seen_epoch = position->epoch;
  replica->assembler.Reset();
  if (replica->role == Replica::Role::kNew) replica->role = Replica::Role::kFollowing;
  return absl::OkStatus();
}

absl::Status Replicator::Rebuild(const std::shared_ptr<Replica>& replica) {
  StopFollowing(replica);
  db_->SetReadable(replica->name, false);
  ++rebuilds_;
  absl::StatusOr<StoredMessage> manifest =
      nats_->GetLastMessage(replica->names.stream, replica->names.snapshot);
  if (!manifest.ok() && !absl::IsNotFound(manifest.status())) return manifest.status();
  if (manifest.ok()) {
    COLLIDE_ASSIGN_OR_RETURN(MessageHeader header, ParseMessageHeader(manifest->header));
    if (header.kind != MessageKind::kSnapshot) {
      return absl::DataLossError("the snapshot subject holds another kind of message");
    }
    std::string payload;
    payload.reserve(header.bytes);
    for (uint32_t i = 0; i < header.parts; ++i) {
      COLLIDE_ASSIGN_OR_RETURN(StoredMessage part,
                               nats_->GetMessage(replica->names.stream, header.first + i));
      COLLIDE_ASSIGN_OR_RETURN(MessageHeader part_header, ParseMessageHeader(part.header));
      if (part_header.kind != MessageKind::kSnapshotPart || part_header.part != i + 1 ||
          part_header.parts != header.parts) {
        return absl::DataLossError(
            absl::StrCat("snapshot part ", i + 1, " at ", header.first + i, " is not"));
      }
      payload.append(part.data);
    }
    if (payload.size() != header.bytes || Crc32c(payload) != header.crc32c) {
      return absl::DataLossError("the snapshot's parts do not match its manifest");
    }
    COLLIDE_ASSIGN_OR_RETURN(DecodedSnapshot snapshot, DecodeSnapshot(payload));
    if (!snapshot.replicated.has_value() || snapshot.scene != replica->name) {
      return absl::DataLossError("the snapshot is not this scene's, or has no position");
    }
    COLLIDE_RETURN_IF_ERROR(db_->RestoreReplicated(replica->name, snapshot.options, snapshot.state,
                                                   *snapshot.replicated));
    spdlog::info(
        "replication: scene \"{}\": rebuilt from its stream's snapshot (version {}, "
        "through sequence {})",
        replica->name, snapshot.state.version, snapshot.replicated->sequence);
    MutexLock lock(&replica->mu);
    replica->applied = snapshot.replicated->sequence;
    replica->last_log = snapshot.replicated->sequence;
    replica->check_prev = true;
    replica->incarnation = snapshot.replicated->incarnation;
    replica->seen_epoch = snapshot.replicated->epoch;
  } else {
    // No snapshot: the stream holds the scene from its creation.
    const absl::Status dropped = db_->DropReplicated(replica->name);
    if (!dropped.ok() && !absl::IsNotFound(dropped)) return dropped;
    MutexLock lock(&replica->mu);
    replica->applied = 0;
    replica->last_log = 0;
    replica->check_prev = false;
    replica->incarnation = 0;
  }
  MutexLock lock(&replica->mu);
  replica->assembler.Reset();
  replica->verified = true;
  replica->rebuild = false;
  if (replica->role == Replica::Role::kNew) replica->role = Replica::Role::kFollowing;
  return absl::OkStatus();
}

absl::Status Replicator::Follow(const std::shared_ptr<Replica>& replica, uint64_t start) {
  uint64_t generation;
  {
    MutexLock lock(&replica->mu);
    generation = ++replica->generation;
  }
  std::weak_ptr<Replica> weak = replica;
  COLLIDE_ASSIGN_OR_RETURN(std::unique_ptr<NatsClient::Subscription> subscription,
                           nats_->Follow(replica->names.stream, replica->names.log, start,
                                         [this, weak, generation](DeliveredMessage message) {
                                           if (std::shared_ptr<Replica> replica = weak.lock()) {
                                             OnDelivered(replica, generation, std::move(message));
                                           }
                                         }));
  std::unique_ptr<NatsClient::Subscription> old;
  {
    MutexLock lock(&replica->mu);
    if (replica->generation != generation) return absl::OkStatus();  // stopped meanwhile
    old = std::move(replica->subscription);
    replica->subscription = std::move(subscription);
    if (replica->role == Replica::Role::kNew) replica->role = Replica::Role::kFollowing;
  }
  return absl::OkStatus();
}

void Replicator::StopFollowing(const std::shared_ptr<Replica>& replica) {
  std::unique_ptr<NatsClient::Subscription> subscription;
  {
    MutexLock lock(&replica->mu);
    ++replica->generation;
    subscription = std::move(replica->subscription);
  }
  // Waits for a delivery in progress: never under the replica's lock (the delivery takes it).
  subscription.reset();
}

void Replicator::NeedRebuild(const std::shared_ptr<Replica>& replica, const std::string& why) {
  {
    MutexLock lock(&replica->mu);
    if (replica->rebuild) return;
    replica->rebuild = true;
    replica->verified = false;
    ++replica->generation;  // later deliveries of this subscription are ignored
  }
  spdlog::warn("replication: scene \"{}\": {}; rebuilding the copy here", replica->name, why);
  Reconcile(replica);
}

void Replicator::OnDelivered(const std::shared_ptr<Replica>& replica, uint64_t generation,
                             DeliveredMessage delivered) {
  const StoredMessage& message = delivered.message;
  std::string payload;
  std::string problem;
  uint64_t first = 0;
  {
    MutexLock lock(&replica->mu);
    if (replica->generation != generation) return;
    absl::StatusOr<MessageHeader> header = ParseMessageHeader(message.header);
    if (!header.ok()) {
      problem = absl::StrCat("message ", message.sequence, ": ", header.status().message());
    } else if (replica->incarnation != 0 && header->incarnation != replica->incarnation) {
      problem = absl::StrCat("message ", message.sequence, " of another incarnation");
    } else if (replica->check_prev && header->prev != replica->last_log) {
      problem = absl::StrCat("message ", message.sequence, " follows ", header->prev,
                             ", not the last one seen here, ", replica->last_log);
    } else if (header->kind != MessageKind::kRecord && header->kind != MessageKind::kTakeover) {
      problem = absl::StrCat("message ", message.sequence, " is no record");
    } else {
      replica->check_prev = true;
      replica->last_log = message.sequence;
      replica->pending = delivered.pending;
      if (replica->incarnation == 0) replica->incarnation = header->incarnation;
      replica->seen_epoch = std::max(replica->seen_epoch, header->epoch);
      if (header->kind == MessageKind::kTakeover) return;
      if (header->first <= replica->applied) return;  // a part of a record applied here
      absl::StatusOr<bool> whole =
          replica->assembler.Add(header->first, header->part, header->parts, message.data);
      if (!whole.ok()) {
        problem = std::string(whole.status().message());
      } else if (!*whole) {
        return;
      } else {
        payload = replica->assembler.Take();
        first = header->first;
      }
    }
  }
  if (!problem.empty()) return NeedRebuild(replica, problem);
  // The Database is never called under the replica's lock.
  const absl::Status applied = db_->ApplyReplicated(replica->name, payload);
  if (!applied.ok()) {
    return NeedRebuild(replica, absl::StrCat("record ", first, ": ", applied.message()));
  }
  ++records_applied_;
  MutexLock lock(&replica->mu);
  if (replica->generation != generation) return;
  replica->applied = first;
  replica->applied_time_ns = message.time_ns;
}

// ---------------------------------------------------------------------------------------------
// Owners.

bool Replicator::TakeoverDue(const Replica& replica,
                             Clock::time_point now) const ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (!replica.known || replica.key_deleted || !replica.verified) return false;
  const OwnerRecord& record = replica.record;
  // This server's previous life owned it: it is gone.
  if (record.address == options_.address && record.server != instance_) return true;
  if (record.released) {
    if (record.successor.empty() || record.successor == options_.address) return true;
  }
  return now - replica.observed > std::chrono::milliseconds(record.lease_ms);
}

std::shared_ptr<ScenePublisher> Replicator::MakePublisher(const std::shared_ptr<Replica>& replica,
                                                          PublisherStart start) {
  std::weak_ptr<Replica> weak = replica;
  auto holder = std::make_shared<std::weak_ptr<ScenePublisher>>();
  auto publisher = std::make_shared<ScenePublisher>(
      std::move(start),
      [this, weak] {
        if (std::shared_ptr<Replica> replica = weak.lock()) Reconcile(replica);
      },
      [this, holder] { WakeSender(*holder); });
  *holder = publisher;
  return publisher;
}

absl::Status Replicator::TakeOver(const std::shared_ptr<Replica>& replica) {
  // The key as it is now: a renewal the watch has not shown yet means the owner is alive.
  COLLIDE_ASSIGN_OR_RETURN(KvValue current, nats_->KvGet(replica->names.owner_key));
  COLLIDE_ASSIGN_OR_RETURN(OwnerRecord record, ParseOwnerRecord(current.value));
  {
    MutexLock lock(&replica->mu);
    if (current.revision != replica->revision) {
      replica->revision = current.revision;
      replica->record = record;
      replica->observed = Clock::now();
      if (!TakeoverDue(*replica, Clock::now())) return absl::OkStatus();
    }
  }
  const OwnerRecord mine = MyRecord(record.epoch + 1, record.incarnation);
  const Clock::time_point asked = Clock::now();
  absl::StatusOr<uint64_t> revision =
      nats_->KvUpdate(replica->names.owner_key, EncodeOwnerRecord(mine), current.revision);
  if (absl::IsAborted(revision.status())) {
    // Someone else wrote the key first (its owner renewed it, or another follower took it).
    MutexLock lock(&replica->mu);
    replica->observed = Clock::now();
    return absl::OkStatus();
  }
  if (!revision.ok()) return revision.status();
  {
    MutexLock lock(&replica->mu);
    replica->my_revision = *revision;
    replica->my_record = mine;
    replica->taking_over = true;
    replica->record = mine;
    replica->revision = *revision;
    replica->observed = Clock::now();
  }
  spdlog::info("replication: scene \"{}\": taking it over from {} (epoch {})", replica->name,
               record.address, mine.epoch);
  // Catch up with the stream, then write the takeover mark right after its last message: from
  // then on, no message of an earlier owner can be stored.
  // Catching up may need a rebuild from the stream: not bounded by a short lease alone.
  const auto give_up = Clock::now() + std::max<std::chrono::milliseconds>(4 * options_.lease,
                                                                          std::chrono::seconds(10));
  uint64_t mark = 0;
  std::string mark_id;
  absl::Status failure;
  for (int attempt = 0; mark == 0; ++attempt) {
    if (stopping_flag_ || Clock::now() > give_up) {
      failure = absl::DeadlineExceededError("could not catch up with the stream and mark it");
      break;
    }
    {
      MutexLock lock(&replica->mu);
      if (replica->my_revision == 0) {
        failure = absl::AbortedError("lost the key while taking over");
        break;
      }
    }
    if (attempt > 0) Sleep(std::chrono::milliseconds(std::min(20 * attempt, 200)));
    bool rebuild;
    {
      MutexLock lock(&replica->mu);
      rebuild = replica->rebuild;
    }
    if (rebuild) {
      if (absl::Status status = Rebuild(replica); !status.ok()) continue;
      uint64_t from;
      {
        MutexLock lock(&replica->mu);
        from = replica->last_log > 0 ? replica->last_log + 1 : 0;
      }
      if (absl::Status status = Follow(replica, from); !status.ok()) continue;
    }
    absl::StatusOr<StreamState> state = nats_->GetStreamState(replica->names.stream);
    if (!state.ok()) continue;
    absl::StatusOr<StoredMessage> last_log =
        nats_->GetLastMessage(replica->names.stream, replica->names.log);
    if (!last_log.ok() && !absl::IsNotFound(last_log.status())) continue;
    const uint64_t log_end = last_log.ok() ? last_log->sequence : 0;
    // The follower applies up to the log's end.
    bool caught_up = false;
    for (int wait = 0; wait < 400 && !stopping_flag_; ++wait) {
      {
        MutexLock lock(&replica->mu);
        caught_up = replica->last_log >= log_end && !replica->assembler.busy() && !replica->rebuild;
        if (caught_up || replica->rebuild) break;
      }
      Sleep(std::chrono::milliseconds(5));
    }
    if (!caught_up) continue;
    std::string last_id;
    if (state->last_sequence > 0) {
      if (last_log.ok() && last_log->sequence == state->last_sequence) {
        last_id = last_log->id;
      } else {
        absl::StatusOr<StoredMessage> last =
            nats_->GetMessage(replica->names.stream, state->last_sequence);
        if (!last.ok()) continue;
        last_id = last->id;
      }
    }
    OutgoingMessage takeover;
    takeover.subject = replica->names.log;
    takeover.header = EncodeMessageHeader(MessageHeader{.kind = MessageKind::kTakeover,
                                                        .incarnation = mine.incarnation,
                                                        .epoch = mine.epoch,
                                                        .prev = log_end});
    takeover.sequence = state->last_sequence + 1;
    takeover.id = MessageId(mine.incarnation, mine.epoch, takeover.sequence);
    takeover.expect_last_sequence = state->last_sequence;
    takeover.expect_last_id = last_id;
    takeover.timeout_ms = options_.publish_timeout.count();
    absl::StatusOr<uint64_t> stored = nats_->Publish(takeover);
    if (stored.ok() && *stored == takeover.sequence) {
      mark = *stored;
      mark_id = takeover.id;
    }
  }
  if (mark == 0) {
    // The key is handed back, marked released, so that any follower (this one included) may
    // take the scene at once; it is no longer renewed here either way. (Kept and renewed, it
    // would name an owner that never writes: nobody would ever take the scene over.)
    OwnerRecord released = mine;
    released.released = true;
    uint64_t revision;
    {
      MutexLock lock(&replica->mu);
      revision = replica->my_revision;
      replica->my_revision = 0;
      replica->taking_over = false;
    }
    if (revision != 0) {
      nats_->KvUpdate(replica->names.owner_key, EncodeOwnerRecord(released), revision)
          .IgnoreError();
    }
    return failure;
  }
  // The last deliveries finish here (the subscription waits for them).
  StopFollowing(replica);
  bool broken;
  {
    MutexLock lock(&replica->mu);
    broken = replica->rebuild;
  }
  if (broken) {
    // The copy here missed a record of the stream: another follower takes the scene at once.
    OwnerRecord released = mine;
    released.released = true;
    uint64_t revision;
    {
      MutexLock lock(&replica->mu);
      revision = replica->my_revision;
      replica->my_revision = 0;
      replica->taking_over = false;
    }
    nats_->KvUpdate(replica->names.owner_key, EncodeOwnerRecord(released), revision).IgnoreError();
    Reconcile(replica);
    return absl::DataLossError("the copy here is not the stream's; released the scene");
  }
  PublisherStart start{.scene = replica->name,
                       .incarnation = mine.incarnation,
                       .epoch = mine.epoch,
                       .next_sequence = mark + 1,
                       .last_id = mark_id,
                       .last_log_sequence = mark,
                       .part_bytes = options_.part_bytes,
                       .timeout_ms = options_.publish_timeout.count()};
  std::shared_ptr<ScenePublisher> publisher = MakePublisher(replica, std::move(start));
  {
    MutexLock lock(&replica->mu);
    // Renewals while catching up extended the lease (the publisher did not exist yet).
    publisher->SetLeaseUntil(std::max(asked, replica->lease_asked) + options_.lease -
                             options_.lease / 10);
    replica->publisher = publisher;
    replica->role = Replica::Role::kOwner;
    replica->taking_over = false;
    replica->my_record.log = mark;
  }
  ++takeovers_;
  spdlog::info("replication: scene \"{}\": this server owns it now (epoch {}, from sequence {})",
               replica->name, mine.epoch, mark + 1);
  if (options_.on_owned) options_.on_owned(replica->name);
  return absl::OkStatus();
}

void Replicator::Depose(const std::shared_ptr<Replica>& replica, const std::string& owner) {
  std::shared_ptr<ScenePublisher> publisher;
  {
    MutexLock lock(&replica->mu);
    if (replica->role != Replica::Role::kOwner && !replica->taking_over) return;
    publisher = replica->publisher;
    replica->role = Replica::Role::kFollowing;
    replica->taking_over = false;
    replica->my_revision = 0;
    // Records not stored may be applied here: then this copy is not the stream's.
    replica->rebuild = publisher == nullptr || publisher->FirstUnstored().has_value();
    replica->verified = false;
  }
  ++depositions_;
  db_->SetReadable(replica->name, false);
  const std::string told = owner.empty() ? std::string("another server") : owner;
  if (publisher != nullptr) publisher->Fence(OwnedElsewhereError(replica->name, told));
  spdlog::warn("replication: scene \"{}\": no longer owned by this server (now {})", replica->name,
               told);
  Reconcile(replica);
}

void Replicator::Resolve(const std::shared_ptr<Replica>& replica,
                         std::shared_ptr<ScenePublisher> publisher) {
  // Every answer of what was sent comes first (each within its publish timeout).
  const auto answers_by = Clock::now() + 2 * options_.publish_timeout;
  while (publisher->InFlight() && Clock::now() < answers_by) {
    if (!Sleep(std::chrono::milliseconds(10))) return;
  }
  std::chrono::milliseconds backoff(50);
  while (!stopping_flag_ && publisher->state() == ScenePublisher::State::kResolving) {
    {
      MutexLock lock(&replica->mu);
      if (replica->publisher != publisher) return;
    }
    const std::optional<uint64_t> first = publisher->FirstUnstored();
    if (!first.has_value()) {
      publisher->Resend();
      return;
    }
    absl::StatusOr<StoredMessage> found = nats_->GetMessage(replica->names.stream, *first);
    if (found.ok()) {
      if (found->id == publisher->IdAt(*first)) {
        publisher->MarkStored(*first);  // stored after all (its answer was lost)
        continue;
      }
      // Another writer's message where ours belongs: a takeover.
      std::string owner;
      if (absl::StatusOr<KvValue> key = nats_->KvGet(replica->names.owner_key); key.ok()) {
        if (absl::StatusOr<OwnerRecord> record = ParseOwnerRecord(key->value); record.ok()) {
          owner = record->address;
        }
      }
      Depose(replica, owner);
      return;
    }
    if (absl::IsNotFound(found.status())) {
      spdlog::info("replication: scene \"{}\": sending again from sequence {} ({})", replica->name,
                   *first, publisher->last_error().ToString());
      publisher->Resend();
      return;
    }
    if (!Sleep(backoff)) return;
    backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
  }
}

void Replicator::CleanUp(const std::shared_ptr<Replica>& replica) {
  std::shared_ptr<ScenePublisher> publisher;
  {
    MutexLock lock(&replica->mu);
    publisher = replica->publisher;
    replica->role = Replica::Role::kGone;
    replica->publisher = nullptr;
    replica->my_revision = 0;
    replica->known = false;
  }
  if (publisher != nullptr) {
    publisher->Close(FieldStatus(absl::StatusCode::kNotFound, "scene",
                                 absl::StrCat("scene \"", replica->name, "\" was deleted")));
  }
  // The followers saw the delete record; the key's removal tells those that did not.
  for (int attempt = 0; attempt < 20 && !stopping_flag_; ++attempt) {
    const absl::Status key = nats_->KvDelete(replica->names.owner_key);
    const absl::Status stream = nats_->DeleteStream(replica->names.stream);
    if ((key.ok() || absl::IsNotFound(key)) && (stream.ok() || absl::IsNotFound(stream))) break;
    Sleep(std::chrono::milliseconds(100 * (attempt + 1)));
  }
  if (options_.on_deleted) options_.on_deleted(replica->name);
}

// ---------------------------------------------------------------------------------------------
// The hook.

absl::StatusOr<ReplicationPosition> Replicator::Reserve(absl::string_view scene,
                                                        ReplicatedRecordKind kind) {
  std::shared_ptr<Replica> replica = Find(scene);
  if (replica == nullptr) return NotReady(scene);
  std::shared_ptr<ScenePublisher> publisher;
  {
    MutexLock lock(&replica->mu);
    if (replica->role != Replica::Role::kOwner || replica->publisher == nullptr) {
      if (replica->known && !replica->record.address.empty() &&
          replica->record.address != options_.address) {
        return OwnedElsewhereError(scene, replica->record.address);
      }
      return NotReady(scene);
    }
    publisher = replica->publisher;
    replica->reserved_kind = kind;
  }
  return publisher->Reserve(Clock::now());
}

uint64_t Replicator::Publish(absl::string_view scene, const ReplicationPosition& position,
                             std::string payload) {
  std::shared_ptr<Replica> replica = Find(scene);
  std::shared_ptr<ScenePublisher> publisher;
  ReplicatedRecordKind kind = ReplicatedRecordKind::kUpdate;
  if (replica != nullptr) {
    MutexLock lock(&replica->mu);
    publisher = replica->publisher;
    kind = replica->reserved_kind;
  }
  if (publisher == nullptr) return position.sequence;  // (cannot happen after a Reserve)
  const uint64_t ticket = publisher->AddRecord(position, payload);
  ++records_published_;
  if (kind == ReplicatedRecordKind::kDelete) {
    // Once the deletion is stored, the key and the stream go.
    std::weak_ptr<Replica> weak = replica;
    publisher->WhenStored(ticket, [this, weak](absl::Status status) {
      std::shared_ptr<Replica> replica = weak.lock();
      if (!status.ok() || replica == nullptr) return;
      Post(replica, [this, replica] { CleanUp(replica); });
    });
  }
  return ticket;
}

void Replicator::WhenReplicated(absl::string_view scene, uint64_t ticket,
                                absl::AnyInvocable<void(absl::Status)> done) {
  std::shared_ptr<Replica> replica = Find(scene);
  std::shared_ptr<ScenePublisher> publisher;
  bool verified = false;
  std::string owner;
  if (replica != nullptr) {
    MutexLock lock(&replica->mu);
    if (replica->role == Replica::Role::kOwner) publisher = replica->publisher;
    verified = replica->verified;
    if (replica->known) owner = replica->record.address;
  }
  if (publisher != nullptr) return publisher->WhenStored(ticket, std::move(done));
  if (ticket == kEverything && verified) {
    // A follower's checked copy holds only what its stream stored.
    return done(absl::OkStatus());
  }
  if (!owner.empty() && owner != options_.address) {
    return done(OwnedElsewhereError(scene, owner));
  }
  done(NotReady(scene));
}

void Replicator::OnSnapshot(absl::string_view scene, const ReplicationPosition& covers,
                            std::string payload) {
  std::shared_ptr<Replica> replica = Find(scene);
  if (replica == nullptr) return;
  std::shared_ptr<ScenePublisher> publisher;
  {
    MutexLock lock(&replica->mu);
    if (replica->role == Replica::Role::kOwner) publisher = replica->publisher;
  }
  if (publisher == nullptr || publisher->state() != ScenePublisher::State::kWriting) return;
  if (covers.incarnation != publisher->incarnation()) return;
  std::weak_ptr<Replica> weak = replica;
  publisher->AddSnapshot(covers, std::move(payload), [this, weak, covers](absl::Status status) {
    std::shared_ptr<Replica> replica = weak.lock();
    if (!status.ok() || replica == nullptr) return;
    ++snapshots_published_;
    // The stream keeps the snapshot and what follows the records it holds.
    Post(replica, [this, replica, covers] {
      const absl::Status purged = nats_->Purge(replica->names.stream, covers.sequence + 1);
      if (!purged.ok()) {
        spdlog::warn("replication: scene \"{}\": cannot cut its stream before sequence {}: {}",
                     replica->name, covers.sequence + 1, purged.ToString());
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Creation.

void Replicator::CreateScene(const std::string& name, const SceneOptions& options,
                             std::function<void(absl::Status)> done) {
  if (db_ == nullptr || stopping_flag_) {
    return done(absl::UnavailableError("replication: the server is stopping"));
  }
  if (absl::Status status = ValidateSceneName(name); !status.ok()) return done(status);
  std::shared_ptr<Replica> replica = FindOrMake(name);
  // Answered once, even when the server stops before the task runs.
  auto once = std::make_shared<Once>(std::move(done));
  Post(replica, [this, replica, name, options, once]() mutable {
    {
      MutexLock lock(&replica->mu);
      if (replica->role == Replica::Role::kOwner || (replica->known && !replica->key_deleted)) {
        const std::string owner = replica->record.address;
        return (*once)(
            FieldStatus(absl::StatusCode::kAlreadyExists, "scene",
                        absl::StrCat("scene \"", name, "\" already exists (replicated, owned by ",
                                     owner.empty() ? std::string("another server") : owner, ")")));
      }
    }
    if (absl::StatusOr<std::shared_ptr<const Scene>> local = db_->GetScene(name);
        local.ok() && !db_->ReplicatedPosition(name).has_value()) {
      return (*once)(FieldStatus(absl::StatusCode::kAlreadyExists, "scene",
                                 absl::StrCat("scene \"", name, "\" already exists")));
    }
    const StreamNames& names = replica->names;
    absl::StatusOr<StreamState> stream = nats_->EnsureStream(
        names.stream, names.subjects, options_.replicas, options_.duplicate_window.count());
    if (!stream.ok()) return (*once)(stream.status());
    const OwnerRecord mine = MyRecord(1, RandomIncarnation());
    const Clock::time_point asked = Clock::now();
    absl::StatusOr<uint64_t> revision = nats_->KvCreate(names.owner_key, EncodeOwnerRecord(mine));
    if (absl::IsAlreadyExists(revision.status())) {
      std::string owner = "another server";
      if (absl::StatusOr<KvValue> key = nats_->KvGet(names.owner_key); key.ok()) {
        if (absl::StatusOr<OwnerRecord> record = ParseOwnerRecord(key->value); record.ok()) {
          owner = record->address;
        }
      }
      return (*once)(FieldStatus(
          absl::StatusCode::kAlreadyExists, "scene",
          absl::StrCat("scene \"", name, "\" already exists (replicated, owned by ", owner, ")")));
    }
    if (!revision.ok()) return (*once)(revision.status());
    // A stream left by an earlier scene of that name starts empty again.
    if (stream->messages > 0) {
      if (absl::Status purged = nats_->Purge(names.stream, 0); !purged.ok()) {
        nats_->KvDelete(names.owner_key).IgnoreError();
        return (*once)(purged);
      }
      absl::StatusOr<StreamState> emptied = nats_->GetStreamState(names.stream);
      if (!emptied.ok()) {
        nats_->KvDelete(names.owner_key).IgnoreError();
        return (*once)(emptied.status());
      }
      stream = emptied;
    }
    // A copy here of an earlier scene of that name goes.
    if (db_->ReplicatedPosition(name).has_value()) db_->DropReplicated(name).IgnoreError();
    PublisherStart start{.scene = name,
                         .incarnation = mine.incarnation,
                         .epoch = mine.epoch,
                         .next_sequence = stream->last_sequence + 1,
                         .last_id = "",
                         .last_log_sequence = 0,
                         .part_bytes = options_.part_bytes,
                         .timeout_ms = options_.publish_timeout.count()};
    std::shared_ptr<ScenePublisher> publisher = MakePublisher(replica, std::move(start));
    publisher->SetLeaseUntil(asked + options_.lease - options_.lease / 10);
    StopFollowing(replica);
    {
      MutexLock lock(&replica->mu);
      replica->role = Replica::Role::kOwner;
      replica->publisher = publisher;
      replica->my_revision = *revision;
      replica->my_record = mine;
      replica->record = mine;
      replica->revision = *revision;
      replica->observed = Clock::now();
      replica->known = true;
      replica->key_deleted = false;
      replica->verified = true;
      replica->rebuild = false;
      replica->incarnation = mine.incarnation;
      replica->applied = 0;
      replica->last_log = 0;
    }
    SceneOptions replicated = options;
    replicated.durability = DurabilityPolicy::kReplicated;
    std::weak_ptr<Replica> weak = replica;
    db_->CreateScene(name, replicated, [this, weak, name, once](absl::Status status) mutable {
      std::shared_ptr<Replica> replica = weak.lock();
      if (!status.ok()) {
        // Nothing of it stays: not the key, not the stream.
        if (replica != nullptr) {
          Post(replica, [this, replica] { CleanUp(replica); });
        }
        return (*once)(status);
      }
      if (options_.on_owned) options_.on_owned(name);
      (*once)(absl::OkStatus());
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Threads.

void Replicator::RunWatch() {
  std::unique_ptr<NatsClient::Watch> watch;
  while (!stopping_flag_) {
    if (watch == nullptr) {
      absl::StatusOr<std::unique_ptr<NatsClient::Watch>> opened = nats_->WatchOwners();
      if (!opened.ok()) {
        Sleep(std::chrono::milliseconds(250));
        continue;
      }
      watch = *std::move(opened);
    }
    absl::StatusOr<std::optional<std::pair<std::string, KvValue>>> next = watch->Next(250);
    if (!next.ok()) {
      spdlog::warn("replication: the owners' watch broke ({}); watching again",
                   next.status().ToString());
      watch.reset();
      continue;
    }
    if (!next->has_value()) {
      // A timeout, or the end of the current values (once).
      bool first = false;
      {
        MutexLock lock(&mu_);
        if (!directory_loaded_) {
          directory_loaded_ = true;
          first = true;
        }
      }
      if (first) {
        for (const std::shared_ptr<Replica>& replica : All()) Reconcile(replica);
      }
      continue;
    }
    const auto& [key, value] = **next;
    absl::StatusOr<std::string> scene = SceneOfToken(key);
    if (!scene.ok()) continue;  // not a scene's key
    std::shared_ptr<Replica> replica = value.deleted ? Find(*scene) : FindOrMake(*scene);
    if (replica == nullptr) continue;
    bool reconcile = false;
    std::string deposed_by;
    bool deposed = false;
    {
      MutexLock lock(&replica->mu);
      if (value.deleted) {
        replica->key_deleted = true;
        replica->known = false;
        reconcile = true;
      } else if (value.revision != replica->revision) {
        absl::StatusOr<OwnerRecord> record = ParseOwnerRecord(value.value);
        if (!record.ok()) {
          spdlog::warn("replication: scene \"{}\": ignored an owner record that does not parse: {}",
                       *scene, std::string(record.status().message()));
          continue;
        }
        const bool mine = value.revision == replica->my_revision;
        replica->record = *record;
        replica->revision = value.revision;
        replica->observed = Clock::now();
        replica->known = true;
        replica->key_deleted = false;
        if (!mine && (replica->role == Replica::Role::kOwner || replica->taking_over) &&
            record->server != instance_) {
          deposed = true;
          deposed_by = record->address;
        }
        reconcile = replica->role == Replica::Role::kNew || record->released ||
                    replica->role == Replica::Role::kGone;
        if (replica->role == Replica::Role::kGone) replica->role = Replica::Role::kNew;
      }
    }
    if (deposed) Depose(replica, deposed_by);
    if (reconcile) Reconcile(replica);
  }
}

void Replicator::RunLeases() {
  const auto renew_every = std::max(options_.lease / 3, std::chrono::milliseconds(20));
  const auto tick = std::max(options_.lease / 20, std::chrono::milliseconds(10));
  auto next_renewal = Clock::now();
  while (Sleep(std::chrono::duration_cast<std::chrono::milliseconds>(tick))) {
    const Clock::time_point now = Clock::now();
    const bool renew = now >= next_renewal;
    if (renew) next_renewal = now + renew_every;
    for (const std::shared_ptr<Replica>& replica : All()) {
      uint64_t revision = 0;
      OwnerRecord record;
      std::shared_ptr<ScenePublisher> publisher;
      bool due = false, retry = false;
      {
        MutexLock lock(&replica->mu);
        if (replica->role == Replica::Role::kGone) continue;
        revision = replica->my_revision;
        record = replica->my_record;
        publisher = replica->publisher;
        // A takeover that failed waits for its retry time (retry_at) before the next.
        const bool waiting = replica->retry_at != Clock::time_point{} && now < replica->retry_at;
        if (replica->role == Replica::Role::kFollowing && !waiting) {
          due = TakeoverDue(*replica, now);
        }
        retry = replica->retry_at != Clock::time_point{} && now >= replica->retry_at;
        if (retry) replica->retry_at = Clock::time_point{};
      }
      if (due || retry) Reconcile(replica);
      if (!renew || revision == 0 || released_) continue;
      if (publisher != nullptr) record.log = publisher->stored_log_sequence();
      const Clock::time_point asked = Clock::now();
      absl::StatusOr<uint64_t> renewed =
          nats_->KvUpdate(replica->names.owner_key, EncodeOwnerRecord(record), revision);
      if (renewed.ok()) {
        MutexLock lock(&replica->mu);
        if (replica->my_revision == revision) {
          replica->my_revision = *renewed;
          replica->my_record = record;
          replica->lease_asked = asked;
        }
        if (replica->publisher != nullptr) {
          replica->publisher->SetLeaseUntil(asked + options_.lease - options_.lease / 10);
        }
      } else if (absl::IsAborted(renewed.status()) || absl::IsNotFound(renewed.status())) {
        std::string owner;
        if (absl::StatusOr<KvValue> key = nats_->KvGet(replica->names.owner_key); key.ok()) {
          if (absl::StatusOr<OwnerRecord> now_owner = ParseOwnerRecord(key->value);
              now_owner.ok()) {
            owner = now_owner->address;
            if (now_owner->server == instance_ && now_owner->epoch == record.epoch &&
                !now_owner->released) {
              // The key holds this server's own record: an earlier renewal was stored but its
              // answer was lost (a timeout while the cluster regained its quorum). Nobody else
              // wrote it, so this server still owns the scene: go on from that revision (the
              // next renewal extends the lease).
              MutexLock lock(&replica->mu);
              if (replica->my_revision == revision) replica->my_revision = key->revision;
              next_renewal = Clock::now();
              continue;
            }
          }
        }
        Depose(replica, owner);
      }
    }
  }
}

void Replicator::WakeSender(std::weak_ptr<ScenePublisher> publisher) {
  {
    MutexLock lock(&send_mu_);
    to_send_.push_back(std::move(publisher));
  }
  send_cv_.NotifyOne();
}

void Replicator::RunSender() {
  while (true) {
    std::vector<std::weak_ptr<ScenePublisher>> due;
    {
      std::unique_lock<Mutex> lock(send_mu_);
      send_cv_.Wait(lock, [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return stopping_flag_.load() || !to_send_.empty();
      });
      if (stopping_flag_) return;
      due.swap(to_send_);
    }
    for (const std::weak_ptr<ScenePublisher>& weak : due) {
      std::shared_ptr<ScenePublisher> publisher = weak.lock();
      if (publisher == nullptr) continue;
      for (const OutgoingMessage& message : publisher->TakeUnsent()) {
        const absl::Status sent = nats_->PublishAsync(message);
        // Not handed to the connection (no connection): that message failed.
        if (!sent.ok()) publisher->OnOutcome(message.sequence, sent);
      }
    }
  }
}

void Replicator::OnPublished(PublishOutcome outcome) {
  absl::StatusOr<std::string> scene = SceneOfSubject(outcome.subject);
  if (!scene.ok()) return;
  std::shared_ptr<Replica> replica = Find(*scene);
  if (replica == nullptr) return;
  std::shared_ptr<ScenePublisher> publisher;
  {
    MutexLock lock(&replica->mu);
    publisher = replica->publisher;
  }
  if (publisher == nullptr) return;
  const std::optional<uint64_t> sequence = SequenceOfId(outcome.id);
  if (!sequence.has_value() || publisher->IdAt(*sequence) != outcome.id) return;  // older owner's
  publisher->OnOutcome(*sequence, outcome.sequence);
}

void Replicator::Release(std::chrono::milliseconds timeout) {
  if (released_.exchange(true) || nats_ == nullptr) return;
  const auto deadline = Clock::now() + timeout;
  for (const std::shared_ptr<Replica>& replica : All()) {
    std::shared_ptr<ScenePublisher> publisher;
    uint64_t revision;
    OwnerRecord record;
    {
      MutexLock lock(&replica->mu);
      if (replica->role != Replica::Role::kOwner) continue;
      publisher = replica->publisher;
      revision = replica->my_revision;
      record = replica->my_record;
    }
    if (publisher == nullptr || revision == 0) continue;
    // No more writes here; what was written is stored first.
    publisher->SetLeaseUntil(Clock::time_point{});
    while (publisher->FirstUnstored().has_value() && Clock::now() < deadline) {
      if (!Sleep(std::chrono::milliseconds(10))) break;
    }
    record.released = true;
    record.log = publisher->stored_log_sequence();
    if (nats_->KvUpdate(replica->names.owner_key, EncodeOwnerRecord(record), revision).ok()) {
      spdlog::info("replication: scene \"{}\": released for its followers", replica->name);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Figures.

std::optional<SceneReplicaFigures> Replicator::SceneFigures(absl::string_view scene) const {
  std::shared_ptr<Replica> replica = Find(scene);
  if (replica == nullptr) return std::nullopt;
  SceneReplicaFigures out;
  out.scene = replica->name;
  std::shared_ptr<ScenePublisher> publisher;
  uint64_t owner_log = 0;
  int64_t applied_time_ns = 0;
  {
    MutexLock lock(&replica->mu);
    if (replica->role == Replica::Role::kGone) return std::nullopt;
    out.owner = replica->role == Replica::Role::kOwner;
    out.owner_address = replica->known ? replica->record.address : "";
    out.epoch = replica->known ? replica->record.epoch : replica->seen_epoch;
    out.readable = replica->verified;
    publisher = out.owner ? replica->publisher : nullptr;
    out.applied_sequence = replica->last_log;
    owner_log = replica->known ? replica->record.log : 0;
    out.lag_sequences = replica->pending;
    applied_time_ns = replica->applied_time_ns;
    out.state = replica->taking_over ? "taking over"
                : out.owner          ? "owner"
                : replica->rebuild   ? "rebuilding"
                : !replica->verified ? "checking"
                                     : "following";
  }
  if (publisher != nullptr) {
    out.applied_sequence = publisher->stored_log_sequence();
    out.lag_sequences = 0;
    if (publisher->state() == ScenePublisher::State::kResolving) out.state = "resolving";
  } else {
    if (owner_log > out.applied_sequence) {
      out.lag_sequences = std::max(out.lag_sequences, owner_log - out.applied_sequence);
    }
    if (out.lag_sequences > 0 && applied_time_ns > 0) {
      const int64_t now_ns = absl::ToUnixNanos(absl::Now());
      out.lag_seconds = std::max<double>(0, static_cast<double>(now_ns - applied_time_ns) / 1e9);
    }
  }
  return out;
}

std::vector<SceneReplicaFigures> Replicator::AllSceneFigures() const {
  std::vector<SceneReplicaFigures> out;
  for (const std::shared_ptr<Replica>& replica : All()) {
    if (std::optional<SceneReplicaFigures> figures = SceneFigures(replica->name)) {
      out.push_back(std::move(*figures));
    }
  }
  std::sort(out.begin(), out.end(), [](const SceneReplicaFigures& a, const SceneReplicaFigures& b) {
    return a.scene < b.scene;
  });
  return out;
}

ReplicationFigures Replicator::Figures() const {
  ReplicationFigures out;
  out.connected = nats_ != nullptr && nats_->connected();
  out.address = options_.address;
  for (const SceneReplicaFigures& scene : AllSceneFigures()) {
    if (scene.owner) {
      ++out.owned;
    } else {
      ++out.followed;
    }
  }
  out.takeovers = takeovers_;
  out.depositions = depositions_;
  out.rebuilds = rebuilds_;
  out.records_published = records_published_;
  out.records_applied = records_applied_;
  out.snapshots_published = snapshots_published_;
  return out;
}

}  // namespace collide
