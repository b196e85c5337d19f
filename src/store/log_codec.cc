#include "store/log_codec.h"

#include "absl/strings/str_cat.h"
#include "base/field_error.h"
#include "base/status_macros.h"
#include "scene/validate.h"

namespace collide {
namespace {

// DATA_LOSS about field `field` of element `index` of `list` of a record (`ops[3].kind: ...`).
absl::Status Corrupted(absl::string_view list, size_t index, absl::string_view field,
                       absl::string_view reason) {
  return FieldErrorStatus(absl::StatusCode::kDataLoss, FieldError{.list = std::string(list),
                                                                  .index = index,
                                                                  .field = std::string(field),
                                                                  .reason = std::string(reason)});
}

namespace pb = ::collide::storage::v1;

constexpr int kPoseFloats = 7;
constexpr int kFilterWords = 2;
constexpr int kDims = 3;
// The shape types of bodies that place an asset (beyond collide::ShapeType's): a mesh and a
// heightfield.
constexpr uint8_t kMeshShapeType = 3;
constexpr uint8_t kHeightfieldShapeType = 4;

uint8_t StoredShapeType(const UpdateOp& op) {
  if (op.asset == 0) return static_cast<uint8_t>(op.shape.type);
  return op.asset_kind == AssetKind::kHeightfield ? kHeightfieldShapeType : kMeshShapeType;
}

void PutPose(const Pose& pose, float* out) {
  out[0] = pose.position.x;
  out[1] = pose.position.y;
  out[2] = pose.position.z;
  out[3] = pose.rotation.x;
  out[4] = pose.rotation.y;
  out[5] = pose.rotation.z;
  out[6] = pose.rotation.w;
}

Pose GetPose(const float* in) {
  return Pose{.rotation = Quat{in[3], in[4], in[5], in[6]}, .position = Vec3{in[0], in[1], in[2]}};
}

void PutDims(const Shape& shape, float* out) {
  out[0] = out[1] = out[2] = 0.0f;
  switch (shape.type) {
    case ShapeType::kSphere:
      out[0] = shape.sphere.radius;
      break;
    case ShapeType::kBox:
      out[0] = shape.box.half_extents.x;
      out[1] = shape.box.half_extents.y;
      out[2] = shape.box.half_extents.z;
      break;
    case ShapeType::kCapsule:
      out[0] = shape.capsule.radius;
      out[1] = shape.capsule.half_height;
      break;
  }
}

absl::StatusOr<Shape> GetShape(uint8_t type, const float* dims) {
  switch (static_cast<ShapeType>(type)) {
    case ShapeType::kSphere:
      return Shape(Sphere{.radius = dims[0]});
    case ShapeType::kBox:
      return Shape(Box{.half_extents = Vec3{dims[0], dims[1], dims[2]}});
    case ShapeType::kCapsule:
      return Shape(Capsule{.radius = dims[0], .half_height = dims[1]});
  }
  return absl::DataLossError(absl::StrCat("unknown shape type ", type));
}

// Reads the columns of an OpColumns message in op order, checking every column's length.
class ColumnReader {
 public:
  explicit ColumnReader(const pb::OpColumns& in) : in_(in) {}

