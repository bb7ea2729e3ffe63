// SPDX-License-Identifier: Apache-2.0
// The snapshot's files, each read as often as it may be, with back-off on failure.
#include <gtest/gtest.h>

#include <filesystem>

#include "kernel/procfs_fixtures.h"
#include "sources/memory/files.h"

namespace {

using namespace fragd;
using fragd::test::TempDir;

constexpr uint64_t kS = 1'000'000'000ULL;

struct Proc {
  TempDir dir;
  Proc() {
    for (const char* f : {"buddyinfo", "zoneinfo", "pagetypeinfo", "vmstat", "meminfo"}) dir.copy_fixture("one_node", f);
  }
  void remove(const char* f) const { std::filesystem::remove(std::filesystem::path(dir.path()) / f); }
  void restore(const char* f) const { dir.copy_fixture("one_node", f); }
};

uint64_t pageblocks(const MemSnapshot& m) {
  uint64_t n = 0;
  for (const auto& z : m.zones)
    for (const auto& [_, c] : z.pageblocks) n += c;
  return n;
}

TEST(MemoryFiles, ASnapshotSourceThatFailsDropsTheSnapshotAndIsRetriedAfterATick) {
  Proc p;
  std::map<std::string, uint64_t> errors;
  MemoryFiles f(p.dir.path(), "/nonexistent/fragd-sys", kS, 60 * kS, errors);
  std::optional<MemSnapshot> mem;
  ASSERT_TRUE(f.tick(100 * kS, mem));
  ASSERT_TRUE(mem);
  EXPECT_FALSE(mem->zones.empty());
  p.remove("buddyinfo");
  EXPECT_FALSE(f.tick(101 * kS, mem));
  EXPECT_FALSE(mem) << "no snapshot without buddyinfo";
  EXPECT_EQ(errors["buddyinfo"], 1u);
  p.restore("buddyinfo");
  EXPECT_FALSE(f.tick(101 * kS + kS / 2, mem)) << "its retry is one tick after the failure";
  EXPECT_EQ(errors["buddyinfo"], 1u);
  EXPECT_TRUE(f.tick(102 * kS, mem));
  EXPECT_TRUE(mem);
}

TEST(MemoryFiles, PagetypeinfoIsReadOncePerIntervalAndCarriedOverInBetween) {
  Proc p;
  std::map<std::string, uint64_t> errors;
  MemoryFiles f(p.dir.path(), "/nonexistent/fragd-sys", kS, 60 * kS, errors);
  std::optional<MemSnapshot> mem;
  ASSERT_TRUE(f.tick(100 * kS, mem));
  const uint64_t blocks = pageblocks(*mem);
  ASSERT_GT(blocks, 0u);
  p.remove("pagetypeinfo");
  ASSERT_TRUE(f.tick(101 * kS, mem));
  EXPECT_EQ(pageblocks(*mem), blocks) << "carried over: not read within the interval";
  EXPECT_EQ(errors.count("pagetypeinfo"), 0u);
  ASSERT_TRUE(f.tick(160 * kS, mem));
  EXPECT_EQ(errors["pagetypeinfo"], 1u) << "read at the interval, and missing";
  EXPECT_EQ(pageblocks(*mem), 0u);
}

TEST(MemoryFiles, AnOptionalSourceThatFailsLeavesTheRestOfTheSnapshot) {
  Proc p;
  p.remove("vmstat");
  std::map<std::string, uint64_t> errors;
  MemoryFiles f(p.dir.path(), "/nonexistent/fragd-sys", kS, 60 * kS, errors);
  std::optional<MemSnapshot> mem;
  ASSERT_TRUE(f.tick(100 * kS, mem));
  EXPECT_TRUE(mem->vmstat.empty());
  EXPECT_FALSE(mem->zones.empty());
  EXPECT_EQ(errors["vmstat"], 1u);
  ASSERT_TRUE(f.tick(100 * kS + kS / 2, mem));
  EXPECT_EQ(errors["vmstat"], 1u) << "skipped until its retry";
}

}  // namespace
