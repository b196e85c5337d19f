// DynamicTree's statistics (height, memory, SAH cost) and the structural checks of both forms
// for tests (Validate, ValidateWide).
#include <algorithm>
#include <cassert>
#include <cmath>
#include <utility>
#include <vector>

#include "bvh/dynamic_tree.h"

namespace collide {

// ---------------------------------------------------------------------------------------------
// Statistics and validation.

int DynamicTree::Height() const {
  if (root_ == kNullRef || IsLeafRef(root_)) return 0;
  return info_[root_].height;
}

TreeMemory DynamicTree::Memory() const {
  TreeMemory m;
  m.nodes = nodes_.capacity() * sizeof(Node) + info_.capacity() * sizeof(NodeInfo);
  m.leaves = leaf_box_.capacity() * sizeof(Aabb) + leaf_user_.capacity() * sizeof(uint32_t) +
             leaf_category_.capacity() * sizeof(uint32_t) +
             leaf_parent_.capacity() * sizeof(int32_t) + leaf_mark_.capacity() * sizeof(uint8_t);
  m.wide = wide_.MemoryBytes() + secondary_wide_.MemoryBytes();
  m.wide_maps =
      wide_leaf_at_.capacity() * sizeof(int32_t) + wide_parent_at_.capacity() * sizeof(int32_t) +
      wide_dirty_.capacity() * sizeof(int32_t) + wide_node_marked_.capacity() * sizeof(uint8_t) +
      wide_depth_.capacity() * sizeof(int32_t) + binary_dirty_.capacity() * sizeof(int32_t) +
      wide_level_queue_.capacity() * sizeof(std::vector<int32_t>) +
      wide_emptied_.capacity() * sizeof(int32_t) + secondary_.capacity() * sizeof(int32_t);
  for (const std::vector<int32_t>& level : wide_level_queue_) {
    m.wide_maps += sizeof(level) + level.capacity() * sizeof(int32_t);
  }
  m.scratch = builder_.MemoryBytes() + item_refs_.capacity() * sizeof(int32_t) +
              item_boxes_.capacity() * sizeof(Aabb) + built_.capacity() * sizeof(BuiltNode) +
              scratch_.capacity() * sizeof(int32_t);
  if (background_.job != nullptr) {
    // The snapshot a background build reads (its builder's scratch and output, written by its
    // thread, are not read here).
    m.scratch += background_.job->proxies.capacity() * sizeof(int32_t) +
                 background_.job->boxes.capacity() * sizeof(Aabb) + sizeof(BackgroundJob);
  }
  m.fixed = sizeof(*this);
  return m;
}

float DynamicTree::SahCost() const {
  if (root_ == kNullRef) return 0.0f;
  const double root_area = HalfArea(RootBox());
  if (!(root_area > 0.0)) return 1.0f;
  // Every box below the root is stored once, in its parent's slot.
  double sum = root_area;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (info_[i].height < 0) continue;
    sum += HalfArea(nodes_[i].box[0]);
    sum += HalfArea(nodes_[i].box[1]);
  }
  return static_cast<float>(sum / root_area);
}

void DynamicTree::SubtreeLeafRanges(std::vector<int32_t>* leaf_order,
                                    std::vector<std::pair<int32_t, int32_t>>* ranges) const {
  leaf_order->clear();
  ranges->clear();
  if (root_ == kNullRef) return;
  if (IsLeafRef(root_)) {
    leaf_order->push_back(ProxyOf(root_));
    return;
  }
  // Depth first over an explicit stack; a node's range closes when it is popped the second time.
  struct Entry {
    int32_t ref;
    int32_t range;  // -1 on the first visit
  };
  std::vector<Entry> stack{{root_, -1}};
  while (!stack.empty()) {
    Entry e = stack.back();
    stack.pop_back();
    if (IsLeafRef(e.ref)) {
      leaf_order->push_back(ProxyOf(e.ref));
      continue;
    }
    if (e.range >= 0) {
      (*ranges)[e.range].second = static_cast<int32_t>(leaf_order->size());
      continue;
    }
    const int32_t range = static_cast<int32_t>(ranges->size());
    ranges->push_back({static_cast<int32_t>(leaf_order->size()), -1});
    stack.push_back({e.ref, range});
    stack.push_back({nodes_[e.ref].child[1], -1});
    stack.push_back({nodes_[e.ref].child[0], -1});
  }
}

float DynamicTree::AreaOverLeafArea() const {
  if (root_ == kNullRef || IsLeafRef(root_)) return 1.0f;
  double leaves = 0.0;
  double sum = HalfArea(RootBox());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (info_[i].height < 0) continue;
    for (int c = 0; c < 2; ++c) {
      const double area = HalfArea(nodes_[i].box[c]);
      sum += area;
      if (IsLeafRef(nodes_[i].child[c])) leaves += area;
    }
  }
  if (!(leaves > 0.0)) return 1.0f;
  return static_cast<float>(sum / leaves);
}

