//===- Spec.cpp - The kernel spec (JSON, version 2) -----------------------===//

#include "runtime/Spec.h"

#include "runtime/Json.h"
#include "runtime/LaunchPolicy.h"

#include <algorithm>
#include <cfloat>
#include <charconv>
#include <climits>
#include <cmath>

namespace kgen::rt {

namespace {

struct DtypeEntry {
  const char *name;
  kgen_dtype dtype;
  int64_t size;
};

constexpr DtypeEntry Dtypes[] = {
    {"f32", KGEN_F32, 4},       {"f16", KGEN_F16, 2},
    {"bf16", KGEN_BF16, 2},     {"f8e4m3", KGEN_F8E4M3, 1},
    {"f8e5m2", KGEN_F8E5M2, 1}, {"i32", KGEN_I32, 4},
    {"i64", KGEN_I64, 8},       {"i8", KGEN_I8, 1},
};

} // namespace

bool isValidDtype(int dtype) { return dtype >= KGEN_F32 && dtype <= KGEN_I8; }

const char *dtypeName(kgen_dtype dtype) {
  for (const auto &e : Dtypes)
    if (e.dtype == dtype)
      return e.name;
  return "<invalid dtype>";
}

int64_t dtypeSize(kgen_dtype dtype) {
  for (const auto &e : Dtypes)
    if (e.dtype == dtype)
      return e.size;
  return 0;
}

bool parseDtype(std::string_view name, kgen_dtype &out) {
  for (const auto &e : Dtypes) {
    if (name == e.name) {
      out = e.dtype;
      return true;
    }
  }
  return false;
}

const char *argKindName(kgen_arg_kind kind) {
  switch (kind) {
  case KGEN_ARG_TENSOR:
    return "tensor";
  case KGEN_ARG_SCALAR:
    return "scalar";
  case KGEN_ARG_DIM:
    return "dim";
  }
  return "<invalid kind>";
}

int Spec::findParam(std::string_view name) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == name)
      return static_cast<int>(i);
  return -1;
}

namespace {

using json::Value;

bool isIdentifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9'))
    return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

bool isHex(std::string_view s) {
  if (s.empty())
    return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
          (c >= 'A' && c <= 'F')))
      return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ')
    s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ')
    s.remove_suffix(1);
  return s;
}

/// Reads typed members of JSON objects; every message is prefixed with the
/// path of the object ("params[2]", "variants[0].tensor_align", ...).
class SpecReader {
public:
  explicit SpecReader(std::string &err) : err(err) {}

  bool fail(const std::string &path, const std::string &what) {
    err = path.empty() ? what : path + ": " + what;
    return false;
  }

  const Value *member(const Value &obj, const std::string &path,
                      const char *key, bool required) {
    const Value *v = obj.find(key);
    if (!v && required)
      fail(path, std::string("missing required key '") + key + "'");
    return v;
  }

  bool expectKind(const Value &v, Value::Kind kind, const std::string &path,
                  const std::string &key) {
    if (v.kind == kind)
      return true;
    return fail(
        path, "'" + key + "' must be a" +
                  (kind == Value::Kind::Array || kind == Value::Kind::Object
                       ? std::string("n ")
                       : std::string(" ")) +
                  json::kindName(kind) + ", not a" +
                  (v.kind == Value::Kind::Array || v.kind == Value::Kind::Object
                       ? "n "
                       : " ") +
                  json::kindName(v.kind));
  }

  bool getString(const Value &obj, const std::string &path, const char *key,
                 std::string &out, bool required = true) {
    const Value *v = member(obj, path, key, required);
    if (!v)
      return !required;
    if (!expectKind(*v, Value::Kind::String, path, key))
      return false;
    out = v->string;
    return true;
  }

