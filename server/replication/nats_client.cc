#include "server/replication/nats_client.h"

#include <nats/nats.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/mutex.h"
#include "base/status_macros.h"
#include "server/replication/replication_names.h"
#include "server/replication/stream_message.h"

namespace collide {
namespace {

// The C client's library-wide state: opened once for the process.
void OpenLibrary() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Message callbacks of every subscription run on a small shared pool instead of a thread
    // each (a server follows many scenes).
    nats_Open(-1);
    nats_SetMessageDeliveryPoolSize(4);
  });
}

// JetStream's error codes replication tells apart.
constexpr int kWrongLastSequence = 10071;
constexpr int kWrongLastMsgId = 10070;
constexpr int kStreamNotFound = 10059;
constexpr int kMessageNotFound = 10037;
constexpr int kNoMessageFound = 10110;  // direct get

absl::Status ToStatus(natsStatus s, jsErrCode code, absl::string_view what) {
  if (s == NATS_OK) return absl::OkStatus();
  const char* last = nats_GetLastError(nullptr);
  const std::string detail =
      absl::StrCat("nats: ", what, ": ", natsStatus_GetText(s),
                   code != 0 ? absl::StrCat(" (JetStream error ", code, ")") : std::string(),
                   last != nullptr && *last != '\0' ? ": " : "", last != nullptr ? last : "");
  if (code == kWrongLastSequence || code == kWrongLastMsgId) return absl::AbortedError(detail);
  if (code == kStreamNotFound || code == kMessageNotFound || code == kNoMessageFound ||
      s == NATS_NOT_FOUND) {
    return absl::NotFoundError(detail);
  }
  switch (s) {
    case NATS_TIMEOUT:
    case NATS_NO_RESPONDERS:
    case NATS_CONNECTION_CLOSED:
    case NATS_CONNECTION_DISCONNECTED:
    case NATS_NO_SERVER:
    case NATS_STALE_CONNECTION:
    case NATS_NOT_YET_CONNECTED:
    case NATS_IO_ERROR:
    case NATS_SLOW_CONSUMER:
      return absl::UnavailableError(detail);
    default:
      return absl::InternalError(detail);
  }
}

std::string HeaderOf(natsMsg* msg, const char* key) {
  const char* value = nullptr;
  if (natsMsgHeader_Get(msg, key, &value) != NATS_OK || value == nullptr) return "";
  return value;
}

StoredMessage ToStored(natsMsg* msg) {
  StoredMessage out;
  out.sequence = natsMsg_GetSequence(msg);
  out.time_ns = natsMsg_GetTime(msg);
  const char* subject = natsMsg_GetSubject(msg);
  if (subject != nullptr) out.subject = subject;
  const char* data = natsMsg_GetData(msg);
  const int length = natsMsg_GetDataLength(msg);
  if (data != nullptr && length > 0) out.data.assign(data, static_cast<size_t>(length));
  out.header = HeaderOf(msg, kMessageHeader);
  out.id = HeaderOf(msg, "Nats-Msg-Id");
  return out;
}

// A natsMsg ready to publish, with its expectations set as headers (the C client's jsPubOptions
// set the same headers; here they also travel with a resent message).
absl::StatusOr<natsMsg*> MakeMessage(const OutgoingMessage& m) {
  natsMsg* msg = nullptr;
  natsStatus s = natsMsg_Create(&msg, m.subject.c_str(), nullptr, m.data.data(),
                                static_cast<int>(m.data.size()));
  if (s == NATS_OK && !m.header.empty())
    s = natsMsgHeader_Set(msg, kMessageHeader, m.header.c_str());
  if (s != NATS_OK) {
    natsMsg_Destroy(msg);
    return ToStatus(s, static_cast<jsErrCode>(0), "message");
  }
  return msg;
}

void FillPubOptions(const OutgoingMessage& m, jsPubOptions* options) {
  jsPubOptions_Init(options);
  options->MaxWait = m.timeout_ms;
  if (!m.id.empty()) options->MsgId = m.id.c_str();
  if (m.expect_last_sequence > 0) options->ExpectLastSeq = m.expect_last_sequence;
  if (!m.expect_last_id.empty()) options->ExpectLastMsgId = m.expect_last_id.c_str();
}

}  // namespace

struct NatsClient::State {
  const NatsClientOptions* options = nullptr;
  Mutex owners_mu;
  std::atomic<bool> connected{false};
};

