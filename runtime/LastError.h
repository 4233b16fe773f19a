//===- LastError.h - The message kgen_last_error() returns ------*- C++ -*-===//
//
// One message per thread, shared by every file of the C API, and the wrapper
// that keeps exceptions from crossing it. Header-only, so that any file of
// the runtime may report without a build change. Private to the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef KGEN_RUNTIME_LASTERROR_H
#define KGEN_RUNTIME_LASTERROR_H

#include "runtime/PerThread.h"
#include "runtime/kgen_runtime.h"

#include <exception>
#include <string>
#include <utility>

namespace kgen::rt {

namespace detail {
struct LastError {
  std::string text;
};

/// This thread's message; a call after the thread's thread-locals are gone
/// (from a static destructor at exit) gets a process-wide one.
inline std::string &lastErrorText() {
  if (LastError *e = perThread<LastError>())
    return e->text;
  static std::string *late = new std::string();
  return *late;
}
} // namespace detail

/// Sets this thread's message and returns `status`.
inline kgen_status setLastError(kgen_status status, std::string message) {
  detail::lastErrorText() = std::move(message);
  return status;
}

/// Clears this thread's message and returns KGEN_OK.
inline kgen_status clearLastError() {
  detail::lastErrorText().clear();
  return KGEN_OK;
}

/// This thread's message: "" after a success, never NULL.
inline const char *lastErrorMessage() {
  return detail::lastErrorText().c_str();
}

/// Clears the message and runs `body` (returning a kgen_status); any
/// exception (in practice std::bad_alloc) becomes KGEN_ERROR_INTERNAL,
/// since nothing may throw across the C API.
template <typename Body> kgen_status guarded(Body &&body) noexcept {
  try {
    clearLastError();
    return body();
  } catch (const std::exception &e) {
    try {
      return setLastError(KGEN_ERROR_INTERNAL,
                          std::string("kgen: internal error: ") + e.what());
    } catch (...) {
    }
  } catch (...) {
  }
  return KGEN_ERROR_INTERNAL;
}

} // namespace kgen::rt

#endif // KGEN_RUNTIME_LASTERROR_H
