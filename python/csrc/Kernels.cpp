//===- Kernels.cpp - The embedded kernels, by op, dtype and length --------===//
#include "Kernels.h"

// The libraries `kgen aot` generated for this build, as KGEN_TORCH_TABLES(X).
#include "KernelTables.h"

#include <cstring>
#include <mutex>
#include <string_view>
#include <unordered_map>

namespace kgen::torch_ext {
namespace {

struct Entry {
  const char *op;
  const char *dtype;
  int64_t length;
  kgen_status (*create)(kgen_kernel **out);
};

const std::vector<Entry> &entries() {
  static const std::vector<Entry> all = [] {
    std::vector<Entry> v;
#define KGEN_TORCH_ADD(lib)                                                    \
  for (size_t i = 0; i < lib##_entry_count; ++i)                               \
    v.push_back({lib##_entries[i].op, lib##_entries[i].dtype,                  \
                 lib##_entries[i].length, lib##_entries[i].kernel});
    KGEN_TORCH_TABLES(KGEN_TORCH_ADD)
#undef KGEN_TORCH_ADD
    return v;
  }();
  return all;
}

const Entry *lookup(const char *op, const char *dtype, int64_t length) {
  for (const Entry &e : entries())
    if (e.length == length && !std::strcmp(e.op, op) &&
        !std::strcmp(e.dtype, dtype))
      return &e;
  return nullptr;
}

/// By content, not by address: a caller's name may be any string. A stored
/// key views the embedded table's names, which live as long as the library.
struct Key {
  std::string_view op, dtype;
  int64_t length;
  bool operator==(const Key &o) const = default;
};
struct KeyHash {
  size_t operator()(const Key &k) const {
    return std::hash<std::string_view>()(k.op) * 31 +
           std::hash<std::string_view>()(k.dtype) * 7 +
           std::hash<int64_t>()(k.length);
  }
};

std::string lengthsOf(const char *op, const char *dtype) {
  std::string out;
  for (const Entry &e : entries())
    if (!std::strcmp(e.op, op) && !std::strcmp(e.dtype, dtype))
      out += (out.empty() ? "" : ", ") +
             (e.length ? std::to_string(e.length) : std::string("any"));
  return out.empty() ? "none" : out;
}

} // namespace

const KernelRef *findKernel(const char *op, const char *dtype, int64_t length,
                            bool fixedLength, std::string &why) {
  static std::mutex mu;
  static std::unordered_map<Key, KernelRef, KeyHash> cache;
  std::lock_guard<std::mutex> lock(mu);
  Key key{op, dtype, length};
  if (auto it = cache.find(key); it != cache.end())
    return &it->second;

  const Entry *e = lookup(op, dtype, length);
  if (!e && !fixedLength)
    e = lookup(op, dtype, 0);
  if (!e) {
    why = std::string("no ") + dtype + " kernel of '" + op + "' for length " +
          std::to_string(length) +
          " in this build (it has: " + lengthsOf(op, dtype) + ")";
    return nullptr;
  }
  kgen_kernel *k = nullptr;
  if (e->create(&k) != KGEN_OK) {
    why = kgen_last_error();
    return nullptr;
  }
  KernelRef ref;
  ref.kernel = k;
  kgen_kernel_info info;
  kgen_kernel_get_info(k, &info);
  for (size_t i = 0; i < info.num_params; ++i) {
    kgen_param_info p;
    kgen_kernel_get_param(k, i, &p);
    ref.names.emplace_back(p.name);
    ref.dtypes.push_back(p.dtype);
  }
  return &cache.emplace(Key{e->op, e->dtype, length}, std::move(ref))
              .first->second;
}

std::vector<std::string> embeddedKernels() {
  std::vector<std::string> out;
  for (const Entry &e : entries())
    out.push_back(std::string(e.op) + " " + e.dtype + " " +
                  std::to_string(e.length));
  return out;
}

} // namespace kgen::torch_ext
