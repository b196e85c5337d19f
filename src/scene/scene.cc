#include "scene/scene.h"

#include <algorithm>
#include <cassert>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/field_error.h"
#include "base/status_macros.h"
#include "scene/move_destination.h"
#include "scene/validate.h"

namespace collide {
namespace {

absl::Status NoBody(size_t index, const UpdateOp& op, const std::string& scene,
                    int64_t removed_by) {
  FieldError error{.list = "ops",
                   .index = index,
                   .field = OpIdField(op.type),
                   .reason = absl::StrFormat("no body %d in scene \"%s\"", op.body_id, scene)};
  if (removed_by >= 0) {
    error.relation = "removed by";
    error.related = static_cast<size_t>(removed_by);
  }
  return FieldErrorStatus(absl::StatusCode::kNotFound, error);
}

// The body an upsert describes, placing the asset in `slot` (kNoAsset: its shape), its rotation
// normalised: idempotently (NormalizeRotation), so restored and imported state keeps its stored
// rotations bit for bit.
BodyDesc DescOf(const UpdateOp& op, AssetSlot slot) {
  return BodyDesc{.id = op.body_id,
                  .shape = slot == kNoAsset ? op.shape : Shape{},
                  .pose = NormalizedPose(op.pose),
                  .category = op.category,
                  .mask = op.mask,
                  .kind = op.kind,
                  .asset = slot,
                  .scale = slot == kNoAsset ? 1.0f : op.scale};
}

// The body a stored state describes, placing the asset in `slot` (its rotation normalised as an
// upsert's: a no-op on the rotations a scene stores).
BodyDesc DescOf(const BodyState& body, AssetSlot slot) {
  return BodyDesc{.id = body.id,
                  .shape = slot == kNoAsset ? body.shape : Shape{},
                  .pose = NormalizedPose(body.pose),
                  .category = body.category,
                  .mask = body.mask,
                  .kind = body.kind,
                  .asset = slot,
                  .scale = slot == kNoAsset ? 1.0f : body.scale};
}

// The field of a body's asset placement, under `prefix` (`upsert.`, or nothing for a stored
// body): `upsert.shape.mesh.asset`.
std::string AssetField(absl::string_view prefix, AssetKind kind) {
  return absl::StrCat(prefix, "shape.", AssetKindName(kind), ".asset");
}

absl::Status NoAsset(absl::string_view name, const std::string& scene) {
  return FieldStatus(absl::StatusCode::kNotFound, "name",
                     absl::StrFormat("no asset \"%s\" in scene \"%s\"", name, scene));
}

// The history a scene with `options` keeps from tick `start`.
PoseHistory HistoryFor(const SceneOptions& options, uint64_t start) {
  return PoseHistory(options.history_ticks, start);
}

}  // namespace

Scene::Scene(std::string name, const SceneOptions& options, uint64_t log_position)
    : name_(std::move(name)),
      options_(options),
      world_(CollisionWorldOptions{}),
      handles_(&world_),
      history_(HistoryFor(options, 0)),
      log_position_(log_position) {}

absl::StatusOr<std::unique_ptr<Scene>> Scene::Restore(std::string name, const SceneOptions& options,
                                                      const SceneState& state) {
  // The options were checked by the caller (Database::ImportScene, the log's decoder).
  assert(ValidateSceneOptions(options).ok());
  if (state.tick > PoseHistory::kMaxTick) {
    return InvalidFieldError(
        "tick", absl::StrFormat("must be at most %d, got %d", PoseHistory::kMaxTick, state.tick));
  }
  auto scene = std::make_unique<Scene>(std::move(name), options, state.log_position);
  WriterLock serial(&scene->write_mu_);
  WriterLock lock(&scene->mu_);
  if (state.assets.size() > kMaxAssetSlots) {
    return InvalidFieldError("assets", absl::StrFormat("at most %d assets, got %d", kMaxAssetSlots,
                                                       state.assets.size()));
  }
  for (size_t i = 0; i < state.assets.size(); ++i) {
    const NamedAsset& named = state.assets[i];
    if (absl::Status status = ValidateAssetName(named.name); !status.ok()) {
      return AtElement(status, "assets", i);
    }
    if (named.asset == nullptr || scene->assets_.contains(named.name)) {
      return InvalidElementError(
          "assets", i, "name",
          absl::StrFormat("asset \"%s\" appears twice (or has no content)", named.name));
    }
    scene->InsertAssetLocked(named.name, named.asset);
  }
  std::vector<BodyDesc> descs;
  std::vector<uint64_t> user_data;
  descs.reserve(state.bodies.size());
  user_data.reserve(state.bodies.size());
  // Ids seen so far, to refuse one that appears twice before anything is built.
  absl::flat_hash_set<uint64_t> ids;
  ids.reserve(state.bodies.size());
  for (size_t i = 0; i < state.bodies.size(); ++i) {
    const BodyState& body = state.bodies[i];
    assert(ValidateBody(body, i).ok());
    if (!ids.insert(body.id).second) {
      return InvalidElementError("bodies", i, "id",
                                 absl::StrFormat("body %d appears twice", body.id));
    }
    AssetSlot slot = kNoAsset;
    if (!body.asset.empty()) {
      auto it = scene->assets_.find(body.asset);
      if (it == scene->assets_.end()) {
        return InvalidElementError("bodies", i, AssetField("", body.asset_kind),
                                   absl::StrFormat("no asset \"%s\" in the scene", body.asset));
      }
      if (it->second.asset->kind() != body.asset_kind) {
        return InvalidElementError("bodies", i, AssetField("", body.asset_kind),
                                   absl::StrFormat("asset \"%s\" is a %s", body.asset,
                                                   AssetKindName(it->second.asset->kind())));
      }
      slot = it->second.slot;
      scene->UseSlotLocked(slot, 1);
    }
    descs.push_back(DescOf(body, slot));
    user_data.push_back(body.user_data);
  }
  absl::flat_hash_set<uint64_t>().swap(ids);
  std::vector<BodyHandle> handles(descs.size(), kNullBody);
  scene->world_.AddBulk(descs, handles);
  scene->extra_.resize(scene->world_.slot_count());
  scene->handles_.Reserve(descs.size());
  for (size_t i = 0; i < descs.size(); ++i) {
    scene->handles_.Insert(handles[i]);
    scene->extra_[handles[i]].user_data = user_data[i];
  }
  for (size_t i = 0; i < state.clients.size(); ++i) {
    const ClientMark& mark = state.clients[i];
    if (mark.client_id == 0 || !scene->clients_.try_emplace(mark.client_id, mark).second) {
      return InvalidElementError("clients", i, "client_id",
                                 absl::StrFormat("%d is zero or appears twice", mark.client_id));
    }
  }
  if (!state.moved_to.empty()) {
    COLLIDE_RETURN_IF_ERROR(ValidateMoveDestination(state.moved_to));
    scene->moved_to_ = state.moved_to;
  }
  scene->version_ = state.version;
  scene->history_ = HistoryFor(options, state.tick);
  return scene;
}

absl::StatusOr<ApplyResult> Scene::Apply(const UpdateBatch& batch, const ClientTag& client) {
  // Without a log, the position of the last change stays where it was.
  return Apply(batch, client, [this](uint64_t) -> absl::StatusOr<uint64_t> {
    return log_position_;  // read under write_mu_, which Apply holds
  });
}

absl::StatusOr<ApplyResult> Scene::Apply(const UpdateBatch& batch, const ClientTag& client,
                                         CommitFn commit, WorkerPool* pool, ApplyTimings* timings) {
  // Each phase's end: its duration into `*phase` (only when timed: a clock read each).
  using Clock = std::chrono::steady_clock;
  Clock::time_point mark = timings != nullptr ? Clock::now() : Clock::time_point();
  const auto end_phase = [&](std::chrono::nanoseconds ApplyTimings::*phase) {
    if (timings == nullptr) return;
    const Clock::time_point now = Clock::now();
    timings->*phase += std::chrono::duration_cast<std::chrono::nanoseconds>(now - mark);
    mark = now;
  };
  WriterLock serial(&write_mu_);
  end_phase(&ApplyTimings::writer_wait);
  // Writers change these fields only while holding write_mu_, which this thread holds: reading
  // them without mu_ cannot race.
  if (deleted_) {
    return FieldStatus(absl::StatusCode::kNotFound, "scene",
                       absl::StrCat("scene \"", name_, "\" was deleted"));
  }
  if (!moved_to_.empty()) return MovedError(name_, moved_to_);
  if (client.client_id != 0) {
    auto it = clients_.find(client.client_id);
    if (it != clients_.end() && client.sequence <= it->second.sequence) {
      return ApplyResult{.version = it->second.version, .duplicate = true};
    }
  }
  const absl::Status valid = ValidateLocked(batch, &resolved_);
  end_phase(&ApplyTimings::validate);
  if (!valid.ok()) return valid;
  const uint64_t new_version = version_ + 1;
  absl::StatusOr<uint64_t> position = commit(new_version);
  end_phase(&ApplyTimings::commit);
  if (!position.ok()) return std::move(position).status();
  if (!observers_.empty()) CaptureBefore(batch);
  end_phase(&ApplyTimings::observers);
  {
    WriterLock lock(&mu_);
    ApplyLocked(batch, resolved_, pool);
    write_scratch_bytes_ = WriteScratchBytes();
    version_ = new_version;
    log_position_ = *position;
    if (client.client_id != 0) {
      clients_[client.client_id] = ClientMark{
          .client_id = client.client_id, .sequence = client.sequence, .version = new_version};
      if (clients_.size() >= 2 * kMaxClientMarks) TrimClientMarksLocked();
    }
  }
  version_signal_.Notify();
  end_phase(&ApplyTimings::apply);
  if (!observers_.empty()) NotifyApplied(batch);
  end_phase(&ApplyTimings::observers);
  return ApplyResult{.version = new_version, .duplicate = false};
}

absl::Status Scene::ValidateBatch(const UpdateBatch& batch) const {
  // Shared: validation only reads, and Apply holds write_mu_ exclusively while it changes state.
  ReaderLock serial(&write_mu_);
  return ValidateLocked(batch, nullptr);
}

absl::Status Scene::ValidateLocked(const UpdateBatch& batch, std::vector<BodyHandle>* resolved)
    const ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (batch.tick.has_value() && *batch.tick > PoseHistory::kMaxTick) {
    return InvalidFieldError(
        "tick", absl::StrFormat("must be at most %d, got %d", PoseHistory::kMaxTick, *batch.tick));
  }
  if (batch.tick.has_value() && *batch.tick < history_.tick()) {
    return InvalidFieldError(
        "tick", absl::StrFormat("%d is below the scene's current tick %d (ticks never go back)",
                                *batch.tick, history_.tick()));
  }
  const std::vector<UpdateOp>& ops = batch.ops;
  if (!IsStructural(batch)) {
    // The hot path: moves and filter changes only, so existence never changes within the batch
    // and each op needs one lookup, whose handle Apply reuses.
    if (resolved != nullptr) resolved->resize(ops.size());
    for (size_t i = 0; i < ops.size(); ++i) {
      COLLIDE_RETURN_IF_ERROR(ValidateOpValues(ops[i], i));
      const BodyHandle handle = handles_.Find(ops[i].body_id);
      if (handle == kNullBody) return NoBody(i, ops[i], name_, -1);
      if (resolved != nullptr) (*resolved)[i] = handle;
    }
    return absl::OkStatus();
  }