bool DynamicTree::Validate(const char** why) const {
  auto fail = [why](const char* reason) {
    if (why != nullptr) *why = reason;
    return false;
  };
  if (nodes_.size() != info_.size()) return fail("node pool arrays differ in size");
  const size_t leaf_capacity = leaf_parent_.size();
  if (leaf_box_.size() != leaf_capacity || leaf_user_.size() != leaf_capacity ||
      leaf_category_.size() != leaf_capacity || leaf_mark_.size() != leaf_capacity) {
    return fail("leaf pool arrays differ in size");
  }

  // Free lists: acyclic, marked free, and they account for every slot not in use.
  int32_t free_nodes = 0;
  for (int32_t i = free_node_; i != kNullNode; i = nodes_[i].child[0]) {
    if (i < 0 || i >= static_cast<int32_t>(nodes_.size())) return fail("bad node free list link");
    if (info_[i].height != -1) return fail("node on the free list not marked free");
    if (++free_nodes > static_cast<int32_t>(nodes_.size())) return fail("node free list cycles");
  }
  if (free_nodes + node_count_ != static_cast<int32_t>(nodes_.size())) {
    return fail("node count + free nodes != pool size");
  }
  int32_t free_leaves = 0;
  for (int32_t i = free_leaf_; i != kNullProxy; i = static_cast<int32_t>(leaf_user_[i])) {
    if (i < 0 || i >= static_cast<int32_t>(leaf_capacity)) return fail("bad leaf free list link");
    if (leaf_parent_[i] != kFreeLeaf) return fail("leaf on the free list not marked free");
    if (++free_leaves > static_cast<int32_t>(leaf_capacity)) return fail("leaf free list cycles");
  }
  if (free_leaves + proxy_count_ != static_cast<int32_t>(leaf_capacity)) {
    return fail("proxy count + free leaves != pool size");
  }

  if (root_ == kNullRef) {
    if (proxy_count_ != 0 || node_count_ != 0) return fail("empty root but proxies remain");
    return true;
  }
  if (node_count_ != proxy_count_ - 1) return fail("internal nodes != proxies - 1");
  if (IsLeafRef(root_)) {
    int32_t proxy = ProxyOf(root_);
    if (proxy >= static_cast<int32_t>(leaf_capacity) || leaf_parent_[proxy] != kNullNode) {
      return fail("root leaf has a parent");
    }
    return true;
  }
  if (info_[root_].parent != kNullNode) return fail("root has a parent");

  // Walk the tree without recursion (degenerate trees are as deep as they are long).
  std::vector<uint8_t> seen_node(nodes_.size(), 0);
  std::vector<uint8_t> seen_leaf(leaf_capacity, 0);
  std::vector<int32_t> stack{root_};
  int32_t nodes_reached = 0;
  int32_t leaves_reached = 0;
  while (!stack.empty()) {
    const int32_t index = stack.back();
    stack.pop_back();
    if (index < 0 || index >= static_cast<int32_t>(nodes_.size())) return fail("bad node index");
    if (seen_node[index]) return fail("node reached twice");
    seen_node[index] = 1;
    ++nodes_reached;
    const NodeInfo& info = info_[index];
    if (info.height < 1) return fail("reachable node marked free");
    const Node& n = nodes_[index];
    if (n.child[0] == n.child[1]) return fail("both children are the same");
    int32_t height = 0;
    for (int c = 0; c < 2; ++c) {
      const int32_t child = n.child[c];
      const Aabb& box = n.box[c];
      if (!(box.min.x <= box.max.x && box.min.y <= box.max.y && box.min.z <= box.max.z)) {
        return fail("inverted child box");
      }
      if (IsLeafRef(child)) {
        const int32_t proxy = ProxyOf(child);
        if (child == kNullRef || proxy >= static_cast<int32_t>(leaf_capacity)) {
          return fail("bad leaf reference");
        }
        if (seen_leaf[proxy]) return fail("leaf reached twice");
        seen_leaf[proxy] = 1;
        ++leaves_reached;
        if (leaf_parent_[proxy] != index) return fail("leaf parent link broken");
        // A leaf marked by SetProxyBox keeps its old box here until PropagateMarkedLeaves.
        if ((leaf_mark_[proxy] & kBinaryMarked) == 0 && !(box == leaf_box_[proxy])) {
          return fail("leaf slot box differs from the fat box");
        }
        if (n.category[c] != leaf_category_[proxy]) return fail("leaf slot category differs");
      } else {
        if (child >= static_cast<int32_t>(nodes_.size())) return fail("bad child index");
        const NodeInfo& ci = info_[child];
        if (ci.parent != index) return fail("node parent link broken");
        if (ci.height < 1) return fail("child node marked free");
        if ((ci.flags & kEnlarged) && !(info.flags & kEnlarged)) {
          return fail("marked node under an unmarked parent");
        }
        const Node& cn = nodes_[child];
        const Aabb united = Union(cn.box[0], cn.box[1]);
        if (!Contains(box, united)) return fail("child box not inside its parent's");
        if (!(ci.flags & kEnlarged) && !(box == united)) {
          return fail("unmarked node box is not the union of its children");
        }
        if (n.category[c] != (cn.category[0] | cn.category[1])) {
          return fail("category union differs from the children's");
        }
        stack.push_back(child);
      }
      height = std::max(height, HeightOf(child));
    }
    if (info.height != height + 1) return fail("height differs from 1 + children's maximum");
  }
  if (nodes_reached != node_count_) return fail("unreachable internal nodes in use");
  if (leaves_reached != proxy_count_) return fail("unreachable live leaves");
  return ValidateWide(why);
}

