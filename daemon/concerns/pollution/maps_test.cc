// SPDX-License-Identifier: Apache-2.0
// The pollution ledger's size from the physical address range (no root).
#include "concerns/pollution/maps.h"

#include <gtest/gtest.h>

namespace {

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
