// SPDX-License-Identifier: Apache-2.0
// Parsers for /proc/{vmstat,meminfo}, the sysfs hugepage pools and read_snapshot,
// on recorded fixtures and inline edge cases; mutated inputs never crash a parser.
#include "kernel/procfs.h"

#include <gtest/gtest.h>

#include <filesystem>

#include <random>
#include <string>
#include <vector>

#include "procfs_fixtures.h"

namespace fragd {
namespace {

using namespace test;

// --- vmstat, meminfo --------------------------------------------------------

TEST(Vmstat, OneNodeFixtureHasEveryKey) {
  const std::string text = fixture("one_node", "vmstat");
  std::vector<std::string> w;
  auto vm = parse_vmstat(text, "v", &w);
  ASSERT_TRUE(vm.ok()) << vm.error().message;
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(vm->size(), static_cast<size_t>(std::count(text.begin(), text.end(), '\n')));
  EXPECT_EQ(vm->at("nr_free_pages"), 6096132u);
  EXPECT_EQ(vm->at("nr_free_pages_blocks"), 5956096u);
  EXPECT_EQ(vm->count("compact_stall"), 1u);
}

TEST(Vmstat, GarbledFixture) {
  std::vector<std::string> w;
  auto vm = parse_vmstat(fixture("garbled", "vmstat"), "g/vmstat", &w);
  ASSERT_TRUE(vm.ok()) << vm.error().message;
  EXPECT_EQ(*vm, (std::map<std::string, uint64_t>{{"nr_free_pages", 6096132},
                                                  {"compact_stall", 17},
                                                  {"compact_fail", 4},
                                                  {"compact_success", 13}}));
  ASSERT_EQ(w.size(), 4u);
  for (const char* line : {"g/vmstat:2: ", "g/vmstat:3: ", "g/vmstat:4: ", "g/vmstat:8: "})
    EXPECT_EQ(count_with_prefix(w, line), 1u) << line;
  EXPECT_FALSE(parse_vmstat("", "v").ok());
  auto bad = parse_vmstat("a b c\n", "/p/vmstat");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(starts_with(bad.error().message, "/p/vmstat:1: expected")) << bad.error().message;
}

// The meminfo of fixture `shape`, read as if from `path`; the parse must succeed.
MemSnapshot meminfo_of(const std::string& shape, const std::string& path) {
  MemSnapshot snap;
  auto r = parse_meminfo(fixture(shape, "meminfo"), path, snap);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return snap;
}

TEST(Meminfo, OneNodeFixture) {
  const MemSnapshot snap = meminfo_of("one_node", "m");
  EXPECT_EQ(snap.mem_free_kib, 24384476u);
  EXPECT_EQ(snap.mem_available_kib, 24247156u);
  EXPECT_TRUE(snap.warnings.empty()) << snap.warnings.front();
}

TEST(Meminfo, GarbledFixture) {
  const MemSnapshot snap = meminfo_of("garbled", "g/meminfo");
  EXPECT_EQ(snap.mem_free_kib, 0u);
  EXPECT_EQ(snap.mem_available_kib, 24247156u);
  EXPECT_EQ(count_with_prefix(snap.warnings, "g/meminfo:2: "), 1u);  // MemFree: 1x kB
  EXPECT_EQ(count_with_prefix(snap.warnings, "g/meminfo:4: "), 1u);  // no colon
  EXPECT_TRUE(any_contains(snap.warnings, "no MemFree line"));
  EXPECT_EQ(snap.warnings.size(), 3u);

  MemSnapshot empty;
  EXPECT_FALSE(parse_meminfo("", "m", empty).ok());
  auto none = parse_meminfo("MemTotal: 5 kB\n", "/p/meminfo", empty);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("/p/meminfo:1: expected"), std::string::npos);
}

// --- hugepages --------------------------------------------------------------

TEST(Hugepages, PerNodePools) {
  TempDir sys;
  ASSERT_FALSE(sys.path().empty());
  const std::string n0 = "devices/system/node/node0/hugepages/";
  const std::string n1 = "devices/system/node/node1/hugepages/";
  sys.write(n0 + "hugepages-2048kB/nr_hugepages", "16\n");
  sys.write(n0 + "hugepages-2048kB/free_hugepages", "10\n");
  sys.write(n0 + "hugepages-2048kB/surplus_hugepages", "2\n");
  sys.write(n0 + "hugepages-1048576kB/nr_hugepages", "1\n");
  sys.write(n0 + "hugepages-1048576kB/free_hugepages", "1\n");  // no surplus file
  sys.write(n1 + "hugepages-2048kB/nr_hugepages", "4\n");
  sys.write(n1 + "hugepages-2048kB/free_hugepages", "garbage\n");  // skipped, warned
  sys.write("devices/system/node/possible", "0-1\n");
  // The global pool must be ignored when per-node pools exist.
  sys.write("kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "99\n");
  sys.write("kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "99\n");

  std::vector<std::string> w;
  auto pools = read_hugepages(sys.path(), &w);
  ASSERT_EQ(pools.size(), 2u);
  EXPECT_EQ(pools[0].node, 0);
  EXPECT_EQ(pools[0].size_kib, 2048u);
  EXPECT_EQ(pools[0].total, 16u);
  EXPECT_EQ(pools[0].free, 10u);
  EXPECT_EQ(pools[0].surplus, 2u);
  EXPECT_EQ(pools[1].node, 0);
  EXPECT_EQ(pools[1].size_kib, 1048576u);
  EXPECT_EQ(pools[1].surplus, 0u);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("node1/hugepages/hugepages-2048kB/free_hugepages:1:"), std::string::npos)
      << w[0];
}

TEST(Hugepages, FallsBackToGlobalPoolsAsNodeZero) {
  TempDir sys;
  sys.write("kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "8\n");
  sys.write("kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "3\n");
  sys.write("kernel/mm/hugepages/hugepages-2048kB/surplus_hugepages", "0\n");
  auto pools = read_hugepages(sys.path());
  ASSERT_EQ(pools.size(), 1u);
  EXPECT_EQ(pools[0].node, 0);
  EXPECT_EQ(pools[0].size_kib, 2048u);
  EXPECT_EQ(pools[0].total, 8u);
  EXPECT_EQ(pools[0].free, 3u);

  EXPECT_TRUE(read_hugepages("/nonexistent/fragd-sys").empty());
}

// The pools' folders are listed again only after 10 s, or when a pool's file has gone: a node
// whose folder went is no fault, its pools are gone; a pool file gone in a folder still there is.
TEST(Hugepages, AListedPoolThatWentAwayIsListedAgainNotAFault) {
  TempDir sys;
  const std::string n0 = "devices/system/node/node0/hugepages/hugepages-2048kB/";
  const std::string n1 = "devices/system/node/node1/hugepages/hugepages-2048kB/";
  for (const std::string& p : {n0, n1}) {
    sys.write(p + "nr_hugepages", "4\n");
    sys.write(p + "free_hugepages", "2\n");
  }
  std::vector<std::string> w;
  ASSERT_EQ(read_hugepages(sys.path(), &w).size(), 2u);
  sys.write(n0 + "free_hugepages", "1\n");
  std::filesystem::remove_all(sys.path() + "/devices/system/node/node1");
  auto pools = read_hugepages(sys.path(), &w);
  ASSERT_EQ(pools.size(), 1u);
  EXPECT_EQ(pools[0].free, 1u) << "read anew, not carried from the listing";
  EXPECT_TRUE(w.empty()) << w.front();
  std::filesystem::remove(sys.path() + "/" + n0 + "nr_hugepages");
  EXPECT_TRUE(read_hugepages(sys.path(), &w).empty());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("node0/hugepages/hugepages-2048kB/nr_hugepages"), std::string::npos) << w[0];
}

// --- /proc/pressure/memory (PSI) ---------------------------------------------

TEST(Pressure, OneNodeFixture) {
  std::vector<std::string> w;
  auto p = parse_pressure(fixture("one_node", "pressure/memory"), "p", &w);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(p->some_us, 36324128u);
  EXPECT_EQ(p->full_us, 33353147u);
}

TEST(Pressure, GarbledFixtureKeepsSomeAndNamesTheBadLine) {
  std::vector<std::string> w;
  auto p = parse_pressure(fixture("garbled", "pressure/memory"), "/proc/pressure/memory", &w);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->some_us, 36324128u);
  EXPECT_FALSE(p->full_us.has_value());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_TRUE(starts_with(w[0], "/proc/pressure/memory:2: full: total '3335x147' is not a number")) << w[0];
}

TEST(Pressure, ShapesAndErrors) {
  // A file with only "some" (as the cpu file was before 5.13): full absent, no warning.
  std::vector<std::string> w;
  auto p = parse_pressure("some avg10=1.00 avg60=0.50 avg300=0.10 total=7\n", "p", &w);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->some_us, 7u);
  EXPECT_FALSE(p->full_us.has_value());
  EXPECT_TRUE(w.empty());
  // Unknown keys beside total are fine; a token without '=' is not.
  p = parse_pressure("some total=9 future=1\nfull total=3\n", "p", &w);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->some_us, 9u);
  EXPECT_EQ(p->full_us, 3u);
  // Nothing usable: an error naming the path and the first bad line.
  for (const char* bad : {"", "\n", "some avg10=0.00\n", "full total=3\n", "some total=-1\n", "pressure\n",
                          "some total\n", "some =5\n"}) {
    auto e = parse_pressure(bad, "/proc/pressure/memory");
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_TRUE(starts_with(e.error().message, "/proc/pressure/memory")) << e.error().message;
  }
  // A second "some" line is skipped with a warning; the first one counts.
  w.clear();
  p = parse_pressure("some total=1\nsome total=2\n", "p", &w);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->some_us, 1u);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_TRUE(starts_with(w[0], "p:2: some appears twice")) << w[0];
}

