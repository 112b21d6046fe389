// The C ABI: every function's error paths, results equal to the engine's on
// every conformance case, the builder equal to the JSON it stands for, and
// checks from several threads.
#include "shardplan/shardplan.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/engine.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "rapidjson/pointer.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "tests/support/read_file.h"

namespace {

namespace fs = std::filesystem;
using rapidjson::Value;
using shardplan::ReadFile;

sp_str S(std::string_view s) { return {s.data(), s.size()}; }
std::string Str(sp_str s) { return s.data == nullptr ? "<absent>" : std::string(s.data, s.size); }

// Takes ownership of an error and returns its code.
sp_error_code Code(sp_error* error) {
  const sp_error_code code = sp_error_code_of(error);
  sp_error_delete(error);
  return code;
}

std::string Message(sp_error* error) {
  std::string message = sp_error_message(error);
  sp_error_delete(error);
  return message;
}

std::vector<fs::path> Cases() {
  std::vector<fs::path> cases;
  for (const auto& entry : fs::directory_iterator("tests/conformance/cases")) cases.push_back(entry.path());
  std::sort(cases.begin(), cases.end());
  return cases;
}

constexpr char kSmall[] = R"J({"schema": "shardplan.v1", "mesh": {"tp": 2},
  "parameters": {"w": {"shape": [4, 4]}}, "root": "root",
  "modules": {"root": {"children": {"lin": "lin"}},
              "lin": {"forward": ["x"], "params": {"weight": "w"}}},
  "providers": {"sharding": {"lin": {"params": {"weight": {"tp": "S(0)"}}, "in_src": {"x": {}}, "in_dst": {"x": {}}}}}})J";

// Parses and checks `json` through the ABI; returns the result JSON.
std::string CheckJson(std::string_view json, uint32_t threads = 0) {
  sp_document* doc = nullptr;
  EXPECT_EQ(Code(sp_document_parse(S(json), nullptr, &doc)), SP_OK);
  sp_check_options options{threads};
  sp_result* result = nullptr;
  EXPECT_EQ(Code(sp_document_check(doc, &options, &result)), SP_OK);
  sp_str out{};
  EXPECT_EQ(Code(sp_result_json(result, &out)), SP_OK);
  std::string text = Str(out);
  sp_result_delete(result);
  sp_document_delete(doc);
  return text;
}

// The owners and owned parameters of `result` are the engine's views of
// `engine`, field by field.
void ExpectOwnersOf(const shardplan::Result& engine, const sp_result* result) {
  const std::optional<shardplan::OwnersView> owners = shardplan::OwnersOf(engine);
  size_t count = 99;
  ASSERT_EQ(Code(sp_result_owner_count(result, &count)), SP_OK);
  ASSERT_EQ(count, owners ? owners->size() : 0);
  if (owners) {
    const shardplan::OwnerLayouts layouts = owners->Layouts();
    for (size_t i = 0; i < count; ++i) {
      sp_owner o;
      ASSERT_EQ(Code(sp_result_owner(result, i, &o)), SP_OK);
      const shardplan::OwnerView want = owners->owner(i);
      EXPECT_EQ(Str(o.fqn), want.fqn);
      EXPECT_EQ(Str(o.kind), want.kind);
      EXPECT_EQ(o.native_request, want.native_request.value_or(SIZE_MAX));
      EXPECT_EQ(Str(o.native_pattern), want.native_pattern_index ? std::string(want.native_pattern) : "<absent>");
      EXPECT_EQ(Str(o.layout), layouts.texts[layouts.of_owner[i]]);
      EXPECT_EQ(Str(o.pointer), want.pointer);
      EXPECT_EQ(o.kind.data[o.kind.size], '\0');
      EXPECT_EQ(o.layout.data[o.layout.size], '\0');
    }
  }
  const std::optional<shardplan::OwnedParametersView> parameters = shardplan::OwnedParametersOf(engine);
  ASSERT_EQ(Code(sp_result_owned_parameter_count(result, &count)), SP_OK);
  ASSERT_EQ(count, parameters ? parameters->size() : 0);
  for (size_t i = 0; i < count; ++i) {
    sp_owned_parameter p;
    ASSERT_EQ(Code(sp_result_owned_parameter(result, i, &p)), SP_OK);
    const shardplan::OwnedParameterView want = parameters->parameter(i);
    EXPECT_EQ(Str(p.name), want.name);
    EXPECT_EQ(Str(p.canonical), want.canonical);
    EXPECT_EQ(p.owner, want.owner);
    rapidjson::Document placements;
    placements.Parse(p.placements.data, p.placements.size);
    ASSERT_TRUE(placements.IsObject()) << Str(p.placements);
    ASSERT_EQ(placements.MemberCount(), want.placements.size());
    size_t k = 0;
    for (auto it = placements.MemberBegin(); it != placements.MemberEnd(); ++it, ++k) {
      EXPECT_EQ(it->name.GetString(), want.placements[k].first);
      EXPECT_EQ(it->value.GetString(), want.placements[k].second);
    }
  }
}

TEST(CApi, Versions) {
  EXPECT_EQ(sp_abi_version(), static_cast<uint32_t>(SP_ABI_VERSION));
  EXPECT_EQ(std::string(sp_version_string()), std::to_string(SP_VERSION_MAJOR) + "." +
                                                   std::to_string(SP_VERSION_MINOR) + "." +
                                                   std::to_string(SP_VERSION_PATCH));
}

TEST(CApi, ResultEqualsTheEngineOnEveryConformanceCase) {
  for (const fs::path& path : Cases()) {
    SCOPED_TRACE(path.string());
    const std::string text = ReadFile(path).value();
    absl::StatusOr<shardplan::Result> engine = shardplan::Check(text, {});
    ASSERT_TRUE(engine.ok());
    EXPECT_EQ(CheckJson(text), shardplan::ResultToJson(*engine));

    sp_document* doc = nullptr;
    ASSERT_EQ(Code(sp_document_parse(S(text), nullptr, &doc)), SP_OK);
    int valid = -1;
    ASSERT_EQ(Code(sp_document_is_valid(doc, &valid)), SP_OK);
    const bool invalid_document =
        !engine->diagnostics.empty() && engine->diagnostics[0].code == "invalid-document";
    EXPECT_EQ(valid, invalid_document ? 0 : 1);
    sp_result* result = nullptr;
    ASSERT_EQ(Code(sp_document_check(doc, nullptr, &result)), SP_OK);
    int ok = -1;
    ASSERT_EQ(Code(sp_result_ok(result, &ok)), SP_OK);
    EXPECT_EQ(ok, engine->ok ? 1 : 0);
    size_t count = 0;
    ASSERT_EQ(Code(sp_result_diagnostic_count(result, &count)), SP_OK);
    ASSERT_EQ(count, engine->diagnostics.size());
    for (size_t i = 0; i < count; ++i) {
      sp_diagnostic d;
      ASSERT_EQ(Code(sp_result_diagnostic(result, i, &d)), SP_OK);
      const shardplan::Diagnostic& want = engine->diagnostics[i];
      EXPECT_EQ(Str(d.code), want.code);
      EXPECT_EQ(d.severity, SP_SEVERITY_ERROR);
      EXPECT_EQ(Str(d.message), want.message);
      EXPECT_EQ(Str(d.fqn), want.fqn.value_or("<absent>"));
      EXPECT_EQ(Str(d.parameter), want.parameter.value_or("<absent>"));
      EXPECT_EQ(Str(d.pointer), want.pointer.value_or("<absent>"));
      EXPECT_EQ(d.message.data[d.message.size], '\0');
    }
    ExpectOwnersOf(*engine, result);
    sp_result_delete(result);
    sp_document_delete(doc);
  }
}

