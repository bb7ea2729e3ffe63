// SPDX-License-Identifier: Apache-2.0
// THP coverage of a cgroup: v2 memory.stat, the v1 memory controller of a hybrid host, neither.
#include "concerns/thp/cgroup_anon.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace {

namespace fs = std::filesystem;

struct Tree {
  fs::path root = fs::temp_directory_path() / ("fragd-cgroup-anon-" + std::to_string(::getpid()));
  Tree() { fs::create_directories(root); }
  ~Tree() { fs::remove_all(root); }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text;
  }
};

TEST(CgroupAnon, V2MemoryStat) {
  Tree t;
  t.write("v2/a/b/memory.stat", "anon 1048576000\nfile 4096\nkernel 8192\nanon_thp 268435456\nshmem 0\n");
  auto a = fragd::read_cgroup_anon((t.root / "v2").string(), (t.root / "v1").string(), "/a/b");
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->anon_bytes, 1048576000u);
  EXPECT_EQ(a->huge_bytes, 268435456u);
  EXPECT_FALSE(a->v1);
}

TEST(CgroupAnon, HybridHostReadsTheV1MemoryController) {
  Tree t;
  // The v2 directory exists but has no memory controller (no memory.stat).
  t.write("v2/a/cgroup.procs", "");
  t.write("v1/a/memory.stat", "cache 0\nrss 4096\nrss_huge 0\ntotal_cache 0\ntotal_rss 536870912\n"
                               "total_rss_huge 268435456\n");
  auto a = fragd::read_cgroup_anon((t.root / "v2").string(), (t.root / "v1").string(), "/a");
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->anon_bytes, 536870912u);  // total_*: the cgroup and its children, as v2 counts
  EXPECT_EQ(a->huge_bytes, 268435456u);
  EXPECT_TRUE(a->v1);
}

TEST(CgroupAnon, NeitherNamesBothFiles) {
  Tree t;
  t.write("v2/a/memory.stat", "anon 4096\n");  // a kernel without anon_thp: not guessed as 0
  auto a = fragd::read_cgroup_anon((t.root / "v2").string(), (t.root / "v1").string(), "/a");
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message.find("v2/a/memory.stat"), std::string::npos);
  EXPECT_NE(a.error().message.find("v1/a/memory.stat"), std::string::npos);
}

TEST(CgroupAnon, Families) {
  fragd::Families out;
  fragd::cgroup_anon_metrics({{"/a", {100, 50, false}}}, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].name, "fragd_thp_cgroup_anon_bytes");
  EXPECT_EQ(out[0].metric[0].gauge.value, 100);
  EXPECT_EQ(out[1].metric[0].gauge.value, 50);
}

}  // namespace
