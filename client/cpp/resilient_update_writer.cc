#include "client/cpp/resilient_update_writer.h"

#include <algorithm>
#include <random>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "client/cpp/client.h"
#include "client/cpp/grpc_status.h"

namespace collide::client {
namespace {

// How often the reader thread looks for a shutdown while it waits for the channel to connect.
constexpr absl::Duration kConnectSlice = absl::Milliseconds(100);
// How long Close waits for the server to end a stream gracefully beyond the caller's deadline.
constexpr absl::Duration kCloseGrace = absl::Seconds(1);

uint64_t RandomClientId() {
  std::random_device seed;
  std::mt19937_64 rng((static_cast<uint64_t>(seed()) << 32) ^ seed() ^
                      static_cast<uint64_t>(absl::ToUnixNanos(absl::Now())));
  uint64_t id = 0;
  while (id == 0) id = rng();
  return id;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ResilientUpdateWriter>> ResilientUpdateWriter::Open(
    Client* client, std::string_view scene, ResilientUpdateWriterOptions options) {
  if (client == nullptr) return absl::InvalidArgumentError("client: must not be null");
  if (scene.empty()) return absl::InvalidArgumentError("scene: must not be empty");
  if (options.first_sequence == 0) {
    return absl::InvalidArgumentError("first_sequence: must be at least 1");
  }
  if (options.max_pending == 0) {
    return absl::InvalidArgumentError("max_pending: must be at least 1");
  }
  if (!(options.backoff_multiplier >= 1.0)) {
    return absl::InvalidArgumentError("backoff_multiplier: must be at least 1");
  }
  if (options.initial_backoff < absl::ZeroDuration() ||
      options.max_backoff < options.initial_backoff) {
    return absl::InvalidArgumentError("initial_backoff: must be >= 0 and at most max_backoff");
  }
  uint64_t client_id = options.client_id != 0 ? options.client_id : RandomClientId();
  std::unique_ptr<ResilientUpdateWriter> writer(
      new ResilientUpdateWriter(client, std::string(scene), std::move(options), client_id));
  writer->reader_ = std::thread([w = writer.get()] { w->Run(); });
  return writer;
}

ResilientUpdateWriter::ResilientUpdateWriter(Client* client, std::string scene,
                                             ResilientUpdateWriterOptions options,
                                             uint64_t client_id)
    : client_(client),
      stub_(v1::Collide::NewStub(client->channel())),
      scene_(std::move(scene)),
      options_(std::move(options)),
      client_id_(client_id),
      next_sequence_(options_.first_sequence),
      acknowledged_through_(options_.first_sequence - 1) {}

ResilientUpdateWriter::~ResilientUpdateWriter() {
  {
    absl::MutexLock lock(&mu_);
    shutdown_ = true;
    if (live_context_ != nullptr) live_context_->TryCancel();
  }
  if (reader_.joinable()) reader_.join();
}

uint64_t ResilientUpdateWriter::next_sequence() const {
  absl::MutexLock lock(&mu_);
  return next_sequence_;
}

size_t ResilientUpdateWriter::pending() const {
  absl::MutexLock lock(&mu_);
  return pending_.size();
}

uint64_t ResilientUpdateWriter::latest_version() const {
  absl::MutexLock lock(&mu_);
  return latest_version_;
}

absl::Status ResilientUpdateWriter::status() const {
  absl::MutexLock lock(&mu_);
  return failed_;
}

ResilientUpdateWriterStats ResilientUpdateWriter::stats() const {
  absl::MutexLock lock(&mu_);
  ResilientUpdateWriterStats stats = stats_;
  stats.sent = next_sequence_ - options_.first_sequence;  // every Send numbers one batch
  return stats;
}

std::vector<RejectedBatch> ResilientUpdateWriter::TakeRejected() {
  absl::MutexLock lock(&mu_);
  return std::exchange(rejected_, {});
}

std::vector<v1::UpdateBatch> ResilientUpdateWriter::TakeUnacknowledged() {
  // write_mu_ first (the lock order), so that no Send is between numbering a batch and writing it.
  absl::MutexLock write_lock(&write_mu_);
  absl::MutexLock lock(&mu_);
  std::vector<v1::UpdateBatch> batches;
  batches.reserve(pending_.size());
  for (const Pending& pending : pending_) batches.push_back(*pending.batch);
  pending_.clear();
  return batches;
}

absl::StatusOr<uint64_t> ResilientUpdateWriter::Send(v1::UpdateBatch batch) {
  if (batch.scene().empty()) {
    batch.set_scene(scene_);
  } else if (batch.scene() != scene_) {
    return absl::InvalidArgumentError(
        absl::StrCat("scene: \"", batch.scene(), "\" is not the writer's scene \"", scene_, "\""));
  }
  // Reserve room first, without write_mu_: the reader thread needs write_mu_ to reconnect, and
  // only its acks make room.
  {
    absl::MutexLock lock(&mu_);
    auto stop_waiting = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !failed_.ok() || closing_ || shutdown_ ||
             pending_.size() + reserved_ < options_.max_pending;
    };
    if (!stop_waiting() && options_.send_timeout > absl::ZeroDuration()) {
      mu_.AwaitWithTimeout(absl::Condition(&stop_waiting), options_.send_timeout);
    }
    if (!failed_.ok()) return failed_;
    if (closing_ || shutdown_) {
      return absl::FailedPreconditionError("update writer: already closed");
    }
    if (pending_.size() + reserved_ >= options_.max_pending) {
      return absl::ResourceExhaustedError(absl::StrCat("update writer: ", pending_.size(),
                                                       " batches unacknowledged (max_pending ",
                                                       options_.max_pending, ")"));
    }
    ++reserved_;
  }
  absl::MutexLock write_lock(&write_mu_);
  std::shared_ptr<const v1::UpdateBatch> kept;
  uint64_t sequence;
  {
    absl::MutexLock lock(&mu_);
    --reserved_;
    if (!failed_.ok()) return failed_;
    if (closing_ || shutdown_) {
      return absl::FailedPreconditionError("update writer: already closed");
    }
    sequence = next_sequence_++;
    batch.set_client_id(client_id_);
    batch.set_client_sequence(sequence);
    kept = std::make_shared<const v1::UpdateBatch>(std::move(batch));
    pending_.push_back(Pending{sequence, kept});
  }
  // Without a live stream the batch waits for the reconnect, which writes every pending batch.
  if (stream_ != nullptr && !stream_broken_ && !stream_->Write(*kept)) stream_broken_ = true;
  return sequence;
}

absl::Status ResilientUpdateWriter::WaitAcknowledged(uint64_t sequence, absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return acknowledged_through_ >= sequence || !failed_.ok() || shutdown_;
  };
  mu_.AwaitWithDeadline(absl::Condition(&done), deadline);
  if (acknowledged_through_ >= sequence) return absl::OkStatus();
  if (!failed_.ok()) return failed_;
  if (shutdown_) return absl::CancelledError("update writer: closed");
  return absl::DeadlineExceededError(absl::StrCat(
      "update writer: batch ", sequence, " not acknowledged in time (acknowledged through ",
      acknowledged_through_, ", ", pending_.size(), " pending)"));
}

absl::Status ResilientUpdateWriter::Flush(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return (pending_.empty() && reserved_ == 0) || !failed_.ok() || shutdown_;
  };
  mu_.AwaitWithDeadline(absl::Condition(&done), deadline);
  // A failed writer says so even with nothing left pending (its batches may have been taken
  // back with TakeUnacknowledged).
  if (!failed_.ok()) return failed_;
  if (pending_.empty() && reserved_ == 0) return absl::OkStatus();
  if (shutdown_) return absl::CancelledError("update writer: closed");
  return absl::DeadlineExceededError(
      absl::StrCat("update writer: ", pending_.size(), " batches not acknowledged in time"));
}