TEST(CApi, NullArgumentsAreErrors) {
  sp_document* doc = nullptr;
  sp_result* result = nullptr;
  ASSERT_EQ(Code(sp_document_parse(S(kSmall), nullptr, &doc)), SP_OK);
  ASSERT_EQ(Code(sp_document_check(doc, nullptr, &result)), SP_OK);
  int flag = 0;
  size_t count = 0;
  sp_diagnostic d;
  sp_str str;
  sp_layout* layout = nullptr;
  sp_builder* builder = nullptr;
  ASSERT_EQ(Code(sp_layout_create(&layout)), SP_OK);
  ASSERT_EQ(Code(sp_builder_create(&builder)), SP_OK);
  const sp_str null_text{nullptr, 3};
  const sp_parallel_spec null_axes{S("tp"), nullptr, 1};

  const std::vector<std::pair<const char*, sp_error*>> calls = {
      {"parse out", sp_document_parse(S(kSmall), nullptr, nullptr)},
      {"parse text", sp_document_parse(null_text, nullptr, &doc)},
      {"is_valid doc", sp_document_is_valid(nullptr, &flag)},
      {"is_valid out", sp_document_is_valid(doc, nullptr)},
      {"check doc", sp_document_check(nullptr, nullptr, &result)},
      {"check out", sp_document_check(doc, nullptr, nullptr)},
      {"ok result", sp_result_ok(nullptr, &flag)},
      {"ok out", sp_result_ok(result, nullptr)},
      {"count result", sp_result_diagnostic_count(nullptr, &count)},
      {"count out", sp_result_diagnostic_count(result, nullptr)},
      {"diagnostic result", sp_result_diagnostic(nullptr, 0, &d)},
      {"diagnostic out", sp_result_diagnostic(result, 0, nullptr)},
      {"help result", sp_result_diagnostic_help(nullptr, 0, &str)},
      {"help out", sp_result_diagnostic_help(result, 0, nullptr)},
      {"fix_count result", sp_result_diagnostic_fix_count(nullptr, 0, &count)},
      {"fix_count out", sp_result_diagnostic_fix_count(result, 0, nullptr)},
      {"fix result", sp_result_diagnostic_fix(nullptr, 0, 0, nullptr)},
      {"fix out", sp_result_diagnostic_fix(result, 0, 0, nullptr)},
      {"group_count result", sp_result_group_count(nullptr, &count)},
      {"group_count out", sp_result_group_count(result, nullptr)},
      {"group result", sp_result_group(nullptr, 0, nullptr)},
      {"group out", sp_result_group(result, 0, nullptr)},
      {"json result", sp_result_json(nullptr, &str)},
      {"json out", sp_result_json(result, nullptr)},
      {"layout_create", sp_layout_create(nullptr)},
      {"layout_declare", sp_layout_declare(nullptr, SP_PORT_PARAMS)},
      {"layout_add_entry", sp_layout_add_entry(nullptr, SP_PORT_PARAMS, S("w"))},
      {"layout_add_entry name", sp_layout_add_entry(layout, SP_PORT_PARAMS, null_text)},
      {"layout_set_placement", sp_layout_set_placement(nullptr, SP_PORT_PARAMS, S("w"), S("tp"), S("R"))},
      {"layout_set_placement axis", sp_layout_set_placement(layout, SP_PORT_PARAMS, S("w"), null_text, S("R"))},
      {"layout_set_out_names", sp_layout_set_out_names(nullptr, nullptr, 0)},
      {"layout_set_out_names names", sp_layout_set_out_names(layout, nullptr, 2)},
      {"builder_create", sp_builder_create(nullptr)},
      {"add_axis", sp_builder_add_axis(nullptr, S("tp"), 2)},
      {"add_axis name", sp_builder_add_axis(builder, null_text, 2)},
      {"add_parameter", sp_builder_add_parameter(nullptr, S("w"), nullptr, 0, S(""))},
      {"add_parameter shape", sp_builder_add_parameter(builder, S("w"), nullptr, 2, S(""))},
      {"add_module", sp_builder_add_module(nullptr, S("m"), S(""))},
      {"add_forward_arg", sp_builder_add_forward_arg(nullptr, S("m"), S("x"))},
      {"add_child", sp_builder_add_child(nullptr, S("m"), S("c"), S("m2"))},
      {"add_module_param", sp_builder_add_module_param(nullptr, S("m"), S("weight"), S("w"))},
      {"set_module_parallel", sp_builder_set_module_parallel(nullptr, S("m"), nullptr)},
      {"set_family", sp_builder_set_family(nullptr, S("m"), 0, nullptr)},
      {"set_family_cached", sp_builder_set_family_cached(nullptr, S("m"), layout, nullptr)},
      {"set_family_cached layout", sp_builder_set_family_cached(builder, S("m"), nullptr, nullptr)},
      {"set_root", sp_builder_set_root(nullptr, S("m"))},
      {"add_provider", sp_builder_add_provider(nullptr, S(""), layout)},
      {"add_provider layout", sp_builder_add_provider(builder, S(""), nullptr)},
      {"add_native", sp_builder_add_native(nullptr, nullptr, 0, layout, nullptr)},
      {"add_native globs", sp_builder_add_native(builder, nullptr, 1, layout, nullptr)},
      {"add_native layout", sp_builder_add_native(builder, nullptr, 0, nullptr, nullptr)},
      {"add_native axes", sp_builder_add_native(builder, nullptr, 0, layout, &null_axes)},
      {"declare_plan", sp_builder_declare_plan(nullptr)},
      {"plan doc", sp_document_plan(nullptr, nullptr, &result)},
      {"plan out", sp_document_plan(doc, nullptr, nullptr)},
      {"memory result", sp_result_memory(nullptr, nullptr, &flag)},
      {"memory present", sp_result_memory(result, nullptr, nullptr)},
      {"plan_entry_count", sp_result_plan_entry_count(nullptr, &count)},
      {"plan_entry_count out", sp_result_plan_entry_count(result, nullptr)},
      {"plan_entry", sp_result_plan_entry(nullptr, 0, nullptr)},
      {"communication_count", sp_result_communication_count(nullptr, &count)},
      {"communication_count out", sp_result_communication_count(result, nullptr)},
      {"communication", sp_result_communication(result, 0, nullptr)},
      {"owner_count", sp_result_owner_count(nullptr, &count)},
      {"owner_count out", sp_result_owner_count(result, nullptr)},
      {"owner", sp_result_owner(nullptr, 0, nullptr)},
      {"owner out", sp_result_owner(result, 0, nullptr)},
      {"owned_parameter_count", sp_result_owned_parameter_count(nullptr, &count)},
      {"owned_parameter_count out", sp_result_owned_parameter_count(result, nullptr)},
      {"owned_parameter", sp_result_owned_parameter(nullptr, 0, nullptr)},
      {"owned_parameter out", sp_result_owned_parameter(result, 0, nullptr)},
      {"set_parameter_blocks", sp_builder_set_parameter_blocks(nullptr, S("w"), nullptr, 0)},
      {"set_parameter_blocks blocks", sp_builder_set_parameter_blocks(builder, S("w"), nullptr, 2)},
      {"add_template", sp_builder_add_template(nullptr, S("tp"), S(""), &count)},
      {"add_template out", sp_builder_add_template(builder, S("tp"), S(""), nullptr)},
      {"add_template axis", sp_builder_add_template(builder, null_text, S(""), &count)},
      {"add_template_rule", sp_builder_add_template_rule(nullptr, 0, S("x"), S("colwise"))},
      {"add_template_rule pattern", sp_builder_add_template_rule(builder, 0, null_text, S("colwise"))},
      {"add_override", sp_builder_add_override(nullptr, S(""), layout)},
      {"add_override layout", sp_builder_add_override(builder, S(""), nullptr)},
      {"set_pipeline", sp_builder_set_pipeline(nullptr, S(""))},
      {"set_pipeline prefix", sp_builder_set_pipeline(builder, null_text)},
      {"add_pipeline_module", sp_builder_add_pipeline_module(nullptr, S("m"), nullptr, 0, nullptr, 0)},
      {"add_pipeline_module module", sp_builder_add_pipeline_module(builder, null_text, nullptr, 0, nullptr, 0)},
      {"add_pipeline_module inputs", sp_builder_add_pipeline_module(builder, S("m"), nullptr, 1, nullptr, 0)},
      {"add_pipeline_module outputs", sp_builder_add_pipeline_module(builder, S("m"), nullptr, 0, nullptr, 2)},
      {"layout_set_legacy_field", sp_layout_set_legacy_field(nullptr, S("inner_wrapper"))},
      {"layout_set_legacy_field field", sp_layout_set_legacy_field(layout, null_text)},
      {"add_plan_entry", sp_builder_add_plan_entry(nullptr, S(""), layout)},
      {"add_plan_entry layout", sp_builder_add_plan_entry(builder, S(""), nullptr)},
      {"to_json", sp_builder_to_json(nullptr, &str)},
      {"to_json out", sp_builder_to_json(builder, nullptr)},
      {"build", sp_builder_build(nullptr, nullptr, &doc)},
      {"build out", sp_builder_build(builder, nullptr, nullptr)},
  };
  for (const auto& [name, error] : calls) {
    SCOPED_TRACE(name);
    EXPECT_EQ(sp_error_code_of(error), SP_ERROR_NULL_ARGUMENT);
    EXPECT_NE(std::string(sp_error_message(error)).find("must not be NULL"), std::string::npos);
    sp_error_delete(error);
  }
  sp_builder_delete(builder);
  sp_layout_delete(layout);
  sp_result_delete(result);
  sp_document_delete(doc);
}

