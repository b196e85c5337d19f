#include "server/rpc/scene_info.h"

#include <cmath>
#include <optional>

#include "server/convert/scene_convert.h"

namespace collide {

void ReplicationToProto(const SceneReplicaFigures& figures, v1::SceneReplication* out) {
  out->set_owner(figures.owner_address);
  out->set_owned(figures.owner);
  out->set_epoch(figures.epoch);
  out->set_applied_sequence(figures.applied_sequence);
  out->set_lag_sequences(figures.lag_sequences);
  out->set_lag_ms(static_cast<uint64_t>(std::llround(figures.lag_seconds * 1000.0)));
  out->set_state(figures.state);
}

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
