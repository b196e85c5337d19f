#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <utility>

#include "absl/base/thread_annotations.h"

namespace collide {

// A std::mutex that carries Clang's thread-safety annotations, so members it guards can be
// declared ABSL_GUARDED_BY it (std::mutex itself is not annotated), and a condition variable
// for it. Plain pthread primitives underneath: ThreadSanitizer sees through them (it does not
// see through Debian's uninstrumented absl::Mutex; see rw_mutex.h).

/// An exclusive lock. Not reentrant. `lock` / `unlock` make it BasicLockable, for
/// std::unique_lock<Mutex> where a hold ends before its scope does.
class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  /// Takes the lock.
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  /// Releases the lock.
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  /// As Lock, for std::unique_lock.
  void lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  /// As Unlock, for std::unique_lock.
  void unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

/// Holds a Mutex for its lifetime.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

/// A std::condition_variable for a Mutex held through a std::unique_lock<Mutex>. Each wait
/// releases the lock while it sleeps and holds it again when it returns, as std's do.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  /// Waits until notified (or woken spuriously).
  void Wait(std::unique_lock<Mutex>& lock) {
    Native native(lock);
    cv_.wait(native.lock);
  }
  /// Waits until `done()` holds.
  template <typename Predicate>
  void Wait(std::unique_lock<Mutex>& lock, Predicate done) {
    Native native(lock);
    cv_.wait(native.lock, std::move(done));
  }
  /// Waits until `done()` holds or `timeout` passed; returns `done()`.
  template <typename Rep, typename Period, typename Predicate>
  bool WaitFor(std::unique_lock<Mutex>& lock, std::chrono::duration<Rep, Period> timeout,
               Predicate done) {
    Native native(lock);
    return cv_.wait_for(native.lock, timeout, std::move(done));
  }
  /// Waits until notified, woken spuriously, or `deadline`.
  template <typename Clock, typename Duration>
  void WaitUntil(std::unique_lock<Mutex>& lock, std::chrono::time_point<Clock, Duration> deadline) {
    Native native(lock);
    cv_.wait_until(native.lock, deadline);
  }

  /// Wakes one waiter.
  void NotifyOne() { cv_.notify_one(); }
  /// Wakes every waiter.
  void NotifyAll() { cv_.notify_all(); }

 private:
  // The std::mutex under a held std::unique_lock<Mutex>, as the std::unique_lock<std::mutex>
  // std::condition_variable waits with; hands the hold back on destruction.
  struct Native {
    explicit Native(std::unique_lock<Mutex>& held) : lock(held.mutex()->mu_, std::adopt_lock) {}
    ~Native() { lock.release(); }
    std::unique_lock<std::mutex> lock;
  };

  std::condition_variable cv_;
};

}  // namespace collide
