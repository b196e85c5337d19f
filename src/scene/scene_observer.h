#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "absl/functional/function_ref.h"
#include "query/body.h"
#include "query/collision_world.h"

namespace collide {

/// What one applied update batch did to one body.
struct BodyChange {
  /// The body's id.
  uint64_t id = 0;
  /// The body before the batch (absent when the batch created it).
  std::optional<Body> before;
  /// The body after the batch (absent when the batch removed it).
  std::optional<Body> after;
  /// True when the batch upserted the body (a replacement or a new body: no motion from
  /// `before` to `after`, a teleport), false when it only moved it or changed its filter.
  bool replaced = false;
  /// When `after` places an asset: the asset in its slot (Body::asset), so that a copy of the
  /// world (watch/scene_mirror.h) can place it too.
  std::shared_ptr<const AssetGeometry> asset;
};

/// What a batch of moves and filter changes did to one body: the only fields such a batch
/// changes, as they are after it. The body's other fields, and its state before the batch, are
/// those of a copy of the world the observer keeps (watch/scene_mirror.h).
struct BodyMove {
  /// The body's id.
  uint64_t id = 0;
  /// Its pose after the batch.
  Pose pose{};
  /// Its filter after the batch.
  uint32_t category = 0;
  uint32_t mask = 0;
};

/// One update batch the scene applied: every body it touched, sorted by body id, each once
/// (intermediate states inside the batch are never visible). In one of two forms: the state
/// before and after of each body (`changes`); or, for a batch without upserts and removals
/// handed to observers that all take it (SceneObserver::TakesMoves), each body's new pose and
/// filter (`moves`), a quarter of the bytes and no copy of the bodies on the writer's thread.
struct AppliedBatch {
  /// The touched bodies with their states before and after (empty when `moves` holds them).
  std::span<const BodyChange> changes = {};
  /// The touched bodies' poses and filters after a batch of moves and filter changes (empty
  /// unless every observer takes moves; then a batch of moves and filter changes comes so).
  std::span<const BodyMove> moves = {};

  /// The number of bodies the batch touched.
  size_t size() const { return moves.empty() ? changes.size() : moves.size(); }
};

/// A scene's state at one version, as observers see it during a callback (valid only then).
struct SceneView {
  /// The world (user data of its trees' proxies = body handles).
  const CollisionWorld& world;
  /// The body with an id, or null when there is none.
  absl::FunctionRef<const Body*(uint64_t id)> find_body;
  /// The version, and the scene's tick at it.
  uint64_t version = 0;
  uint64_t tick = 0;
};

/// Sees every batch a scene applies, in version order (Scene::AddObserver). Callbacks run on the
/// writer's thread under the scene's writer serialisation, after the batch is applied and
/// visible to readers, and before the next batch is validated: they must be quick, must not
/// block on I/O and must not call the scene's writer methods (deadlock). Readers run meanwhile.
class SceneObserver {
 public:
  virtual ~SceneObserver() = default;
  /// After each applied (non-duplicate) batch, with the scene at the version it produced
  /// (unchanged during the call).
  virtual void OnApplied(const AppliedBatch& batch, const SceneView& scene) = 0;
  /// True when the observer keeps a copy of every body and so can take a batch of moves and
  /// filter changes as BodyMove records (AppliedBatch::moves). It must take `changes` too: a
  /// scene with another observer that does not take moves hands every batch so. Constant
  /// while the observer is registered.
  virtual bool TakesMoves() const { return false; }
  /// Once, when the scene is deleted; no callback follows.
  virtual void OnDeleted() = 0;
};

}  // namespace collide
