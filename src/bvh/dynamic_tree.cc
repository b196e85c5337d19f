#include "bvh/dynamic_tree.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace collide {
namespace {

constexpr float kFloatMax = std::numeric_limits<float>::max();

// The size a full pool grows to: by half while small, by an eighth from 65,536 entries on. A
// large pool grows while bodies are loaded one batch at a time, and what it grew by stays: by
// half it held up to 50% (at 1M bodies after a load, 35%) more than a build's exact pool; by an
// eighth at most 12.5%, for about 8 copies of each entry over a load instead of 3.
int32_t PoolGrowth(int32_t size) {
  constexpr int32_t kLarge = 1 << 16;
  const int32_t step = size < kLarge ? size / 2 : size / 8;
  return std::max<int32_t>(16, size + std::min(step, std::numeric_limits<int32_t>::max() - size));
}

}  // namespace

DynamicTree::DynamicTree(const DynamicTreeOptions& options) : options_(options) {
  assert(options.fat_margin >= 0.0f);
}

// ---------------------------------------------------------------------------------------------
// Pools.

int32_t DynamicTree::AllocateNode() {
  if (free_node_ == kNullNode) {
    // Grow (PoolGrowth) and thread the new slots onto the free list in ascending order.
    int32_t old_size = static_cast<int32_t>(nodes_.size());
    int32_t new_size = PoolGrowth(old_size);
    // reserve first: resize alone would double the capacity, not grow it by half.
    nodes_.reserve(new_size);
    info_.reserve(new_size);
    nodes_.resize(new_size);
    info_.resize(new_size);
    for (int32_t i = new_size - 1; i >= old_size; --i) {
      nodes_[i].child[0] = free_node_;
      info_[i] = {kNullNode, -1, 0};
      free_node_ = i;
    }
  }
  int32_t node = free_node_;
  free_node_ = nodes_[node].child[0];
  info_[node] = {kNullNode, 1, 0};
  ++node_count_;
  return node;
}

void DynamicTree::FreeNode(int32_t node) {
  assert(info_[node].height >= 0);
  nodes_[node].child[0] = free_node_;
  info_[node] = {kNullNode, -1, 0};
  free_node_ = node;
  --node_count_;
}

void DynamicTree::ResetNodePool() {
  // Ascending free list: a build then writes its preorder into consecutive slots.
  free_node_ = kNullNode;
  for (int32_t i = static_cast<int32_t>(nodes_.size()) - 1; i >= 0; --i) {
    nodes_[i].child[0] = free_node_;
    info_[i] = {kNullNode, -1, 0};
    free_node_ = i;
  }
  node_count_ = 0;
}

int32_t DynamicTree::AllocateLeaf() {
  if (free_leaf_ == kNullProxy) {
    int32_t old_size = static_cast<int32_t>(leaf_parent_.size());
    int32_t new_size = PoolGrowth(old_size);
    leaf_box_.reserve(new_size);
    leaf_user_.reserve(new_size);
    leaf_category_.reserve(new_size);
    leaf_parent_.reserve(new_size);
    leaf_mark_.reserve(new_size);
    leaf_box_.resize(new_size);
    leaf_mark_.resize(new_size, 0);
    leaf_user_.resize(new_size);
    leaf_category_.resize(new_size);
    leaf_parent_.resize(new_size);
    for (int32_t i = new_size - 1; i >= old_size; --i) {
      leaf_user_[i] = static_cast<uint32_t>(free_leaf_);
      leaf_parent_[i] = kFreeLeaf;
      free_leaf_ = i;
    }
  }
  int32_t proxy = free_leaf_;
  free_leaf_ = static_cast<int32_t>(leaf_user_[proxy]);
  leaf_parent_[proxy] = kNullNode;
  ++proxy_count_;
  return proxy;
}

// ---------------------------------------------------------------------------------------------
// Small helpers.

Aabb DynamicTree::RootBox() const {
  assert(root_ != kNullRef);
  if (IsLeafRef(root_)) return leaf_box_[ProxyOf(root_)];
  const Node& n = nodes_[root_];
  return Union(n.box[0], n.box[1]);
}

