// SPDX-License-Identifier: Apache-2.0
// Faults of the files fragd reads: the per-source back-off and log-once
// bookkeeping (kernel/source_faults.h), and what read_snapshot() reports per
// source when files vanish, turn into directories or stop parsing.
#include "kernel/source_faults.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kernel/procfs.h"
#include "procfs_fixtures.h"

namespace fragd {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

constexpr uint64_t kFaultsSecond = 1'000'000'000ULL;

TEST(ErrnoName, SymbolicNames) {
  EXPECT_EQ(errno_name(ENOENT), "ENOENT");
  EXPECT_EQ(errno_name(EISDIR), "EISDIR");
  EXPECT_EQ(errno_name(EROFS), "EROFS");
  EXPECT_EQ(errno_name(0), "OK");
  EXPECT_EQ(errno_name(100000), "E100000");
}

TEST(SourceFaults, AHealthySourceIsAlwaysDue) {
  SourceFaults f(kFaultsSecond, 60 * kFaultsSecond);
  EXPECT_TRUE(f.due("vmstat", 0));
  EXPECT_FALSE(f.ok("vmstat", 5).has_value());  // nothing to recover from: nothing to log
  EXPECT_FALSE(f.failing("vmstat"));
}

TEST(SourceFaults, RetryIntervalDoublesUpToTheCap) {
  SourceFaults f(kFaultsSecond, 60 * kFaultsSecond);
  uint64_t t = 100 * kFaultsSecond;
  std::vector<uint64_t> waits;
  for (int i = 0; i < 10; i++) {
    ASSERT_TRUE(f.due("buddyinfo", t));
    f.failed("buddyinfo", "ENOENT", t);
    const uint64_t w = f.retry_in_ns("buddyinfo", t);
    waits.push_back(w / kFaultsSecond);
    EXPECT_FALSE(f.due("buddyinfo", t + w - 1)) << "read again before its retry at failure " << i;
    t += w;
  }
  EXPECT_EQ(waits, (std::vector<uint64_t>{1, 2, 4, 8, 16, 32, 60, 60, 60, 60}));
  EXPECT_EQ(f.failures("buddyinfo"), 10u);
}

TEST(SourceFaults, EachCauseIsReportedOnceAndRecoveryOnce) {
  SourceFaults f(kFaultsSecond, 60 * kFaultsSecond);
  EXPECT_TRUE(f.failed("vmstat", "EISDIR", 0));  // new: log it
  for (int i = 1; i < 50; i++) EXPECT_FALSE(f.failed("vmstat", "EISDIR", i * kFaultsSecond)) << "logged again at " << i;
  EXPECT_TRUE(f.failed("vmstat", "format", 51 * kFaultsSecond));  // another cause: log it
  EXPECT_FALSE(f.failed("vmstat", "format", 52 * kFaultsSecond));
  // Other sources are independent.
  EXPECT_TRUE(f.failed("meminfo", "ENOENT", 52 * kFaultsSecond));
  EXPECT_TRUE(f.due("zoneinfo", 52 * kFaultsSecond));

  auto rec = f.ok("vmstat", 60 * kFaultsSecond);
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->cause, "format");
  EXPECT_EQ(rec->failures, 52u);
  EXPECT_EQ(rec->failing_ns, 60 * kFaultsSecond);
  EXPECT_FALSE(f.ok("vmstat", 61 * kFaultsSecond).has_value());  // recovery is reported once
  // After a recovery, the same cause is news again, and the back-off starts over.
  EXPECT_TRUE(f.failed("vmstat", "EISDIR", 70 * kFaultsSecond));
  EXPECT_EQ(f.retry_in_ns("vmstat", 70 * kFaultsSecond), kFaultsSecond);
  EXPECT_TRUE(f.failing("meminfo"));
}

const SourceRead* find(const std::vector<SourceRead>& report, const std::string& source) {
  for (const auto& r : report)
    if (r.source == source) return &r;
  return nullptr;
}

