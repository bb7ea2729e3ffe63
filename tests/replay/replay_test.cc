// SPDX-License-Identifier: Apache-2.0
// Each tests/replay/*.events file, played through the BPF programs' accounting
// logic compiled for user space (replay_events.h says the format). The files
// come from FRAGD_REPLAY_DIR (environment) or this source folder.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "replay_events.h"

namespace fragd::replay {
namespace {

std::string dir() {
  const char* env = std::getenv("FRAGD_REPLAY_DIR");
  return env && *env ? env : FRAGD_REPLAY_SOURCE_DIR;
}

std::vector<std::string> files() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir(), ec))
    if (e.path().extension() == ".events") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

class Replay : public testing::TestWithParam<std::string> {};

TEST_P(Replay, CountersAsExpected) {
  const auto errors = run_file(dir() + "/" + GetParam() + ".events");
  std::string all;
  for (const auto& e : errors) all += e + "\n";
  EXPECT_TRUE(errors.empty()) << all;
}

INSTANTIATE_TEST_SUITE_P(Sequences, Replay, testing::ValuesIn(files()),
                         [](const testing::TestParamInfo<std::string>& i) { return i.param; });

TEST(ReplayFiles, ThereAreSome) { EXPECT_GE(files().size(), 5u) << "no .events files in " << dir(); }

// The harness itself: a wrong expectation, an unknown counter and a counter left unnamed all fail.
TEST(ReplayFiles, MismatchesAreReported) {
  const std::string path = testing::TempDir() + "/replay_self.events";
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("0 - counting on\n"
        "0 7 mm_compaction_try_to_compact_pages order=9\n"
        "2 7 mm_page_alloc order=9 page=1\n"
        "expect allocs[9][stalled] 2\n"
        "expect no_such_counter 1\n",
        f);
  fclose(f);
  const auto errors = run_file(path);
  std::string all;
  for (const auto& e : errors) all += e + "\n";
  EXPECT_NE(all.find("allocs[9][stalled] is 1, want 2"), std::string::npos) << all;
  EXPECT_NE(all.find("no counter no_such_counter"), std::string::npos) << all;
  EXPECT_NE(all.find("(no expect line): direct_entries[9][compaction] is 1, want 0"), std::string::npos) << all;
  EXPECT_NE(all.find("stall_hist[9][success].sum_ns is 2000000, want 0"), std::string::npos) << all;
}

}  // namespace
}  // namespace fragd::replay
