#include "bench/bullet_peer.h"

#include <btBulletCollisionCommon.h>

namespace collide::bench {
namespace {

btVector3 ToBt(const Vec3& v) { return btVector3(v.x, v.y, v.z); }

struct OverlapCount : btCollisionWorld::ContactResultCallback {
  int hits = 0;
  // Bullet also reports near misses (positive distance); count only real contacts.
  btScalar addSingleResult(btManifoldPoint& cp, const btCollisionObjectWrapper*, int, int,
                           const btCollisionObjectWrapper*, int, int) override {
    if (cp.getDistance() <= 0) ++hits;
    return 0;
  }
};

}  // namespace

struct BulletPeer::Impl {
  btDefaultCollisionConfiguration config;
  btCollisionDispatcher dispatcher{&config};
  btDbvtBroadphase broadphase;
  btCollisionWorld world{&dispatcher, &broadphase, &config};
  std::vector<std::unique_ptr<btCollisionShape>> shapes;
  std::vector<std::unique_ptr<btCollisionObject>> objects;
  // Probes made once and reused, as the reference program does.
  std::unique_ptr<btSphereShape> cast_probe;
  std::unique_ptr<btSphereShape> overlap_ball;
  btCollisionObject overlap_probe;

  btSphereShape* Probe(std::unique_ptr<btSphereShape>& probe, float radius) {
    if (!probe || probe->getRadius() != radius) probe = std::make_unique<btSphereShape>(radius);
    return probe.get();
  }

  ~Impl() {
    for (auto& o : objects) world.removeCollisionObject(o.get());
  }
};

BulletPeer::BulletPeer(const ReferenceScene& scene) : impl_(std::make_unique<Impl>()) {
  for (size_t i = 0; i < scene.shapes.size(); ++i) {
    const Shape& s = scene.shapes[i];
    std::unique_ptr<btCollisionShape> shape;
    switch (s.type) {
      case ShapeType::kSphere:
        shape = std::make_unique<btSphereShape>(s.sphere.radius);
        break;
      case ShapeType::kBox:
        shape = std::make_unique<btBoxShape>(ToBt(s.box.half_extents));
        break;
      case ShapeType::kCapsule:
        // btCapsuleShape(radius, height) takes the full length of the straight part.
        shape = std::make_unique<btCapsuleShape>(s.capsule.radius, 2 * s.capsule.half_height);
        break;
    }
    auto object = std::make_unique<btCollisionObject>();
    btTransform tr;
    const Pose& p = scene.poses[i];
    tr.setOrigin(ToBt(p.position));
    tr.setRotation(btQuaternion(p.rotation.x, p.rotation.y, p.rotation.z, p.rotation.w));
    object->setWorldTransform(tr);
    object->setCollisionShape(shape.get());
    object->setUserIndex(static_cast<int>(i));
    impl_->world.addCollisionObject(object.get());
    impl_->shapes.push_back(std::move(shape));
    impl_->objects.push_back(std::move(object));
  }
  impl_->world.updateAabbs();
}

BulletPeer::~BulletPeer() = default;

int BulletPeer::RayClosest(const Ray& ray, float* distance) {
  btVector3 a = ToBt(ray.origin);
  btVector3 b = ToBt(ray.origin + ray.direction * ray.max_distance);
  btCollisionWorld::ClosestRayResultCallback cb(a, b);
  impl_->world.rayTest(a, b, cb);
  if (!cb.hasHit()) return -1;
  *distance = cb.m_closestHitFraction * ray.max_distance;
  return cb.m_collisionObject->getUserIndex();
}

bool BulletPeer::SphereCastClosest(const Ray& ray, float radius) {
  btSphereShape* probe = impl_->Probe(impl_->cast_probe, radius);
  btVector3 a = ToBt(ray.origin);
  btVector3 b = ToBt(ray.origin + ray.direction * ray.max_distance);
  btTransform f, g;
  f.setIdentity();
  g.setIdentity();
  f.setOrigin(a);
  g.setOrigin(b);
  btCollisionWorld::ClosestConvexResultCallback cb(a, b);
  impl_->world.convexSweepTest(probe, f, g, cb);
  return cb.hasHit();
}

int BulletPeer::OverlapSphereContacts(const Vec3& centre, float radius) {
  btCollisionObject& probe = impl_->overlap_probe;
  probe.setCollisionShape(impl_->Probe(impl_->overlap_ball, radius));
  btTransform f;
  f.setIdentity();
  f.setOrigin(ToBt(centre));
  probe.setWorldTransform(f);
  OverlapCount cb;
  impl_->world.contactTest(&probe, cb);
  return cb.hits;
}

void BulletPeer::MoveBodies(const ReferenceScene& scene, int round) {
  const size_t n = impl_->objects.size();
  const Vec3* step = scene.moves.data() + round * n;
  for (size_t i = 0; i < n; ++i) {
    btCollisionObject* o = impl_->objects[i].get();
    btTransform tr = o->getWorldTransform();
    tr.setOrigin(tr.getOrigin() + ToBt(step[i]));
    o->setWorldTransform(tr);
  }
}

void BulletPeer::MoveAll(const ReferenceScene& scene, int round) {
  MoveBodies(scene, round);
  impl_->world.updateAabbs();
}

void BulletPeer::MoveAllRespawning(const ReferenceScene& scene, int round, size_t first,
                                   size_t stride) {
  MoveBodies(scene, round);
  const size_t n = impl_->objects.size();
  for (size_t i = first; i < n; i += stride) {
    btCollisionObject* o = impl_->objects[i].get();
    impl_->world.removeCollisionObject(o);
    o->setWorldTransform(impl_->objects[(i + n / 2 + 1) % n]->getWorldTransform());
    impl_->world.addCollisionObject(o);
  }
  impl_->world.updateAabbs();
}

}  // namespace collide::bench