TEST(Pressure, AbsentWithoutPsiGarbledNamedInTheReport) {
  TempDir proc;
  proc.write("buddyinfo", fixture("one_node", "buddyinfo"));
  proc.write("zoneinfo", fixture("one_node", "zoneinfo"));
  std::vector<SourceRead> report;
  // No /proc/pressure (CONFIG_PSI off, or booted psi=0): no figures, no warning, no failure.
  auto snap = read_snapshot(proc.path(), "/nonexistent", nullptr, {}, report);
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_FALSE(snap->memory_pressure.has_value());
  EXPECT_FALSE(any_contains(snap->warnings, "pressure"));
  for (const SourceRead& r : report)
    if (r.source == "psi") {
      EXPECT_FALSE(r.failed()) << r.message;
    }

  // A file that does not parse: absent, a warning and a failed read, both naming the path.
  proc.write("pressure/memory", "garbage\n");
  report.clear();
  snap = read_snapshot(proc.path(), "/nonexistent", nullptr, {}, report);
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_FALSE(snap->memory_pressure.has_value());
  const std::string path = proc.path() + "/pressure/memory";
  EXPECT_TRUE(any_contains(snap->warnings, path + ":1: expected"));
  bool named = false;
  for (const SourceRead& r : report)
    if (r.source == "psi") {
      named = true;
      EXPECT_EQ(r.cause, "format");
      EXPECT_EQ(r.path, path);
      EXPECT_NE(r.message.find("memory pressure (PSI) totals are not reported"), std::string::npos) << r.message;
    }
  EXPECT_TRUE(named);

  // Unreadable (a directory: EISDIR) is a failure too; skipped while it backs off, it is not read.
  fs::remove(fs::path(path));
  fs::create_directories(fs::path(path));
  report.clear();
  snap = read_snapshot(proc.path(), "/nonexistent", nullptr, {}, report);
  ASSERT_TRUE(snap.ok());
  EXPECT_TRUE(std::any_of(report.begin(), report.end(),
                          [](const SourceRead& r) { return r.source == "psi" && r.cause == "EISDIR"; }));
  report.clear();
  snap = read_snapshot(proc.path(), "/nonexistent", nullptr, SourcePlan{{"psi"}, {}}, report);
  ASSERT_TRUE(snap.ok());
  EXPECT_FALSE(std::any_of(report.begin(), report.end(), [](const SourceRead& r) { return r.source == "psi"; }));
}

