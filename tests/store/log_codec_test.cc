#include "store/log_codec.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "store/batch_stream.h"
#include "store/store_testing.h"

namespace collide {
namespace {

namespace pb = ::collide::storage::v1;

bool SameOp(const UpdateOp& a, const UpdateOp& b) {
  if (a.type != b.type || a.body_id != b.body_id) return false;
  const bool upsert = a.type == UpdateOpType::kUpsert;
  if ((upsert || a.type == UpdateOpType::kSetPose) && !(a.pose == b.pose)) return false;
  if ((upsert || a.type == UpdateOpType::kSetFilter) &&
      (a.category != b.category || a.mask != b.mask)) {
    return false;
  }
  if (upsert) {
    if (a.kind != b.kind || a.user_data != b.user_data || a.shape.type != b.shape.type) {
      return false;
    }
    SceneState sa, sb;
    sa.bodies.push_back(BodyState{.shape = a.shape});
    sb.bodies.push_back(BodyState{.shape = b.shape});
    if (!SameState(sa, sb)) return false;
  }
  return true;
}

TEST(LogCodec, UpdateRecordsRoundTripEveryOpType) {
  BatchStream stream(7);
  for (int k = 1; k <= 300; ++k) {
    const UpdateBatch batch = stream.Next();
    const std::string payload =
        EncodeUpdateRecord("arena", ClientTag{.client_id = 3, .sequence = 100u + k}, k, batch);
    absl::StatusOr<DecodedRecord> decoded = DecodeLogRecord(payload);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(decoded->type, DecodedRecord::Type::kUpdate);
    EXPECT_EQ(decoded->scene, "arena");
    EXPECT_EQ(decoded->client.client_id, 3u);
    EXPECT_EQ(decoded->client.sequence, 100u + k);
    EXPECT_EQ(decoded->version, static_cast<uint64_t>(k));
    ASSERT_EQ(decoded->batch.ops.size(), batch.ops.size());
    for (size_t i = 0; i < batch.ops.size(); ++i) {
      ASSERT_TRUE(SameOp(decoded->batch.ops[i], batch.ops[i])) << "batch " << k << " op " << i;
    }
  }
}

// A reused encoder writes the bytes a fresh encoding does, whatever the records before it held:
// mixed batches (types and shapes columns) between batches of moves only, ticks named and not,
// other scenes and clients, a release of its storage between two records.
TEST(LogCodec, AReusedEncoderWritesWhatAFreshEncodingDoes) {
  BatchStream stream(11);
  UpdateRecordEncoder encoder;
  for (int k = 1; k <= 300; ++k) {
    UpdateBatch batch = stream.Next();
    if (k % 3 == 0) {
      // Moves only: no types column.
      batch.ops.clear();
      for (uint64_t id = 0; id < static_cast<uint64_t>(k); ++id) {
        batch.ops.push_back(SetPoseOp(id, Pose{.position = Vec3{1.0f * k, 2, 3}}));
      }
    }
    if (k % 4 == 0) batch.tick = static_cast<uint64_t>(k);
    if (k % 5 == 0) batch.tick.reset();
    const std::string scene = k % 2 == 0 ? "arena" : "a-longer-scene-name";
    const ClientTag client{.client_id = static_cast<uint64_t>(k % 7), .sequence = 100u + k};
    const std::string fresh = EncodeUpdateRecord(scene, client, k, batch);
    const std::string reused(encoder.Encode(scene, client, k, batch));
    ASSERT_EQ(reused, fresh) << "record " << k;
    if (k % 50 == 0) encoder.ReleaseIfLarger(0);
    if (k % 50 == 1) {
      // Kept between records (a small batch takes far less than 1 MiB).
      EXPECT_GT(encoder.KeptBytes(), 0u);
      encoder.ReleaseIfLarger(1 << 20);
      EXPECT_GT(encoder.KeptBytes(), 0u) << "record " << k;
    }
  }
  encoder.ReleaseIfLarger(0);
  EXPECT_LT(encoder.KeptBytes(), 1024u);
}

TEST(LogCodec, MovesAreCompact) {
  UpdateBatch batch;
  for (uint64_t id = 0; id < 1000; ++id) {
    batch.ops.push_back(SetPoseOp(id, Pose{.position = Vec3{1, 2, 3}}));
  }
  const std::string payload = EncodeUpdateRecord("arena", ClientTag{}, 1, batch);
  // 7 packed floats and a varint id per move, no per-op type or tag.
  EXPECT_LE(payload.size(), 1000u * (28 + 2) + 64);
  absl::StatusOr<DecodedRecord> decoded = DecodeLogRecord(payload);
  ASSERT_TRUE(decoded.ok());
  ASSERT_EQ(decoded->batch.ops.size(), 1000u);
  EXPECT_EQ(decoded->batch.ops[999].type, UpdateOpType::kSetPose);
  EXPECT_EQ(decoded->batch.ops[999].body_id, 999u);
}

TEST(LogCodec, SceneRecordsRoundTrip) {
  const SceneOptions options{
      .fat_margin = 0.25f, .max_bodies = 77, .durability = DurabilityPolicy::kPeriodic};
  absl::StatusOr<DecodedRecord> created = DecodeLogRecord(EncodeCreateSceneRecord("s-1", options));
  ASSERT_TRUE(created.ok());
  EXPECT_EQ(created->type, DecodedRecord::Type::kCreateScene);
  EXPECT_EQ(created->scene, "s-1");
  EXPECT_EQ(created->options.fat_margin, 0.25f);
  EXPECT_EQ(created->options.max_bodies, 77u);
  EXPECT_EQ(created->options.durability, DurabilityPolicy::kPeriodic);
  absl::StatusOr<DecodedRecord> deleted = DecodeLogRecord(EncodeDeleteSceneRecord("s-1"));
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted->type, DecodedRecord::Type::kDeleteScene);
}

TEST(LogCodec, SnapshotsRoundTrip) {
  Scene scene("arena", SceneOptions{});
  BatchStream stream(11);
  for (uint64_t k = 1; k <= 200; ++k) ASSERT_TRUE(scene.Apply(stream.Next(), ClientTag{1, k}).ok());
  ASSERT_TRUE(scene.Apply(UpdateBatch{}, ClientTag{9, 4}).ok());
  SceneState state = scene.CaptureState();
  state.log_position = 500;
  absl::StatusOr<DecodedSnapshot> decoded =
      DecodeSnapshot(EncodeSnapshot("arena", scene.options(), 3, state));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->scene, "arena");
  EXPECT_EQ(decoded->create_sequence, 3u);
  EXPECT_EQ(decoded->state.log_position, 500u);
  EXPECT_TRUE(SameState(decoded->state, state));
}

