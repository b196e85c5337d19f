#include "server/rpc/scene_info.h"

#include <optional>

#include "server/convert/scene_convert.h"
#include "server/infra/replication_proto.h"

namespace collide {

void DescribeScene(const ServiceContext& context, const Scene& scene, v1::SceneInfo* out) {
  SceneInfoToProto(scene, context.default_durability, out);
  if (context.replication == nullptr ||
      scene.options().durability != DurabilityPolicy::kReplicated) {
    return;
  }
  if (std::optional<SceneReplicaFigures> figures =
          context.replication->SceneFigures(scene.name())) {
    ReplicationToProto(*figures, out->mutable_replication());
  }
}

}  // namespace collide