  bool checkInt(const Value &v, const std::string &path, const std::string &key,
                int64_t lo, int64_t hi, int64_t &out) {
    if (v.kind != Value::Kind::Number || !v.isInteger)
      return fail(path, "'" + key + "' must be an integer");
    if (v.integer < lo || v.integer > hi)
      return fail(path, "'" + key + "' is " + std::to_string(v.integer) +
                            ", must be in [" + std::to_string(lo) + ", " +
                            std::to_string(hi) + "]");
    out = v.integer;
    return true;
  }

  bool getInt(const Value &obj, const std::string &path, const char *key,
              int64_t lo, int64_t hi, int64_t &out, bool required = true) {
    const Value *v = member(obj, path, key, required);
    if (!v)
      return !required;
    return checkInt(*v, path, key, lo, hi, out);
  }

  bool getBool(const Value &obj, const std::string &path, const char *key,
               bool &out) {
    const Value *v = member(obj, path, key, /*required=*/false);
    if (!v)
      return true;
    if (!expectKind(*v, Value::Kind::Bool, path, key))
      return false;
    out = v->boolean;
    return true;
  }

  /// An optional object member; absent reads as {}.
  bool getObject(const Value &obj, const std::string &path, const char *key,
                 const Value *&out) {
    static const Value empty = [] {
      Value v;
      v.kind = Value::Kind::Object;
      return v;
    }();
    const Value *v = member(obj, path, key, /*required=*/false);
    out = v ? v : &empty;
    return expectKind(*out, Value::Kind::Object, path, key);
  }

private:
  std::string &err;
};

class SpecParser {
public:
  SpecParser(Spec &spec, std::string &err) : spec(spec), r(err) {}

  bool parse(const Value &root) {
    if (root.kind != Value::Kind::Object)
      return r.fail("", "the spec must be a JSON object");
    int64_t version;
    if (!r.getInt(root, "", "kgen_spec", INT64_MIN, INT64_MAX, version))
      return false;
    // Version 1 listed the abi as "ptr:x" strings, with no types.
    if (version == 1)
      return r.fail("", "kgen_spec version 1 is no longer read (this runtime "
                        "reads 2, whose abi entries are typed objects): "
                        "re-emit it with this kgen");
    // Version 3 adds heads padded inside a row (sub_rows.pitch) and 4 a
    // tensor's elements a pitch apart ("pitch"), which a runtime must check:
    // older ones refuse them rather than ignore them.
    if (version < 2 || version > 4)
      return r.fail("", "unsupported kgen_spec version " +
                            std::to_string(version) +
                            " (this runtime reads 2 to 4)");
    spec.version = int(version);
    if (!r.getString(root, "", "op", spec.op) ||
        !r.getString(root, "", "dtype", spec.dtype) ||
        !r.getString(root, "", "arch", spec.arch) ||
        !r.getString(root, "", "hash", spec.hash))
      return false;
    if (!isHex(spec.hash))
      return r.fail("", "'hash' must be a non-empty hex string");
    if (!r.getBool(root, "", "grid_dependency", spec.gridDependency))
      return false;
    return parseDims(root) && parseLaunchPolicy(root) && parseParams(root) &&
           parseDomain(root) && parseVariants(root);
  }

private:
  Spec &spec;
  SpecReader r;

  /// Optional, as each of its fields (a spec of an older kgen, or written by
  /// hand): what is absent takes the defaults kgen compiled with.
  bool parseLaunchPolicy(const Value &root) {
    const Value *policy;
    if (!r.getObject(root, "", "launch_policy", policy))
      return false;
    for (const auto &[key, value] : policy->object) {
      const launch::LaunchPolicyField *f = nullptr;
      for (const auto &field : launch::kLaunchPolicyFields)
        if (key == field.name)
          f = &field;
      if (!f)
        return r.fail("launch_policy", "unknown field '" + key + "'");
      if (!r.checkInt(value, "launch_policy", key, 1, f->most,
                      spec.policy.*f->field))
        return false;
    }
    if (const char *bad = spec.policy.invalidField())
      return r.fail("launch_policy",
                    "'" + std::string(bad) + "' must be a power of two");
    return true;
  }