uint32_t DynamicTree::RootCategory() const {
  assert(root_ != kNullRef);
  if (IsLeafRef(root_)) return leaf_category_[ProxyOf(root_)];
  const Node& n = nodes_[root_];
  return n.category[0] | n.category[1];
}

// ---------------------------------------------------------------------------------------------
// Proxies.

int32_t DynamicTree::CreateProxy(const Aabb& tight, uint32_t user_data, uint32_t category_bits) {
  assert(tight.min.x <= tight.max.x && tight.min.y <= tight.max.y && tight.min.z <= tight.max.z);
  wide_current_ = false;
  // The descent picks a sibling by the boxes on its way: tight ones (a no-op unless moves
  // since the last refit left boxes loose). While the 8-wide form keeps its shape, the binary
  // tree only stages the next collapse: the leaves SetProxyBox marked are written into it later
  // wherever the insertion's rotations put them (PropagateMarkedLeaves reads each leaf's parent
  // then), so the refit waits too, unless EnlargeProxy marked nodes, which it must refit first.
  const bool enlarged =
      root_ != kNullRef && !IsLeafRef(root_) && (info_[root_].flags & kEnlarged) != 0;
  if (!wide_shape_current_ || enlarged) Refit();
  int32_t proxy = AllocateLeaf();
  leaf_box_[proxy] = Expand(tight, options_.fat_margin);
  leaf_user_[proxy] = user_data;
  leaf_category_[proxy] = category_bits;
  InsertLeaf(proxy);
  if (!wide_shape_current_) return proxy;
  // The 8-wide form keeps its shape: the proxy takes a free slot on its way down the form, or
  // else waits in the secondary structure.
  if (wide_leaf_at_.size() < leaf_parent_.size()) wide_leaf_at_.resize(leaf_parent_.size(), -1);
  const int32_t at = FindFreeWideSlot(leaf_box_[proxy]);
  if (at >= 0) {
    wide_.node(at / WideTree::kWidth)
        .Set(at % WideTree::kWidth, LeafRef(proxy), leaf_box_[proxy], category_bits);
    wide_leaf_at_[proxy] = at;
    // Its ancestors take its box with the batch's refit (RefitWide).
    if ((leaf_mark_[proxy] & kWideMarked) == 0) {
      leaf_mark_[proxy] |= kWideMarked;
      wide_dirty_.push_back(proxy);
    }
  } else if (SecondaryCount() >= MaxSecondary()) {
    // The secondary structure is full: the next Optimize collapses the binary tree, which holds
    // every proxy (and a removal no longer searches the list).
    wide_shape_current_ = false;
  } else {
    wide_leaf_at_[proxy] = -1;
    secondary_.push_back(proxy);
  }
  return proxy;
}

void DynamicTree::DestroyProxy(int32_t proxy) {
  assert(IsLiveProxy(proxy));
  wide_current_ = false;
  if (wide_shape_current_ && proxy_count_ > 2) {
    // The 8-wide form keeps its shape: the leaf's slot is emptied (category 0: no query selects
    // it) and the node's ancestors are refitted with the batch (RefitWide).
    const int32_t at = wide_leaf_at_[proxy];
    if (at >= 0) {
      wide_.node(at / WideTree::kWidth).SetEmpty(at % WideTree::kWidth);
      wide_emptied_.push_back(at / WideTree::kWidth);
      wide_has_emptied_ = true;
      wide_leaf_at_[proxy] = -1;
    } else {
      DropSecondary(proxy);
    }
  } else {
    // Fewer than two leaves left: the form goes (a tree of one proxy is queried as a leaf).
    wide_shape_current_ = false;
  }
  RemoveLeaf(proxy);
  leaf_parent_[proxy] = kFreeLeaf;
  leaf_user_[proxy] = static_cast<uint32_t>(free_leaf_);
  free_leaf_ = proxy;
  --proxy_count_;
}

bool DynamicTree::MoveProxy(int32_t proxy, const Aabb& tight) {
  assert(IsLiveProxy(proxy));
  if (Contains(leaf_box_[proxy], tight)) return false;
  wide_current_ = false;
  wide_shape_current_ = false;
  RemoveLeaf(proxy);
  leaf_box_[proxy] = Expand(tight, options_.fat_margin);
  InsertLeaf(proxy);
  return true;
}

