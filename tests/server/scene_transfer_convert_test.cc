// SceneExporter and SceneImporter in process: chunks bounded by count and bytes, the trailer's
// counts and checksum (over the header, the chunks and the counts), a round trip that keeps every
// value, and the importer's refusals (a changed header, an unknown format among them).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scene/scene.h"
#include "scene/validate.h"
#include "server/convert/field_path.h"
#include "server/convert/scene_transfer.h"
#include "server/service_options.h"

namespace collide {
namespace {

SceneState StateOf(int count) {
  SceneState state;
  state.version = 17;
  state.tick = 9;
  state.clients = {ClientMark{.client_id = 3, .sequence = 40, .version = 12},
                   ClientMark{.client_id = 8, .sequence = 2, .version = 17}};
  for (int i = 0; i < count; ++i) {
    BodyState body;
    body.id = static_cast<uint64_t>(i) * 2 + 1;
    body.shape =
        i % 2 == 0 ? Shape(Sphere{.radius = 0.5f}) : Shape(Box{.half_extents = Vec3{1, 2, 3}});
    body.pose.position = Vec3{static_cast<float>(i), 1, 2};
    body.pose.rotation = Quat{0.5f, 0.5f, 0.5f, 0.5f};
    body.category = 4;
    body.mask = 6;
    body.kind = i % 3 == 0 ? BodyKind::kStatic : BodyKind::kDynamic;
    body.user_data = ~uint64_t{0} - static_cast<uint64_t>(i);  // 10 bytes as a varint
    state.bodies.push_back(body);
  }
  return state;
}

std::vector<v1::SceneExportMessage> ExportAll(const SceneState& state, uint32_t chunk_bodies) {
  SceneExporter exporter("arena", SceneOptions{.history_ticks = 7}, state, chunk_bodies);
  std::vector<v1::SceneExportMessage> messages;
  v1::SceneExportMessage message;
  while (exporter.Next(&message)) messages.push_back(message);
  return messages;
}

absl::StatusOr<ImportedScene> ImportAll(const std::vector<v1::SceneExportMessage>& messages,
                                        const ServiceLimits& limits = {}) {
  SceneImporter importer(limits);
  for (size_t i = 0; i < messages.size(); ++i) {
    v1::ImportSceneRequest request;
    *request.mutable_message() = messages[i];
    if (absl::Status s = importer.Add(request, request.ByteSizeLong()); !s.ok()) return s;
  }
  return std::move(importer).Finish();
}

// What an ImportScene stream does with `messages`: the importer's checks, then the store's
// (ValidateSceneOptions, Scene::Restore, as Database::ImportScene), their errors in the
// request's words.
absl::StatusOr<ImportedScene> ImportAndCheck(const std::vector<v1::SceneExportMessage>& messages) {
  absl::StatusOr<ImportedScene> imported = ImportAll(messages);
  if (!imported.ok()) return imported;
  absl::Status status = ValidateSceneOptions(imported->options);
  if (status.ok()) {
    status = Scene::Restore(imported->scene, imported->options, imported->state).status();
  }
  if (status.ok()) return imported;
  return ForRequest(status, RequestLayout{.kind = RequestLayout::Kind::kImport,
                                          .chunk_starts = imported->chunk_starts});
}

TEST(SceneExporter, ChunksAreBoundedByCountAndBytes) {
  const SceneState state = StateOf(40000);
  // 16,384 bodies of about 80 bytes pass 1 MiB: the byte bound cuts first.
  const std::vector<v1::SceneExportMessage> messages = ExportAll(state, 16384);
  ASSERT_TRUE(messages.front().has_header());
  ASSERT_TRUE(messages.back().has_trailer());
  uint64_t bodies = 0;
  for (size_t i = 1; i + 1 < messages.size(); ++i) {
    const v1::SceneExportChunk& chunk = messages[i].chunk();
    EXPECT_LE(chunk.bodies_size(), 16384);
    EXPECT_LE(chunk.ByteSizeLong(), kExportChunkBytes + 128);
    bodies += chunk.bodies_size();
  }
  EXPECT_EQ(bodies, 40000u);
  EXPECT_GT(messages.size(), 2u + 40000 / 16384 + 1);  // more chunks than the count alone needs
  EXPECT_EQ(messages.back().trailer().body_count(), 40000u);
  EXPECT_EQ(messages.back().trailer().chunk_count(), messages.size() - 2);
  // A small count bound.
  const std::vector<v1::SceneExportMessage> small = ExportAll(state, 1000);
  EXPECT_EQ(small.size(), 2u + 40);
}

TEST(SceneImporter, ARoundTripKeepsEveryValue) {
  const SceneState state = StateOf(3000);
  absl::StatusOr<ImportedScene> imported = ImportAll(ExportAll(state, 0));
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->scene, "arena");
  EXPECT_EQ(imported->options.history_ticks, 7u);
  EXPECT_EQ(imported->state.version, 17u);
  EXPECT_EQ(imported->state.tick, 9u);
  EXPECT_EQ(imported->state.clients, state.clients);
  ASSERT_EQ(imported->state.bodies.size(), state.bodies.size());
  for (size_t i = 0; i < state.bodies.size(); ++i) {
    const BodyState& a = imported->state.bodies[i];
    const BodyState& b = state.bodies[i];
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.shape.type, b.shape.type);
    EXPECT_TRUE(a.pose == b.pose);
    EXPECT_EQ(a.category, b.category);
    EXPECT_EQ(a.mask, b.mask);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.user_data, b.user_data);
  }
}

