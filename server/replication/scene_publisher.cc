#include "server/replication/scene_publisher.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/field_error.h"
#include "server/replication/stream_message.h"
#include "store/crc32c.h"

namespace collide {

ScenePublisher::ScenePublisher(PublisherStart start, std::function<void()> on_trouble,
                               std::function<void()> on_unsent)
    : start_(std::move(start)),
      names_(NamesOf(start_.scene)),
      on_trouble_(std::move(on_trouble)),
      on_unsent_(std::move(on_unsent)),
      next_sequence_(start_.next_sequence),
      last_log_sequence_(start_.last_log_sequence),
      stored_through_(start_.next_sequence - 1),
      stored_log_sequence_(start_.last_log_sequence) {}

absl::StatusOr<ReplicationPosition> ScenePublisher::Reserve(Clock::time_point now) {
  MutexLock lock(&mu_);
  switch (state_) {
    case State::kWriting:
      break;
    case State::kResolving:
      return FieldStatus(
          absl::StatusCode::kUnavailable, "scene",
          absl::StrCat("scene \"", start_.scene, "\": the replicated log did not store a write (",
                       last_error_.message(), "); writes are refused until it answers again"));
    case State::kFenced:
    case State::kClosed:
      return final_error_;
  }
  if (now >= lease_until_) {
    return FieldStatus(absl::StatusCode::kUnavailable, "scene",
                       absl::StrCat("scene \"", start_.scene,
                                    "\": this server's lease on it ran out before the owners' "
                                    "bucket renewed it; writes wait for it to answer"));
  }
  reserved_ = true;
  return ReplicationPosition{
      .incarnation = start_.incarnation, .epoch = start_.epoch, .sequence = next_sequence_};
}

uint64_t ScenePublisher::QueueLocked(const std::string& subject, std::string header,
                                     absl::string_view data, bool log) {
  const uint64_t sequence = next_sequence_++;
  Entry entry;
  entry.sequence = sequence;
  entry.log = log;
  entry.message.sequence = sequence;
  entry.message.subject = subject;
  entry.message.header = std::move(header);
  entry.message.data = std::string(data);
  entry.message.id = MessageId(start_.incarnation, start_.epoch, sequence);
  entry.message.timeout_ms = start_.timeout_ms;
  // Fenced by the previous message: ours, or the stream's last one when this is the first.
  if (sequence > 1) entry.message.expect_last_sequence = sequence - 1;
  entry.message.expect_last_id = sequence == start_.next_sequence
                                     ? start_.last_id
                                     : MessageId(start_.incarnation, start_.epoch, sequence - 1);
  queue_.push_back(std::move(entry));
  if (log) last_log_sequence_ = sequence;
  return sequence;
}

uint64_t ScenePublisher::AddRecord(const ReplicationPosition& position, absl::string_view payload) {
  std::vector<absl::AnyInvocable<void(absl::Status)>> failed;
  const absl::Status out_of_place =
      absl::InternalError("replication: a record out of its reserved place");
  bool queued = false;
  uint64_t ticket = 0;
  {
    MutexLock lock(&mu_);
    reserved_ = false;
    // The Database adds exactly the record it reserved, under the scene's writer serialisation;
    // anything else cannot happen: its waiters fail rather than store it at another place.
    if (position.sequence != next_sequence_ || position.epoch != start_.epoch ||
        position.incarnation != start_.incarnation) {
      ticket = next_sequence_;
      if (state_ != State::kFenced && state_ != State::kClosed) {
        FailAllLocked(out_of_place, State::kClosed, &failed);
      }
    } else {
      const std::vector<absl::string_view> parts = SplitParts(payload, start_.part_bytes);
      const uint64_t first = next_sequence_;
      for (size_t i = 0; i < parts.size(); ++i) {
        MessageHeader header{.kind = MessageKind::kRecord,
                             .incarnation = start_.incarnation,
                             .epoch = start_.epoch,
                             .prev = last_log_sequence_,
                             .first = first,
                             .part = static_cast<uint32_t>(i + 1),
                             .parts = static_cast<uint32_t>(parts.size())};
        ticket = QueueLocked(names_.log, EncodeMessageHeader(header), parts[i], /*log=*/true);
      }
      if (deferred_.has_value()) {
        DeferredSnapshot deferred = std::move(*deferred_);
        deferred_.reset();
        QueueSnapshotLocked(deferred.covers, std::move(deferred.payload), std::move(deferred.done));
      }
      queued = true;
    }
  }
  for (auto& done : failed) done(out_of_place);
  if (queued && on_unsent_) on_unsent_();
  return ticket;
}

void ScenePublisher::QueueSnapshotLocked(const ReplicationPosition& covers, std::string payload,
                                         absl::AnyInvocable<void(absl::Status)> done) {
  const std::vector<absl::string_view> parts = SplitParts(payload, start_.part_bytes);
  const uint64_t first = next_sequence_;
  for (size_t i = 0; i < parts.size(); ++i) {
    MessageHeader header{.kind = MessageKind::kSnapshotPart,
                         .incarnation = start_.incarnation,
                         .epoch = start_.epoch,
                         .part = static_cast<uint32_t>(i + 1),
                         .parts = static_cast<uint32_t>(parts.size())};
    QueueLocked(names_.part, EncodeMessageHeader(header), parts[i], /*log=*/false);
  }
  MessageHeader manifest{.kind = MessageKind::kSnapshot,
                         .incarnation = start_.incarnation,
                         .epoch = start_.epoch,
                         .first = first,
                         .parts = static_cast<uint32_t>(parts.size()),
                         .bytes = payload.size(),
                         .crc32c = Crc32c(payload),
                         .covers_epoch = covers.epoch,
                         .covers = covers.sequence};
  const uint64_t ticket =
      QueueLocked(names_.snapshot, EncodeMessageHeader(manifest), "", /*log=*/false);
  waiters_.emplace(ticket, std::move(done));
}

void ScenePublisher::AddSnapshot(const ReplicationPosition& covers, std::string payload,
                                 absl::AnyInvocable<void(absl::Status)> done) {
  absl::Status refused;
  {
    MutexLock lock(&mu_);
    if (state_ == State::kFenced || state_ == State::kClosed) {
      refused = final_error_;
    } else if (reserved_) {
      // Not between a record's reservation and the record: its position is taken already.
      if (deferred_.has_value()) deferred_->done(absl::CancelledError("a newer snapshot"));
      deferred_ = DeferredSnapshot{
          .covers = covers, .payload = std::move(payload), .done = std::move(done)};
      return;
    } else {
      QueueSnapshotLocked(covers, std::move(payload), std::move(done));
    }
  }
  if (!refused.ok()) return done(refused);
  if (on_unsent_) on_unsent_();
}

void ScenePublisher::WhenStored(uint64_t ticket, absl::AnyInvocable<void(absl::Status)> done) {
  absl::Status now;
  {
    MutexLock lock(&mu_);
    if (ticket == ReplicationHook::kEverything) ticket = next_sequence_ - 1;
    if (ticket <= stored_through_) {
      now = absl::OkStatus();
    } else if (state_ == State::kFenced || state_ == State::kClosed) {
      now = final_error_;
    } else {
      waiters_.emplace(ticket, std::move(done));
      return;
    }
  }
  done(now);
}

std::vector<OutgoingMessage> ScenePublisher::TakeUnsent() {
  std::vector<OutgoingMessage> out;
  MutexLock lock(&mu_);
  if (state_ != State::kWriting) return out;
  for (Entry& entry : queue_) {
    if (entry.sent) continue;
    entry.sent = true;
    entry.answered = false;
    out.push_back(entry.message);
  }
  return out;
}

void ScenePublisher::AdvanceLocked(std::vector<absl::AnyInvocable<void(absl::Status)>>* due) {
  while (!queue_.empty() && queue_.front().stored) {
    stored_through_ = queue_.front().sequence;
    if (queue_.front().log) stored_log_sequence_ = queue_.front().sequence;
    queue_.pop_front();
  }
  while (!waiters_.empty() && waiters_.begin()->first <= stored_through_) {
    due->push_back(std::move(waiters_.begin()->second));
    waiters_.erase(waiters_.begin());
  }
}

void ScenePublisher::OnOutcome(uint64_t sequence, const absl::StatusOr<uint64_t>& stored) {
  std::vector<absl::AnyInvocable<void(absl::Status)>> due;
  bool trouble = false;
  {
    MutexLock lock(&mu_);
    if (queue_.empty() || sequence < queue_.front().sequence ||
        sequence - queue_.front().sequence >= queue_.size()) {
      return;  // not ours any more (resolved, fenced)
    }
    Entry& entry = queue_[sequence - queue_.front().sequence];
    if (!entry.sent || entry.answered) return;  // an answer to an earlier send
    entry.answered = true;
    if (stored.ok() && *stored == sequence) {
      entry.stored = true;
      AdvanceLocked(&due);
    } else {
      last_error_ =
          stored.ok()
              ? absl::InternalError(absl::StrCat("stored at ", *stored, " instead of ", sequence))
              : stored.status();
      if (state_ == State::kWriting) {
        state_ = State::kResolving;
        trouble = true;
      }
    }
  }
  for (auto& done : due) done(absl::OkStatus());
  if (trouble && on_trouble_) on_trouble_();
}

ScenePublisher::State ScenePublisher::state() const {
  MutexLock lock(&mu_);
  return state_;
}

bool ScenePublisher::InFlight() const {
  MutexLock lock(&mu_);
  for (const Entry& entry : queue_) {
    if (entry.sent && !entry.answered) return true;
  }
  return false;
}

std::optional<uint64_t> ScenePublisher::FirstUnstored() const {
  MutexLock lock(&mu_);
  if (queue_.empty()) return std::nullopt;
  return queue_.front().sequence;
}

std::string ScenePublisher::IdAt(uint64_t sequence) const {
  return MessageId(start_.incarnation, start_.epoch, sequence);
}

void ScenePublisher::MarkStored(uint64_t sequence) {
  std::vector<absl::AnyInvocable<void(absl::Status)>> due;
  {
    MutexLock lock(&mu_);
    if (queue_.empty() || sequence < queue_.front().sequence ||
        sequence - queue_.front().sequence >= queue_.size()) {
      return;
    }
    Entry& entry = queue_[sequence - queue_.front().sequence];
    entry.stored = true;
    entry.answered = true;
    AdvanceLocked(&due);
  }
  for (auto& done : due) done(absl::OkStatus());
}

void ScenePublisher::Resend() {
  {
    MutexLock lock(&mu_);
    if (state_ != State::kResolving) return;
    for (Entry& entry : queue_) {
      entry.sent = false;
      entry.answered = false;
    }
    state_ = State::kWriting;
  }
  if (on_unsent_) on_unsent_();
}

void ScenePublisher::FailAllLocked(const absl::Status& status, State state,
                                   std::vector<absl::AnyInvocable<void(absl::Status)>>* due) {
  state_ = state;
  final_error_ = status;
  for (auto& [ticket, done] : waiters_) due->push_back(std::move(done));
  waiters_.clear();
  queue_.clear();
  if (deferred_.has_value()) {
    due->push_back(std::move(deferred_->done));
    deferred_.reset();
  }
}

void ScenePublisher::Fence(const absl::Status& status) {
  std::vector<absl::AnyInvocable<void(absl::Status)>> due;
  {
    MutexLock lock(&mu_);
    if (state_ == State::kFenced || state_ == State::kClosed) return;
    FailAllLocked(status, State::kFenced, &due);
  }
  for (auto& done : due) done(status);
}

void ScenePublisher::Close(const absl::Status& status) {
  std::vector<absl::AnyInvocable<void(absl::Status)>> due;
  {
    MutexLock lock(&mu_);
    if (state_ == State::kFenced || state_ == State::kClosed) return;
    FailAllLocked(status, State::kClosed, &due);
  }
  for (auto& done : due) done(status);
}

void ScenePublisher::SetLeaseUntil(Clock::time_point until) {
  MutexLock lock(&mu_);
  lease_until_ = until;
}

uint64_t ScenePublisher::stored_through() const {
  MutexLock lock(&mu_);
  return stored_through_;
}

uint64_t ScenePublisher::stored_log_sequence() const {
  MutexLock lock(&mu_);
  return stored_log_sequence_;
}

absl::Status ScenePublisher::last_error() const {
  MutexLock lock(&mu_);
  return last_error_;
}

}  // namespace collide