  bool parseDims(const Value &root) {
    const Value *dims;
    if (!r.getObject(root, "", "dims", dims))
      return false;
    for (const auto &[name, value] : dims->object) {
      if (!isIdentifier(name))
        return r.fail("dims", "'" + name + "' is not a valid dim name");
      int64_t v;
      if (!r.checkInt(value, "dims", name, 1, INT64_MAX, v))
        return false;
      spec.dims[name] = v;
    }
    return true;
  }

  bool parseParams(const Value &root) {
    const Value *params = r.member(root, "", "params", /*required=*/true);
    if (!params || !r.expectKind(*params, Value::Kind::Array, "", "params"))
      return false;
    for (size_t i = 0; i < params->array.size(); ++i)
      if (!parseParam(params->array[i], "params[" + std::to_string(i) + "]"))
        return false;
    // Row lengths may name dim params declared later: resolve afterwards.
    for (size_t i = 0; i < params->array.size(); ++i) {
      Param &p = spec.params[i];
      if (p.kind != KGEN_ARG_TENSOR)
        continue;
      std::string path = "params[" + std::to_string(i) + "] ('" + p.name + "')";
      if (!parseRowLength(*params->array[i].find("row_length"), path,
                          p.rowLength) ||
          !parsePadding(params->array[i], path, p) ||
          !parsePitch(params->array[i], path, p))
        return false;
      if (!p.padded)
        p.span = p.rowLength.text;
    }
    return true;
  }

  /// row_map.sub_rows with a "pitch": the count, length and pitch that the
  /// launch checks (heads apart by at least their length, rows by count *
  /// pitch). Without a pitch the row map is informative only.
  bool parsePadding(const Value &v, const std::string &path, Param &p) {
    const Value *map = v.find("row_map");
    const Value *sub = map && map->kind == Value::Kind::Object
                           ? map->find("sub_rows")
                           : nullptr;
    const Value *pitch =
        sub && sub->kind == Value::Kind::Object ? sub->find("pitch") : nullptr;
    if (!pitch)
      return true;
    std::string at = path + ".row_map.sub_rows";
    if (spec.version < 3)
      return r.fail(at, "'pitch' needs kgen_spec 3 (this spec says " +
                            std::to_string(spec.version) + ")");
    const Value *count = r.member(*sub, at, "count", /*required=*/true);
    const Value *length = r.member(*sub, at, "length", /*required=*/true);
    p.padded = true;
    if (!count || !length ||
        !parseRowLength(*count, at, p.headCount, "count") ||
        !parseRowLength(*length, at, p.headLength, "length") ||
        !parseRowLength(*pitch, at, p.headPitch, "pitch"))
      return false;
    p.span = p.headCount.text + "*" + p.headPitch.text;
    return true;
  }

  /// A rows tensor's "pitch": its elements that far apart, each row
  /// row_length runs of one element for the launch's checks.
  bool parsePitch(const Value &v, const std::string &path, Param &p) {
    const Value *pitch = v.find("pitch");
    if (!pitch)
      return true;
    if (spec.version < 4)
      return r.fail(path, "'pitch' needs kgen_spec 4 (this spec says " +
                              std::to_string(spec.version) + ")");
    if (p.padded || p.access != Param::Access::Rows)
      return r.fail(path, "'pitch' is for a rows tensor without sub_rows");
    if (!parseRowLength(*pitch, path, p.headPitch, "pitch"))
      return false;
    p.padded = p.pitched = true;
    p.headCount = p.rowLength;
    p.headLength = RowLength{1, -1, "1"};
    p.span = p.rowLength.text + "*" + p.headPitch.text;
    return true;
  }

  bool parseDomain(const Value &root) {
    const Value *d = r.member(root, "", "domain", /*required=*/false);
    if (!d)
      return true;
    spec.hasDomain = true;
    return parseRowLength(*d, "domain", spec.domain);
  }

