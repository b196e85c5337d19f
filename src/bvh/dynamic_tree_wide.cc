// DynamicTree's 8-wide query form: collapsing the binary tree into a WideTree (Optimize,
// CopyWide) and refitting it in place while only boxes change (RefitWide).
#include <algorithm>
#include <cassert>
#include <limits>
#include <utility>
#include <vector>

#include "bvh/dynamic_tree.h"

namespace collide {

// ---------------------------------------------------------------------------------------------
// The 8-wide query form.

void DynamicTree::Optimize() {
  if (wide_current_) return;
  if (wide_shape_current_ && wide_.HasRoot()) {
    // Only boxes and categories changed since the 8-wide form was built, leaves were removed
    // and proxies created (into the secondary structure): refit it, build the secondary.
    RefitWide();
    BuildSecondary();
    wide_current_ = true;
    return;
  }
  // The collapse copies the binary tree's boxes: make them tight first.
  Refit();
  ClearWideDirty();
  wide_emptied_.clear();
  wide_has_emptied_ = false;
  secondary_.clear();
  secondary_wide_.Clear();
  wide_current_ = true;
  wide_shape_current_ = false;
  wide_leaf_at_.assign(leaf_parent_.size(), -1);
  wide_parent_at_.clear();
  Collapse(&wide_, &wide_leaf_at_, &wide_parent_at_);
  wide_shape_current_ = wide_.HasRoot();
  // Depths for RefitWide (preorder: a parent's index is below its children's).
  wide_depth_.resize(wide_parent_at_.size());
  for (size_t w = 0; w < wide_parent_at_.size(); ++w) {
    const int32_t up = wide_parent_at_[w];
    wide_depth_[w] = up < 0 ? 0 : wide_depth_[static_cast<size_t>(up / WideTree::kWidth)] + 1;
  }
}

void DynamicTree::CopyWide(WideTree* out, std::vector<int32_t>* parent_at) const {
  if (wide_current_ && wide_shape_current_ && wide_.HasRoot() && secondary_.empty()) {
    *out = wide_;
    if (parent_at != nullptr) *parent_at = wide_parent_at_;
    return;
  }
  if (parent_at != nullptr) parent_at->clear();
  Collapse(out, nullptr, parent_at);
}

void DynamicTree::Collapse(WideTree* out, std::vector<int32_t>* leaf_at,
                           std::vector<int32_t>* parent_at) const {
  // The last collapse's node count is the best guess of this one's (a good collapse makes about
  // n/5 nodes, n the binary tree's internal nodes); the capacity is trimmed at the end when it
  // was far off.
  const size_t previous = static_cast<size_t>(out->NodeCount());
  out->Clear();
  if (root_ == kNullRef || IsLeafRef(root_)) return;  // the binary path handles these
  const size_t most = static_cast<size_t>(node_count_ / 4 + 1);
  out->Reserve(previous > 0 ? std::min(most, previous + previous / 16 + 16) : most);

  // Leaves under each binary node (post-order over an explicit stack).
  std::vector<int32_t> leaves(nodes_.size(), 0);
  {
    auto leaves_of = [&](int32_t ref) { return IsLeafRef(ref) ? 1 : leaves[ref]; };
    std::vector<std::pair<int32_t, bool>> stack{{root_, false}};
    while (!stack.empty()) {
      auto [node, expanded] = stack.back();
      stack.pop_back();
      const Node& b = nodes_[node];
      if (expanded) {
        leaves[node] = leaves_of(b.child[0]) + leaves_of(b.child[1]);
        continue;
      }
      stack.push_back({node, true});
      for (int c = 0; c < 2; ++c) {
        if (!IsLeafRef(b.child[c])) stack.push_back({b.child[c], false});
      }
    }
  }

  // Each wide node takes a binary node's two children and opens internal children into their
  // two children while it has a free slot: first those of more than eight leaves, the one of
  // largest area first (the upper levels keep the binary tree's surface-area order); then one
  // whose leaves all fit in the free slots (absorbed whole, it costs no node of its own). A
  // child of at most eight leaves that does not fit stays a child: it becomes one full node.
  // Opening every child greedily instead leaves the bottom level with nodes mostly empty.
  // Nodes are written in preorder, the first child's subtree right after its parent.
  struct Slot {
    int32_t ref;
    Aabb box;
    uint32_t category;
  };
  struct Pending {
    int32_t binary;
    int32_t wide_parent;
    int32_t slot;
  };
  std::vector<Pending> pending{{root_, -1, 0}};
  while (!pending.empty()) {
    const Pending p = pending.back();
    pending.pop_back();
    const int32_t w = out->AddNode();
    if (p.wide_parent >= 0) out->node(p.wide_parent).child[p.slot] = w;
    if (parent_at != nullptr) {
      parent_at->push_back(p.wide_parent >= 0 ? p.wide_parent * WideTree::kWidth + p.slot : -1);
    }

    Slot slots[WideTree::kWidth];
    const Node& b = nodes_[p.binary];
    slots[0] = {b.child[0], b.box[0], b.category[0]};
    slots[1] = {b.child[1], b.box[1], b.category[1]};
    int count = 2;
    while (count < WideTree::kWidth) {
      int widest = -1;
      float widest_area = -1.0f;
      int absorbable = -1;
      for (int i = 0; i < count; ++i) {
        if (IsLeafRef(slots[i].ref)) continue;
        const int32_t n = leaves[slots[i].ref];
        if (n > WideTree::kWidth) {
          float area = HalfArea(slots[i].box);
          if (area > widest_area) {
            widest_area = area;
            widest = i;
          }
        } else if (absorbable < 0 && count - 1 + n <= WideTree::kWidth) {
          absorbable = i;
        }
      }
      if (widest < 0) widest = absorbable;
      if (widest < 0) break;
      const Node& open = nodes_[slots[widest].ref];
      slots[count++] = {open.child[1], open.box[1], open.category[1]};
      slots[widest] = {open.child[0], open.box[0], open.category[0]};
    }

    WideTree::Node& node = out->node(w);
    for (int i = 0; i < WideTree::kWidth; ++i) {
      if (i < count) {
        node.Set(i, slots[i].ref, slots[i].box, slots[i].category);
        if (leaf_at != nullptr && IsLeafRef(slots[i].ref))
          (*leaf_at)[ProxyOf(slots[i].ref)] = w * WideTree::kWidth + i;
      } else {
        node.SetEmpty(i);
      }
    }
    for (int i = count; i-- > 0;) {
      if (!IsLeafRef(slots[i].ref)) pending.push_back({slots[i].ref, w, i});
    }
  }
  out->SetRoot(0);
  out->TrimCapacity();
}

void DynamicTree::ClearWideDirty() {
  for (const int32_t proxy : wide_dirty_) leaf_mark_[proxy] &= static_cast<uint8_t>(~kWideMarked);
  wide_dirty_.clear();
}

float DynamicTree::WideAreaOverLeafArea() const {
  if (!wide_.HasRoot()) return 1.0f;
  double all = 0.0;
  double leaves = 0.0;
  for (int32_t w = 0; w < wide_.NodeCount(); ++w) {
    const WideTree::Node& node = wide_.node(w);
    for (int i = 0; i < WideTree::kWidth; ++i) {
      if (node.child[i] == kNullRef) continue;
      const double area = HalfArea(node.Box(i));
      all += area;
      if (IsLeafRef(node.child[i])) leaves += area;
    }
  }
  if (!(leaves > 0.0)) return 1.0f;
  return static_cast<float>(all / leaves);
}

void DynamicTree::RefitWide() {
  // A leaf slot takes its leaf's fat box and category; an internal slot the union of its child
  // node's slots, which is exactly the box the binary tree holds for that subtree after Refit
  // (unions of the same fat boxes). Nodes are laid out in preorder (parents before children), so
  // taking nodes highest index first finishes every child before its parent.
  auto set_leaf_slots = [&](auto&& each_node) {
    for (int32_t proxy : wide_dirty_) {
      leaf_mark_[proxy] &= static_cast<uint8_t>(~kWideMarked);
      if (!IsLiveProxy(proxy)) continue;
      const int32_t at = wide_leaf_at_[proxy];
      if (at < 0) continue;  // in the secondary structure (created since the collapse)
      const int32_t w = at / WideTree::kWidth;
      WideTree::Node& node = wide_.node(w);
      const int slot = at % WideTree::kWidth;
      node.Set(slot, node.child[slot], leaf_box_[proxy], leaf_category_[proxy]);
      each_node(w);
    }
    wide_dirty_.clear();
  };
  // Writes the union of node w's slots into its parent's slot for it (none for the root); a
  // node whose every leaf was removed leaves its parent's slot empty.
  auto refit_parent_slot = [&](int32_t w) {
    const int32_t up = wide_parent_at_[w];
    if (up < 0) return;
    const WideTree::Node& node = wide_.node(w);
    Aabb box;
    uint32_t category = 0;
    bool first = true;
    for (int i = 0; i < WideTree::kWidth; ++i) {
      if (node.child[i] == kNullRef) continue;
      const Aabb slot = node.Box(i);
      box = first ? slot : Union(box, slot);
      first = false;
      category |= node.category[i];
    }
    WideTree::Node& parent = wide_.node(up / WideTree::kWidth);
    const int slot = up % WideTree::kWidth;
    if (!first) {
      // A node with children is reachable: its parent's slot refers to it.
      parent.Set(slot, w, box, category);
      return;
    }
    // Every leaf under w was removed: its parent's slot goes, unless a new leaf took it since
    // (the sweep below comes back to an emptied node at every refit).
    if (parent.child[slot] == w) parent.SetEmpty(slot);
  };
  const int32_t node_count = wide_.NodeCount();
  if (wide_dirty_.size() >= static_cast<size_t>(node_count)) {
    // About as many leaves moved as there are nodes (a batch that moves most bodies: a tick
    // loop's): one sequential sweep over every node costs less than a heap of the marked ones.
    set_leaf_slots([](int32_t) {});
    wide_emptied_.clear();
    for (int32_t w = node_count - 1; w > 0; --w) refit_parent_slot(w);
    return;
  }
  // Otherwise the nodes holding moved leaves are marked in buckets by depth and refitted from
  // the deepest level up, each marking its parent one level up: every child of a node is one
  // level deeper, so a node is refitted after all of its marked children.
  wide_node_marked_.resize(static_cast<size_t>(node_count), 0);
  int32_t deepest = -1;
  // (Inlined at each of its three uses: called, it cost the refit about 14%.)
  auto mark = [&](int32_t w) __attribute__((always_inline)) {
    if (wide_node_marked_[w]) return;
    wide_node_marked_[w] = 1;
    const int32_t depth = wide_depth_[w];
    if (static_cast<size_t>(depth) >= wide_level_queue_.size()) {
      wide_level_queue_.resize(static_cast<size_t>(depth) + 1);
    }
    wide_level_queue_[depth].push_back(w);
    deepest = std::max(deepest, depth);
  };
  set_leaf_slots(mark);
  for (const int32_t w : wide_emptied_) mark(w);
  wide_emptied_.clear();
  for (int32_t depth = deepest; depth >= 0; --depth) {
    // Marking a parent writes only the level above, never this one (nor resizes the buckets).
    for (const int32_t w : wide_level_queue_[depth]) {
      wide_node_marked_[w] = 0;
      refit_parent_slot(w);
      if (const int32_t up = wide_parent_at_[w]; up >= 0) mark(up / WideTree::kWidth);
    }
    wide_level_queue_[depth].clear();
  }
}

int32_t DynamicTree::FindFreeWideSlot(const Aabb& box) const {
  // Down the form by the least growth of a child's box (the boxes of the last refit: close
  // enough to choose by), remembering the deepest node with a free slot on the way.
  int32_t found = -1;
  int32_t w = wide_.root();
  while (w >= 0) {
    const WideTree::Node& node = wide_.node(w);
    int32_t next = -1;
    float least = std::numeric_limits<float>::infinity();
    for (int i = 0; i < WideTree::kWidth; ++i) {
      const int32_t child = node.child[i];
      if (child == kNullRef) {
        found = w * WideTree::kWidth + i;
        continue;
      }
      if (IsLeafRef(child)) continue;
      const Aabb slot = node.Box(i);
      const float growth = HalfArea(Union(slot, box)) - HalfArea(slot);
      if (growth < least) {
        least = growth;
        next = child;
      }
    }
    w = next;
  }
  return found;
}

void DynamicTree::DropSecondary(int32_t proxy) {
  const auto it = std::find(secondary_.begin(), secondary_.end(), proxy);
  if (it == secondary_.end()) return;
  *it = secondary_.back();
  secondary_.pop_back();
}

void DynamicTree::BuildSecondary() {
  secondary_wide_.Clear();
  if (secondary_.empty()) return;
  auto centre = [&](int32_t proxy, int axis) {
    const Aabb& b = leaf_box_[proxy];
    return axis == 0 ? b.min.x + b.max.x : axis == 1 ? b.min.y + b.max.y : b.min.z + b.max.z;
  };
  struct Range {
    int32_t begin;
    int32_t end;
    int32_t size() const { return end - begin; }
  };
  // A node over secondary_[range]: up to eight groups, made by halving the largest group at the
  // median of its centres along their widest axis; a group of one proxy is a leaf slot, a larger
  // one a child node. Returns the node's index, its union box and category bits.
  auto build = [&](auto&& self, Range range, Aabb* out_box, uint32_t* out_category) -> int32_t {
    const int32_t w = secondary_wide_.AddNode();
    Range groups[WideTree::kWidth];
    int count = 0;
    if (range.size() <= WideTree::kWidth) {
      for (int32_t i = range.begin; i < range.end; ++i) groups[count++] = {i, i + 1};
    } else {
      groups[count++] = range;
      while (count < WideTree::kWidth) {
        int largest = 0;
        for (int i = 1; i < count; ++i) {
          if (groups[i].size() > groups[largest].size()) largest = i;
        }
        const Range r = groups[largest];
        Vec3 lo = leaf_box_[secondary_[r.begin]].min;
        Vec3 hi = lo;
        for (int32_t i = r.begin; i < r.end; ++i) {
          const int32_t p = secondary_[i];
          const Vec3 c{centre(p, 0), centre(p, 1), centre(p, 2)};
          lo = Min(lo, c);
          hi = Max(hi, c);
        }
        const Vec3 extent = hi - lo;
        const int axis = extent.x >= extent.y && extent.x >= extent.z ? 0
                         : extent.y >= extent.z                       ? 1
                                                                      : 2;
        const int32_t mid = r.begin + r.size() / 2;
        std::nth_element(secondary_.begin() + r.begin, secondary_.begin() + mid,
                         secondary_.begin() + r.end,
                         [&](int32_t a, int32_t b) { return centre(a, axis) < centre(b, axis); });
        groups[largest] = {r.begin, mid};
        groups[count++] = {mid, r.end};
      }
    }
    Aabb all;
    uint32_t category = 0;
    for (int i = 0; i < count; ++i) {
      Aabb box;
      uint32_t bits = 0;
      int32_t child = 0;
      if (groups[i].size() == 1) {
        const int32_t proxy = secondary_[groups[i].begin];
        box = leaf_box_[proxy];
        bits = leaf_category_[proxy];
        child = LeafRef(proxy);
      } else {
        child = self(self, groups[i], &box, &bits);
      }
      // (The recursion may have moved the nodes: address this one afresh.)
      secondary_wide_.node(w).Set(i, child, box, bits);
      all = i == 0 ? box : Union(all, box);
      category |= bits;
    }
    for (int i = count; i < WideTree::kWidth; ++i) secondary_wide_.node(w).SetEmpty(i);
    *out_box = all;
    *out_category = category;
    return w;
  };
  Aabb box;
  uint32_t category = 0;
  secondary_wide_.SetRoot(build(build, Range{0, SecondaryCount()}, &box, &category));
}

}  // namespace collide