  // Existence of each id the batch touches, as the ops before the current one leave it.
  struct Touched {
    bool exists = false;
    int64_t upserted_by = -1;
    int64_t removed_by = -1;
  };
  absl::flat_hash_map<uint64_t, Touched> touched;
  const int64_t initial_count = world_.body_count();
  int64_t count = initial_count;
  int64_t last_creator = -1;
  for (size_t i = 0; i < ops.size(); ++i) {
    const UpdateOp& op = ops[i];
    COLLIDE_RETURN_IF_ERROR(ValidateOpValues(op, i));
    auto [it, inserted] = touched.try_emplace(op.body_id);
    Touched& t = it->second;
    if (inserted) t.exists = handles_.Contains(op.body_id);
    switch (op.type) {
      case UpdateOpType::kUpsert:
        if (op.asset != 0) {
          const std::string field = AssetField("upsert.", op.asset_kind);
          if (op.asset > batch.asset_names.size()) {
            return InvalidElementError("ops", i, field, "names no asset of the batch");
          }
          const std::string& asset_name = batch.asset_names[op.asset - 1];
          if (absl::Status status = ValidateAssetName(asset_name); !status.ok()) {
            return InvalidElementError("ops", i, field, GetFieldError(status)->reason);
          }
          auto found = assets_.find(asset_name);
          if (found == assets_.end()) {
            return FieldErrorStatus(
                absl::StatusCode::kNotFound,
                FieldError{.list = "ops",
                           .index = i,
                           .field = field,
                           .reason = absl::StrFormat("no asset \"%s\" in scene \"%s\"", asset_name,
                                                     name_)});
          }
          if (found->second.asset->kind() != op.asset_kind) {
            return InvalidElementError("ops", i, field,
                                       absl::StrFormat("asset \"%s\" is a %s", asset_name,
                                                       AssetKindName(found->second.asset->kind())));
          }
        }
        if (t.upserted_by >= 0) {
          return FieldErrorStatus(
              absl::StatusCode::kInvalidArgument,
              FieldError{
                  .list = "ops",
                  .index = i,
                  .field = OpIdField(op.type),
                  .reason = absl::StrFormat("body %d is upserted twice in one batch", op.body_id),
                  .relation = "first by",
                  .related = static_cast<size_t>(t.upserted_by)});
        }
        t.upserted_by = static_cast<int64_t>(i);
        if (!t.exists) {
          t.exists = true;
          ++count;
          last_creator = static_cast<int64_t>(i);
        }
        break;
      case UpdateOpType::kSetPose:
      case UpdateOpType::kSetFilter:
        if (!t.exists) return NoBody(i, op, name_, t.removed_by);
        break;
      case UpdateOpType::kRemove:
        if (!t.exists) return NoBody(i, op, name_, t.removed_by);
        t.exists = false;
        t.removed_by = static_cast<int64_t>(i);
        --count;
        break;
    }
  }
  // Only a batch that grows the scene past its limit is refused (a restored scene may already
  // hold more bodies than a limit; shrinking it must stay possible).
  if (count > static_cast<int64_t>(options_.max_bodies) && count > initial_count) {
    return FieldErrorStatus(
        absl::StatusCode::kResourceExhausted,
        FieldError{
            .list = "ops",
            .index = static_cast<size_t>(last_creator),
            .field = OpIdField(ops[static_cast<size_t>(last_creator)].type),
            .reason = absl::StrFormat("scene \"%s\" would hold %d bodies, over its limit of %d",
                                      name_, count, options_.max_bodies)});
  }
  return absl::OkStatus();
}