  bool parseParam(const Value &v, const std::string &path) {
    if (!r.expectKind(v, Value::Kind::Object, "params", path))
      return false;
    Param p;
    std::string kind, dtype;
    if (!r.getString(v, path, "name", p.name))
      return false;
    if (!isIdentifier(p.name))
      return r.fail(path, "'" + p.name + "' is not a valid param name");
    if (spec.findParam(p.name) >= 0)
      return r.fail(path, "duplicate param name '" + p.name + "'");
    std::string at = path + " ('" + p.name + "')";
    if (!r.getString(v, at, "kind", kind))
      return false;
    if (kind == "tensor")
      p.kind = KGEN_ARG_TENSOR;
    else if (kind == "scalar")
      p.kind = KGEN_ARG_SCALAR;
    else if (kind == "dim")
      p.kind = KGEN_ARG_DIM;
    else
      return r.fail(at, "unknown kind '" + kind +
                            "' (expected tensor, scalar or dim)");
    // A dim's dtype is always i64; it may be left out.
    bool dtypeRequired = p.kind != KGEN_ARG_DIM;
    dtype = "i64";
    if (!r.getString(v, at, "dtype", dtype, dtypeRequired))
      return false;
    if (!parseDtype(dtype, p.dtype))
      return r.fail(at, "unknown dtype '" + dtype +
                            "' (expected f32, f16, bf16, f8e4m3, f8e5m2, "
                            "i32 or i64)");
    switch (p.kind) {
    case KGEN_ARG_SCALAR:
      if (p.dtype != KGEN_F32 && p.dtype != KGEN_I32 && p.dtype != KGEN_I64)
        return r.fail(at, "scalar '" + p.name + "' has dtype " + dtype +
                              "; the spec supports only f32, i32 and i64 "
                              "scalars");
      if (const Value *min = r.member(v, at, "min", /*required=*/false)) {
        if (p.dtype != KGEN_F32)
          return r.fail(at, "'min' is for f32 scalars, not " + dtype);
        if (min->kind != Value::Kind::Number ||
            !(std::fabs(min->number) <= FLT_MAX))
          return r.fail(at, "'min' must be a number within the f32 range");
        p.minScalar = min->number;
      }
      break;
    case KGEN_ARG_DIM:
      if (p.dtype != KGEN_I64)
        return r.fail(at, "dim '" + p.name + "' must have dtype i64");
      if (spec.dims.count(p.name))
        return r.fail(at, "dim '" + p.name +
                              "' is both static (in 'dims') and a param");
      if (const Value *max = r.member(v, at, "max", /*required=*/false))
        if (!r.checkInt(*max, at, "max", 1, INT64_MAX, p.maxDim))
          return false;
      break;
    case KGEN_ARG_TENSOR: {
      std::string access;
      if (!r.getString(v, at, "access", access))
        return false;
      if (access == "rows")
        p.access = Param::Access::Rows;
      else if (access == "vector")
        p.access = Param::Access::Vector;
      else if (access == "scalars")
        p.access = Param::Access::Scalars;
      else
        return r.fail(at, "unknown access '" + access +
                              "' (expected rows, vector or scalars)");
      if (!r.member(v, at, "row_length", /*required=*/true) ||
          !r.getBool(v, at, "writes", p.writes))
        return false;
      break;
    }
    }
    spec.params.push_back(std::move(p));
    return true;
  }

