#include "server/rpc/query_stream.h"

#include <cassert>
#include <chrono>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "scene/scene_query.h"
#include "server/convert/query_answer.h"
#include "server/convert/query_convert.h"
#include "server/convert/status_convert.h"
#include "server/convert/wire_message.h"
#include "server/infra/scene_header.h"
#include "server/infra/scratch_memory.h"
#include "server/infra/slow_query_log.h"
#include "server/rpc/version_wait.h"

namespace collide {
namespace {

// The arena's first block, kept from batch to batch: a batch of about a hundred queries fits
// (larger ones add blocks, freed by Reset). Allocated at the stream's first batch.
constexpr size_t kArenaBlockBytes = 16 << 10;
// Blocks a large batch adds grow up to this size (few allocations for the largest batches).
constexpr size_t kArenaMaxBlockBytes = 64 << 10;

}  // namespace

QueryStreamReactor::QueryStreamReactor(const ServiceContext& context, const Principal* principal,
                                       std::optional<std::string> scene_header,
                                       std::chrono::system_clock::time_point call_deadline,
                                       std::unique_ptr<StreamHandle> stream)
    : context_(context),
      principal_(principal),
      scene_header_(std::move(scene_header)),
      call_deadline_(call_deadline),
      call_(this, std::move(stream)) {
  call_.Read(&in_);
}

void QueryStreamReactor::NewRequest() {
  if (arena_.has_value()) {
    arena_->Reset();
  } else {
    arena_block_.reset(new char[kArenaBlockBytes]);
    google::protobuf::ArenaOptions options;
    options.initial_block = arena_block_.get();
    options.initial_block_size = kArenaBlockBytes;
    options.max_block_size = kArenaMaxBlockBytes;
    arena_.emplace(options);
  }
  request_ = google::protobuf::Arena::CreateMessage<v1::QueryBatch>(&*arena_);
}

void QueryStreamReactor::OnReadDone(bool ok) {
  if (!call_.OnReadDone()) return;
  if (!ok) {
    // The client half-closed: every batch read has been answered.
    call_.End(grpc::Status::OK);
    return;
  }
  if (request_ == nullptr) NewRequest();
  if (absl::Status parsed =
          ParseMessage(&in_, request_, absl::StrCat("messages[", messages_read_++, "]"));
      !parsed.ok()) {
    call_.End(ToGrpcStatus(parsed));
    return;
  }
  AnswerAndWrite();
}

void QueryStreamReactor::AnswerAndWrite() {
  absl::StatusOr<std::shared_ptr<const Scene>> scene = SceneFor(*request_);
  // The queries are converted now, before any wait: they need no scene, and a batch waiting for
  // a version (a tick loop's queries, sent with or before the tick's update) then has only its
  // run left once the update is applied.
  if (scene.ok()) Convert();
  const uint64_t min_version = request_->min_version();
  if (!scene.ok() || min_version == 0 || (*scene)->version() >= min_version) {
    Answer(scene);
    WriteAnswer();
    return;
  }
  // The wait holds the call open: a cancel meanwhile finishes it once the wait's callback ran
  // (whose write then does not start).
  call_.Hold();
  VersionWait::Start(*scene, min_version,
                     VersionWaitDeadline(call_deadline_, context_.limits.max_version_wait_ms),
                     [this, scene = *scene](absl::Status wait) {
                       if (wait.ok()) {
                         Answer(scene);
                       } else {
                         Answer(wait);
                       }
                       WriteAnswer();
                       call_.Release();
                     });
}

void QueryStreamReactor::WriteAnswer() {
  // Only the answer's bytes are needed from here on: free the request and the scratch a large
  // batch grew, so that a client that reads slowly, or not at all, holds the answer and nothing
  // more.
  NewRequest();
  ReleaseIfLarger(queries_);
  ReleaseIfLarger(slots_);
  ReleaseIfLarger(errors_);
  ReleaseIfLarger(tick_errors_);
  ReleaseIfLarger(results_);
  ReleaseIfLarger(hits_);
  // Not started when the call is ending (cancelled): the answer is dropped.
  if (!call_.Write(&out_)) out_.Clear();
}

void QueryStreamReactor::OnWriteDone(bool ok) {
  // gRPC is done with the answer's bytes: drop them rather than hold them until the next answer.
  out_.Clear();
  if (!call_.OnWriteDone(ok)) return;
  call_.Read(&in_);
}

void QueryStreamReactor::OnCancel() { call_.OnCancel(); }

void QueryStreamReactor::OnDone() { delete this; }

absl::StatusOr<std::shared_ptr<const Scene>> QueryStreamReactor::SceneFor(
    const v1::QueryBatch& batch) const {
  COLLIDE_RETURN_IF_ERROR(CheckSceneHeader(scene_header_, batch.scene()));
  COLLIDE_RETURN_IF_ERROR(principal_->CheckScene(batch.scene()));
  if (static_cast<size_t>(batch.queries_size()) > context_.limits.max_queries_per_batch) {
    return absl::ResourceExhaustedError(absl::StrCat("queries: a batch holds at most ",
                                                     context_.limits.max_queries_per_batch,
                                                     " queries, got ", batch.queries_size()));
  }
  if (const uint64_t bytes = MaxAnswer(batch, context_.limits).bytes;
      bytes > context_.limits.max_answer_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "queries: the answer to this batch could take up to ", bytes,
        " bytes (59 per hit its queries' max_hits allow, at least 1,051 per query), over the "
        "limit of ",
        context_.limits.max_answer_bytes, " bytes per answer; split the batch"));
  }
  return context_.db->GetScene(batch.scene());
}

