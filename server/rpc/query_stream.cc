#include "server/rpc/query_stream.h"

#include <cassert>
#include <chrono>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/field_error.h"
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
          ParseMessage(&in_, request_, FieldPath("messages", messages_read_++, ""));
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
  return context_.db->GetScene(batch.scene());
}

void QueryStreamReactor::Answer(const absl::StatusOr<std::shared_ptr<const Scene>>& found) {
  const v1::QueryBatch& batch = *request_;
  if (!found.ok()) return EncodeBatchError(found.status());
  const Scene& scene = **found;
  const bool timed = context_.slow_queries.enabled();
  const auto start =
      timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  const uint64_t max_bytes = context_.limits.max_answer_bytes;
  const AnswerBound bound = MaxAnswer(batch, context_.limits);
  std::optional<QueryAnswerWriter> writer;
  // One result message for every query (on the heap: on an arena, messages a Clear drops stay
  // allocated until the arena is reset): its Hits and their Vec3s are overwritten from query to
  // query rather than cleared, so that no hit allocates once the largest result was built.
  v1::QueryResult result;
  encoded_requests_ = 0;
  encoded_slots_ = 0;
  uint64_t version = 0;
  bool too_large = false;
  // A segment's answers: offered to the viewer's sampler, counted, encoded.
  const auto take = [&](const Scene& scene, uint64_t read, size_t first) {
    const std::span<const Query> ran(queries_.data() + first, results_.size());
    if (context_.query_samples != nullptr) {
      context_.query_samples->Offer(&scene, read, ran, tick_errors_, results_, hits_);
    }
    if (context_.counters != nullptr) {
      uint64_t hits = 0;
      for (size_t j = 0; j < results_.size(); ++j) {
        if (tick_errors_[j].ok()) hits += results_[j].hit_count;
      }
      // A batch run in segments is one batch.
      context_.counters->CountQueryBatch(QueryRpc::kQueryStream, ran, hits, tick_errors_,
                                         /*new_batch=*/first == 0);
    }
    if (!writer.has_value()) writer.emplace(read);
    return EncodeThrough(&*writer, &result, first + results_.size(), first, max_bytes);
  };
  if (bound.bytes <= max_bytes) {
    // The whole answer fits whatever the scene holds: one run under the read, the encoding
    // after it. Room for every hit at once (outside the read): growing by doubling would hold
    // up to three times as much while it copies.
    hits_.reserve(bound.hits);
    version = AnswerQueries(scene, queries_, slots_, &tick_errors_, &results_, &hits_,
                            context_.query_split);
    take(scene, version, 0);
  } else {
    // The answer could pass --max_answer_bytes: it is built segment by segment, each
    // segment's hits taking at most about max_answer_bytes in memory, and refused once its
    // encoding passes the limit (most such batches find far fewer hits than they may).
    const uint64_t segment_hits = std::max<uint64_t>(max_bytes / sizeof(QueryHit), 1);
    version = AnswerQueriesInSegments(
        scene, queries_, slots_, segment_hits, &tick_errors_, &results_, &hits_,
        [&](uint64_t read, size_t first) {
          too_large = !take(scene, read, first);
          return !too_large;
        },
        context_.query_split);
  }
  if (!writer.has_value()) {
    // No segment ran: every query failed its conversion.
    writer.emplace(version);
    if (context_.counters != nullptr) {
      context_.counters->CountQueryBatch(QueryRpc::kQueryStream, {}, 0);
    }
  }
  if (!too_large) {
    too_large = !EncodeThrough(&*writer, &result, queries_.size(), queries_.size(), max_bytes);
  }
  if (too_large) {
    EncodeBatchError(
        FieldStatus(absl::StatusCode::kResourceExhausted, "queries",
                    absl::StrCat("the answer to this batch passes the limit of ", max_bytes,
                                 " bytes per answer (--max_answer_bytes) after ", encoded_requests_,
                                 " of its ", batch.queries_size(), " queries; split the batch")));
  } else {
    writer->Finish(&out_);
  }
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

void QueryStreamReactor::EncodeBatchError(const absl::Status& status) {
  v1::QueryBatchResult answer;
  ToProtoError(status, answer.mutable_error());
  // A message of about a kilobyte at most: encoding it cannot fail.
  SerializeMessage(answer, &out_).IgnoreError();
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

bool QueryStreamReactor::EncodeThrough(QueryAnswerWriter* writer, v1::QueryResult* result,
                                       size_t slot_end, size_t first, uint64_t max_bytes) {
  const v1::QueryBatch& batch = *request_;
  // Every request before the next query still to run (slot_end), or every one after the last.
  const size_t request_end =
      slot_end < slots_.size() ? slots_[slot_end] : static_cast<size_t>(batch.queries_size());
  auto* hits = result->mutable_hits();
  size_t& j = encoded_slots_;  // the next entry of slots_ (in request order)
  for (size_t& i = encoded_requests_; i < request_end; ++i) {
    result->set_request_id(batch.queries(static_cast<int>(i)).request_id());
    uint32_t count = 0;
    // A query that was run (an entry of slots_) has a result or its tick's error; the others
    // the error of their conversion.
    const QueryResult* ran = nullptr;
    const absl::Status* error = &errors_[i];
    if (j < slots_.size() && slots_[j] == i) {
      if (tick_errors_[j - first].ok()) {
        ran = &results_[j - first];
      } else {
        error = &tick_errors_[j - first];
      }
      ++j;
    }
    if (ran != nullptr) {
      const QueryResult& r = *ran;
      result->set_truncated(r.truncated);
      result->clear_error();
      count = r.hit_count;
      for (uint32_t h = 0; h < count; ++h) {
        // HitToProto sets every field of the Hit.
        HitToProto(hits_[r.first_hit + h], h < static_cast<uint32_t>(hits->size())
                                               ? hits->Mutable(static_cast<int>(h))
                                               : hits->Add());
      }
    } else {
      result->set_truncated(false);
      ToProtoError(*error, result->mutable_error());
    }
    if (hits->size() > static_cast<int>(count)) {
      hits->DeleteSubrange(static_cast<int>(count), hits->size() - static_cast<int>(count));
    }
    writer->Add(*result);
    if (writer->bytes() > max_bytes) return false;
  }
  return true;
}

}  // namespace collide
