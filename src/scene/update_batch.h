#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "geom/pose.h"
#include "geom/shapes.h"
#include "query/asset_geometry.h"
#include "query/body.h"

namespace collide {

/// What one operation of an update batch does.
enum class UpdateOpType : uint8_t {
  /// Creates the body, or replaces every property of an existing body with that id.
  kUpsert = 0,
  /// Moves an existing body (the hot path).
  kSetPose = 1,
  /// Replaces an existing body's category and mask bits.
  kSetFilter = 2,
  /// Removes an existing body.
  kRemove = 3,
};
inline constexpr int kUpdateOpTypeCount = 4;

/// One operation of an update batch: plain data, the fields a type does not use are ignored.
struct UpdateOp {
  UpdateOpType type = UpdateOpType::kSetPose;
  /// kUpsert: the body's kind.
  BodyKind kind = BodyKind::kDynamic;
  /// The client-chosen id of the body the operation acts on.
  uint64_t body_id = 0;
  /// kUpsert, kSetPose: world pose; the rotation must be within 1e-3 of unit length and is
  /// renormalised when applied.
  Pose pose{};
  /// kUpsert: the body's shape (dimensions >= 0, length units), unless it places an asset.
  Shape shape{};
  /// kUpsert, kSetFilter: the categories the body belongs to.
  uint32_t category = 1;
  /// kUpsert, kSetFilter: the query categories that may hit the body.
  uint32_t mask = ~0u;
  /// kUpsert: opaque client data kept with the body.
  uint64_t user_data = 0;
  /// kUpsert of a body that places one of the scene's assets: the asset's name is
  /// UpdateBatch::asset_names[asset - 1]; 0: the body is `shape`.
  uint32_t asset = 0;
  /// With `asset`: the kind the op names (the scene's asset must be of it) and the instance's
  /// uniform scale (mesh/scaled_pose.h: kMinInstanceScale to kMaxInstanceScale).
  AssetKind asset_kind = AssetKind::kMesh;
  float scale = 1.0f;
};

/// An upsert of the body `desc` with `user_data` (its shape; desc.asset is not looked at).
UpdateOp UpsertOp(const BodyDesc& desc, uint64_t user_data = 0);
/// A move of body `id` to `pose`.
UpdateOp SetPoseOp(uint64_t id, const Pose& pose);
/// New filter bits for body `id`.
UpdateOp SetFilterOp(uint64_t id, uint32_t category, uint32_t mask);
/// The removal of body `id`.
UpdateOp RemoveOp(uint64_t id);

/// An ordered list of operations applied all-or-nothing: either every operation takes effect and
/// the scene's version grows by one, or the batch is rejected and nothing changes. Later
/// operations see the effect of earlier ones (create then move is fine; remove then move is
/// NOT_FOUND); one body may be upserted at most once per batch.
struct UpdateBatch {
  std::vector<UpdateOp> ops;
  /// The simulation tick the batch belongs to: never below the scene's current tick (equal
  /// amends that tick; higher starts a new one). Unset: the scene's current tick.
  std::optional<uint64_t> tick = std::nullopt;
  /// The names of the assets the ops place (UpdateOp::asset), so that an op stays plain data.
  std::vector<std::string> asset_names{};
};

/// Makes `op` (an upsert) place the scene's asset `name` of `kind` at `scale`: the name is added
/// to batch->asset_names.
void PlaceAsset(UpdateBatch* batch, UpdateOp* op, std::string name, AssetKind kind,
                float scale = 1.0f);

/// Whether any operation creates or removes bodies (such batches need the slower, id-tracking
/// validation; batches of only moves and filter changes do not).
bool IsStructural(const UpdateBatch& batch);

/// The largest magnitude accepted for a coordinate or a shape dimension (length units): far
/// beyond any real scene, small enough that bounds and fat margins stay finite in float32.
inline constexpr float kMaxCoordinate = 1e9f;
/// How far a rotation's length may be from 1 (ARCHITECTURE.md: renormalised within 1e-3).
inline constexpr float kUnitQuaternionTolerance = 1e-3f;

/// The API's name of an op type, its UpdateOp oneof field: `upsert`, `set_pose`, `set_filter`,
/// `remove`.
absl::string_view UpdateOpName(UpdateOpType type);

/// The field of an op of `type` that holds the body's id, as errors name it (`upsert.id`,
/// `set_pose.id`, `set_filter.id`; a removal is its id: `remove`).
std::string OpIdField(UpdateOpType type);

/// `pose` with its rotation normalised to unit length (NormalizeRotation: a rotation already
/// unit to float precision is kept bit for bit, so normalising again changes nothing).
Pose NormalizedPose(const Pose& pose);

}  // namespace collide
