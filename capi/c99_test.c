/* The header compiles alone as strict C99 (this file's copts: -std=c99
 * -Wall -Wextra -Werror -pedantic), and the ABI works from C: a document is
 * parsed, checked and read back, and misuse gives errors with codes. */
#include "shardplan/shardplan.h"

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define EXPECT(cond)                                             \
  do {                                                           \
    if (!(cond)) {                                               \
      fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                \
    }                                                            \
  } while (0)

static sp_str S(const char *text) {
  sp_str s;
  s.data = text;
  s.size = strlen(text);
  return s;
}

/* Expects `error` to carry `code`; frees it. */
static void expect_error(sp_error *error, sp_error_code code, int line) {
  if (sp_error_code_of(error) != code) {
    fprintf(stderr, "%s:%d: expected error code %d, got %d (%s)\n", __FILE__, line, (int)code,
            (int)sp_error_code_of(error), sp_error_message(error));
    ++failures;
  }
  sp_error_delete(error);
}
#define EXPECT_ERROR(call, code) expect_error((call), (code), __LINE__)

static const char kDocument[] =
    "{\"schema\": \"shardplan.v1\", \"mesh\": {\"tp\": 2},"
    " \"parameters\": {\"w\": {\"shape\": [4, 4]}}, \"root\": \"root\","
    " \"modules\": {\"root\": {\"children\": {\"lin\": \"lin\"}},"
    "   \"lin\": {\"forward\": [\"x\"], \"params\": {\"weight\": \"w\"}}},"
    " \"providers\": {\"sharding\": {\"lin\": {\"params\": {\"weight\": {\"tp\": \"P\"}},"
    "   \"in_src\": {}, \"in_dst\": {}}}}}";

