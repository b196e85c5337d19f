#include "server/convert/scene_transfer.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/field_error.h"
#include "base/status_macros.h"
#include "scene/scene_name.h"
#include "scene/validate.h"
#include "server/convert/scene_convert.h"
#include "server/convert/status_convert.h"
#include "store/crc32c.h"

namespace collide {
namespace {

// Versions and ticks of an imported scene: room for the scene to go on counting.
constexpr uint64_t kMaxImportedCounter = (uint64_t{1} << 63) - 1;
// Bytes a body adds to a chunk beyond its own encoding (tag and length).
constexpr size_t kBodyOverhead = 6;

void OptionsToProto(const SceneOptions& options, v1::SceneOptions* out) {
  out->set_fat_margin(options.fat_margin);
  out->set_max_bodies(options.max_bodies);
  out->set_history_ticks(options.history_ticks);
  out->set_durability(DurabilityToProto(options.durability));
}

absl::Status Misplaced(uint64_t index, absl::string_view what) {
  return InvalidElementError("messages", index, "", what);
}

}  // namespace

uint32_t ExtendExportCrc(uint32_t crc, const google::protobuf::MessageLite& part) {
  const std::string bytes = part.SerializeAsString();
  return Crc32cExtend(crc, bytes.data(), bytes.size());
}

SceneExporter::SceneExporter(std::string scene, const SceneOptions& options, SceneState state,
                             uint32_t max_bodies_per_chunk)
    : scene_(std::move(scene)),
      options_(options),
      state_(std::move(state)),
      chunk_bodies_(max_bodies_per_chunk == 0
                        ? kDefaultExportChunkBodies
                        : std::min(max_bodies_per_chunk, kMaxExportChunkBodies)) {}

bool SceneExporter::Next(v1::SceneExportMessage* message) {
  message->Clear();
  switch (stage_) {
    case Stage::kHeader: {
      v1::SceneExportHeader* header = message->mutable_header();
      header->set_scene(scene_);
      OptionsToProto(options_, header->mutable_options());
      header->set_version(state_.version);
      header->set_tick(state_.tick);
      for (const ClientMark& mark : state_.clients) {
        v1::ClientMark* out = header->add_clients();
        out->set_client_id(mark.client_id);
        out->set_sequence(mark.sequence);
        out->set_version(mark.version);
      }
      header->set_body_count(state_.bodies.size());
      header->set_format(kExportFormat);
      crc_ = ExtendExportCrc(0, *header);
      state_.clients = {};
      stage_ = Stage::kChunks;
      return true;
    }
    case Stage::kChunks: {
      if (next_body_ < state_.bodies.size()) {
        v1::SceneExportChunk* chunk = message->mutable_chunk();
        size_t bytes = 0;
        while (next_body_ < state_.bodies.size() &&
               static_cast<uint32_t>(chunk->bodies_size()) < chunk_bodies_ &&
               bytes < kExportChunkBytes) {
          v1::Body* body = chunk->add_bodies();
          BodyStateToProto(state_.bodies[next_body_++], body);
          bytes += body->ByteSizeLong() + kBodyOverhead;
        }
        crc_ = ExtendExportCrc(crc_, *chunk);
        ++chunks_;
        return true;
      }
      v1::SceneExportTrailer* trailer = message->mutable_trailer();
      trailer->set_body_count(state_.bodies.size());
      trailer->set_chunk_count(chunks_);
      trailer->set_crc32c(ExtendExportCrc(crc_, *trailer));  // the counts, crc32c still unset
      state_.bodies = {};
      stage_ = Stage::kDone;
      return true;
    }
    case Stage::kDone:
      break;
  }
  return false;
}

SceneImporter::SceneImporter(const ServiceLimits& limits) : limits_(limits) {}

absl::Status SceneImporter::Add(const v1::ImportSceneRequest& message, size_t bytes) {
  const uint64_t index = messages_++;
  bytes_ += bytes;
  if (bytes_ > limits_.max_import_bytes) {
    return FieldStatus(absl::StatusCode::kResourceExhausted, FieldPath("messages", index, ""),
                       absl::StrCat("the import passes ", limits_.max_import_bytes,
                                    " bytes (the server's --max_import_bytes)"));
  }
  if (index > 0 && (!message.scene().empty() || message.replace() || message.check_only())) {
    return InvalidElementError(
        "messages", index,
        !message.scene().empty() ? "scene" : (message.replace() ? "replace" : "check_only"),
        "only the first message names the target");
  }
  if (has_trailer_) return Misplaced(index, "a message after the trailer");
  const v1::SceneExportMessage& part = message.message();
  switch (part.part_case()) {
    case v1::SceneExportMessage::kHeader:
      if (has_header_) return Misplaced(index, "a second header");
      return AddHeader(message);
    case v1::SceneExportMessage::kChunk:
      if (!has_header_) return Misplaced(index, "the first message must hold the header");
      return AddChunk(part.chunk());
    case v1::SceneExportMessage::kTrailer:
      if (!has_header_) return Misplaced(index, "the first message must hold the header");
      return AddTrailer(part.trailer());
    case v1::SceneExportMessage::PART_NOT_SET:
      break;
  }
  return InvalidElementError("messages", index, "message", "holds no header, chunk or trailer");
}

absl::Status SceneImporter::AddHeader(const v1::ImportSceneRequest& message) {
  const v1::SceneExportHeader& header = message.message().header();
  has_header_ = true;
  if (header.format() != kExportFormat) {
    return absl::InvalidArgumentError(absl::StrCat(
        "header.format: ", header.format(), ", this server imports format ", kExportFormat,
        header.format() == 0
            ? " (an export of an earlier development build, whose checksum covered only the "
              "bodies: export the scene again)"
            : ""));
  }
  crc_ = ExtendExportCrc(0, header);
  imported_.replace = message.replace();
  imported_.check_only = message.check_only();
  if (!message.scene().empty()) {
    imported_.scene = message.scene();
  } else {
    imported_.scene = header.scene();
    imported_.name_from_header = true;
  }
  absl::StatusOr<SceneOptions> options = SceneOptionsFromProto(header.options(), limits_);
  if (!options.ok()) return UnderField(options.status(), "header");
  imported_.options = *options;
  if (header.version() > kMaxImportedCounter) {
    return absl::InvalidArgumentError(absl::StrCat(
        "header.version: must be at most ", kMaxImportedCounter, ", got ", header.version()));
  }
  if (header.tick() > kMaxImportedCounter) {
    return absl::InvalidArgumentError(absl::StrCat("header.tick: must be at most ",
                                                   kMaxImportedCounter, ", got ", header.tick()));
  }
  if (header.body_count() > imported_.options.max_bodies) {
    return absl::InvalidArgumentError(absl::StrCat("header.body_count: ", header.body_count(),
                                                   " bodies, more than options.max_bodies ",
                                                   imported_.options.max_bodies));
  }
  expected_bodies_ = header.body_count();
  if (static_cast<size_t>(header.clients_size()) > kMaxExportClientMarks) {
    return absl::InvalidArgumentError(absl::StrCat("header.clients: ", header.clients_size(),
                                                   " marks, more than ", kMaxExportClientMarks));
  }
  SceneState& state = imported_.state;
  state.version = header.version();
  state.tick = header.tick();
  state.clients.reserve(header.clients_size());
  for (int i = 0; i < header.clients_size(); ++i) {
    const v1::ClientMark& mark = header.clients(i);
    if (mark.client_id() == 0 ||
        (!state.clients.empty() && mark.client_id() <= state.clients.back().client_id)) {
      return absl::InvalidArgumentError(
          absl::StrCat("header.clients[", i, "].client_id: ", mark.client_id(),
                       " is zero or not above the previous mark's (marks are sorted by "
                       "client_id, each once)"));
    }
    if (mark.version() > state.version) {
      return absl::InvalidArgumentError(absl::StrCat("header.clients[", i,
                                                     "].version: ", mark.version(),
                                                     " is above header.version ", state.version));
    }
    state.clients.push_back(ClientMark{
        .client_id = mark.client_id(), .sequence = mark.sequence(), .version = mark.version()});
  }
  // Not more than a message's worth ahead of what arrives (body_count is the sender's word).
  state.bodies.reserve(std::min<uint64_t>(expected_bodies_, kMaxExportChunkBodies));
  return absl::OkStatus();
}

absl::Status SceneImporter::AddChunk(const v1::SceneExportChunk& chunk) {
  const uint64_t index = chunks_++;
  const std::string head = FieldPath("chunks", index, "bodies");
  std::vector<BodyState>& bodies = imported_.state.bodies;
  imported_.chunk_starts.push_back(bodies.size());
  for (int j = 0; j < chunk.bodies_size(); ++j) {
    const size_t at = static_cast<size_t>(j);
    if (bodies.size() >= expected_bodies_) {
      return InvalidElementError(
          head, at, "", absl::StrCat("more bodies than header.body_count ", expected_bodies_));
    }
    UpdateOp op;
    COLLIDE_RETURN_IF_ERROR(AtElement(BodyToOp(chunk.bodies(j), &op), head, at));
    if (!bodies.empty() && op.body_id <= bodies.back().id) {
      return InvalidElementError(
          head, at, "id",
          absl::StrCat("body ", op.body_id, " is not above the previous body's id ",
                       bodies.back().id, " (bodies come in increasing id order, each once)"));
    }
    const BodyState body{.id = op.body_id,
                         .shape = op.shape,
                         .pose = op.pose,
                         .category = op.category,
                         .mask = op.mask,
                         .kind = op.kind,
                         .user_data = op.user_data};
    // The core's check of a stored body, as each arrives (the store then trusts it).
    COLLIDE_RETURN_IF_ERROR(ValidateBody(body, at, head));
    bodies.push_back(body);
  }
  crc_ = ExtendExportCrc(crc_, chunk);
  return absl::OkStatus();
}

absl::Status SceneImporter::AddTrailer(const v1::SceneExportTrailer& trailer) {
  has_trailer_ = true;
  const uint64_t received = imported_.state.bodies.size();
  if (trailer.body_count() != received || received != expected_bodies_) {
    return absl::DataLossError(absl::StrCat("trailer.body_count: says ", trailer.body_count(),
                                            ", the header said ", expected_bodies_, ", ", received,
                                            " were received"));
  }
  if (trailer.chunk_count() != chunks_) {
    return absl::DataLossError(absl::StrCat("trailer.chunk_count: says ", trailer.chunk_count(),
                                            ", ", chunks_, " were received"));
  }
  v1::SceneExportTrailer counts = trailer;
  counts.clear_crc32c();
  const uint32_t crc = ExtendExportCrc(crc_, counts);
  if (trailer.crc32c() != crc) {
    return absl::DataLossError(absl::StrCat("trailer.crc32c: says ", trailer.crc32c(),
                                            ", the header, chunks and counts received give ", crc));
  }
  return absl::OkStatus();
}

absl::StatusOr<ImportedScene> SceneImporter::Finish() && {
  if (!has_trailer_) {
    return absl::DataLossError(absl::StrCat("stream: ended after ", messages_,
                                            " messages, before the trailer; nothing imported"));
  }
  return std::move(imported_);
}

}  // namespace collide