  /// An integer, or a string "N", "name" or "k*name" where name is a static
  /// dim or a dim param: a row length, or a padded head's count, length or
  /// pitch (`field`).
  bool parseRowLength(const Value &v, const std::string &path, RowLength &out,
                      const std::string &field = "row_length") {
    if (v.kind == Value::Kind::Number) {
      if (!r.checkInt(v, path, field, 1, INT64_MAX, out.scale))
        return false;
      out.text = std::to_string(out.scale);
      return true;
    }
    if (v.kind != Value::Kind::String)
      return r.fail(path, "'" + field + "' must be an integer or a string");
    out.text = v.string;
    auto bad = [&](const std::string &why) {
      return r.fail(path, field + " '" + v.string + "' " + why +
                              " (supported forms: N, name, k*name)");
    };
    std::string_view s = trim(v.string);
    std::string_view name = s;
    int64_t scale = 1;
    size_t star = s.find('*');
    if (star != std::string_view::npos) {
      std::string_view k = trim(s.substr(0, star));
      name = trim(s.substr(star + 1));
      auto [ptr, ec] = std::from_chars(k.data(), k.data() + k.size(), scale);
      if (k.empty() || ec != std::errc() || ptr != k.data() + k.size() ||
          scale < 1)
        return bad("has an invalid factor");
    } else if (!s.empty() && s[0] >= '0' && s[0] <= '9') {
      auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), scale);
      if (ec != std::errc() || ptr != s.data() + s.size() || scale < 1)
        return bad("is not a positive integer");
      out.scale = scale;
      return true;
    }
    if (!isIdentifier(name))
      return bad("is not supported");
    auto it = spec.dims.find(std::string(name));
    if (it != spec.dims.end()) {
      if (it->second > INT64_MAX / scale)
        return bad("overflows int64");
      out.scale = scale * it->second;
      return true;
    }
    int param = spec.findParam(name);
    if (param < 0 || spec.params[param].kind != KGEN_ARG_DIM)
      return bad("names an unknown dim '" + std::string(name) + "'");
    out.scale = scale;
    out.dimParam = param;
    return true;
  }

  bool parseVariants(const Value &root) {
    const Value *variants = r.member(root, "", "variants", /*required=*/true);
    if (!variants ||
        !r.expectKind(*variants, Value::Kind::Array, "", "variants"))
      return false;
    if (variants->array.empty())
      return r.fail("", "'variants' must not be empty");
    for (size_t i = 0; i < variants->array.size(); ++i)
      if (!parseVariant(variants->array[i],
                        "variants[" + std::to_string(i) + "]"))
        return false;
    return true;
  }

  /// A param of the given kind named `name`, or -1 after reporting why not.
  int lookup(const std::string &path, const std::string &what,
             std::string_view name, kgen_arg_kind kind) {
    int idx = spec.findParam(name);
    if (idx < 0) {
      r.fail(path,
             what + " names an unknown param '" + std::string(name) + "'");
      return -1;
    }
    if (spec.params[idx].kind != kind) {
      r.fail(path, what + " needs a " + argKindName(kind) + " but '" +
                       std::string(name) + "' is a " +
                       argKindName(spec.params[idx].kind));
      return -1;
    }
    return idx;
  }

  bool parseVariant(const Value &v, const std::string &path) {
    if (!r.expectKind(v, Value::Kind::Object, "variants", path))
      return false;
    Variant var;
    int64_t block, rowsPerBlock = 1, sharedBytes = 0, tiles = 1;
    if (!r.getString(v, path, "entry", var.entry))
      return false;
    if (!isIdentifier(var.entry))
      return r.fail(path, "'" + var.entry + "' is not a valid entry name");
    std::string at = path + " ('" + var.entry + "')";
    // A row takes block / rows_per_block threads: at least one, or the
    // launch would have a block of no threads.
    if (!r.getInt(v, at, "block", 1, 1024, block) ||
        !r.getInt(v, at, "rows_per_block", 1, block, rowsPerBlock,
                  /*required=*/false) ||
        !r.getInt(v, at, "shared_bytes", 0, INT32_MAX, sharedBytes,
                  /*required=*/false) ||
        !r.getInt(v, at, "tiles", 1, 65535, tiles, /*required=*/false))
      return false;
    if (r.member(v, at, "exact_domain", /*required=*/false)) {
      if (!r.getInt(v, at, "exact_domain", 1, INT64_MAX, var.exactDomain))
        return false;
      if (!spec.hasDomain)
        return r.fail(at, "'exact_domain' needs the spec's 'domain'");
    }
    if (r.member(v, at, "domain_range", /*required=*/false)) {
      const Value *range;
      std::string rAt = at + ".domain_range";
      if (!r.getObject(v, at, "domain_range", range) ||
          !r.getInt(*range, rAt, "min", 1, INT64_MAX, var.minDomain) ||
          !r.getInt(*range, rAt, "max", var.minDomain, INT64_MAX,
                    var.maxDomain) ||
          !r.getInt(*range, rAt, "chunk_elements", 1, 64, var.chunkElements))
        return false;
      if (!spec.hasDomain)
        return r.fail(at, "'domain_range' needs the spec's 'domain'");
    }
    int64_t cluster = 0;
    if (!r.getInt(v, at, "min_rows", 1, INT64_MAX, var.minRows,
                  /*required=*/false) ||
        !r.getInt(v, at, "max_rows", 1, INT64_MAX, var.maxRows,
                  /*required=*/false) ||
        !r.getInt(v, at, "cluster", 2, 8, cluster, /*required=*/false) ||
        !r.getInt(v, at, "launch_rows_per_block", 1, rowsPerBlock,
                  var.launchRowsPerBlock, /*required=*/false))
      return false;
    if (var.launchRowsPerBlock && block % rowsPerBlock)
      return r.fail(at, "'launch_rows_per_block' needs a block of "
                        "rows_per_block rows of equal threads");
    if (r.member(v, at, "launch_threads", /*required=*/false)) {
      const Value *lt;
      std::string ltAt = at + ".launch_threads";
      if (!r.getObject(v, at, "launch_threads", lt) ||
          !r.getInt(*lt, ltAt, "chunks", 0, 64, var.heldChunks) ||
          !r.getInt(*lt, ltAt, "chunk_elements", 1, 64, var.chunkElements))
        return false;
      if (!spec.hasDomain)
        return r.fail(at, "'launch_threads' needs the spec's 'domain'");
      if (var.maxDomain)
        return r.fail(at, "'launch_threads' and 'domain_range' exclude each "
                          "other");
      if (rowsPerBlock != 1 || tiles != 1 || block % 32)
        return r.fail(at, "'launch_threads' needs rows_per_block = 1, "
                          "tiles = 1 and a block of whole warps");
      // Re-read rows step by the launched threads with shifts; they and
      // rows of one chunk a thread take x threads a row, a power of two
      // that divides the block, by y rows.
      if (var.heldChunks <= 1 && (block & (block - 1)))
        return r.fail(at, "'launch_threads' with chunks = 0 or 1 needs a "
                          "block that is a power of two");
      var.launchThreads = true;
    }
    if (cluster && (cluster != tiles || rowsPerBlock != 1))
      return r.fail(at, "'cluster' must equal 'tiles' over one row a block");
    var.block = static_cast<int>(block);
    var.rowsPerBlock = static_cast<int>(rowsPerBlock);
    var.sharedBytes = static_cast<int>(sharedBytes);
    var.tiles = static_cast<int>(tiles);
    var.cluster = cluster > 0;
    if (!checkLaunchRule(v, at, var))
      return false;

    const Value *align, *multiple;
    if (!r.getObject(v, at, "tensor_align", align) ||
        !r.getObject(v, at, "dim_multiple", multiple))
      return false;
    for (const auto &[name, value] : align->object) {
      int idx = lookup(at, "tensor_align", name, KGEN_ARG_TENSOR);
      int64_t bytes;
      if (idx < 0 ||
          !r.checkInt(value, at + ".tensor_align", name, 1, INT32_MAX, bytes))
        return false;
      if (bytes & (bytes - 1))
        return r.fail(at + ".tensor_align",
                      "'" + name + "' must be a power of two");
      var.tensorAlign.emplace_back(idx, bytes);
    }
    for (const auto &[name, value] : multiple->object) {
      int idx = lookup(at, "dim_multiple", name, KGEN_ARG_DIM);
      int64_t m;
      if (idx < 0 ||
          !r.checkInt(value, at + ".dim_multiple", name, 1, INT64_MAX, m))
        return false;
      var.dimMultiple.emplace_back(idx, m);
    }

    const Value *abi = r.member(v, at, "abi", /*required=*/true);
    if (!abi || !r.expectKind(*abi, Value::Kind::Array, at, "abi"))
      return false;
    for (size_t i = 0; i < abi->array.size(); ++i) {
      std::string slotPath = at + ".abi[" + std::to_string(i) + "]";
      AbiSlot slot;
      if (!parseAbiSlot(abi->array[i], slotPath, slot))
        return false;
      var.abi.push_back(slot);
    }
    spec.variants.push_back(std::move(var));
    return true;
  }

  /// The optional "launch": {"rule": NAME} must name the rule the runtime
  /// infers from the variant's other fields: launchers that read the name
  /// then launch as the runtime does.
  bool checkLaunchRule(const Value &v, const std::string &at,
                       const Variant &var) {
    if (!r.member(v, at, "launch", /*required=*/false))
      return true;
    const Value *launch;
    std::string rule;
    if (!r.getObject(v, at, "launch", launch) ||
        !r.getString(*launch, at + ".launch", "rule", rule))
      return false;
    const char *inferred = launchRuleName(launchRule(var));
    if (rule != inferred)
      return r.fail(at + ".launch", "rule '" + rule +
                                        "' is not the one the variant's fields "
                                        "give ('" +
                                        inferred + "')");
    return true;
  }

  /// {"slot": KIND, "param": NAME, "type": TYPE}; rows name no param. The
  /// type is the slot's, so that launchers need not look the param up: it
  /// must be the one the runtime packs.
  bool parseAbiSlot(const Value &e, const std::string &path, AbiSlot &slot) {
    if (e.kind != Value::Kind::Object)
      return r.fail(path, std::string("must be an object {\"slot\", "
                                      "\"param\", \"type\"}, not a") +
                              (e.kind == Value::Kind::Array ? "n " : " ") +
                              json::kindName(e.kind));
    std::string slotName, type;
    if (!r.getString(e, path, "slot", slotName) ||
        !r.getString(e, path, "type", type))
      return false;
    kgen_arg_kind kind = KGEN_ARG_TENSOR;
    const char *want = "i64";
    if (slotName == "ptr") {
      slot.kind = AbiSlot::Kind::Ptr;
      want = "u64";
    } else if (slotName == "stride") {
      slot.kind = AbiSlot::Kind::Stride;
    } else if (slotName == "scalar") {
      slot.kind = AbiSlot::Kind::Scalar;
      kind = KGEN_ARG_SCALAR;
    } else if (slotName == "dim") {
      slot.kind = AbiSlot::Kind::Dim;
      kind = KGEN_ARG_DIM;
    } else if (slotName == "rows") {
      slot.kind = AbiSlot::Kind::Rows;
    } else {
      return r.fail(path, "unknown slot '" + slotName +
                              "' (expected ptr, stride, scalar, dim or rows)");
    }
    std::string name;
    if (slot.kind == AbiSlot::Kind::Rows) {
      if (e.find("param"))
        return r.fail(path, "a rows slot names no param");
    } else {
      if (!r.getString(e, path, "param", name))
        return false;
      slot.param = lookup(path, slotName + " slot", name, kind);
      if (slot.param < 0)
        return false;
      if (slot.kind == AbiSlot::Kind::Scalar)
        want = dtypeName(spec.params[slot.param].dtype);
      // The launch fills a stride slot by the param's layout: it must have
      // one, or the kernel would step by a stride the launch never checked.
      if (slot.kind == AbiSlot::Kind::Stride &&
          !hasRowStride(spec.params[slot.param]))
        return r.fail(path, "a stride slot for '" + name +
                                "', which takes no row stride (only rows "
                                "tensors and scalars with a pitch do)");
    }
    if (type != want)
      return r.fail(path, "type '" + type + "' of " + slotName + " slot" +
                              (name.empty() ? "" : " '" + name + "'") +
                              " must be " + want);
    return true;
  }
};

} // namespace

