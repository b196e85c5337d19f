#pragma once

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

// ThreadSanitizer sees through pthread mutexes but not through absl::Mutex when Abseil itself was
// built without -fsanitize=thread (Debian's is): its lock words are atomics inside an
// uninstrumented library, so every access the mutex protects would look like a race. Under TSan
// the wrapper below tells the sanitizer about each acquire and release itself. These are the
// sanitizer runtime's public annotation entry points (sanitizer/tsan_interface.h), declared here
// so that this header includes nothing outside the standard library and Abseil.
#if defined(__SANITIZE_THREAD__)
#define COLLIDE_TSAN_ANNOTATIONS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define COLLIDE_TSAN_ANNOTATIONS 1
#endif
#endif

#ifdef COLLIDE_TSAN_ANNOTATIONS
extern "C" {
void __tsan_mutex_create(void* addr, unsigned flags);
void __tsan_mutex_destroy(void* addr, unsigned flags);
void __tsan_mutex_pre_lock(void* addr, unsigned flags);
void __tsan_mutex_post_lock(void* addr, unsigned flags, int recursion);
int __tsan_mutex_pre_unlock(void* addr, unsigned flags);
void __tsan_mutex_post_unlock(void* addr, unsigned flags);
}
#endif

namespace collide {

/// A reader/writer lock: an absl::Mutex (which queues new readers behind a waiting writer, so a
/// stream of readers cannot starve writers), made visible to ThreadSanitizer. Not reentrant.
class ABSL_LOCKABLE RwMutex {
 public:
  RwMutex() {
#ifdef COLLIDE_TSAN_ANNOTATIONS
    __tsan_mutex_create(this, 0);
#endif
  }
  ~RwMutex() {
#ifdef COLLIDE_TSAN_ANNOTATIONS
    __tsan_mutex_destroy(this, 0);
#endif
  }
  RwMutex(const RwMutex&) = delete;
  RwMutex& operator=(const RwMutex&) = delete;

  /// Takes the lock exclusively.
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    PreLock(0);
    mu_.Lock();
    PostLock(0);
  }
  /// Releases an exclusive hold.
  void Unlock() ABSL_UNLOCK_FUNCTION() {
    PreUnlock(0);
    mu_.Unlock();
    PostUnlock(0);
  }
  /// Takes the lock shared with other readers.
  void ReaderLock() ABSL_SHARED_LOCK_FUNCTION() {
    PreLock(kRead);
    mu_.ReaderLock();
    PostLock(kRead);
  }
  /// Releases a shared hold.
  void ReaderUnlock() ABSL_UNLOCK_FUNCTION() {
    PreUnlock(kRead);
    mu_.ReaderUnlock();
    PostUnlock(kRead);
  }

 private:
#ifdef COLLIDE_TSAN_ANNOTATIONS
  static constexpr unsigned kRead = 1u << 3;  // __tsan_mutex_read_lock
  void PreLock(unsigned flags) { __tsan_mutex_pre_lock(this, flags); }
  void PostLock(unsigned flags) { __tsan_mutex_post_lock(this, flags, 0); }
  void PreUnlock(unsigned flags) { __tsan_mutex_pre_unlock(this, flags); }
  void PostUnlock(unsigned flags) { __tsan_mutex_post_unlock(this, flags); }
#else
  static constexpr unsigned kRead = 0;
  static void PreLock(unsigned) {}
  static void PostLock(unsigned) {}
  static void PreUnlock(unsigned) {}
  static void PostUnlock(unsigned) {}
#endif

  absl::Mutex mu_;
};

/// Holds an RwMutex exclusively for its lifetime.
class ABSL_SCOPED_LOCKABLE WriterLock {
 public:
  explicit WriterLock(RwMutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_->Lock(); }
  ~WriterLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  RwMutex* const mu_;
};

/// Holds an RwMutex shared for its lifetime.
class ABSL_SCOPED_LOCKABLE ReaderLock {
 public:
  explicit ReaderLock(RwMutex* mu) ABSL_SHARED_LOCK_FUNCTION(mu) : mu_(mu) { mu_->ReaderLock(); }
  ~ReaderLock() ABSL_UNLOCK_FUNCTION() { mu_->ReaderUnlock(); }
  ReaderLock(const ReaderLock&) = delete;
  ReaderLock& operator=(const ReaderLock&) = delete;

 private:
  RwMutex* const mu_;
};

}  // namespace collide