  // `asset_names` receives the names of the assets the ops place (null: DATA_LOSS when one does).
  absl::StatusOr<UpdateOp> Next(size_t i, std::vector<std::string>* asset_names) {
    UpdateOp op;
    if (in_.types().empty()) {
      op.type = UpdateOpType::kSetPose;
    } else {
      const uint8_t type = static_cast<uint8_t>(in_.types()[i]);
      if (type >= kUpdateOpTypeCount) {
        return Corrupted("ops", i, "", absl::StrCat("unknown operation type ", type));
      }
      op.type = static_cast<UpdateOpType>(type);
    }
    op.body_id = in_.body_ids(static_cast<int>(i));
    const bool upsert = op.type == UpdateOpType::kUpsert;
    if (upsert || op.type == UpdateOpType::kSetPose) {
      if (pose_ + kPoseFloats > in_.poses_size()) return Short(i, "poses");
      op.pose = GetPose(in_.poses().data() + pose_);
      pose_ += kPoseFloats;
    }
    if (upsert || op.type == UpdateOpType::kSetFilter) {
      if (filter_ + kFilterWords > in_.filters_size()) return Short(i, "filters");
      op.category = in_.filters(filter_);
      op.mask = in_.filters(filter_ + 1);
      filter_ += kFilterWords;
    }
    if (upsert) {
      if (shape_ >= in_.shapes().size()) return Short(i, "shapes");
      if (dims_ + kDims > in_.dims_size()) return Short(i, "dims");
      if (user_data_ >= in_.user_data_size()) return Short(i, "user_data");
      const uint8_t packed = static_cast<uint8_t>(in_.shapes()[shape_++]);
      const uint8_t kind = packed >> 4;
      if (kind > static_cast<uint8_t>(BodyKind::kStatic)) {
        return Corrupted("ops", i, "kind", absl::StrCat("unknown body kind ", kind));
      }
      op.kind = static_cast<BodyKind>(kind);
      const uint8_t type = packed & 0x0F;
      if (type == kMeshShapeType || type == kHeightfieldShapeType) {
        if (asset_ >= in_.assets_size()) return Short(i, "assets");
        if (asset_names == nullptr) return Corrupted("ops", i, "shape", "places an asset");
        asset_names->push_back(in_.assets(asset_++));
        op.asset = static_cast<uint32_t>(asset_names->size());
        op.asset_kind = type == kMeshShapeType ? AssetKind::kMesh : AssetKind::kHeightfield;
        op.scale = in_.dims(dims_);
      } else {
        absl::StatusOr<Shape> shape = GetShape(type, in_.dims().data() + dims_);
        if (!shape.ok()) return Corrupted("ops", i, "shape", shape.status().message());
        op.shape = *shape;
      }
      dims_ += kDims;
      op.user_data = in_.user_data(user_data_++);
    }
    return op;
  }

  // Every column must be used up exactly.
  absl::Status Finish() const {
    if (pose_ != in_.poses_size() || filter_ != in_.filters_size() ||
        shape_ != in_.shapes().size() || dims_ != in_.dims_size() ||
        user_data_ != in_.user_data_size() || asset_ != in_.assets_size()) {
      return absl::DataLossError("op columns hold entries no operation uses");
    }
    return absl::OkStatus();
  }

 private:
  static absl::Status Short(size_t i, absl::string_view column) {
    return Corrupted("ops", i, "", absl::StrCat("column ", column, " is too short"));
  }