namespace {

void OnAck(jsCtx*, natsMsg* msg, jsPubAck* ack, jsPubAckErr* error, void* closure) {
  const NatsClientOptions* options = static_cast<const NatsClientOptions*>(closure);
  PublishOutcome outcome;
  const char* subject = natsMsg_GetSubject(msg);
  if (subject != nullptr) outcome.subject = subject;
  outcome.id = HeaderOf(msg, "Nats-Msg-Id");
  const std::string& id = outcome.id;
  if (ack != nullptr) {
    outcome.sequence = ack->Sequence;
    outcome.duplicate = ack->Duplicate;
  } else if (error != nullptr) {
    outcome.sequence = ToStatus(error->Err, error->ErrCode,
                                absl::StrCat("publish ", id, error->ErrText != nullptr ? ": " : "",
                                             error->ErrText != nullptr ? error->ErrText : ""));
  } else {
    outcome.sequence = absl::InternalError("nats: publish: no answer");
  }
  if (options->on_published) options->on_published(std::move(outcome));
  natsMsg_Destroy(msg);
}

void OnDisconnected(natsConnection*, void* closure) {
  auto* state = static_cast<NatsClient::State*>(closure);
  state->connected = false;
  if (state->options->on_connection) state->options->on_connection(false);
}

void OnReconnected(natsConnection*, void* closure) {
  auto* state = static_cast<NatsClient::State*>(closure);
  state->connected = true;
  if (state->options->on_connection) state->options->on_connection(true);
}

}  // namespace

NatsClient::NatsClient(NatsClientOptions options)
    : options_(std::move(options)), state_(std::make_unique<State>()) {
  state_->options = &options_;
}

absl::StatusOr<std::unique_ptr<NatsClient>> NatsClient::Connect(NatsClientOptions options) {
  if (options.urls.empty()) return absl::InvalidArgumentError("nats_url: no URL");
  OpenLibrary();
  std::unique_ptr<NatsClient> client(new NatsClient(std::move(options)));
  natsOptions* opts = nullptr;
  natsStatus s = natsOptions_Create(&opts);
  std::vector<const char*> urls;
  for (const std::string& url : client->options_.urls) urls.push_back(url.c_str());
  if (s == NATS_OK) s = natsOptions_SetServers(opts, urls.data(), static_cast<int>(urls.size()));
  if (s == NATS_OK && !client->options_.name.empty()) {
    s = natsOptions_SetName(opts, client->options_.name.c_str());
  }
  // Never give up: a replicated scene's server waits for the cluster to come back.
  if (s == NATS_OK) s = natsOptions_SetMaxReconnect(opts, -1);
  if (s == NATS_OK) s = natsOptions_SetReconnectWait(opts, 100);
  if (s == NATS_OK) s = natsOptions_SetTimeout(opts, 1000);
  // A dead node is noticed within about two seconds.
  if (s == NATS_OK) s = natsOptions_SetPingInterval(opts, 1000);
  if (s == NATS_OK) s = natsOptions_SetMaxPingsOut(opts, 2);
  if (s == NATS_OK) s = natsOptions_UseGlobalMessageDelivery(opts, true);
  State* state = client->state_.get();
  if (s == NATS_OK) s = natsOptions_SetDisconnectedCB(opts, OnDisconnected, state);
  if (s == NATS_OK) s = natsOptions_SetReconnectedCB(opts, OnReconnected, state);
  // Connects in the background when no node answers now: the connection is made (and
  // OnReconnected runs) once one does.
  if (s == NATS_OK) s = natsOptions_SetRetryOnFailedConnect(opts, true, OnReconnected, state);
  if (s == NATS_OK) s = natsConnection_Connect(&client->connection_, opts);
  const bool connected_now = s == NATS_OK;
  if (s == NATS_NOT_YET_CONNECTED) s = NATS_OK;
  natsOptions_Destroy(opts);
  if (s != NATS_OK) return ToStatus(s, static_cast<jsErrCode>(0), "connect");
  state->connected = connected_now;
  jsOptions js_options;
  jsOptions_Init(&js_options);
  js_options.Wait = client->options_.request_timeout_ms;
  js_options.PublishAsync.MaxPending = 1 << 16;
  js_options.PublishAsync.StallWait = 0;
  js_options.PublishAsync.AckHandler = OnAck;
  js_options.PublishAsync.AckHandlerClosure = &client->options_;
  s = natsConnection_JetStream(&client->js_, client->connection_, &js_options);
  if (s != NATS_OK) return ToStatus(s, static_cast<jsErrCode>(0), "JetStream context");
  return client;
}