AssetSlot Scene::SlotOf(const UpdateBatch& batch,
                        const UpdateOp& op) const ABSL_NO_THREAD_SAFETY_ANALYSIS {
  // Validated: the name exists (assets_ changes only under write_mu_, held).
  if (op.asset == 0) return kNoAsset;
  return assets_.find(batch.asset_names[op.asset - 1])->second.slot;
}

BodyHandle Scene::AddBody(const UpdateOp& op, AssetSlot slot) {
  const BodyHandle handle = world_.Add(DescOf(op, slot));
  if (slot != kNoAsset) UseSlotLocked(slot, 1);
  history_.AfterCreate(world_, handle);
  if (static_cast<size_t>(world_.slot_count()) > extra_.size()) extra_.resize(world_.slot_count());
  extra_[handle].user_data = op.user_data;
  return handle;
}

void Scene::FinishBatchLocked(WorkerPool* pool) {
  // The history reads the bodies (their poses, shapes, filters) and writes only itself; the
  // world's FinishUpdates writes only its trees: the two touch nothing in common, so they may
  // run at once. Moves only wrote their leaves' boxes and marked them; FinishUpdates refits the
  // query form above them once per batch, before the exclusive lock is released (no query sees
  // the marks).
  if (pool == nullptr || pool->threads() < 2) {
    history_.EndBatch(world_);
    world_.FinishUpdates();
    return;
  }
  pool->ParallelFor(2, [this](size_t part) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    // The caller holds mu_ and write_mu_ until ParallelFor returns.
    if (part == 0) {
      history_.EndBatch(world_);
    } else {
      world_.FinishUpdates();
    }
  });
}

