//===- PerThread.h - Per-thread state that outlives thread exit -*- C++ -*-===//
//
// Launches and their errors may come from static destructors at exit, after
// the thread's thread-local objects are destroyed. Private to the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef KGEN_RUNTIME_PERTHREAD_H
#define KGEN_RUNTIME_PERTHREAD_H

namespace kgen::rt {

/// This thread's T (one per thread across every file: an inline template),
/// or nullptr once the thread's thread-locals are destroyed; the caller then
/// uses a T of its own. The flag is trivially destructible, so it stays
/// readable then.
template <typename T> T *perThread() {
  static thread_local bool gone = false;
  struct Holder {
    T value;
    ~Holder() { gone = true; }
  };
  if (gone)
    return nullptr;
  static thread_local Holder holder;
  return &holder.value;
}

} // namespace kgen::rt

#endif // KGEN_RUNTIME_PERTHREAD_H