bool DynamicTree::EnlargeProxy(int32_t proxy, const Aabb& tight) {
  assert(IsLiveProxy(proxy));
  if (Contains(leaf_box_[proxy], tight)) return false;
  wide_current_ = false;
  if (wide_shape_current_) wide_dirty_.push_back(proxy);
  const Aabb fat = Expand(tight, options_.fat_margin);
  leaf_box_[proxy] = fat;
  int32_t ref = LeafRef(proxy);
  int32_t parent = leaf_parent_[proxy];
  if (parent == kNullNode) return true;  // the root leaf: no box above it
  // The leaf's own slot holds its box exactly.
  nodes_[parent].box[SlotOf(nodes_[parent], ref)] = fat;
  // Grow the ancestors' boxes until one already contains the new box ...
  ref = parent;
  while (true) {
    info_[ref].flags |= kEnlarged;
    int32_t up = info_[ref].parent;
    if (up == kNullNode) return true;
    Aabb& slot_box = nodes_[up].box[SlotOf(nodes_[up], ref)];
    ref = up;
    if (Contains(slot_box, fat)) break;
    slot_box = Union(slot_box, fat);
  }
  // ... and keep marking up to the first marked ancestor, whose own ancestors are all marked:
  // every node with a loose box is marked, and so is every ancestor of a marked node.
  while (ref != kNullNode && (info_[ref].flags & kEnlarged) == 0) {
    info_[ref].flags |= kEnlarged;
    ref = info_[ref].parent;
  }
  return true;
}

void DynamicTree::SetProxyBox(int32_t proxy, const Aabb& box) {
  assert(IsLiveProxy(proxy));
  assert(box.min.x <= box.max.x && box.min.y <= box.max.y && box.min.z <= box.max.z);
  leaf_box_[proxy] = box;
  wide_current_ = false;
  uint8_t& mark = leaf_mark_[proxy];
  if (wide_shape_current_ && (mark & kWideMarked) == 0) {
    mark |= kWideMarked;
    wide_dirty_.push_back(proxy);
  }
  if ((mark & kBinaryMarked) == 0) {
    mark |= kBinaryMarked;
    binary_dirty_.push_back(proxy);
  }
}

void DynamicTree::PropagateMarkedLeaves() {
  for (const int32_t proxy : binary_dirty_) {
    leaf_mark_[proxy] &= static_cast<uint8_t>(~kBinaryMarked);
    if (!IsLiveProxy(proxy)) continue;  // destroyed since its mark
    const int32_t parent = leaf_parent_[proxy];
    if (parent == kNullNode) continue;  // the root leaf: no box above it
    nodes_[parent].box[SlotOf(nodes_[parent], LeafRef(proxy))] = leaf_box_[proxy];
    // Every ancestor of a marked node is marked: stop at the first one already marked.
    for (int32_t ref = parent; ref != kNullNode && (info_[ref].flags & kEnlarged) == 0;
         ref = info_[ref].parent) {
      info_[ref].flags |= kEnlarged;
    }
  }
  binary_dirty_.clear();
}

void DynamicTree::SetCategoryBits(int32_t proxy, uint32_t category_bits) {
  assert(IsLiveProxy(proxy));
  wide_current_ = false;
  if (wide_shape_current_) wide_dirty_.push_back(proxy);
  leaf_category_[proxy] = category_bits;
  int32_t ref = LeafRef(proxy);
  uint32_t bits = category_bits;
  int32_t parent = leaf_parent_[proxy];
  while (parent != kNullNode) {
    Node& p = nodes_[parent];
    uint32_t& slot_bits = p.category[SlotOf(p, ref)];
    if (slot_bits == bits) break;
    slot_bits = bits;
    bits = p.category[0] | p.category[1];
    ref = parent;
    parent = info_[parent].parent;
  }
}

// ---------------------------------------------------------------------------------------------
// Insertion and removal.

