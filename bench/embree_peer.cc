#include "bench/embree_peer.h"

#include <embree3/rtcore.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include "geom/bounds.h"
#include "geom/ray_cast.h"

namespace collide::bench {

namespace {

// What the callbacks read: the bodies, indexed by Embree's primitive id.
struct Bodies {
  std::vector<Shape> shapes;
  std::vector<Pose> poses;
};

}  // namespace

struct EmbreePeer::Impl {
  RTCDevice device = nullptr;
  RTCScene scene = nullptr;
  RTCGeometry geometry = nullptr;
  Bodies bodies;

  ~Impl() {
    if (scene) rtcReleaseScene(scene);
    if (device) rtcReleaseDevice(device);
  }
};

namespace {

void Fail(const char* what) {
  std::fprintf(stderr, "embree: %s\n", what);
  std::exit(1);
}

void BodyBounds(const RTCBoundsFunctionArguments* args) {
  const auto* bodies = static_cast<const Bodies*>(args->geometryUserPtr);
  const Aabb box = Bounds(bodies->shapes[args->primID], bodies->poses[args->primID]);
  RTCBounds* out = args->bounds_o;
  out->lower_x = box.min.x;
  out->lower_y = box.min.y;
  out->lower_z = box.min.z;
  out->upper_x = box.max.x;
  out->upper_y = box.max.y;
  out->upper_z = box.max.z;
}

// Ray i of Embree's packet of n, up to its current tfar.
Ray RayOf(RTCRayN* ray, unsigned n, unsigned i) {
  return Ray{
      .origin = {RTCRayN_org_x(ray, n, i), RTCRayN_org_y(ray, n, i), RTCRayN_org_z(ray, n, i)},
      .direction = {RTCRayN_dir_x(ray, n, i), RTCRayN_dir_y(ray, n, i), RTCRayN_dir_z(ray, n, i)},
      .max_distance = RTCRayN_tfar(ray, n, i)};
}

// Embree's rays of a packet against one body: collide's exact ray cast, the hit kept when it
// is nearer than the ray's current tfar (Embree then shrinks the ray and prunes with it).
void BodyIntersect(const RTCIntersectFunctionNArguments* args) {
  const auto* bodies = static_cast<const Bodies*>(args->geometryUserPtr);
  const unsigned n = args->N;
  RTCRayN* ray = RTCRayHitN_RayN(args->rayhit, n);
  RTCHitN* hit = RTCRayHitN_HitN(args->rayhit, n);
  const Shape& shape = bodies->shapes[args->primID];
  const Pose& pose = bodies->poses[args->primID];
  for (unsigned i = 0; i < n; ++i) {
    if (args->valid[i] == 0) continue;
    const Ray r = RayOf(ray, n, i);
    CastHit h;
    if (!Raycast(shape, pose, r, &h) || h.distance < RTCRayN_tnear(ray, n, i) ||
        h.distance >= r.max_distance) {
      continue;
    }
    RTCRayN_tfar(ray, n, i) = h.distance;
    RTCHitN_Ng_x(hit, n, i) = h.normal.x;
    RTCHitN_Ng_y(hit, n, i) = h.normal.y;
    RTCHitN_Ng_z(hit, n, i) = h.normal.z;
    RTCHitN_u(hit, n, i) = 0.0f;
    RTCHitN_v(hit, n, i) = 0.0f;
    RTCHitN_primID(hit, n, i) = args->primID;
    RTCHitN_geomID(hit, n, i) = args->geomID;
    RTCHitN_instID(hit, n, i, 0) = args->context->instID[0];
  }
}

void BodyOccluded(const RTCOccludedFunctionNArguments* args) {
  const auto* bodies = static_cast<const Bodies*>(args->geometryUserPtr);
  const unsigned n = args->N;
  RTCRayN* ray = args->ray;
  for (unsigned i = 0; i < n; ++i) {
    if (args->valid[i] == 0) continue;
    const Ray r = RayOf(ray, n, i);
    CastHit h;
    if (Raycast(bodies->shapes[args->primID], bodies->poses[args->primID], r, &h) &&
        h.distance >= RTCRayN_tnear(ray, n, i)) {
      RTCRayN_tfar(ray, n, i) = -std::numeric_limits<float>::infinity();
    }
  }
}

}  // namespace

EmbreePeer::EmbreePeer(const ReferenceScene& scene, bool refit) : impl_(std::make_unique<Impl>()) {
  impl_->bodies.shapes = scene.shapes;
  impl_->bodies.poses = scene.poses;
  impl_->device = rtcNewDevice("threads=1");
  if (!impl_->device) Fail("rtcNewDevice failed");
  impl_->scene = rtcNewScene(impl_->device);
  rtcSetSceneFlags(impl_->scene, refit ? RTC_SCENE_FLAG_DYNAMIC : RTC_SCENE_FLAG_NONE);
  rtcSetSceneBuildQuality(impl_->scene, RTC_BUILD_QUALITY_MEDIUM);
  RTCGeometry g = rtcNewGeometry(impl_->device, RTC_GEOMETRY_TYPE_USER);
  rtcSetGeometryUserPrimitiveCount(g, static_cast<unsigned>(scene.shapes.size()));
  rtcSetGeometryUserData(g, &impl_->bodies);
  rtcSetGeometryBoundsFunction(g, BodyBounds, nullptr);
  rtcSetGeometryIntersectFunction(g, BodyIntersect);
  rtcSetGeometryOccludedFunction(g, BodyOccluded);
  rtcSetGeometryBuildQuality(g, refit ? RTC_BUILD_QUALITY_REFIT : RTC_BUILD_QUALITY_MEDIUM);
  rtcCommitGeometry(g);
  rtcAttachGeometry(impl_->scene, g);
  rtcReleaseGeometry(g);
  impl_->geometry = g;
  rtcCommitScene(impl_->scene);
  if (rtcGetDeviceError(impl_->device) != RTC_ERROR_NONE) Fail("scene commit failed");
}

EmbreePeer::~EmbreePeer() = default;

int EmbreePeer::RayClosest(const Ray& ray, float* distance) {
  RTCIntersectContext context;
  rtcInitIntersectContext(&context);
  RTCRayHit rh{};
  rh.ray.org_x = ray.origin.x;
  rh.ray.org_y = ray.origin.y;
  rh.ray.org_z = ray.origin.z;
  rh.ray.dir_x = ray.direction.x;
  rh.ray.dir_y = ray.direction.y;
  rh.ray.dir_z = ray.direction.z;
  rh.ray.tnear = 0.0f;
  rh.ray.tfar = ray.max_distance;
  rh.ray.mask = ~0u;
  rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
  rtcIntersect1(impl_->scene, &context, &rh);
  if (rh.hit.geomID == RTC_INVALID_GEOMETRY_ID) return -1;
  *distance = rh.ray.tfar;
  return static_cast<int>(rh.hit.primID);
}

void EmbreePeer::RaysClosest16(const Ray* rays, int count, int* bodies, float* distances) {
  RTCIntersectContext context;
  rtcInitIntersectContext(&context);
  for (int base = 0; base < count; base += 16) {
    alignas(64) int valid[16];
    alignas(64) RTCRayHit16 rh;
    for (int k = 0; k < 16; ++k) {
      const int i = base + k;
      valid[k] = i < count ? -1 : 0;
      const Ray& ray = rays[std::min(i, count - 1)];
      rh.ray.org_x[k] = ray.origin.x;
      rh.ray.org_y[k] = ray.origin.y;
      rh.ray.org_z[k] = ray.origin.z;
      rh.ray.dir_x[k] = ray.direction.x;
      rh.ray.dir_y[k] = ray.direction.y;
      rh.ray.dir_z[k] = ray.direction.z;
      rh.ray.tnear[k] = 0.0f;
      rh.ray.tfar[k] = ray.max_distance;
      rh.ray.time[k] = 0.0f;
      rh.ray.mask[k] = ~0u;
      rh.ray.id[k] = static_cast<unsigned>(k);
      rh.ray.flags[k] = 0;
      rh.hit.geomID[k] = RTC_INVALID_GEOMETRY_ID;
    }
    rtcIntersect16(valid, impl_->scene, &context, &rh);
    for (int k = 0; k < 16 && base + k < count; ++k) {
      bodies[base + k] =
          rh.hit.geomID[k] == RTC_INVALID_GEOMETRY_ID ? -1 : static_cast<int>(rh.hit.primID[k]);
      distances[base + k] = rh.ray.tfar[k];
    }
  }
}

void EmbreePeer::MoveAll(const ReferenceScene& scene, int round) {
  const size_t n = impl_->bodies.poses.size();
  const Vec3* step = scene.moves.data() + round * n;
  for (size_t i = 0; i < n; ++i) impl_->bodies.poses[i].position += step[i];
  rtcCommitGeometry(impl_->geometry);
  rtcCommitScene(impl_->scene);
}

}  // namespace collide::bench
