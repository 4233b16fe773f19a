//===- Profile.cpp - Reading tuning profiles ------------------------------===//
//
// llvm::json reads the text (LLVM's kept JSON library, already linked); this
// file checks the profile's form. The values' meaning is the passes' to
// check (Compiler::checkProfile).
//
//===----------------------------------------------------------------------===//
#include "codegen/Pipeline/Profile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>

namespace kgen::codegen {
namespace {

struct Builtin {
  const char *name;
  const char *text;
};

// {name, JSON text} of each file of codegen/Profiles (written by CMake).
const Builtin kBuiltins[] = {
#include "codegen/Pipeline/Profiles.inc"
};

/// A profile is a few dozen values: past these it is not one.
constexpr size_t kMaxProfileBytes = 64 * 1024;
constexpr int kMaxNesting = 8;
constexpr size_t kMaxInherits = 8;

/// The deepest nesting of arrays and objects in `text`, outside strings:
/// checked before llvm::json, whose parser recurses once a level.
int nesting(std::string_view text) {
  int depth = 0, most = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      most = std::max(most, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return most;
}

/// The text a pass option parses for a JSON value: a bool, an integer, or
/// an array of integers (a list option).
bool optionText(const llvm::json::Value &v, std::string &out) {
  if (auto b = v.getAsBoolean()) {
    out = *b ? "true" : "false";
    return true;
  }
  if (auto i = v.getAsInteger()) {
    out = std::to_string(*i);
    return true;
  }
  if (const llvm::json::Array *a = v.getAsArray()) {
    std::vector<std::string> items;
    for (const llvm::json::Value &e : *a) {
      auto i = e.getAsInteger();
      if (!i)
        return false;
      items.push_back(std::to_string(*i));
    }
    out = llvm::join(items, ",");
    return true;
  }
  return false;
}

bool parseOne(std::string_view text, const std::string &source,
              TuningProfile &out, std::string &inherits, std::string &error) {
  auto fail = [&](const std::string &msg) {
    error = source + ": " + msg;
    return false;
  };
  if (text.size() > kMaxProfileBytes)
    return fail("more than " + std::to_string(kMaxProfileBytes) +
                " bytes; a profile is a few dozen values");
  if (nesting(text) > kMaxNesting)
    return fail("nested more than " + std::to_string(kMaxNesting) +
                " levels deep");
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed)
    return fail(llvm::toString(parsed.takeError()));
  const llvm::json::Object *top = parsed->getAsObject();
  if (!top)
    return fail("a profile is a JSON object");
  for (const auto &kv : *top)
    if (!llvm::is_contained(
            {"profile", "about", "archs", "inherits", "options"}, kv.first))
      return fail("unknown key '" + kv.first.str() +
                  "' (profile, about, archs, inherits, options)");
  auto name = top->getString("profile");
  if (!name || name->empty())
    return fail("needs \"profile\": its name, a non-empty string");
  out.name = name->str();
  if (const llvm::json::Value *v = top->get("about")) {
    if (!v->getAsString())
      return fail("\"about\" must be a string");
    out.about = v->getAsString()->str();
  }
  if (const llvm::json::Value *v = top->get("inherits")) {
    if (!v->getAsString() || v->getAsString()->empty())
      return fail("\"inherits\" must name a built-in profile");
    inherits = v->getAsString()->str();
  }
  if (const llvm::json::Value *v = top->get("archs")) {
    const llvm::json::Array *a = v->getAsArray();
    if (!a || a->empty())
      return fail("\"archs\" must be a non-empty array of arch names");
    for (const llvm::json::Value &e : *a) {
      if (!e.getAsString())
        return fail("\"archs\" must be a non-empty array of arch names");
      out.archs.push_back(e.getAsString()->str());
    }
  }
  if (const llvm::json::Value *v = top->get("options")) {
    const llvm::json::Object *passes = v->getAsObject();
    if (!passes)
      return fail("\"options\" must map pass names to objects of options");
    for (const auto &[pass, opts] : *passes) {
      const llvm::json::Object *o = opts.getAsObject();
      if (!o)
        return fail("options of '" + pass.str() +
                    "' must be an object of option values");
      for (const auto &[option, value] : *o) {
        std::string text;
        if (!optionText(value, text))
          return fail("option '" + option.str() + "' of '" + pass.str() +
                      "' must be a bool, an integer or an array of integers");
        out.options[pass.str()][option.str()] = text;
      }
    }
  }
  return true;
}

const Builtin *findBuiltin(const std::string &name) {
  for (const Builtin &b : kBuiltins)
    if (name == b.name)
      return &b;
  return nullptr;
}

/// Resolves `inherits` into `out`: the parent's options, then out's own.
bool resolve(TuningProfile &out, std::string inherits, std::string &error) {
  out.chain = {out.name};
  TuningProfile merged = out;
  while (!inherits.empty()) {
    const Builtin *b = findBuiltin(inherits);
    if (!b) {
      error = out.name + ": inherits '" + inherits +
              "', which is not a built-in profile (" +
              llvm::join(builtinProfiles(), ", ") + ")";
      return false;
    }
    if (llvm::is_contained(out.chain, inherits) ||
        out.chain.size() >= kMaxInherits) {
      error = out.name + ": inherits in a cycle (" +
              llvm::join(out.chain, " -> ") + " -> " + inherits + ")";
      return false;
    }
    TuningProfile parent;
    std::string next;
    if (!parseOne(b->text, std::string("built-in profile ") + b->name, parent,
                  next, error))
      return false;
    out.chain.push_back(parent.name);
    for (const auto &[pass, opts] : parent.options)
      for (const auto &[option, value] : opts)
        merged.options[pass].try_emplace(option, value);
    if (merged.archs.empty())
      merged.archs = parent.archs;
    inherits = next;
  }
  merged.chain = out.chain;
  out = std::move(merged);
  return true;
}

} // namespace

bool TuningProfile::covers(const std::string &arch) const {
  return archs.empty() || llvm::is_contained(archs, arch);
}

std::vector<std::string> builtinProfiles() {
  std::vector<std::string> names;
  for (const Builtin &b : kBuiltins)
    names.emplace_back(b.name);
  return names;
}

bool parseProfile(std::string_view text, const std::string &source,
                  TuningProfile &out, std::string &error) {
  out = TuningProfile();
  std::string inherits;
  return parseOne(text, source, out, inherits, error) &&
         resolve(out, inherits, error);
}

std::string writeProfile(const TuningProfile &profile) {
  // Back from the pass's text: a bool, an integer, else a list (a list of
  // one reads as that integer, which the list option parses alike).
  auto value = [](const std::string &text) -> llvm::json::Value {
    if (text == "true" || text == "false")
      return text == "true";
    int64_t v;
    if (!llvm::StringRef(text).getAsInteger(10, v))
      return v;
    llvm::json::Array items;
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(text).split(parts, ',', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef part : parts)
      if (!part.trim().getAsInteger(10, v))
        items.push_back(v);
    return items;
  };
  llvm::json::Object options;
  for (const auto &[pass, values] : profile.options) {
    llvm::json::Object o;
    for (const auto &[name, text] : values)
      o[name] = value(text);
    options[pass] = std::move(o);
  }
  llvm::json::Object top{{"profile", profile.name},
                         {"about", profile.about},
                         {"options", std::move(options)}};
  if (!profile.archs.empty())
    top["archs"] = llvm::json::Array(profile.archs);
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(top))) << "\n";
  return out;
}

bool loadProfile(const std::string &nameOrPath, TuningProfile &out,
                 std::string &error) {
  if (const Builtin *b = findBuiltin(nameOrPath))
    return parseProfile(b->text, std::string("built-in profile ") + b->name,
                        out, error);
  auto notOne = [&](const std::string &why) {
    error = "'" + nameOrPath + "' is neither a built-in profile (" +
            llvm::join(builtinProfiles(), ", ") + ") nor " + why;
    return false;
  };
  // Only a regular file of a profile's size is read (not a device or FIFO).
  uint64_t size = 0;
  if (!llvm::sys::fs::is_regular_file(nameOrPath) ||
      llvm::sys::fs::file_size(nameOrPath, size))
    return notOne("a regular file");
  if (size > kMaxProfileBytes)
    return notOne("a profile: more than " + std::to_string(kMaxProfileBytes) +
                  " bytes");
  auto buffer = llvm::MemoryBuffer::getFile(nameOrPath, /*IsText=*/true);
  if (!buffer)
    return notOne("a readable file (" + buffer.getError().message() + ")");
  return parseProfile((*buffer)->getBuffer(), nameOrPath, out, error);
}

} // namespace kgen::codegen