int32_t DynamicTree::FindBestSibling(const Aabb& box, int32_t* out_parent,
                                     int32_t* out_slot) const {
  assert(root_ != kNullRef && !IsLeafRef(root_));
  const Vec3 center = Center(box);
  const float area_box = HalfArea(box);

  // Cost of making `index` the sibling: the area of the new parent (direct) plus how much
  // every ancestor grows (inherited). A subtree can only do as well as its lower bound.
  const Aabb root_box = RootBox();
  float area_base = HalfArea(root_box);
  float direct_cost = HalfArea(Union(root_box, box));
  float inherited_cost = 0.0f;

  int32_t best = root_;
  int32_t best_parent = kNullNode;
  int32_t best_slot = 0;
  float best_cost = direct_cost;

  int32_t index = root_;
  int32_t index_parent = kNullNode;
  int32_t index_slot = 0;
  while (true) {
    const Node& node = nodes_[index];
    float cost = direct_cost + inherited_cost;
    if (cost < best_cost) {
      best = index;
      best_parent = index_parent;
      best_slot = index_slot;
      best_cost = cost;
    }
    // Going below this node makes it grow.
    inherited_cost += direct_cost - area_base;

    float direct[2];
    float lower[2];
    bool leaf[2];
    for (int c = 0; c < 2; ++c) {
      leaf[c] = IsLeafRef(node.child[c]);
      direct[c] = HalfArea(Union(node.box[c], box));
      lower[c] = kFloatMax;
      if (leaf[c]) {
        float leaf_cost = direct[c] + inherited_cost;
        if (leaf_cost < best_cost) {
          best = node.child[c];
          best_parent = index;
          best_slot = c;
          best_cost = leaf_cost;
        }
      } else {
        lower[c] = inherited_cost + direct[c] + std::min(area_box - HalfArea(node.box[c]), 0.0f);
      }
    }
    if (leaf[0] && leaf[1]) break;
    if (best_cost <= lower[0] && best_cost <= lower[1]) break;

    int c = lower[1] < lower[0] ? 1 : 0;
    if (lower[0] == lower[1] && !leaf[0] && !leaf[1]) {
      // Tie: go towards the nearer centre.
      Vec3 d0 = Center(node.box[0]) - center;
      Vec3 d1 = Center(node.box[1]) - center;
      c = LengthSquared(d1) < LengthSquared(d0) ? 1 : 0;
    }
    assert(!leaf[c]);
    index_parent = index;
    index_slot = c;
    area_base = HalfArea(node.box[c]);
    direct_cost = direct[c];
    index = node.child[c];
  }
  *out_parent = best_parent;
  *out_slot = best_slot;
  return best;
}

void DynamicTree::InsertLeaf(int32_t proxy) {
  const int32_t ref = LeafRef(proxy);
  const Aabb& box = leaf_box_[proxy];
  if (root_ == kNullRef) {
    root_ = ref;
    leaf_parent_[proxy] = kNullNode;
    return;
  }

  int32_t sibling_parent = kNullNode;
  int32_t sibling_slot = 0;
  int32_t sibling = IsLeafRef(root_) ? root_ : FindBestSibling(box, &sibling_parent, &sibling_slot);

  Aabb sibling_box;
  uint32_t sibling_category;
  if (sibling_parent == kNullNode) {
    sibling_box = RootBox();
    sibling_category = RootCategory();
  } else {
    sibling_box = nodes_[sibling_parent].box[sibling_slot];
    sibling_category = nodes_[sibling_parent].category[sibling_slot];
  }

  int32_t node = AllocateNode();
  Node& n = nodes_[node];
  n.box[0] = sibling_box;
  n.box[1] = box;
  n.child[0] = sibling;
  n.child[1] = ref;
  n.category[0] = sibling_category;
  n.category[1] = leaf_category_[proxy];
  info_[node].parent = sibling_parent;
  info_[node].height = 1 + HeightOf(sibling);
  // Above a marked (loose) subtree the new node is loose too.
  if (!IsLeafRef(sibling)) info_[node].flags = info_[sibling].flags & kEnlarged;
  SetParent(sibling, node);
  leaf_parent_[proxy] = node;

  if (sibling_parent == kNullNode) {
    root_ = node;
    return;
  }
  Node& p = nodes_[sibling_parent];
  p.child[sibling_slot] = node;
  p.box[sibling_slot] = Union(n.box[0], n.box[1]);
  p.category[sibling_slot] = n.category[0] | n.category[1];
  RefitUpwards(sibling_parent, /*rotate=*/true);
}

