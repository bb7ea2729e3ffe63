// SPDX-License-Identifier: Apache-2.0
// What the BPF maps take: the fdinfo memlock parser and the fold of global-data maps.
#include "kernel/bpf_memory.h"

#include <gtest/gtest.h>


namespace {

// /proc/<fragd>/fdinfo/<fd> of its stall_hist map on this project's machine (Linux 6.18).
const char* kFdinfo =
    "pos:\t0\nflags:\t02000002\nmnt_id:\t17\nino:\t1039\nmap_type:\t6\nkey_size:\t4\nvalue_size:\t1568\n"
    "max_entries:\t22\nmap_flags:\t0x0\nmap_extra:\t0x0\nmemlock:\t69480\nmap_id:\t4200\nfrozen:\t0\n";

TEST(FdinfoMemlock, TheKernelsFigure) {
  auto v = fragd::parse_fdinfo_memlock(kFdinfo, "fdinfo/17");
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(*v, 69480u);
  // The last line without a newline, spaces instead of a tab.
  auto w = fragd::parse_fdinfo_memlock("map_type: 1\nmemlock:   1799296", "x");
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ(*w, 1799296u);
}

TEST(FdinfoMemlock, MissingOrMalformedIsAnErrorNotZero) {
  auto none = fragd::parse_fdinfo_memlock("pos:\t0\nflags:\t02000002\n", "fdinfo/3");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("fdinfo/3"), std::string::npos);
  EXPECT_FALSE(fragd::parse_fdinfo_memlock("memlock:\t\n", "x"));
  EXPECT_FALSE(fragd::parse_fdinfo_memlock("memlock:\t12kB\n", "x"));
  EXPECT_FALSE(fragd::parse_fdinfo_memlock("memlock:\t-5\n", "x"));
  EXPECT_FALSE(fragd::parse_fdinfo_memlock("memlock:\t99999999999999999999999\n", "x"));
  // A key that only starts like it is not it.
  EXPECT_FALSE(fragd::parse_fdinfo_memlock("xmemlock:\t5\n", "x"));
}

TEST(MapMemory, GlobalDataMapsFoldIntoOneEntryPerObject) {
  std::vector<fragd::MapMemory> out;
  fragd::add_map_memory(out, "stalls", "stall_sites", false, 427072);
  fragd::add_map_memory(out, "stalls", "stalls_b.rodata", true, 8192);
  fragd::add_map_memory(out, "stalls", "stalls_b.bss", true, 8192);
  fragd::add_map_memory(out, "pollution", "pollutio.rodata", true, 8192);
  fragd::add_map_memory(out, "pollution", "polluted_blocks", false, 1799296);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].map, "stall_sites");
  EXPECT_EQ(out[0].bytes, 427072u);
  EXPECT_EQ(out[1].object, "stalls");
  EXPECT_EQ(out[1].map, fragd::kGlobalsMap);
  EXPECT_EQ(out[1].bytes, 16384u);
  EXPECT_EQ(out[1].maps, 2u);
  EXPECT_EQ(out[2].object, "pollution");
  EXPECT_EQ(out[2].map, fragd::kGlobalsMap);
  EXPECT_EQ(out[2].bytes, 8192u);
  EXPECT_EQ(out[3].maps, 1u);
}

}  // namespace
