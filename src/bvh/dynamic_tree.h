#pragma once

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "bvh/internal/binned_sah_builder.h"
#include "bvh/internal/traversal_stack.h"
#include "bvh/wide_tree.h"
#include "geom/aabb.h"
#include "geom/vec3.h"

namespace collide {
/// The proxy id that names no proxy.
inline constexpr int32_t kNullProxy = -1;

/// The inline capacity of the traversal stacks of the tree's queries; deeper traversals spill to
/// the heap (see TraversalStack).
inline constexpr size_t kDefaultInlineStack = 128;

/// The bytes a DynamicTree holds, by part (each a capacity, not a size).
struct TreeMemory {
  /// Internal nodes: the hot 64-byte nodes and their cold links (parent, height, marks).
  size_t nodes = 0;
  /// The leaf pool: fat boxes, user data, categories, parents.
  size_t leaves = 0;
  /// The 8-wide query form's nodes.
  size_t wide = 0;
  /// Where each leaf and wide node sits in the 8-wide form, and the refit's scratch.
  size_t wide_maps = 0;
  /// Build and refit scratch kept between calls (the binned SAH builder's arrays and items).
  size_t scratch = 0;
  /// The tree object itself.
  size_t fixed = 0;

  size_t Total() const { return nodes + leaves + wide + wide_maps + scratch + fixed; }
  TreeMemory& operator+=(const TreeMemory& o) {
    nodes += o.nodes;
    leaves += o.leaves;
    wide += o.wide;
    wide_maps += o.wide_maps;
    scratch += o.scratch;
    fixed += o.fixed;
    return *this;
  }
};

/// Options of a DynamicTree.
struct DynamicTreeOptions {
  /// Margin added on every side of a proxy's tight box to make its fat box, in length units.
  /// A move whose tight box stays inside the fat box costs nothing. Must be >= 0.
  float fat_margin = 0.1f;
};

/// A dynamic bounding volume hierarchy over axis-aligned boxes ("proxies"), for ray casts, swept
/// box casts and box overlap queries over a scene whose bodies all move a little every tick.
///
/// Structure: a binary tree. Internal nodes live in a pool addressed by index (with a free list)
/// and each one stores the boxes, references and category unions of *both* children in one
/// 64-byte cache line, so one memory access decides both children (parents, heights and marks
/// live in a separate cold array). Proxies are the leaves; a proxy id indexes a separate leaf
/// pool (with its own free list) and stays valid until the proxy is destroyed, across moves,
/// rebuilds and refits. Each leaf keeps a fat box (tight box + `fat_margin`), so small moves
/// leave the tree untouched.
///
/// Queries: after `Optimize`, on an 8-wide copy of the tree (WideTree: eight children's boxes per
/// node as SoA, one AVX slab test for all eight or two SSE ones, a third of the depth); until
/// then, on the binary tree.
///
/// Creations and removals keep the 8-wide form's shape (a collapse costs O(n): 4-7 ms at
/// 100,000 proxies). A removed leaf's slot is emptied and its ancestors refitted with the batch's
/// moves. A created proxy goes into the binary tree, and into the 8-wide form's deepest free slot
/// on its way down by least growth (its ancestors refitted with the batch); when that way has no
/// free slot, into the secondary structure, a small 8-wide tree of its own over such proxies,
/// rebuilt by median splits at each `Optimize` (at most `MaxSecondary()` proxies; one more and
/// `Optimize` collapses the binary tree again, as does any rebuild: the secondary's proxies then
/// join the main form). Queries walk the main form, then the secondary with the distance the
/// main one left. The form's decay (`WideAreaOverLeafArea`) counts the placed leaves.
///
/// Updates, four ways:
/// - `SetProxyBox` on many proxies, then `Optimize` (a scene's batch of moves): each move writes
///   its leaf's exact box and marks the leaf; `Optimize` refits the 8-wide query form bottom-up
///   from the marked leaves once per batch, and the binary tree is refitted only when something
///   reads its boxes (`Refit`, an insertion, a collapse). Nothing is re-inserted; the shape ages,
///   so watch `WideAreaOverLeafArea` and `Rebuild` when it has grown.
/// - `MoveProxy`: when the tight box leaves the fat box, the leaf is removed and re-inserted by
///   the surface area heuristic (Box2D v3's branch-and-bound descent), with tree rotations on
///   the way up. Keeps the tree good at every step; about a microsecond per re-insertion.
/// - `EnlargeProxy` on many proxies, then `Refit` (the cheapest for moving every body each
///   tick; the tree's shape ages, so watch `SahCost` and `Rebuild` when it has grown) or
///   `RebuildEnlarged` (binned SAH over the touched part: best quality, slower).
/// - `Build` / `Rebuild`: binned SAH over everything.
/// Then `Optimize` before the queries.
///
/// Queries are const, allocate nothing (until a traversal is deeper than `kInlineStack`), call
/// their callback inline, and skip subtrees whose category union does not meet the query mask.
/// They may run concurrently with each other, never with a mutation. Inputs are trusted:
/// boxes finite with min <= max, directions non-zero (debug builds assert some of it).
class DynamicTree {
 public:
  /// An empty tree.
  explicit DynamicTree(const DynamicTreeOptions& options = {});

