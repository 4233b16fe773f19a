//===- FuzzSpec.cpp - libFuzzer target: specs and kgen_kernel_create ------===//
//
// Fuzz bytes are a spec (JSON) for kgen_kernel_create, with a PTX text that
// declares the entries the spec names. A kernel it creates is then queried
// and its arguments checked for a few launches of plain, aligned arguments,
// without a driver (none is opened: the path set below does not exist).
// Most mutations edit the spec as a JSON tree (LLVMFuzzerCustomMutator):
// byte edits rarely keep a spec readable past its first checks.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"
#include "JsonPrint.h"

#include "runtime/Driver.h"
#include "runtime/Json.h"
#include "runtime/Spec.h"
#include "runtime/kgen_runtime.h"

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

using namespace kgen::rt;
using kgen::fuzz::checkConfig;
using kgen::fuzz::checkStatus;
using kgen::fuzz::violated;

namespace {

uint64_t hashOf(const uint8_t *data, size_t size) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i)
    h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

/// Plain arguments for `spec`: aligned tensors, contiguous rows, every dim
/// `dim`.
std::vector<kgen_arg> plainArgs(const Spec &spec, int64_t dim) {
  std::vector<kgen_arg> args;
  for (size_t i = 0; i < spec.params.size(); ++i) {
    const Param &p = spec.params[i];
    kgen_arg a{};
    a.kind = p.kind;
    a.dtype = p.dtype;
    switch (p.kind) {
    case KGEN_ARG_TENSOR:
      a.ptr = reinterpret_cast<const void *>(uintptr_t(i + 1) << 28);
      break;
    case KGEN_ARG_SCALAR:
      a.f = 1e-6;
      a.i = 3;
      break;
    case KGEN_ARG_DIM:
      a.i = dim;
      break;
    }
    args.push_back(a);
  }
  return args;
}

/// kgen_select_variant, kgen_launch_config_get, kgen_pack_params and
/// kgen_launch must agree on these arguments.
void checkLaunch(const kgen_kernel *k, const Spec &spec,
                 const std::vector<kgen_arg> &args, int64_t rows,
                 int multiprocessors) {
  size_t variant = ~size_t(0);
  kgen_status sel =
      kgen_select_variant(k, args.data(), args.size(), rows, &variant);
  checkStatus(sel, "kgen_select_variant");
  kgen_status launch = kgen_launch(k, args.data(), args.size(), rows, nullptr);
  checkStatus(launch, "kgen_launch");
  kgen_status want = sel != KGEN_OK || rows == 0 ? sel : KGEN_ERROR_NO_DRIVER;
  if (launch != want)
    violated(
        "kgen_launch gave %d where kgen_select_variant gave %d (rows %lld)",
        launch, sel, static_cast<long long>(rows));
  if (rows < 1)
    return;
  kgen_launch_config c{};
  kgen_status cfg = kgen_launch_config_get(k, args.data(), args.size(), rows,
                                           multiprocessors, &c);
  checkStatus(cfg, "kgen_launch_config_get");
  if (cfg != sel)
    violated("kgen_launch_config_get gave %d where kgen_select_variant gave %d",
             cfg, sel);
  if (cfg != KGEN_OK)
    return;
  checkConfig(spec, c, variant);
  std::vector<uint64_t> slots(c.num_slots + 1, 0xdeadbeef);
  kgen_status pack =
      kgen_pack_params(k, args.data(), args.size(), rows, multiprocessors,
                       slots.data(), c.num_slots);
  checkStatus(pack, "kgen_pack_params");
  if (pack != KGEN_OK || slots.back() != 0xdeadbeef)
    violated("kgen_pack_params failed or wrote past its slots");
  const Variant &v = spec.variants[variant];
  for (size_t i = 0; i < v.abi.size(); ++i) {
    const AbiSlot &s = v.abi[i];
    uint64_t want = 0;
    switch (s.kind) {
    case AbiSlot::Kind::Ptr:
      want = reinterpret_cast<uintptr_t>(args[s.param].ptr);
      break;
    case AbiSlot::Kind::Dim:
      want = static_cast<uint64_t>(args[s.param].i);
      break;
    case AbiSlot::Kind::Rows:
      want = static_cast<uint64_t>(rows);
      break;
    default:
      continue;
    }
    if (slots[i] != want)
      violated("slot %zu is %llu, not %llu", i,
               static_cast<unsigned long long>(slots[i]),
               static_cast<unsigned long long>(want));
  }
  if (c.num_slots > 0 &&
      kgen_pack_params(k, args.data(), args.size(), rows, multiprocessors,
                       slots.data(),
                       c.num_slots - 1) != KGEN_ERROR_INVALID_ARGUMENT)
    violated("kgen_pack_params accepted too few slots");
}

