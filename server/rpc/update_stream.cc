#include "server/rpc/update_stream.h"

#include <deque>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "server/convert/field_path.h"
#include "server/convert/status_convert.h"
#include "server/convert/update_convert.h"
#include "server/convert/wire_message.h"
#include "server/infra/scene_header.h"
#include "server/infra/scratch_memory.h"

namespace collide {

// Shared between the reactor and the store callbacks of its batches.
struct UpdateStreamReactor::State {
  // An ack waiting for its turn.
  struct Pending {
    bool ready = false;
    v1::UpdateAck ack;
  };

  absl::Mutex mu;
  // Null once OnDone ran: callbacks then drop their ack.
  UpdateStreamReactor* reactor ABSL_GUARDED_BY(mu) = nullptr;
  // Acks of batches read and not yet written, in read order; pending.front() is batch
  // `first_index`.
  std::deque<Pending> pending ABSL_GUARDED_BY(mu);
  uint64_t first_index ABSL_GUARDED_BY(mu) = 0;
  // The message of the write in progress, encoded (owned by gRPC while `writing`).
  grpc::ByteBuffer out;
  bool writing ABSL_GUARDED_BY(mu) = false;
  bool reading ABSL_GUARDED_BY(mu) = false;
  // The read side is converting and applying a batch (request_ and batch_ are in use).
  bool processing ABSL_GUARDED_BY(mu) = false;
  // The client half-closed (or the read failed, or a message did not parse).
  bool read_done ABSL_GUARDED_BY(mu) = false;
  // Why reading stopped when it was not the client's half-close: the call's final status.
  absl::Status read_error ABSL_GUARDED_BY(mu);
  // A write failed or the call was cancelled: nothing more is read or written.
  bool broken ABSL_GUARDED_BY(mu) = false;
  bool finished ABSL_GUARDED_BY(mu) = false;
};

// What to do after leaving the locked section.
struct UpdateStreamReactor::Actions {
  UpdateStreamReactor* reactor = nullptr;
  bool write = false;
  bool read = false;
  bool finish = false;
  grpc::Status status;
  bool any() const { return write || read || finish; }
};

UpdateStreamReactor::UpdateStreamReactor(const ServiceContext& context, const Principal* principal,
                                         std::optional<std::string> scene_header,
                                         std::unique_ptr<StreamHandle> stream)
    : context_(context),
      principal_(principal),
      scene_header_(std::move(scene_header)),
      state_(std::make_shared<State>()),
      stream_(std::move(stream)) {
  {
    absl::MutexLock lock(&state_->mu);
    state_->reactor = this;
    state_->reading = true;
  }
  StartRead(&in_);
}

void UpdateStreamReactor::Decide(State* s, uint32_t max_inflight, Actions* actions)
    ABSL_NO_THREAD_SAFETY_ANALYSIS {  // the caller holds s->mu
  actions->reactor = s->reactor;
  if (s->finished || s->reactor == nullptr) return;
  if (!s->broken && !s->writing && !s->pending.empty() && s->pending.front().ready) {
    // An ack is a few dozen bytes; encoding it cannot fail (SerializeMessage's only error is a
    // message over 2 GiB).
    SerializeMessage(s->pending.front().ack, &s->out).IgnoreError();
    s->pending.pop_front();
    ++s->first_index;
    s->writing = true;
    actions->write = true;
  }
  const size_t unanswered = s->pending.size() + (s->writing ? 1 : 0);
  if (!s->broken && !s->reading && !s->processing && !s->read_done && unanswered < max_inflight) {
    s->reading = true;
    actions->read = true;
  }
  if (!s->writing && !s->reading && !s->processing &&
      (s->broken || (s->read_done && s->pending.empty()))) {
    s->finished = true;
    actions->finish = true;
    actions->status = s->broken ? grpc::Status(grpc::StatusCode::CANCELLED, "stream cancelled")
                                : ToGrpcStatus(s->read_error);
  }
}

void UpdateStreamReactor::Run(const Actions& actions) {
  // The flags set under the lock keep the reactor alive here: Finish happens only while no read
  // or write is in progress, and OnDone only after Finish.
  if (actions.finish) {
    if (stream_ != nullptr) stream_->Release();
    Finish(actions.status);
  }
  if (actions.write) {
    // `out` is the reactor's until OnWriteDone.
    if (stream_ != nullptr) stream_->WriteStarted(state_->out.Length());
    StartWrite(&state_->out);
  }
  if (actions.read) StartRead(&in_);
}

void UpdateStreamReactor::OnReadDone(bool ok) {
  const uint32_t max_inflight = context_.limits.max_inflight_per_stream;
  Actions actions;
  uint64_t index = 0;
  // The stream's messages are named like a repeated field's: messages[i], from 0.
  const size_t message_bytes = ok ? in_.Length() : 0;
  if (ok) ClearRequest();
  const absl::Status parsed =
      ok ? MergeMessage(&in_, &request_, absl::StrCat("messages[", messages_read_++, "]"))
         : absl::OkStatus();
  {
    absl::MutexLock lock(&state_->mu);
    state_->reading = false;
    if (!ok || !parsed.ok()) {
      state_->read_done = true;
      state_->read_error = parsed;
      Decide(state_.get(), max_inflight, &actions);
    } else {
      index = state_->first_index + state_->pending.size();
      state_->pending.emplace_back();
      state_->processing = true;
    }
  }
  if (!ok || !parsed.ok()) return Run(actions);
  Process(index);
  // The store has the batch now (Apply encodes and applies it before returning). The parsed
  // message and its ops keep what they grew to, so the next batch of the same size reuses them
  // (a tick loop sends one every tick); past kKeptUpdateBytes they are freed rather than kept
  // for the stream's life. (Before `processing` is cleared: the next read may then start at
  // once.)
  if (message_bytes > kKeptUpdateBytes || KeptBytes() > kKeptUpdateBytes) {
    request_ = v1::UpdateBatch();
    batch_ = UpdateBatch();
  }
  {
    absl::MutexLock lock(&state_->mu);
    state_->processing = false;
    Decide(state_.get(), max_inflight, &actions);
  }
  Run(actions);
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

void UpdateStreamReactor::Complete(State* state, uint64_t index, uint64_t client_sequence,
                                   absl::StatusOr<ApplyAck> result, uint32_t max_inflight,
                                   Actions* actions) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  absl::MutexLock lock(&state->mu);
  if (state->reactor == nullptr || state->finished) return;
  if (index < state->first_index || index - state->first_index >= state->pending.size()) return;
  State::Pending& slot = state->pending[index - state->first_index];
  slot.ready = true;
  slot.ack.set_client_sequence(client_sequence);
  if (result.ok()) {
    slot.ack.set_version(result->version);
    slot.ack.set_durable(result->durable);
    slot.ack.set_duplicate(result->duplicate);
  } else {
    ToProtoError(result.status(), slot.ack.mutable_error());
  }
  Decide(state, max_inflight, actions);
}

void UpdateStreamReactor::Process(uint64_t index) {
  const uint32_t max_inflight = context_.limits.max_inflight_per_stream;
  const uint64_t sequence = request_.client_sequence();
  absl::Status status = CheckSceneHeader(scene_header_, request_.scene());
  if (status.ok()) status = principal_->CheckScene(request_.scene());
  if (status.ok()) status = UpdateBatchFromProto(request_, context_.limits, &batch_);
  ServiceCounters* const counters = context_.counters;
  if (!status.ok()) {
    if (counters != nullptr) counters->CountRejectedUpdate(status);
    Actions actions;
    Complete(state_.get(), index, sequence, status, max_inflight, &actions);
    return Run(actions);
  }
  // The store's errors about an op name the core op; the ack names the request's field.
  const RequestLayout layout = LayoutOf(request_);
  const ServiceCounters::OpCounts op_counts =
      counters != nullptr ? ServiceCounters::CountOps(batch_) : ServiceCounters::OpCounts{};
  context_.db->Apply(
      request_.scene(),
      ClientTag{.client_id = request_.client_id(), .sequence = request_.client_sequence()}, batch_,
      [state = state_, layout, index, sequence, max_inflight, counters,
       op_counts](absl::StatusOr<ApplyAck> result) {
        if (counters != nullptr) {
          counters->CountUpdate(result.status(), result.ok() && result->duplicate, op_counts);
        }
        if (!result.ok()) result = ForRequest(result.status(), layout);
        Actions actions;
        Complete(state.get(), index, sequence, std::move(result), max_inflight, &actions);
        // The reactor may be gone: then Complete set no action.
        if (actions.any()) actions.reactor->Run(actions);
      });
}

void UpdateStreamReactor::OnWriteDone(bool ok) {
  if (stream_ != nullptr) stream_->WriteDone();
  Actions actions;
  {
    absl::MutexLock lock(&state_->mu);
    state_->writing = false;
    if (!ok) state_->broken = true;
    Decide(state_.get(), context_.limits.max_inflight_per_stream, &actions);
  }
  Run(actions);
}

void UpdateStreamReactor::OnCancel() {
  Actions actions;
  {
    absl::MutexLock lock(&state_->mu);
    state_->broken = true;
    Decide(state_.get(), context_.limits.max_inflight_per_stream, &actions);
  }
  Run(actions);
}

void UpdateStreamReactor::OnDone() {
  {
    absl::MutexLock lock(&state_->mu);
    state_->reactor = nullptr;
  }
  delete this;
}

}  // namespace collide