// --- per-size THP statistics (Linux 6.9+) ---------------------------------

TEST(MthpStats, EverySizeWithStatsEveryFile) {
  TempDir sys;
  const std::string thp = "kernel/mm/transparent_hugepage/";
  sys.write(thp + "hugepages-2048kB/stats/anon_fault_alloc", "120\n");
  sys.write(thp + "hugepages-2048kB/stats/anon_fault_fallback", "7\n");
  sys.write(thp + "hugepages-2048kB/stats/nr_anon", "3\n");
  sys.write(thp + "hugepages-64kB/stats/anon_fault_alloc", "5\n");
  sys.write(thp + "hugepages-64kB/enabled", "never [inherit]\n");  // beside stats/, not read
  sys.write(thp + "hugepages-1048576kB/enabled", "never\n");       // no stats/ folder: left out
  sys.write(thp + "enabled", "always [madvise] never\n");
  std::vector<std::string> w;
  std::string path, cause, message;
  auto m = read_mthp_stats(sys.path(), &w, &path, &cause, &message);
  EXPECT_TRUE(w.empty());
  EXPECT_TRUE(cause.empty());
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].size_kib, 64u);  // ordered by size
  EXPECT_EQ(m[0].stats.at("anon_fault_alloc"), 5u);
  EXPECT_EQ(m[1].size_kib, 2048u);
  EXPECT_EQ(m[1].stats.size(), 3u);
  EXPECT_EQ(m[1].stats.at("anon_fault_fallback"), 7u);
  EXPECT_EQ(m[1].stats.at("nr_anon"), 3u);
}