absl::Status ResilientUpdateWriter::Close(absl::Time deadline) {
  absl::Status flushed = Flush(deadline);
  {
    absl::MutexLock lock(&mu_);
    closing_ = true;
  }
  bool graceful = false;
  if (flushed.ok()) {
    absl::MutexLock write_lock(&write_mu_);
    if (stream_ != nullptr && !stream_broken_) {
      stream_->WritesDone();
      graceful = true;
    }
  }
  {
    absl::MutexLock lock(&mu_);
    if (graceful) {
      mu_.AwaitWithDeadline(absl::Condition(&reader_done_),
                            std::max(deadline, absl::Now() + kCloseGrace));
    }
    shutdown_ = true;
    if (live_context_ != nullptr) live_context_->TryCancel();
  }
  if (reader_.joinable()) reader_.join();
  return flushed;
}

bool ResilientUpdateWriter::Done() const {
  return shutdown_ || !failed_.ok() || (closing_ && pending_.empty() && reserved_ == 0);
}

void ResilientUpdateWriter::Fail(absl::Status status) {
  absl::MutexLock lock(&mu_);
  if (failed_.ok()) failed_ = std::move(status);
}

bool ResilientUpdateWriter::SleepOrShutdown(absl::Duration wait) {
  absl::MutexLock lock(&mu_);
  auto done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return Done(); };
  mu_.AwaitWithTimeout(absl::Condition(&done), wait);
  return Done();
}

