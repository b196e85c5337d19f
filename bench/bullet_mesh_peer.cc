#include "bench/bullet_mesh_peer.h"

#include <BulletCollision/CollisionShapes/btHeightfieldTerrainShape.h>
#include <btBulletCollisionCommon.h>

#include <algorithm>
#include <ctime>

namespace collide::bench {
namespace {

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

btVector3 ToBt(const Vec3& v) { return btVector3(v.x, v.y, v.z); }

// The closest hit and the triangle it is on.
struct ClosestWithTriangle : btCollisionWorld::ClosestRayResultCallback {
  using ClosestRayResultCallback::ClosestRayResultCallback;
  int triangle = -1;
  btScalar addSingleResult(btCollisionWorld::LocalRayResult& r, bool normal_in_world) override {
    triangle = r.m_localShapeInfo ? r.m_localShapeInfo->m_triangleIndex : -1;
    return ClosestRayResultCallback::addSingleResult(r, normal_in_world);
  }
};

// Stops at the first hit: the fraction 0 clips every remaining test.
struct AnyHit : btCollisionWorld::RayResultCallback {
  btScalar addSingleResult(btCollisionWorld::LocalRayResult& r, bool) override {
    m_collisionObject = r.m_collisionObject;
    m_closestHitFraction = 0;
    return 0;
  }
};

struct Contacts : btCollisionWorld::ContactResultCallback {
  int hits = 0;
  btScalar addSingleResult(btManifoldPoint& cp, const btCollisionObjectWrapper*, int, int,
                           const btCollisionObjectWrapper*, int, int) override {
    if (cp.getDistance() <= 0) ++hits;
    return 0;
  }
};

}  // namespace

struct BulletMeshPeer::Impl {
  btDefaultCollisionConfiguration config;
  btCollisionDispatcher dispatcher{&config};
  btDbvtBroadphase broadphase;
  btCollisionWorld world{&dispatcher, &broadphase, &config};
  std::unique_ptr<btTriangleIndexVertexArray> arrays;
  std::vector<float> heights;
  std::unique_ptr<btCollisionShape> shape;
  btCollisionObject object;
  btSphereShape cast_ball{1.0f};
  btSphereShape overlap_ball{1.0f};
  btCollisionObject overlap_probe;
  double build_seconds = 0.0;

  void Add(const btTransform& tr) {
    object.setWorldTransform(tr);
    object.setCollisionShape(shape.get());
    world.addCollisionObject(&object);
    world.updateAabbs();
  }
  ~Impl() { world.removeCollisionObject(&object); }
};

BulletMeshPeer::BulletMeshPeer(const LevelMesh& mesh) : impl_(std::make_unique<Impl>()) {
  btIndexedMesh part;
  part.m_numTriangles = static_cast<int>(mesh.triangle_count());
  part.m_triangleIndexBase = reinterpret_cast<const unsigned char*>(mesh.indices.data());
  part.m_triangleIndexStride = 3 * sizeof(uint32_t);
  part.m_numVertices = static_cast<int>(mesh.vertices.size());
  part.m_vertexBase = reinterpret_cast<const unsigned char*>(mesh.vertices.data());
  part.m_vertexStride = sizeof(Vec3);
  part.m_indexType = PHY_INTEGER;
  part.m_vertexType = PHY_FLOAT;
  impl_->arrays = std::make_unique<btTriangleIndexVertexArray>();
  impl_->arrays->addIndexedMesh(part, PHY_INTEGER);
  const double start = CpuSeconds();
  impl_->shape = std::make_unique<btBvhTriangleMeshShape>(impl_->arrays.get(), true, true);
  impl_->build_seconds = CpuSeconds() - start;
  btTransform tr;
  tr.setIdentity();
  impl_->Add(tr);
}

BulletMeshPeer::BulletMeshPeer(const std::vector<float>& heights, int rows, int columns,
                               float spacing)
    : impl_(std::make_unique<Impl>()) {
  impl_->heights = heights;
  const auto [lo, hi] = std::minmax_element(heights.begin(), heights.end());
  const double start = CpuSeconds();
  auto* hf = new btHeightfieldTerrainShape(columns, rows, impl_->heights.data(), 1.0f, *lo, *hi, 1,
                                           PHY_FLOAT, false);
  hf->setLocalScaling(btVector3(spacing, 1.0f, spacing));
  hf->buildAccelerator();
  impl_->build_seconds = CpuSeconds() - start;
  impl_->shape.reset(hf);
  // Bullet centres a heightfield on its box: move it so that sample (0, 0) is at the origin.
  btTransform tr;
  tr.setIdentity();
  tr.setOrigin(btVector3(0.5f * spacing * static_cast<float>(columns - 1), 0.5f * (*lo + *hi),
                         0.5f * spacing * static_cast<float>(rows - 1)));
  impl_->Add(tr);
}

BulletMeshPeer::~BulletMeshPeer() = default;

double BulletMeshPeer::build_seconds() const { return impl_->build_seconds; }

int BulletMeshPeer::RayClosest(const Ray& ray, float* distance) {
  const btVector3 a = ToBt(ray.origin);
  const btVector3 b = ToBt(ray.origin + ray.direction * ray.max_distance);
  ClosestWithTriangle cb(a, b);
  impl_->world.rayTest(a, b, cb);
  if (!cb.hasHit()) return -1;
  *distance = cb.m_closestHitFraction * ray.max_distance;
  return std::max(cb.triangle, 0);
}

bool BulletMeshPeer::RayAny(const Ray& ray) {
  const btVector3 a = ToBt(ray.origin);
  const btVector3 b = ToBt(ray.origin + ray.direction * ray.max_distance);
  AnyHit cb;
  impl_->world.rayTest(a, b, cb);
  return cb.hasHit();
}

bool BulletMeshPeer::SphereCastClosest(const Ray& ray, float radius, float* distance) {
  if (impl_->cast_ball.getRadius() != radius) impl_->cast_ball = btSphereShape(radius);
  const btVector3 a = ToBt(ray.origin);
  const btVector3 b = ToBt(ray.origin + ray.direction * ray.max_distance);
  btTransform from, to;
  from.setIdentity();
  to.setIdentity();
  from.setOrigin(a);
  to.setOrigin(b);
  btCollisionWorld::ClosestConvexResultCallback cb(a, b);
  impl_->world.convexSweepTest(&impl_->cast_ball, from, to, cb);
  if (!cb.hasHit()) return false;
  *distance = cb.m_closestHitFraction * ray.max_distance;
  return true;
}

int BulletMeshPeer::OverlapSphereContacts(const Vec3& centre, float radius) {
  if (impl_->overlap_ball.getRadius() != radius) impl_->overlap_ball = btSphereShape(radius);
  btCollisionObject& probe = impl_->overlap_probe;
  probe.setCollisionShape(&impl_->overlap_ball);
  btTransform tr;
  tr.setIdentity();
  tr.setOrigin(ToBt(centre));
  probe.setWorldTransform(tr);
  Contacts cb;
  impl_->world.contactTest(&probe, cb);
  return cb.hits;
}

}  // namespace collide::bench
