// Client's level-geometry calls: UploadMesh, UploadHeightfield (one UploadAsset stream per
// attempt, retried), ListAssets, DeleteAsset.

#include <algorithm>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/cpp/asset_digest.h"
#include "client/cpp/client.h"
#include "client/cpp/grpc_status.h"

namespace collide::client {
namespace {

// A failure a new attempt may not meet: the server unreachable, restarting or ending the call
// itself, or all its upload slots taken for now.
bool IsRetryable(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kCancelled:
      return true;
    case absl::StatusCode::kResourceExhausted:
      return absl::StartsWith(status.message(), "streams:");
    default:
      return false;
  }
}

constexpr int kVertices = v1::AssetChunk::kVerticesFieldNumber;
constexpr int kIndices = v1::AssetChunk::kIndicesFieldNumber;
constexpr int kHeights = v1::AssetChunk::kHeightsFieldNumber;
constexpr int kHoles = v1::AssetChunk::kHolesFieldNumber;

}  // namespace

absl::StatusOr<v1::UploadAssetResponse> Client::UploadOnce(std::string_view scene,
                                                           const v1::AssetHeader& header,
                                                           std::span<const UploadList> lists,
                                                           const UploadOptions& options) {
  std::unique_ptr<grpc::ClientContext> context = NewContext(scene, false, options.call);
  v1::UploadAssetResponse response;
  std::unique_ptr<grpc::ClientWriter<v1::UploadAssetRequest>> writer =
      stub_->UploadAsset(context.get(), &response);
  v1::UploadAssetRequest request;
  request.set_scene(std::string(scene));
  *request.mutable_header() = header;
  bool open = writer->Write(request);
  request.Clear();
  v1::AssetTrailer trailer;
  uint32_t crc = 0;
  uint64_t chunks = 0;
  const size_t chunk_bytes = std::max<size_t>(options.chunk_bytes, 4);
  for (const UploadList& list : lists) {
    const size_t per_chunk = std::max<size_t>(chunk_bytes / list.element_bytes, 1);
    for (size_t begin = 0; open && begin < list.count; begin += per_chunk) {
      const size_t n = std::min(per_chunk, list.count - begin);
      const char* bytes = static_cast<const char*>(list.data) + begin * list.element_bytes;
      v1::AssetChunk* chunk = request.mutable_chunk();
      switch (list.field) {
        case kVertices: {
          const float* p = reinterpret_cast<const float*>(bytes);
          chunk->mutable_vertices()->Add(p, p + n);
          break;
        }
        case kIndices: {
          const uint32_t* p = reinterpret_cast<const uint32_t*>(bytes);
          chunk->mutable_indices()->Add(p, p + n);
          break;
        }
        case kHeights: {
          const float* p = reinterpret_cast<const float*>(bytes);
          chunk->mutable_heights()->Add(p, p + n);
          break;
        }
        default:
          chunk->set_holes(bytes, n);
          break;
      }
      // The trailer's CRC: each chunk's values as little-endian bytes, in the chunk's order.
      crc = Crc32cExtend(crc, bytes, n * list.element_bytes);
      ++chunks;
      open = writer->Write(request);
      request.Clear();
    }
    switch (list.field) {
      case kVertices:
        trailer.set_vertex_count(list.count / 3);
        break;
      case kIndices:
        trailer.set_index_count(list.count);
        break;
      case kHeights:
        trailer.set_sample_count(list.count);
        break;
      default:
        trailer.set_hole_bytes(list.count);
        break;
    }
  }
  trailer.set_chunk_count(chunks);
  trailer.set_crc32c(crc);
  *request.mutable_trailer() = trailer;
  // A write fails once the server ended the call; Finish says why.
  if (open && writer->Write(request)) writer->WritesDone();
  absl::Status status = FromGrpcStatus(writer->Finish());
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<v1::UploadAssetResponse> Client::Upload(std::string_view scene,
                                                       const v1::AssetHeader& header,
                                                       std::span<const UploadList> lists,
                                                       const UploadOptions& options) {
  const absl::Time give_up = absl::Now() + options.give_up_after;
  absl::Duration backoff = options.initial_backoff;
  while (true) {
    absl::StatusOr<v1::UploadAssetResponse> response = UploadOnce(scene, header, lists, options);
    if (response.ok() || !IsRetryable(response.status()) || absl::Now() + backoff > give_up) {
      return response;
    }
    absl::SleepFor(backoff);
    backoff = std::min(options.max_backoff, backoff * options.backoff_multiplier);
  }
}

absl::StatusOr<v1::UploadAssetResponse> Client::UploadMesh(std::string_view scene,
                                                           std::string_view name,
                                                           const MeshArrays& mesh,
                                                           const UploadOptions& options) {
  v1::AssetHeader header;
  header.set_name(std::string(name));
  // A count the server refuses is sent as it is (vertex_count rounds down; the trailer and the
  // data then disagree, and the server says so).
  header.mutable_mesh()->set_vertex_count(mesh.vertices.size() / 3);
  header.mutable_mesh()->set_index_count(mesh.indices.size());
  if (options.send_sha256) header.set_sha256(MeshSha256(mesh.vertices, mesh.indices));
  const UploadList lists[] = {
      {.field = kVertices, .data = mesh.vertices.data(), .count = mesh.vertices.size()},
      {.field = kIndices, .data = mesh.indices.data(), .count = mesh.indices.size()},
  };
  return Upload(scene, header, lists, options);
}

absl::StatusOr<v1::UploadAssetResponse> Client::UploadHeightfield(
    std::string_view scene, std::string_view name, const HeightfieldArrays& heightfield,
    const UploadOptions& options) {
  v1::AssetHeader header;
  header.set_name(std::string(name));
  v1::HeightfieldAssetSize* size = header.mutable_heightfield();
  size->set_rows(heightfield.rows);
  size->set_columns(heightfield.columns);
  size->set_spacing_x(heightfield.spacing_x);
  size->set_spacing_z(heightfield.spacing_z);
  size->set_has_holes(!heightfield.holes.empty());
  if (options.send_sha256) {
    header.set_sha256(HeightfieldSha256(heightfield.rows, heightfield.columns,
                                        heightfield.spacing_x, heightfield.spacing_z,
                                        heightfield.heights, heightfield.holes));
  }
  const UploadList lists[] = {
      {.field = kHeights, .data = heightfield.heights.data(), .count = heightfield.heights.size()},
      {.field = kHoles,
       .data = heightfield.holes.data(),
       .count = heightfield.holes.size(),
       .element_bytes = 1},
  };
  return Upload(scene, header, lists, options);
}

absl::StatusOr<std::vector<v1::AssetInfo>> Client::ListAssets(std::string_view scene,
                                                              const CallOptions& call) {
  v1::ListAssetsRequest request;
  request.set_scene(std::string(scene));
  std::unique_ptr<grpc::ClientContext> context = NewContext(scene, true, call);
  v1::ListAssetsResponse response;
  absl::Status status = FromGrpcStatus(stub_->ListAssets(context.get(), request, &response));
  if (!status.ok()) return status;
  return std::vector<v1::AssetInfo>(std::make_move_iterator(response.mutable_assets()->begin()),
                                    std::make_move_iterator(response.mutable_assets()->end()));
}

absl::Status Client::DeleteAsset(std::string_view scene, std::string_view name,
                                 const CallOptions& call) {
  v1::DeleteAssetRequest request;
  request.set_scene(std::string(scene));
  request.set_name(std::string(name));
  std::unique_ptr<grpc::ClientContext> context = NewContext(scene, true, call);
  v1::DeleteAssetResponse response;
  return FromGrpcStatus(stub_->DeleteAsset(context.get(), request, &response));
}

}  // namespace collide::client
