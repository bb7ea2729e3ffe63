// SPDX-License-Identifier: Apache-2.0
// The snapshot's files, each read as often as it may be, with back-off on failure.
#include <gtest/gtest.h>

#include <filesystem>

#include "kernel/procfs_fixtures.h"
#include "concerns/memory/files.h"

namespace {

using namespace fragd;
using fragd::test::TempDir;

constexpr uint64_t kS = 1'000'000'000ULL;

// A copy of the one-node fixtures as /proc (no sysfs), read each 1 s tick, pagetypeinfo each 60 s.
struct Proc {
  TempDir dir;
  std::map<std::string, uint64_t> errors;
  std::optional<MemSnapshot> mem;
  std::optional<MemoryFiles> files;
  explicit Proc(std::vector<const char*> missing = {}) {
    for (const char* f : {"buddyinfo", "zoneinfo", "pagetypeinfo", "vmstat", "meminfo"}) dir.copy_fixture("one_node", f);
    for (const char* f : missing) remove(f);
    files.emplace(dir.path(), "/nonexistent/fragd-sys", kS, 60 * kS, errors);
  }
  bool tick(uint64_t now) { return files->tick(now, mem); }
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
  ASSERT_TRUE(p.tick(100 * kS));
  ASSERT_TRUE(p.mem);
  EXPECT_FALSE(p.mem->zones.empty());
  p.remove("buddyinfo");
  EXPECT_FALSE(p.tick(101 * kS));
  EXPECT_FALSE(p.mem) << "no snapshot without buddyinfo";
  EXPECT_EQ(p.errors["buddyinfo"], 1u);
  p.restore("buddyinfo");
  EXPECT_FALSE(p.tick(101 * kS + kS / 2)) << "its retry is one tick after the failure";
  EXPECT_EQ(p.errors["buddyinfo"], 1u);
  EXPECT_TRUE(p.tick(102 * kS));
  EXPECT_TRUE(p.mem);
}

TEST(MemoryFiles, PagetypeinfoIsReadOncePerIntervalAndCarriedOverInBetween) {
  Proc p;
  ASSERT_TRUE(p.tick(100 * kS));
  const uint64_t blocks = pageblocks(*p.mem);
  ASSERT_GT(blocks, 0u);
  p.remove("pagetypeinfo");
  ASSERT_TRUE(p.tick(101 * kS));
  EXPECT_EQ(pageblocks(*p.mem), blocks) << "carried over: not read within the interval";
  EXPECT_EQ(p.errors.count("pagetypeinfo"), 0u);
  ASSERT_TRUE(p.tick(160 * kS));
  EXPECT_EQ(p.errors["pagetypeinfo"], 1u) << "read at the interval, and missing";
  EXPECT_EQ(pageblocks(*p.mem), 0u);
}

TEST(MemoryFiles, AnOptionalSourceThatFailsLeavesTheRestOfTheSnapshot) {
  Proc p({"vmstat"});
  ASSERT_TRUE(p.tick(100 * kS));
  EXPECT_TRUE(p.mem->vmstat.empty());
  EXPECT_FALSE(p.mem->zones.empty());
  EXPECT_EQ(p.errors["vmstat"], 1u);
  ASSERT_TRUE(p.tick(100 * kS + kS / 2));
  EXPECT_EQ(p.errors["vmstat"], 1u) << "skipped until its retry";
}

// vmstat is only exported: a tick carries it from the snapshot before, a scrape reads it again.
TEST(MemoryFiles, VmstatIsReadForAScrapeAndCarriedAtATick) {
  Proc p;
  ASSERT_TRUE(p.tick(100 * kS));
  ASSERT_EQ(p.mem->vmstat.at("nr_free_pages"), 6096132u) << "the first snapshot reads every source";
  p.dir.write("vmstat", "nr_free_pages 7\n");
  ASSERT_TRUE(p.tick(101 * kS));
  EXPECT_EQ(p.mem->vmstat.at("nr_free_pages"), 6096132u) << "carried at a tick";
  p.files->scrape(101 * kS + kS / 2, *p.mem);
  EXPECT_EQ(p.mem->vmstat.at("nr_free_pages"), 7u) << "read for the scrape";
  ASSERT_TRUE(p.tick(102 * kS));
  EXPECT_EQ(p.mem->vmstat.at("nr_free_pages"), 7u) << "the scrape's read carried to the next tick";
  p.remove("vmstat");
  ASSERT_TRUE(p.tick(103 * kS));
  EXPECT_EQ(p.errors.count("vmstat"), 0u) << "a tick does not read it";
  p.files->scrape(103 * kS + kS / 2, *p.mem);
  EXPECT_EQ(p.errors["vmstat"], 1u);
  EXPECT_TRUE(p.mem->vmstat.empty()) << "absent while it fails, not the old values";
  p.restore("vmstat");
  p.files->scrape(103 * kS + kS * 3 / 4, *p.mem);
  EXPECT_EQ(p.errors["vmstat"], 1u) << "backs off: not read before its retry";
  ASSERT_TRUE(p.tick(105 * kS));
  EXPECT_TRUE(p.mem->vmstat.empty()) << "a tick while it backs off leaves it absent";
  p.files->scrape(105 * kS, *p.mem);
  EXPECT_EQ(p.mem->vmstat.at("nr_free_pages"), 6096132u) << "read again at its retry";
}

// What a decision reads (here MemAvailable) is read at every tick.
TEST(MemoryFiles, MeminfoIsReadAtEveryTick) {
  Proc p;
  ASSERT_TRUE(p.tick(100 * kS));
  p.dir.write("meminfo", "MemFree: 100 kB\nMemAvailable: 200 kB\n");
  ASSERT_TRUE(p.tick(101 * kS));
  EXPECT_EQ(p.mem->mem_available_kib, 200u);
}

}  // namespace