void DynamicTree::RemoveLeaf(int32_t proxy) {
  const int32_t ref = LeafRef(proxy);
  const int32_t parent = leaf_parent_[proxy];
  if (parent == kNullNode) {
    assert(root_ == ref);
    root_ = kNullRef;
    return;
  }
  const Node& p = nodes_[parent];
  const int slot = SlotOf(p, ref);
  const int32_t sibling = p.child[1 - slot];
  const Aabb sibling_box = p.box[1 - slot];
  const uint32_t sibling_category = p.category[1 - slot];
  const int32_t grand = info_[parent].parent;
  FreeNode(parent);
  leaf_parent_[proxy] = kNullNode;
  if (grand == kNullNode) {
    root_ = sibling;
    SetParent(sibling, kNullNode);
    return;
  }
  Node& g = nodes_[grand];
  const int gslot = SlotOf(g, parent);
  g.child[gslot] = sibling;
  g.box[gslot] = sibling_box;
  g.category[gslot] = sibling_category;
  SetParent(sibling, grand);
  RefitUpwards(grand, /*rotate=*/false);
}

void DynamicTree::RefitUpwards(int32_t from, bool rotate) {
  int32_t index = from;
  while (index != kNullNode) {
    const Node& n = nodes_[index];
    int32_t height = 1 + std::max(HeightOf(n.child[0]), HeightOf(n.child[1]));
    bool height_changed = height != info_[index].height;
    info_[index].height = height;
    if (rotate) RotateNodes(index);

    int32_t parent = info_[index].parent;
    if (parent == kNullNode) return;
    Node& p = nodes_[parent];
    const Node& m = nodes_[index];  // after a rotation
    int slot = SlotOf(p, index);
    // The exact union is a valid box for marked (loose) nodes too, only a tighter one.
    Aabb box = Union(m.box[0], m.box[1]);
    uint32_t category = m.category[0] | m.category[1];
    if (!rotate && !height_changed && box == p.box[slot] && category == p.category[slot]) return;
    p.box[slot] = box;
    p.category[slot] = category;
    index = parent;
  }
}

// ---------------------------------------------------------------------------------------------
// Rotations (Box2D v3): at node A with children B and C, swap a child with a grandchild on the
// other side when that shrinks the node that receives it. A's own box does not change.

void DynamicTree::SwapChildren(int32_t a, int32_t slot_a, int32_t c, int32_t slot_c) {
  Node& na = nodes_[a];
  Node& nc = nodes_[c];
  assert(na.child[1 - slot_a] == c);
  std::swap(na.child[slot_a], nc.child[slot_c]);
  std::swap(na.box[slot_a], nc.box[slot_c]);
  std::swap(na.category[slot_a], nc.category[slot_c]);
  SetParent(na.child[slot_a], a);
  SetParent(nc.child[slot_c], c);
  // C's box in A: the union of its new children's boxes. Marks follow the moved subtree, so an
  // ancestor of a marked node stays marked (A already is one: it was above the moved child).
  const int slot_of_c = 1 - slot_a;
  na.box[slot_of_c] = Union(nc.box[0], nc.box[1]);
  na.category[slot_of_c] = nc.category[0] | nc.category[1];
  int32_t moved_down = nc.child[slot_c];
  if (!IsLeafRef(moved_down) && (info_[moved_down].flags & kEnlarged)) {
    info_[c].flags |= kEnlarged;
  }
  info_[c].height = 1 + std::max(HeightOf(nc.child[0]), HeightOf(nc.child[1]));
  info_[a].height = 1 + std::max(HeightOf(na.child[0]), HeightOf(na.child[1]));
}