NatsClient::~NatsClient() {
  if (owners_ != nullptr) kvStore_Destroy(owners_);
  if (js_ != nullptr) jsCtx_Destroy(js_);
  if (connection_ != nullptr) {
    natsConnection_Close(connection_);
    natsConnection_Destroy(connection_);
  }
}

bool NatsClient::connected() const { return state_->connected.load(); }

absl::StatusOr<StreamState> NatsClient::EnsureStream(const std::string& stream,
                                                     const std::string& subjects, int replicas,
                                                     int64_t duplicates_ms) {
  jsStreamConfig config;
  jsStreamConfig_Init(&config);
  config.Name = stream.c_str();
  const char* subject_list[] = {subjects.c_str()};
  config.Subjects = subject_list;
  config.SubjectsLen = 1;
  config.Storage = js_FileStorage;
  config.Replicas = replicas;
  config.Duplicates = duplicates_ms * 1000 * 1000;
  config.AllowDirect = false;
  jsStreamInfo* info = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = js_AddStream(&info, js_, &config, nullptr, &code);
  if (s != NATS_OK) {
    // An existing stream (of this config or not) answers its state.
    if (info != nullptr) jsStreamInfo_Destroy(info);
    absl::StatusOr<StreamState> existing = GetStreamState(stream);
    if (existing.ok()) return existing;
    return ToStatus(s, code, absl::StrCat("create stream ", stream));
  }
  StreamState state{.first_sequence = info->State.FirstSeq,
                    .last_sequence = info->State.LastSeq,
                    .messages = info->State.Msgs,
                    .bytes = info->State.Bytes,
                    .last_time_ns = info->State.LastTime};
  jsStreamInfo_Destroy(info);
  return state;
}

absl::StatusOr<StreamState> NatsClient::GetStreamState(const std::string& stream) {
  jsStreamInfo* info = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = js_GetStreamInfo(&info, js_, stream.c_str(), nullptr, &code);
  if (s != NATS_OK) return ToStatus(s, code, absl::StrCat("stream ", stream));
  StreamState state{.first_sequence = info->State.FirstSeq,
                    .last_sequence = info->State.LastSeq,
                    .messages = info->State.Msgs,
                    .bytes = info->State.Bytes,
                    .last_time_ns = info->State.LastTime};
  jsStreamInfo_Destroy(info);
  return state;
}

absl::Status NatsClient::DeleteStream(const std::string& stream) {
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = js_DeleteStream(js_, stream.c_str(), nullptr, &code);
  return ToStatus(s, code, absl::StrCat("delete stream ", stream));
}

absl::Status NatsClient::Purge(const std::string& stream, uint64_t sequence) {
  jsOptions options;
  jsOptions_Init(&options);
  options.Wait = options_.request_timeout_ms;
  options.Stream.Purge.Sequence = sequence;
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = js_PurgeStream(js_, stream.c_str(), &options, &code);
  return ToStatus(s, code, absl::StrCat("purge stream ", stream));
}

absl::StatusOr<StoredMessage> NatsClient::GetMessage(const std::string& stream, uint64_t sequence) {
  natsMsg* msg = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = js_GetMsg(&msg, js_, stream.c_str(), sequence, nullptr, &code);
  if (s != NATS_OK) {
    return ToStatus(s, code, absl::StrCat("message ", sequence, " of stream ", stream));
  }
  StoredMessage out = ToStored(msg);
  natsMsg_Destroy(msg);
  return out;
}

absl::StatusOr<StoredMessage> NatsClient::GetLastMessage(const std::string& stream,
                                                         const std::string& subject) {
  natsMsg* msg = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = js_GetLastMsg(&msg, js_, stream.c_str(), subject.c_str(), nullptr, &code);
  if (s != NATS_OK) {
    return ToStatus(s, code, absl::StrCat("last message of ", subject, " in stream ", stream));
  }
  StoredMessage out = ToStored(msg);
  natsMsg_Destroy(msg);
  return out;
}

absl::StatusOr<uint64_t> NatsClient::Publish(const OutgoingMessage& message) {
  COLLIDE_ASSIGN_OR_RETURN(natsMsg * msg, MakeMessage(message));
  jsPubOptions options;
  FillPubOptions(message, &options);
  jsPubAck* ack = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = js_PublishMsg(&ack, js_, msg, &options, &code);
  natsMsg_Destroy(msg);
  if (s != NATS_OK) return ToStatus(s, code, absl::StrCat("publish ", message.id));
  const uint64_t sequence = ack->Sequence;
  jsPubAck_Destroy(ack);
  return sequence;
}