TEST(CApi, OutputsAreUntouchedOnFailure) {
  sp_document* doc = nullptr;
  sp_result* result = nullptr;
  ASSERT_EQ(Code(sp_document_parse(S(kSmall), nullptr, &doc)), SP_OK);
  ASSERT_EQ(Code(sp_document_check(doc, nullptr, &result)), SP_OK);
  sp_diagnostic d;
  std::memset(&d, 0x5a, sizeof d);
  sp_diagnostic before = d;
  EXPECT_EQ(Code(sp_result_diagnostic(result, 0, &d)), SP_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(std::memcmp(&d, &before, sizeof d), 0);
  sp_owner owner;
  std::memset(&owner, 0x5a, sizeof owner);
  const sp_owner owner_before = owner;
  EXPECT_EQ(Code(sp_result_owner(result, 1, &owner)), SP_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(std::memcmp(&owner, &owner_before, sizeof owner), 0);
  sp_owned_parameter parameter;
  std::memset(&parameter, 0x5a, sizeof parameter);
  const sp_owned_parameter parameter_before = parameter;
  EXPECT_EQ(Code(sp_result_owned_parameter(result, 1, &parameter)), SP_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(std::memcmp(&parameter, &parameter_before, sizeof parameter), 0);
  auto* sentinel = reinterpret_cast<sp_result*>(0x1);
  sp_check_options huge{0xffffffffu};
  EXPECT_EQ(Code(sp_document_check(doc, &huge, &sentinel)), SP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(sentinel, reinterpret_cast<sp_result*>(0x1));
  sp_result_delete(result);
  sp_document_delete(doc);
}

TEST(CApi, MalformedDocumentsAreDiagnostics) {
  sp_document* doc = nullptr;
  ASSERT_EQ(Code(sp_document_parse(S("{\"schema\": "), nullptr, &doc)), SP_OK);
  int valid = -1;
  ASSERT_EQ(Code(sp_document_is_valid(doc, &valid)), SP_OK);
  EXPECT_EQ(valid, 0);
  sp_result* result = nullptr;
  ASSERT_EQ(Code(sp_document_check(doc, nullptr, &result)), SP_OK);
  sp_diagnostic d;
  ASSERT_EQ(Code(sp_result_diagnostic(result, 0, &d)), SP_OK);
  EXPECT_EQ(Str(d.code), "invalid-document");
  EXPECT_EQ(Str(d.fqn), "<absent>");
  sp_result_delete(result);
  sp_document_delete(doc);

  // An empty input may be passed as (NULL, 0).
  ASSERT_EQ(Code(sp_document_parse({nullptr, 0}, nullptr, &doc)), SP_OK);
  ASSERT_EQ(Code(sp_document_is_valid(doc, &valid)), SP_OK);
  EXPECT_EQ(valid, 0);
  sp_document_delete(doc);
}

TEST(CApi, ParseOptionsApplyTheLimits) {
  sp_parse_options options{};
  options.max_paths = 1;
  sp_document* doc = nullptr;
  ASSERT_EQ(Code(sp_document_parse(S(kSmall), &options, &doc)), SP_OK);
  sp_result* result = nullptr;
  ASSERT_EQ(Code(sp_document_check(doc, nullptr, &result)), SP_OK);
  sp_diagnostic d;
  ASSERT_EQ(Code(sp_result_diagnostic(result, 0, &d)), SP_OK);
  EXPECT_EQ(Str(d.code), "invalid-document");
  EXPECT_NE(Str(d.message).find("more than 1 module paths"), std::string::npos) << Str(d.message);
  sp_result_delete(result);
  sp_document_delete(doc);

  options = {};
  options.max_json_depth = 2;  // the document nests deeper
  ASSERT_EQ(Code(sp_document_parse(S(kSmall), &options, &doc)), SP_OK);
  int valid = -1;
  ASSERT_EQ(Code(sp_document_is_valid(doc, &valid)), SP_OK);
  EXPECT_EQ(valid, 0);
  sp_document_delete(doc);
}

TEST(CApi, ThreadsGiveTheSameResultAndDocumentsAreShared) {
  for (const fs::path& path : Cases()) {
    const std::string text = ReadFile(path).value();
    ASSERT_EQ(CheckJson(text, 1), CheckJson(text, 3)) << path;
  }
  const std::string text = ReadFile("tests/conformance/cases/000-tiny-llama.json").value();
  const std::string want = CheckJson(text, 1);
  sp_document* doc = nullptr;
  ASSERT_EQ(Code(sp_document_parse(S(text), nullptr, &doc)), SP_OK);
  std::vector<std::string> got(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        sp_result* result = nullptr;
        sp_check_options options{static_cast<uint32_t>(t % 2 + 1)};
        if (sp_error* e = sp_document_check(doc, &options, &result)) {
          got[t] = Message(e);
          return;
        }
        sp_str json;
        sp_error_delete(sp_result_json(result, &json));
        got[t] = Str(json);
        sp_result_delete(result);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  sp_document_delete(doc);
  for (const std::string& g : got) EXPECT_EQ(g, want);
}

TEST(CApi, ResultsOutliveTheirDocument) {
  sp_document* doc = nullptr;
  ASSERT_EQ(Code(sp_document_parse(S(ReadFile("tests/conformance/cases/000-tiny-llama.json").value()), nullptr, &doc)),
            SP_OK);
  sp_result* result = nullptr;
  ASSERT_EQ(Code(sp_document_check(doc, nullptr, &result)), SP_OK);
  sp_document_delete(doc);
  sp_str json;
  ASSERT_EQ(Code(sp_result_json(result, &json)), SP_OK);
  EXPECT_NE(Str(json).find("\"embed_tokens.weight\""), std::string::npos);
  sp_result_delete(result);
}

// Parses and checks `path`; the result, with the document deleted.
sp_result* CheckFile(const std::string& path) {
  sp_document* doc = nullptr;
  EXPECT_EQ(Code(sp_document_parse(S(ReadFile(path).value()), nullptr, &doc)), SP_OK);
  sp_result* result = nullptr;
  EXPECT_EQ(Code(sp_document_check(doc, nullptr, &result)), SP_OK);
  sp_document_delete(doc);
  return result;
}

// "fqn kind [request pattern] pointer" per owner.
std::vector<std::string> Owners(const sp_result* result) {
  size_t count = 0;
  EXPECT_EQ(Code(sp_result_owner_count(result, &count)), SP_OK);
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) {
    sp_owner o;
    EXPECT_EQ(Code(sp_result_owner(result, i, &o)), SP_OK);
    std::string line = Str(o.fqn) + " " + Str(o.kind);
    if (o.native_request != SIZE_MAX) line += " " + std::to_string(o.native_request) + " " + Str(o.native_pattern);
    out.push_back(line + " " + Str(o.pointer));
  }
  return out;
}

TEST(CApi, OwnersAndOwnedParametersOfAPassingCheck) {
  sp_result* result = CheckFile("examples/tiny-llama.json");
  EXPECT_EQ(Owners(result), (std::vector<std::string>{
                                "embed_tokens model /providers/sharding/embed_tokens",
                                "lm_head model /providers/sharding/lm_head",
                                "layers.0.self_attn family /modules/layers.0.self_attn/family/sharding",
                                "layers.1.self_attn family /modules/layers.1.self_attn/family/sharding",
                                "layers.0.mlp native 0 layers.*.mlp /providers/native/0/sharding",
                                "layers.1.mlp native 0 layers.*.mlp /providers/native/0/sharding",
                            }));
  sp_owner mlp0, mlp1, lm_head;
  ASSERT_EQ(Code(sp_result_owner(result, 4, &mlp0)), SP_OK);
  ASSERT_EQ(Code(sp_result_owner(result, 5, &mlp1)), SP_OK);
  ASSERT_EQ(Code(sp_result_owner(result, 1, &lm_head)), SP_OK);
  EXPECT_EQ(mlp0.layout.data, mlp1.layout.data);  // one request's layout
  // lm_head's weight is the tied embed_tokens.weight, placed alike: dropped
  // from lm_head's layout, as the result JSON prints it.
  EXPECT_EQ(Str(lm_head.layout).rfind(R"J({"params":{},"in_src":{"input":{"dp":"S(0)","tp":"R"}},)J", 0), 0u)
      << Str(lm_head.layout);
  sp_str json;
  ASSERT_EQ(Code(sp_result_json(result, &json)), SP_OK);
  EXPECT_NE(Str(json).find(R"J("lm_head":)J" + Str(lm_head.layout)), std::string::npos);

  size_t count = 0;
  ASSERT_EQ(Code(sp_result_owned_parameter_count(result, &count)), SP_OK);
  ASSERT_EQ(count, 16u);  // owned_names
  sp_owned_parameter first, last, o_proj;
  ASSERT_EQ(Code(sp_result_owned_parameter(result, 0, &first)), SP_OK);
  ASSERT_EQ(Code(sp_result_owned_parameter(result, count - 1, &last)), SP_OK);
  for (size_t i = 0; i < count; ++i) {
    ASSERT_EQ(Code(sp_result_owned_parameter(result, i, &o_proj)), SP_OK);
    if (Str(o_proj.name) == "layers.1.self_attn.o_proj.weight") break;
  }
  EXPECT_EQ(Str(first.name), "embed_tokens.weight");
  EXPECT_EQ(Str(first.canonical), "embed_tokens.weight");
  EXPECT_EQ(first.owner, 0u);
  EXPECT_EQ(Str(first.placements), R"J({"dp":"R","tp":"S(0)"})J");
  EXPECT_EQ(Str(last.name), "lm_head.weight");
  EXPECT_EQ(Str(last.canonical), "embed_tokens.weight");
  EXPECT_EQ(last.owner, 0u);  // placed by embed_tokens, its first claimant
  EXPECT_EQ(last.placements.data, first.placements.data);
  EXPECT_EQ(Str(o_proj.name), "layers.1.self_attn.o_proj.weight");
  EXPECT_EQ(o_proj.owner, 3u);
  EXPECT_EQ(Str(o_proj.placements), R"J({"dp":"R","tp":"S(1)"})J");
  EXPECT_EQ(last.name.data[last.name.size], '\0');
  EXPECT_EQ(last.placements.data[last.placements.size], '\0');
  EXPECT_EQ(Code(sp_result_owned_parameter(result, count, &first)), SP_ERROR_OUT_OF_RANGE);
  sp_result_delete(result);
}

TEST(CApi, AFailedCheckHasItsCollectedOwnersButNoOwnedParameters) {
  sp_result* result = CheckFile("examples/tiny-llama-broken.json");
  int ok = 1;
  ASSERT_EQ(Code(sp_result_ok(result, &ok)), SP_OK);
  ASSERT_EQ(ok, 0);
  // Its native pattern 'layer.*.mlp' matches no module: no native owner.
  EXPECT_EQ(Owners(result), (std::vector<std::string>{
                                "embed_tokens model /providers/sharding/embed_tokens",
                                "lm_head model /providers/sharding/lm_head",
                                "layers.0.self_attn family /modules/layers.0.self_attn/family/sharding",
                                "layers.1.self_attn family /modules/layers.1.self_attn/family/sharding",
                            }));
  size_t count = 99;
  ASSERT_EQ(Code(sp_result_owned_parameter_count(result, &count)), SP_OK);
  EXPECT_EQ(count, 0u);
  sp_result_delete(result);

  // A malformed document has no owner.
  sp_document* doc = nullptr;
  ASSERT_EQ(Code(sp_document_parse(S("{"), nullptr, &doc)), SP_OK);
  ASSERT_EQ(Code(sp_document_check(doc, nullptr, &result)), SP_OK);
  ASSERT_EQ(Code(sp_result_owner_count(result, &count)), SP_OK);
  EXPECT_EQ(count, 0u);
  sp_result_delete(result);
  sp_document_delete(doc);
}

// The owners and parameters are spelled out on the first request: from
// several threads at once, every thread reads the same bytes.
TEST(CApi, OwnersAreReadFromSeveralThreadsAtOnce) {
  sp_result* result = CheckFile("examples/tiny-llama.json");
  std::vector<std::string> got(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t) {
    threads.emplace_back([&, t] {
      size_t owners = 0, parameters = 0;
      sp_error_delete(sp_result_owner_count(result, &owners));
      sp_error_delete(sp_result_owned_parameter_count(result, &parameters));
      for (size_t i = 0; i < owners; ++i) {
        sp_owner o;
        sp_error_delete(sp_result_owner(result, i, &o));
        got[t] += Str(o.fqn) + Str(o.layout);
      }
      for (size_t i = 0; i < parameters; ++i) {
        sp_owned_parameter p;
        sp_error_delete(sp_result_owned_parameter(result, i, &p));
        got[t] += Str(p.name) + Str(p.placements);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& g : got) EXPECT_EQ(g, got[0]);
  EXPECT_NE(got[0].find("lm_head.weight"), std::string::npos);
  sp_result_delete(result);
}

// A tp template plans the MLP around an owned embedding; rowwise down_proj
// implies an all_reduce.
constexpr char kPlanDoc[] = R"J({"schema": "shardplan.v1", "mesh": {"dp": 2, "tp": 4},
  "parameters": {"emb": {"shape": [64, 8], "dtype": "bfloat16"}, "up": {"shape": [32, 8]}, "down": {"shape": [8, 32]}},
  "root": "model",
  "modules": {"model": {"children": {"embed": "embed", "up_proj": "up", "down_proj": "down"}},
              "embed": {"type": "Embedding", "forward": ["input"], "params": {"weight": "emb"}},
              "up": {"type": "Linear", "forward": ["x"], "params": {"weight": "up"}},
              "down": {"type": "Linear", "forward": ["x"], "params": {"weight": "down"}}},
  "providers": {"sharding": {"embed": {"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}}}},
  "templates": [{"axis": "tp", "rules": {"up_proj": "colwise", "down_proj": "rowwise"}}]})J";

TEST(CApi, PlanEqualsTheEngineAndReadsItsResults) {
  sp_document* doc = nullptr;
  ASSERT_EQ(Code(sp_document_parse(S(kPlanDoc), nullptr, &doc)), SP_OK);
  sp_result* result = nullptr;
  ASSERT_EQ(Code(sp_document_plan(doc, nullptr, &result)), SP_OK);
  absl::StatusOr<shardplan::Result> engine = shardplan::Plan(kPlanDoc, {});
  ASSERT_TRUE(engine.ok());
  const std::optional<shardplan::PlanView> plan = shardplan::PlanOf(*engine);
  ASSERT_TRUE(plan.has_value());
  sp_str json;
  ASSERT_EQ(Code(sp_result_json(result, &json)), SP_OK);
  EXPECT_EQ(Str(json), shardplan::ResultToJson(*engine));
  ExpectOwnersOf(*engine, result);

  sp_memory memory;
  int present = 0;
  ASSERT_EQ(Code(sp_result_memory(result, &memory, &present)), SP_OK);
  ASSERT_EQ(present, 1);
  const shardplan::MemoryReport& m = *plan->memory();
  EXPECT_EQ(memory.devices, 8u);
  EXPECT_EQ(memory.max_bytes, m.max_bytes);
  EXPECT_EQ(memory.unsharded_bytes, 64u * 8 * 2 + 32 * 8 * 4 + 8 * 32 * 4);
  EXPECT_EQ(memory.mean_bytes, m.mean_bytes);
  ASSERT_EQ(memory.num_devices_listed, 8u);
  EXPECT_EQ(std::vector<uint64_t>(memory.per_device_bytes, memory.per_device_bytes + 8), *m.per_device_bytes);

  size_t count = 0;
  ASSERT_EQ(Code(sp_result_plan_entry_count(result, &count)), SP_OK);
  ASSERT_EQ(count, 3u);
  sp_plan_entry entry;
  ASSERT_EQ(Code(sp_result_plan_entry(result, 2, &entry)), SP_OK);
  EXPECT_EQ(Str(entry.fqn), "down_proj");
  EXPECT_EQ(Str(entry.provenance), "template:tp:down_proj");
  EXPECT_EQ(entry.fqn.data[entry.fqn.size], '\0');
  EXPECT_EQ(Code(sp_result_plan_entry(result, 3, &entry)), SP_ERROR_OUT_OF_RANGE);

  ASSERT_EQ(Code(sp_result_communication_count(result, &count)), SP_OK);
  ASSERT_EQ(count, plan->communication_size());
  bool all_reduce = false;
  for (size_t i = 0; i < count; ++i) {
    sp_communication c;
    ASSERT_EQ(Code(sp_result_communication(result, i, &c)), SP_OK);
    all_reduce |= Str(c.fqn) == "down_proj" && Str(c.port) == "out:output" && Str(c.axis) == "tp" &&
                  Str(c.from) == "P" && Str(c.to) == "R" && Str(c.collective) == "all_reduce";
  }
  EXPECT_TRUE(all_reduce);
  sp_communication c;
  EXPECT_EQ(Code(sp_result_communication(result, count, &c)), SP_ERROR_OUT_OF_RANGE);
  sp_result_delete(result);

  // A checked (not planned) result has no plan: counts 0, no memory.
  ASSERT_EQ(Code(sp_document_check(doc, nullptr, &result)), SP_OK);
  ASSERT_EQ(Code(sp_result_memory(result, &memory, &present)), SP_OK);
  EXPECT_EQ(present, 0);
  ASSERT_EQ(Code(sp_result_plan_entry_count(result, &count)), SP_OK);
  EXPECT_EQ(count, 0u);
  sp_result_delete(result);
  sp_document_delete(doc);
}

// ---- Builder --------------------------------------------------------------

// Parses `json` and checks or plans it through the ABI; the result JSON.
std::string ResultOf(std::string_view json, bool plan) {
  sp_document* doc = nullptr;
  EXPECT_EQ(Code(sp_document_parse(S(json), nullptr, &doc)), SP_OK);
  sp_result* result = nullptr;
  EXPECT_EQ(Code(plan ? sp_document_plan(doc, nullptr, &result) : sp_document_check(doc, nullptr, &result)), SP_OK);
  sp_str out{};
  EXPECT_EQ(Code(sp_result_json(result, &out)), SP_OK);
  std::string text = Str(out);
  sp_result_delete(result);
  sp_document_delete(doc);
  return text;
}

// The result JSON of the builder's document, checked or planned.
std::string BuiltResultOf(sp_builder* builder, bool plan) {
  sp_document* doc = nullptr;
  EXPECT_EQ(Code(sp_builder_build(builder, nullptr, &doc)), SP_OK);
  sp_result* result = nullptr;
  EXPECT_EQ(Code(plan ? sp_document_plan(doc, nullptr, &result) : sp_document_check(doc, nullptr, &result)), SP_OK);
  sp_str out{};
  EXPECT_EQ(Code(sp_result_json(result, &out)), SP_OK);
  std::string text = Str(out);
  sp_result_delete(result);
  sp_document_delete(doc);
  return text;
}

bool IsInvalidDocument(const std::string& result_json) {
  return result_json.find("\"code\":\"invalid-document\"") != std::string::npos;
}

TEST(CApiBuilder, RefusesBadArgumentsAtTheCall) {
  sp_builder* b = nullptr;
  sp_layout* l = nullptr;
  ASSERT_EQ(Code(sp_builder_create(&b)), SP_OK);
  ASSERT_EQ(Code(sp_layout_create(&l)), SP_OK);
  EXPECT_EQ(Code(sp_builder_add_axis(b, S("tp"), 2)), SP_OK);
  EXPECT_EQ(Message(sp_builder_add_axis(b, S("tp"), 4)), "duplicate mesh axis 'tp'");
  EXPECT_EQ(Code(sp_builder_add_axis(b, S("dp"), 0)), SP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Code(sp_builder_add_axis(b, S("\xff"), 2)), SP_ERROR_INVALID_ARGUMENT);
  const int64_t bad_shape[] = {4, -1};
  EXPECT_EQ(Code(sp_builder_add_parameter(b, S("w"), bad_shape, 2, S(""))), SP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Code(sp_builder_add_parameter(b, S("w"), nullptr, 0, S(""))), SP_OK);
  EXPECT_EQ(Code(sp_builder_add_parameter(b, S("w"), nullptr, 0, S(""))), SP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Message(sp_builder_add_child(b, S("nope"), S("c"), S("x"))),
            "unknown module id 'nope' (add it first)");
  EXPECT_EQ(Code(sp_builder_add_module(b, S("m"), S("Linear"))), SP_OK);
  EXPECT_EQ(Code(sp_builder_add_module(b, S("m"), S(""))), SP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Code(sp_builder_add_child(b, S("m"), S("c"), S("m"))), SP_OK);
  EXPECT_EQ(Code(sp_builder_add_child(b, S("m"), S("c"), S("m"))), SP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Code(sp_builder_add_module_param(b, S("m"), S("weight"), S("w"))), SP_OK);
  EXPECT_EQ(Code(sp_builder_add_module_param(b, S("m"), S("weight"), S("w"))), SP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Code(sp_builder_set_family_cached(b, S("m"), l, nullptr)), SP_ERROR_INVALID_ARGUMENT);

  EXPECT_EQ(Message(sp_layout_set_placement(l, SP_PORT_PARAMS, S("weight"), S("tp"), S("Shard(0)"))),
            "bad placement 'Shard(0)' (expected S(dim), R, P or P(sum|avg|max|min|prod))");
  EXPECT_EQ(Code(sp_layout_set_placement(l, SP_PORT_PARAMS, S("weight"), S("tp"), S("S(0)"))), SP_OK);
  EXPECT_EQ(Message(sp_layout_set_placement(l, SP_PORT_PARAMS, S("weight"), S("tp"), S("R"))),
            "axis 'tp' is already placed for 'weight'");
  // 5 is still a value of sp_port's range in C++; c99_test passes -1 and 99.
  EXPECT_EQ(Code(sp_layout_declare(l, static_cast<sp_port>(5))), SP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Code(sp_layout_add_entry(l, static_cast<sp_port>(7), S("x"))), SP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Code(sp_builder_add_provider(b, S("c"), l)), SP_OK);
  EXPECT_EQ(Code(sp_builder_add_provider(b, S("c"), l)), SP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Code(sp_builder_add_plan_entry(b, S("c"), l)), SP_OK);
  EXPECT_EQ(Code(sp_builder_add_plan_entry(b, S("c"), l)), SP_ERROR_INVALID_ARGUMENT);

  // What the parser refuses in one value is refused at the call.
  EXPECT_EQ(Message(sp_builder_add_parameter(b, S("v"), nullptr, 0, S("fp32"))),
            "unknown dtype 'fp32' (expected float32, float16, bfloat16, float8_e4m3fn, float8_e5m2, int8, int32, "
            "int64 or bool)");
  EXPECT_EQ(Message(sp_builder_add_child(b, S("m"), S("a.b"), S("m"))), "child name 'a.b' must not contain '.'");
  EXPECT_EQ(Message(sp_builder_add_child(b, S("m"), S(""), S("m"))), "child name must not be empty");
  EXPECT_EQ(Message(sp_builder_add_child(b, S("m"), S("weight"), S("m"))),
            "name 'weight' is both a child and a parameter of module 'm'");
  EXPECT_EQ(Message(sp_builder_add_module_param(b, S("m"), S("c"), S("w"))),
            "name 'c' is both a child and a parameter of module 'm'");
  const sp_parallel_spec unnamed{S(""), nullptr, 0};
  EXPECT_EQ(Message(sp_builder_set_module_parallel(b, S("m"), &unnamed)), "binding_kind must not be empty");
  EXPECT_EQ(Message(sp_layout_set_legacy_field(l, S("forward_hook"))),
            "unknown legacy field 'forward_hook' (expected local_compute_fn, inner_wrapper, inner_target or "
            "region_dispatch)");

  // Blocks fit the parameter's known shape.
  const int64_t shape[] = {8, 6};
  const int64_t good[] = {2, 3}, uneven[] = {3, 3}, zero[] = {0, 1};
  ASSERT_EQ(Code(sp_builder_add_parameter(b, S("qkv"), shape, 2, S("bfloat16"))), SP_OK);
  EXPECT_EQ(Message(sp_builder_set_parameter_blocks(b, S("nope"), good, 2)), "unknown parameter id 'nope' (add it first)");
  EXPECT_EQ(Message(sp_builder_set_parameter_blocks(b, S("w"), good, 2)),
            "blocks of parameter 'w' must give one positive integer per dim of a known shape");
  EXPECT_EQ(Code(sp_builder_set_parameter_blocks(b, S("qkv"), good, 1)), SP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Code(sp_builder_set_parameter_blocks(b, S("qkv"), zero, 2)), SP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Message(sp_builder_set_parameter_blocks(b, S("qkv"), uneven, 2)),
            "dim 0 of parameter 'qkv' of size 8 is not a multiple of its block size 3");
  EXPECT_EQ(Code(sp_builder_set_parameter_blocks(b, S("qkv"), good, 2)), SP_OK);

  // A plan, or templates and overrides, not both; plan layouts give params.
  sp_layout* no_params = nullptr;
  ASSERT_EQ(Code(sp_layout_create(&no_params)), SP_OK);
  ASSERT_EQ(Code(sp_layout_declare(no_params, SP_PORT_IN_SRC)), SP_OK);
  EXPECT_EQ(Message(sp_builder_add_plan_entry(b, S("d"), no_params)),
            "a plan layout must give params (declare the params map)");
  size_t index = 99;
  EXPECT_EQ(Code(sp_builder_add_template(b, S("tp"), S(""), &index)), SP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(index, 99u);  // untouched on failure
  EXPECT_EQ(Code(sp_builder_add_override(b, S("c"), l)), SP_ERROR_INVALID_ARGUMENT);

  sp_builder* planner = nullptr;
  ASSERT_EQ(Code(sp_builder_create(&planner)), SP_OK);
  ASSERT_EQ(Code(sp_builder_add_axis(planner, S("tp"), 2)), SP_OK);
  EXPECT_EQ(Message(sp_builder_add_template(planner, S("ep"), S(""), &index)),
            "template axis 'ep' is not a mesh axis (add the axis first)");
  ASSERT_EQ(Code(sp_builder_add_template(planner, S("tp"), S("model"), &index)), SP_OK);
  EXPECT_EQ(index, 0u);
  EXPECT_EQ(Code(sp_builder_add_template_rule(planner, 0, S("layers.*.q"), S("colwise"))), SP_OK);
  EXPECT_EQ(Code(sp_builder_add_template_rule(planner, 0, S("layers.*.q"), S("rowwise"))), SP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Code(sp_builder_add_template_rule(planner, 0, S(""), S("rowwise"))), SP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Code(sp_builder_add_template_rule(planner, 0, S("o"), S("row_wise"))), SP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Message(sp_builder_add_template_rule(planner, 1, S("o"), S("rowwise"))), "no template 1 (the builder has 1)");
  EXPECT_EQ(Code(sp_builder_add_override(planner, S("lm_head"), no_params)), SP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Code(sp_builder_add_override(planner, S("lm_head"), l)), SP_OK);
  EXPECT_EQ(Code(sp_builder_add_override(planner, S("lm_head"), l)), SP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Code(sp_builder_declare_plan(planner)), SP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Code(sp_builder_add_plan_entry(planner, S("x"), l)), SP_ERROR_INVALID_ARGUMENT);
  sp_builder_delete(planner);
  sp_layout_delete(no_params);
  sp_layout_delete(l);
  sp_builder_delete(b);
}

TEST(CApiBuilder, DanglingReferencesAreReportedWhenChecked) {
  sp_builder* b = nullptr;
  ASSERT_EQ(Code(sp_builder_create(&b)), SP_OK);
  ASSERT_EQ(Code(sp_builder_add_axis(b, S("tp"), 2)), SP_OK);
  ASSERT_EQ(Code(sp_builder_add_module(b, S("root"), S(""))), SP_OK);
  ASSERT_EQ(Code(sp_builder_add_child(b, S("root"), S("lin"), S("missing"))), SP_OK);
  ASSERT_EQ(Code(sp_builder_set_root(b, S("root"))), SP_OK);
  sp_document* doc = nullptr;
  ASSERT_EQ(Code(sp_builder_build(b, nullptr, &doc)), SP_OK);
  sp_result* result = nullptr;
  ASSERT_EQ(Code(sp_document_check(doc, nullptr, &result)), SP_OK);
  sp_diagnostic d;
  ASSERT_EQ(Code(sp_result_diagnostic(result, 0, &d)), SP_OK);
  EXPECT_EQ(Str(d.code), "invalid-document");
  EXPECT_EQ(Str(d.message), "unknown module id 'missing' (at /modules/root/children/lin)");
  EXPECT_EQ(Str(d.pointer), "/modules/root/children/lin");
  // The pointer names the reference in the builder's JSON, and parsing that
  // JSON reports the same diagnostic.
  sp_str json;
  ASSERT_EQ(Code(sp_builder_to_json(b, &json)), SP_OK);
  rapidjson::Document dom;
  dom.Parse(json.data, json.size);
  ASSERT_FALSE(dom.HasParseError());
  const Value* at = rapidjson::Pointer(Str(d.pointer).c_str()).Get(dom);
  ASSERT_NE(at, nullptr);
  EXPECT_EQ(std::string(at->GetString()), "missing");
  EXPECT_EQ(ResultOf(Str(json), false), BuiltResultOf(b, false));
  sp_result_delete(result);
  sp_document_delete(doc);

  // Once the module exists the same builder builds a valid document.
  ASSERT_EQ(Code(sp_builder_add_module(b, S("missing"), S("Linear"))), SP_OK);
  ASSERT_EQ(Code(sp_builder_build(b, nullptr, &doc)), SP_OK);
  int valid = 0;
  ASSERT_EQ(Code(sp_document_is_valid(doc, &valid)), SP_OK);
  EXPECT_EQ(valid, 1);
  sp_document_delete(doc);
  sp_builder_delete(b);
}

TEST(CApiBuilder, BuildAppliesThePathLimits) {
  sp_builder* b = nullptr;
  ASSERT_EQ(Code(sp_builder_create(&b)), SP_OK);
  ASSERT_EQ(Code(sp_builder_add_module(b, S("root"), S(""))), SP_OK);
  ASSERT_EQ(Code(sp_builder_add_module(b, S("leaf"), S(""))), SP_OK);
  ASSERT_EQ(Code(sp_builder_add_child(b, S("root"), S("a"), S("leaf"))), SP_OK);
  ASSERT_EQ(Code(sp_builder_add_child(b, S("root"), S("b"), S("leaf"))), SP_OK);
  ASSERT_EQ(Code(sp_builder_set_root(b, S("root"))), SP_OK);
  sp_parse_options options{};
  options.max_paths = 2;  // the tree has 3
  sp_document* doc = nullptr;
  ASSERT_EQ(Code(sp_builder_build(b, &options, &doc)), SP_OK);
  sp_result* result = nullptr;
  ASSERT_EQ(Code(sp_document_check(doc, nullptr, &result)), SP_OK);
  sp_diagnostic d;
  ASSERT_EQ(Code(sp_result_diagnostic(result, 0, &d)), SP_OK);
  EXPECT_EQ(Str(d.code), "invalid-document");
  EXPECT_EQ(Str(d.pointer), "/modules");
  EXPECT_NE(Str(d.message).find("more than 2 module paths"), std::string::npos) << Str(d.message);
  sp_result_delete(result);
  sp_document_delete(doc);
  options.max_paths = 3;
  ASSERT_EQ(Code(sp_builder_build(b, &options, &doc)), SP_OK);
  int valid = 0;
  ASSERT_EQ(Code(sp_document_is_valid(doc, &valid)), SP_OK);
  EXPECT_EQ(valid, 1);
  sp_document_delete(doc);
  options.max_json_depth = 0xffffffffu;
  doc = reinterpret_cast<sp_document*>(0x1);
  EXPECT_EQ(Code(sp_builder_build(b, &options, &doc)), SP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(doc, reinterpret_cast<sp_document*>(0x1));
  sp_builder_delete(b);
}

TEST(CApiBuilder, SetsATrainingSection) {
  sp_builder* b = nullptr;
  ASSERT_EQ(Code(sp_builder_create(&b)), SP_OK);
  ASSERT_EQ(Code(sp_builder_add_module(b, S("root"), S("Model"))), SP_OK);
  ASSERT_EQ(Code(sp_builder_set_root(b, S("root"))), SP_OK);
  // Refused at the call, leaving nothing: not JSON, not an object, a bad
  // value.
  EXPECT_EQ(Message(sp_builder_set_training(b, S("{\"zero\": 1"))),
            "malformed JSON at offset 10 of the training section: Missing a comma or '}' after an object member. "
            "(at /training)");
  EXPECT_EQ(Message(sp_builder_set_training(b, S("[]"))), "expected an object, got an array (at /training)");
  EXPECT_EQ(Message(sp_builder_set_training(b, S("{\"zero\": 4}"))),
            "'zero' must be an integer from 0 to 3 (at /training/zero)");
  EXPECT_EQ(Code(sp_builder_set_training(b, S("\xff"))), SP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Code(sp_builder_set_training(nullptr, S("{}"))), SP_ERROR_NULL_ARGUMENT);
  // Once; the axes are checked by build, against the mesh.
  ASSERT_EQ(Code(sp_builder_set_training(b, S("{\"zero\": 3, \"shard_axes\": [\"dp\"]}"))), SP_OK);
  EXPECT_EQ(Message(sp_builder_set_training(b, S("{}"))), "the document already has a training section");
  sp_document* doc = nullptr;
  sp_result* result = nullptr;
  ASSERT_EQ(Code(sp_builder_build(b, nullptr, &doc)), SP_OK);
  ASSERT_EQ(Code(sp_document_check(doc, nullptr, &result)), SP_OK);
  sp_str json;
  ASSERT_EQ(Code(sp_result_json(result, &json)), SP_OK);
  EXPECT_NE(Str(json).find("shard axis 'dp' is not a mesh axis (the mesh has )"), std::string::npos) << Str(json);
  sp_result_delete(result);
  sp_document_delete(doc);
  ASSERT_EQ(Code(sp_builder_add_axis(b, S("dp"), 4)), SP_OK);
  ASSERT_EQ(Code(sp_builder_build(b, nullptr, &doc)), SP_OK);
  ASSERT_EQ(Code(sp_document_check(doc, nullptr, &result)), SP_OK);
  int ok = 0;
  ASSERT_EQ(Code(sp_result_ok(result, &ok)), SP_OK);
  EXPECT_EQ(ok, 1);
  sp_result_delete(result);
  sp_document_delete(doc);
  sp_builder_delete(b);
}

// sp_result_training reads what the result's JSON says under
// memory.training, and nothing for a result without one.
TEST(CApiResult, TrainingEqualsTheJson) {
  for (const char* name : {"tests/golden/cases/exceeds-device-memory.fail.json",
                           "tests/golden/cases/training-pattern-no-match.fail.json", "examples/tiny-plan.json"}) {
    SCOPED_TRACE(name);
    const std::string text = ReadFile(name).value();
    sp_document* doc = nullptr;
    sp_result* result = nullptr;
    ASSERT_EQ(Code(sp_document_parse(S(text), nullptr, &doc)), SP_OK);
    ASSERT_EQ(Code(sp_document_plan(doc, nullptr, &result)), SP_OK);
    sp_str json;
    ASSERT_EQ(Code(sp_result_json(result, &json)), SP_OK);
    rapidjson::Document dom;
    dom.Parse(json.data, json.size);
    sp_training t;
    int present = -1;
    ASSERT_EQ(Code(sp_result_training(result, &t, &present)), SP_OK);
    const bool has = dom.HasMember("memory") && dom["memory"].HasMember("training");
    ASSERT_EQ(present, has ? 1 : 0);
    if (has) {
      const Value& want = dom["memory"]["training"];
      const Value& worst = want["worst"];
      EXPECT_EQ(t.worst_device, worst["device"].GetUint64());
      ASSERT_EQ(t.num_axes, worst["coordinates"].MemberCount());
      size_t j = 0;
      for (auto c = worst["coordinates"].MemberBegin(); c != worst["coordinates"].MemberEnd(); ++c, ++j) {
        EXPECT_EQ(t.worst_coordinates[j], c->value.GetUint64());
      }
      const std::pair<const char*, uint64_t> fields[] = {
          {"params", t.params},       {"grads", t.grads},       {"master", t.master},
          {"optimizer", t.optimizer}, {"gathered", t.gathered}, {"activations", t.activations},
          {"total", t.total}};
      for (const auto& [key, value] : fields) EXPECT_EQ(value, worst[key].GetUint64()) << key;
      EXPECT_EQ(t.max_total_bytes, want["max_total_bytes"].GetUint64());
      EXPECT_EQ(t.min_total_bytes, want["min_total_bytes"].GetUint64());
      EXPECT_EQ(t.mean_total_bytes, want["mean_total_bytes"].GetDouble());
      ASSERT_EQ(t.num_devices_listed, want["per_device_total_bytes"].Size());
      for (size_t d = 0; d < t.num_devices_listed; ++d) {
        EXPECT_EQ(t.per_device_total_bytes[d], want["per_device_total_bytes"][d].GetUint64());
      }
    }
    EXPECT_EQ(Code(sp_result_training(result, nullptr, &present)), SP_ERROR_NULL_ARGUMENT);
    sp_result_delete(result);
    sp_document_delete(doc);
  }
}

TEST(CApiBuilder, BuildsAPipelinePlan) {
  sp_builder* b = nullptr;
  ASSERT_EQ(Code(sp_builder_create(&b)), SP_OK);
  ASSERT_EQ(Code(sp_builder_add_module(b, S("root"), S("LlamaModel"))), SP_OK);
  ASSERT_EQ(Code(sp_builder_add_forward_arg(b, S("root"), S("input_ids"))), SP_OK);
  ASSERT_EQ(Code(sp_builder_add_child(b, S("root"), S("embed_tokens"), S("embed"))), SP_OK);
  ASSERT_EQ(Code(sp_builder_add_module(b, S("embed"), S("Embedding"))), SP_OK);
  ASSERT_EQ(Code(sp_builder_add_forward_arg(b, S("embed"), S("input"))), SP_OK);
  ASSERT_EQ(Code(sp_builder_set_root(b, S("root"))), SP_OK);
  const sp_str input_ids[] = {S("input_ids")}, embeds[] = {S("inputs_embeds")};

  // The plan first, once.
  EXPECT_EQ(Message(sp_builder_add_pipeline_module(b, S("embed_tokens"), input_ids, 1, embeds, 1)),
            "the document has no pipeline plan (set the pipeline first)");
  ASSERT_EQ(Code(sp_builder_set_pipeline(b, S(""))), SP_OK);
  EXPECT_EQ(Message(sp_builder_set_pipeline(b, S("model"))), "the document already has a pipeline plan");

  EXPECT_EQ(Code(sp_builder_add_pipeline_module(b, S("embed_tokens"), input_ids, 1, embeds, 1)), SP_OK);
  EXPECT_EQ(Message(sp_builder_add_pipeline_module(b, S("embed_tokens"), nullptr, 0, nullptr, 0)),
            "duplicate pipeline module 'embed_tokens'");
  EXPECT_EQ(Message(sp_builder_add_pipeline_module(b, S(""), input_ids, 1, embeds, 1)),
            "a pipeline module must not be empty");
  EXPECT_EQ(Code(sp_builder_add_pipeline_module(b, S("layers"), nullptr, 1, embeds, 1)), SP_ERROR_NULL_ARGUMENT);
  EXPECT_EQ(Code(sp_builder_add_pipeline_module(b, S("layers"), input_ids, 1, nullptr, 1)), SP_ERROR_NULL_ARGUMENT);
  const sp_str bad[] = {S("\xff")};
  EXPECT_EQ(Message(sp_builder_add_pipeline_module(b, S("layers"), bad, 1, nullptr, 0)),
            "argument 'inputs' is not valid UTF-8");
  EXPECT_EQ(Code(sp_builder_add_pipeline_module(b, S("layers"), input_ids, 1, bad, 1)), SP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Code(sp_builder_add_pipeline_module(b, S("\xfe"), nullptr, 0, nullptr, 0)), SP_ERROR_INVALID_ARGUMENT);
  // NULL arrays with count 0: no names. A module of no such name, spelled
  // with the characters a JSON pointer escapes.
  EXPECT_EQ(Code(sp_builder_add_pipeline_module(b, S("a/b~c"), nullptr, 0, nullptr, 0)), SP_OK);

  // The refused calls left no trace: the JSON has the plan as added.
  sp_str json;
  ASSERT_EQ(Code(sp_builder_to_json(b, &json)), SP_OK);
  rapidjson::Document dom;
  dom.Parse(json.data, json.size);
  ASSERT_FALSE(dom.HasParseError());
  ASSERT_TRUE(dom.HasMember("pipeline"));
  const Value& pipeline = dom["pipeline"];
  EXPECT_FALSE(pipeline.HasMember("prefix"));  // "" is the whole model
  const Value& modules = pipeline["modules"];
  ASSERT_TRUE(modules.IsObject());
  ASSERT_EQ(modules.MemberCount(), 2u);
  auto m = modules.MemberBegin();
  EXPECT_EQ(std::string(m->name.GetString()), "embed_tokens");
  ASSERT_TRUE(m->value.IsArray() && m->value.Size() == 2);
  ASSERT_EQ(m->value[0].Size(), 1u);
  EXPECT_EQ(std::string(m->value[0][0].GetString()), "input_ids");
  ASSERT_EQ(m->value[1].Size(), 1u);
  EXPECT_EQ(std::string(m->value[1][0].GetString()), "inputs_embeds");
  ++m;
  EXPECT_EQ(std::string(m->name.GetString()), "a/b~c");
  EXPECT_EQ(m->value[0].Size(), 0u);
  EXPECT_EQ(m->value[1].Size(), 0u);

  // The built document is the JSON's: the missing module is reported at the
  // pointer parsing gives it.
  for (bool plan : {false, true}) {
    SCOPED_TRACE(plan ? "plan" : "check");
    EXPECT_EQ(BuiltResultOf(b, plan), ResultOf(Str(json), plan));
  }
  sp_document* doc = nullptr;
  ASSERT_EQ(Code(sp_builder_build(b, nullptr, &doc)), SP_OK);
  sp_result* result = nullptr;
  ASSERT_EQ(Code(sp_document_check(doc, nullptr, &result)), SP_OK);
  size_t count = 0;
  ASSERT_EQ(Code(sp_result_diagnostic_count(result, &count)), SP_OK);
  bool found = false;
  for (size_t i = 0; i < count; ++i) {
    sp_diagnostic d;
    ASSERT_EQ(Code(sp_result_diagnostic(result, i, &d)), SP_OK);
    if (Str(d.code) != "pipeline-unknown-module") continue;
    found = true;
    EXPECT_EQ(Str(d.pointer), "/pipeline/modules/a~1b~0c");
  }
  EXPECT_TRUE(found);
  sp_result_delete(result);
  sp_document_delete(doc);
  sp_builder_delete(b);
}

// Drives the builder from a document's JSON, as a caller constructing the
// same model would, one call per thing the JSON says, in the JSON's order.
// What no sequence of calls can say (a key the format does not know, a
// value of the wrong JSON type, another schema, a key repeated where the
// calls it maps to cannot repeat: a layout's map, an entry of a map) makes
// the document untypable: the C types rule it out, and the parser refuses
// it too (the tests check that).
class Driver {
 public:
  Driver() { sp_error_delete(sp_builder_create(&builder_)); }
  ~Driver() { sp_builder_delete(builder_); }
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  sp_builder* builder() { return builder_; }
  // Why the document is untypable; empty when it is not.
  const std::string& untypable() const { return untypable_; }
  // The first error the builder returned (its code), SP_OK if none.
  sp_error_code refused() const { return refused_; }

  void Drive(const Value& doc) {
    if (!doc.IsObject() || !UniqueKeys(doc)) return Untypable("the document");
    for (auto m = doc.MemberBegin(); m != doc.MemberEnd(); ++m) {
      const std::string key = m->name.GetString();
      const Value& v = m->value;
      if (key == "schema") {
        if (!v.IsString() || std::string(v.GetString()) != "shardplan.v1") Untypable("schema");
      } else if (key == "mesh" && v.IsObject()) {
        for (auto a = v.MemberBegin(); a != v.MemberEnd(); ++a) {
          if (!a->value.IsInt64()) return Untypable("mesh size");
          Call(sp_builder_add_axis(builder_, Name(a->name), a->value.GetInt64()));
        }
      } else if (key == "parameters" && v.IsObject()) {
        for (auto p = v.MemberBegin(); p != v.MemberEnd(); ++p) Parameter(p->name, p->value);
      } else if (key == "root" && v.IsString()) {
        Call(sp_builder_set_root(builder_, Name(v)));
      } else if (key == "modules" && v.IsObject()) {
        for (auto p = v.MemberBegin(); p != v.MemberEnd(); ++p) Module(p->name, p->value);
      } else if (key == "providers" && v.IsObject() && UniqueKeys(v)) {
        Providers(v);
      } else if (key == "plan" && v.IsObject() && v.MemberCount() == 1 && v.HasMember("modules") &&
                 v["modules"].IsObject()) {
        Call(sp_builder_declare_plan(builder_));
        for (auto p = v["modules"].MemberBegin(); p != v["modules"].MemberEnd(); ++p) {
          WithLayout(p->value, [&](const sp_layout* l) { Call(sp_builder_add_plan_entry(builder_, Name(p->name), l)); });
        }
      } else if (key == "templates" && v.IsArray()) {
        for (const Value& t : v.GetArray()) Template(t);
      } else if (key == "overrides" && v.IsObject()) {
        for (auto p = v.MemberBegin(); p != v.MemberEnd(); ++p) {
          WithLayout(p->value, [&](const sp_layout* l) { Call(sp_builder_add_override(builder_, Name(p->name), l)); });
        }
      } else if (key == "pipeline" && v.IsObject() && UniqueKeys(v)) {
        Pipeline(v);
      } else if (key == "training") {
        // The section goes through as its JSON text.
        rapidjson::StringBuffer text;
        rapidjson::Writer<rapidjson::StringBuffer> writer(text);
        v.Accept(writer);
        Call(sp_builder_set_training(builder_, sp_str{text.GetString(), text.GetSize()}));
      } else {
        Untypable(key);
      }
    }
  }

 private:
  static sp_str Name(const Value& v) { return {v.GetString(), v.GetStringLength()}; }

  // Whether `v`'s keys are unique, at every depth.
  static bool UniqueKeys(const Value& v, bool deep = false) {
    if (v.IsObject()) {
      std::set<std::string> seen;
      for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
        if (!seen.insert(std::string(m->name.GetString(), m->name.GetStringLength())).second) return false;
        if (deep && !UniqueKeys(m->value, true)) return false;
      }
    } else if (deep && v.IsArray()) {
      for (const Value& x : v.GetArray()) {
        if (!UniqueKeys(x, true)) return false;
      }
    }
    return true;
  }

  void Untypable(std::string_view what) {
    if (untypable_.empty()) untypable_ = std::string(what);
  }
  void Call(sp_error* error) {
    if (error != nullptr && refused_ == SP_OK) refused_ = sp_error_code_of(error);
    sp_error_delete(error);
  }

  std::vector<sp_str> Strings(const Value& v) {
    std::vector<sp_str> out;
    if (!v.IsArray()) {
      Untypable("a list of strings");
      return out;
    }
    for (const Value& s : v.GetArray()) {
      if (!s.IsString()) {
        Untypable("a list of strings");
        return {};
      }
      out.push_back(Name(s));
    }
    return out;
  }

  // Non-negative integers below 2^63, as the document's shape and blocks.
  bool Ints(const Value& v, std::vector<int64_t>* out) {
    if (!v.IsArray()) return false;
    for (const Value& d : v.GetArray()) {
      if (!d.IsInt64()) return false;
      out->push_back(d.GetInt64());
    }
    return true;
  }

  void Parameter(const Value& id, const Value& v) {
    if (!v.IsObject() || !UniqueKeys(v)) return Untypable("a parameter");
    std::vector<int64_t> shape, blocks;
    bool has_shape = false, has_blocks = false;
    sp_str dtype{nullptr, 0};
    for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
      const std::string key = m->name.GetString();
      if (key == "shape" && Ints(m->value, &shape)) {
        has_shape = true;
      } else if (key == "dtype" && m->value.IsString()) {
        dtype = Name(m->value);
      } else if (key == "blocks" && Ints(m->value, &blocks)) {
        has_blocks = true;
      } else {
        return Untypable("a parameter");
      }
    }
    static const int64_t kScalar = 0;
    Call(sp_builder_add_parameter(builder_, Name(id), has_shape ? (shape.empty() ? &kScalar : shape.data()) : nullptr,
                                  shape.size(), dtype));
    if (has_blocks) Call(sp_builder_set_parameter_blocks(builder_, Name(id), blocks.data(), blocks.size()));
  }

  bool Parallel(const Value& v, sp_parallel_spec* spec, std::vector<sp_str>* axes) {
    if (!v.IsObject() || !UniqueKeys(v) || !v.HasMember("binding_kind") || !v["binding_kind"].IsString()) return false;
    for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
      const std::string key = m->name.GetString();
      if (key == "axes") {
        *axes = Strings(m->value);
      } else if (key != "binding_kind") {
        return false;
      }
    }
    *spec = {Name(v["binding_kind"]), axes->data(), axes->size()};
    return true;
  }

  // Calls use(spec or null) for a parallel value (null allowed).
  template <typename Use>
  void WithParallel(const Value* v, Use use) {
    if (v == nullptr || v->IsNull()) return use(nullptr);
    sp_parallel_spec spec;
    std::vector<sp_str> axes;
    if (!Parallel(*v, &spec, &axes)) return Untypable("a parallel spec");
    use(&spec);
  }

  void Module(const Value& id, const Value& v) {
    if (!v.IsObject() || !UniqueKeys(v)) return Untypable("a module");
    sp_str type{nullptr, 0};
    if (v.HasMember("type")) {
      if (!v["type"].IsString()) return Untypable("a module type");
      type = Name(v["type"]);
    }
    Call(sp_builder_add_module(builder_, Name(id), type));
    for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
      const std::string key = m->name.GetString();
      const Value& x = m->value;
      if (key == "type") continue;
      if (key == "forward") {
        for (sp_str arg : Strings(x)) Call(sp_builder_add_forward_arg(builder_, Name(id), arg));
      } else if ((key == "children" || key == "params") && x.IsObject()) {
        for (auto c = x.MemberBegin(); c != x.MemberEnd(); ++c) {
          if (!c->value.IsString()) return Untypable("a module reference");
          Call(key == "children" ? sp_builder_add_child(builder_, Name(id), Name(c->name), Name(c->value))
                                 : sp_builder_add_module_param(builder_, Name(id), Name(c->name), Name(c->value)));
        }
      } else if (key == "parallel") {
        WithParallel(&x, [&](const sp_parallel_spec* p) { Call(sp_builder_set_module_parallel(builder_, Name(id), p)); });
      } else if (key == "family" && x.IsObject() && UniqueKeys(x)) {
        Family(id, x);
      } else {
        return Untypable("a module");
      }
    }
  }

  void Family(const Value& id, const Value& v) {
    bool parallel = false;
    const Value* sharding = nullptr;
    const Value* cached = nullptr;
    for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
      const std::string key = m->name.GetString();
      if (key == "parallel" && m->value.IsBool()) {
        parallel = m->value.GetBool();
      } else if (key == "sharding") {
        sharding = &m->value;
      } else if (key == "cached") {
        cached = &m->value;
      } else {
        return Untypable("a family");
      }
    }
    if (sharding == nullptr || sharding->IsNull()) {
      Call(sp_builder_set_family(builder_, Name(id), parallel, nullptr));
    } else {
      WithLayout(*sharding, [&](const sp_layout* l) { Call(sp_builder_set_family(builder_, Name(id), parallel, l)); });
    }
    if (cached == nullptr || cached->IsNull()) return;
    if (!cached->IsObject() || !UniqueKeys(*cached) || !cached->HasMember("sharding")) return Untypable("cached");
    for (auto m = cached->MemberBegin(); m != cached->MemberEnd(); ++m) {
      const std::string key = m->name.GetString();
      if (key != "sharding" && key != "parallel") return Untypable("cached");
    }
    const Value* parallel_spec = cached->HasMember("parallel") ? &(*cached)["parallel"] : nullptr;
    WithLayout((*cached)["sharding"], [&](const sp_layout* l) {
      WithParallel(parallel_spec,
                   [&](const sp_parallel_spec* p) { Call(sp_builder_set_family_cached(builder_, Name(id), l, p)); });
    });
  }

  void Providers(const Value& v) {
    for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
      const std::string key = m->name.GetString();
      const Value& x = m->value;
      if (key == "sharding" && x.IsObject()) {
        for (auto p = x.MemberBegin(); p != x.MemberEnd(); ++p) {
          WithLayout(p->value, [&](const sp_layout* l) { Call(sp_builder_add_provider(builder_, Name(p->name), l)); });
        }
      } else if (key == "native" && x.IsArray()) {
        for (const Value& n : x.GetArray()) Native(n);
      } else {
        return Untypable("providers");
      }
    }
  }

  void Native(const Value& v) {
    if (!v.IsObject() || !UniqueKeys(v) || !v.HasMember("match") || !v.HasMember("sharding")) {
      return Untypable("a native request");
    }
    for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
      const std::string key = m->name.GetString();
      if (key != "match" && key != "sharding" && key != "parallel") return Untypable("a native request");
    }
    const std::vector<sp_str> globs = Strings(v["match"]);
    const Value* parallel = v.HasMember("parallel") ? &v["parallel"] : nullptr;
    WithLayout(v["sharding"], [&](const sp_layout* l) {
      WithParallel(parallel, [&](const sp_parallel_spec* p) {
        Call(sp_builder_add_native(builder_, globs.data(), globs.size(), l, p));
      });
    });
  }

  void Template(const Value& v) {
    if (!v.IsObject() || !UniqueKeys(v) || !v.HasMember("axis") || !v["axis"].IsString() || !v.HasMember("rules") ||
        !v["rules"].IsObject()) {
      return Untypable("a template");
    }
    sp_str prefix{nullptr, 0};
    for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
      const std::string key = m->name.GetString();
      if (key == "prefix" && m->value.IsString()) {
        prefix = Name(m->value);
      } else if (key != "axis" && key != "rules") {
        return Untypable("a template");
      }
    }
    size_t index = 0;
    sp_error* error = sp_builder_add_template(builder_, Name(v["axis"]), prefix, &index);
    if (error != nullptr) return Call(error);
    for (auto r = v["rules"].MemberBegin(); r != v["rules"].MemberEnd(); ++r) {
      if (!r->value.IsString()) return Untypable("a template style");
      Call(sp_builder_add_template_rule(builder_, index, Name(r->name), Name(r->value)));
    }
  }

  // {"prefix": P, "modules": {MODULE: [inputs, outputs]}}; a module given
  // twice or empty is the builder's to refuse.
  void Pipeline(const Value& v) {
    if (!v.HasMember("modules") || !v["modules"].IsObject()) return Untypable("a pipeline");
    sp_str prefix{nullptr, 0};
    for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
      const std::string key = m->name.GetString();
      if (key == "prefix" && m->value.IsString()) {
        prefix = Name(m->value);
      } else if (key != "modules") {
        return Untypable("a pipeline");
      }
    }
    Call(sp_builder_set_pipeline(builder_, prefix));
    for (auto p = v["modules"].MemberBegin(); p != v["modules"].MemberEnd(); ++p) {
      if (!p->value.IsArray() || p->value.Size() != 2) return Untypable("a pipeline module's entry");
      const std::vector<sp_str> inputs = Strings(p->value[0]);
      const std::vector<sp_str> outputs = Strings(p->value[1]);
      if (!untypable_.empty()) return;
      Call(sp_builder_add_pipeline_module(builder_, Name(p->name), inputs.data(), inputs.size(), outputs.data(),
                                          outputs.size()));
    }
  }

  template <typename Use>
  void WithLayout(const Value& v, Use use) {
    if (!v.IsObject() || !UniqueKeys(v)) return Untypable("a layout");
    sp_layout* layout = nullptr;
    sp_error_delete(sp_layout_create(&layout));
    static const std::pair<const char*, sp_port> kPorts[] = {{"params", SP_PORT_PARAMS},
                                                            {"in_src", SP_PORT_IN_SRC},
                                                            {"in_dst", SP_PORT_IN_DST},
                                                            {"out_src", SP_PORT_OUT_SRC},
                                                            {"out_dst", SP_PORT_OUT_DST}};
    static const std::set<std::string> kLegacy = {"local_compute_fn", "inner_wrapper", "inner_target",
                                                  "region_dispatch"};
    for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
      const std::string key = m->name.GetString();
      const Value& x = m->value;
      const auto port = std::find_if(std::begin(kPorts), std::end(kPorts), [&](const auto& p) { return key == p.first; });
      if (port != std::end(kPorts)) {
        if (x.IsNull()) continue;  // null means "not declared"
        if (!x.IsObject() || !UniqueKeys(x)) {
          Untypable("a layout map");
          break;
        }
        Call(sp_layout_declare(layout, port->second));
        for (auto e = x.MemberBegin(); e != x.MemberEnd(); ++e) {
          if (!e->value.IsObject()) {
            Untypable("named placements");
            break;
          }
          Call(sp_layout_add_entry(layout, port->second, Name(e->name)));
          for (auto a = e->value.MemberBegin(); a != e->value.MemberEnd(); ++a) {
            if (!a->value.IsString()) {
              Untypable("a placement");
              break;
            }
            Call(sp_layout_set_placement(layout, port->second, Name(e->name), Name(a->name), Name(a->value)));
          }
        }
      } else if (key == "out_names") {
        if (x.IsNull()) continue;
        const std::vector<sp_str> names = Strings(x);
        Call(sp_layout_set_out_names(layout, names.data(), names.size()));
      } else if (kLegacy.count(key) != 0) {
        // The builder keeps which fields are set, not their values: a value
        // with a repeated key (the parser refuses it) cannot be stated.
        if (!UniqueKeys(x, /*deep=*/true)) {
          Untypable("a legacy field's value");
        } else if (!x.IsNull()) {
          Call(sp_layout_set_legacy_field(layout, Name(m->name)));
        }
      } else {
        Untypable("a layout key");
      }
    }
    if (untypable_.empty()) use(layout);
    sp_layout_delete(layout);
  }

  sp_builder* builder_ = nullptr;
  std::string untypable_;
  sp_error_code refused_ = SP_OK;
};