void ResilientUpdateWriter::Run() {
  absl::Duration backoff = options_.initial_backoff;
  // When the writer last had a working stream (or was opened): the give-up clock.
  absl::Time healthy_at = absl::Now();
  absl::Status last_error = absl::UnavailableError("not connected yet");
  // The last stream ended on a batch refused unapplied (Error.moved_to, or UNAVAILABLE): that
  // answer (a redirect names the server that writes the scene).
  absl::Status refusal;
  bool reconnect = false;
  while (true) {
    // Wait for the channel (it reconnects with its own backoff, bounded by the client's
    // max_reconnect_backoff), looking for a shutdown and the give-up limit in between.
    bool connected = false;
    while (!connected) {
      {
        absl::MutexLock lock(&mu_);
        if (Done()) break;
      }
      absl::Time now = absl::Now();
      absl::Time give_up = healthy_at + options_.give_up_after;
      if (now >= give_up && !refusal.ok()) {
        absl::Status gave_up(
            refusal.code(),
            absl::StrCat(
                "update writer: gave up after ", absl::FormatDuration(options_.give_up_after),
                " of batches refused unapplied by servers that could not write the scene: ",
                refusal.message()));
        refusal.ForEachPayload([&](absl::string_view url, const absl::Cord& payload) {
          gave_up.SetPayload(url, payload);
        });
        Fail(std::move(gave_up));
        break;
      }
      if (now >= give_up) {
        Fail(absl::UnavailableError(absl::StrCat(
            "update writer: gave up reconnecting to ", client_->options().address, " after ",
            absl::FormatDuration(options_.give_up_after), ": ", last_error.ToString())));
        break;
      }
      connected = client_->channel()->WaitForConnected(
          absl::ToChronoTime(std::min(give_up, now + kConnectSlice)));
    }
    if (!connected) break;
    Stream* stream = Connect(reconnect);
    if (stream == nullptr) break;
    reconnect = true;
    bool healthy = false;
    absl::Status end = ReadAcks(stream, &healthy);
    {
      absl::MutexLock lock(&mu_);
      if (Done()) break;
    }
    if (!IsRetryableStreamEnd(end)) {
      Fail(end);
      break;
    }
    if (end.ok()) end = absl::UnavailableError("the server ended the stream");
    last_error = end;
    {
      absl::MutexLock lock(&mu_);
      refusal = std::exchange(refusal_, absl::OkStatus());
    }
    if (healthy) {
      healthy_at = absl::Now();
      backoff = options_.initial_backoff;
    }
    if (SleepOrShutdown(backoff)) break;
    backoff = std::min(options_.max_backoff, backoff * options_.backoff_multiplier);
  }
  absl::MutexLock lock(&mu_);
  reader_done_ = true;
}