  /// Adds a proxy with tight box `tight` (finite, min <= max), opaque `user_data` and
  /// `category_bits`; returns its id (>= 0), valid until `DestroyProxy`.
  int32_t CreateProxy(const Aabb& tight, uint32_t user_data, uint32_t category_bits);

  /// Removes a live proxy; its id may be reused by a later `CreateProxy`.
  void DestroyProxy(int32_t proxy);

  /// Moves a proxy to tight box `tight`. When `tight` is not inside the fat box, the fat box
  /// becomes `tight` + margin and the leaf is re-inserted; returns true exactly then.
  bool MoveProxy(int32_t proxy, const Aabb& tight);

  /// Deferred variant of `MoveProxy` for moving many proxies at once (Box2D v3's enlarge).
  /// When `tight` is not inside the fat box, the fat box becomes `tight` + margin and the
  /// ancestors' boxes grow to contain it, without changing the tree's shape (the old box is
  /// not subtracted), and the ancestors are marked; returns true exactly then. Queries stay
  /// correct; call `Refit` or `RebuildEnlarged` after the batch to tighten the boxes again.
  bool EnlargeProxy(int32_t proxy, const Aabb& tight);

  /// Writes a proxy's box exactly as `box` (finite, min <= max; no margin added) and marks the
  /// leaf: nothing above it changes. The boxes above the marked leaves are brought up to date
  /// once per batch, bottom-up: the 8-wide query form's by `Optimize` (O(marked leaves + the
  /// nodes above them)), the binary tree's by `Refit` or any change of the tree's shape. Until
  /// `Optimize`, queries would see the boxes from before the mark: call it before any query.
  /// A leaf marked twice is refitted once.
  void SetProxyBox(int32_t proxy, const Aabb& box);

  /// Replaces a proxy's category bits (updates the ancestors' unions).
  void SetCategoryBits(int32_t proxy, uint32_t category_bits);

  /// Replaces the whole content by proxies over `tight[i]`, `user[i]`, `category[i]` (all
  /// spans of the same length), built in one go by binned SAH; writes each new proxy id to
  /// `out_proxies[i]` (same length). Ids from before are invalid afterwards.
  void Build(std::span<const Aabb> tight, std::span<const uint32_t> user,
             std::span<const uint32_t> category, std::span<int32_t> out_proxies);

  /// Rebuilds the tree over all current leaves by binned SAH. Proxy ids, fat boxes, user data
  /// and categories are kept.
  void Rebuild();

  /// Starts a binned SAH build over a snapshot of the live leaves' boxes on a thread of its own,
  /// while the tree goes on taking updates and answering queries; `FinishBackgroundRebuild`
  /// installs it. A no-op when one is already running or the tree holds fewer than two proxies.
  void StartBackgroundRebuild();
  /// True while a build started by `StartBackgroundRebuild` has not been installed.
  bool BackgroundRebuildPending() const { return background_.job != nullptr; }
  /// Installs the background build when it is done (or, with `wait`, once it is): the tree
  /// takes its shape over the snapshot's leaves, drops those destroyed since, inserts those
  /// created since, and refits every box from the leaves' current boxes (the moves made
  /// meanwhile), so it holds exactly the same proxies, boxes and categories as before, in the
  /// new shape. Proxy ids are kept. Returns true when it installed one; `Optimize` then builds
  /// the new 8-wide form.
  bool FinishBackgroundRebuild(bool wait);

  /// Rebuilds by binned SAH only the part of the tree marked by `EnlargeProxy` (subtrees that
  /// no enlarged proxy touched are kept whole and treated as items), then clears the marks.
  void RebuildEnlarged();

  /// Recomputes the boxes of the nodes marked by `EnlargeProxy`, and of those above the leaves
  /// marked by `SetProxyBox`, bottom-up from their children, so they are tight again, and clears
  /// the marks. The tree's shape is unchanged.
  void Refit();

