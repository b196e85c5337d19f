#include "bench/load/workload.h"

#include <algorithm>
#include <random>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "bench/reference_messages.h"
#include "client/cpp/builders.h"

namespace collide::load {

std::vector<Kind> ParseMix(const std::string& mix) {
  std::vector<std::pair<Kind, int>> weights;
  for (absl::string_view part : absl::StrSplit(mix, ',', absl::SkipEmpty())) {
    std::vector<absl::string_view> kv = absl::StrSplit(part, ':');
    int w = 1;
    if (kv.size() == 2 && !absl::SimpleAtoi(kv[1], &w)) w = 0;
    Kind k = kv[0] == "sphere" ? Kind::kSphere : kv[0] == "overlap" ? Kind::kOverlap : Kind::kRay;
    weights.push_back({k, w});
  }
  int total = 0;
  for (auto& [k, w] : weights) total += w;
  std::vector<Kind> cycle;
  for (auto& [k, w] : weights) {
    for (int i = 0; i < (total > 0 ? 64 * w / total : 0); ++i) cycle.push_back(k);
  }
  if (cycle.empty()) cycle.push_back(Kind::kRay);
  std::shuffle(cycle.begin(), cycle.end(), std::mt19937(7));
  return cycle;
}

v1::Query MakeQuery(uint64_t id, Kind kind, const Ray& r) {
  v1::Query q;
  q.set_request_id(id);
  switch (kind) {
    case Kind::kRay:
      *q.mutable_raycast() = bench::RaycastAlong(r);
      break;
    case Kind::kSphere: {
      v1::SphereCast* c = q.mutable_sphere_cast();
      *c->mutable_origin() = bench::ToProto(r.origin);
      *c->mutable_direction() = bench::ToProto(r.direction);
      c->set_max_distance(r.max_distance);
      c->set_radius(0.5f);
      break;
    }
    case Kind::kOverlap: {
      v1::Overlap* o = q.mutable_overlap();
      *o->mutable_shape() = client::MakeSphere(2.0f);
      *o->mutable_pose()->mutable_position() = bench::ToProto(r.origin);
      break;
    }
  }
  return q;
}

}  // namespace collide::load
