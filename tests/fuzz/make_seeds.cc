// collide-fuzz-seeds <corpus dir>: writes the seed corpora of the fuzz targets into
// <corpus dir>/<target>/ (the committed tests/fuzz/corpus/ was made by
// `scripts/fuzz --seeds`). The seeds are small valid inputs of each kind, so that the fuzzer
// starts from messages and data directories that pass the first checks.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "collide/v1/collide.pb.h"
#include "fuzz/fuzz_input.h"
#include "store/database.h"
#include "store/fault_file_system.h"

namespace collide::fuzz {
namespace {

namespace fs = std::filesystem;

void Write(const fs::path& dir, const std::string& name, const std::string& bytes) {
  fs::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void SetVec(v1::Vec3* v, float x, float y, float z) {
  v->set_x(x);
  v->set_y(y);
  v->set_z(z);
}

v1::Body MakeBody(uint64_t id, int shape) {
  v1::Body body;
  body.set_id(id);
  switch (shape % 3) {
    case 0:
      body.mutable_shape()->mutable_sphere()->set_radius(0.5f);
      break;
    case 1:
      SetVec(body.mutable_shape()->mutable_box()->mutable_half_extents(), 1.0f, 0.5f, 2.0f);
      break;
    default:
      body.mutable_shape()->mutable_capsule()->set_radius(0.5f);
      body.mutable_shape()->mutable_capsule()->set_half_height(1.0f);
      break;
  }
  SetVec(body.mutable_pose()->mutable_position(), static_cast<float>(id), 0.0f, 0.0f);
  v1::Quat* q = body.mutable_pose()->mutable_rotation();
  q->set_z(0.25881904f);
  q->set_w(0.96592583f);
  body.set_category(1u << (id % 3));
  body.set_user_data(id * 7);
  body.set_kind(id % 2 == 0 ? v1::BODY_KIND_STATIC : v1::BODY_KIND_DYNAMIC);
  return body;
}

v1::UpdateBatch MakeUpdate() {
  v1::UpdateBatch batch;
  batch.set_scene("fuzz");
  batch.set_client_id(9);
  batch.set_client_sequence(1);
  batch.set_tick(2);
  *batch.add_ops()->mutable_upsert() = MakeBody(20, 1);
  v1::SetPose* set_pose = batch.add_ops()->mutable_set_pose();
  set_pose->set_id(3);
  SetVec(set_pose->mutable_pose()->mutable_position(), 1.0f, 2.0f, 3.0f);
  v1::SetFilter* set_filter = batch.add_ops()->mutable_set_filter();
  set_filter->set_id(4);
  set_filter->set_category(2);
  set_filter->set_mask(3);
  batch.add_ops()->set_remove(5);
  for (uint64_t id : {1, 2}) {
    batch.mutable_moves()->add_ids(id);
    for (float v : {0.5f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f, 1.0f}) batch.mutable_moves()->add_poses(v);
  }
  return batch;
}

v1::Query MakeQuery(int kind) {
  v1::Query query;
  query.set_request_id(static_cast<uint64_t>(kind));
  switch (kind % 5) {
    case 0:
      SetVec(query.mutable_raycast()->mutable_origin(), -10.0f, 0.0f, 0.0f);
      SetVec(query.mutable_raycast()->mutable_direction(), 1.0f, 0.0f, 0.0f);
      query.mutable_raycast()->set_max_distance(100.0f);
      query.set_mode(v1::MODE_ALL);
      break;
    case 1:
      SetVec(query.mutable_sphere_cast()->mutable_origin(), 0.0f, -10.0f, 0.0f);
      SetVec(query.mutable_sphere_cast()->mutable_direction(), 0.0f, 1.0f, 0.0f);
      query.mutable_sphere_cast()->set_max_distance(20.0f);
      query.mutable_sphere_cast()->set_radius(0.25f);
      break;
    case 2:
      query.mutable_overlap()->mutable_shape()->mutable_sphere()->set_radius(1.5f);
      SetVec(query.mutable_overlap()->mutable_pose()->mutable_position(), 4.5f, 0.5f, 0.0f);
      query.set_detail(true);
      query.set_mode(v1::MODE_ALL);
      break;
    case 3:
      SetVec(query.mutable_point()->mutable_point(), 0.0f, 0.0f, 0.0f);
      query.mutable_point()->set_radius(3.0f);
      query.set_mode(v1::MODE_ALL);
      query.set_at_tick(1);
      break;
    default:
      SetVec(query.mutable_aabb()->mutable_region()->mutable_min(), -5.0f, -5.0f, -5.0f);
      SetVec(query.mutable_aabb()->mutable_region()->mutable_max(), 5.0f, 5.0f, 5.0f);
      query.mutable_filter()->add_excluded_ids(2);
      query.set_mode(v1::MODE_ALL);
      query.set_max_hits(4);
      break;
  }
  return query;
}

void WriteRequestSeeds(const fs::path& dir) {
  std::string stream;
  AppendRecord(0, MakeUpdate().SerializeAsString(), &stream);
  v1::QueryBatch queries;
  queries.set_scene("fuzz");
  for (int kind = 0; kind < 5; ++kind) *queries.add_queries() = MakeQuery(kind);
  AppendRecord(3, queries.SerializeAsString(), &stream);
  Write(dir, "update_then_query", stream);

  v1::UpsertBodiesRequest upsert;
  upsert.set_scene("fuzz");
  for (uint64_t id = 30; id < 33; ++id) *upsert.add_bodies() = MakeBody(id, static_cast<int>(id));
  v1::RemoveBodiesRequest remove;
  remove.set_scene("fuzz");
  remove.add_ids(1);
  remove.add_ids(30);
  std::string writes;
  AppendRecord(1, upsert.SerializeAsString(), &writes);
  AppendRecord(2, remove.SerializeAsString(), &writes);
  Write(dir, "upsert_remove", writes);

  v1::RaycastRequest raycast;
  raycast.set_scene("fuzz");
  *raycast.mutable_ray() = MakeQuery(0).raycast();
  raycast.set_mode(v1::MODE_ALL);
  v1::SphereCastRequest cast;
  cast.set_scene("fuzz");
  *cast.mutable_cast() = MakeQuery(1).sphere_cast();
  v1::OverlapRequest overlap;
  overlap.set_scene("fuzz");
  *overlap.mutable_overlap() = MakeQuery(2).overlap();
  overlap.set_detail(true);
  v1::CreateSceneRequest create;
  create.set_scene("fuzz2");
  create.mutable_options()->set_fat_margin(0.2f);
  create.mutable_options()->set_max_bodies(100);
  create.mutable_options()->set_history_ticks(4);
  create.mutable_options()->set_durability(v1::DURABILITY_PERIODIC);
  std::string unary;
  AppendRecord(4, raycast.SerializeAsString(), &unary);
  AppendRecord(5, cast.SerializeAsString(), &unary);
  AppendRecord(6, overlap.SerializeAsString(), &unary);
  AppendRecord(7, create.SerializeAsString(), &unary);
  Write(dir, "unary_queries_and_create", unary);
}

void WriteConvertSeeds(const fs::path& dir) {
  for (int shape = 0; shape < 3; ++shape) {
    Write(dir, "body_" + std::to_string(shape),
          std::string(1, '\0') +
              MakeBody(static_cast<uint64_t>(shape + 1), shape).SerializeAsString());
  }
  v1::SceneOptions options;
  options.set_fat_margin(0.05f);
  options.set_max_bodies(10);
  options.set_history_ticks(16);
  Write(dir, "scene_options", std::string(1, '\1') + options.SerializeAsString());
  for (int kind = 0; kind < 5; ++kind) {
    Write(dir, "query_" + std::to_string(kind),
          std::string(1, '\2') + MakeQuery(kind).SerializeAsString());
  }
  Write(dir, "update_batch", std::string(1, '\3') + MakeUpdate().SerializeAsString());
}

// A data directory made by the store itself: scenes created, written, snapshotted, one deleted.
void WriteRecoverySeeds(const fs::path& dir) {
  for (bool snapshot : {false, true}) {
    FaultFileSystem files;
    DatabaseOptions options;
    options.file_system = &files;
    options.sync_interval = std::chrono::milliseconds(0);
    options.maintenance_interval = std::chrono::hours(1);
    {
      auto db = Database::Open("/data", options);
      if (!db.ok()) {
        std::fprintf(stderr, "open: %s\n", db.status().ToString().c_str());
        std::exit(1);
      }
      SceneOptions scene_options;
      scene_options.max_bodies = 16;
      (void)(*db)->CreateScene("a", scene_options);
      (void)(*db)->CreateScene("b", scene_options);
      for (uint64_t round = 1; round <= 3; ++round) {
        UpdateBatch batch;
        BodyDesc desc;
        desc.id = round;
        desc.shape = Sphere{0.5f};
        desc.pose.position = Vec3{static_cast<float>(round), 0.0f, 0.0f};
        batch.ops.push_back(UpsertOp(desc, round));
        batch.ops.push_back(SetPoseOp(1, Pose{}));
        batch.tick = round;
        (void)(*db)->ApplyAndWait("a", ClientTag{.client_id = 5, .sequence = round}, batch);
      }
      if (snapshot) (void)(*db)->Checkpoint();
      (void)(*db)->DeleteScene("b");
      (void)(*db)->Close();
    }
    std::string input;
    auto names = files.ListDir("/data");
    if (!names.ok()) std::exit(1);
    for (const std::string& name : *names) {
      if (name == "LOCK") continue;
      const std::string contents = files.Contents(JoinPath("/data", name));
      if (contents.size() > 60000) continue;
      std::string record(1, static_cast<char>(name.size()));
      record += name;
      record += contents;
      AppendRecord(0, record, &input);
    }
    Write(dir, snapshot ? "snapshot_and_log" : "log_only", input);
  }
}

}  // namespace
}  // namespace collide::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: collide-fuzz-seeds <corpus dir>\n");
    return 2;
  }
  const std::filesystem::path root = argv[1];
  collide::fuzz::WriteRequestSeeds(root / "fuzz_requests");
  collide::fuzz::WriteConvertSeeds(root / "fuzz_convert");
  collide::fuzz::WriteRecoverySeeds(root / "fuzz_recovery");
  return 0;
}
