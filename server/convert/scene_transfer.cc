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
      header->set_asset_count(state_.assets.size());
      header->set_format(kExportFormat);
      crc_ = ExtendExportCrc(0, *header);
      state_.clients = {};
      stage_ = Stage::kAssets;
      return true;
    }
    case Stage::kAssets:
      while (next_asset_ < state_.assets.size()) {
        const NamedAsset& named = state_.assets[next_asset_];
        if (!asset_header_sent_) {
          v1::AssetHeader* header = message->mutable_asset();
          header->set_name(named.name);
          AssetSizeToProto(named.asset->size(), header);
          header->set_sha256(named.asset->sha256());
          crc_ = ExtendExportCrc(crc_, *header);
          asset_header_sent_ = true;
          asset_cursor_ = AssetChunkCursor{};
          return true;
        }
        if (NextAssetChunk(*named.asset, kExportChunkBytes, &asset_cursor_,
                           message->mutable_asset_chunk())) {
          crc_ = ExtendExportCrc(crc_, message->asset_chunk());
          return true;
        }
        message->Clear();
        // This asset is all sent: its memory is the scene's (or a past one's) to keep.
        state_.assets[next_asset_].asset.reset();
        ++next_asset_;
        asset_header_sent_ = false;
      }
      stage_ = Stage::kChunks;
      [[fallthrough]];
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
      trailer->set_asset_count(state_.assets.size());
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
    case v1::SceneExportMessage::kAsset:
      if (!has_header_) return Misplaced(index, "the first message must hold the header");
      if (chunks_ > 0) return Misplaced(index, "an asset after the body chunks");
      return AddAsset(index, part.asset());
    case v1::SceneExportMessage::kAssetChunk:
      if (!has_header_) return Misplaced(index, "the first message must hold the header");
      if (asset_ == nullptr) return Misplaced(index, "an asset chunk outside an asset");
      return AddAssetChunk(index, part.asset_chunk());
    case v1::SceneExportMessage::kChunk:
      if (!has_header_) return Misplaced(index, "the first message must hold the header");
      COLLIDE_RETURN_IF_ERROR(EndAsset());
      return AddChunk(part.chunk());
    case v1::SceneExportMessage::kTrailer:
      if (!has_header_) return Misplaced(index, "the first message must hold the header");
      COLLIDE_RETURN_IF_ERROR(EndAsset());
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
  if (header.asset_count() > limits_.max_assets_per_scene) {
    return FieldStatus(absl::StatusCode::kResourceExhausted, "header.asset_count",
                       absl::StrCat(header.asset_count(), " assets, over the limit of ",
                                    limits_.max_assets_per_scene, " (--max_assets_per_scene)"));
  }
  expected_assets_ = header.asset_count();
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

absl::Status SceneImporter::AddAsset(uint64_t index, const v1::AssetHeader& asset) {
  COLLIDE_RETURN_IF_ERROR(EndAsset());
  const uint64_t number = imported_.assets.size();
  if (number >= expected_assets_) {
    return Misplaced(index, absl::StrCat("more assets than header.asset_count ", expected_assets_));
  }
  const std::string head = FieldPath("assets", number, "");
  COLLIDE_RETURN_IF_ERROR(UnderField(ValidateAssetName(asset.name()), head));
  for (const NamedSource& other : imported_.assets) {
    if (other.name == asset.name()) {
      return InvalidFieldError(absl::StrCat(head, ".name"),
                               absl::StrCat("asset \"", asset.name(), "\" appears twice"));
    }
  }
  absl::StatusOr<AssetSize> size = AssetSizeFromProto(asset);
  if (!size.ok()) return UnderField(size.status(), head);
  COLLIDE_RETURN_IF_ERROR(UnderField(ValidateAssetSize(*size, AssetLimitsOf(limits_)), head));
  crc_ = ExtendExportCrc(crc_, asset);
  asset_head_ = NamedSource{.name = asset.name(), .expected_sha256 = asset.sha256()};
  asset_ = std::make_unique<AssetAssembler>(*size);
  return absl::OkStatus();
}

absl::Status SceneImporter::AddAssetChunk(uint64_t index, const v1::AssetChunk& chunk) {
  absl::Status status = asset_->Add(chunk);
  if (!status.ok()) {
    if (GetFieldError(status)->field.empty()) return Misplaced(index, "an empty asset chunk");
    return UnderField(status, FieldPath("assets", imported_.assets.size(), ""));
  }
  crc_ = ExtendExportCrc(crc_, chunk);
  return absl::OkStatus();
}

absl::Status SceneImporter::EndAsset() {
  if (asset_ == nullptr) return absl::OkStatus();
  const std::string head = FieldPath("assets", imported_.assets.size(), "");
  if (!asset_->complete()) {
    return absl::DataLossError(
        absl::StrCat(head, ": the data is not what its header announced: ", asset_->Received()));
  }
  NamedSource named = std::move(asset_head_);
  named.source = std::move(*asset_).Take();
  asset_.reset();
  // The core's checks of the content, as it arrives (the store then trusts it).
  COLLIDE_RETURN_IF_ERROR(
      UnderField(ValidateAssetSource(named.source, AssetLimitsOf(limits_)), head));
  imported_.assets.push_back(std::move(named));
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
    std::vector<std::string> asset_names;
    COLLIDE_RETURN_IF_ERROR(AtElement(BodyToOp(chunk.bodies(j), &op, &asset_names), head, at));
    if (!bodies.empty() && op.body_id <= bodies.back().id) {
      return InvalidElementError(
          head, at, "id",
          absl::StrCat("body ", op.body_id, " is not above the previous body's id ",
                       bodies.back().id, " (bodies come in increasing id order, each once)"));
    }
    if (op.asset != 0) {
      if (absl::Status status = ValidateAssetName(asset_names[op.asset - 1]); !status.ok()) {
        return InvalidElementError(head, at,
                                   absl::StrCat("shape.", AssetKindName(op.asset_kind), ".asset"),
                                   GetFieldError(status)->reason);
      }
    }
    BodyState body =
        StoredBodyOf(op, op.asset != 0 ? std::move(asset_names[op.asset - 1]) : std::string());
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
  const uint64_t assets = imported_.assets.size();
  if (trailer.asset_count() != assets || assets != expected_assets_) {
    return absl::DataLossError(absl::StrCat("trailer.asset_count: says ", trailer.asset_count(),
                                            ", the header said ", expected_assets_, ", ", assets,
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
    return absl::DataLossError(
        absl::StrCat("trailer.crc32c: says ", trailer.crc32c(),
                     ", the header, assets, chunks and counts received give ", crc));
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