void checkQueries(const kgen_kernel *k, const Spec &spec) {
  kgen_kernel_info info{};
  checkStatus(kgen_kernel_get_info(k, &info), "kgen_kernel_get_info");
  if (info.num_params != spec.params.size() ||
      info.num_variants != spec.variants.size() || spec.op != info.op ||
      spec.arch != info.arch || spec.hash != info.hash)
    violated("kgen_kernel_get_info differs from the spec");
  for (size_t i = 0; i < info.num_params; ++i) {
    kgen_param_info p{};
    checkStatus(kgen_kernel_get_param(k, i, &p), "kgen_kernel_get_param");
    size_t found = ~size_t(0);
    checkStatus(kgen_kernel_find_param(k, p.name, &found),
                "kgen_kernel_find_param");
    if (found != i || !p.row_length_expr)
      violated("param %zu ('%s') is found at %zu", i, p.name, found);
  }
  for (size_t i = 0; i < info.num_variants; ++i) {
    kgen_variant_info v{};
    checkStatus(kgen_kernel_get_variant(k, i, &v), "kgen_kernel_get_variant");
    if (v.block < 1 || v.block > 1024 || v.rows_per_block < 1)
      violated("variant %zu ('%s') has block %d, rows_per_block %d", i, v.entry,
               v.block, v.rows_per_block);
  }
  kgen_param_info p{};
  kgen_variant_info v{};
  if (kgen_kernel_get_param(k, info.num_params, &p) == KGEN_OK ||
      kgen_kernel_get_variant(k, info.num_variants, &v) == KGEN_OK)
    violated("an index past the end was accepted");
}

using Rng = std::minstd_rand;

void collect(json::Value &v, std::vector<json::Value *> &out) {
  out.push_back(&v);
  for (json::Value &e : v.array)
    collect(e, out);
  for (auto &m : v.object)
    collect(m.second, out);
}

std::vector<std::string> split(const char *text) {
  std::vector<std::string> out;
  for (const char *p = text; *p;) {
    const char *end = std::strchr(p, ' ');
    std::string word(p, end ? end : p + std::strlen(p));
    out.push_back(word == "-" ? "" : word);
    p = end ? end + 1 : p + word.size();
  }
  return out;
}

void setInt(json::Value &v, int64_t i) {
  v = json::Value();
  v.kind = json::Value::Kind::Number;
  v.isInteger = true;
  v.integer = i;
  v.number = static_cast<double>(i);
}