TEST(LogCodec, RejectsDamagedMessages) {
  EXPECT_EQ(DecodeLogRecord("\xff\xff\xff").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeLogRecord("").status().code(), absl::StatusCode::kDataLoss);  // no record type
  pb::LogRecord record;
  pb::OpColumns* ops = record.mutable_update()->mutable_ops();
  ops->add_body_ids(1);
  ops->add_poses(1.0f);  // 1 float for a move that needs 7
  absl::Status short_column = DecodeLogRecord(record.SerializeAsString()).status();
  EXPECT_EQ(short_column.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(short_column.message(), "update record: ops[0]: column poses is too short");
  for (int i = 0; i < 7; ++i) ops->add_poses(0.0f);  // now 8: one too many
  EXPECT_EQ(DecodeLogRecord(record.SerializeAsString()).status().message(),
            "update record: op columns hold entries no operation uses");
  ops->clear_poses();
  ops->set_types(std::string(1, '\x09'));
  EXPECT_EQ(DecodeLogRecord(record.SerializeAsString()).status().message(),
            "update record: ops[0]: unknown operation type 9");
  ops->set_types(std::string(2, '\x03'));
  EXPECT_EQ(DecodeLogRecord(record.SerializeAsString()).status().message(),
            "update record: op columns: 2 types for 1 body ids");
  pb::LogRecord create;
  create.mutable_create_scene()->set_scene("x");
  create.mutable_create_scene()->mutable_options()->set_max_bodies(0);
  EXPECT_EQ(DecodeLogRecord(create.SerializeAsString()).status().code(),
            absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace collide