  /// Builds the 8-wide query form (WideTree) from the current tree, O(n): queries use it until
  /// the next change of the tree, then fall back to the binary tree (correct, slower) until the
  /// next `Optimize`. Call it after a batch of updates that queries will follow. A no-op when
  /// nothing changed since the last call (a `MoveProxy` that stays inside the fat box changes
  /// nothing).
  void Optimize();
  /// True when queries run on the 8-wide form (`Optimize` was called after the last change).
  bool IsOptimized() const { return wide_current_; }
  /// The proxies created since the 8-wide form was last collapsed that found no free slot in it,
  /// which queries find in the secondary structure (see the class comment).
  int32_t SecondaryCount() const { return static_cast<int32_t>(secondary_.size()); }
  /// The most proxies the secondary structure holds: one more created, and the next `Optimize`
  /// collapses the binary tree again. An eighth of the proxies, between 8 and 256.
  int32_t MaxSecondary() const { return std::clamp<int32_t>(proxy_count_ / 8, 8, 256); }
  /// Writes an 8-wide form of the current tree (the one `Optimize` makes, a copy of it when it is
  /// current; until then its boxes may predate the leaves marked by `SetProxyBox`) to `out`, leaves
  /// referring to proxy ids; `out` has no root when the tree holds fewer than two proxies. Nodes
  /// are in preorder (parents before children). When `parent_at` is not null it receives, per node,
  /// where its parent refers to it (node * kWidth + slot, -1 for the root). O(n); the tree is
  /// unchanged.
  void CopyWide(WideTree* out, std::vector<int32_t>* parent_at) const;

  /// Calls `f(uint32_t user_data, int32_t proxy) -> bool` for every proxy whose fat box
  /// overlaps the closed box `box` and whose category bits meet `mask`; `f` returns false to
  /// stop the query. Order unspecified.
  template <size_t kInlineStack = kDefaultInlineStack, typename F>
  void QueryAabb(const Aabb& box, uint32_t mask, F&& f) const;

  /// Casts the ray `origin + t * unit_dir`, t in [0, max_distance], against the fat boxes of
  /// the proxies whose category bits meet `mask`, nearer boxes first (approximately: subtrees
  /// are visited in the order of their entry distance). For each proxy whose box the ray enters
  /// at a distance <= the current max distance (0 when the origin is inside the box), calls
  /// `f(uint32_t user_data, int32_t proxy, float max_distance) -> float`:
  /// - a result < 0 stops the query;
  /// - otherwise the current max distance becomes min(current, result): return `max_distance`
  ///   to go on unchanged, the distance of a hit to clip the ray (closest-hit queries; proxies
  ///   whose box is entered at exactly that distance are still visited), 0 to see only the
  ///   proxies whose boxes contain the origin.
  /// `unit_dir` need not be exactly unit (distances are in multiples of it) but must not be
  /// zero; a zero component is fine.
  template <size_t kInlineStack = kDefaultInlineStack, typename F>
  void Raycast(const Vec3& origin, const Vec3& unit_dir, float max_distance, uint32_t mask,
               F&& f) const;

  /// `Raycast` for a moving box of half extents `half_extent` (>= 0) centred on the ray: the
  /// ray is tested against each fat box grown by `half_extent`, which contains the swept box's
  /// Minkowski sum and so also bounds a sphere cast of radius r with `half_extent` = (r, r, r).
  /// Same callback contract as `Raycast`.
  template <size_t kInlineStack = kDefaultInlineStack, typename F>
  void SweptCast(const Vec3& origin, const Vec3& unit_dir, float max_distance,
                 const Vec3& half_extent, uint32_t mask, F&& f) const;

  /// Runs many casts (rays, or boxes swept along them) together, interleaving their traversals
  /// so that one cast's cache misses overlap the others' work. For each cast i, calls
  /// `f(size_t i, uint32_t user_data, int32_t proxy, float max_distance) -> float` on exactly
  /// the proxies, and in the same order, that `SweptCast` with that cast's values would (same
  /// callback contract, per cast); the calls of different casts interleave. Before each leaf
  /// visit, `prefetch_leaf(uint32_t user_data)` lets the caller prefetch its data for that
  /// leaf (it must not read it).
  template <typename F, typename Prefetch>
  void CastBatch(std::span<const BatchCast> casts, F&& f, Prefetch&& prefetch_leaf) const;

