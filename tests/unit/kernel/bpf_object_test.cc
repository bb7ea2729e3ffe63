// SPDX-License-Identifier: Apache-2.0
// The BPF mechanism without a loaded object (no root): an empty program set, the pageblock order.
#include "kernel/bpf_object.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>


namespace {

TEST(ProgramSet, EmptyHasNothingAttached) {
  fragd::ProgramSet set;
  EXPECT_EQ(set.attached_count(), 0u);
  EXPECT_TRUE(set.programs().empty());
  EXPECT_TRUE(set.absent().empty());
  EXPECT_EQ(set.find("page_alloc_extfrag"), nullptr);
  EXPECT_EQ(set.per_page(), nullptr);
  EXPECT_TRUE(set.run_stats().empty());
}

// The pageblock order where /proc/pagetypeinfo cannot be read (fragd not yet root, or a kernel
// that hides it): the PMD size in pages, held to the highest order buddyinfo lists. A 64 KiB
// page kernel (arm64: PMD 512 MiB, MAX_PAGE_ORDER 13) has pageblocks of order 13, not x86's
// cap of 10; a 16 KiB one order 11.
TEST(PageblockOrder, FromThePmdSizeHeldToTheHighestOrderBuddyinfoLists) {
  auto slurp = [](const std::string& p) {
    std::ifstream f(std::string(FRAGD_FIXTURES_DIR) + "/" + p);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  const std::string buddy64 = slurp("arm64_64k/buddyinfo"), buddy16 = slurp("arm64_16k/buddyinfo");
  const std::string pmd64 = "536870912\n", pmd16 = "33554432\n", pmd4 = "2097152\n";
  EXPECT_EQ(fragd::pageblock_order_from(nullptr, &pmd64, &buddy64, 65536), 13u);
  EXPECT_EQ(fragd::pageblock_order_from(nullptr, &pmd16, &buddy16, 16384), 11u);
  EXPECT_EQ(fragd::pageblock_order_from(nullptr, &pmd4, nullptr, 4096), 9u);
  // pagetypeinfo, where readable, says it outright.
  const std::string pti64 = slurp("arm64_64k/pagetypeinfo");
  EXPECT_EQ(fragd::pageblock_order_from(&pti64, nullptr, nullptr, 65536), 13u);
  // A PMD order above what the free lists hold is held to their highest order (buddyinfo with
  // orders 0..10, a PMD of 2^12 pages); without buddyinfo, x86-64's 10.
  const std::string buddy4 = "Node 0, zone   Normal      1      1      1      1      1      1      1      1      1      1      1\n";
  const std::string pmd_big = "16777216\n";
  EXPECT_EQ(fragd::pageblock_order_from(nullptr, &pmd_big, &buddy4, 4096), 10u);
  EXPECT_EQ(fragd::pageblock_order_from(nullptr, &pmd_big, nullptr, 4096), 10u);
  // Nothing usable: no answer (the caller warns and assumes 9).
  const std::string garbage = "x\n", odd = "3000000\n";
  EXPECT_EQ(fragd::pageblock_order_from(nullptr, &garbage, &buddy4, 4096), std::nullopt);
  EXPECT_EQ(fragd::pageblock_order_from(nullptr, &odd, &buddy4, 4096), std::nullopt);
  EXPECT_EQ(fragd::pageblock_order_from(nullptr, nullptr, &buddy4, 4096), std::nullopt);
}

}  // namespace