void DynamicTree::RotateNodes(int32_t a) {
  const Node& na = nodes_[a];
  if (info_[a].height < 2) return;
  const int32_t b = na.child[0];
  const int32_t c = na.child[1];
  const float area_b = HalfArea(na.box[0]);
  const float area_c = HalfArea(na.box[1]);

  // Each option: the change in area of the node that takes the swapped-in child.
  float best_gain = 0.0f;
  int best = -1;  // 0: B<->F, 1: B<->G, 2: C<->D, 3: C<->E
  if (!IsLeafRef(c)) {
    const Node& nc = nodes_[c];
    // B <-> F: C becomes {B, G}.
    float gain_bf = area_c - HalfArea(Union(na.box[0], nc.box[1]));
    float gain_bg = area_c - HalfArea(Union(na.box[0], nc.box[0]));
    if (gain_bf > best_gain) {
      best_gain = gain_bf;
      best = 0;
    }
    if (gain_bg > best_gain) {
      best_gain = gain_bg;
      best = 1;
    }
  }
  if (!IsLeafRef(b)) {
    const Node& nb = nodes_[b];
    float gain_cd = area_b - HalfArea(Union(na.box[1], nb.box[1]));
    float gain_ce = area_b - HalfArea(Union(na.box[1], nb.box[0]));
    if (gain_cd > best_gain) {
      best_gain = gain_cd;
      best = 2;
    }
    if (gain_ce > best_gain) {
      best_gain = gain_ce;
      best = 3;
    }
  }
  switch (best) {
    case 0:
      SwapChildren(a, 0, c, 0);
      break;
    case 1:
      SwapChildren(a, 0, c, 1);
      break;
    case 2:
      SwapChildren(a, 1, b, 0);
      break;
    case 3:
      SwapChildren(a, 1, b, 1);
      break;
    default:
      break;
  }
}

// ---------------------------------------------------------------------------------------------
// Bulk operations.

void DynamicTree::BuildFromItems() {
  const int32_t count = static_cast<int32_t>(item_refs_.size());
  if (count == 0) {
    root_ = kNullRef;
    return;
  }
  if (count == 1) {
    root_ = item_refs_[0];
    SetParent(root_, kNullNode);
    return;
  }
  builder_.Build(item_boxes_, &built_);
  // Map built nodes to pool nodes (preorder, so consecutive after a pool reset).
  scratch_.resize(built_.size());
  for (size_t i = 0; i < built_.size(); ++i) scratch_[i] = AllocateNode();
  for (size_t i = 0; i < built_.size(); ++i) {
    const BuiltNode& b = built_[i];
    const int32_t index = scratch_[i];
    Node& n = nodes_[index];
    for (int c = 0; c < 2; ++c) {
      n.box[c] = b.box[c];
      int32_t child = b.child[c] >= 0 ? scratch_[b.child[c]] : item_refs_[~b.child[c]];
      n.child[c] = child;
      SetParent(child, index);
    }
  }
  root_ = scratch_[0];
  info_[root_].parent = kNullNode;
  // Children come after their parents in preorder: a reverse sweep sees children first.
  for (size_t i = built_.size(); i-- > 0;) {
    const int32_t index = scratch_[i];
    Node& n = nodes_[index];
    int32_t height = 0;
    for (int c = 0; c < 2; ++c) {
      int32_t child = n.child[c];
      if (IsLeafRef(child)) {
        n.category[c] = leaf_category_[ProxyOf(child)];
      } else {
        const Node& cn = nodes_[child];
        n.category[c] = cn.category[0] | cn.category[1];
      }
      height = std::max(height, HeightOf(child));
    }
    info_[index].height = height + 1;
  }
  ReleaseBuildScratch();
}

void DynamicTree::ReleaseBuildScratch() {
  // A build's scratch (about 100 bytes per item) is idle until the next build, which may never
  // come: free it rather than keep it per tree.
  builder_.Release();
  std::vector<int32_t>().swap(item_refs_);
  std::vector<Aabb>().swap(item_boxes_);
  std::vector<BuiltNode>().swap(built_);
  std::vector<int32_t>().swap(scratch_);
}

void DynamicTree::Build(std::span<const Aabb> tight, std::span<const uint32_t> user,
                        std::span<const uint32_t> category, std::span<int32_t> out_proxies) {
  assert(tight.size() == user.size() && tight.size() == category.size() &&
         tight.size() == out_proxies.size());
  const int32_t n = static_cast<int32_t>(tight.size());
  wide_current_ = false;
  wide_shape_current_ = false;
  // Fresh pools: proxies 0 .. n-1 in input order, nodes in preorder.
  leaf_box_.resize(n);
  leaf_user_.resize(n);
  leaf_category_.resize(n);
  leaf_parent_.resize(n);
  leaf_mark_.assign(n, 0);
  binary_dirty_.clear();
  ++pool_generation_;
  wide_dirty_.clear();
  free_leaf_ = kNullProxy;
  proxy_count_ = n;
  item_refs_.resize(n);
  item_boxes_.resize(n);
  for (int32_t i = 0; i < n; ++i) {
    leaf_box_[i] = Expand(tight[i], options_.fat_margin);
    leaf_user_[i] = user[i];
    leaf_category_[i] = category[i];
    leaf_parent_[i] = kNullNode;
    item_refs_[i] = LeafRef(i);
    item_boxes_[i] = leaf_box_[i];
    out_proxies[i] = i;
  }
  if (static_cast<int32_t>(nodes_.size()) < n) {
    nodes_.resize(n);
    info_.resize(n);
  }
  ResetNodePool();
  BuildFromItems();
}