// --- free page reporting ----------------------------------------------------

namespace {

// A virtio device as sysfs shows it: its id, its negotiated features, bound to `driver` or not.
void virtio_device(const TempDir& sys, const std::string& name, const std::string& id, const std::string& features,
                   const std::string& driver) {
  const std::string dir = "bus/virtio/devices/" + name + "/";
  sys.write(dir + "device", id + "\n");
  sys.write(dir + "features", features + "\n");
  if (!driver.empty()) {
    sys.write("bus/virtio/drivers/" + driver + "/uevent", "");
    fs::create_directory_symlink(fs::path(sys.path()) / "bus/virtio/drivers" / driver,
                                 fs::path(sys.path()) / dir / "driver");
  }
}

// The reporting device read_page_reporting found under `sys`, as expected.
void expect_reporting(const std::string& sys, const std::string& driver, const std::string& device, int order) {
  const auto r = read_page_reporting(sys);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->driver, driver);
  EXPECT_EQ(r->device, device);
  EXPECT_EQ(r->order, order);
}

// This VM's balloon: stats queue (1), deflate on OOM (2), free page reporting (5).
const std::string kReporting = "0110010100000000000000000000000010000000000000000000000000000000";

}  // namespace

TEST(PageReporting, ABoundBalloonThatNegotiatedReportingIsFoundWithTheKernelsOrder) {
  TempDir sys;
  virtio_device(sys, "virtio1", "0x0002", kReporting, "virtio_blk");  // bit 5 of a disk is another feature
  virtio_device(sys, "virtio0", "0x0005", kReporting, "virtio_balloon");
  sys.write("module/page_reporting/parameters/page_reporting_order", "9\n");
  expect_reporting(sys.path(), "virtio_balloon", "virtio0", 9);

  // A kernel without the order parameter (before 5.14): found, order unknown.
  fs::remove(fs::path(sys.path()) / "module/page_reporting/parameters/page_reporting_order");
  expect_reporting(sys.path(), "virtio_balloon", "virtio0", -1);
}

TEST(PageReporting, NoneWithoutTheFeatureOrTheDriverOrAnyVirtio) {
  EXPECT_FALSE(read_page_reporting("/nonexistent/fragd-sys").has_value());
  TempDir sys;
  std::string without = kReporting;
  without[5] = '0';  // the host did not offer it, or the guest did not take it
  virtio_device(sys, "virtio0", "0x0005", without, "virtio_balloon");
  virtio_device(sys, "virtio3", "0x0005", kReporting, "");  // not bound: nothing registered
  virtio_device(sys, "virtio4", "0x0005", "01100", "virtio_balloon");  // too short to say
  sys.write("module/page_reporting/parameters/page_reporting_order", "9\n");
  EXPECT_FALSE(read_page_reporting(sys.path()).has_value());
}

