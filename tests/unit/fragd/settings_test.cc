// SPDX-License-Identifier: Apache-2.0
// What the configuration asks of the BPF loader, the pageblock scanner and the kallsyms reader.
#include "fragd/settings.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

TEST(Settings, BpfOptionsCarryTheConfig) {
  fragd::Config c;
  c.min_order = 3;
  c.slow_stall_ns = 7'000'000;
  c.stack_interval_ns = 0;
  c.stall_stacks = 4096;
  c.track_pollution = false;
  c.allocations = "exact";
  fragd::BpfOptions o = fragd::bpf_options(c, 42, 6'553'600);
  EXPECT_EQ(o.min_order, 3u);
  EXPECT_EQ(o.slow_stall_ns, 7'000'000u);
  EXPECT_EQ(o.stack_interval_ns, 0u);
  EXPECT_EQ(o.stall_stacks, 4096u);
  EXPECT_EQ(o.self_tgid, 42u);
  EXPECT_FALSE(o.track_pollution);
  EXPECT_TRUE(o.count_allocations);
  EXPECT_EQ(o.max_pfn, 6'553'600u);
  for (const char* mode : {"adaptive", "off"}) {
    c.allocations = mode;
    EXPECT_FALSE(fragd::bpf_options(c, 42, 0).count_allocations) << mode << ": counting is attached later, or never";
  }
}

TEST(Settings, ScanSettingsCarryTheConfig) {
  fragd::Config c;
  c.scan_ns = 30'000'000'000;
  c.scan_max_age_ns = 600'000'000'000;
  c.scan_threads = 2;
  c.scan_mode = "full";
  c.scan_budget_percent = 0.5;
  c.proc_root = "/host/proc";
  c.sys_root = "/host/sys";
  fragd::ScanSettings s = fragd::scan_settings(c, 10);
  EXPECT_EQ(s.interval_ns, 30'000'000'000u);
  EXPECT_EQ(s.max_age_ns, 600'000'000'000u);
  EXPECT_EQ(s.threads, 2u);
  EXPECT_EQ(s.pageblock_order, 10u);
  EXPECT_FALSE(s.sample);
  EXPECT_DOUBLE_EQ(s.budget, 0.005);  // a share of one core, from percent
  EXPECT_EQ(s.proc_root, "/host/proc");
  EXPECT_EQ(s.sys_root, "/host/sys");
  c.scan_mode = "sample";
  EXPECT_TRUE(fragd::scan_settings(c, 9).sample);
}

struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/fragd-settings-XXXXXX";
    path = mkdtemp(t);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

TEST(Settings, AKallsymsCopyIsOpenedThenDeleted) {
  TempDir d;
  fragd::Config c;
  c.kallsyms_path = d.path + "/kallsyms";
  std::ofstream(c.kallsyms_path) << "ffffffff81000000 T _stext\n";
  fragd::KallsymsFile k = fragd::open_kallsyms(c);
  ASSERT_GE(k.fd, 0) << k.warning;
  EXPECT_EQ(k.path, c.kallsyms_path);
  EXPECT_TRUE(k.warning.empty()) << k.warning;
  EXPECT_NE(access(c.kallsyms_path.c_str(), F_OK), 0) << "the copy of kernel addresses was left behind";
  char buf[4];
  EXPECT_EQ(read(k.fd, buf, sizeof(buf)), 4) << "the descriptor still reads the deleted copy";
  close(k.fd);
}

TEST(Settings, TheProcFileIsReadWhereItIsAndKept) {
  TempDir d;
  fragd::Config c;
  c.proc_root = d.path;
  std::ofstream(d.path + "/kallsyms") << "0000000000000000 T _stext\n";
  fragd::KallsymsFile k = fragd::open_kallsyms(c);
  ASSERT_GE(k.fd, 0) << k.warning;
  EXPECT_EQ(k.path, d.path + "/kallsyms");
  EXPECT_EQ(access(k.path.c_str(), F_OK), 0) << "/proc/kallsyms itself is never deleted";
  close(k.fd);
}

TEST(Settings, AMissingCopyNamesItselfAndTheUnit) {
  fragd::Config c;
  c.kallsyms_path = "/nonexistent/fragd/kallsyms";
  fragd::KallsymsFile k = fragd::open_kallsyms(c);
  EXPECT_EQ(k.fd, -1);
  EXPECT_NE(k.warning.find("cannot open /nonexistent/fragd/kallsyms"), std::string::npos) << k.warning;
  EXPECT_NE(k.warning.find("--path.kallsyms"), std::string::npos) << k.warning;
}

}  // namespace
