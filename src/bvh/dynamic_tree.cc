#include "bvh/dynamic_tree.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace collide {
namespace {

constexpr float kFloatMax = std::numeric_limits<float>::max();

}  // namespace

DynamicTree::DynamicTree(const DynamicTreeOptions& options) : options_(options) {
  assert(options.fat_margin >= 0.0f);
}

// ---------------------------------------------------------------------------------------------
// Pools.

int32_t DynamicTree::AllocateNode() {
  if (free_node_ == kNullNode) {
    // Grow by half again and thread the new slots onto the free list in ascending order.
    int32_t old_size = static_cast<int32_t>(nodes_.size());
    int32_t new_size = std::max<int32_t>(16, old_size + old_size / 2);
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
    int32_t new_size = std::max<int32_t>(16, old_size + old_size / 2);
    leaf_box_.resize(new_size);
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
  wide_shape_current_ = false;
  int32_t proxy = AllocateLeaf();
  leaf_box_[proxy] = Expand(tight, options_.fat_margin);
  leaf_user_[proxy] = user_data;
  leaf_category_[proxy] = category_bits;
  InsertLeaf(proxy);
  return proxy;
}

void DynamicTree::DestroyProxy(int32_t proxy) {
  assert(IsLiveProxy(proxy));
  wide_current_ = false;
  wide_shape_current_ = false;
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

void DynamicTree::RebuildEnlarged() {
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

// ---------------------------------------------------------------------------------------------
// The 4-wide query form.

void DynamicTree::Optimize() {
  if (wide_current_) return;
  if (wide_shape_current_ && wide_.HasRoot()) {
    // Only boxes and categories changed since the 4-wide form was built: refit it.
    RefitWide();
    wide_current_ = true;
    return;
  }
  wide_dirty_.clear();
  wide_current_ = true;
  wide_shape_current_ = false;
  wide_leaf_at_.assign(leaf_parent_.size(), -1);
  wide_parent_at_.clear();
  Collapse(&wide_, &wide_leaf_at_, &wide_parent_at_);
  wide_shape_current_ = wide_.HasRoot();
}

void DynamicTree::CopyWide(WideTree* out, std::vector<int32_t>* parent_at) const {
  if (wide_current_ && wide_shape_current_ && wide_.HasRoot()) {
    *out = wide_;
    if (parent_at != nullptr) *parent_at = wide_parent_at_;
    return;
  }
  if (parent_at != nullptr) parent_at->clear();
  Collapse(out, nullptr, parent_at);
}

void DynamicTree::Collapse(WideTree* out, std::vector<int32_t>* leaf_at,
                           std::vector<int32_t>* parent_at) const {
  out->Clear();
  if (root_ == kNullRef || IsLeafRef(root_)) return;  // the binary path handles these
  out->Reserve(static_cast<size_t>(node_count_ / 2 + 1));

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
  // two children while it has a free slot: first those of more than four leaves, the one of
  // largest area first (the upper levels keep the binary tree's surface-area order); then one
  // whose leaves all fit in the free slots (absorbed whole, it costs no node of its own). A
  // child of at most four leaves that does not fit stays a child: it becomes one full node.
  // Opening every child greedily instead leaves the bottom level with half-empty nodes
  // whenever the binary depth is odd (about n/2 nodes instead of n/3). Nodes are written in
  // preorder, the first child's subtree right after its parent.
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
}

void DynamicTree::RefitWide() {
  // A leaf slot takes its leaf's fat box and category; an internal slot the union of its child
  // node's slots, which is exactly the box the binary tree holds for that subtree after Refit
  // (unions of the same fat boxes). Nodes are laid out in preorder (parents before children), so
  // taking marked nodes highest index first finishes every child before its parent.
  wide_node_marked_.resize(static_cast<size_t>(wide_.NodeCount()), 0);
  wide_node_queue_.clear();
  auto mark = [&](int32_t w) {
    if (!wide_node_marked_[w]) {
      wide_node_marked_[w] = 1;
      wide_node_queue_.push_back(w);
      std::push_heap(wide_node_queue_.begin(), wide_node_queue_.end());
    }
  };
  for (int32_t proxy : wide_dirty_) {
    if (!IsLiveProxy(proxy)) continue;
    const int32_t at = wide_leaf_at_[proxy];
    assert(at >= 0);
    const int32_t w = at / WideTree::kWidth;
    WideTree::Node& node = wide_.node(w);
    const int slot = at % WideTree::kWidth;
    node.Set(slot, node.child[slot], leaf_box_[proxy], leaf_category_[proxy]);
    mark(w);
  }
  wide_dirty_.clear();
  while (!wide_node_queue_.empty()) {
    std::pop_heap(wide_node_queue_.begin(), wide_node_queue_.end());
    const int32_t w = wide_node_queue_.back();
    wide_node_queue_.pop_back();
    wide_node_marked_[w] = 0;
    const int32_t up = wide_parent_at_[w];
    if (up < 0) continue;
    const WideTree::Node& node = wide_.node(w);
    Aabb box;
    uint32_t category = 0;
    bool first = true;
    for (int i = 0; i < WideTree::kWidth; ++i) {
      if (node.child[i] == kNullRef) continue;
      const Aabb slot{{node.min_x[i], node.min_y[i], node.min_z[i]},
                      {node.max_x[i], node.max_y[i], node.max_z[i]}};
      box = first ? slot : Union(box, slot);
      first = false;
      category |= node.category[i];
    }
    WideTree::Node& parent = wide_.node(up / WideTree::kWidth);
    const int slot = up % WideTree::kWidth;
    parent.Set(slot, parent.child[slot], box, category);
    mark(up / WideTree::kWidth);
  }
}

// ---------------------------------------------------------------------------------------------
// Statistics and validation.

int DynamicTree::Height() const {
  if (root_ == kNullRef || IsLeafRef(root_)) return 0;
  return info_[root_].height;
}

size_t DynamicTree::MemoryBytes() const {
  return sizeof(*this) + nodes_.capacity() * sizeof(Node) + info_.capacity() * sizeof(NodeInfo) +
         leaf_box_.capacity() * sizeof(Aabb) + leaf_user_.capacity() * sizeof(uint32_t) +
         leaf_category_.capacity() * sizeof(uint32_t) + leaf_parent_.capacity() * sizeof(int32_t) +
         builder_.MemoryBytes() + item_refs_.capacity() * sizeof(int32_t) +
         item_boxes_.capacity() * sizeof(Aabb) + built_.capacity() * sizeof(BuiltNode) +
         scratch_.capacity() * sizeof(int32_t) + wide_.MemoryBytes();
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

bool DynamicTree::Validate(const char** why) const {
  auto fail = [why](const char* reason) {
    if (why != nullptr) *why = reason;
    return false;
  };
  if (nodes_.size() != info_.size()) return fail("node pool arrays differ in size");
  const size_t leaf_capacity = leaf_parent_.size();
  if (leaf_box_.size() != leaf_capacity || leaf_user_.size() != leaf_capacity ||
      leaf_category_.size() != leaf_capacity) {
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
        if (!(box == leaf_box_[proxy])) return fail("leaf slot box differs from the fat box");
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
  std::vector<uint8_t> seen_node(static_cast<size_t>(wide_.NodeCount()), 0);
  std::vector<uint8_t> seen_leaf(leaf_parent_.size(), 0);
  std::vector<int32_t> stack{wide_.root()};
  int32_t leaves = 0;
  while (!stack.empty()) {
    const int32_t index = stack.back();
    stack.pop_back();
    if (index < 0 || index >= wide_.NodeCount()) return fail("bad wide node index");
    if (seen_node[index]) return fail("wide node reached twice");
    seen_node[index] = 1;
    const WideTree::Node& n = wide_.node(index);
    int used = 0;
    for (int i = 0; i < WideTree::kWidth; ++i) {
      const int32_t child = n.child[i];
      const Aabb box{{n.min_x[i], n.min_y[i], n.min_z[i]}, {n.max_x[i], n.max_y[i], n.max_z[i]}};
      if (child == kNullRef) {
        if (n.category[i] != 0) return fail("unused wide slot with a category");
        continue;
      }
      ++used;
      if (IsLeafRef(child)) {
        const int32_t proxy = ProxyOf(child);
        if (proxy >= static_cast<int32_t>(leaf_parent_.size()) ||
            leaf_parent_[proxy] == kFreeLeaf) {
          return fail("wide leaf is not a live proxy");
        }
        if (seen_leaf[proxy]) return fail("wide leaf reached twice");
        seen_leaf[proxy] = 1;
        ++leaves;
        if (!(box == leaf_box_[proxy])) return fail("wide leaf box differs from the fat box");
        if (n.category[i] != leaf_category_[proxy]) return fail("wide leaf category differs");
      } else {
        if (child >= wide_.NodeCount()) return fail("bad wide child index");
        const WideTree::Node& c = wide_.node(child);
        uint32_t category = 0;
        for (int k = 0; k < WideTree::kWidth; ++k) {
          if (c.child[k] == kNullRef) continue;
          const Aabb inner{{c.min_x[k], c.min_y[k], c.min_z[k]},
                           {c.max_x[k], c.max_y[k], c.max_z[k]}};
          if (!Contains(box, inner)) return fail("wide child box not inside its slot's box");
          category |= c.category[k];
        }
        if (category != n.category[i]) return fail("wide category union differs");
        stack.push_back(child);
      }
    }
    if (used < 2) return fail("wide node with fewer than two children");
  }
  if (leaves != proxy_count_) return fail("wide form does not hold every leaf");
  return true;
}

}  // namespace collide
