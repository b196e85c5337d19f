#include "server/viewer/viewer_stream.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "collide/v1/collide.pb.h"
#include "collide/viewer/v1/viewer.pb.h"
#include "server/convert/geometry_convert.h"
#include "server/convert/scene_convert.h"
#include "server/convert/watch_convert.h"
#include "server/viewer/viewer_json.h"

namespace collide {
namespace {

// Room an event's name and framing take (`event: update\ndata: ` ... `\n\n`) and its message's
// fields other than the lists (version, tick, the lists' keys, `more`), generously.
constexpr size_t kEventEnvelopeBytes = 320;

std::string Event(absl::string_view name, const google::protobuf::Message& message) {
  return absl::StrCat("event: ", name, "\ndata: ", ToJson(message), "\n\n");
}

// The most bytes ToJson takes for `id` in a list: `"<decimal>",`.
size_t IdBytes(uint64_t id) { return absl::StrCat(id).size() + 3; }

// The most bytes ToJson takes for `v` in a list, and its comma. Protobuf prints a float with 6
// significant digits (%g) when they read back as the same float and with 9 otherwise, so its
// text is at most 3 characters longer than the 6-digit form absl prints.
size_t FloatBytes(float v) { return absl::StrCat(v).size() + 3 + 1; }

size_t PositionBytes(const Vec3& p) { return FloatBytes(p.x) + FloatBytes(p.y) + FloatBytes(p.z); }

size_t RotationBytes(const Quat& q) {
  return FloatBytes(q.x) + FloatBytes(q.y) + FloatBytes(q.z) + FloatBytes(q.w);
}

bool SameShape(const Shape& a, const Shape& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case ShapeType::kBox:
      return a.box.half_extents.x == b.box.half_extents.x &&
             a.box.half_extents.y == b.box.half_extents.y &&
             a.box.half_extents.z == b.box.half_extents.z;
    case ShapeType::kCapsule:
      return a.capsule.radius == b.capsule.radius && a.capsule.half_height == b.capsule.half_height;
    case ShapeType::kSphere:
    default:
      return a.sphere.radius == b.sphere.radius;
  }
}

void AppendPosition(const Vec3& p, google::protobuf::RepeatedField<float>* out) {
  out->Add(p.x);
  out->Add(p.y);
  out->Add(p.z);
}

}  // namespace

SceneStream::SceneStream(std::shared_ptr<const Scene> scene, size_t max_event_bytes)
    : scene_(std::move(scene)), max_event_bytes_(std::max<size_t>(max_event_bytes, 4096)) {
  const SceneState state = scene_->CaptureState();
  version_ = state.version;
  tick_ = state.tick;
  sent_.reserve(state.bodies.size());
  for (const BodyState& body : state.bodies) {
    sent_[body.id] =
        Sent{body.shape, body.pose, body.category, body.kind, 0, body.asset, body.scale};
  }
}

std::string SceneStream::Hello() const {
  viewer::v1::StreamHello hello;
  hello.set_version(version_);
  hello.set_tick(tick_);
  hello.set_max_event_bytes(max_event_bytes_);
  return Event("hello", hello);
}

std::string SceneStream::Poll() {
  if (done_) return {};
  if (scene_->deleted()) {
    done_ = true;
    return "event: deleted\ndata: {}\n\n";
  }
  if (!backlog_ && scene_->version() == version_) return {};
  const SceneState state = scene_->CaptureState();
  ++generation_;
  viewer::v1::SceneUpdate update;
  // Both columns are always there, empty or not: one shape for every event.
  v1::PoseColumns* poses = update.mutable_poses();
  viewer::v1::PositionColumns* positions = update.mutable_positions();
  // What the lists take (each item counted as ToJson prints it at most), within the budget.
  const size_t budget = max_event_bytes_ - kEventEnvelopeBytes;
  size_t used = 0;
  bool full = false;
  v1::Body proto;
  for (const BodyState& body : state.bodies) {
    auto [it, inserted] = sent_.try_emplace(body.id);
    Sent& sent = it->second;
    const bool reshaped = inserted || !SameShape(sent.shape, body.shape) ||
                          sent.category != body.category || sent.kind != body.kind ||
                          sent.asset != body.asset || sent.scale != body.scale;
    if (!reshaped && sent.pose == body.pose) {
      sent.generation = generation_;
      continue;
    }
    const bool turned = sent.pose.rotation != body.pose.rotation;
    size_t bytes = 0;
    if (full) {
      // Past the budget: nothing more is measured.
    } else if (reshaped) {
      proto.Clear();
      BodyStateToProto(body, &proto);
      bytes = ToJson(proto).size() + 1;
    } else {
      bytes = IdBytes(body.id) + PositionBytes(body.pose.position) +
              (turned ? RotationBytes(body.pose.rotation) : 0);
    }
    if (full || used + bytes > budget) {
      // Next event; a new body not sent yet stays unknown to the viewer until then.
      full = true;
      sent.generation = generation_;
      if (inserted) {
        sent.category = ~body.category;  // differs: sent as new next time
        sent.shape = body.shape;
        sent.kind = body.kind;
      }
      continue;
    }
    used += bytes;
    if (reshaped) {
      update.add_bodies()->Swap(&proto);
    } else if (turned) {
      poses->add_ids(body.id);
      AppendPosition(body.pose.position, poses->mutable_poses());
      const Quat& q = body.pose.rotation;
      for (const float v : {q.x, q.y, q.z, q.w}) poses->add_poses(v);
    } else {
      positions->add_ids(body.id);
      AppendPosition(body.pose.position, positions->mutable_positions());
    }
    sent =
        Sent{body.shape, body.pose, body.category, body.kind, generation_, body.asset, body.scale};
  }
  // Bodies not in the state were removed.
  for (auto it = sent_.begin(); it != sent_.end();) {
    if (it->second.generation == generation_) {
      ++it;
      continue;
    }
    const size_t bytes = IdBytes(it->first);
    if (full || used + bytes > budget) {
      full = true;
      ++it;
      continue;
    }
    update.add_removed(it->first);
    used += bytes;
    sent_.erase(it++);
  }
  backlog_ = full;
  version_ = state.version;
  tick_ = state.tick;
  if (update.bodies().empty() && poses->ids().empty() && positions->ids().empty() &&
      update.removed().empty() && !full) {
    return {};
  }
  update.set_version(version_);
  update.set_tick(tick_);
  update.set_more(full);
  return Event("update", update);
}

