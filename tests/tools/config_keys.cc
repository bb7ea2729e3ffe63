// SPDX-License-Identifier: Apache-2.0
// Prints the key tables of docs/configuration.md from the declarations (daemon/policy/keys.cc);
// with --update FILE, rewrites the tables between their markers in FILE.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "policy/keys.h"

int main(int argc, char** argv) {
  using namespace fragd;
  if (argc == 1) {
    std::printf("%s\n%s", key_table(KeyTable::Config).c_str(), key_table(KeyTable::Policy).c_str());
    return 0;
  }
  if (argc != 3 || std::strcmp(argv[1], "--update") != 0) {
    std::fprintf(stderr, "usage: %s [--update docs/configuration.md]\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[2]);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", argv[2]);
    return 1;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  auto out = with_key_tables(ss.str());
  if (!out) {
    std::fprintf(stderr, "%s: %s\n", argv[2], out.error().message.c_str());
    return 1;
  }
  if (*out == ss.str()) return 0;
  std::ofstream(argv[2]) << *out;
  std::printf("%s: key tables updated\n", argv[2]);
  return 0;
}