bool parseSpec(std::string_view text, Spec &out, std::string &err) {
  json::Value root;
  std::string jsonErr;
  if (!json::parse(text, root, jsonErr)) {
    err = "malformed JSON at " + jsonErr;
    return false;
  }
  out = Spec();
  return SpecParser(out, err).parse(root);
}

static int64_t ceilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/// The power of two at or above n >= 0; INT64_MAX past the largest (a
/// hand-written spec may give rows of more than 2^62 chunks). A loop, not
/// std::bit_ceil: the runtime is C++17, for the engines that embed it.
static int64_t pow2AtLeast(int64_t n) {
  if (n > (int64_t(1) << 62))
    return INT64_MAX;
  int64_t p = 1;
  while (p < n)
    p *= 2;
  return p;
}

int64_t launchThreads(const Variant &v, int64_t length) {
  if (v.heldChunks < 1) // re-read: launchedRowsBlock picks the block
    return v.block;
  if (v.heldChunks == 1)
    return pow2AtLeast(ceilDiv(length, v.chunkElements));
  return 32 * ceilDiv(ceilDiv(length, v.chunkElements), 32 * v.heldChunks);
}

int64_t launchIdleSlots(const Variant &v, int64_t length) {
  if (v.heldChunks < 1)
    return 0;
  return launchThreads(v, length) * v.heldChunks -
         ceilDiv(length, v.chunkElements);
}