TEST(PageReporting, HvBalloonCountsOnlyOnceADeviceSetTheOrder) {
  TempDir sys;
  const std::string drv = "bus/vmbus/drivers/hv_balloon/";
  sys.write(drv + "uevent", "");
  sys.write("devices/vmbus/525074dc-8985-46e2-8057-a307dc18a502/uevent", "");
  fs::create_directory_symlink(fs::path(sys.path()) / "devices/vmbus/525074dc-8985-46e2-8057-a307dc18a502",
                               fs::path(sys.path()) / drv / "525074dc-8985-46e2-8057-a307dc18a502");
  // -1 as the kernel prints it: no device registered since boot.
  sys.write("module/page_reporting/parameters/page_reporting_order", "4294967295\n");
  EXPECT_FALSE(read_page_reporting(sys.path()).has_value());
  sys.write("module/page_reporting/parameters/page_reporting_order", "9\n");
  expect_reporting(sys.path(), "hv_balloon", "525074dc-8985-46e2-8057-a307dc18a502", 9);
}

TEST(MthpStats, AbsentOnKernelsWithoutThemAndABadFileIsNamed) {
  EXPECT_TRUE(read_mthp_stats("/nonexistent/fragd-sys").empty());
  TempDir sys;
  const std::string stats = "kernel/mm/transparent_hugepage/hugepages-2048kB/stats/";
  sys.write(stats + "anon_fault_alloc", "12\n");
  sys.write(stats + "split", "x\n");
  std::vector<std::string> w;
  std::string path, cause, message;
  auto m = read_mthp_stats(sys.path(), &w, &path, &cause, &message);
  ASSERT_EQ(m.size(), 1u);  // the good file is kept by the reader ...
  EXPECT_EQ(m[0].stats.count("split"), 0u);
  EXPECT_EQ(cause, "format");
  EXPECT_EQ(path, sys.path() + "/" + stats + "split");
  EXPECT_NE(message.find("stats/split:1: expected one number"), std::string::npos) << message;
  ASSERT_EQ(w.size(), 1u);

  // ... and read_snapshot reports none of them, with the file named, rather than a partial set.
  TempDir proc;
  proc.write("buddyinfo", fixture("one_node", "buddyinfo"));
  proc.write("zoneinfo", fixture("one_node", "zoneinfo"));
  std::vector<SourceRead> report;
  auto snap = read_snapshot(proc.path(), sys.path(), nullptr, {}, report);
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_TRUE(snap->mthp.empty());
  bool named = false;
  for (const SourceRead& r : report)
    if (r.source == "mthp") {
      named = true;
      EXPECT_EQ(r.cause, "format");
      EXPECT_EQ(r.path, sys.path() + "/" + stats + "split");
    }
  EXPECT_TRUE(named);
}

// --- read_snapshot ----------------------------------------------------------

TEST(ReadSnapshot, OneNodeFixtureWithoutSysfs) {
  auto snap = read_snapshot(kFixtures + "/one_node", "/nonexistent/fragd-sys");
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_TRUE(snap->warnings.empty()) << snap->warnings.front();
  ASSERT_EQ(snap->zones.size(), 5u);
  EXPECT_EQ(snap->zones[2].zone, "Normal");
  EXPECT_EQ(snap->zones[2].present_pages, 5505024u);
  EXPECT_EQ(snap->zones[2].free_blocks[10], 5032u);
  EXPECT_EQ(snap->zones[2].pageblocks.at("Movable"), 10653u);
  EXPECT_EQ(snap->pageblock_order, 9u);
  EXPECT_EQ(snap->vmstat.at("nr_free_pages"), 6096132u);
  EXPECT_EQ(snap->mem_available_kib, 24247156u);
  EXPECT_EQ(snap->mem_free_kib, 24384476u);
  EXPECT_TRUE(snap->hugepages.empty());
  EXPECT_EQ(snap->zones[2].free_pages_blocks, 5189632u);
  ASSERT_TRUE(snap->memory_pressure.has_value());
  EXPECT_EQ(snap->memory_pressure->some_us, 36324128u);
  for (const char* c : kReclaimCounters) EXPECT_EQ(snap->vmstat.count(c), 1u) << c;
}

