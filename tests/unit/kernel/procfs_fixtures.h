// SPDX-License-Identifier: Apache-2.0
// Fixture paths and small helpers shared by the /proc parser tests.
#pragma once

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kernel/procfs.h"

namespace fragd::test {

namespace fs = std::filesystem;

inline const std::string kFixtures = FRAGD_FIXTURES_DIR;

inline std::string fixture(const std::string& shape, const std::string& file) {
  auto text = read_text_file(kFixtures + "/" + shape + "/" + file);
  EXPECT_TRUE(text.ok()) << (text.ok() ? "" : text.error().message);
  return text.ok() ? *text : std::string();
}

inline const ZoneFree* find_zone(const std::vector<ZoneFree>& zones, int node, const std::string& name) {
  for (const ZoneFree& z : zones)
    if (z.node == node && z.zone == name) return &z;
  return nullptr;
}

inline bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

inline size_t count_with_prefix(const std::vector<std::string>& v, const std::string& prefix) {
  return static_cast<size_t>(
      std::count_if(v.begin(), v.end(), [&](const std::string& s) { return starts_with(s, prefix); }));
}

inline bool any_contains(const std::vector<std::string>& v, const std::string& needle) {
  return std::any_of(v.begin(), v.end(),
                     [&](const std::string& s) { return s.find(needle) != std::string::npos; });
}

// A scratch directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "fragd-kernel-test-XXXXXX").string();
    if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  // Copies tests/fixtures/SHAPE/FILE into the directory.
  void copy_fixture(const std::string& shape, const std::string& file) const {
    fs::copy_file(kFixtures + "/" + shape + "/" + file, fs::path(path_) / file);
  }
  void write(const std::string& rel, const std::string& text) const {
    const fs::path p = fs::path(path_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }

 private:
  std::string path_;
};

}  // namespace fragd::test