  /// The fat box of a live proxy.
  const Aabb& FatAabb(int32_t proxy) const {
    assert(IsLiveProxy(proxy));
    return leaf_box_[proxy];
  }
  /// The user data of a live proxy.
  uint32_t UserData(int32_t proxy) const {
    assert(IsLiveProxy(proxy));
    return leaf_user_[proxy];
  }
  /// The category bits of a live proxy.
  uint32_t CategoryBits(int32_t proxy) const {
    assert(IsLiveProxy(proxy));
    return leaf_category_[proxy];
  }
  /// True when `proxy` names a live proxy of this tree.
  bool IsLiveProxy(int32_t proxy) const {
    return proxy >= 0 && proxy < static_cast<int32_t>(leaf_parent_.size()) &&
           leaf_parent_[proxy] != kFreeLeaf;
  }
  /// The options the tree was made with.
  const DynamicTreeOptions& options() const { return options_; }

  /// The number of edges on the longest root-to-leaf path (0 for zero or one proxy).
  int Height() const;
  /// The number of live proxies (leaves).
  int32_t ProxyCount() const { return proxy_count_; }
  /// The number of internal nodes in use (ProxyCount() - 1 for a non-empty tree).
  int32_t InternalNodeCount() const { return node_count_; }
  /// Bytes held by the tree (pools, including their free capacity, and build scratch).
  size_t MemoryBytes() const { return Memory().Total(); }
  /// MemoryBytes() by part.
  TreeMemory Memory() const;
  /// `AreaOverLeafArea` of the 8-wide query form: the sum of the areas of its slot boxes over
  /// that of its leaf slots (1 without an 8-wide form). Meaningful when `IsOptimized()`; O(nodes
  /// of the form), one sequential pass, so it can watch the tree's decay every few batches
  /// without refitting the binary tree.
  float WideAreaOverLeafArea() const;
  /// The SAH cost: the sum of the areas of all node and leaf boxes over the root's area, i.e.
  /// the expected number of boxes a random line through the root box enters. Compare it with
  /// the value right after a `Rebuild` to decide when to rebuild.
  float SahCost() const;
  /// The sum of the areas of all node and leaf boxes over the sum of the leaves' areas alone
  /// (1 for zero or one proxy). It ranks trees over the same leaves as `SahCost` does, but does
  /// not move with the root box, which grows as a few bodies stray: the steadier measure of a
  /// tree's decay against its value after a build while the bodies drift.
  float AreaOverLeafArea() const;
  /// The shape of the tree, for tests: `leaf_order` receives the live proxies in depth-first
  /// order, and `ranges` one [begin, end) range of `leaf_order` per internal node: the proxies
  /// of its subtree (every subtree's leaves are contiguous in that order). O(n).
  void SubtreeLeafRanges(std::vector<int32_t>* leaf_order,
                         std::vector<std::pair<int32_t, int32_t>>* ranges) const;
  /// Checks every invariant: parent/child links, leaf and node counts, both free lists, each
  /// child box inside its parent's (and equal to the union of its children where not marked by
  /// `EnlargeProxy`), heights, category unions, and when optimized that the 8-wide form holds
  /// every leaf once with its box and category, every child box inside its slot's box, and
  /// category unions. Returns false on the first violation and, when
  /// `why` is not null, points it at a static description. For tests; O(n).
  bool Validate(const char** why = nullptr) const;

  /// The 8-wide query form (current when `IsOptimized()`), for inspection.
  const WideTree& wide_form() const { return wide_; }
  /// The secondary structure's 8-wide tree (current when `IsOptimized()`), for inspection.
  const WideTree& secondary_form() const { return secondary_wide_; }

 private:
  // A child reference: >= 0 is an internal node index, < 0 a leaf with proxy id ~reference.
  static constexpr int32_t kNullRef = std::numeric_limits<int32_t>::min();
  static constexpr int32_t kNullNode = -1;
  // leaf_parent_ of a free proxy slot.
  static constexpr int32_t kFreeLeaf = -2;

  static bool IsLeafRef(int32_t ref) { return ref < 0; }
  static int32_t LeafRef(int32_t proxy) { return ~proxy; }
  static int32_t ProxyOf(int32_t ref) { return ~ref; }

  // The hot part of an internal node: both children's boxes, references and category unions.
  struct alignas(64) Node {
    Aabb box[2];
    int32_t child[2];
    uint32_t category[2];
  };
  static_assert(sizeof(Node) == 64, "one cache line per internal node");

  // The cold part: links and bookkeeping used only by mutations.
  struct NodeInfo {
    int32_t parent;  // kNullNode for the root
    int32_t height;  // -1 while the node is free
    uint32_t flags;
  };
  static constexpr uint32_t kEnlarged = 1;