TEST(ReadSnapshot, TwoNodesFixture) {
  auto snap = read_snapshot(kFixtures + "/two_nodes/", "/nonexistent");
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_TRUE(snap->warnings.empty()) << snap->warnings.front();
  ASSERT_EQ(snap->zones.size(), 10u);
  const ZoneFree* n1 = find_zone(snap->zones, 1, "Normal");
  ASSERT_NE(n1, nullptr);
  EXPECT_EQ(n1->pageblocks.at("Unmovable"), 1200u);
  EXPECT_EQ(n1->free_by_type.at("Movable")[10], 2u);
}

TEST(ReadSnapshot, GarbledFixtureCollectsWarnings) {
  auto snap = read_snapshot(kFixtures + "/garbled", "/nonexistent");
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  const auto& w = snap->warnings;
  const std::string dir = kFixtures + "/garbled/";
  EXPECT_EQ(count_with_prefix(w, dir + "buddyinfo:"), 6u);  // 5 lines + Normal has no row
  EXPECT_EQ(count_with_prefix(w, dir + "zoneinfo:"), 5u);
  EXPECT_EQ(count_with_prefix(w, dir + "pagetypeinfo:"), 4u);
  EXPECT_EQ(count_with_prefix(w, dir + "vmstat:"), 4u);
  EXPECT_EQ(count_with_prefix(w, dir + "meminfo"), 3u);
  EXPECT_EQ(count_with_prefix(w, dir + "pressure/memory:2: full"), 1u);
  ASSERT_TRUE(snap->memory_pressure.has_value());
  EXPECT_FALSE(snap->memory_pressure->full_us.has_value());
  EXPECT_TRUE(any_contains(w, "no usable line for Node 0, zone Normal (5505024 present pages)"));
  ASSERT_EQ(snap->zones.size(), 5u);
  EXPECT_EQ(snap->zones[3].zone, "Movable");
  EXPECT_EQ(snap->zones[3].present_pages, 262144u);
  EXPECT_EQ(snap->mem_available_kib, 24247156u);
}

TEST(ReadSnapshot, MissingBuddyinfoIsAnErrorNamingThePath) {
  TempDir proc;
  proc.write("zoneinfo", fixture("one_node", "zoneinfo"));
  auto snap = read_snapshot(proc.path(), "/nonexistent");
  ASSERT_FALSE(snap.ok());
  EXPECT_EQ(snap.error().err, ENOENT);
  EXPECT_NE(snap.error().message.find(proc.path() + "/buddyinfo"), std::string::npos)
      << snap.error().message;
  EXPECT_NE(snap.error().message.find("mount -t proc"), std::string::npos);

  auto gone = read_snapshot("/nonexistent/fragd-proc", "/nonexistent");
  ASSERT_FALSE(gone.ok());
  EXPECT_NE(gone.error().message.find("/nonexistent/fragd-proc/buddyinfo"), std::string::npos);
}

TEST(ReadSnapshot, MissingZoneinfoIsAnError) {
  TempDir proc;
  proc.write("buddyinfo", fixture("one_node", "buddyinfo"));
  auto snap = read_snapshot(proc.path(), "/nonexistent");
  ASSERT_FALSE(snap.ok());
  EXPECT_NE(snap.error().message.find(proc.path() + "/zoneinfo"), std::string::npos);
}

TEST(ReadSnapshot, GarbageBuddyinfoIsAnError) {
  TempDir proc;
  proc.write("buddyinfo", "not a buddyinfo\n");
  proc.write("zoneinfo", fixture("one_node", "zoneinfo"));
  auto snap = read_snapshot(proc.path(), "/nonexistent");
  ASSERT_FALSE(snap.ok());
  EXPECT_TRUE(starts_with(snap.error().message, proc.path() + "/buddyinfo:1: expected"))
      << snap.error().message;
}