void Scene::ApplyLocked(const UpdateBatch& batch, const std::vector<BodyHandle>& resolved,
                        WorkerPool* pool) {
  const std::vector<UpdateOp>& ops = batch.ops;
  if (batch.tick.has_value()) history_.AdvanceTo(*batch.tick);
  if (!IsStructural(batch)) {
    assert(resolved.size() == ops.size());
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].type == UpdateOpType::kSetPose) {
        history_.BeforeMove(world_, resolved[i]);
        world_.SetPose(resolved[i], NormalizedPose(ops[i].pose));
      } else {
        history_.BeforeChange(world_, resolved[i]);
        world_.SetFilter(resolved[i], ops[i].category, ops[i].mask);
      }
    }
    FinishBatchLocked(pool);
    if (!retired_.empty()) ReleaseRetiredLocked();
    return;
  }
  for (const UpdateOp& op : ops) {
    switch (op.type) {
      case UpdateOpType::kUpsert: {
        // A replacement may change the kind, and so the tree: remove and add again (the slot is
        // reused, so the handle usually stays the same).
        if (const BodyHandle old = handles_.Find(op.body_id); old != kNullBody) {
          history_.BeforeChange(world_, old);
          const AssetSlot old_slot = world_.body(old).asset;
          if (old_slot != kNoAsset) UseSlotLocked(old_slot, -1);
          handles_.Erase(op.body_id);  // while the body is in the world: the index reads its id
          world_.Remove(old);
        }
        handles_.Insert(AddBody(op, SlotOf(batch, op)));
        break;
      }
      case UpdateOpType::kSetPose: {
        const BodyHandle handle = handles_.Find(op.body_id);
        assert(handle != kNullBody);
        history_.BeforeMove(world_, handle);
        world_.SetPose(handle, NormalizedPose(op.pose));
        break;
      }
      case UpdateOpType::kSetFilter: {
        const BodyHandle handle = handles_.Find(op.body_id);
        assert(handle != kNullBody);
        history_.BeforeChange(world_, handle);
        world_.SetFilter(handle, op.category, op.mask);
        break;
      }
      case UpdateOpType::kRemove: {
        const BodyHandle handle = handles_.Find(op.body_id);
        assert(handle != kNullBody);
        history_.BeforeChange(world_, handle);
        const AssetSlot old_slot = world_.body(handle).asset;
        if (old_slot != kNoAsset) UseSlotLocked(old_slot, -1);
        handles_.Erase(op.body_id);  // while the body is in the world: the index reads its id
        world_.Remove(handle);
        extra_[handle] = BodyExtra{};
        break;
      }
    }
  }
  FinishBatchLocked(pool);
  if (!retired_.empty()) ReleaseRetiredLocked();
}

absl::Status Scene::MarkDeleted(absl::FunctionRef<absl::Status()> commit) {
  WriterLock serial(&write_mu_);
  return MarkDeletedLocked(commit);
}

absl::Status Scene::MarkReplaced(absl::FunctionRef<absl::Status()> commit) {
  WriterLock serial(&write_mu_);
  if (std::string destination = moved_to(); !destination.empty()) {
    return MovedError(name_, destination);
  }
  return MarkDeletedLocked(commit);
}

absl::Status Scene::MarkDeletedLocked(absl::FunctionRef<absl::Status()> commit) {
  if (deleted_) {
    return FieldStatus(absl::StatusCode::kFailedPrecondition, "scene",
                       absl::StrCat("scene \"", name_, "\" was deleted"));
  }
  COLLIDE_RETURN_IF_ERROR(commit());
  {
    WriterLock lock(&mu_);
    deleted_ = true;
  }
  for (SceneObserver* observer : observers_) observer->OnDeleted();
  observers_.clear();
  return absl::OkStatus();
}

absl::Status Scene::AddObserver(SceneObserver* observer,
                                absl::FunctionRef<void(const SceneView& scene)> start) const {
  WriterLock serial(&write_mu_);
  if (deleted_) {
    return FieldStatus(absl::StatusCode::kNotFound, "scene",
                       absl::StrCat("scene \"", name_, "\" was deleted"));
  }
  WithView(start);
  observers_.push_back(observer);
  return absl::OkStatus();
}

