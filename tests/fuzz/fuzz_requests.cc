// Fuzz target: request messages from arbitrary bytes, validated at the service edge and applied
// to a live scene (tests/fuzz/CMakeLists.txt). The input is a stream of records (fuzz_input.h);
// each record's tag picks the message type and its bytes are parsed as that message:
//   0 UpdateBatch   1 UpsertBodiesRequest   2 RemoveBodiesRequest   3 QueryBatch
//   4 RaycastRequest   5 SphereCastRequest   6 OverlapRequest   7 CreateSceneRequest
// Beyond "no crash, no sanitizer report", it checks that a rejected write changes nothing (the
// scene's version and body count), that an accepted one adds one version, and that every
// answer respects max_hits and names only bodies of the scene.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "absl/status/status.h"
#include "collide/v1/collide.pb.h"
#include "fuzz/fuzz_input.h"
#include "fuzz/fuzz_scene.h"
#include "query/batch.h"
#include "scene/scene_query.h"
#include "scene/validate.h"
#include "server/convert/field_path.h"
#include "server/convert/query_convert.h"
#include "server/convert/scene_convert.h"
#include "server/convert/update_convert.h"

namespace collide::fuzz {
namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

// Applies a converted write; checks all-or-nothing.
void ApplyWrite(Scene& scene, const UpdateBatch& batch, const ClientTag& client) {
  const uint64_t version = scene.version();
  const int32_t bodies = scene.Stats().body_count;
  absl::StatusOr<ApplyResult> result = scene.Apply(batch, client);
  if (!result.ok()) {
    Check(scene.version() == version);
    Check(scene.Stats().body_count == bodies);
    return;
  }
  Check(result->duplicate ? scene.version() == version : scene.version() == version + 1);
}

// Runs converted queries as the service does (AnswerQueries: one read, ticks checked); checks
// the hits.
void RunQueries(const Scene& scene, std::vector<Query>& queries, const ServiceLimits& limits) {
  std::vector<absl::Status> status;
  std::vector<QueryResult> results;
  std::vector<QueryHit> hits;
  AnswerQueries(scene, queries, {}, &status, &results, &hits);
  Check(status.size() == queries.size());
  Check(results.size() == queries.size());
  for (size_t i = 0; i < results.size(); ++i) {
    const QueryResult& r = results[i];
    if (!status[i].ok()) {
      Check(status[i].code() == absl::StatusCode::kOutOfRange && r.hit_count == 0);
      continue;
    }
    Check(r.hit_count <= queries[i].max_hits && r.hit_count <= limits.max_hits);
    for (uint32_t h = 0; h < r.hit_count; ++h) {
      const QueryHit& hit = hits[r.first_hit + h];
      // A past-tick query may hit a body removed since; a current one only live bodies.
      if (!queries[i].at_tick.has_value()) Check(scene.GetBody(hit.body_id).has_value());
      v1::Hit out;
      HitToProto(hit, &out);
    }
  }
}

// A unary query as the service takes it: translated, then checked by the core.
void AddUnary(absl::StatusOr<Query> query, const ServiceLimits& limits,
              std::vector<Query>* queries) {
  if (query.ok() && PrepareQuery(&*query, QueryLimitsOf(limits), 0).ok()) {
    queries->push_back(*query);
  }
}

void RunOne(Scene& scene, uint8_t tag, absl::string_view bytes, const ServiceLimits& limits) {
  UpdateBatch batch;
  std::vector<Query> queries;
  switch (tag % 8) {
    case 0: {
      v1::UpdateBatch proto;
      if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;
      absl::Status status = UpdateBatchFromProto(proto, limits, &batch);
      if (!status.ok()) return;
      const uint64_t version = scene.version();
      absl::StatusOr<ApplyResult> result = scene.Apply(
          batch, ClientTag{.client_id = proto.client_id(), .sequence = proto.client_sequence()});
      if (!result.ok()) {
        Check(scene.version() == version);
        (void)ForRequest(result.status(), LayoutOf(proto));
      }
      return;
    }
    case 1: {
      v1::UpsertBodiesRequest proto;
      if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;
      if (!UpsertRequestToBatch(proto, limits, &batch).ok()) return;
      ApplyWrite(scene, batch, {});
      return;
    }
    case 2: {
      v1::RemoveBodiesRequest proto;
      if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;
      if (!RemoveRequestToBatch(proto, limits, &batch).ok()) return;
      ApplyWrite(scene, batch, {});
      return;
    }
    case 3: {
      v1::QueryBatch proto;
      if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;
      if (static_cast<size_t>(proto.queries_size()) > limits.max_queries_per_batch) return;
      for (int i = 0; i < proto.queries_size(); ++i) {
        Query query;
        const size_t index = static_cast<size_t>(i);
        if (QueryFromProto(proto.queries(i), index, &query).ok() &&
            PrepareQuery(&query, QueryLimitsOf(limits), index).ok()) {
          queries.push_back(query);
        }
      }
      RunQueries(scene, queries, limits);
      return;
    }
    case 4: {
      v1::RaycastRequest proto;
      if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;
      AddUnary(RaycastRequestToQuery(proto), limits, &queries);
      RunQueries(scene, queries, limits);
      return;
    }
    case 5: {
      v1::SphereCastRequest proto;
      if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;
      AddUnary(SphereCastRequestToQuery(proto), limits, &queries);
      RunQueries(scene, queries, limits);
      return;
    }
    case 6: {
      v1::OverlapRequest proto;
      if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;
      AddUnary(OverlapRequestToQuery(proto), limits, &queries);
      RunQueries(scene, queries, limits);
      return;
    }
    default: {
      v1::CreateSceneRequest proto;
      if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;
      absl::StatusOr<SceneOptions> options = SceneOptionsFromProto(proto.options(), limits);
      if (!options.ok()) return;
      // Unset max_bodies takes the server's cap; what the store then accepts is within it.
      if (!proto.options().has_max_bodies()) {
        Check(options->max_bodies <= limits.max_bodies_per_scene);
      }
      if (ValidateSceneOptions(*options, limits.max_bodies_per_scene).ok()) {
        Check(options->max_bodies <= limits.max_bodies_per_scene);
      }
      return;
    }
  }
}

}  // namespace
}  // namespace collide::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace collide;
  static const ServiceLimits limits = fuzz::FuzzLimits();
  std::unique_ptr<Scene> scene = fuzz::MakeLiveScene();
  fuzz::RecordReader reader(absl::string_view(reinterpret_cast<const char*>(data), size));
  // At most 16 messages per input: enough for update-then-query sequences, and quick.
  for (int i = 0; i < 16; ++i) {
    auto record = reader.Next();
    if (!record) break;
    fuzz::RunOne(*scene, record->first, record->second, limits);
  }
  return 0;
}
