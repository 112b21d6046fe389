#include "core/model/document_checks.h"

#include <atomic>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/diagnostics/sink.h"
#include "core/text/json_pointer.h"
#include "core/text/pyrepr.h"

namespace shardplan {
namespace {

// The pointer of entry `name` of module `module`'s `map` ("children" or
// "params").
std::string ModuleEntryPointer(const Document& doc, const Module& module, std::string_view map, NameId name) {
  return absl::StrCat("/modules/", JsonPointerToken(doc.Name(module.id)), "/", map, "/",
                      JsonPointerToken(doc.Name(name)));
}

}  // namespace

Diagnostic InvalidDocument(const DocumentError& error) {
  return MakeDiagnostic(
      Code::kInvalidDocument, Mode::kCheck, {.pointer = error.pointer, .fix_it = error.fix_it},
      {absl::StrCat(error.message, " (at ", error.pointer.empty() ? "the document root" : error.pointer, ")")});
}

std::string MissingKeyMessage(std::string_view key) { return absl::StrCat("missing required key ", PyRepr(key)); }

std::string ParameterTooLargeMessage(std::string_view id, Dtype dtype) {
  return absl::StrCat("the size of parameter ", PyRepr(id), " exceeds 2^63 - 1 bytes (its elements times ",
                      DtypeBytes(dtype), DtypeBytes(dtype) == 1 ? " byte" : " bytes", " of ", DtypeName(dtype), ")");
}

std::string UnknownDtypeMessage(std::string_view name) {
  return absl::StrCat("unknown dtype ", PyRepr(name),
                      " (expected float32, float16, bfloat16, float8_e4m3fn, float8_e5m2, int8, int32, int64 or bool)");
}

DocumentError ParametersTooLarge() {
  return {"the parameters' sizes total more than 2^63 - 1 bytes", "/parameters"};
}

// Modules are resolved in parallel, each only once all its references are
// known; the first module in document order with an unknown one reports
// it, as a serial pass would.
std::optional<DocumentError> ResolveReferences(Document& doc, const IdIndex& modules, const IdIndex& parameters) {
  auto known = [&](const SmallVector<std::pair<NameId, uint32_t>>& refs, const IdIndex& index) {
    for (const auto& [name, target] : refs) {
      if (index.Find(target) == IdIndex::kNone) return false;
    }
    return true;
  };
  const size_t n = doc.modules.size();
  std::atomic<size_t> first_unknown{n};
  ParallelFor(n, 4096, [&](size_t begin, size_t end) {
    for (size_t m = begin; m < end && m < first_unknown.load(std::memory_order_relaxed); ++m) {
      Module& module = doc.modules[m];
      if (!known(module.children, modules) || !known(module.params, parameters)) {
        size_t seen = first_unknown.load(std::memory_order_relaxed);
        while (m < seen && !first_unknown.compare_exchange_weak(seen, m, std::memory_order_relaxed)) {
        }
        return;
      }
      for (auto& [name, target] : module.children) target = modules.Find(target);
      for (auto& [name, target] : module.params) target = parameters.Find(target);
    }
  });
  if (first_unknown.load() == n) return std::nullopt;
  const Module& module = doc.modules[first_unknown.load()];
  for (const auto& [refs, index, key, what] :
       {std::tuple{&module.children, &modules, "children", "module"},
        std::tuple{&module.params, &parameters, "params", "parameter"}}) {
    for (const auto& [name, target] : *refs) {
      if (index->Find(target) != IdIndex::kNone) continue;
      return DocumentError{absl::StrCat("unknown ", what, " id ", PyRepr(doc.Name(target))),
                           ModuleEntryPointer(doc, module, key, name)};
    }
  }
  // Unreachable: the module has an unknown id.
  return DocumentError{"unresolved reference", absl::StrCat("/modules/", JsonPointerToken(doc.Name(module.id)))};
}

std::optional<DocumentError> ResolveRoot(Document& doc, std::string_view id, const IdIndex& modules) {
  const uint32_t root = modules.Find(doc.names, id);
  if (root == IdIndex::kNone) return DocumentError{absl::StrCat("unknown module id ", PyRepr(id)), "/root"};
  doc.root = root;
  return std::nullopt;
}

std::optional<DocumentError> CheckTree(Document& doc, const Limits& limits) {
  const size_t n = doc.modules.size();
  enum : uint8_t { kNew, kOpen, kDone };
  std::vector<uint8_t> state(n, kNew);
  std::vector<ModuleId> order;  // post-order: children before parents
  order.reserve(n);
  std::vector<std::pair<ModuleId, size_t>> stack;
  for (ModuleId start = 0; start < n; ++start) {
    if (state[start] != kNew) continue;
    stack.push_back({start, 0});
    state[start] = kOpen;
    while (!stack.empty()) {
      auto& [m, next] = stack.back();
      const auto& children = doc.modules[m].children;
      if (next < children.size()) {
        const auto& [name, child] = children[next++];
        if (state[child] == kOpen) {
          return DocumentError{absl::StrCat("cycle in children: module ", PyRepr(doc.Name(doc.modules[child].id)),
                                            " contains itself"),
                               ModuleEntryPointer(doc, doc.modules[m], "children", name)};
        }
        if (state[child] == kNew) {
          state[child] = kOpen;
          stack.push_back({child, 0});
        }
      } else {
        state[m] = kDone;
        order.push_back(m);
        stack.pop_back();
      }
    }
  }
  // paths(m): paths in m's subtree, m included; bytes(m): their total local
  // FQN length relative to m. Saturating at the limits.
  const uint64_t cap = UINT64_MAX / 4;
  std::vector<uint64_t> paths(n, 1), bytes(n, 0);
  for (ModuleId m : order) {
    uint64_t p = 1, b = 0;
    for (const auto& [name, child] : doc.modules[m].children) {
      const uint64_t name_len = doc.Name(name).size();
      p = std::min(cap, p + paths[child]);
      b = std::min(cap, b + bytes[child] + std::min(cap, paths[child] * (name_len + 1)));
    }
    paths[m] = p;
    bytes[m] = b;
  }
  if (paths[doc.root] > limits.max_paths) {
    return DocumentError{absl::StrCat("the module tree expands to more than ", limits.max_paths,
                                      " module paths (shared submodules multiply paths); raise the path limit if "
                                      "this is intended"),
                         "/modules"};
  }
  if (bytes[doc.root] > limits.max_fqn_bytes) {
    return DocumentError{absl::StrCat("the module paths' names total more than ", limits.max_fqn_bytes,
                                      " bytes; raise the limit if this is intended"),
                         "/modules"};
  }
  doc.tree_paths = paths[doc.root];
  doc.tree_fqn_bytes = bytes[doc.root];
  return std::nullopt;
}

}  // namespace shardplan
