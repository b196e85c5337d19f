#include "bvh/internal/binned_sah_builder.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace collide {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

constexpr Aabb kEmptyBox{{kInf, kInf, kInf}, {-kInf, -kInf, -kInf}};

// Not initialised on declaration: a split initialises only the bins it uses.
struct Bin {
  Aabb box;
  int32_t count;
};

// Half area that is 0 for the empty box (whose extents are -inf).
inline float BinArea(const Aabb& b, int32_t count) { return count > 0 ? HalfArea(b) : 0.0f; }

}  // namespace

int32_t BinnedSahBuilder::Split(std::span<const Aabb> boxes, int32_t begin, int32_t end, Aabb* left,
                                Aabb* right) {
  // A range of fewer items than kBinCount uses as many bins as items: most splits are of small
  // ranges (half the nodes have at most 3 items below them), where more bins than items only
  // cost time.
  const int bin_count = std::clamp(end - begin, 2, kBinCount);
  Vec3 cmin = centroids_[items_[begin]];
  Vec3 cmax = cmin;
  for (int32_t i = begin + 1; i < end; ++i) {
    const Vec3& c = centroids_[items_[i]];
    cmin = Min(cmin, c);
    cmax = Max(cmax, c);
  }

  // Per-axis scale from centroid to bin; an axis whose centroids coincide (or whose extent is so
  // small that the scale overflows) cannot be split and is skipped.
  float scale[3];
  bool usable[3];
  bool any_usable = false;
  for (int a = 0; a < 3; ++a) {
    float extent = cmax[a] - cmin[a];
    scale[a] = extent > 0.0f ? static_cast<float>(bin_count) * 0.99999f / extent : 0.0f;
    usable[a] = extent > 0.0f && std::isfinite(scale[a]);
    any_usable |= usable[a];
  }

  int best_axis = -1;
  int best_split = 0;  // the left side takes bins [0, best_split]
  Aabb best_left = kEmptyBox;
  Aabb best_right = kEmptyBox;
  if (any_usable) {
    Bin bins[3][kBinCount];
    for (int a = 0; a < 3; ++a) {
      for (int k = 0; k < bin_count; ++k) bins[a][k] = {kEmptyBox, 0};
    }
    for (int32_t i = begin; i < end; ++i) {
      int32_t item = items_[i];
      const Vec3& c = centroids_[item];
      const Aabb& b = boxes[item];
      for (int a = 0; a < 3; ++a) {
        if (!usable[a]) continue;
        int k = static_cast<int>((c[a] - cmin[a]) * scale[a]);
        k = std::clamp(k, 0, bin_count - 1);
        bins[a][k].box = Union(bins[a][k].box, b);
        ++bins[a][k].count;
      }
    }
    float best_cost = kInf;
    for (int a = 0; a < 3; ++a) {
      if (!usable[a]) continue;
      // Sweep from the right: the cost of everything right of each split.
      float right_cost[kBinCount];
      Aabb right_box[kBinCount];
      Aabb acc = kEmptyBox;
      int32_t count = 0;
      for (int k = bin_count - 1; k > 0; --k) {
        acc = Union(acc, bins[a][k].box);
        count += bins[a][k].count;
        right_cost[k] = BinArea(acc, count) * static_cast<float>(count);
        right_box[k] = acc;
      }
      acc = kEmptyBox;
      count = 0;
      int32_t total = end - begin;
      for (int k = 0; k < bin_count - 1; ++k) {
        acc = Union(acc, bins[a][k].box);
        count += bins[a][k].count;
        if (count == 0 || count == total) continue;
        float cost = BinArea(acc, count) * static_cast<float>(count) + right_cost[k + 1];
        if (cost < best_cost) {
          best_cost = cost;
          best_axis = a;
          best_split = k;
          best_left = acc;
          best_right = right_box[k + 1];
        }
      }
    }
  }

  if (best_axis < 0) {
    // Coincident centroids (or no finite cost): halve the range in its current order.
    int32_t mid = begin + (end - begin) / 2;
    Aabb l = boxes[items_[begin]];
    for (int32_t i = begin + 1; i < mid; ++i) l = Union(l, boxes[items_[i]]);
    Aabb r = boxes[items_[mid]];
    for (int32_t i = mid + 1; i < end; ++i) r = Union(r, boxes[items_[i]]);
    *left = l;
    *right = r;
    return mid;
  }

  // Partition with the same bin formula the counts came from, so the sides match the costs.
  const int a = best_axis;
  const float amin = cmin[a];
  const float ascale = scale[a];
  auto* first = items_.data() + begin;
  auto* last = items_.data() + end;
  auto* mid = std::partition(first, last, [&](int32_t item) {
    int k = static_cast<int>((centroids_[item][a] - amin) * ascale);
    return std::clamp(k, 0, bin_count - 1) <= best_split;
  });
  *left = best_left;
  *right = best_right;
  int32_t split = static_cast<int32_t>(mid - items_.data());
  assert(split > begin && split < end);
  return split;
}

void BinnedSahBuilder::Build(std::span<const Aabb> boxes, std::vector<BuiltNode>* out) {
  assert(boxes.size() >= 2);
  const int32_t n = static_cast<int32_t>(boxes.size());
  out->clear();
  out->reserve(static_cast<size_t>(n) - 1);
  items_.resize(n);
  centroids_.resize(n);
  for (int32_t i = 0; i < n; ++i) {
    items_[i] = i;
    centroids_[i] = boxes[i].min + boxes[i].max;
  }

  tasks_.clear();
  tasks_.push_back({0, n, -1, 0});
  while (!tasks_.empty()) {
    Task task = tasks_.back();
    tasks_.pop_back();
    int32_t index = static_cast<int32_t>(out->size());
    out->emplace_back();
    if (task.parent >= 0) (*out)[task.parent].child[task.slot] = index;

    Aabb left, right;
    int32_t mid = Split(boxes, task.begin, task.end, &left, &right);
    BuiltNode& node = (*out)[index];
    node.box[0] = left;
    node.box[1] = right;
    // Push the right side first so the left subtree is written right after this node.
    if (task.end - mid == 1) {
      node.child[1] = ~items_[mid];
    } else {
      tasks_.push_back({mid, task.end, index, 1});
    }
    if (mid - task.begin == 1) {
      node.child[0] = ~items_[task.begin];
    } else {
      tasks_.push_back({task.begin, mid, index, 0});
    }
  }
  assert(static_cast<int32_t>(out->size()) == n - 1);
}

size_t BinnedSahBuilder::MemoryBytes() const {
  return items_.capacity() * sizeof(int32_t) + centroids_.capacity() * sizeof(Vec3) +
         tasks_.capacity() * sizeof(Task);
}

void BinnedSahBuilder::Release() {
  std::vector<int32_t>().swap(items_);
  std::vector<Vec3>().swap(centroids_);
  std::vector<Task>().swap(tasks_);
}

}  // namespace collide