  // Stack entry of the casts: a reference and the distance at which the ray enters its box.
  struct CastEntry {
    int32_t ref;
    float t;
  };

  int32_t AllocateNode();
  void FreeNode(int32_t node);
  int32_t AllocateLeaf();
  void ResetNodePool();

  void InsertLeaf(int32_t proxy);
  void RemoveLeaf(int32_t proxy);
  // Box2D v3's greedy branch-and-bound descent; returns the sibling reference and its parent
  // node and slot (kNullNode when the sibling is the root).
  int32_t FindBestSibling(const Aabb& box, int32_t* parent, int32_t* slot) const;
  void RotateNodes(int32_t node);
  void SwapChildren(int32_t a, int32_t slot_a, int32_t c, int32_t slot_c);
  // Refreshes, from `from` up to the root, each node's box, category and height in its parent,
  // optionally rotating; stops early when nothing changed (only when not rotating).
  void RefitUpwards(int32_t from, bool rotate);

  int32_t HeightOf(int32_t ref) const { return IsLeafRef(ref) ? 0 : info_[ref].height; }
  int32_t ParentOf(int32_t ref) const {
    return IsLeafRef(ref) ? leaf_parent_[ProxyOf(ref)] : info_[ref].parent;
  }
  void SetParent(int32_t ref, int32_t parent) {
    if (IsLeafRef(ref)) {
      leaf_parent_[ProxyOf(ref)] = parent;
    } else {
      info_[ref].parent = parent;
    }
  }
  static int SlotOf(const Node& parent, int32_t ref) { return parent.child[0] == ref ? 0 : 1; }
  Aabb RootBox() const;
  uint32_t RootCategory() const;

  // Builds over items (child references with their boxes) and makes the result the root.
  void BuildFromItems();
  // Frees the builder's scratch and the item arrays (after a build).
  void ReleaseBuildScratch();
  // Collapses the binary tree into `out` (see Optimize); fills `leaf_at` (sized to the leaf
  // pool) and `parent_at` (appended to) when not null.
  void Collapse(WideTree* out, std::vector<int32_t>* leaf_at,
                std::vector<int32_t>* parent_at) const;
  bool ValidateWide(const char** why) const;
  // Brings wide_ up to date from wide_dirty_ when wide_shape_current_ (see Optimize).
  void RefitWide();
  // Empties wide_dirty_, clearing its leaves' kWideMarked bits.
  void ClearWideDirty();
  // Writes the binary slot of every leaf marked by SetProxyBox and marks its ancestors
  // (kEnlarged) for Refit; empties binary_dirty_.
  void PropagateMarkedLeaves();
  // Builds secondary_wide_ over the current boxes of secondary_'s proxies.
  void BuildSecondary();
  // Takes `proxy` out of secondary_ when it is there.
  void DropSecondary(int32_t proxy);
  // A free slot (node * kWidth + slot) of the 8-wide form for a new leaf of box `box`: the
  // deepest one on the way down by least growth, -1 when that way has none.
  int32_t FindFreeWideSlot(const Aabb& box) const;

  template <bool kSwept, size_t kInlineStack, typename F>
  void CastImpl(const Vec3& origin, const Vec3& unit_dir, float max_distance,
                const Vec3& half_extent, uint32_t mask, F&& f) const;

  DynamicTreeOptions options_;
  int32_t root_ = kNullRef;
  int32_t proxy_count_ = 0;
  int32_t node_count_ = 0;

  std::vector<Node> nodes_;
  std::vector<NodeInfo> info_;
  int32_t free_node_ = kNullNode;

  // Leaves, structure of arrays: queries read only leaf_user_ (and the parents' copies of the
  // boxes and categories).
  std::vector<Aabb> leaf_box_;
  std::vector<uint32_t> leaf_user_;  // next free proxy for free slots
  std::vector<uint32_t> leaf_category_;
  std::vector<int32_t> leaf_parent_;  // kNullNode for a root leaf, kFreeLeaf when free
  int32_t free_leaf_ = kNullProxy;