struct Tally {
  int compared = 0, refused = 0, untypable = 0, not_json = 0;
};

// Drives the builder from each document at `paths` and requires the same
// result JSON as parsing it, from sp_document_check and (with `plan`) from
// sp_document_plan, also for sp_builder_to_json's text. A document the
// builder refuses at a call, or that the C types cannot state, must be one
// the parser refuses.
Tally CompareBuilderWithParser(const std::vector<fs::path>& paths, bool plan) {
  Tally tally;
  for (const fs::path& path : paths) {
    SCOPED_TRACE(path.string());
    const std::string text = ReadFile(path).value();
    rapidjson::Document dom;
    dom.Parse(text.c_str(), text.size());
    if (dom.HasParseError()) {
      ++tally.not_json;
      EXPECT_TRUE(IsInvalidDocument(ResultOf(text, false)));
      continue;
    }
    Driver driver;
    driver.Drive(dom);
    if (!driver.untypable().empty()) {
      ++tally.untypable;
      EXPECT_TRUE(IsInvalidDocument(ResultOf(text, false))) << "untypable: " << driver.untypable();
      continue;
    }
    if (driver.refused() != SP_OK) {
      // The builder refuses at the call what the JSON parser refuses.
      EXPECT_EQ(driver.refused(), SP_ERROR_INVALID_ARGUMENT);
      EXPECT_TRUE(IsInvalidDocument(ResultOf(text, false)));
      ++tally.refused;
      continue;
    }
    sp_str built{};
    EXPECT_EQ(Code(sp_builder_to_json(driver.builder(), &built)), SP_OK);
    const std::string built_text = Str(built);
    for (bool planned : plan ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
      SCOPED_TRACE(planned ? "plan" : "check");
      const std::string want = ResultOf(text, planned);
      EXPECT_EQ(BuiltResultOf(driver.builder(), planned), want);
      // The builder's JSON, parsed as text, is the same document.
      EXPECT_EQ(ResultOf(built_text, planned), want);
    }
    ++tally.compared;
  }
  std::printf("builder vs JSON: %d compared, %d refused by both, %d untypable, %d not JSON\n", tally.compared,
              tally.refused, tally.untypable, tally.not_json);
  return tally;
}

