package collide

import (
	"strconv"

	pb "collide.dev/collide/collidepb"
)

// Builders of the messages most calls need, each in one expression. Any message can also be
// written as a plain composite literal of package collidepb.

// V is the vector (x, y, z).
func V(x, y, z float32) *pb.Vec3 { return &pb.Vec3{X: x, Y: y, Z: z} }

// Q is the quaternion (x, y, z, w).
func Q(x, y, z, w float32) *pb.Quat { return &pb.Quat{X: x, Y: y, Z: z, W: w} }

// At is the pose at (x, y, z) with the identity rotation.
func At(x, y, z float32) *pb.Pose { return &pb.Pose{Position: V(x, y, z)} }

// Posed is the pose at position with rotation (nil: the identity).
func Posed(position *pb.Vec3, rotation *pb.Quat) *pb.Pose {
	return &pb.Pose{Position: position, Rotation: rotation}
}

// SphereShape is a ball of radius r about the body's origin.
func SphereShape(r float32) *pb.Shape {
	return &pb.Shape{Shape: &pb.Shape_Sphere{Sphere: &pb.Sphere{Radius: r}}}
}

// BoxShape is a box with half extents (x, y, z) in the body's frame.
func BoxShape(x, y, z float32) *pb.Shape {
	return &pb.Shape{Shape: &pb.Shape_Box{Box: &pb.Box{HalfExtents: V(x, y, z)}}}
}

// CapsuleShape is a capsule of radius r around a segment of half length halfHeight along y.
func CapsuleShape(r, halfHeight float32) *pb.Shape {
	return &pb.Shape{Shape: &pb.Shape_Capsule{Capsule: &pb.Capsule{Radius: r, HalfHeight: halfHeight}}}
}

// NewBody is a dynamic body with the default filter bits.
func NewBody(id uint64, shape *pb.Shape, pose *pb.Pose) *pb.Body {
	return &pb.Body{Id: id, Shape: shape, Pose: pose}
}

// Ray is a ray from origin along direction, up to maxDistance.
func Ray(origin, direction *pb.Vec3, maxDistance float32) *pb.Raycast {
	return &pb.Raycast{Origin: origin, Direction: direction, MaxDistance: maxDistance}
}

// Cast is a sphere cast of radius from origin along direction, up to maxDistance.
func Cast(origin, direction *pb.Vec3, maxDistance, radius float32) *pb.SphereCast {
	return &pb.SphereCast{Origin: origin, Direction: direction, MaxDistance: maxDistance, Radius: radius}
}

// RaycastQuery is a query of a batch (QueryStream) tagged requestID.
func RaycastQuery(requestID uint64, ray *pb.Raycast) *pb.Query {
	return &pb.Query{RequestId: requestID, Kind: &pb.Query_Raycast{Raycast: ray}}
}

// SphereCastQuery is a query of a batch tagged requestID.
func SphereCastQuery(requestID uint64, cast *pb.SphereCast) *pb.Query {
	return &pb.Query{RequestId: requestID, Kind: &pb.Query_SphereCast{SphereCast: cast}}
}

// OverlapQuery is a query of a batch tagged requestID.
func OverlapQuery(requestID uint64, shape *pb.Shape, pose *pb.Pose) *pb.Query {
	return &pb.Query{RequestId: requestID, Kind: &pb.Query_Overlap{Overlap: &pb.Overlap{Shape: shape, Pose: pose}}}
}

// UpsertOp creates or replaces a body (an UpdateBatch operation).
func UpsertOp(body *pb.Body) *pb.UpdateOp { return &pb.UpdateOp{Op: &pb.UpdateOp_Upsert{Upsert: body}} }

// SetPoseOp moves a body.
func SetPoseOp(id uint64, pose *pb.Pose) *pb.UpdateOp {
	return &pb.UpdateOp{Op: &pb.UpdateOp_SetPose{SetPose: &pb.SetPose{Id: id, Pose: pose}}}
}

// SetFilterOp replaces a body's filter bits.
func SetFilterOp(id uint64, category, mask uint32) *pb.UpdateOp {
	return &pb.UpdateOp{Op: &pb.UpdateOp_SetFilter{SetFilter: &pb.SetFilter{Id: id, Category: category, Mask: mask}}}
}

// RemoveOp removes a body.
func RemoveOp(id uint64) *pb.UpdateOp { return &pb.UpdateOp{Op: &pb.UpdateOp_Remove{Remove: id}} }

// MoveBatch is an update batch of moves in column form: body ids[i] to position
// (poses[7i], poses[7i+1], poses[7i+2]) with rotation (poses[7i+3], ..., poses[7i+6]).
func MoveBatch(ids []uint64, poses []float32) *pb.UpdateBatch {
	return &pb.UpdateBatch{Moves: &pb.PoseColumns{Ids: ids, Poses: poses}}
}

// U32, U64 and F32 point at a copy of a value, for the proto's optional fields
// (SceneOptions.HistoryTicks, Body.Category, UpdateBatch.Tick, Query.AtTick, ...).
func U32(v uint32) *uint32   { return &v }
func U64(v uint64) *uint64   { return &v }
func F32(v float32) *float32 { return &v }

// FormatFloat32 is the shortest decimal that reads back as f (0.1, not 0.10000000149011612):
// how the clients print the float32 fields the server sends.
func FormatFloat32(f float32) string { return strconv.FormatFloat(float64(f), 'g', -1, 32) }
