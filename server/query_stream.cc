#include "server/query_stream.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "scene/query_ticks.h"
#include "scene/status_macros.h"
#include "server/proto_convert.h"
#include "server/scene_header.h"
#include "server/status_convert.h"
#include "server/version_wait.h"
#include "server/wire_message.h"

namespace collide {
namespace {

// Enough for a batch of a few hundred queries; larger batches add blocks, freed by Reset.
constexpr size_t kArenaBlockBytes = 128 << 10;

google::protobuf::ArenaOptions ArenaOptionsFor(char* block) {
  google::protobuf::ArenaOptions options;
  options.initial_block = block;
  options.initial_block_size = kArenaBlockBytes;
  return options;
}

}  // namespace

QueryStreamReactor::QueryStreamReactor(const ServiceContext& context, const Principal* principal,
                                       std::optional<std::string> scene_header,
                                       std::chrono::system_clock::time_point call_deadline,
                                       std::unique_ptr<StreamHandle> stream)
    : context_(context),
      principal_(principal),
      scene_header_(std::move(scene_header)),
      call_deadline_(call_deadline),
      stream_(std::move(stream)),
      arena_block_(new char[kArenaBlockBytes]),
      arena_(ArenaOptionsFor(arena_block_.get())) {
  request_ = google::protobuf::Arena::CreateMessage<v1::QueryBatch>(&arena_);
  StartRead(&in_);
}

void QueryStreamReactor::NewRequest() {
  arena_.Reset();
  request_ = google::protobuf::Arena::CreateMessage<v1::QueryBatch>(&arena_);
}

void QueryStreamReactor::OnReadDone(bool ok) {
  if (!ok) {
    // The client half-closed (or the call ended): every batch read has been answered.
    Finish(grpc::Status::OK);
    return;
  }
  if (absl::Status parsed =
          ParseMessage(&in_, request_, absl::StrCat("messages[", messages_read_++, "]"));
      !parsed.ok()) {
    Finish(ToGrpcStatus(parsed));
    return;
  }
  AnswerAndWrite();
}

void QueryStreamReactor::AnswerAndWrite() {
  absl::StatusOr<std::shared_ptr<const Scene>> scene = SceneFor(*request_);
  const uint64_t min_version = request_->min_version();
  if (!scene.ok() || min_version == 0 || (*scene)->version() >= min_version) {
    Answer(scene);
    WriteAnswer();
    return;
  }
  // No operation is pending on the call while it waits, and Finish has not been called, so the
  // reactor stays alive until the wait's callback starts the write (a cancelled call then fails
  // that write, and OnWriteDone finishes it).
  VersionWait::Start(*scene, min_version,
                     VersionWaitDeadline(call_deadline_, context_.limits.max_version_wait_ms),
                     [this, scene = *scene](absl::Status wait) {
                       if (wait.ok()) {
                         Answer(scene);
                       } else {
                         Answer(wait);
                       }
                       WriteAnswer();
                     });
}

void QueryStreamReactor::WriteAnswer() {
  if (absl::Status s = SerializeMessage(response_, &out_); !s.ok()) {
    // Only an answer over 2 GiB fails to encode; max_hits_per_batch keeps them far smaller.
    Finish(ToGrpcStatus(s));
    return;
  }
  if (stream_ != nullptr) stream_->WriteStarted(out_.Length());
  StartWrite(&out_);
}

void QueryStreamReactor::OnWriteDone(bool ok) {
  if (stream_ != nullptr) stream_->WriteDone();
  if (!ok) {
    Finish(grpc::Status(grpc::StatusCode::CANCELLED, "stream cancelled"));
    return;
  }
  NewRequest();
  StartRead(&in_);
}

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
  uint64_t hits = 0;
  for (const v1::Query& query : batch.queries()) {
    if (query.mode() != v1::MODE_ALL) {
      hits += 1;
    } else {
      const uint32_t asked = query.max_hits() == 0 ? 64u : query.max_hits();
      hits += std::min(asked, context_.limits.max_hits);
    }
  }
  if (hits > context_.limits.max_hits_per_batch) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "queries: the batch may return up to ", hits, " hits (the sum of its max_hits), at most ",
        context_.limits.max_hits_per_batch, " per batch"));
  }
  return context_.db->GetScene(batch.scene());
}

void QueryStreamReactor::Answer(const absl::StatusOr<std::shared_ptr<const Scene>>& found) {
  // Clear() keeps the result and hit messages allocated for the next batch.
  response_.Clear();
  const v1::QueryBatch& batch = *request_;
  if (!found.ok()) {
    ToProtoError(found.status(), response_.mutable_error());
    return;
  }
  const Scene& scene = **found;

  queries_.clear();
  slots_.clear();
  for (int i = 0; i < batch.queries_size(); ++i) {
    const v1::Query& proto = batch.queries(i);
    v1::QueryResult* result = response_.add_results();
    result->set_request_id(proto.request_id());
    Query& query = queries_.emplace_back();
    if (absl::Status s = QueryFromProto(proto, static_cast<size_t>(i), context_.limits, &query);
        !s.ok()) {
      queries_.pop_back();
      ToProtoError(s, result->mutable_error());
      continue;
    }
    slots_.push_back(static_cast<size_t>(i));
  }
  const uint64_t version = scene.ReadWithHistory([this](const CollisionWorld& world,
                                                        const PoseHistory& history, uint64_t v) {
    // Ticks are checked under the same read as the queries run: the window cannot move
    // in between. A query naming a tick not retained gets its own OUT_OF_RANGE error.
    size_t kept = 0;
    for (size_t j = 0; j < queries_.size(); ++j) {
      absl::Status s = CheckQueryTick(history, queries_[j], slots_[j]);
      if (!s.ok()) {
        ToProtoError(s, response_.mutable_results(static_cast<int>(slots_[j]))->mutable_error());
        continue;
      }
      if (kept != j) {
        queries_[kept] = std::move(queries_[j]);
        slots_[kept] = slots_[j];
      }
      ++kept;
    }
    queries_.resize(kept);
    slots_.resize(kept);
    RunBatch(world, history, queries_, &results_, &hits_);
    return v;
  });
  response_.set_version(version);
  for (size_t j = 0; j < queries_.size(); ++j) {
    const QueryResult& r = results_[j];
    v1::QueryResult* out = response_.mutable_results(static_cast<int>(slots_[j]));
    out->set_truncated(r.truncated);
    out->mutable_hits()->Reserve(static_cast<int>(r.hit_count));
    for (uint32_t h = 0; h < r.hit_count; ++h) HitToProto(hits_[r.first_hit + h], out->add_hits());
  }
}

}  // namespace collide