std::vector<fs::path> JsonFiles(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(CApiBuilder, EqualsTheJsonDocumentOnEveryConformanceCase) {
  const std::vector<fs::path> cases = Cases();
  ASSERT_EQ(cases.size(), 127u);
  const Tally tally = CompareBuilderWithParser(cases, /*plan=*/true);
  EXPECT_EQ(tally.compared, static_cast<int>(cases.size()));
}

TEST(CApiBuilder, EqualsTheJsonDocumentOnTheGoldenCases) {
  const std::vector<fs::path> cases = JsonFiles("tests/golden/cases");
  ASSERT_GE(cases.size(), 90u);
  const Tally tally = CompareBuilderWithParser(cases, /*plan=*/true);
  // Every document not compared was checked to be one the parser refuses:
  // the valid ones (templates, overrides, legacy fields) are all compared,
  // and so are the invalid ones Build reports (cycles, unknown ids, paths).
  EXPECT_GE(tally.compared, 80);
  // Bad placement, dotted name, mesh size 0, plan layout without params.
  EXPECT_GE(tally.refused, 4);
}

TEST(CApiBuilder, EqualsTheJsonDocumentOnTheExamples) {
  const std::vector<fs::path> examples = JsonFiles("examples");
  ASSERT_GE(examples.size(), 3u);
  const Tally tally = CompareBuilderWithParser(examples, /*plan=*/true);
  EXPECT_EQ(tally.compared, static_cast<int>(examples.size()));
}


// Reads the groups and each diagnostic's help and fix through the ABI and
// compares them with the engine's, field by field; returns how many
// diagnostics had help and a fix, and the largest group.
struct FixItTally {
  int with_help = 0;
  int with_fix = 0;
  size_t largest_group = 0;
};
void ExpectGroupsAndFixItsOf(const shardplan::Result& engine, const sp_result* result, FixItTally* tally) {
  size_t count = 0;
  ASSERT_EQ(Code(sp_result_group_count(result, &count)), SP_OK);
  ASSERT_EQ(count, engine.groups.size());
  for (size_t i = 0; i < count; ++i) {
    sp_diagnostic_group g;
    ASSERT_EQ(Code(sp_result_group(result, i, &g)), SP_OK);
    const shardplan::DiagnosticGroup& want = engine.groups[i];
    EXPECT_EQ(Str(g.code), want.code);
    EXPECT_EQ(Str(g.pointer), want.pointer.value_or("<absent>"));
    EXPECT_EQ(g.count, want.count);
    EXPECT_EQ(std::vector<size_t>(g.listed, g.listed + g.num_listed), want.listed);
    tally->largest_group = std::max(tally->largest_group, g.count);
  }
  sp_diagnostic_group past;
  EXPECT_EQ(Code(sp_result_group(result, count, &past)), SP_ERROR_OUT_OF_RANGE);

  for (size_t i = 0; i < engine.diagnostics.size(); ++i) {
    const shardplan::Diagnostic& want = engine.diagnostics[i];
    sp_str help{};
    ASSERT_EQ(Code(sp_result_diagnostic_help(result, i, &help)), SP_OK);
    EXPECT_EQ(Str(help), want.fix_it ? want.fix_it->help : "<absent>");
    const std::vector<shardplan::FixOperation> want_fix = want.fix_it ? want.fix_it->fix : shardplan::FixIt().fix;
    size_t operations = 99;
    ASSERT_EQ(Code(sp_result_diagnostic_fix_count(result, i, &operations)), SP_OK);
    ASSERT_EQ(operations, want_fix.size());
    for (size_t k = 0; k < operations; ++k) {
      sp_fix_operation op;
      ASSERT_EQ(Code(sp_result_diagnostic_fix(result, i, k, &op)), SP_OK);
      EXPECT_EQ(Str(op.op), want_fix[k].op);
      EXPECT_EQ(Str(op.path), want_fix[k].path);
      EXPECT_EQ(Str(op.from), want_fix[k].from.value_or("<absent>"));
      EXPECT_EQ(Str(op.value), want_fix[k].value.value_or("<absent>"));
    }
    sp_fix_operation past_op{};
    EXPECT_EQ(Code(sp_result_diagnostic_fix(result, i, operations, &past_op)), SP_ERROR_OUT_OF_RANGE);
    EXPECT_EQ(past_op.op.data, nullptr);  // untouched
    tally->with_help += want.fix_it ? 1 : 0;
    tally->with_fix += want_fix.empty() ? 0 : 1;
  }
  const size_t n = engine.diagnostics.size();
  sp_str help{};
  EXPECT_EQ(Code(sp_result_diagnostic_help(result, n, &help)), SP_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(Code(sp_result_diagnostic_fix_count(result, n, &count)), SP_ERROR_OUT_OF_RANGE);
}

TEST(CApi, GroupsHelpAndFixEqualTheEngineOnTheGoldenCases) {
  const std::vector<fs::path> cases = JsonFiles("tests/golden/cases");
  ASSERT_GE(cases.size(), 90u);
  FixItTally tally;
  for (const fs::path& path : cases) {
    SCOPED_TRACE(path.string());
    const std::string text = ReadFile(path).value();
    absl::StatusOr<shardplan::Result> engine = shardplan::Check(text, {});
    ASSERT_TRUE(engine.ok());
    sp_document* doc = nullptr;
    ASSERT_EQ(Code(sp_document_parse(S(text), nullptr, &doc)), SP_OK);
    sp_result* result = nullptr;
    ASSERT_EQ(Code(sp_document_check(doc, nullptr, &result)), SP_OK);
    ExpectGroupsAndFixItsOf(*engine, result, &tally);
    sp_result_delete(result);
    sp_document_delete(doc);
  }
  // The cases have fix-its (the .typo and .glob ones) and a group of
  // several diagnostics (the over-wide glob).
  EXPECT_GE(tally.with_help, 5);
  EXPECT_GE(tally.with_fix, 4);
  EXPECT_GE(tally.largest_group, 2u);
}

}  // namespace
