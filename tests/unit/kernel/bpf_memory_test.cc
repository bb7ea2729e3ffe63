// SPDX-License-Identifier: Apache-2.0
// What the BPF maps take: the fdinfo memlock parser, the fold of global-data maps, and the
// pollution ledger's sizing from the physical address range.
#include "kernel/bpf_memory.h"

#include <gtest/gtest.h>

#include "pollution.h"

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

TEST(PollutionLedger, OneRecordPerPageblockOfTheAddressRange) {
  constexpr uint64_t kCap = FRAGD_POLLUTION_BLOCK_ENTRIES;
  // This machine: zones end at pfn 6553600 (25 GiB of 4 KiB pages: 24 GiB of RAM and the PCI hole).
  auto s = fragd::pollution_ledger_size(6553600, 9, kCap);
  EXPECT_EQ(s.blocks, 12800u);
  EXPECT_EQ(s.entries, 12800u);
  EXPECT_FALSE(s.capped);
  // A partial last block still needs its record.
  EXPECT_EQ(fragd::pollution_ledger_size(6553601, 9, kCap).entries, 12801u);
  EXPECT_EQ(fragd::pollution_ledger_size(1, 9, kCap).entries, 1u);
  // 4 MiB pageblocks (order 10): half as many records.
  EXPECT_EQ(fragd::pollution_ledger_size(6553600, 10, kCap).entries, 6400u);
  // 512 GiB of 2 MiB blocks is the cap, exactly; one more block is capped.
  const uint64_t pfn512g = 512ull << 18;
  EXPECT_EQ(fragd::pollution_ledger_size(pfn512g, 9, kCap).entries, kCap);
  EXPECT_FALSE(fragd::pollution_ledger_size(pfn512g, 9, kCap).capped);
  auto big = fragd::pollution_ledger_size(4096ull << 18, 9, kCap);  // 4 TiB
  EXPECT_EQ(big.blocks, 2097152u);
  EXPECT_EQ(big.entries, kCap);
  EXPECT_TRUE(big.capped);
  // Unknown range: the cap.
  auto unknown = fragd::pollution_ledger_size(0, 9, kCap);
  EXPECT_EQ(unknown.entries, kCap);
  EXPECT_EQ(unknown.blocks, 0u);
}

}  // namespace
