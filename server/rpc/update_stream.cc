#include "server/rpc/update_stream.h"

#include <deque>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/field_error.h"
#include "scene/move_destination.h"
#include "server/convert/field_path.h"
#include "server/convert/status_convert.h"
#include "server/convert/update_convert.h"
#include "server/convert/wire_message.h"
#include "server/infra/scene_header.h"
#include "server/infra/scratch_memory.h"

namespace collide {

UpdateStreamReactor::UpdateStreamReactor(const ServiceContext& context, const Principal* principal,
                                         std::optional<std::string> scene_header,
                                         std::unique_ptr<StreamHandle> stream)
    : context_(context),
      principal_(principal),
      scene_header_(std::move(scene_header)),
      call_(this, std::move(stream)) {
  {
    MutexLock lock(&mu_);
    reading_ = true;
  }
  if (!call_.Read(&in_)) {
    MutexLock lock(&mu_);
    reading_ = false;
  }
}

void UpdateStreamReactor::Pump() {
  bool write = false, read = false, end = false;
  grpc::Status status;
  {
    MutexLock lock(&mu_);
    if (!writing_ && !pending_.empty() && pending_.front().ready) {
      // An ack is a few dozen bytes; encoding it cannot fail (SerializeMessage's only error is a
      // message over 2 GiB).
      SerializeMessage(pending_.front().ack, &out_).IgnoreError();
      pending_.pop_front();
      ++first_index_;
      writing_ = write = true;
    }
    const size_t unanswered = pending_.size() + (writing_ ? 1 : 0);
    if (!reading_ && !processing_ && !read_done_ &&
        unanswered < context_.limits.max_inflight_per_stream) {
      reading_ = read = true;
    }
    if (read_done_ && !ended_ && !writing_ && !processing_ && pending_.empty()) {
      ended_ = end = true;
      status = ToGrpcStatus(read_error_);
    }
  }
  // The call's order (StreamCall) starts nothing once it is ending: then the flags go back.
  if (write && !call_.Write(&out_)) {
    MutexLock lock(&mu_);
    writing_ = false;
  }
  if (read && !call_.Read(&in_)) {
    MutexLock lock(&mu_);
    reading_ = false;
  }
  if (end) call_.End(status);
}

void UpdateStreamReactor::OnReadDone(bool ok) {
  // Held until the end of this callback: nothing here may finish the call (and so delete this)
  // before the last line, Release.
  call_.Hold();
  {
    // The read side owns in_, request_ and batch_ from here until processing_ is cleared: no
    // other thread's Pump starts a read into in_ meanwhile (both flags change in one section).
    MutexLock lock(&mu_);
    reading_ = false;
    processing_ = true;
  }
  if (!call_.OnReadDone()) {
    // The call is ending: the message, if any, is dropped.
    {
      MutexLock lock(&mu_);
      processing_ = false;
    }
    call_.Release();
    return;
  }
  // The stream's messages are named like a repeated field's: messages[i], from 0.
  const size_t message_bytes = ok ? in_.Length() : 0;
  // Timed only for the slow-update log (two clock reads a batch).
  const bool timed = context_.slow_updates.enabled();
  const auto arrived =
      timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  if (ok) ClearRequest();
  const absl::Status parsed =
      ok ? MergeMessage(&in_, &request_, FieldPath("messages", messages_read_++, ""))
         : absl::OkStatus();
  const std::chrono::nanoseconds parse =
      timed ? std::chrono::steady_clock::now() - arrived : std::chrono::nanoseconds(0);
  uint64_t index = 0;
  {
    MutexLock lock(&mu_);
    if (!ok || !parsed.ok()) {
      // The client half-closed, or sent a message that does not parse: the acks of the batches
      // read before are written, then the call ends.
      read_done_ = true;
      read_error_ = parsed;
    } else {
      index = first_index_ + pending_.size();
      pending_.emplace_back();
    }
  }
  if (ok && parsed.ok()) {
    Process(index, arrived, parse);
    // The store has the batch now (Apply encodes and applies it before returning). The parsed
    // message and its ops keep what they grew to, so the next batch of the same size reuses
    // them (a tick loop sends one every tick); past kKeptUpdateBytes they are freed rather than
    // kept for the stream's life. (Before processing_ is cleared: the next read may then start
    // at once.)
    if (message_bytes > kKeptUpdateBytes || KeptBytes() > kKeptUpdateBytes) {
      request_ = v1::UpdateBatch();
      batch_ = UpdateBatch();
    }
  }
  {
    MutexLock lock(&mu_);
    processing_ = false;
  }
  Pump();
  call_.Release();
}

void UpdateStreamReactor::ClearRequest() {
  // Clear alone would delete the moves columns (a message field, off an arena) and the parse
  // allocate them again: keep them, emptied, with their capacity. An empty `moves` reads like
  // an absent one (no move).
  v1::PoseColumns* moves = request_.has_moves() ? request_.release_moves() : nullptr;
  request_.Clear();
  if (moves != nullptr) {
    moves->Clear();
    request_.set_allocated_moves(moves);
  }
}

size_t UpdateStreamReactor::KeptBytes() const {
  // SpaceUsedLong counts the message's repeated fields by capacity (and cleared elements kept
  // for reuse), which is what stays allocated.
  return request_.SpaceUsedLong() + batch_.ops.capacity() * sizeof(UpdateOp);
}

void UpdateStreamReactor::Complete(uint64_t index, uint64_t client_sequence,
                                   absl::StatusOr<ApplyAck> result) {
  {
    MutexLock lock(&mu_);
    if (index < first_index_ || index - first_index_ >= pending_.size()) return;
    Pending& slot = pending_[index - first_index_];
    slot.ready = true;
    slot.ack.set_client_sequence(client_sequence);
    if (result.ok()) {
      slot.ack.set_version(result->version);
      slot.ack.set_durable(result->durable);
      slot.ack.set_duplicate(result->duplicate);
    } else {
      ToProtoError(result.status(), slot.ack.mutable_error());
    }
  }
  Pump();
}

void UpdateStreamReactor::Process(uint64_t index, std::chrono::steady_clock::time_point arrived,
                                  std::chrono::nanoseconds parse) {
  const uint64_t sequence = request_.client_sequence();
  absl::Status refused;
  {
    MutexLock lock(&mu_);
    if (auto it = refused_.find(request_.scene()); it != refused_.end()) {
      refused = it->second;
    }
  }
  if (!refused.ok()) {
    if (context_.counters != nullptr) context_.counters->CountRejectedUpdate(refused);
    return Complete(index, sequence, std::move(refused));
  }
  absl::Status status = CheckSceneHeader(scene_header_, request_.scene());
  if (status.ok()) status = principal_->CheckScene(request_.scene());
  // The slow-update log's share: the conversion's time (the store's phases come with the ack).
  const SlowUpdateLog* const slow =
      context_.slow_updates.enabled() ? &context_.slow_updates : nullptr;
  const auto converting =
      slow != nullptr ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  if (status.ok()) status = UpdateBatchFromProto(request_, context_.limits, &batch_);
  ServiceCounters* const counters = context_.counters;
  if (!status.ok()) {
    if (counters != nullptr) counters->CountRejectedUpdate(status);
    return Complete(index, sequence, status);
  }
  const std::chrono::nanoseconds convert =
      slow != nullptr ? std::chrono::steady_clock::now() - converting : std::chrono::nanoseconds(0);
  // The store's errors about an op name the core op; the ack names the request's field.
  const RequestLayout layout = LayoutOf(request_);
  const ServiceCounters::OpCounts op_counts =
      counters != nullptr ? ServiceCounters::CountOps(batch_) : ServiceCounters::OpCounts{};
  // The store's callback may come after the client went away: it holds the call open until it
  // ran (at most max_inflight_per_stream of them).
  call_.Hold();
  context_.db->Apply(
      request_.scene(),
      ClientTag{.client_id = request_.client_id(), .sequence = request_.client_sequence()}, batch_,
      [this, layout, index, sequence, counters, op_counts, scene = request_.scene(), slow, arrived,
       parse, convert, ops = batch_.ops.size()](absl::StatusOr<ApplyAck> result) {
        if (counters != nullptr) {
          counters->CountUpdate(result.status(), result.ok() && result->duplicate, op_counts);
        }
        if (slow != nullptr) {
          slow->Record("UpdateStream", scene, ops, result.status(),
                       result.ok() ? result->version : 0,
                       std::chrono::steady_clock::now() - arrived,
                       UpdateTimings{.parse = parse,
                                     .convert = convert,
                                     .apply = result.ok() ? result->timings : std::nullopt});
        }
        if (!result.ok()) {
          result = ForRequest(result.status(), layout);
          if (!MovedToOf(result.status()).empty() || absl::IsUnavailable(result.status())) {
            MutexLock lock(&mu_);
            refused_.try_emplace(scene, result.status());
          }
        }
        Complete(index, sequence, std::move(result));
        call_.Release();
      },
      /*timed=*/slow != nullptr);
}

void UpdateStreamReactor::OnWriteDone(bool ok) {
  call_.Hold();
  // The call's state first: until writing_ is cleared below, no other thread's Pump takes an ack
  // (it would find the call still writing, and the ack it popped would be lost).
  const bool go_on = call_.OnWriteDone(ok);
  {
    MutexLock lock(&mu_);
    writing_ = false;
  }
  if (go_on) Pump();
  call_.Release();
}

void UpdateStreamReactor::OnCancel() { call_.OnCancel(); }

void UpdateStreamReactor::OnDone() { delete this; }

}  // namespace collide