void QueryStreamReactor::Answer(const absl::StatusOr<std::shared_ptr<const Scene>>& found) {
  const v1::QueryBatch& batch = *request_;
  if (!found.ok()) {
    v1::QueryBatchResult answer;
    ToProtoError(found.status(), answer.mutable_error());
    // A message of about a kilobyte at most: encoding it cannot fail.
    SerializeMessage(answer, &out_).IgnoreError();
    return;
  }
  const Scene& scene = **found;
  const bool timed = context_.slow_queries.enabled();
  const auto start =
      timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  // Room for every hit the batch may return, at once (outside the scene's read, and after any
  // wait for a version): growing by doubling would hold up to three times as much while it
  // copies.
  hits_.reserve(MaxAnswer(batch, context_.limits).hits);
  const uint64_t version = AnswerQueries(scene, queries_, slots_, &tick_errors_, &results_, &hits_,
                                         context_.query_split);
  if (context_.counters != nullptr) {
    uint64_t hits = 0;
    for (size_t j = 0; j < results_.size(); ++j) {
      if (tick_errors_[j].ok()) hits += results_[j].hit_count;
    }
    context_.counters->CountQueryBatch(QueryRpc::kQueryStream, queries_, hits, tick_errors_);
  }
  Encode(version);
  if (timed) {
    // The conversion's time counts too (not the wait for a version between the two).
    const auto elapsed = std::chrono::steady_clock::now() - start + convert_elapsed_;
    if (elapsed >= context_.slow_queries.threshold()) {
      context_.slow_queries.Record("QueryStream", batch.scene(),
                                   static_cast<size_t>(batch.queries_size()),
                                   QueryKindCounts(batch), elapsed, version);
    }
  }
}

void QueryStreamReactor::Convert() {
  const v1::QueryBatch& batch = *request_;
  const bool timed = context_.slow_queries.enabled();
  const auto start =
      timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  queries_.clear();
  slots_.clear();
  errors_.assign(static_cast<size_t>(batch.queries_size()), absl::OkStatus());
  const QueryLimits limits = QueryLimitsOf(context_.limits);
  for (int i = 0; i < batch.queries_size(); ++i) {
    Query& query = queries_.emplace_back();
    const size_t index = static_cast<size_t>(i);
    absl::Status s = QueryFromProto(batch.queries(i), index, &query);
    if (s.ok()) s = PrepareQuery(&query, limits, index);
    if (!s.ok()) {
      queries_.pop_back();
      errors_[static_cast<size_t>(i)] = std::move(s);
      continue;
    }
    slots_.push_back(static_cast<size_t>(i));
  }
  convert_elapsed_ = timed ? std::chrono::steady_clock::now() - start
                           : std::chrono::steady_clock::duration::zero();
}

void QueryStreamReactor::Encode(uint64_t version) {
  const v1::QueryBatch& batch = *request_;
  QueryAnswerWriter writer(version);
  // One result message for every query, on the heap (on an arena, messages a Clear drops stay
  // allocated until the arena is reset): its Hits and their Vec3s are overwritten from query to
  // query rather than cleared, so that no hit allocates once the largest result was built.
  v1::QueryResult result;
  auto* hits = result.mutable_hits();
  size_t j = 0;  // the next entry of slots_ (in request order)
  for (int i = 0; i < batch.queries_size(); ++i) {
    result.set_request_id(batch.queries(i).request_id());
    uint32_t count = 0;
    // A query that was run (an entry of slots_) has a result or its tick's error; the others
    // the error of their conversion.
    const QueryResult* ran = nullptr;
    const absl::Status* error = &errors_[static_cast<size_t>(i)];
    if (j < slots_.size() && slots_[j] == static_cast<size_t>(i)) {
      if (tick_errors_[j].ok()) {
        ran = &results_[j];
      } else {
        error = &tick_errors_[j];
      }
      ++j;
    }
    if (ran != nullptr) {
      const QueryResult& r = *ran;
      result.set_truncated(r.truncated);
      result.clear_error();
      count = r.hit_count;
      for (uint32_t h = 0; h < count; ++h) {
        // HitToProto sets every field of the Hit.
        HitToProto(hits_[r.first_hit + h], h < static_cast<uint32_t>(hits->size())
                                               ? hits->Mutable(static_cast<int>(h))
                                               : hits->Add());
      }
    } else {
      result.set_truncated(false);
      ToProtoError(*error, result.mutable_error());
    }
    if (hits->size() > static_cast<int>(count)) {
      hits->DeleteSubrange(static_cast<int>(count), hits->size() - static_cast<int>(count));
    }
    writer.Add(result);
  }
  // SceneFor admitted the batch because its largest answer fits.
  assert(writer.bytes() <= context_.limits.max_answer_bytes);
  writer.Finish(&out_);
}

}  // namespace collide
