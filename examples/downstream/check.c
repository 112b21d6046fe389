/* check FILE...: checks shardplan documents through the C ABI and prints
 * each diagnostic and a summary line; exits 0 when every document is ok,
 * 1 when some has errors, 2 on a usage or I/O error. */
#include <shardplan/shardplan.h>

#include <stdio.h>
#include <stdlib.h>

static char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  char *data = NULL;
  long n;
  if (f == NULL) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
    data = malloc((size_t)n + 1);
    if (data != NULL && fread(data, 1, (size_t)n, f) != (size_t)n) {
      free(data);
      data = NULL;
    }
    *size = (size_t)n;
  }
  fclose(f);
  return data;
}

/* Prints the error, frees it and returns 2. */
static int fail(sp_error *error) {
  fprintf(stderr, "shardplan error %d: %s\n", (int)sp_error_code_of(error), sp_error_message(error));
  sp_error_delete(error);
  return 2;
}

static int check(const char *path) {
  size_t size = 0, count = 0, i;
  char *text = read_file(path, &size);
  sp_str json;
  sp_document *document = NULL;
  sp_result *result = NULL;
  sp_error *error;
  int ok = 0;
  if (text == NULL) {
    fprintf(stderr, "%s: cannot read\n", path);
    return 2;
  }
  json.data = text;
  json.size = size;
  error = sp_document_parse(json, NULL, &document);
  free(text);
  if (error != NULL) return fail(error);
  error = sp_document_check(document, NULL, &result);
  sp_document_delete(document);
  if (error != NULL) return fail(error);
  if ((error = sp_result_ok(result, &ok)) != NULL || (error = sp_result_diagnostic_count(result, &count)) != NULL) {
    sp_result_delete(result);
    return fail(error);
  }
  for (i = 0; i < count; ++i) {
    sp_diagnostic d;
    if ((error = sp_result_diagnostic(result, i, &d)) != NULL) {
      sp_result_delete(result);
      return fail(error);
    }
    printf("error[%.*s]: %.*s\n", (int)d.code.size, d.code.data, (int)d.message.size, d.message.data);
    if (d.pointer.data != NULL) printf("  --> %s:%.*s\n", path, (int)d.pointer.size, d.pointer.data);
  }
  if (ok) {
    printf("%s: ok\n", path);
  } else {
    printf("%s: %zu error%s\n", path, count, count == 1 ? "" : "s");
  }
  sp_result_delete(result);
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  int i, status = 0;
  if (argc < 2) {
    fprintf(stderr, "usage: check FILE...\n");
    return 2;
  }
  if (sp_abi_version() != SP_ABI_VERSION) {
    fprintf(stderr, "shardplan ABI %u, built for %d\n", (unsigned)sp_abi_version(), SP_ABI_VERSION);
    return 2;
  }
  for (i = 1; i < argc; ++i) {
    int s = check(argv[i]);
    if (s > status) status = s;
  }
  return status;
}