int main(void) {
  sp_document *document = NULL;
  sp_result *result = NULL;
  sp_diagnostic diagnostic;
  sp_str json;
  size_t count = 0;
  int ok = -1;
  sp_check_options options;

  EXPECT(sp_abi_version() == SP_ABI_VERSION);
  EXPECT(strlen(sp_version_string()) >= 5);
  EXPECT(sp_error_code_of(NULL) == SP_OK);
  EXPECT(strcmp(sp_error_message(NULL), "") == 0);

  EXPECT_ERROR(sp_document_parse(S(kDocument), NULL, NULL), SP_ERROR_NULL_ARGUMENT);
  EXPECT(sp_document_parse(S(kDocument), NULL, &document) == NULL);
  EXPECT(document != NULL);
  options.threads = 1;
  EXPECT(sp_document_check(document, &options, &result) == NULL);
  EXPECT(sp_result_ok(result, &ok) == NULL && ok == 0);
  EXPECT(sp_result_diagnostic_count(result, &count) == NULL && count == 1);
  EXPECT(sp_result_diagnostic(result, 0, &diagnostic) == NULL);
  EXPECT(diagnostic.code.size == strlen("partial-parameter") &&
         memcmp(diagnostic.code.data, "partial-parameter", diagnostic.code.size) == 0);
  EXPECT(diagnostic.severity == SP_SEVERITY_ERROR);
  EXPECT(diagnostic.pointer.data != NULL && diagnostic.pointer.data[diagnostic.pointer.size] == '\0');
  EXPECT_ERROR(sp_result_diagnostic(result, 1, &diagnostic), SP_ERROR_OUT_OF_RANGE);
  /* Its group, and no fix-it. */
  {
    sp_diagnostic_group group;
    sp_fix_operation operation;
    sp_str help;
    EXPECT(sp_result_group_count(result, &count) == NULL && count == 1);
    EXPECT(sp_result_group(result, 0, &group) == NULL);
    EXPECT(strcmp(group.code.data, "partial-parameter") == 0 && group.severity == SP_SEVERITY_ERROR);
    EXPECT(group.count == 1 && group.num_listed == 1 && group.listed[0] == 0);
    EXPECT(group.pointer.size == diagnostic.pointer.size &&
           memcmp(group.pointer.data, diagnostic.pointer.data, group.pointer.size) == 0);
    EXPECT_ERROR(sp_result_group(result, 1, &group), SP_ERROR_OUT_OF_RANGE);
    EXPECT(sp_result_diagnostic_help(result, 0, &help) == NULL && help.data == NULL);
    EXPECT(sp_result_diagnostic_fix_count(result, 0, &count) == NULL && count == 0);
    EXPECT_ERROR(sp_result_diagnostic_fix(result, 0, 0, &operation), SP_ERROR_OUT_OF_RANGE);
    EXPECT_ERROR(sp_result_diagnostic_help(result, 1, &help), SP_ERROR_OUT_OF_RANGE);
  }
  EXPECT(sp_result_json(result, &json) == NULL && json.size > 0 && json.data[0] == '{');
  EXPECT_ERROR(sp_result_json(NULL, &json), SP_ERROR_NULL_ARGUMENT);
  /* The check failed, yet its owner was collected; no parameter is owned. */
  {
    sp_owner owner;
    sp_owned_parameter parameter;
    EXPECT(sp_result_owner_count(result, &count) == NULL && count == 1);
    EXPECT(sp_result_owner(result, 0, &owner) == NULL);
    EXPECT(strcmp(owner.fqn.data, "lin") == 0 && strcmp(owner.kind.data, "model") == 0);
    EXPECT(owner.native_request == SIZE_MAX && owner.native_pattern.data == NULL);
    EXPECT(owner.layout.size > 0 && owner.layout.data[0] == '{');
    EXPECT(strcmp(owner.pointer.data, "/providers/sharding/lin") == 0);
    EXPECT_ERROR(sp_result_owner(result, 1, &owner), SP_ERROR_OUT_OF_RANGE);
    EXPECT(sp_result_owned_parameter_count(result, &count) == NULL && count == 0);
    EXPECT_ERROR(sp_result_owned_parameter(result, 0, &parameter), SP_ERROR_OUT_OF_RANGE);
    EXPECT_ERROR(sp_result_owner_count(NULL, &count), SP_ERROR_NULL_ARGUMENT);
  }
  sp_result_delete(result);
  sp_document_delete(document);

  /* C lets callers pass any int as an enum: refused, never undefined. */
  {
    sp_layout *layout = NULL;
    EXPECT(sp_layout_create(&layout) == NULL);
    EXPECT_ERROR(sp_layout_declare(layout, (sp_port)-1), SP_ERROR_INVALID_ARGUMENT);
    EXPECT_ERROR(sp_layout_add_entry(layout, (sp_port)99, S("x")), SP_ERROR_INVALID_ARGUMENT);
    EXPECT_ERROR(sp_layout_set_placement(layout, (sp_port)5, S("x"), S("tp"), S("R")), SP_ERROR_INVALID_ARGUMENT);
    EXPECT(sp_layout_declare(layout, SP_PORT_OUT_DST) == NULL);
    sp_layout_delete(layout);
  }

  /* The builder's templates, overrides, blocks and legacy fields. */
  {
    sp_builder *builder = NULL;
    sp_layout *layout = NULL;
    const int64_t shape[2] = {8, 4};
    const int64_t blocks[2] = {2, 1};
    size_t index = 99;
    EXPECT(sp_builder_create(&builder) == NULL);
    EXPECT(sp_layout_create(&layout) == NULL);
    EXPECT(sp_builder_add_axis(builder, S("tp"), 2) == NULL);
    EXPECT(sp_builder_add_parameter(builder, S("w"), shape, 2, S("bfloat16")) == NULL);
    EXPECT(sp_builder_set_parameter_blocks(builder, S("w"), blocks, 2) == NULL);
    EXPECT_ERROR(sp_builder_set_parameter_blocks(builder, S("w"), blocks, 1), SP_ERROR_INVALID_ARGUMENT);
    EXPECT(sp_builder_add_module(builder, S("lin"), S("Linear")) == NULL);
    EXPECT(sp_builder_add_forward_arg(builder, S("lin"), S("x")) == NULL);
    EXPECT(sp_builder_add_module_param(builder, S("lin"), S("weight"), S("w")) == NULL);
    EXPECT(sp_builder_set_root(builder, S("lin")) == NULL);
    EXPECT_ERROR(sp_builder_add_template(builder, S("dp"), S(""), &index), SP_ERROR_INVALID_ARGUMENT);
    EXPECT(index == 99);
    EXPECT(sp_builder_add_template(builder, S("tp"), S(""), &index) == NULL && index == 0);
    EXPECT(sp_builder_add_template_rule(builder, index, S("weight"), S("colwise")) == NULL);
    EXPECT_ERROR(sp_builder_add_template_rule(builder, 1, S("x"), S("colwise")), SP_ERROR_INVALID_ARGUMENT);
    EXPECT(sp_layout_declare(layout, SP_PORT_PARAMS) == NULL);
    EXPECT(sp_layout_set_legacy_field(layout, S("inner_wrapper")) == NULL);
    EXPECT_ERROR(sp_layout_set_legacy_field(layout, S("wrapper")), SP_ERROR_INVALID_ARGUMENT);
    EXPECT(sp_builder_add_override(builder, S(""), layout) == NULL);
    EXPECT_ERROR(sp_builder_declare_plan(builder), SP_ERROR_INVALID_ARGUMENT);
    EXPECT(sp_builder_build(builder, NULL, &document) == NULL);
    EXPECT(sp_document_plan(document, NULL, &result) == NULL);
    EXPECT(sp_result_plan_entry_count(result, &count) == NULL && count == 1);
    sp_result_delete(result);
    sp_document_delete(document);
    sp_layout_delete(layout);
    sp_builder_delete(builder);
  }

  /* The builder's pipeline plan. */
  {
    sp_builder *builder = NULL;
    const sp_str inputs[2] = {S("hidden_states"), S("attention_mask")};
    const sp_str outputs[1] = {S("hidden_states")};
    EXPECT(sp_builder_create(&builder) == NULL);
    EXPECT_ERROR(sp_builder_add_pipeline_module(builder, S("layers"), inputs, 2, outputs, 1),
                 SP_ERROR_INVALID_ARGUMENT);
    EXPECT(sp_builder_set_pipeline(builder, S("model")) == NULL);
    EXPECT_ERROR(sp_builder_set_pipeline(builder, S("")), SP_ERROR_INVALID_ARGUMENT);
    EXPECT(sp_builder_add_pipeline_module(builder, S("layers"), inputs, 2, outputs, 1) == NULL);
    EXPECT_ERROR(sp_builder_add_pipeline_module(builder, S("layers"), NULL, 0, NULL, 0), SP_ERROR_INVALID_ARGUMENT);
    EXPECT_ERROR(sp_builder_add_pipeline_module(builder, S("norm"), NULL, 1, outputs, 1), SP_ERROR_NULL_ARGUMENT);
    EXPECT(sp_builder_to_json(builder, &json) == NULL && strstr(json.data, "\"pipeline\"") != NULL);
    sp_builder_delete(builder);
  }

  sp_result_delete(NULL);
  sp_document_delete(NULL);
  sp_builder_delete(NULL);
  sp_layout_delete(NULL);
  sp_error_delete(NULL);
  if (failures != 0) {
    fprintf(stderr, "%d failures\n", failures);
    return 1;
  }
  puts("c99_test: ok");
  return 0;
}
