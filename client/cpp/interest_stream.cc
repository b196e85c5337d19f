#include "client/cpp/interest_stream.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/cpp/client.h"
#include "client/cpp/grpc_status.h"

namespace collide::client {

InterestStream::InterestStream(Client* client, std::string scene, InterestOptions options)
    : client_(client),
      stub_(v1::Collide::NewStub(client->channel())),
      scene_(std::move(scene)),
      options_(options) {}

absl::StatusOr<std::unique_ptr<InterestStream>> InterestStream::Open(
    Client* client, std::string_view scene, std::vector<v1::Observer> observers,
    InterestOptions options) {
  std::unique_ptr<InterestStream> stream(new InterestStream(client, std::string(scene), options));
  {
    absl::MutexLock lock(&stream->mu_);
    for (v1::Observer& o : observers) stream->declared_[o.id()] = std::move(o);
  }
  absl::Status status = stream->Connect();
  if (!status.ok()) return status;
  return stream;
}

InterestStream::~InterestStream() { Finish().IgnoreError(); }

absl::Status InterestStream::Connect() {
  absl::MutexLock lock(&mu_);
  if (cancelled_) return absl::CancelledError("interest: cancelled");
  context_ = client_->NewContext(scene_, /*unary=*/false);
  stream_ = stub_->Interest(context_.get());
  if (stream_ == nullptr) return absl::InternalError("interest: could not be opened");
  broken_ = false;
  first_sent_ = false;
  v1::InterestRequest first;
  first.set_max_queued_events(options_.max_queued_events);
  for (const auto& [id, observer] : declared_) *first.add_observers() = observer;
  // A failed write shows as the stream's end in Read.
  Send(std::move(first)).IgnoreError();
  return absl::OkStatus();
}

absl::Status InterestStream::Send(v1::InterestRequest request) {
  if (broken_ || stream_ == nullptr)
    return absl::UnavailableError("interest: the stream is broken");
  if (!first_sent_) request.set_scene(scene_);
  if (!stream_->Write(request)) {
    broken_ = true;
    return absl::UnavailableError("interest: the stream is broken");
  }
  first_sent_ = true;
  return absl::OkStatus();
}

absl::Status InterestStream::Upsert(const std::vector<v1::Observer>& observers) {
  absl::MutexLock lock(&mu_);
  v1::InterestRequest request;
  for (const v1::Observer& o : observers) {
    declared_[o.id()] = o;
    *request.add_observers() = o;
  }
  return Send(std::move(request));
}

absl::Status InterestStream::Remove(const std::vector<uint64_t>& ids) {
  absl::MutexLock lock(&mu_);
  v1::InterestRequest request;
  for (uint64_t id : ids) {
    declared_.erase(id);
    request.add_removes(id);
  }
  return Send(std::move(request));
}

void InterestStream::Take(const v1::InterestResponse& message) {
  absl::MutexLock lock(&mu_);
  auto declared = [&](uint64_t id) { return declared_.contains(id); };
  if (message.has_snapshot()) {
    sets_.clear();
    for (const v1::RelevantSet& s : message.snapshot().sets()) {
      if (declared(s.observer_id())) {
        sets_[s.observer_id()] = std::set<uint64_t>(s.body_ids().begin(), s.body_ids().end());
      }
    }
    return;
  }
  for (const v1::ObserverDelta& d : message.update().deltas()) {
    // Deltas of an observer removed meanwhile are ignored.
    if (!declared(d.observer_id())) continue;
    std::set<uint64_t>& set = sets_[d.observer_id()];
    if (d.full()) set.clear();
    for (uint64_t id : d.left()) set.erase(id);
    set.insert(d.entered().begin(), d.entered().end());
  }
  for (auto it = sets_.begin(); it != sets_.end();) {
    it = declared(it->first) ? std::next(it) : sets_.erase(it);
  }
}

absl::StatusOr<v1::InterestResponse> InterestStream::Read() {
  if (final_.has_value()) return *final_;
  absl::Time broken_since = absl::InfinitePast();
  absl::Duration backoff = options_.initial_backoff;
  while (true) {
    Stream* stream;
    {
      absl::MutexLock lock(&mu_);
      stream = stream_.get();
    }
    v1::InterestResponse message;
    if (stream != nullptr && stream->Read(&message)) {
      Take(message);
      return message;
    }
    absl::Status status;
    bool cancelled;
    {
      absl::MutexLock lock(&mu_);
      status = stream_ != nullptr ? FromGrpcStatus(stream_->Finish()) : absl::UnavailableError("");
      stream_.reset();
      broken_ = true;
      cancelled = cancelled_;
    }
    if (cancelled) {
      final_ = absl::CancelledError("interest: cancelled");
      return *final_;
    }
    if (!options_.reconnect || !IsRetryableStreamEnd(status)) {
      final_ = status.ok() ? absl::UnavailableError("interest: the stream ended") : status;
      return *final_;
    }
    if (broken_since == absl::InfinitePast()) broken_since = absl::Now();
    if (absl::Now() - broken_since > options_.give_up_after) {
      final_ = absl::UnavailableError(absl::StrCat("interest: could not reopen the stream for ",
                                                   absl::FormatDuration(options_.give_up_after),
                                                   " (last: ", status.ToString(), ")"));
      return *final_;
    }
    absl::SleepFor(backoff);
    backoff = std::min(options_.max_backoff, backoff * options_.backoff_multiplier);
    if (Connect().ok()) ++reconnects_;
  }
}

const std::set<uint64_t>* InterestStream::Set(uint64_t id) const {
  auto it = sets_.find(id);
  return it == sets_.end() ? nullptr : &it->second;
}

void InterestStream::Cancel() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
  if (context_ != nullptr) context_->TryCancel();
}

absl::Status InterestStream::Finish() {
  if (final_.has_value()) return *final_;
  Cancel();
  absl::MutexLock lock(&mu_);
  if (stream_ != nullptr) {
    v1::InterestResponse ignored;
    while (stream_->Read(&ignored)) {
    }
    stream_->Finish().ok();
    stream_.reset();
  }
  final_ = absl::CancelledError("interest: cancelled");
  return *final_;
}

}  // namespace collide::client
