#pragma once

#include <cstdint>

#include "geom/pose.h"
#include "geom/shapes.h"

namespace collide {

/// Whether a body is expected to move. Static bodies live in their own tree, which moving
/// bodies never degrade.
enum class BodyKind : uint8_t { kDynamic = 0, kStatic = 1 };

/// What a client says about a body.
struct BodyDesc {
  /// The client-chosen id, unique in its world.
  uint64_t id = 0;
  Shape shape{};
  Pose pose{};
  /// The categories the body belongs to.
  uint32_t category = 1;
  /// The query categories that may hit the body.
  uint32_t mask = ~0u;
  BodyKind kind = BodyKind::kDynamic;
};

/// A body as the world stores it: the description plus its leaf in the tree. Packed so that the
/// narrow phase reads one cache line per candidate.
struct Body {
  Shape shape{};
  Pose pose{};
  uint64_t id = 0;
  uint32_t category = 1;
  uint32_t mask = ~0u;
  /// The body's leaf in the tree of its kind.
  int32_t proxy = -1;
  BodyKind kind = BodyKind::kDynamic;
};

/// The body `desc` describes, in no tree yet (`proxy` -1).
inline Body BodyOf(const BodyDesc& desc) {
  return Body{.shape = desc.shape,
              .pose = desc.pose,
              .id = desc.id,
              .category = desc.category,
              .mask = desc.mask,
              .proxy = -1,
              .kind = desc.kind};
}

/// What a client would say to make `body` (its tree leaf left out).
inline BodyDesc DescOf(const Body& body) {
  return BodyDesc{.id = body.id,
                  .shape = body.shape,
                  .pose = body.pose,
                  .category = body.category,
                  .mask = body.mask,
                  .kind = body.kind};
}

}  // namespace collide
