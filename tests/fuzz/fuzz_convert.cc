// Fuzz target: proto <-> core conversion round trips (tests/fuzz/CMakeLists.txt). The input's
// first byte picks the message, the rest is parsed as it:
//   0 Body: BodyToOp, applied to a scene, read back (BodyStateToProto) and converted again must
//     give the same body (floats within 1e-6 relative: rotations are renormalised once)
//   1 SceneOptions: SceneOptionsFromProto, the scene's info back to proto and converted again
//     must give the same options
//   2 Query: QueryFromProto must accept or reject it with a field path under `queries[0]`
//   3 UpdateBatch: an accepted batch through the store's record codec (EncodeUpdateRecord then
//     DecodeLogRecord) comes back op for op
// Any other outcome than a round trip that holds, or a clean rejection, aborts.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/match.h"
#include "collide/v1/collide.pb.h"
#include "fuzz/fuzz_scene.h"
#include "scene/validate.h"
#include "server/convert/query_convert.h"
#include "server/convert/scene_convert.h"
#include "server/convert/update_convert.h"
#include "store/log_codec.h"

namespace collide::fuzz {
namespace {

// Aborts, naming the line, when `condition` is false.
void Check(bool condition, int line = __builtin_LINE()) {
  if (condition) return;
  std::fprintf(stderr, "fuzz_convert: check failed at line %d\n", line);
  std::abort();
}

bool Near(float a, float b) {
  if (a == b) return true;
  return std::fabs(a - b) <= 1e-6f * std::max({1.0f, std::fabs(a), std::fabs(b)});
}

bool SameOp(const UpdateOp& a, const UpdateOp& b, bool exact) {
  auto eq = [exact](float x, float y) {
    return exact ? std::memcmp(&x, &y, sizeof x) == 0 : Near(x, y);
  };
  const Pose& p = a.pose;
  const Pose& q = b.pose;
  if (a.type != b.type || a.body_id != b.body_id) return false;
  if (a.type == UpdateOpType::kRemove) return true;
  if (a.type == UpdateOpType::kSetFilter) return a.category == b.category && a.mask == b.mask;
  if (!eq(p.position.x, q.position.x) || !eq(p.position.y, q.position.y) ||
      !eq(p.position.z, q.position.z) || !eq(p.rotation.x, q.rotation.x) ||
      !eq(p.rotation.y, q.rotation.y) || !eq(p.rotation.z, q.rotation.z) ||
      !eq(p.rotation.w, q.rotation.w)) {
    return false;
  }
  if (a.type == UpdateOpType::kSetPose) return true;
  if (a.kind != b.kind || a.category != b.category || a.mask != b.mask ||
      a.user_data != b.user_data || a.shape.type != b.shape.type) {
    return false;
  }
  switch (a.shape.type) {
    case ShapeType::kSphere:
      return eq(a.shape.sphere.radius, b.shape.sphere.radius);
    case ShapeType::kBox:
      return eq(a.shape.box.half_extents.x, b.shape.box.half_extents.x) &&
             eq(a.shape.box.half_extents.y, b.shape.box.half_extents.y) &&
             eq(a.shape.box.half_extents.z, b.shape.box.half_extents.z);
    case ShapeType::kCapsule:
      return eq(a.shape.capsule.radius, b.shape.capsule.radius) &&
             eq(a.shape.capsule.half_height, b.shape.capsule.half_height);
  }
  return false;
}

void BodyRoundTrip(const v1::Body& body) {
  UpdateOp op;
  // Translated, then checked by the core as the scene checks an upsert.
  if (!BodyToOp(body, &op).ok() || !ValidateOpValues(op, 0).ok()) return;
  SceneOptions options;
  options.max_bodies = 4;
  Scene scene("fuzz", options);
  UpdateBatch batch;
  batch.ops.push_back(op);
  Check(scene.Apply(batch).ok());
  std::optional<BodyState> state = scene.GetBody(body.id());
  Check(state.has_value());
  v1::Body back;
  BodyStateToProto(*state, &back);
  UpdateOp again;
  Check(BodyToOp(back, &again).ok() && ValidateOpValues(again, 0).ok());
  // The scene stores the rotation normalised.
  UpdateOp stored = op;
  stored.pose = NormalizedPose(op.pose);
  Check(SameOp(stored, again, /*exact=*/false));
}

void SceneOptionsRoundTrip(const v1::SceneOptions& proto) {
  const ServiceLimits limits = FuzzLimits();
  absl::StatusOr<SceneOptions> options = SceneOptionsFromProto(proto, limits);
  if (options.ok()) {
    if (absl::Status s = ValidateSceneOptions(*options, limits.max_bodies_per_scene); !s.ok()) {
      options = s;
    }
  }
  if (!options.ok()) {
    Check(absl::StartsWith(options.status().message(), "options."));
    return;
  }
  Scene scene("fuzz", *options);
  v1::SceneInfo info;
  SceneInfoToProto(scene, DurabilityPolicy::kAlways, &info);
  absl::StatusOr<SceneOptions> again = SceneOptionsFromProto(info.options(), limits);
  Check(again.ok());
  Check(again->max_bodies == options->max_bodies &&
        again->history_ticks == options->history_ticks && again->fat_margin == options->fat_margin);
}

void QueryConversion(const v1::Query& proto) {
  Query query;
  absl::Status status = QueryFromProto(proto, 0, &query);
  if (status.ok()) status = PrepareQuery(&query, QueryLimitsOf(FuzzLimits()), 0);
  if (!status.ok()) Check(absl::StartsWith(status.message(), "queries[0]"));
}

void RecordRoundTrip(const v1::UpdateBatch& proto) {
  UpdateBatch batch;
  if (!UpdateBatchFromProto(proto, FuzzLimits(), &batch).ok()) return;
  // Only batches the scene accepted are logged: their values passed its checks.
  for (size_t i = 0; i < batch.ops.size(); ++i) {
    if (!ValidateOpValues(batch.ops[i], i).ok()) return;
  }
  const ClientTag client{.client_id = proto.client_id(), .sequence = proto.client_sequence()};
  const std::string payload = EncodeUpdateRecord("fuzz", client, 7, batch);
  absl::StatusOr<DecodedRecord> decoded = DecodeLogRecord(payload);
  Check(decoded.ok());
  Check(decoded->type == DecodedRecord::Type::kUpdate && decoded->scene == "fuzz");
  Check(decoded->client.client_id == client.client_id && decoded->version == 7);
  Check(decoded->batch.ops.size() == batch.ops.size());
  Check(decoded->batch.tick == batch.tick);
  for (size_t i = 0; i < batch.ops.size(); ++i) {
    Check(SameOp(batch.ops[i], decoded->batch.ops[i], /*exact=*/true));
  }
}

}  // namespace
}  // namespace collide::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace collide;
  if (size == 0) return 0;
  const char* bytes = reinterpret_cast<const char*>(data + 1);
  const int length = static_cast<int>(size - 1);
  switch (data[0] % 4) {
    case 0: {
      v1::Body body;
      if (body.ParseFromArray(bytes, length)) fuzz::BodyRoundTrip(body);
      break;
    }
    case 1: {
      v1::SceneOptions options;
      if (options.ParseFromArray(bytes, length)) fuzz::SceneOptionsRoundTrip(options);
      break;
    }
    case 2: {
      v1::Query query;
      if (query.ParseFromArray(bytes, length)) fuzz::QueryConversion(query);
      break;
    }
    default: {
      v1::UpdateBatch batch;
      if (batch.ParseFromArray(bytes, length)) fuzz::RecordRoundTrip(batch);
      break;
    }
  }
  return 0;
}
