#include "query/asset_geometry.h"

#include <algorithm>
#include <cmath>

namespace collide {

const char* AssetKindName(AssetKind kind) {
  return kind == AssetKind::kHeightfield ? "heightfield" : "mesh";
}

AssetGeometry::AssetGeometry(MeshShape mesh) : kind_(AssetKind::kMesh), shape_(std::move(mesh)) {
  Measure();
}

AssetGeometry::AssetGeometry(HeightfieldShape heightfield)
    : kind_(AssetKind::kHeightfield), shape_(std::move(heightfield)) {
  Measure();
}

void AssetGeometry::Measure() {
  local_bounds_ = kind_ == AssetKind::kMesh ? mesh().local_bounds() : heightfield().local_bounds();
  // The farthest corner of the local box bounds every point's distance from the origin; rounded
  // up by a few ulps so that it bounds the float distances computed from it too.
  const Vec3 far{std::max(std::fabs(local_bounds_.min.x), std::fabs(local_bounds_.max.x)),
                 std::max(std::fabs(local_bounds_.min.y), std::fabs(local_bounds_.max.y)),
                 std::max(std::fabs(local_bounds_.min.z), std::fabs(local_bounds_.max.z))};
  const double r = std::sqrt(double{far.x} * far.x + double{far.y} * far.y + double{far.z} * far.z);
  bounding_radius_ = static_cast<float>(r * (1.0 + 1e-6));
}

uint32_t AssetGeometry::triangle_count() const {
  return kind_ == AssetKind::kMesh ? mesh().triangle_count() : heightfield().triangle_count();
}

size_t AssetGeometry::MemoryBytes() const {
  return sizeof(*this) - sizeof(shape_) +
         (kind_ == AssetKind::kMesh ? mesh().MemoryBytes() : heightfield().MemoryBytes());
}

}  // namespace collide