/// Rows a block of at most `perBlock` rows takes so that `rows` (times
/// `tiles` blocks a row group) give every multiprocessor a block where they
/// can, down to one row (bench/results/launch-decisions.md).
static int64_t spreadRows(int64_t perBlock, int64_t rows, int64_t tiles,
                          int multiprocessors) {
  if (multiprocessors > 0 && ceilDiv(rows, perBlock) * tiles < multiprocessors)
    return std::clamp<int64_t>(rows * tiles / multiprocessors, 1, perBlock);
  return perBlock;
}

std::pair<int64_t, int64_t>
launchedRowsBlock(const Variant &v, const launch::LaunchPolicy &policy,
                  int64_t length, int64_t rows, int multiprocessors) {
  int64_t nvec = ceilDiv(length, v.chunkElements);
  // A short row takes a thread a chunk (held, or re-read in one step a
  // pass); a long one up to reread_chunks chunks a thread a pass, over more
  // threads (bench/results/launch-decisions.md).
  int64_t threads =
      v.heldChunks == 1 || nvec <= 32
          ? pow2AtLeast(nvec)
          : std::clamp<int64_t>(pow2AtLeast(ceilDiv(nvec, policy.rereadChunks)),
                                32, v.block);
  // As the specialized kernels take them, but up to the variant's block.
  int64_t perBlock = threads < 32
                         ? std::max<int64_t>(1, policy.rowsBlock / threads)
                         : policy.launchedRowsFor(threads, nvec);
  perBlock = std::clamp<int64_t>(v.block / threads, 1, perBlock);
  return {threads, spreadRows(perBlock, rows, 1, multiprocessors)};
}

int64_t launchRowsPerBlock(const Variant &v, const launch::LaunchPolicy &policy,
                           int64_t length, int64_t rows, int multiprocessors) {
  if (!v.launchRowsPerBlock)
    return v.rowsPerBlock;
  int64_t perBlock = v.launchRowsPerBlock;
  if (v.maxDomain) // as the specialized kernel of this length
    perBlock = std::clamp<int64_t>(
        policy.launchedRowsFor(v.block / v.rowsPerBlock,
                               ceilDiv(length, v.chunkElements)),
        1, perBlock);
  return spreadRows(perBlock, rows, v.tiles, multiprocessors);
}

} // namespace kgen::rt