TEST(ReadSnapshotReport, CleanSourcesHaveNoCause) {
  TempDir proc, sys;
  for (const char* f : {"buddyinfo", "zoneinfo", "pagetypeinfo", "vmstat", "meminfo"}) proc.copy_fixture("one_node", f);
  sys.write("kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "2\n");
  sys.write("kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "1\n");
  std::vector<SourceRead> report;
  auto snap = read_snapshot(proc.path(), sys.path(), nullptr, {}, report);
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  // Every source of kSnapshotSources: mthp and psi (no pressure/memory here: no PSI) read
  // nothing, cleanly.
  ASSERT_EQ(report.size(), 8u);
  for (const auto& r : report) EXPECT_EQ(r.cause, "") << r.source << ": " << r.message;
  EXPECT_EQ(report[0].source, "buddyinfo");
  EXPECT_EQ(report[0].path, proc.path() + "/buddyinfo");
}

TEST(ReadSnapshotReport, VanishedUnreadableAndReformattedFilesNameTheirCause) {
  TempDir proc, sys;
  for (const char* f : {"buddyinfo", "zoneinfo"}) proc.copy_fixture("one_node", f);
  fs::create_directories(fs::path(proc.path()) / "vmstat");           // read: EISDIR
  proc.write("pagetypeinfo", "Page block order: 9\nsomething else entirely\n");  // parses to nothing
  // meminfo absent: ENOENT
  sys.write("kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "two\n");
  sys.write("kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "1\n");
  std::vector<SourceRead> report;
  auto snap = read_snapshot(proc.path(), sys.path(), nullptr, {}, report);
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  ASSERT_NE(find(report, "vmstat"), nullptr);
  EXPECT_EQ(find(report, "vmstat")->cause, "EISDIR");
  EXPECT_TRUE(find(report, "vmstat")->failed());
  EXPECT_NE(find(report, "vmstat")->message.find(proc.path() + "/vmstat"), std::string::npos);
  EXPECT_EQ(find(report, "meminfo")->cause, "ENOENT");
  EXPECT_EQ(find(report, "pagetypeinfo")->cause, "format");
  EXPECT_EQ(find(report, "hugepages")->cause, "format");
  EXPECT_NE(find(report, "hugepages")->path.find("nr_hugepages"), std::string::npos);
  EXPECT_EQ(find(report, "buddyinfo")->cause, "");
  EXPECT_TRUE(snap->vmstat.empty());
  EXPECT_TRUE(snap->hugepages.empty());
}

TEST(ReadSnapshotReport, ARequiredSourceThatFailsIsTheLastEntry) {
  TempDir proc;
  proc.write("buddyinfo", "garbage, not the kernel's buddyinfo\n");
  proc.copy_fixture("one_node", "zoneinfo");
  std::vector<SourceRead> report;
  auto snap = read_snapshot(proc.path(), "/nonexistent", nullptr, {}, report);
  ASSERT_FALSE(snap.ok());
  ASSERT_EQ(report.size(), 1u);
  EXPECT_EQ(report[0].source, "buddyinfo");
  EXPECT_EQ(report[0].cause, "format");

  TempDir gone;
  gone.copy_fixture("one_node", "buddyinfo");
  report.clear();
  ASSERT_FALSE(read_snapshot(gone.path(), "/nonexistent", nullptr, {}, report).ok());
  ASSERT_EQ(report.size(), 2u);
  EXPECT_EQ(report[0].cause, "");
  EXPECT_EQ(report[1].source, "zoneinfo");
  EXPECT_EQ(report[1].cause, "ENOENT");
}

TEST(ReadSnapshotReport, SkippedLinesAreReportedButTheSourceIsUsed) {
  TempDir proc;
  for (const char* f : {"buddyinfo", "zoneinfo", "meminfo", "pagetypeinfo"}) proc.copy_fixture("one_node", f);
  proc.write("vmstat", "nr_free_pages 10\nbroken line with four\nnr_zone_inactive_anon x\n");
  std::vector<SourceRead> report;
  auto snap = read_snapshot(proc.path(), "/nonexistent", nullptr, {}, report);
  ASSERT_TRUE(snap.ok());
  const SourceRead* v = find(report, "vmstat");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->cause, "lines");
  EXPECT_FALSE(v->failed());
  EXPECT_NE(v->message.find("(and 1 more)"), std::string::npos) << v->message;
  EXPECT_EQ(snap->vmstat.at("nr_free_pages"), 10u);
}

TEST(ReadSnapshotReport, SkippedSourcesAreNotRead) {
  TempDir proc;
  for (const char* f : {"buddyinfo", "zoneinfo", "pagetypeinfo", "vmstat", "meminfo"}) proc.copy_fixture("one_node", f);
  std::vector<SourceRead> report;
  auto snap = read_snapshot(proc.path(), "/nonexistent", nullptr, SourcePlan{{"vmstat", "meminfo", "pagetypeinfo"}, {}}, report);
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(find(report, "vmstat"), nullptr);
  EXPECT_EQ(find(report, "meminfo"), nullptr);
  EXPECT_EQ(find(report, "pagetypeinfo"), nullptr);
  EXPECT_NE(find(report, "hugepages"), nullptr);
  EXPECT_TRUE(snap->vmstat.empty());
  EXPECT_EQ(snap->mem_available_kib, 0u);
  for (const ZoneFree& z : snap->zones) EXPECT_TRUE(z.pageblocks.empty());
}

}  // namespace
}  // namespace fragd