  // The 8-wide query form and whether it mirrors the binary tree.
  WideTree wide_;
  bool wide_current_ = false;
  // True while wide_ mirrors the binary tree's current structure (no proxy created, destroyed or
  // reinserted and no rebuild since it was built), so that Optimize may refit it instead of
  // rebuilding it: only the slots of the leaves in wide_dirty_ and their ancestors change.
  bool wide_shape_current_ = false;
  // For each proxy, where its leaf sits in wide_ (node * kWidth + slot); for each wide node,
  // where its parent refers to it (-1 for the root).
  std::vector<int32_t> wide_leaf_at_;
  std::vector<int32_t> wide_parent_at_;
  // Proxies whose fat box or category changed since wide_ was last made current.
  std::vector<int32_t> wide_dirty_;
  // Per leaf slot: whether it is listed in wide_dirty_ (kWideMarked, set by SetProxyBox only;
  // other writers may list a leaf twice) and in binary_dirty_ (kBinaryMarked).
  static constexpr uint8_t kWideMarked = 1;
  static constexpr uint8_t kBinaryMarked = 2;
  std::vector<uint8_t> leaf_mark_;
  // Leaves whose box SetProxyBox wrote while their binary slot and ancestors still hold the
  // box from before (PropagateMarkedLeaves).
  std::vector<int32_t> binary_dirty_;
  // Wide nodes whose slot of a destroyed leaf was emptied since the last refit (RefitWide
  // refits them), and whether any slot was emptied since the last collapse.
  std::vector<int32_t> wide_emptied_;
  bool wide_has_emptied_ = false;
  // The secondary structure: the proxies created since the last collapse (in the binary tree,
  // not in wide_; their wide_leaf_at_ is -1) and an 8-wide tree over them, rebuilt by Optimize.
  std::vector<int32_t> secondary_;
  WideTree secondary_wide_;
  // Per wide node: its depth (the root 0), set with wide_parent_at_.
  std::vector<int32_t> wide_depth_;
  // Scratch of RefitWide: the marked nodes, by depth.
  std::vector<uint8_t> wide_node_marked_;
  std::vector<std::vector<int32_t>> wide_level_queue_;

  // A build running on its own thread (StartBackgroundRebuild): its inputs and output are its
  // own, read by the tree only after the thread was joined.
  struct BackgroundJob {
    std::vector<int32_t> proxies;  // the snapshot's leaves
    std::vector<Aabb> boxes;       // and their boxes then
    uint64_t pool_generation = 0;  // the tree's pool_generation_ then
    BinnedSahBuilder builder;
    std::vector<BuiltNode> built;
    std::atomic<bool> done{false};
    std::thread thread;
    ~BackgroundJob() {
      if (thread.joinable()) thread.join();
    }
  };
  // Holds the job; a copy of the tree starts without one.
  struct BackgroundSlot {
    BackgroundSlot() = default;
    BackgroundSlot(const BackgroundSlot&) {}
    BackgroundSlot& operator=(const BackgroundSlot&) { return *this; }
    BackgroundSlot(BackgroundSlot&&) noexcept = default;
    BackgroundSlot& operator=(BackgroundSlot&&) noexcept = default;
    std::unique_ptr<BackgroundJob> job;
  };
  BackgroundSlot background_;
  // Counts Build calls (each replaces the leaf pool).
  uint64_t pool_generation_ = 0;