/// One edit of `root` at a random value: a number to a boundary or a step
/// away, a string to a word of the spec format or of this spec, a member or
/// element dropped, copied or added, or a value replaced by another.
void mutateTree(json::Value &root, Rng &rng) {
  std::vector<json::Value *> nodes;
  collect(root, nodes);
  json::Value &v = *nodes[rng() % nodes.size()];
  const json::Value &other = *nodes[rng() % nodes.size()];
  // Boundaries of the spec's limits (block 1024, chunks 64, tiles 65535).
  static const int64_t small[] = {0,    1,    -1,   2,    3,     7,     8,
                                  16,   31,   32,   33,   63,    64,    65,
                                  127,  128,  129,  255,  256,   512,   1023,
                                  1024, 1025, 4096, 8192, 49152, 65535, 65536};
  static const int64_t large[] = {INT32_MAX, int64_t(INT32_MAX) + 1,
                                  int64_t(1) << 62, INT64_MAX, INT64_MIN};
  // Words of the spec format ("-": the empty string) and keys to add.
  static const std::vector<std::string> words = split(
      "tensor scalar dim rows vector scalars ptr stride f32 f16 bf16 f8e4m3 "
      "f8e5m2 i32 i64 u64 rows_per_block launch_rows_per_block domain_range "
      "launch_threads launch_threads_rows sm_90 sm_90a sm_80 sm_100 hidden "
      "2*hidden 0 - x d abc123");
  static const std::vector<std::string> keys = split(
      "block rows_per_block shared_bytes tiles cluster min_rows max_rows "
      "exact_domain launch_rows_per_block domain grid_dependency dims "
      "launch_threads domain_range chunks chunk_elements min max launch rule");
  switch (rng() % 8) {
  case 0:
  case 1:
  case 2: // numbers, most of all: the spec's limits are on them
    if (v.kind == json::Value::Kind::Number && rng() % 2)
      setInt(v, static_cast<int64_t>(uint64_t(v.integer) + rng() % 9 - 4));
    else if (other.kind == json::Value::Kind::Number && other.isInteger &&
             rng() % 4 == 0)
      setInt(v, other.integer);
    else
      setInt(v, rng() % 8 ? small[rng() % (sizeof(small) / sizeof(small[0]))]
                          : large[rng() % (sizeof(large) / sizeof(large[0]))]);
    return;
  case 3: {
    std::string word = rng() % 2 ? words[rng() % words.size()]
                       : other.kind == json::Value::Kind::String ? other.string
                                                                 : "";
    v = json::Value();
    v.kind = json::Value::Kind::String;
    v.string = word;
    return;
  }
  case 4: // drop a member or element
    if (!v.object.empty())
      v.object.erase(v.object.begin() + rng() % v.object.size());
    else if (!v.array.empty())
      v.array.erase(v.array.begin() + rng() % v.array.size());
    return;
  case 5: { // copy an element, or add a member
    json::Value copy = other;
    if (v.kind == json::Value::Kind::Array && !v.array.empty()) {
      json::Value twin = v.array[rng() % v.array.size()];
      v.array.push_back(std::move(twin));
    } else if (v.kind == json::Value::Kind::Object) {
      const std::string &key = keys[rng() % keys.size()];
      if (!v.find(key))
        v.object.emplace_back(key, std::move(copy));
    }
    return;
  }
  case 6:
    if (v.kind == json::Value::Kind::Bool) {
      v.boolean = !v.boolean;
      return;
    }
    [[fallthrough]];
  default: { // a value where another belongs
    json::Value copy = other;
    v = std::move(copy);
    return;
  }
  }
}

} // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  Rng rng(seed);
  json::Value root;
  std::string err;
  if (rng() % 4 == 0 ||
      !json::parse(std::string_view(reinterpret_cast<const char *>(data), size),
                   root, err))
    return LLVMFuzzerMutate(data, size, maxSize);
  for (unsigned n = 1 + rng() % 3; n > 0; --n)
    mutateTree(root, rng);
  std::string text;
  kgen::fuzz::printJson(root, text);
  if (text.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, text.data(), text.size());
  return text.size();
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // No driver: kgen_launch stops after its argument checks.
  setDriverLibraryForTesting("/nonexistent/kgen-libfuzzer-has-no-libcuda.so.1");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view json(reinterpret_cast<const char *>(data), size);
  uint64_t h = hashOf(data, size);
  // kgen_kernel_create ignores trailing NULs; so does this first reading.
  std::string_view trimmed = json;
  while (!trimmed.empty() && trimmed.back() == '\0')
    trimmed.remove_suffix(1);
  Spec spec;
  std::string err;
  bool parsed = parseSpec(trimmed, spec, err);
  // Now and then the PTX lacks one entry, which creation must notice.
  size_t skip =
      parsed && (h & 7) == 0 ? (h >> 3) % spec.variants.size() : ~size_t(0);
  std::string ptx = parsed ? kgen::fuzz::ptxFor(spec, skip)
                           : ".version 8.0\n.visible .entry e() { ret; }\n";
  kgen_kernel *k = reinterpret_cast<kgen_kernel *>(1);
  kgen_status st =
      kgen_kernel_create(ptx.data(), ptx.size(), json.data(), json.size(), &k);
  checkStatus(st, "kgen_kernel_create");
  if (st != KGEN_OK) {
    if (k)
      violated("a failed kgen_kernel_create left a kernel");
    if (!parsed && st != KGEN_ERROR_INVALID_SPEC)
      violated("a spec that does not parse (%s) gave status %d", err.c_str(),
               st);
    return 0;
  }
  if (!parsed || skip != ~size_t(0))
    violated("kgen_kernel_create accepted a spec that does not parse (%s) "
             "or a PTX without an entry",
             err.c_str());
  checkQueries(k, spec);

  // A dim that is a multiple of most dim_multiple and chunk sizes, and one
  // that the input picks.
  static const int64_t dims[] = {1, 7, 64, 1000, 4096, 12288, int64_t(1) << 40};
  for (int64_t dim : {int64_t(4096), dims[(h >> 8) % 7]}) {
    std::vector<kgen_arg> args = plainArgs(spec, dim);
    for (int64_t rows : {int64_t(0), int64_t(1), int64_t(5), int64_t(9000)})
      checkLaunch(k, spec, args, rows, rows == 5 ? 132 : 0);
  }

  // Now and then (each reads the spec again): two images for one arch are
  // refused, an image with a cubin is taken.
  if ((h >> 16) % 8) {
    kgen_kernel_destroy(k);
    return 0;
  }
  kgen_image images[2] = {
      {ptx.data(), ptx.size(), json.data(), json.size(), nullptr, 0},
      {ptx.data(), ptx.size(), json.data(), json.size(), nullptr, 0}};
  kgen_kernel *two = nullptr;
  if (kgen_kernel_create_images(images, 2, &two) !=
          KGEN_ERROR_INVALID_ARGUMENT ||
      two)
    violated("two images of one arch were accepted");
  static const char elf[] = "\x7f"
                            "ELF cubin";
  images[0].cubin = elf;
  images[0].cubin_len = sizeof(elf) - 1;
  st = kgen_kernel_create_images(images, 1, &two);
  checkStatus(st, "kgen_kernel_create_images");
  if (st != KGEN_OK)
    violated("an image with a cubin was refused");
  kgen_kernel_destroy(two);
  kgen_kernel_destroy(k);
  return 0;
}
