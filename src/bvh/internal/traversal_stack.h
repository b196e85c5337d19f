#pragma once

#include <cassert>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

namespace collide {

/// A LIFO stack for tree traversals: the first `kInline` entries live inside the object (on the
/// caller's stack, no allocation); beyond that it spills to a heap vector that doubles as needed.
/// Unlike a fixed array it never drops an entry, however deep or degenerate the tree is.
///
/// `T` must be trivially copyable (node references, (reference, distance) pairs). The object
/// points into itself, so it can be neither copied nor moved.
template <typename T, size_t kInline>
class TraversalStack {
  static_assert(std::is_trivially_copyable_v<T>, "entries are copied with memcpy");
  static_assert(kInline >= 1, "the inline part needs at least one entry");

 public:
  /// An empty stack using its inline storage.
  TraversalStack() : data_(inline_), capacity_(kInline) {}
  TraversalStack(const TraversalStack&) = delete;
  TraversalStack& operator=(const TraversalStack&) = delete;

  /// Adds `value` on top; spills to the heap when the current storage is full.
  void Push(const T& value) {
    if (size_ == capacity_) [[unlikely]] {
      Grow();
    }
    data_[size_++] = value;
  }

  /// Removes and returns the top entry; the stack must not be empty.
  T Pop() {
    assert(size_ > 0);
    return data_[--size_];
  }

  /// True when the stack holds no entry.
  bool Empty() const { return size_ == 0; }
  /// The number of entries held.
  size_t Size() const { return size_; }
  /// True once the stack has outgrown its inline storage (for tests and statistics).
  bool Spilled() const { return data_ != inline_; }
  /// Removes every entry (keeps any heap storage for reuse).
  void Clear() { size_ = 0; }

 private:
  // Out of the hot path: doubles the capacity and moves the entries to the heap vector.
  [[gnu::noinline]] void Grow() {
    size_t new_capacity = capacity_ * 2;
    if (data_ == inline_) {
      heap_.resize(new_capacity);
      std::memcpy(static_cast<void*>(heap_.data()), inline_, size_ * sizeof(T));
    } else {
      heap_.resize(new_capacity);  // keeps the first size_ entries
    }
    data_ = heap_.data();
    capacity_ = new_capacity;
  }

  T inline_[kInline];
  std::vector<T> heap_;
  T* data_;
  size_t size_ = 0;
  size_t capacity_;
};

}  // namespace collide
