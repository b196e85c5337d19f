#pragma once

#include <cstdint>

#include "geom/pose.h"
#include "geom/shapes.h"

namespace collide {

/// Whether a body is expected to move. Static bodies live in their own tree, which moving
/// bodies never degrade.
enum class BodyKind : uint8_t { kDynamic = 0, kStatic = 1 };

/// A slot of a world's asset table (CollisionWorld::AddAsset): the asset a body places. 16 bits,
/// so that the body stays 72 bytes.
using AssetSlot = uint16_t;
/// No asset: the body is its `shape`.
inline constexpr AssetSlot kNoAsset = 0;
/// The most slots a world's asset table holds at once (slot 0 is kNoAsset).
inline constexpr uint32_t kMaxAssetSlots = 65535;

/// What a client says about a body.
struct BodyDesc {
  /// The client-chosen id, unique in its world.
  uint64_t id = 0;
  /// The body's shape, unless it places an asset (then unused).
  Shape shape{};
  Pose pose{};
  /// The categories the body belongs to.
  uint32_t category = 1;
  /// The query categories that may hit the body.
  uint32_t mask = ~0u;
  BodyKind kind = BodyKind::kDynamic;
  /// The asset the body places (a slot of its world's table), or kNoAsset.
  AssetSlot asset = kNoAsset;
  /// With an asset: the instance's uniform scale (mesh/scaled_pose.h).
  float scale = 1.0f;
};

/// A body as the world stores it: the description plus its leaf in the tree. Packed so that the
/// narrow phase reads one cache line per candidate (the asset fields fill padding).
struct Body {
  Shape shape{};
  Pose pose{};
  /// With an asset: the instance's uniform scale; 1 otherwise.
  float scale = 1.0f;
  uint64_t id = 0;
  uint32_t category = 1;
  uint32_t mask = ~0u;
  /// The body's leaf in the tree of its kind.
  int32_t proxy = -1;
  BodyKind kind = BodyKind::kDynamic;
  /// The asset the body places (CollisionWorld::asset), or kNoAsset: the body is `shape`.
  AssetSlot asset = kNoAsset;
};
static_assert(sizeof(Body) == 72, "the asset fields live in the padding");

/// The body `desc` describes, in no tree yet (`proxy` -1).
inline Body BodyOf(const BodyDesc& desc) {
  return Body{.shape = desc.shape,
              .pose = desc.pose,
              .scale = desc.asset != kNoAsset ? desc.scale : 1.0f,
              .id = desc.id,
              .category = desc.category,
              .mask = desc.mask,
              .proxy = -1,
              .kind = desc.kind,
              .asset = desc.asset};
}

/// What a client would say to make `body` (its tree leaf left out).
inline BodyDesc DescOf(const Body& body) {
  return BodyDesc{.id = body.id,
                  .shape = body.shape,
                  .pose = body.pose,
                  .category = body.category,
                  .mask = body.mask,
                  .kind = body.kind,
                  .asset = body.asset,
                  .scale = body.scale};
}

}  // namespace collide
