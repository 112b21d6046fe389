// Fuzz target (c): sequences of C ABI calls decoded from the input. Each
// step is one opcode byte and its operands: parse a document, builder and
// layout calls with names from a small vocabulary or raw bytes and
// arbitrary indices, checks and plans, accessors with indices in and past
// the range, deletes. Beyond memory safety it holds the ABI to its
// contract (shardplan.h): errors carry a known code and a message, an
// accessor past the end is SP_ERROR_OUT_OF_RANGE and leaves its output
// untouched, and a built document checks and plans exactly as the parsed
// text of sp_builder_to_json does.
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "shardplan/shardplan.h"

namespace {

constexpr std::string_view kWords[] = {
    "",         "tp",       "dp",        "ep",         "m",         "root",     "layers",   "0",
    "1",        "attn",     "mlp",       "w",          "weight",    "bias",     "p",        "x",
    "*args",    "**kwargs", "layers.0",  "layers.*",   "*",         "attn.w",   "colwise",  "rowwise",
    "replicate", "R",       "S(0)",      "S(1)",       "P",         "P(sum)",   "float32",  "bfloat16",
    "mesh",     "none",     "local_compute_fn", "inner_target", "a.b", "[0-9]", "mlp.*",   "embed",
};

class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  // Mostly small values, sometimes any 64 bits (negative, huge).
  int64_t Int() {
    const uint8_t b = Byte();
    if (b < 0xf0) return b % 9;
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | Byte();
    return static_cast<int64_t>(v);
  }
  size_t Index(size_t count) {
    const uint8_t b = Byte();
    return b == 0xff ? SIZE_MAX : (b < 0xf0 && count > 0 ? b % count : b);
  }
  // A word of the vocabulary, or up to 255 raw bytes (any encoding) after
  // their count.
  std::string_view Text() {
    const uint8_t b = Byte();
    if (b < 0xc0) return kWords[b % std::size(kWords)];
    const size_t n = std::min<size_t>(Byte(), size_ - pos_);
    const std::string_view s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

sp_str S(std::string_view s) { return {s.data(), s.size()}; }

// Takes the error: a known code with a message, or none; never
// SP_ERROR_INTERNAL (the last code: a bug in shardplan). Returns the code.
sp_error_code Take(sp_error* error) {
  const sp_error_code code = sp_error_code_of(error);
  FUZZ_CHECK(code >= SP_OK && code < SP_ERROR_INTERNAL, "error code %d: %s",
             static_cast<int>(code), sp_error_message(error));
  FUZZ_CHECK((error == nullptr) == (code == SP_OK), "an error without a code");
  FUZZ_CHECK(error == nullptr || std::strlen(sp_error_message(error)) > 0, "an error without a message");
  sp_error_delete(error);
  return code;
}

std::string Json(const sp_result* result) {
  sp_str json{};
  FUZZ_CHECK(Take(sp_result_json(result, &json)) == SP_OK, "no JSON");
  return std::string(json.data, json.size);
}

// Reads entry `index` with `read`; past the end it must be OUT_OF_RANGE
// with the output untouched.
template <typename T, typename Count, typename Read>
void Access(const sp_result* result, size_t index, Count count, Read read) {
  size_t n = 0;
  FUZZ_CHECK(Take(count(result, &n)) == SP_OK, "count failed");
  T out;
  std::memset(&out, 0xab, sizeof out);
  T before = out;
  const sp_error_code code = Take(read(result, index, &out));
  if (index < n) {
    FUZZ_CHECK(code == SP_OK, "index %zu of %zu failed", index, n);
  } else {
    FUZZ_CHECK(code == SP_ERROR_OUT_OF_RANGE, "index %zu of %zu: code %d", index, n, static_cast<int>(code));
    FUZZ_CHECK(std::memcmp(&out, &before, sizeof out) == 0, "a failed read wrote its output");
  }
}

// Every diagnostic is listed in exactly one group, in order of each group's
// first diagnostic, and a group's diagnostics share its code and pointer.
void Groups(const sp_result* result) {
  size_t groups = 0, diagnostics = 0;
  FUZZ_CHECK(Take(sp_result_group_count(result, &groups)) == SP_OK, "group count failed");
  FUZZ_CHECK(Take(sp_result_diagnostic_count(result, &diagnostics)) == SP_OK, "count failed");
  std::vector<int> seen(diagnostics, 0);
  size_t previous_first = 0;
  for (size_t i = 0; i < groups; ++i) {
    sp_diagnostic_group g;
    FUZZ_CHECK(Take(sp_result_group(result, i, &g)) == SP_OK, "group %zu failed", i);
    FUZZ_CHECK(g.num_listed == g.count && g.count > 0, "group %zu lists %zu of %zu", i, g.num_listed, g.count);
    FUZZ_CHECK(i == 0 || g.listed[0] > previous_first, "groups out of order at %zu", i);
    previous_first = g.listed[0];
    for (size_t k = 0; k < g.num_listed; ++k) {
      FUZZ_CHECK(g.listed[k] < diagnostics && seen[g.listed[k]]++ == 0, "group %zu lists %zu twice or past the end", i,
                 g.listed[k]);
      sp_diagnostic d;
      FUZZ_CHECK(Take(sp_result_diagnostic(result, g.listed[k], &d)) == SP_OK, "diagnostic failed");
      FUZZ_CHECK(std::string_view(d.code.data, d.code.size) == std::string_view(g.code.data, g.code.size) &&
                     (d.pointer.data == nullptr) == (g.pointer.data == nullptr) &&
                     (d.pointer.data == nullptr ||
                      std::string_view(d.pointer.data, d.pointer.size) ==
                          std::string_view(g.pointer.data, g.pointer.size)),
                 "diagnostic %zu differs from its group %zu", g.listed[k], i);
    }
  }
  for (size_t k = 0; k < diagnostics; ++k) FUZZ_CHECK(seen[k] == 1, "diagnostic %zu is in no group", k);
}

// Diagnostic `index`'s help and operation `operation` of its fix: read in
// range, refused past it with the outputs untouched.
void FixIt(const sp_result* result, size_t index, size_t operation) {
  size_t diagnostics = 0, operations = 0;
  FUZZ_CHECK(Take(sp_result_diagnostic_count(result, &diagnostics)) == SP_OK, "count failed");
  sp_str help{nullptr, 7};
  const sp_error_code help_code = Take(sp_result_diagnostic_help(result, index, &help));
  const sp_error_code count_code = Take(sp_result_diagnostic_fix_count(result, index, &operations));
  if (index >= diagnostics) {
    FUZZ_CHECK(help_code == SP_ERROR_OUT_OF_RANGE && count_code == SP_ERROR_OUT_OF_RANGE, "help past the end");
    FUZZ_CHECK(help.data == nullptr && help.size == 7 && operations == 0, "a failed read wrote its output");
    return;
  }
  FUZZ_CHECK(help_code == SP_OK && count_code == SP_OK, "help or fix count of %zu failed", index);
  FUZZ_CHECK(help.data == nullptr || help.data[help.size] == '\0', "help not NUL-terminated");
  sp_fix_operation op;
  std::memset(&op, 0xab, sizeof op);
  const sp_fix_operation before = op;
  const sp_error_code code = Take(sp_result_diagnostic_fix(result, index, operation, &op));
  if (operation < operations) {
    FUZZ_CHECK(code == SP_OK && op.op.data != nullptr && op.path.data != nullptr, "fix operation failed");
  } else {
    FUZZ_CHECK(code == SP_ERROR_OUT_OF_RANGE, "fix operation %zu of %zu: code %d", operation, operations,
               static_cast<int>(code));
    FUZZ_CHECK(std::memcmp(&op, &before, sizeof op) == 0, "a failed read wrote its output");
  }
}

template <typename T, void (*Delete)(T*)>
struct Handles {
  std::vector<T*> all;
  ~Handles() {
    for (T* h : all) Delete(h);
  }
  T* Pick(Input& in) { return all.empty() ? nullptr : all[in.Byte() % all.size()]; }
  void Add(T* h) {
    if (all.size() < 4) {
      all.push_back(h);
    } else {
      Delete(h);
    }
  }
  void Drop(Input& in) {
    if (all.empty()) return;
    const size_t i = in.Byte() % all.size();
    Delete(all[i]);
    all.erase(all.begin() + static_cast<long>(i));
  }
};

sp_parallel_spec Parallel(Input& in, std::vector<sp_str>& axes) {
  const std::string_view kind = in.Text();
  axes.clear();
  for (int n = in.Byte() % 3; n > 0; --n) axes.push_back(S(in.Text()));
  return {S(kind), axes.data(), axes.size()};
}

// The built document checks and plans as its JSON text parses.
void CompareWithText(sp_builder* builder, const sp_document* built) {
  sp_str text{};
  FUZZ_CHECK(Take(sp_builder_to_json(builder, &text)) == SP_OK, "no JSON from the builder");
  sp_document* parsed = nullptr;
  FUZZ_CHECK(Take(sp_document_parse(text, nullptr, &parsed)) == SP_OK, "the builder's JSON did not parse");
  const sp_check_options one{1};
  for (auto run : {sp_document_check, sp_document_plan}) {
    sp_result *a = nullptr, *b = nullptr;
    FUZZ_CHECK(Take(run(built, &one, &a)) == SP_OK && Take(run(parsed, &one, &b)) == SP_OK, "check failed");
    const std::string ja = Json(a), jb = Json(b);
    FUZZ_CHECK(ja == jb, "built: %s\nparsed: %s\ntext: %.*s", ja.c_str(), jb.c_str(), static_cast<int>(text.size),
               text.data);
    sp_result_delete(a);
    sp_result_delete(b);
  }
  sp_document_delete(parsed);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  Handles<sp_document, sp_document_delete> documents;
  Handles<sp_result, sp_result_delete> results;
  Handles<sp_layout, sp_layout_delete> layouts;
  sp_builder* builder = nullptr;
  std::vector<sp_str> axes, globs;
  std::vector<int64_t> dims;
  const sp_check_options one{1};

  for (int step = 0; step < 64 && !in.empty(); ++step) {
    const uint8_t op = in.Byte() % 32;
    sp_layout* layout = layouts.Pick(in);
    const auto port = static_cast<sp_port>(in.Byte() % 6);  // 5 is no port
    switch (op) {
      case 0: {
        const std::string_view text = in.Text();
        const sp_parse_options options{static_cast<uint64_t>(in.Int()), static_cast<uint64_t>(in.Int()),
                                       static_cast<uint32_t>(in.Int())};
        sp_document* doc = nullptr;
        if (Take(sp_document_parse(S(text), in.Byte() & 1 ? &options : nullptr, &doc)) == SP_OK) documents.Add(doc);
        break;
      }
      case 1:
        sp_builder_delete(builder);
        builder = nullptr;
        Take(sp_builder_create(&builder));
        break;
      case 2:
        Take(sp_builder_add_axis(builder, S(in.Text()), in.Int()));
        break;
      case 3: {
        const std::string_view id = in.Text();
        dims.clear();
        for (int n = in.Byte() % 4; n > 0; --n) dims.push_back(in.Int());
        const bool unknown = in.Byte() % 4 == 0;
        Take(sp_builder_add_parameter(builder, S(id), unknown ? nullptr : dims.data(), unknown ? 0 : dims.size(),
                                      S(in.Text())));
        break;
      }
      case 4: {
        const std::string_view id = in.Text();
        dims.clear();
        for (int n = in.Byte() % 4; n > 0; --n) dims.push_back(in.Int());
        Take(sp_builder_set_parameter_blocks(builder, S(id), dims.data(), dims.size()));
        break;
      }
      case 5:
        Take(sp_builder_add_module(builder, S(in.Text()), S(in.Text())));
        break;
      case 6:
        Take(sp_builder_add_forward_arg(builder, S(in.Text()), S(in.Text())));
        break;
      case 7:
        Take(sp_builder_add_child(builder, S(in.Text()), S(in.Text()), S(in.Text())));
        break;
      case 8:
        Take(sp_builder_add_module_param(builder, S(in.Text()), S(in.Text()), S(in.Text())));
        break;
      case 9: {
        const std::string_view module = in.Text();
        const sp_parallel_spec spec = Parallel(in, axes);
        Take(sp_builder_set_module_parallel(builder, S(module), in.Byte() & 1 ? &spec : nullptr));
        break;
      }
      case 10:
        Take(sp_builder_set_family(builder, S(in.Text()), in.Byte() % 3, layout));
        break;
      case 11: {
        const std::string_view module = in.Text();
        const sp_parallel_spec spec = Parallel(in, axes);
        Take(sp_builder_set_family_cached(builder, S(module), layout, in.Byte() & 1 ? &spec : nullptr));
        break;
      }
      case 12:
        Take(sp_builder_set_root(builder, S(in.Text())));
        break;
      case 13:
        Take(sp_builder_add_provider(builder, S(in.Text()), layout));
        break;
      case 14: {
        globs.clear();
        for (int n = in.Byte() % 3; n > 0; --n) globs.push_back(S(in.Text()));
        const sp_parallel_spec spec = Parallel(in, axes);
        Take(sp_builder_add_native(builder, globs.empty() && in.Byte() & 1 ? nullptr : globs.data(), globs.size(),
                                   layout, in.Byte() & 1 ? &spec : nullptr));
        break;
      }
      case 15:
        Take(sp_builder_declare_plan(builder));
        break;
      case 16:
        Take(sp_builder_add_plan_entry(builder, S(in.Text()), layout));
        break;
      case 17: {
        size_t index = 0;
        Take(sp_builder_add_template(builder, S(in.Text()), S(in.Text()), &index));
        break;
      }
      case 18:
        Take(sp_builder_add_template_rule(builder, in.Index(4), S(in.Text()), S(in.Text())));
        break;
      case 19:
        Take(sp_builder_add_override(builder, S(in.Text()), layout));
        break;
      case 20: {
        sp_document* doc = nullptr;
        sp_parse_options options{static_cast<uint64_t>(in.Int()), 0, 0};
        if (Take(sp_builder_build(builder, &options, &doc)) == SP_OK) {
          if (options.max_paths == 0) CompareWithText(builder, doc);
          documents.Add(doc);
        }
        break;
      }
      case 21: {
        sp_layout* created = nullptr;
        if (Take(sp_layout_create(&created)) == SP_OK) layouts.Add(created);
        break;
      }
      case 22:
        Take(sp_layout_declare(layout, port));
        break;
      case 23:
        Take(sp_layout_add_entry(layout, port, S(in.Text())));
        break;
      case 24:
        Take(sp_layout_set_placement(layout, port, S(in.Text()), S(in.Text()), S(in.Text())));
        break;
      case 25: {
        globs.clear();
        for (int n = in.Byte() % 3; n > 0; --n) globs.push_back(S(in.Text()));
        Take(sp_layout_set_out_names(layout, globs.empty() ? nullptr : globs.data(), globs.size()));
        break;
      }
      case 26:
        Take(sp_layout_set_legacy_field(layout, S(in.Text())));
        break;
      case 27:
      case 28: {
        sp_result* result = nullptr;
        const sp_document* doc = documents.Pick(in);
        const sp_error_code code =
            Take((op == 27 ? sp_document_check : sp_document_plan)(doc, in.Byte() & 1 ? &one : nullptr, &result));
        FUZZ_CHECK((code == SP_OK) == (doc != nullptr), "check of %p: code %d", static_cast<const void*>(doc),
                   static_cast<int>(code));
        if (code == SP_OK) results.Add(result);
        break;
      }
      case 29: {
        const sp_result* result = results.Pick(in);
        if (result == nullptr) break;
        const size_t index = in.Index(8);
        switch (in.Byte() % 10) {
          case 0:
            Access<sp_diagnostic>(result, index, sp_result_diagnostic_count, sp_result_diagnostic);
            break;
          case 1:
            Access<sp_plan_entry>(result, index, sp_result_plan_entry_count, sp_result_plan_entry);
            break;
          case 2:
            Access<sp_communication>(result, index, sp_result_communication_count, sp_result_communication);
            break;
          case 3:
            Access<sp_owner>(result, index, sp_result_owner_count, sp_result_owner);
            break;
          case 4:
            Access<sp_owned_parameter>(result, index, sp_result_owned_parameter_count, sp_result_owned_parameter);
            break;
          case 5:
            Access<sp_diagnostic_group>(result, index, sp_result_group_count, sp_result_group);
            Groups(result);
            break;
          case 6:
            FixIt(result, index, in.Byte());
            break;
          case 7: {
            sp_memory memory{};
            int present = 0;
            Take(sp_result_memory(result, &memory, &present));
            if (present) FUZZ_CHECK(memory.min_bytes <= memory.max_bytes, "memory out of order");
            break;
          }
          case 8: {
            sp_training training{};
            int present = 0;
            Take(sp_result_training(result, &training, &present));
            if (present) {
              FUZZ_CHECK(training.min_total_bytes <= training.max_total_bytes, "training out of order");
              FUZZ_CHECK(training.total == training.max_total_bytes, "the worst device is not the largest");
              FUZZ_CHECK(training.params + training.grads + training.master + training.optimizer + training.gathered +
                                 training.activations ==
                             training.total,
                         "the categories do not add up");
            }
            break;
          }
          default:
            Json(result);
        }
        break;
      }
      case 30:
        switch (in.Byte() % 3) {
          case 0:
            documents.Drop(in);
            break;
          case 1:
            results.Drop(in);
            break;
          default:
            layouts.Drop(in);
        }
        break;
      default:  // 31: the pipeline plan's and training section's builder calls, or a document's validity
        switch (in.Byte() % 4) {
          case 0:
            Take(sp_builder_set_pipeline(builder, S(in.Text())));
            break;
          case 3:
            Take(sp_builder_set_training(builder, S(in.Text())));
            break;
          case 1: {
            // A module's inputs, then its outputs: names, or a null array.
            const std::string_view module = in.Text();
            std::vector<sp_str> names[2];
            for (std::vector<sp_str>& list : names) {
              for (int n = in.Byte() % 4; n > 0; --n) list.push_back(S(in.Text()));
            }
            const bool null_inputs = in.Byte() % 8 == 0;
            Take(sp_builder_add_pipeline_module(builder, S(module), null_inputs ? nullptr : names[0].data(),
                                                names[0].size(), names[1].data(), names[1].size()));
            break;
          }
          default: {
            const sp_document* doc = documents.Pick(in);
            int valid = -1;
            FUZZ_CHECK((Take(sp_document_is_valid(doc, &valid)) == SP_OK) == (doc != nullptr), "is_valid");
          }
        }
    }
  }
  sp_builder_delete(builder);
  return 0;
}
