//===- Error.cpp ----------------------------------------------------------===//
#include "dsl/Error.h"

#include <fmt/format.h>

namespace kgen {

std::string SourceLoc::str() const { return fmt::format("{}:{}", file, line); }

UserError::UserError(SourceLoc loc, const std::string &message)
    : std::runtime_error(message), where(std::move(loc)) {}

InternalError::InternalError(const std::string &message)
    : std::logic_error("kgen internal error: " + message +
                       " (this is a bug in kgen, please report it)") {}

void userError(const SourceLoc &loc, const std::string &kernel,
               const std::string &op, const std::string &what) {
  throw UserError(loc, fmt::format("{}: error: kernel '{}', {}: {}", loc.str(),
                                   kernel, op, what));
}

void internalError(const std::string &what) { throw InternalError(what); }

} // namespace kgen