void DynamicTree::Rebuild() {
  wide_current_ = false;
  wide_shape_current_ = false;
  // The build reads the leaves' own boxes: the marked leaves' slots are rewritten with the rest.
  for (const int32_t proxy : binary_dirty_) {
    leaf_mark_[proxy] &= static_cast<uint8_t>(~kBinaryMarked);
  }
  binary_dirty_.clear();
  item_refs_.clear();
  item_boxes_.clear();
  for (int32_t proxy = 0; proxy < static_cast<int32_t>(leaf_parent_.size()); ++proxy) {
    if (leaf_parent_[proxy] == kFreeLeaf) continue;
    item_refs_.push_back(LeafRef(proxy));
    item_boxes_.push_back(leaf_box_[proxy]);
  }
  ResetNodePool();
  BuildFromItems();
}

void DynamicTree::StartBackgroundRebuild() {
  if (background_.job != nullptr || proxy_count_ < 2) return;
  auto job = std::make_unique<BackgroundJob>();
  job->proxies.reserve(static_cast<size_t>(proxy_count_));
  job->boxes.reserve(static_cast<size_t>(proxy_count_));
  for (int32_t proxy = 0; proxy < static_cast<int32_t>(leaf_parent_.size()); ++proxy) {
    if (leaf_parent_[proxy] == kFreeLeaf) continue;
    job->proxies.push_back(proxy);
    job->boxes.push_back(leaf_box_[proxy]);
  }
  job->pool_generation = pool_generation_;
  BackgroundJob* raw = job.get();
  job->thread = std::thread([raw] {
    raw->builder.Build(raw->boxes, &raw->built);
    raw->builder.Release();
    raw->done.store(true, std::memory_order_release);
  });
  background_.job = std::move(job);
}