TEST(ReadSnapshot, OptionalFilesMissingAreWarnings) {
  TempDir proc;
  proc.write("buddyinfo", fixture("one_node", "buddyinfo"));
  proc.write("zoneinfo", fixture("one_node", "zoneinfo"));
  // pagetypeinfo unreadable (a directory: read fails with EISDIR).
  fs::create_directories(fs::path(proc.path()) / "pagetypeinfo");
  TempDir sys;
  sys.write("kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "2\n");
  sys.write("kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "1\n");
  auto snap = read_snapshot(proc.path(), sys.path());
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_EQ(snap->zones.size(), 5u);
  for (const ZoneFree& z : snap->zones) EXPECT_TRUE(z.pageblocks.empty());
  EXPECT_EQ(snap->warnings.size(), 3u);  // pagetypeinfo, vmstat, meminfo
  EXPECT_TRUE(any_contains(snap->warnings, proc.path() + "/pagetypeinfo"));
  EXPECT_TRUE(any_contains(snap->warnings, proc.path() + "/vmstat"));
  EXPECT_TRUE(any_contains(snap->warnings, proc.path() + "/meminfo"));
  EXPECT_TRUE(snap->vmstat.empty());
  ASSERT_EQ(snap->hugepages.size(), 1u);
  EXPECT_EQ(snap->hugepages[0].total, 2u);
}

// --- robustness -------------------------------------------------------------

// Every prefix and many random mutations of every fixture go through every
// parser without crashing (run under ASan/UBSan to also catch overreads).
TEST(Robustness, TruncatedAndMutatedInputsNeverCrash) {
  std::vector<std::string> inputs;
  for (const char* shape : {"one_node", "two_nodes", "garbled"})
    for (const char* file : {"buddyinfo", "zoneinfo", "pagetypeinfo", "vmstat", "meminfo"})
      inputs.push_back(fixture(shape, file));
  for (const char* shape : {"one_node", "garbled"}) inputs.push_back(fixture(shape, "pressure/memory"));

  auto run_all = [](std::string_view text) {
    std::vector<std::string> w;
    auto zones = parse_buddyinfo(text, "x", &w);
    std::vector<ZoneFree> z = zones.ok() ? *zones : std::vector<ZoneFree>{};
    (void)parse_zoneinfo(text, "x", z, &w);
    unsigned pbo = 0;
    (void)parse_pagetypeinfo(text, "x", z, &w, &pbo);
    (void)parse_vmstat(text, "x", &w);
    MemSnapshot s;
    (void)parse_meminfo(text, "x", s);
    (void)parse_pressure(text, "x", &w);
  };

  std::mt19937 rng(12345);
  const std::string alphabet = "0123456789 ,:\n\t>-xNodezone\r\xff";
  for (const std::string& in : inputs) {
    const size_t step = std::max<size_t>(1, in.size() / 100);
    for (size_t cut = 0; cut <= in.size(); cut += step) run_all(std::string_view(in).substr(0, cut));
    for (int round = 0; round < 30; ++round) {
      std::string m = in;
      const int edits = 1 + static_cast<int>(rng() % 8);
      for (int e = 0; e < edits && !m.empty(); ++e) {
        const size_t pos = rng() % m.size();
        switch (rng() % 3) {
          case 0: m[pos] = alphabet[rng() % alphabet.size()]; break;
          case 1: m.erase(pos, 1 + rng() % 20); break;
          case 2: m.insert(pos, std::string(1 + rng() % 30, alphabet[rng() % alphabet.size()])); break;
        }
      }
      run_all(m);
    }
  }
  run_all(std::string("Node 0, zone DMA 1 2\0 3\n", 24));
  SUCCEED();
}

}  // namespace
}  // namespace fragd

// pagetypeinfo is not re-read when an earlier snapshot is passed: its
// pageblock counts are carried over zone by zone.
TEST(ReadSnapshot, CarriesPageblocksOver) {
  const std::string root = std::string(FRAGD_FIXTURES_DIR) + "/one_node";
  auto first = fragd::read_snapshot(root, "/nonexistent");
  ASSERT_TRUE(first.ok()) << first.error().message;
  fragd::MemSnapshot earlier = *first;
  for (auto& z : earlier.zones)
    if (!z.pageblocks.empty()) z.pageblocks["Movable"] = 4242;
  auto second = fragd::read_snapshot("/nonexistent-proc-root-for-pagetypeinfo-only", "/nonexistent", &earlier);
  EXPECT_FALSE(second.ok());  // buddyinfo is still required
  auto third = fragd::read_snapshot(root, "/nonexistent", &earlier);
  ASSERT_TRUE(third.ok());
  bool saw = false;
  for (const auto& z : third->zones)
    if (z.zone == "Normal") {
      EXPECT_EQ(z.pageblocks.at("Movable"), 4242u);
      saw = true;
    }
  EXPECT_TRUE(saw);
}