  // Scratch for the builds.
  BinnedSahBuilder builder_;
  std::vector<int32_t> item_refs_;
  std::vector<Aabb> item_boxes_;
  std::vector<BuiltNode> built_;
  std::vector<int32_t> scratch_;
};

// ---------------------------------------------------------------------------------------------
// Query templates.

template <size_t kInlineStack, typename F>
void DynamicTree::QueryAabb(const Aabb& box, uint32_t mask, F&& f) const {
  if (root_ == kNullRef) return;
  if (IsLeafRef(root_)) {
    int32_t proxy = ProxyOf(root_);
    if ((leaf_category_[proxy] & mask) != 0 && Overlaps(leaf_box_[proxy], box)) {
      f(leaf_user_[proxy], proxy);
    }
    return;
  }
  if (wide_current_) {
    if (!secondary_wide_.HasRoot()) {
      wide_.QueryAabb<kInlineStack>(box, mask, leaf_user_.data(), f);
      return;
    }
    bool stopped = false;
    wide_.QueryAabb<kInlineStack>(box, mask, leaf_user_.data(),
                                  [&](uint32_t user, int32_t proxy) -> bool {
                                    if (f(user, proxy)) return true;
                                    stopped = true;
                                    return false;
                                  });
    if (!stopped) secondary_wide_.QueryAabb<kInlineStack>(box, mask, leaf_user_.data(), f);
    return;
  }
  assert(binary_dirty_.empty() && "SetProxyBox's marks need Optimize before a query");
  TraversalStack<int32_t, kInlineStack> stack;
  const Node* nodes = nodes_.data();
  int32_t index = root_;
  while (true) {
    const Node& node = nodes[index];
    int32_t next = kNullRef;
    for (int c = 0; c < 2; ++c) {
      if ((node.category[c] & mask) == 0 || !Overlaps(node.box[c], box)) continue;
      int32_t child = node.child[c];
      if (IsLeafRef(child)) {
        int32_t proxy = ProxyOf(child);
        if (!f(leaf_user_[proxy], proxy)) return;
      } else if (next == kNullRef) {
        next = child;
      } else {
        stack.Push(child);
      }
    }
    if (next == kNullRef) {
      if (stack.Empty()) return;
      next = stack.Pop();
    }
    index = next;
  }
}

template <size_t kInlineStack, typename F>
void DynamicTree::Raycast(const Vec3& origin, const Vec3& unit_dir, float max_distance,
                          uint32_t mask, F&& f) const {
  CastImpl<false, kInlineStack>(origin, unit_dir, max_distance, Vec3{}, mask, f);
}

template <size_t kInlineStack, typename F>
void DynamicTree::SweptCast(const Vec3& origin, const Vec3& unit_dir, float max_distance,
                            const Vec3& half_extent, uint32_t mask, F&& f) const {
  CastImpl<true, kInlineStack>(origin, unit_dir, max_distance, half_extent, mask, f);
}

template <typename F, typename Prefetch>
void DynamicTree::CastBatch(std::span<const BatchCast> casts, F&& f,
                            Prefetch&& prefetch_leaf) const {
  if (root_ == kNullRef) return;
  if (wide_current_ && !IsLeafRef(root_)) {
    if (!secondary_wide_.HasRoot()) {
      wide_.CastBatch(casts.data(), casts.size(), leaf_user_.data(), f, prefetch_leaf);
      return;
    }
    // The main form interleaved, then each cast through the secondary structure with the
    // distance its callbacks left (negative: stopped), as SweptCast walks them. The distances
    // live in a buffer of the thread's, reused from batch to batch.
    thread_local std::vector<float> reach;
    reach.resize(casts.size());
    for (size_t i = 0; i < casts.size(); ++i) reach[i] = casts[i].max_distance;
    wide_.CastBatch(
        casts.data(), casts.size(), leaf_user_.data(),
        [&](size_t i, uint32_t user, int32_t proxy, float max_distance) -> float {
          const float r = f(i, user, proxy, max_distance);
          reach[i] = r < 0.0f ? -1.0f : std::min(reach[i], r);
          return r;
        },
        prefetch_leaf);
    for (size_t i = 0; i < casts.size(); ++i) {
      const BatchCast& c = casts[i];
      secondary_wide_.Cast<true, kDefaultInlineStack>(
          c.origin, c.unit_dir, reach[i], c.half_extent, c.mask, leaf_user_.data(),
          [&](uint32_t user, int32_t proxy, float max_distance) {
            prefetch_leaf(user);
            return f(i, user, proxy, max_distance);
          });
    }
    return;
  }
  // Without the 8-wide form (the tree changed since Optimize) the casts run one by one.
  for (size_t i = 0; i < casts.size(); ++i) {
    const BatchCast& c = casts[i];
    CastImpl<true, kDefaultInlineStack>(c.origin, c.unit_dir, c.max_distance, c.half_extent, c.mask,
                                        [&](uint32_t user, int32_t proxy, float max_distance) {
                                          return f(i, user, proxy, max_distance);
                                        });
  }
}

template <bool kSwept, size_t kInlineStack, typename F>
void DynamicTree::CastImpl(const Vec3& origin, const Vec3& unit_dir, float max_distance,
                           const Vec3& half_extent, uint32_t mask, F&& f) const {
  if (root_ == kNullRef || !(max_distance >= 0.0f)) return;
  // 1 / 0 = +-inf: the slab of a zero direction component is either all or nothing.
  const Vec3 inv{1.0f / unit_dir.x, 1.0f / unit_dir.y, 1.0f / unit_dir.z};
  // A box grown by h is entered where (min - h - o) * inv and left where (max + h - o) * inv:
  // fold the growth into two shifted origins so each box costs what a plain ray costs.
  const Vec3 lo_origin = kSwept ? origin + half_extent : origin;
  const Vec3 hi_origin = kSwept ? origin - half_extent : origin;
  float t_max = max_distance;

  // The slab test, written so a NaN (0 * inf: the origin on a slab plane of a zero direction
  // component) is ignored the way RayAabbInterval ignores it, which counts the plane as inside.
  auto enter = [&](const Aabb& b, float limit, float* t_enter) {
    float lo_x = (b.min.x - lo_origin.x) * inv.x;
    float hi_x = (b.max.x - hi_origin.x) * inv.x;
    float lo_y = (b.min.y - lo_origin.y) * inv.y;
    float hi_y = (b.max.y - hi_origin.y) * inv.y;
    float lo_z = (b.min.z - lo_origin.z) * inv.z;
    float hi_z = (b.max.z - hi_origin.z) * inv.z;
    // std::min(a, b) is (b < a ? b : a): a NaN second operand yields the first.
    float t0 = std::max(std::max(std::max(0.0f, std::min(lo_x, hi_x)), std::min(lo_y, hi_y)),
                        std::min(lo_z, hi_z));
    float t1 = std::min(std::min(std::min(limit, std::max(hi_x, lo_x)), std::max(hi_y, lo_y)),
                        std::max(hi_z, lo_z));
    *t_enter = t0;
    return t0 <= t1;
  };

  // Returns false when the callback asked to stop.
  auto visit_leaf = [&](int32_t proxy) {
    float result = f(leaf_user_[proxy], proxy, t_max);
    if (result < 0.0f) return false;
    t_max = std::min(t_max, result);
    return true;
  };

  if (IsLeafRef(root_)) {
    int32_t proxy = ProxyOf(root_);
    float t;
    if ((leaf_category_[proxy] & mask) != 0 && enter(leaf_box_[proxy], t_max, &t)) {
      visit_leaf(proxy);
    }
    return;
  }

  if (wide_current_) {
    if (!secondary_wide_.HasRoot()) {
      wide_.Cast<kSwept, kInlineStack>(origin, unit_dir, max_distance, half_extent, mask,
                                       leaf_user_.data(), f);
      return;
    }
    // The main form, then the secondary structure with the distance the callbacks left.
    bool stopped = false;
    wide_.Cast<kSwept, kInlineStack>(origin, unit_dir, max_distance, half_extent, mask,
                                     leaf_user_.data(),
                                     [&](uint32_t user, int32_t proxy, float reach) -> float {
                                       const float r = f(user, proxy, reach);
                                       if (r < 0.0f) {
                                         stopped = true;
                                       } else {
                                         t_max = std::min(t_max, r);
                                       }
                                       return r;
                                     });
    if (!stopped) {
      secondary_wide_.Cast<kSwept, kInlineStack>(origin, unit_dir, t_max, half_extent, mask,
                                                 leaf_user_.data(), f);
    }
    return;
  }
  assert(binary_dirty_.empty() && "SetProxyBox's marks need Optimize before a query");
  TraversalStack<CastEntry, kInlineStack> stack;
  const Node* nodes = nodes_.data();
  int32_t index = root_;
  while (true) {
    const Node& node = nodes[index];
    // (Read only when the child was entered, which sets them; initialised for the compiler,
    // which cannot always see that at -O1.)
    float t0 = 0.0f;
    float t1 = 0.0f;
    bool hit0 = (node.category[0] & mask) != 0 && enter(node.box[0], t_max, &t0);
    bool hit1 = (node.category[1] & mask) != 0 && enter(node.box[1], t_max, &t1);
    int32_t next = kNullRef;
    if (hit0 && hit1) {
      int32_t near = node.child[0];
      int32_t far = node.child[1];
      float t_far = t1;
      if (t1 < t0) {
        near = node.child[1];
        far = node.child[0];
        t_far = t0;
      }
      if (IsLeafRef(near)) {
        if (!visit_leaf(ProxyOf(near))) return;
        // The near leaf may have clipped the ray in front of the far child.
        if (t_far <= t_max) {
          if (IsLeafRef(far)) {
            if (!visit_leaf(ProxyOf(far))) return;
          } else {
            next = far;
          }
        }
      } else {
        next = near;
        // Far children wait, leaves too: the near subtree may clip the ray before them.
        stack.Push({far, t_far});
      }
    } else if (hit0 || hit1) {
      int32_t child = hit0 ? node.child[0] : node.child[1];
      if (IsLeafRef(child)) {
        if (!visit_leaf(ProxyOf(child))) return;
      } else {
        next = child;
      }
    }
    // Nothing to descend into here: take the nearest pending entry still in range.
    while (next == kNullRef) {
      if (stack.Empty()) return;
      CastEntry entry = stack.Pop();
      if (entry.t > t_max) continue;
      if (IsLeafRef(entry.ref)) {
        if (!visit_leaf(ProxyOf(entry.ref))) return;
      } else {
        next = entry.ref;
      }
    }
    index = next;
  }
}

}  // namespace collide