void Scene::RemoveObserver(SceneObserver* observer) const {
  WriterLock serial(&write_mu_);
  observers_.erase(std::remove(observers_.begin(), observers_.end(), observer), observers_.end());
}

void Scene::OrderChanges(const UpdateBatch& batch) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  // The ops ordered by body id (a sort of ids, not of change records), so each body gets one
  // record, already in the order observers see.
  const std::vector<UpdateOp>& ops = batch.ops;
  change_order_.clear();
  for (size_t i = 0; i < ops.size(); ++i) change_order_.emplace_back(ops[i].body_id, i);
  if (!std::is_sorted(change_order_.begin(), change_order_.end())) {
    std::sort(change_order_.begin(), change_order_.end());
  }
}

void Scene::CaptureBefore(const UpdateBatch& batch) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  // Called under write_mu_ before the batch is applied: the world is stable.
  const std::vector<UpdateOp>& ops = batch.ops;
  change_structural_ = IsStructural(batch);
  // Observers that keep their own copy of the bodies take a batch of moves and filter changes
  // as the new poses and filters alone: nothing to copy before it (NotifyApplied reads them).
  change_moves_ = !change_structural_ &&
                  std::all_of(observers_.begin(), observers_.end(),
                              [](const SceneObserver* observer) { return observer->TakesMoves(); });
  changes_.clear();
  moves_.clear();
  change_handles_.clear();
  if (change_moves_) return;
  OrderChanges(batch);
  for (size_t k = 0; k < change_order_.size();) {
    const uint64_t id = change_order_[k].first;
    // A batch of moves and filter changes found every body's handle while validating it.
    const BodyHandle handle =
        change_structural_ ? handles_.Find(id) : resolved_[change_order_[k].second];
    BodyChange change;
    change.id = id;
    for (; k < change_order_.size() && change_order_[k].first == id; ++k) {
      change.replaced |= ops[change_order_[k].second].type == UpdateOpType::kUpsert;
    }
    if (handle != kNullBody) change.before = world_.body(handle);
    changes_.push_back(std::move(change));
    change_handles_.push_back(handle);
  }
}

void Scene::NotifyApplied(const UpdateBatch& batch) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  // Under write_mu_ after the batch: the world is stable until the next writer. Without
  // structural ops every body kept its handle.
  if (change_moves_) {
    // One pass: each touched body's pose and filter now, by the handle validation found.
    OrderChanges(batch);
    for (size_t k = 0; k < change_order_.size();) {
      const uint64_t id = change_order_[k].first;
      const Body& after = world_.body(resolved_[change_order_[k].second]);
      while (k < change_order_.size() && change_order_[k].first == id) ++k;
      moves_.push_back(
          BodyMove{.id = id, .pose = after.pose, .category = after.category, .mask = after.mask});
    }
  } else {
    for (size_t i = 0; i < changes_.size(); ++i) {
      BodyHandle handle = change_handles_[i];
      if (change_structural_) {
        handle = handles_.Find(changes_[i].id);
      }
      if (handle != kNullBody) {
        const Body& after = world_.body(handle);
        changes_[i].after = after;
        // The observers' copies of the world place the body's asset too (SceneMirror).
        changes_[i].asset = after.asset != kNoAsset ? world_.shared_asset(after.asset) : nullptr;
      }
    }
  }
  const AppliedBatch applied{.changes = changes_, .moves = moves_};
  WithView([&](const SceneView& view) {
    for (SceneObserver* observer : observers_) observer->OnApplied(applied, view);
  });
}

void Scene::WithView(absl::FunctionRef<void(const SceneView&)> f) const
    ABSL_NO_THREAD_SAFETY_ANALYSIS {
  // The world changes only under write_mu_ (held): reading it without mu_ cannot race.
  auto find = [this](uint64_t id) -> const Body* {
    const BodyHandle handle = handles_.Find(id);
    return handle == kNullBody ? nullptr : &world_.body(handle);
  };
  f(SceneView{.world = world_, .find_body = find, .version = version_, .tick = history_.tick()});
}

uint64_t Scene::version() const {
  ReaderLock lock(&mu_);
  return version_;
}

uint64_t Scene::log_position() const {
  // Shared hold of the writer serialisation: no Apply is between its commit and its application.
  ReaderLock serial(&write_mu_);
  ReaderLock lock(&mu_);
  return log_position_;
}

absl::Status Scene::SetMovedTo(absl::string_view destination,
                               absl::FunctionRef<absl::StatusOr<uint64_t>()> commit) {
  if (!destination.empty()) COLLIDE_RETURN_IF_ERROR(ValidateMoveDestination(destination));
  WriterLock serial(&write_mu_);
  if (deleted_) {
    return FieldStatus(absl::StatusCode::kNotFound, "scene",
                       absl::StrCat("scene \"", name_, "\" was deleted"));
  }
  if (std::string current = moved_to();
      !destination.empty() && !current.empty() && current != destination) {
    return AlreadyMovingError(name_, current);
  }
  COLLIDE_ASSIGN_OR_RETURN(const uint64_t position, commit());
  WriterLock lock(&mu_);
  moved_to_ = std::string(destination);
  log_position_ = position;
  return absl::OkStatus();
}