ResilientUpdateWriter::Stream* ResilientUpdateWriter::Connect(bool reconnect) {
  absl::MutexLock write_lock(&write_mu_);
  std::vector<std::shared_ptr<const v1::UpdateBatch>> resend;
  {
    absl::MutexLock lock(&mu_);
    if (Done()) return nullptr;
    context_ = client_->NewContext(scene_, /*unary=*/false);
    stream_ = stub_->UpdateStream(context_.get());
    stream_broken_ = false;
    live_context_ = context_.get();
    if (reconnect) ++stats_.reconnects;
    resend.reserve(pending_.size());
    for (const Pending& pending : pending_) resend.push_back(pending.batch);
  }
  uint64_t written = 0;
  for (const std::shared_ptr<const v1::UpdateBatch>& batch : resend) {
    if (!stream_->Write(*batch)) {
      stream_broken_ = true;
      break;
    }
    ++written;
  }
  if (reconnect) {
    absl::MutexLock lock(&mu_);
    stats_.resent += written;
  }
  return stream_.get();
}

absl::Status ResilientUpdateWriter::ReadAcks(Stream* stream, bool* healthy) {
  v1::UpdateAck ack;
  bool refused = false;
  while (stream->Read(&ack)) {
    // After a refusal the stream's remaining acks (the same answer for the batches behind
    // it) are dropped: those batches are resent too.
    if (refused) continue;
    if (!HandleAck(ack, &refused)) {
      // A batch refused unapplied (redirected, or UNAVAILABLE): this stream is no use, and
      // the next one starts from the backoff reached unless this one made progress.
      absl::MutexLock lock(&mu_);
      if (live_context_ != nullptr) live_context_->TryCancel();
      continue;
    }
    *healthy = true;
  }
  // Finish with no write in progress, then drop the stream; Sends queue until the reconnect.
  absl::MutexLock write_lock(&write_mu_);
  absl::Status status = FromGrpcStatus(stream_->Finish());
  {
    absl::MutexLock lock(&mu_);
    live_context_ = nullptr;
  }
  stream_.reset();
  context_.reset();
  return status;
}

bool ResilientUpdateWriter::HandleAck(const v1::UpdateAck& ack, bool* refused) {
  RejectedBatch rejected;
  {
    absl::MutexLock lock(&mu_);
    const bool moved = ack.has_error() && !ack.error().moved_to().empty();
    const bool unavailable =
        ack.has_error() && ack.error().code() == static_cast<int>(absl::StatusCode::kUnavailable);
    if ((moved || unavailable) && !pending_.empty() &&
        ack.client_sequence() == pending_.front().sequence) {
      // Not applied: another server writes the scene (this one follows it, or the scene moved
      // away), or its owner cannot write it just now (its lease is being renewed, its replicated
      // log is not answering, the server is stopping). The server answers the stream's later
      // batches the same way. Kept, and sent again on the next stream, which the router sends
      // to the server that writes the scene.
      ++(moved ? stats_.redirected : stats_.unavailable);
      *refused = true;
      refusal_ = AckStatus(ack);
      return false;
    }
    if (pending_.empty() || ack.client_sequence() != pending_.front().sequence) {
      if (failed_.ok()) {
        failed_ = absl::DataLossError(absl::StrCat(
            "update writer: ack for sequence ", ack.client_sequence(), ", expected ",
            pending_.empty() ? std::string("none") : absl::StrCat(pending_.front().sequence)));
      }
      return false;
    }
    acknowledged_through_ = ack.client_sequence();
    ++stats_.acknowledged;
    if (!ack.has_error()) {
      if (ack.duplicate()) ++stats_.duplicates;
      latest_version_ = std::max(latest_version_, ack.version());
      pending_.pop_front();
      return true;
    }
    ++stats_.rejected;
    rejected.sequence = ack.client_sequence();
    rejected.status = AckStatus(ack);
    rejected.batch = *pending_.front().batch;
    pending_.pop_front();
    if (!options_.on_rejected) {
      rejected_.push_back(std::move(rejected));
      return true;
    }
  }
  options_.on_rejected(rejected);
  return true;
}

}  // namespace collide::client
