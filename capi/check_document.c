/* check_document DOC: checks one shardplan document through the C ABI and
 * prints the library's release and ABI, the verdict and the number of
 * diagnostics; exits 0 when the document is ok, 1 when it has errors, 2 when
 * it cannot be read or a call fails. The ten lines of docs/capi.md section 10,
 * built against the installed library by tools/install_test.sh and
 * tools/package_deb_test.sh and against //capi:libshardplan.a by
 * static_library_test. Documents of up to 4 MiB. */
#include <shardplan/shardplan.h>
#include <stdio.h>

int main(int argc, char **argv) {
  static char text[4 << 20];
  FILE *f = argc == 2 ? fopen(argv[1], "rb") : NULL;
  sp_str json = {text, f != NULL ? fread(text, 1, sizeof text, f) : 0};
  sp_document *doc = NULL; sp_result *result = NULL; size_t n = 0; int ok = 0;
  if (f == NULL || sp_document_parse(json, NULL, &doc) || sp_document_check(doc, NULL, &result) ||
      sp_result_ok(result, &ok) || sp_result_diagnostic_count(result, &n)) return 2;
  printf("libshardplan %s, ABI %u: %s: %s, %zu diagnostics\n", sp_version_string(),
         (unsigned)sp_abi_version(), argv[1], ok ? "ok" : "errors", n);
  return ok ? 0 : 1;
}