std::string Scene::moved_to() const {
  ReaderLock lock(&mu_);
  return moved_to_;
}

void Scene::SetLogPosition(uint64_t log_position) {
  WriterLock serial(&write_mu_);
  WriterLock lock(&mu_);
  log_position_ = log_position;
}

uint64_t Scene::tick() const {
  ReaderLock lock(&mu_);
  return history_.tick();
}

void Scene::ForgetHistory() {
  WriterLock serial(&write_mu_);
  WriterLock lock(&mu_);
  history_ = HistoryFor(options_, history_.tick());
  ReleaseRetiredLocked();
}

bool Scene::deleted() const {
  ReaderLock lock(&mu_);
  return deleted_;
}

SceneStats Scene::Stats() const {
  ReaderLock lock(&mu_);
  SceneStats stats;
  stats.version = version_;
  stats.body_count = world_.body_count();
  stats.static_body_count = world_.tree(BodyKind::kStatic).ProxyCount();
  stats.tree_height =
      std::max(world_.tree(BodyKind::kDynamic).Height(), world_.tree(BodyKind::kStatic).Height());
  stats.memory_bytes = MemoryLocked().Total();
  stats.tick = history_.tick();
  stats.oldest_tick = history_.oldest_tick();
  stats.history_bytes = history_.MemoryBytes();
  stats.asset_count = static_cast<uint32_t>(assets_.size());
  for (const auto& [name, entry] : assets_) {
    stats.asset_triangles += entry.asset->triangle_count();
    stats.asset_bytes += entry.asset->source_bytes();
    stats.asset_memory_bytes += entry.asset->memory_bytes();
  }
  return stats;
}

SceneMemory Scene::Memory() const {
  ReaderLock lock(&mu_);
  return MemoryLocked();
}

size_t Scene::WriteScratchBytes() const {
  return resolved_.capacity() * sizeof(BodyHandle) + changes_.capacity() * sizeof(BodyChange) +
         moves_.capacity() * sizeof(BodyMove) +
         change_order_.capacity() * sizeof(std::pair<uint64_t, size_t>) +
         change_handles_.capacity() * sizeof(BodyHandle) +
         observers_.capacity() * sizeof(SceneObserver*);
}

SceneMemory Scene::MemoryLocked() const {
  // flat_hash_map keeps one control byte per slot beside each slot, plus a group's worth of
  // cloned control bytes.
  auto map_bytes = [](size_t capacity, size_t slot) {
    return capacity == 0 ? 0 : capacity * (slot + 1) + 16;
  };
  SceneMemory m;
  m.bodies = world_.BodyBytes();
  m.trees = world_.tree(BodyKind::kDynamic).Memory();
  m.trees += world_.tree(BodyKind::kStatic).Memory();
  m.id_map = handles_.MemoryBytes();
  m.extra = extra_.capacity() * sizeof(BodyExtra);
  m.client_marks = map_bytes(clients_.capacity(), sizeof(std::pair<const uint64_t, ClientMark>));
  m.history = history_.MemoryBytes();
  // As of the last applied batch (the scratch itself is the writer's, under write_mu_ alone).
  m.write_scratch = write_scratch_bytes_;
  // The world and history objects are counted by their own MemoryBytes().
  m.fixed =
      sizeof(*this) - sizeof(world_) - sizeof(history_) + name_.capacity() + moved_to_.capacity();
  m.assets = map_bytes(assets_.capacity(), sizeof(std::pair<const std::string, TableAsset>)) +
             slot_use_.capacity() * sizeof(SlotUse) + retired_.capacity() * sizeof(RetiredSlot);
  for (const auto& [name, entry] : assets_)
    m.assets += entry.asset->memory_bytes() + name.capacity();
  for (const RetiredSlot& retired : retired_) m.assets += retired.asset->memory_bytes();
  return m;
}

BodyState StoredBodyOf(const UpdateOp& op, std::string asset_name) {
  BodyState body{.id = op.body_id,
                 .shape = op.shape,
                 .pose = op.pose,
                 .category = op.category,
                 .mask = op.mask,
                 .kind = op.kind,
                 .user_data = op.user_data};
  if (op.asset != 0) {
    body.asset = std::move(asset_name);
    body.asset_kind = op.asset_kind;
    body.scale = op.scale;
  }
  return body;
}

BodyState Scene::StateOf(BodyHandle handle) const {
  const Body& body = world_.body(handle);
  BodyState state{.id = body.id,
                  .shape = body.shape,
                  .pose = body.pose,
                  .category = body.category,
                  .mask = body.mask,
                  .kind = body.kind,
                  .user_data = extra_[handle].user_data};
  if (body.asset != kNoAsset) {
    state.asset = slot_use_[body.asset].name;
    state.asset_kind = world_.asset(body.asset).kind();
    state.scale = body.scale;
  }
  return state;
}

std::optional<BodyState> Scene::GetBody(uint64_t id) const {
  ReaderLock lock(&mu_);
  const BodyHandle handle = handles_.Find(id);
  if (handle == kNullBody) return std::nullopt;
  return StateOf(handle);
}