absl::Status NatsClient::PublishAsync(const OutgoingMessage& message) {
  COLLIDE_ASSIGN_OR_RETURN(natsMsg * msg, MakeMessage(message));
  jsPubOptions options;
  FillPubOptions(message, &options);
  natsStatus s = js_PublishMsgAsync(js_, &msg, &options);
  natsMsg_Destroy(msg);  // a no-op once the library took it
  return ToStatus(s, static_cast<jsErrCode>(0), absl::StrCat("publish ", message.id));
}

NatsClient::Subscription::~Subscription() {
  if (sub_ != nullptr) {
    // Drain stops the consumer and waits (below) until no callback runs, so that `deliver_` is
    // not destroyed under one (Unsubscribe alone does not wait with the global delivery pool).
    // The messages already received are still delivered meanwhile: the follower ignores them
    // once it stopped.
    if (natsSubscription_Drain(sub_) == NATS_OK) {
      natsSubscription_WaitForDrainCompletion(sub_, 10000);
    } else {
      natsSubscription_Unsubscribe(sub_);
    }
    natsSubscription_Destroy(sub_);
  }
}

namespace {
// The idle heartbeat of a follower's ordered consumer (see Follow).
constexpr int64_t kFollowHeartbeatNs = 1'000'000'000;
}  // namespace

absl::StatusOr<std::unique_ptr<NatsClient::Subscription>> NatsClient::Follow(
    const std::string& stream, const std::string& subject, uint64_t start,
    std::function<void(DeliveredMessage)> deliver) {
  std::unique_ptr<Subscription> subscription(new Subscription());
  subscription->deliver_ =
      std::make_unique<std::function<void(DeliveredMessage)>>(std::move(deliver));
  jsSubOptions options;
  jsSubOptions_Init(&options);
  options.Stream = stream.c_str();
  options.Ordered = true;
  // An ordered consumer is ephemeral and lives on one node: when that node stops, the library
  // notices only by missed heartbeats and then recreates the consumer on another. Its default
  // of 5 s left a follower behind for about 14 s after a NATS node was killed; at 1 s it
  // resumes within a few seconds (a heartbeat a second per followed scene).
  options.Config.Heartbeat = kFollowHeartbeatNs;
  options.Config.DeliverPolicy = start > 0 ? js_DeliverByStartSequence : js_DeliverAll;
  options.Config.OptStartSeq = start;
  auto on_message = [](natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
    auto* deliver = static_cast<std::function<void(DeliveredMessage)>*>(closure);
    DeliveredMessage out;
    out.message = ToStored(msg);
    jsMsgMetaData* meta = nullptr;
    if (natsMsg_GetMetaData(&meta, msg) == NATS_OK && meta != nullptr) {
      out.message.sequence = meta->Sequence.Stream;
      out.message.time_ns = meta->Timestamp;
      out.pending = meta->NumPending;
      jsMsgMetaData_Destroy(meta);
    }
    natsMsg_Destroy(msg);
    (*deliver)(std::move(out));
  };
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = js_Subscribe(&subscription->sub_, js_, subject.c_str(), on_message,
                              subscription->deliver_.get(), nullptr, &options, &code);
  if (s != NATS_OK) {
    subscription->sub_ = nullptr;
    return ToStatus(s, code, absl::StrCat("follow ", subject));
  }
  return subscription;
}

absl::StatusOr<kvStore*> NatsClient::Owners() {
  MutexLock lock(&state_->owners_mu);
  if (owners_ != nullptr) return owners_;
  kvStore* kv = nullptr;
  natsStatus s = js_KeyValue(&kv, js_, kOwnersBucket);
  if (s == NATS_NOT_FOUND) {
    kvConfig config;
    kvConfig_Init(&config);
    config.Bucket = kOwnersBucket;
    config.History = 1;
    config.Replicas = options_.replicas;
    config.StorageType = js_FileStorage;
    s = js_CreateKeyValue(&kv, js_, &config);
    // Created by another server meanwhile.
    if (s != NATS_OK) s = js_KeyValue(&kv, js_, kOwnersBucket);
  }
  if (s != NATS_OK) return ToStatus(s, static_cast<jsErrCode>(0), "the owners' bucket");
  owners_ = kv;
  return owners_;
}

