//===- Profile.h - Tuning profiles: measured choices as data ----*- C++ -*-===//
//
// A profile gives values to the tuning options of kgen's passes (Passes.td:
// thresholds, variant sets, register caps, prefetch). The passes' own
// defaults are the generic profile; a profile names only what it changes,
// over the built-in profile it inherits. The built-in profiles are the JSON
// files of codegen/Profiles, embedded in the library; a user's profile is a
// file of the same form (docs/tools.md, "Tuning profiles").
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_CODEGEN_PIPELINE_PROFILE_H
#define KGEN_CODEGEN_PIPELINE_PROFILE_H

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kgen::codegen {

struct TuningProfile {
  std::string name;               ///< "sm_90", or a user file's own
  std::string about;              ///< what it is for, where its numbers are
  std::vector<std::string> archs; ///< the archs it is for; empty: any
  /// Pass argument ("kgen-schedule") -> option ("max-held-threads") -> value
  /// as the pass parses it ("512", "true", "2048,4096").
  std::map<std::string, std::map<std::string, std::string>> options;
  /// The profiles it was resolved from, itself first ("sm_90", "generic").
  std::vector<std::string> chain;

  bool covers(const std::string &arch) const;
};

/// The built-in profiles' names.
std::vector<std::string> builtinProfiles();

/// Reads a built-in profile by name or, failing that, a JSON file by path,
/// with what it inherits resolved. On failure returns false and sets
/// `error`. This checks the file's form only: Compiler::checkProfile checks
/// its options against the passes.
bool loadProfile(const std::string &nameOrPath, TuningProfile &out,
                 std::string &error);

/// The same from JSON text; `source` names it in errors.
bool parseProfile(std::string_view text, const std::string &source,
                  TuningProfile &out, std::string &error);

/// `profile` as a file loadProfile reads back to the same options, resolved:
/// every option it holds, nothing inherited.
std::string writeProfile(const TuningProfile &profile);

} // namespace kgen::codegen

#endif // KGEN_CODEGEN_PIPELINE_PROFILE_H
