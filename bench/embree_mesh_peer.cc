#include "bench/embree_mesh_peer.h"

#include <embree3/rtcore.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace collide::bench {

struct EmbreeMeshPeer::Impl {
  RTCDevice device = nullptr;
  RTCScene scene = nullptr;
  std::atomic<long long> bytes{0};
  double build_seconds = 0.0;

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

// The process's CPU time (the build's threads, whichever ran it).
double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

bool Monitor(void* ptr, ssize_t bytes, bool /*post*/) {
  static_cast<std::atomic<long long>*>(ptr)->fetch_add(bytes);
  return true;
}

void Fill(const Ray& ray, RTCRay* r) {
  r->org_x = ray.origin.x;
  r->org_y = ray.origin.y;
  r->org_z = ray.origin.z;
  r->dir_x = ray.direction.x;
  r->dir_y = ray.direction.y;
  r->dir_z = ray.direction.z;
  r->tnear = 0.0f;
  r->tfar = ray.max_distance;
  r->time = 0.0f;
  r->mask = ~0u;
  r->id = 0;
  r->flags = 0;
}

}  // namespace

EmbreeMeshPeer::EmbreeMeshPeer(const LevelMesh& mesh, bool robust)
    : impl_(std::make_unique<Impl>()) {
  impl_->device = rtcNewDevice("threads=1");
  if (!impl_->device) Fail("rtcNewDevice failed");
  rtcSetDeviceMemoryMonitorFunction(impl_->device, Monitor, &impl_->bytes);
  impl_->scene = rtcNewScene(impl_->device);
  rtcSetSceneFlags(impl_->scene, robust ? RTC_SCENE_FLAG_ROBUST : RTC_SCENE_FLAG_NONE);
  rtcSetSceneBuildQuality(impl_->scene, RTC_BUILD_QUALITY_MEDIUM);
  RTCGeometry g = rtcNewGeometry(impl_->device, RTC_GEOMETRY_TYPE_TRIANGLE);
  float* v = static_cast<float*>(rtcSetNewGeometryBuffer(
      g, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, 3 * sizeof(float), mesh.vertices.size()));
  std::memcpy(v, mesh.vertices.data(), mesh.vertices.size() * sizeof(Vec3));
  unsigned* idx = static_cast<unsigned*>(
      rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3, 3 * sizeof(unsigned),
                              mesh.indices.size() / 3));
  std::memcpy(idx, mesh.indices.data(), mesh.indices.size() * sizeof(uint32_t));
  rtcSetGeometryBuildQuality(g, RTC_BUILD_QUALITY_MEDIUM);
  rtcCommitGeometry(g);
  rtcAttachGeometry(impl_->scene, g);
  rtcReleaseGeometry(g);
  const double start = CpuSeconds();
  rtcCommitScene(impl_->scene);
  impl_->build_seconds = CpuSeconds() - start;
  if (rtcGetDeviceError(impl_->device) != RTC_ERROR_NONE) Fail("scene commit failed");
}

EmbreeMeshPeer::~EmbreeMeshPeer() = default;

double EmbreeMeshPeer::build_seconds() const { return impl_->build_seconds; }

size_t EmbreeMeshPeer::bytes() const { return static_cast<size_t>(impl_->bytes.load()); }

int EmbreeMeshPeer::Intersect(const Ray& ray, float* distance) {
  RTCIntersectContext context;
  rtcInitIntersectContext(&context);
  RTCRayHit rh;
  Fill(ray, &rh.ray);
  rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
  rh.hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
  rtcIntersect1(impl_->scene, &context, &rh);
  if (rh.hit.geomID == RTC_INVALID_GEOMETRY_ID) return -1;
  *distance = rh.ray.tfar;
  return static_cast<int>(rh.hit.primID);
}

bool EmbreeMeshPeer::Occluded(const Ray& ray) {
  RTCIntersectContext context;
  rtcInitIntersectContext(&context);
  RTCRay r;
  Fill(ray, &r);
  rtcOccluded1(impl_->scene, &context, &r);
  return r.tfar < 0.0f;
}

}  // namespace collide::bench