absl::StatusOr<KvValue> NatsClient::KvGet(const std::string& key) {
  COLLIDE_ASSIGN_OR_RETURN(kvStore * kv, Owners());
  kvEntry* entry = nullptr;
  natsStatus s = kvStore_Get(&entry, kv, key.c_str());
  if (s != NATS_OK) return ToStatus(s, static_cast<jsErrCode>(0), absl::StrCat("owner of ", key));
  KvValue out;
  const char* value = static_cast<const char*>(kvEntry_Value(entry));
  const int length = kvEntry_ValueLen(entry);
  if (value != nullptr && length > 0) out.value.assign(value, static_cast<size_t>(length));
  out.revision = kvEntry_Revision(entry);
  kvEntry_Destroy(entry);
  return out;
}

absl::StatusOr<uint64_t> NatsClient::KvCreate(const std::string& key, const std::string& value) {
  COLLIDE_ASSIGN_OR_RETURN(kvStore * kv, Owners());
  uint64_t revision = 0;
  natsStatus s =
      kvStore_Create(&revision, kv, key.c_str(), value.data(), static_cast<int>(value.size()));
  if (s == NATS_OK) return revision;
  absl::Status status = ToStatus(s, static_cast<jsErrCode>(0), absl::StrCat("create ", key));
  // The C client reports "wrong last sequence" for an existing key, without the code.
  const char* last = nats_GetLastError(nullptr);
  if (last != nullptr && std::strstr(last, "wrong last sequence") != nullptr) {
    return absl::AlreadyExistsError(status.message());
  }
  return status;
}

absl::StatusOr<uint64_t> NatsClient::KvUpdate(const std::string& key, const std::string& value,
                                              uint64_t revision) {
  COLLIDE_ASSIGN_OR_RETURN(kvStore * kv, Owners());
  uint64_t updated = 0;
  natsStatus s = kvStore_Update(&updated, kv, key.c_str(), value.data(),
                                static_cast<int>(value.size()), revision);
  if (s == NATS_OK) return updated;
  absl::Status status = ToStatus(s, static_cast<jsErrCode>(0), absl::StrCat("update ", key));
  const char* last = nats_GetLastError(nullptr);
  if (last != nullptr && std::strstr(last, "wrong last sequence") != nullptr) {
    return absl::AbortedError(status.message());
  }
  return status;
}

absl::Status NatsClient::KvDelete(const std::string& key) {
  COLLIDE_ASSIGN_OR_RETURN(kvStore * kv, Owners());
  return ToStatus(kvStore_Purge(kv, key.c_str(), nullptr), static_cast<jsErrCode>(0),
                  absl::StrCat("delete ", key));
}

NatsClient::Watch::~Watch() {
  if (watcher_ != nullptr) {
    kvWatcher_Stop(watcher_);
    kvWatcher_Destroy(watcher_);
  }
}

void NatsClient::Watch::Stop() {
  if (watcher_ != nullptr) kvWatcher_Stop(watcher_);
}

absl::StatusOr<std::optional<std::pair<std::string, KvValue>>> NatsClient::Watch::Next(
    int64_t timeout_ms) {
  kvEntry* entry = nullptr;
  natsStatus s = kvWatcher_Next(&entry, watcher_, timeout_ms);
  if (s == NATS_TIMEOUT) return std::nullopt;
  if (s != NATS_OK) return ToStatus(s, static_cast<jsErrCode>(0), "watch owners");
  if (entry == nullptr) return std::nullopt;
  std::pair<std::string, KvValue> out;
  out.first = kvEntry_Key(entry);
  const char* value = static_cast<const char*>(kvEntry_Value(entry));
  const int length = kvEntry_ValueLen(entry);
  if (value != nullptr && length > 0) out.second.value.assign(value, static_cast<size_t>(length));
  out.second.revision = kvEntry_Revision(entry);
  const kvOperation op = kvEntry_Operation(entry);
  out.second.deleted = op == kvOp_Delete || op == kvOp_Purge;
  kvEntry_Destroy(entry);
  return out;
}

absl::StatusOr<std::unique_ptr<NatsClient::Watch>> NatsClient::WatchOwners() {
  COLLIDE_ASSIGN_OR_RETURN(kvStore * kv, Owners());
  std::unique_ptr<Watch> watch(new Watch());
  natsStatus s = kvStore_WatchAll(&watch->watcher_, kv, nullptr);
  if (s != NATS_OK) {
    watch->watcher_ = nullptr;
    return ToStatus(s, static_cast<jsErrCode>(0), "watch owners");
  }
  return watch;
}

}  // namespace collide