WatchFeed::WatchFeed(WatchDirectory* directory, const Scene* scene, size_t max_event_bytes)
    : directory_(directory),
      scene_(scene),
      max_event_bytes_(std::max<size_t>(max_event_bytes, 4096)) {
  if (directory_ != nullptr) cursor_ = directory_->Follow(scene_);
}

WatchFeed::~WatchFeed() {
  if (directory_ != nullptr) directory_->Unfollow(scene_);
}

std::string WatchFeed::Poll() {
  if (directory_ == nullptr) return {};
  std::string out;
  const uint64_t generation = directory_->WatchesGeneration(scene_);
  if (!sent_watches_ || generation != generation_) {
    sent_watches_ = true;
    generation_ = generation;
    viewer::v1::WatchList list;
    // What the watches take as ToJson prints them, within the event's bound.
    const size_t budget = max_event_bytes_ - kEventEnvelopeBytes;
    size_t used = 0;
    v1::Fence fence;
    for (const ListedWatch& watch : directory_->Watches(scene_)) {
      // `{"watch":"<id>","fences":[]},`
      used += IdBytes(watch.watch) + 24;
      if (used > budget) {
        list.set_truncated(true);
        break;
      }
      viewer::v1::ListedWatch* listed = list.add_watches();
      listed->set_watch(watch.watch);
      for (const FenceSpec& spec : watch.fences) {
        FenceSpecToProto(spec, &fence);
        const size_t bytes = ToJson(fence).size() + 1;
        if (used + bytes > budget) {
          list.set_truncated(true);
          break;
        }
        used += bytes;
        listed->add_fences()->Swap(&fence);
      }
      if (list.truncated()) break;
    }
    out = Event("watches", list);
  }
  const ListedEvents listed = directory_->EventsAfter(scene_, cursor_, kMaxEventsPerPoll);
  cursor_ = listed.next;
  if (!listed.events.empty() || listed.dropped > 0) {
    viewer::v1::FenceEvents events;
    for (const ListedEvent& e : listed.events) {
      viewer::v1::FenceEvent* event = events.add_events();
      event->set_watch(e.watch);
      event->set_version(e.version);
      WatchEventToProto(e.event, event->mutable_event());
    }
    events.set_dropped(listed.dropped);
    absl::StrAppend(&out, Event("watch_events", events));
  }
  return out;
}

QuerySampleFeed::QuerySampleFeed(QuerySampler* sampler, const Scene* scene)
    : sampler_(sampler), scene_(scene) {
  if (sampler_ != nullptr) cursor_ = sampler_->Follow(scene_);
}

QuerySampleFeed::~QuerySampleFeed() {
  if (sampler_ != nullptr) sampler_->Unfollow(scene_);
}

std::string QuerySampleFeed::Poll() {
  if (sampler_ == nullptr) return {};
  const SampledQueries taken = sampler_->After(scene_, cursor_, QuerySampler::kMaxKept);
  cursor_ = taken.next;
  if (taken.samples.empty() && taken.dropped == 0) return {};
  viewer::v1::QuerySamples samples;
  for (const QuerySample& sample : taken.samples) {
    viewer::v1::QuerySample* out = samples.add_samples();
    out->set_version(sample.version);
    if (sample.sphere) {
      v1::SphereCast* cast = out->mutable_sphere_cast();
      ToProtoVec3(sample.origin, cast->mutable_origin());
      ToProtoVec3(sample.direction, cast->mutable_direction());
      cast->set_max_distance(sample.max_distance);
      cast->set_radius(sample.radius);
    } else {
      v1::Raycast* ray = out->mutable_raycast();
      ToProtoVec3(sample.origin, ray->mutable_origin());
      ToProtoVec3(sample.direction, ray->mutable_direction());
      ray->set_max_distance(sample.max_distance);
    }
    if (sample.at_tick.has_value()) out->set_at_tick(*sample.at_tick);
    if (sample.hit_id.has_value()) {
      out->mutable_hit()->set_body_id(*sample.hit_id);
      out->mutable_hit()->set_distance(sample.hit_distance);
    }
  }
  samples.set_dropped(taken.dropped);
  return Event("query_samples", samples);
}

}  // namespace collide
