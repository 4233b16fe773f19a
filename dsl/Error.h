//===- Error.h - User and internal errors of the DSL ------------*- C++ -*-===//
//
// Following Halide, a UserError is the user's mistake: it names the kernel, the
// operation and the user's own source line, states the broken rule and how to
// fix it. An InternalError is kgen's bug. Neither is ever an assert.
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_DSL_ERROR_H
#define KGEN_DSL_ERROR_H

#include <source_location>
#include <stdexcept>
#include <string>

namespace kgen {

/// A position in the user's C++ source.
struct SourceLoc {
  std::string file;
  unsigned line = 0;
  static SourceLoc from(const std::source_location &l) {
    return {l.file_name(), l.line()};
  }
  std::string str() const;
};

class UserError : public std::runtime_error {
public:
  UserError(SourceLoc loc, const std::string &message);
  const SourceLoc &loc() const { return where; }

private:
  SourceLoc where;
};

class InternalError : public std::logic_error {
public:
  explicit InternalError(const std::string &message);
};

/// Throws a UserError "FILE:LINE: error: kernel 'K', OP: WHAT".
[[noreturn]] void userError(const SourceLoc &loc, const std::string &kernel,
                            const std::string &op, const std::string &what);
[[noreturn]] void internalError(const std::string &what);

} // namespace kgen

#endif // KGEN_DSL_ERROR_H