void Scene::TrimClientMarksLocked() {
  std::vector<uint64_t> versions;
  versions.reserve(clients_.size());
  for (const auto& [id, mark] : clients_) versions.push_back(mark.version);
  // Versions are unique per mark (each is the version one batch produced): keep those above the
  // (size - kMaxClientMarks)-th smallest.
  const size_t drop = clients_.size() - kMaxClientMarks;
  std::nth_element(versions.begin(), versions.begin() + static_cast<ptrdiff_t>(drop - 1),
                   versions.end());
  const uint64_t oldest_kept_above = versions[drop - 1];
  absl::erase_if(clients_,
                 [&](const auto& entry) { return entry.second.version <= oldest_kept_above; });
}

std::optional<ClientMark> Scene::GetClientMark(uint64_t client_id) const {
  ReaderLock lock(&mu_);
  auto it = clients_.find(client_id);
  if (it == clients_.end()) return std::nullopt;
  return it->second;
}

SceneState Scene::CaptureState() const {
  SceneState state;
  {
    ReaderLock lock(&mu_);
    state.version = version_;
    state.tick = history_.tick();
    state.log_position = log_position_;
    state.moved_to = moved_to_;
    state.bodies.reserve(handles_.size());
    for (const BodyHandle handle : handles_) state.bodies.push_back(StateOf(handle));
    state.clients.reserve(clients_.size());
    for (const auto& [id, mark] : clients_) state.clients.push_back(mark);
    state.assets.reserve(assets_.size());
    for (const auto& [name, entry] : assets_) state.assets.push_back(NamedAsset{name, entry.asset});
  }
  std::sort(state.assets.begin(), state.assets.end(),
            [](const NamedAsset& a, const NamedAsset& b) { return a.name < b.name; });
  std::sort(state.bodies.begin(), state.bodies.end(),
            [](const BodyState& a, const BodyState& b) { return a.id < b.id; });
  std::sort(state.clients.begin(), state.clients.end(),
            [](const ClientMark& a, const ClientMark& b) { return a.client_id < b.client_id; });
  return state;
}

bool Scene::Validate() const {
  ReaderLock lock(&mu_);
  if (static_cast<int32_t>(handles_.size()) != world_.body_count()) return false;
  if (extra_.size() < static_cast<size_t>(world_.slot_count())) return false;
  std::vector<uint64_t> uses(slot_use_.size(), 0);
  for (const BodyHandle handle : handles_) {
    if (!world_.IsLive(handle) || handles_.Find(world_.body(handle).id) != handle) return false;
    const AssetSlot slot = world_.body(handle).asset;
    if (slot != kNoAsset) {
      if (slot >= uses.size() || slot_use_[slot].name.empty()) return false;
      ++uses[slot];
    }
  }
  for (size_t slot = 0; slot < uses.size(); ++slot) {
    if (uses[slot] != slot_use_[slot].bodies) return false;
  }
  for (const auto& [name, entry] : assets_) {
    if (entry.slot >= slot_use_.size() || slot_use_[entry.slot].name != name ||
        &world_.asset(entry.slot) != &entry.asset->geometry()) {
      return false;
    }
  }
  return world_.Validate();
}

// ---------------------------------------------------------------------------------------------
// Assets.

void Scene::InsertAssetLocked(const std::string& name, std::shared_ptr<const Asset> asset) {
  const AssetSlot slot = world_.AddAsset(asset->SharedGeometry());
  assert(slot != kNoAsset);
  if (slot >= slot_use_.size()) slot_use_.resize(static_cast<size_t>(slot) + 1);
  slot_use_[slot] = SlotUse{.name = name, .bodies = 0};
  assets_.insert_or_assign(name, TableAsset{.asset = std::move(asset), .slot = slot});
}

void Scene::UseSlotLocked(AssetSlot slot, int64_t delta) {
  assert(slot < slot_use_.size());
  slot_use_[slot].bodies =
      static_cast<uint64_t>(static_cast<int64_t>(slot_use_[slot].bodies) + delta);
}

void Scene::ReleaseRetiredLocked() {
  // A deleted asset's last bodies were removed at or before its deletion's tick; the past state
  // of every tick after it no longer holds them.
  const bool recording = history_.retained_ticks() >= 2;
  const uint64_t oldest = history_.oldest_tick();
  auto done = [&](const RetiredSlot& retired) {
    if (recording && oldest <= retired.tick) return false;
    world_.RemoveAsset(retired.slot);
    return true;
  };
  retired_.erase(std::remove_if(retired_.begin(), retired_.end(), done), retired_.end());
}

absl::Status Scene::CheckWritableLocked() const ABSL_NO_THREAD_SAFETY_ANALYSIS {
  // Writers change these only under write_mu_, held.
  if (deleted_) {
    return FieldStatus(absl::StatusCode::kNotFound, "scene",
                       absl::StrCat("scene \"", name_, "\" was deleted"));
  }
  if (!moved_to_.empty()) return MovedError(name_, moved_to_);
  return absl::OkStatus();
}

absl::StatusOr<bool> Scene::CheckAddAsset(absl::string_view name, absl::string_view sha256,
                                          uint64_t source_bytes,
                                          const SceneAssetLimits& limits) const {
  ReaderLock serial(&write_mu_);
  return CheckAddAssetLocked(name, sha256, source_bytes, limits);
}

