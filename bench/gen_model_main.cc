// gen_model: writes a generated shardplan.v1 document (see model_gen.h).
//
//   gen_model --kind deepseek|generic|shared [options] [--out FILE]
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>

#include "bench/model_gen.h"

namespace {

constexpr char kUsage[] =
    "usage: gen_model --kind deepseek|generic|shared [options] [--out FILE]\n"
    "\n"
    "Writes a deterministic shardplan.v1 document (compact JSON) to FILE or\n"
    "standard output. Same options and seed -> same bytes.\n"
    "\n"
    "  --seed S              random seed (generic, shared; deepseek has no randomness)\n"
    "  --mesh dp=8,tp=8      mesh axes in order (default: deepseek dp=2,ep=8,tp=4,\n"
    "                        others dp=8,tp=8)\n"
    "  --devices N           a mesh preset: 8, 64, 512, 4096 or 32768 devices\n"
    "  --plan                append a final plan that passes\n"
    "deepseek:\n"
    "  --layers N            decoder layers (default 61)\n"
    "  --experts N           routed experts per MoE layer (default 256)\n"
    "  --dense N             leading layers with a dense MLP (default 3)\n"
    "generic:\n"
    "  --params N            Linear modules, one weight each (default 1000)\n"
    "  --owners-fraction F   share of them that own their layout (default 1)\n"
    "  --width N             Linear modules per block (default 8)\n"
    "  --owners provider|native|mixed  how owners are declared (default mixed)\n"
    "shared:\n"
    "  --paths N             slots of the shared ModuleList (default 1024)\n"
    "  --blocks N            distinct block modules (default 4)\n";

[[noreturn]] void Usage(const std::string& problem) {
  std::cerr << "gen_model: " << problem << " (gen_model --help for usage)\n";
  std::exit(2);
}

int64_t ToInt(std::string_view flag, const std::string& value) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno != 0) Usage(std::string(flag) + " needs an integer, got '" + value + "'");
  return v;
}

int ToInt32(std::string_view flag, const std::string& value) {
  const int64_t v = ToInt(flag, value);
  if (v < INT32_MIN || v > INT32_MAX) Usage(std::string(flag) + " is out of range: " + value);
  return static_cast<int>(v);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace shardplan::bench;
  GenOptions options;
  std::string out;
  bool have_kind = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (flag == "--plan") {
      options.plan = true;
      continue;
    }
    if (i + 1 >= argc) Usage("missing value after " + std::string(flag));
    const std::string value = argv[++i];
    if (flag == "--kind") {
      auto kind = ParseModelKind(value);
      if (!kind) Usage("unknown kind '" + value + "'");
      options.kind = *kind;
      have_kind = true;
    } else if (flag == "--seed") {
      options.seed = static_cast<uint64_t>(ToInt(flag, value));
    } else if (flag == "--mesh") {
      auto mesh = ParseMeshSpec(value);
      if (!mesh) Usage("bad mesh '" + value + "' (expected NAME=SIZE,...)");
      options.mesh = *mesh;
    } else if (flag == "--devices") {
      auto mesh = MeshForDevices(ToInt(flag, value));
      if (!mesh) Usage("no mesh preset for " + value + " devices (8, 64, 512, 4096, 32768)");
      options.mesh = *mesh;
    } else if (flag == "--layers") {
      options.layers = ToInt32(flag, value);
    } else if (flag == "--experts") {
      options.experts = ToInt32(flag, value);
    } else if (flag == "--dense") {
      options.dense_layers = ToInt32(flag, value);
    } else if (flag == "--params") {
      options.params = ToInt(flag, value);
    } else if (flag == "--owners-fraction") {
      char* end = nullptr;
      options.owners_fraction = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0') Usage("--owners-fraction needs a number, got '" + value + "'");
    } else if (flag == "--width") {
      options.width = ToInt32(flag, value);
    } else if (flag == "--owners") {
      auto style = ParseOwnerStyle(value);
      if (!style) Usage("unknown owner style '" + value + "'");
      options.owner_style = *style;
    } else if (flag == "--paths") {
      options.paths = ToInt32(flag, value);
    } else if (flag == "--blocks") {
      options.blocks = ToInt32(flag, value);
    } else if (flag == "--out") {
      out = value;
    } else {
      Usage("unknown option '" + std::string(flag) + "'");
    }
  }
  if (!have_kind) Usage("--kind is required");
  if (std::string problem = ValidateOptions(options); !problem.empty()) Usage(problem);

  const std::string doc = GenerateDocument(options);
  if (out.empty() || out == "-") {
    std::fwrite(doc.data(), 1, doc.size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 1;
  }
  std::ofstream file(out, std::ios::binary);
  file.write(doc.data(), static_cast<std::streamsize>(doc.size()));
  file.close();
  if (!file) {
    std::cerr << "gen_model: cannot write '" << out << "'\n";
    return 1;
  }
  return 0;
}