TEST(SceneExporter, TheTrailerChecksumsTheHeaderTheChunksAndTheCounts) {
  const std::vector<v1::SceneExportMessage> messages = ExportAll(StateOf(50), 20);
  ASSERT_EQ(messages.size(), 5u);
  EXPECT_EQ(messages.front().header().format(), kExportFormat);
  uint32_t crc = ExtendExportCrc(0, messages.front().header());
  for (size_t i = 1; i + 1 < messages.size(); ++i) crc = ExtendExportCrc(crc, messages[i].chunk());
  v1::SceneExportTrailer counts;
  counts.set_body_count(50);
  counts.set_chunk_count(3);
  crc = ExtendExportCrc(crc, counts);
  EXPECT_EQ(messages.back().trailer().crc32c(), crc);
  EXPECT_EQ(messages.back().trailer().body_count(), 50u);
  EXPECT_EQ(messages.back().trailer().chunk_count(), 3u);
}

TEST(SceneImporter, RefusesWhatDoesNotAddUp) {
  const std::vector<v1::SceneExportMessage> good = ExportAll(StateOf(100), 30);
  ASSERT_EQ(good.size(), 6u);
  struct Case {
    const char* name;
    absl::StatusCode code;
    const char* prefix;
    std::vector<v1::SceneExportMessage> messages;
  };
  std::vector<Case> cases;
  {
    auto m = good;
    m.pop_back();
    cases.push_back({"no trailer", absl::StatusCode::kDataLoss, "stream", m});
  }
  {
    auto m = good;
    m[2].mutable_chunk()->mutable_bodies(3)->set_user_data(1);
    cases.push_back({"changed body", absl::StatusCode::kDataLoss, "trailer.crc32c", m});
  }
  {
    auto m = good;
    m.back().mutable_trailer()->set_chunk_count(5);
    cases.push_back({"chunk count", absl::StatusCode::kDataLoss, "trailer.chunk_count", m});
  }
  {
    auto m = good;
    m[3].mutable_chunk()->mutable_bodies(0)->set_id(1);
    cases.push_back(
        {"id out of order", absl::StatusCode::kInvalidArgument, "chunks[2].bodies[0].id", m});
  }
  {
    auto m = good;
    m[1].mutable_chunk()->mutable_bodies(2)->mutable_shape()->mutable_sphere()->set_radius(-2);
    // A sender that checksums what it sends: the value is the store's to refuse.
    uint32_t crc = ExtendExportCrc(0, m.front().header());
    for (const v1::SceneExportMessage& message : m) {
      if (message.has_chunk()) crc = ExtendExportCrc(crc, message.chunk());
    }
    v1::SceneExportTrailer counts = m.back().trailer();
    counts.clear_crc32c();
    m.back().mutable_trailer()->set_crc32c(ExtendExportCrc(crc, counts));
    cases.push_back({"bad radius", absl::StatusCode::kInvalidArgument,
                     "chunks[0].bodies[2].shape.sphere.radius", m});
  }
  {
    auto m = good;
    m[0].mutable_header()->set_tick(uint64_t{1} << 63);
    cases.push_back({"tick", absl::StatusCode::kInvalidArgument, "header.tick", m});
  }
  // The checksum covers the header and the trailer's counts, not only the chunks: a valid value
  // changed anywhere is refused.
  {
    auto m = good;
    m[0].mutable_header()->mutable_options()->set_max_bodies(5000);
    cases.push_back({"header option", absl::StatusCode::kDataLoss, "trailer.crc32c", m});
  }
  {
    auto m = good;
    m[0].mutable_header()->mutable_options()->set_fat_margin(0.025f);
    cases.push_back({"fat margin", absl::StatusCode::kDataLoss, "trailer.crc32c", m});
  }
  {
    auto m = good;
    m[0].mutable_header()->set_version(30);
    cases.push_back({"version", absl::StatusCode::kDataLoss, "trailer.crc32c", m});
  }
  {
    auto m = good;
    m[0].mutable_header()->mutable_clients(0)->set_sequence(41);
    cases.push_back({"mark", absl::StatusCode::kDataLoss, "trailer.crc32c", m});
  }
  {
    auto m = good;
    m[0].mutable_header()->set_scene("other");
    cases.push_back({"name", absl::StatusCode::kDataLoss, "trailer.crc32c", m});
  }
  {
    auto m = good;  // an unknown field in the header (a flipped tag) is covered too
    m[0].mutable_header()
        ->GetReflection()
        ->MutableUnknownFields(m[0].mutable_header())
        ->AddVarint(99, 1);
    cases.push_back({"unknown field", absl::StatusCode::kDataLoss, "trailer.crc32c", m});
  }
  {
    auto m = good;
    m[0].mutable_header()->set_format(3);
    cases.push_back({"format", absl::StatusCode::kInvalidArgument, "header.format: 3", m});
  }
  {
    auto m = good;  // an export of an earlier build: no format, a checksum over the chunks only
    m[0].mutable_header()->clear_format();
    cases.push_back(
        {"no format", absl::StatusCode::kInvalidArgument, "header.format: 0, this server", m});
  }
  for (const Case& c : cases) {
    absl::StatusOr<ImportedScene> imported = ImportAndCheck(c.messages);
    EXPECT_EQ(imported.status().code(), c.code) << c.name << ": " << imported.status();
    EXPECT_EQ(imported.status().message().rfind(c.prefix, 0), 0u)
        << c.name << ": " << imported.status();
  }
  ServiceLimits small;
  small.max_import_bytes = 1000;
  EXPECT_EQ(ImportAll(good, small).status().code(), absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace collide