bool DynamicTree::ValidateWide(const char** why) const {
  auto fail = [why](const char* reason) {
    if (why != nullptr) *why = reason;
    return false;
  };
  if (!wide_current_) return true;
  if (root_ == kNullRef || IsLeafRef(root_)) {
    return wide_.HasRoot() ? fail("wide form has nodes for a tree without internal nodes") : true;
  }
  if (!wide_.HasRoot()) return fail("optimized tree without a wide root");
  std::vector<uint8_t> seen_leaf(leaf_parent_.size(), 0);
  int32_t leaves = 0;
  // Walks one 8-wide tree: every leaf a live proxy seen once (in either tree) with its box and
  // category, every slot's box the union of its child's, categories the unions. A node has at
  // least `min_used` children. Returns the first violation, null when none.
  auto walk = [&](const WideTree& tree, int min_used) -> const char* {
    std::vector<uint8_t> seen_node(static_cast<size_t>(tree.NodeCount()), 0);
    std::vector<int32_t> stack{tree.root()};
    while (!stack.empty()) {
      const int32_t index = stack.back();
      stack.pop_back();
      if (index < 0 || index >= tree.NodeCount()) return "bad wide node index";
      if (seen_node[index]) return "wide node reached twice";
      seen_node[index] = 1;
      const WideTree::Node& n = tree.node(index);
      int used = 0;
      for (int i = 0; i < WideTree::kWidth; ++i) {
        const int32_t child = n.child[i];
        const Aabb box = n.Box(i);
        if (child == kNullRef) {
          if (n.category[i] != 0) return "unused wide slot with a category";
          continue;
        }
        ++used;
        if (IsLeafRef(child)) {
          const int32_t proxy = ProxyOf(child);
          if (proxy >= static_cast<int32_t>(leaf_parent_.size()) ||
              leaf_parent_[proxy] == kFreeLeaf) {
            return "wide leaf is not a live proxy";
          }
          if (seen_leaf[proxy]) return "wide leaf reached twice";
          seen_leaf[proxy] = 1;
          ++leaves;
          if (!(box == leaf_box_[proxy])) {
            return "wide leaf box differs from the fat box";
          }
          if (n.category[i] != leaf_category_[proxy]) {
            return "wide leaf category differs";
          }
        } else {
          if (child >= tree.NodeCount()) return "bad wide child index";
          const WideTree::Node& c = tree.node(child);
          uint32_t category = 0;
          Aabb united;
          bool first = true;
          for (int k = 0; k < WideTree::kWidth; ++k) {
            if (c.child[k] == kNullRef) continue;
            const Aabb inner = c.Box(k);
            if (!Contains(box, inner)) {
              return "wide child box not inside its slot's box";
            }
            united = first ? inner : Union(united, inner);
            first = false;
            category |= c.category[k];
          }
          if (first) return "wide slot refers to a node with no children";
          if (category != n.category[i]) return "wide category union differs";
          // The query form is always tight (the binary tree may be loose between refits).
          if (!(united == box)) return "wide box differs from its children's union";
          stack.push_back(child);
        }
      }
      if (used < min_used) return "wide node with too few children";
    }
    return nullptr;
  };
  // Removed leaves leave slots empty: then a node may hold one child, the root none.
  if (const char* reason = walk(wide_, wide_has_emptied_ ? 0 : 2)) return fail(reason);
  const int32_t in_main = leaves;
  if (secondary_.empty() != !secondary_wide_.HasRoot()) {
    return fail("secondary structure's tree does not match its proxies");
  }
  if (secondary_wide_.HasRoot()) {
    if (const char* reason = walk(secondary_wide_, 1)) return fail(reason);
  }
  if (leaves - in_main != SecondaryCount()) {
    return fail("secondary structure's tree does not hold its proxies");
  }
  for (const int32_t proxy : secondary_) {
    if (wide_leaf_at_[proxy] != -1) return fail("secondary proxy placed in the wide form");
  }
  if (leaves != proxy_count_) return fail("wide form does not hold every leaf");
  return true;
}

}  // namespace collide