absl::StatusOr<bool> Scene::CheckAddAssetLocked(
    absl::string_view name, absl::string_view sha256, uint64_t source_bytes,
    const SceneAssetLimits& limits) const ABSL_NO_THREAD_SAFETY_ANALYSIS {
  COLLIDE_RETURN_IF_ERROR(ValidateAssetName(name));
  COLLIDE_RETURN_IF_ERROR(CheckWritableLocked());
  // The table changes only under write_mu_ (held): read without mu_.
  if (auto it = assets_.find(name); it != assets_.end()) {
    if (it->second.asset->sha256() == sha256) return false;
    return FieldStatus(
        absl::StatusCode::kAlreadyExists, "name",
        absl::StrFormat("asset \"%s\" exists in scene \"%s\" with other content (sha256 %s); "
                        "delete it first",
                        name, name_, it->second.asset->sha256()));
  }
  const uint32_t max_assets = std::min<uint32_t>(limits.max_assets, kMaxAssetSlots);
  if (assets_.size() >= max_assets) {
    return FieldStatus(absl::StatusCode::kResourceExhausted, "name",
                       absl::StrFormat("scene \"%s\" holds its limit of %d assets "
                                       "(--max_assets_per_scene)",
                                       name_, max_assets));
  }
  if (world_.asset_slot_count() >= kMaxAssetSlots) {
    return FieldStatus(absl::StatusCode::kResourceExhausted, "name",
                       absl::StrFormat("scene \"%s\" holds %d assets, deleted ones that retained "
                                       "ticks still place included: wait for its ticks to pass",
                                       name_, world_.asset_slot_count()));
  }
  uint64_t bytes = 0;
  for (const auto& [other, entry] : assets_) bytes += entry.asset->source_bytes();
  if (source_bytes > limits.max_bytes || bytes > limits.max_bytes - source_bytes) {
    return FieldStatus(absl::StatusCode::kResourceExhausted, "name",
                       absl::StrFormat("scene \"%s\" would hold %d bytes of assets, over its "
                                       "limit of %d (--max_asset_bytes_per_scene)",
                                       name_, bytes + source_bytes, limits.max_bytes));
  }
  return true;
}

absl::StatusOr<bool> Scene::AddAsset(
    std::string name, std::shared_ptr<const Asset> asset, const SceneAssetLimits& limits,
    absl::FunctionRef<absl::StatusOr<uint64_t>()> commit) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  WriterLock serial(&write_mu_);
  COLLIDE_ASSIGN_OR_RETURN(
      const bool adds, CheckAddAssetLocked(name, asset->sha256(), asset->source_bytes(), limits));
  if (!adds) return false;
  COLLIDE_ASSIGN_OR_RETURN(const uint64_t position, commit());
  WriterLock lock(&mu_);
  InsertAssetLocked(name, std::move(asset));
  log_position_ = position;
  return true;
}

absl::StatusOr<std::shared_ptr<const Asset>> Scene::DeleteAsset(
    absl::string_view name,
    absl::FunctionRef<absl::StatusOr<uint64_t>()> commit) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  WriterLock serial(&write_mu_);
  COLLIDE_RETURN_IF_ERROR(CheckWritableLocked());
  auto it = assets_.find(name);
  if (it == assets_.end()) return NoAsset(name, name_);
  const AssetSlot slot = it->second.slot;
  if (const uint64_t users = slot_use_[slot].bodies; users > 0) {
    uint64_t body = 0;
    for (const BodyHandle handle : handles_) {
      const uint64_t id = world_.body(handle).id;
      if (world_.body(handle).asset == slot && (body == 0 || id < body)) body = id;
    }
    return FieldStatus(
        absl::StatusCode::kFailedPrecondition, "name",
        absl::StrFormat("asset \"%s\" is used by body %d%s; remove or replace its bodies first",
                        name, body, users > 1 ? absl::StrFormat(" (and %d more)", users - 1) : ""));
  }
  COLLIDE_ASSIGN_OR_RETURN(const uint64_t position, commit());
  WriterLock lock(&mu_);
  std::shared_ptr<const Asset> deleted = it->second.asset;
  retired_.push_back(
      RetiredSlot{.slot = slot, .tick = history_.tick(), .asset = std::move(it->second.asset)});
  slot_use_[slot].name.clear();
  assets_.erase(it);
  log_position_ = position;
  ReleaseRetiredLocked();
  return deleted;
}

std::vector<SceneAssetInfo> Scene::ListAssets() const {
  std::vector<SceneAssetInfo> out;
  {
    ReaderLock lock(&mu_);
    out.reserve(assets_.size());
    for (const auto& [name, entry] : assets_) {
      out.push_back(SceneAssetInfo{
          .name = name, .asset = entry.asset, .body_count = slot_use_[entry.slot].bodies});
    }
  }
  std::sort(out.begin(), out.end(),
            [](const SceneAssetInfo& a, const SceneAssetInfo& b) { return a.name < b.name; });
  return out;
}

std::optional<SceneAssetInfo> Scene::GetAsset(absl::string_view name) const {
  ReaderLock lock(&mu_);
  auto it = assets_.find(name);
  if (it == assets_.end()) return std::nullopt;
  return SceneAssetInfo{.name = it->first,
                        .asset = it->second.asset,
                        .body_count = slot_use_[it->second.slot].bodies};
}

}  // namespace collide