  const pb::OpColumns& in_;
  int pose_ = 0;
  int filter_ = 0;
  size_t shape_ = 0;
  int dims_ = 0;
  int user_data_ = 0;
  int asset_ = 0;
};

absl::Status CheckOpCount(const pb::OpColumns& in) {
  if (!in.types().empty() && in.types().size() != static_cast<size_t>(in.body_ids_size())) {
    return absl::DataLossError(absl::StrCat("op columns: ", in.types().size(), " types for ",
                                            in.body_ids_size(), " body ids"));
  }
  return absl::OkStatus();
}

pb::Durability ToProto(DurabilityPolicy policy) { return static_cast<pb::Durability>(policy); }

ReplicationPosition FromProto(const pb::ReplicationPosition& in) {
  return ReplicationPosition{
      .incarnation = in.incarnation(), .epoch = in.epoch(), .sequence = in.sequence()};
}

absl::Status Corrupt(absl::string_view what, const absl::Status& status) {
  return absl::DataLossError(absl::StrCat(what, ": ", status.message()));
}

}  // namespace

void EncodeOps(const std::vector<UpdateOp>& ops, pb::OpColumns* out) {
  static const std::vector<std::string> kNoNames;
  EncodeOps(ops, kNoNames, out);
}

void EncodeOps(const std::vector<UpdateOp>& ops, const std::vector<std::string>& asset_names,
               pb::OpColumns* out) {
  const int n = static_cast<int>(ops.size());
  int poses = 0, filters = 0, upserts = 0;
  bool all_moves = true;
  for (const UpdateOp& op : ops) {
    const bool upsert = op.type == UpdateOpType::kUpsert;
    poses += (upsert || op.type == UpdateOpType::kSetPose) ? 1 : 0;
    filters += (upsert || op.type == UpdateOpType::kSetFilter) ? 1 : 0;
    upserts += upsert ? 1 : 0;
    all_moves = all_moves && op.type == UpdateOpType::kSetPose;
  }
  // Columns are sized once and filled through raw pointers: the hot path (1,000 moves) is two
  // resizes and a loop.
  out->mutable_body_ids()->Resize(n, 0);
  out->mutable_poses()->Resize(poses * kPoseFloats, 0.0f);
  out->mutable_filters()->Resize(filters * kFilterWords, 0);
  out->mutable_dims()->Resize(upserts * kDims, 0.0f);
  out->mutable_user_data()->Resize(upserts, 0);
  std::string* types = out->mutable_types();
  std::string* shapes = out->mutable_shapes();
  // (Resized or cleared: `out` may be a column set reused from an earlier batch.)
  if (all_moves) {
    types->clear();
  } else {
    types->resize(n);
  }
  shapes->resize(upserts);
  out->clear_assets();
  uint64_t* ids = out->mutable_body_ids()->mutable_data();
  float* pose = out->mutable_poses()->mutable_data();
  uint32_t* filter = out->mutable_filters()->mutable_data();
  float* dims = out->mutable_dims()->mutable_data();
  uint64_t* user_data = out->mutable_user_data()->mutable_data();
  int u = 0;
  for (int i = 0; i < n; ++i) {
    const UpdateOp& op = ops[i];
    const bool upsert = op.type == UpdateOpType::kUpsert;
    ids[i] = op.body_id;
    if (!all_moves) (*types)[i] = static_cast<char>(op.type);
    if (upsert || op.type == UpdateOpType::kSetPose) {
      PutPose(op.pose, pose);
      pose += kPoseFloats;
    }
    if (upsert || op.type == UpdateOpType::kSetFilter) {
      filter[0] = op.category;
      filter[1] = op.mask;
      filter += kFilterWords;
    }
    if (upsert) {
      (*shapes)[u] = static_cast<char>(StoredShapeType(op) | (static_cast<uint8_t>(op.kind) << 4));
      if (op.asset != 0) {
        // The asset's name, and its scale in the dims.
        out->add_assets(asset_names[op.asset - 1]);
        dims[u * kDims] = op.scale;
      } else {
        PutDims(op.shape, dims + u * kDims);
      }
      user_data[u] = op.user_data;
      ++u;
    }
  }
}

absl::Status DecodeOps(const pb::OpColumns& in, std::vector<UpdateOp>* ops,
                       std::vector<std::string>* asset_names) {
  COLLIDE_RETURN_IF_ERROR(CheckOpCount(in));
  ColumnReader reader(in);
  const size_t n = static_cast<size_t>(in.body_ids_size());
  ops->reserve(ops->size() + n);
  for (size_t i = 0; i < n; ++i) {
    COLLIDE_ASSIGN_OR_RETURN(UpdateOp op, reader.Next(i, asset_names));
    ops->push_back(op);
  }
  return reader.Finish();
}

absl::Status DecodeOps(const pb::OpColumns& in, std::vector<UpdateOp>* ops) {
  return DecodeOps(in, ops, nullptr);
}

void EncodeBodies(const std::vector<BodyState>& bodies, pb::OpColumns* out) {
  UpdateBatch batch;
  batch.ops.reserve(bodies.size());
  for (const BodyState& b : bodies) {
    UpdateOp op = UpsertOp(BodyDesc{.id = b.id,
                                    .shape = b.shape,
                                    .pose = b.pose,
                                    .category = b.category,
                                    .mask = b.mask,
                                    .kind = b.kind},
                           b.user_data);
    if (!b.asset.empty()) PlaceAsset(&batch, &op, b.asset, b.asset_kind, b.scale);
    batch.ops.push_back(op);
  }
  EncodeOps(batch.ops, batch.asset_names, out);
}

absl::Status DecodeBodies(const pb::OpColumns& in, std::vector<BodyState>* bodies) {
  std::vector<UpdateOp> ops;
  std::vector<std::string> names;
  COLLIDE_RETURN_IF_ERROR(DecodeOps(in, &ops, &names));
  bodies->reserve(bodies->size() + ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const UpdateOp& op = ops[i];
    if (op.type != UpdateOpType::kUpsert) return Corrupted("bodies", i, "", "not an upsert");
    BodyState body = StoredBodyOf(op, op.asset != 0 ? names[op.asset - 1] : std::string());
    // Values are checked where they become core data again (Scene::Restore trusts them).
    if (absl::Status status = ValidateBody(body, i); !status.ok()) {
      return absl::DataLossError(status.message());
    }
    bodies->push_back(body);
  }
  return absl::OkStatus();
}

void EncodeSceneOptions(const SceneOptions& options, pb::SceneOptions* out) {
  out->set_fat_margin(options.fat_margin);
  out->set_max_bodies(options.max_bodies);
  out->set_durability(ToProto(options.durability));
  out->set_history_ticks(options.history_ticks);
}

absl::StatusOr<SceneOptions> DecodeSceneOptions(const pb::SceneOptions& in) {
  SceneOptions options;
  options.fat_margin = in.fat_margin();
  options.max_bodies = in.max_bodies();
  options.durability = static_cast<DurabilityPolicy>(in.durability());
  if (in.has_history_ticks()) options.history_ticks = in.history_ticks();
  if (absl::Status status = ValidateSceneOptions(options); !status.ok()) {
    return Corrupt("scene options", status);
  }
  return options;
}

namespace {

void FillAssetRef(absl::string_view name, const Asset& asset, pb::AssetRef* out) {
  out->set_name(std::string(name));
  out->set_sha256(asset.sha256());
  out->set_kind(static_cast<uint32_t>(asset.kind()));
  out->set_source_bytes(asset.source_bytes());
}

absl::StatusOr<StoredAssetRef> DecodeAssetRef(const pb::AssetRef& in) {
  if (in.kind() != static_cast<uint32_t>(AssetKind::kMesh) &&
      in.kind() != static_cast<uint32_t>(AssetKind::kHeightfield)) {
    return absl::DataLossError(absl::StrCat("asset \"", in.name(), "\": unknown kind ", in.kind()));
  }
  if (absl::Status status = ValidateAssetName(in.name()); !status.ok()) {
    return absl::DataLossError(absl::StrCat("asset: ", status.message()));
  }
  if (in.sha256().size() != 64) {
    return absl::DataLossError(absl::StrCat("asset \"", in.name(), "\": not a sha256"));
  }
  return StoredAssetRef{.name = in.name(),
                        .sha256 = in.sha256(),
                        .kind = static_cast<AssetKind>(in.kind()),
                        .source_bytes = in.source_bytes()};
}

absl::Status DecodeAssetRefs(const google::protobuf::RepeatedPtrField<pb::AssetRef>& in,
                             std::vector<StoredAssetRef>* out) {
  out->reserve(in.size());
  for (const pb::AssetRef& ref : in) {
    COLLIDE_ASSIGN_OR_RETURN(StoredAssetRef decoded, DecodeAssetRef(ref));
    out->push_back(std::move(decoded));
  }
  return absl::OkStatus();
}

void FillSnapshot(absl::string_view scene, const SceneOptions& options, uint64_t create_sequence,
                  const SceneState& state, pb::SceneSnapshot* snapshot) {
  snapshot->set_scene(std::string(scene));
  EncodeSceneOptions(options, snapshot->mutable_options());
  snapshot->set_create_sequence(create_sequence);
  snapshot->set_covered_sequence(state.log_position);
  snapshot->set_version(state.version);
  snapshot->set_tick(state.tick);
  for (const ClientMark& mark : state.clients) {
    pb::ClientMark* out = snapshot->add_clients();
    out->set_client_id(mark.client_id);
    out->set_sequence(mark.sequence);
    out->set_version(mark.version);
  }
  EncodeBodies(state.bodies, snapshot->mutable_bodies());
  if (!state.moved_to.empty()) snapshot->set_moved_to(state.moved_to);
  for (const NamedAsset& named : state.assets) {
    FillAssetRef(named.name, *named.asset, snapshot->add_assets());
  }
}

// The version, tick, marks and bodies of `snapshot` (not its log position).
absl::Status DecodeState(const pb::SceneSnapshot& snapshot, SceneState* state) {
  state->version = snapshot.version();
  state->tick = snapshot.tick();
  state->moved_to = snapshot.moved_to();
  state->clients.reserve(snapshot.clients_size());
  for (const pb::ClientMark& mark : snapshot.clients()) {
    state->clients.push_back(ClientMark{
        .client_id = mark.client_id(), .sequence = mark.sequence(), .version = mark.version()});
  }
  return DecodeBodies(snapshot.bodies(), &state->bodies);
}

}  // namespace

std::string EncodeUpdateRecord(absl::string_view scene, const ClientTag& client, uint64_t version,
                               const UpdateBatch& batch) {
  pb::LogRecord record;
  pb::UpdateRecord* update = record.mutable_update();
  update->set_scene(std::string(scene));
  update->set_client_id(client.client_id);
  update->set_client_sequence(client.sequence);
  update->set_version(version);
  if (batch.tick.has_value()) update->set_tick(*batch.tick);
  EncodeOps(batch.ops, batch.asset_names, update->mutable_ops());
  return record.SerializeAsString();
}

absl::string_view UpdateRecordEncoder::Encode(absl::string_view scene, const ClientTag& client,
                                              uint64_t version, const UpdateBatch& batch) {
  // Every field of the update is set (not cleared first): Clear would delete the ops message and
  // its columns, and the record's oneof keeps `update` set, so nothing of it is reallocated.
  pb::UpdateRecord* update = record_.mutable_update();
  update->set_scene(scene.data(), scene.size());
  update->set_client_id(client.client_id);
  update->set_client_sequence(client.sequence);
  update->set_version(version);
  if (batch.tick.has_value()) {
    update->set_tick(*batch.tick);
  } else {
    update->clear_tick();
  }
  EncodeOps(batch.ops, batch.asset_names, update->mutable_ops());
  bytes_.clear();
  record_.AppendToString(&bytes_);
  return bytes_;
}

size_t UpdateRecordEncoder::KeptBytes() const {
  return record_.SpaceUsedLong() + bytes_.capacity();
}

void UpdateRecordEncoder::ReleaseIfLarger(size_t max_bytes) {
  if (KeptBytes() <= max_bytes) return;
  record_ = pb::LogRecord();
  std::string().swap(bytes_);
}

std::string EncodeCreateSceneRecord(absl::string_view scene, const SceneOptions& options) {
  pb::LogRecord record;
  record.mutable_create_scene()->set_scene(std::string(scene));
  EncodeSceneOptions(options, record.mutable_create_scene()->mutable_options());
  return record.SerializeAsString();
}

std::string EncodeDeleteSceneRecord(absl::string_view scene) {
  pb::LogRecord record;
  record.mutable_delete_scene()->set_scene(std::string(scene));
  return record.SerializeAsString();
}

std::string EncodeMoveSceneRecord(absl::string_view scene, absl::string_view destination) {
  pb::LogRecord record;
  record.mutable_move_scene()->set_scene(std::string(scene));
  record.mutable_move_scene()->set_destination(std::string(destination));
  return record.SerializeAsString();
}

std::string EncodeAddAssetRecord(absl::string_view scene, absl::string_view name,
                                 const Asset& asset) {
  pb::LogRecord record;
  record.mutable_add_asset()->set_scene(std::string(scene));
  FillAssetRef(name, asset, record.mutable_add_asset()->mutable_asset());
  return record.SerializeAsString();
}

std::string EncodeDeleteAssetRecord(absl::string_view scene, absl::string_view name) {
  pb::LogRecord record;
  record.mutable_delete_asset()->set_scene(std::string(scene));
  record.mutable_delete_asset()->set_name(std::string(name));
  return record.SerializeAsString();
}

std::string EncodeImportSceneRecord(absl::string_view scene, const SceneOptions& options,
                                    const SceneState& state) {
  pb::LogRecord record;
  FillSnapshot(scene, options, 0, state, record.mutable_import_scene());
  record.mutable_import_scene()->clear_covered_sequence();
  record.mutable_import_scene()->clear_moved_to();  // an imported scene is not moving
  return record.SerializeAsString();
}

absl::StatusOr<DecodedRecord> DecodeLogRecord(absl::string_view payload) {
  pb::LogRecord record;
  if (!record.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return absl::DataLossError("log record does not parse");
  }
  DecodedRecord out;
  switch (record.record_case()) {
    case pb::LogRecord::kCreateScene: {
      out.type = DecodedRecord::Type::kCreateScene;
      out.scene = record.create_scene().scene();
      COLLIDE_ASSIGN_OR_RETURN(out.options, DecodeSceneOptions(record.create_scene().options()));
      break;
    }
    case pb::LogRecord::kDeleteScene:
      out.type = DecodedRecord::Type::kDeleteScene;
      out.scene = record.delete_scene().scene();
      break;
    case pb::LogRecord::kUpdate: {
      const pb::UpdateRecord& update = record.update();
      out.type = DecodedRecord::Type::kUpdate;
      out.scene = update.scene();
      out.client = ClientTag{.client_id = update.client_id(), .sequence = update.client_sequence()};
      out.version = update.version();
      if (update.has_tick()) out.batch.tick = update.tick();
      if (absl::Status status = DecodeOps(update.ops(), &out.batch.ops, &out.batch.asset_names);
          !status.ok()) {
        return Corrupt("update record", status);
      }
      break;
    }
    case pb::LogRecord::kImportScene: {
      const pb::SceneSnapshot& imported = record.import_scene();
      out.type = DecodedRecord::Type::kImportScene;
      out.scene = imported.scene();
      COLLIDE_ASSIGN_OR_RETURN(out.options, DecodeSceneOptions(imported.options()));
      if (absl::Status status = DecodeState(imported, &out.state); !status.ok()) {
        return Corrupt("import record", status);
      }
      if (absl::Status status = DecodeAssetRefs(imported.assets(), &out.assets); !status.ok()) {
        return Corrupt("import record", status);
      }
      break;
    }
    case pb::LogRecord::kAddAsset: {
      out.type = DecodedRecord::Type::kAddAsset;
      out.scene = record.add_asset().scene();
      absl::StatusOr<StoredAssetRef> ref = DecodeAssetRef(record.add_asset().asset());
      if (!ref.ok()) return Corrupt("add asset record", ref.status());
      out.assets.push_back(*std::move(ref));
      break;
    }
    case pb::LogRecord::kDeleteAsset:
      out.type = DecodedRecord::Type::kDeleteAsset;
      out.scene = record.delete_asset().scene();
      out.asset_name = record.delete_asset().name();
      break;
    case pb::LogRecord::kMoveScene:
      out.type = DecodedRecord::Type::kMoveScene;
      out.scene = record.move_scene().scene();
      out.destination = record.move_scene().destination();
      break;
    default:
      return absl::DataLossError("log record of unknown type");
  }
  if (record.has_replicated()) out.replicated = FromProto(record.replicated());
  return out;
}

std::string EncodeSnapshot(absl::string_view scene, const SceneOptions& options,
                           uint64_t create_sequence, const SceneState& state) {
  pb::SceneSnapshot snapshot;
  FillSnapshot(scene, options, create_sequence, state, &snapshot);
  return snapshot.SerializeAsString();
}

absl::StatusOr<DecodedSnapshot> DecodeSnapshot(absl::string_view payload) {
  pb::SceneSnapshot snapshot;
  if (!snapshot.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return absl::DataLossError("snapshot does not parse");
  }
  DecodedSnapshot out;
  out.scene = snapshot.scene();
  COLLIDE_ASSIGN_OR_RETURN(out.options, DecodeSceneOptions(snapshot.options()));
  out.create_sequence = snapshot.create_sequence();
  out.state.log_position = snapshot.covered_sequence();
  if (out.create_sequence == 0 || out.create_sequence > out.state.log_position) {
    return absl::DataLossError(absl::StrCat("snapshot: create sequence ", out.create_sequence,
                                            " is not in [1, covered sequence ",
                                            out.state.log_position, "]"));
  }
  if (absl::Status status = DecodeState(snapshot, &out.state); !status.ok()) {
    return Corrupt("snapshot", status);
  }
  if (absl::Status status = DecodeAssetRefs(snapshot.assets(), &out.assets); !status.ok()) {
    return Corrupt("snapshot", status);
  }
  if (snapshot.has_replicated()) out.replicated = FromProto(snapshot.replicated());
  return out;
}

}  // namespace collide