bool DynamicTree::FinishBackgroundRebuild(bool wait) {
  BackgroundJob* job = background_.job.get();
  if (job == nullptr) return false;
  if (!wait && !job->done.load(std::memory_order_acquire)) return false;
  job->thread.join();
  const std::unique_ptr<BackgroundJob> owned = std::move(background_.job);
  // A Build since the snapshot replaced the leaf pool: its proxy ids mean nothing now.
  if (job->pool_generation != pool_generation_) return false;
  wide_current_ = false;
  wide_shape_current_ = false;
  // Every box is written below from the leaves' own boxes: the marks are moot.
  for (const int32_t proxy : binary_dirty_) {
    leaf_mark_[proxy] &= static_cast<uint8_t>(~kBinaryMarked);
  }
  binary_dirty_.clear();

  // The built shape over the snapshot's leaves, nodes in preorder from 0. A leaf destroyed since
  // is placed too (its free slot's parent link borrowed) and taken out after; a slot destroyed
  // and taken again since holds a live proxy that keeps the old one's place.
  if (nodes_.size() < job->built.size()) {
    nodes_.resize(job->built.size());
    info_.resize(job->built.size());
  }
  ResetNodePool();
  std::vector<uint8_t> placed(leaf_parent_.size(), 0);
  std::vector<int32_t> gone;
  for (size_t i = 0; i < job->built.size(); ++i) AllocateNode();  // 0, 1, 2, ...
  for (size_t i = 0; i < job->built.size(); ++i) {
    const BuiltNode& b = job->built[i];
    const int32_t index = static_cast<int32_t>(i);
    Node& n = nodes_[index];
    for (int c = 0; c < 2; ++c) {
      int32_t child = b.child[c];
      if (child >= 0) {
        info_[child].parent = index;
      } else {
        const int32_t proxy = job->proxies[static_cast<size_t>(~child)];
        child = LeafRef(proxy);
        if (leaf_parent_[proxy] == kFreeLeaf) gone.push_back(proxy);
        leaf_parent_[proxy] = index;
        placed[proxy] = 1;
      }
      n.child[c] = child;
    }
  }
  root_ = 0;
  info_[0].parent = kNullNode;
  for (const int32_t proxy : gone) {
    RemoveLeaf(proxy);
    leaf_parent_[proxy] = kFreeLeaf;
    placed[proxy] = 0;
  }
  // Children have larger indices than their parents (preorder; a removal lifts a sibling into
  // its grandparent's slot): one backward sweep writes every box, category and height.
  if (root_ != kNullRef && !IsLeafRef(root_)) {
    for (int32_t index = static_cast<int32_t>(nodes_.size()); index-- > 0;) {
      if (info_[index].height < 0) continue;
      Node& n = nodes_[index];
      int32_t height = 0;
      for (int c = 0; c < 2; ++c) {
        const int32_t child = n.child[c];
        if (IsLeafRef(child)) {
          n.box[c] = leaf_box_[ProxyOf(child)];
          n.category[c] = leaf_category_[ProxyOf(child)];
        } else {
          const Node& cn = nodes_[child];
          n.box[c] = Union(cn.box[0], cn.box[1]);
          n.category[c] = cn.category[0] | cn.category[1];
          height = std::max(height, info_[child].height);
        }
      }
      info_[index].height = height + 1;
      info_[index].flags = 0;
    }
  }
  // The proxies created since the snapshot.
  for (int32_t proxy = 0; proxy < static_cast<int32_t>(leaf_parent_.size()); ++proxy) {
    if (leaf_parent_[proxy] != kFreeLeaf && !placed[proxy]) InsertLeaf(proxy);
  }
  return true;
}

void DynamicTree::RebuildEnlarged() {
  PropagateMarkedLeaves();
  if (root_ == kNullRef || IsLeafRef(root_) || (info_[root_].flags & kEnlarged) == 0) return;
  wide_current_ = false;
  wide_shape_current_ = false;
  // Collect the unmarked subtrees (and leaves) hanging below the marked top of the tree, and
  // free the marked nodes.
  item_refs_.clear();
  item_boxes_.clear();
  scratch_.clear();
  scratch_.push_back(root_);
  while (!scratch_.empty()) {
    int32_t index = scratch_.back();
    scratch_.pop_back();
    const Node& n = nodes_[index];
    for (int c = 0; c < 2; ++c) {
      int32_t child = n.child[c];
      if (!IsLeafRef(child) && (info_[child].flags & kEnlarged)) {
        scratch_.push_back(child);
      } else {
        item_refs_.push_back(child);
        item_boxes_.push_back(n.box[c]);
      }
    }
    FreeNode(index);
  }
  if (node_count_ == 0) ResetNodePool();  // everything was marked: lay the nodes out afresh
  BuildFromItems();
}

void DynamicTree::Refit() {
  PropagateMarkedLeaves();
  if (root_ == kNullRef || IsLeafRef(root_) || (info_[root_].flags & kEnlarged) == 0) return;
  wide_current_ = false;
  // Preorder list of the marked nodes, then children before parents in reverse.
  scratch_.clear();
  scratch_.push_back(root_);
  for (size_t i = 0; i < scratch_.size(); ++i) {
    const Node& n = nodes_[scratch_[i]];
    for (int c = 0; c < 2; ++c) {
      int32_t child = n.child[c];
      if (!IsLeafRef(child) && (info_[child].flags & kEnlarged)) scratch_.push_back(child);
    }
  }
  for (size_t i = scratch_.size(); i-- > 0;) {
    const int32_t index = scratch_[i];
    Node& n = nodes_[index];
    for (int c = 0; c < 2; ++c) {
      int32_t child = n.child[c];
      if (IsLeafRef(child)) {
        n.box[c] = leaf_box_[ProxyOf(child)];
      } else {
        const Node& cn = nodes_[child];
        n.box[c] = Union(cn.box[0], cn.box[1]);
      }
    }
    info_[index].flags &= ~kEnlarged;
  }
}

}  // namespace collide
