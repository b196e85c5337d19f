#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace collide {

// The field paths of the API's error messages (`ops[3].upsert.pose.rotation: must be a unit
// quaternion (length 0.5)`). The core names a wrong value as the API names it inside the list it
// was given (a FieldError, base/field_error.h); where the request lists those values another
// way (an UpdateBatch's moves columns after its ops, the bodies of UpsertBodies, a unary query's
// `ray`), ForRequest moves the error to the request's words. Every stream and unary rpc renders
// its errors through ForRequest and then ToGrpcStatus / ToProtoError (status_convert.h).

/// How a request lists the core values made from it.
struct RequestLayout {
  enum class Kind {
    /// The core's words are the request's.
    kSame,
    /// An UpdateBatch: core op i < op_count is `ops[i]`, the rest are its moves
    /// (`moves.ids[k]`, `moves.poses[k]`).
    kUpdateBatch,
    /// An UpsertBodiesRequest: core op i is `bodies[i]`.
    kUpsertBodies,
    /// A RemoveBodiesRequest: core op i is `ids[i]`.
    kRemoveBodies,
    /// A unary query request: core query 0 is the request itself, the fields of its kind under
    /// `query_root` (`ray`, `cast`, `overlap`; empty: at the request's top, as the viewer's
    /// parameters are).
    kUnaryQuery,
    /// An ImportScene stream: core body k is `chunks[c].bodies[k - chunk_starts[c]]` (c the last
    /// chunk starting at or before k); the scene's options, tick and client marks are the
    /// header's (`header.options.fat_margin`, `header.clients[2]`), and an invalid name too when
    /// `name_from_header` (`header.scene`).
    kImport,
    /// An UploadAsset stream: the asset's name and size are the header's (`header.name`,
    /// `header.mesh.index_count`, `header.sha256`); its content's lists (`vertices[12]`) and
    /// the scene are named as the core names them.
    kUpload,
  };
  Kind kind = Kind::kSame;
  /// kUpdateBatch: how many core ops came from `ops` (the rest are moves).
  size_t op_count = 0;
  /// kUnaryQuery: the request's field that holds the query's kind.
  absl::string_view query_root{};
  /// kImport: the index of each chunk's first body.
  std::span<const uint64_t> chunk_starts{};
  /// kImport: the scene's name came from the header.
  bool name_from_header = false;
};

/// `status` as the client sees it: its FieldError, if any, moved to the request's words
/// (`moves.poses[4]: rotation must be ...`, `bodies[2].id`, `ray.direction`, and the other op a
/// reason names: `(first by bodies[0])`); any other status is returned as it is.
absl::Status ForRequest(const absl::Status& status, const RequestLayout& layout);

}  // namespace collide
