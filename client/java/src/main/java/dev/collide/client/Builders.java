package dev.collide.client;

import dev.collide.v1.Body;
import dev.collide.v1.Box;
import dev.collide.v1.Capsule;
import dev.collide.v1.Overlap;
import dev.collide.v1.PoseColumns;
import dev.collide.v1.Pose;
import dev.collide.v1.Quat;
import dev.collide.v1.Query;
import dev.collide.v1.Raycast;
import dev.collide.v1.SetPose;
import dev.collide.v1.Shape;
import dev.collide.v1.Sphere;
import dev.collide.v1.SphereCast;
import dev.collide.v1.UpdateBatch;
import dev.collide.v1.UpdateOp;
import dev.collide.v1.Vec3;
import java.util.List;

/** Builders of the messages most calls need, each in one expression (import static). */
public final class Builders {
  private Builders() {}

  /** The vector (x, y, z). */
  public static Vec3 vec(float x, float y, float z) {
    return Vec3.newBuilder().setX(x).setY(y).setZ(z).build();
  }

  /** The quaternion (x, y, z, w). */
  public static Quat quat(float x, float y, float z, float w) {
    return Quat.newBuilder().setX(x).setY(y).setZ(z).setW(w).build();
  }

  /** The pose at (x, y, z) with the identity rotation. */
  public static Pose at(float x, float y, float z) {
    return Pose.newBuilder().setPosition(vec(x, y, z)).build();
  }

  /** The pose at {@code position} with {@code rotation}. */
  public static Pose pose(Vec3 position, Quat rotation) {
    return Pose.newBuilder().setPosition(position).setRotation(rotation).build();
  }

  /** A ball of radius r. */
  public static Shape sphere(float r) {
    return Shape.newBuilder().setSphere(Sphere.newBuilder().setRadius(r)).build();
  }

  /** A box with half extents (x, y, z). */
  public static Shape box(float x, float y, float z) {
    return Shape.newBuilder().setBox(Box.newBuilder().setHalfExtents(vec(x, y, z))).build();
  }

  /** A capsule of radius r around a segment of half length halfHeight along y. */
  public static Shape capsule(float r, float halfHeight) {
    return Shape.newBuilder()
        .setCapsule(Capsule.newBuilder().setRadius(r).setHalfHeight(halfHeight)).build();
  }

  /** A dynamic body with the default filter bits. */
  public static Body body(long id, Shape shape, Pose pose) {
    return Body.newBuilder().setId(id).setShape(shape).setPose(pose).build();
  }

  /** A ray from origin along direction, up to maxDistance. */
  public static Raycast ray(Vec3 origin, Vec3 direction, float maxDistance) {
    return Raycast.newBuilder().setOrigin(origin).setDirection(direction)
        .setMaxDistance(maxDistance).build();
  }

  /** A sphere cast of radius from origin along direction, up to maxDistance. */
  public static SphereCast cast(Vec3 origin, Vec3 direction, float maxDistance, float radius) {
    return SphereCast.newBuilder().setOrigin(origin).setDirection(direction)
        .setMaxDistance(maxDistance).setRadius(radius).build();
  }

  /** A ray query of a batch, tagged requestId. */
  public static Query raycastQuery(long requestId, Raycast ray) {
    return Query.newBuilder().setRequestId(requestId).setRaycast(ray).build();
  }

  /** An overlap query of a batch, tagged requestId. */
  public static Query overlapQuery(long requestId, Shape shape, Pose pose) {
    return Query.newBuilder().setRequestId(requestId)
        .setOverlap(Overlap.newBuilder().setShape(shape).setPose(pose)).build();
  }

  /** The upsert of a body, as an UpdateBatch operation. */
  public static UpdateOp upsert(Body body) {
    return UpdateOp.newBuilder().setUpsert(body).build();
  }

  /** A move of one body, as an UpdateBatch operation. */
  public static UpdateOp setPose(long id, Pose pose) {
    return UpdateOp.newBuilder().setSetPose(SetPose.newBuilder().setId(id).setPose(pose)).build();
  }

  /** The removal of a body, as an UpdateBatch operation. */
  public static UpdateOp remove(long id) {
    return UpdateOp.newBuilder().setRemove(id).build();
  }

  /**
   * A batch of moves in column form: body ids[i] to (poses[7i], poses[7i+1], poses[7i+2]) with
   * rotation (poses[7i+3], ..., poses[7i+6]).
   */
  public static UpdateBatch moves(List<Long> ids, List<Float> poses) {
    return UpdateBatch.newBuilder()
        .setMoves(PoseColumns.newBuilder().addAllIds(ids).addAllPoses(poses)).build();
  }
}
