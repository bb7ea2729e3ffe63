// SPDX-License-Identifier: Apache-2.0
// The engine's observation, from a tick's snapshots.
#include <gtest/gtest.h>

#include "concerns/act/observe.h"

namespace {

using namespace fragd;

ZoneFree zone(int node, const char* name, std::vector<uint64_t> free_blocks, uint64_t present) {
  ZoneFree z;
  z.node = node;
  z.zone = name;
  z.free_blocks = std::move(free_blocks);
  z.present_pages = z.managed_pages = z.spanned_pages = present;
  return z;
}

TEST(Observe, NodesSumTheirZonesAndPoolsAreAlsoSummedOverNodes) {
  MemSnapshot m;
  m.zones = {zone(0, "DMA32", {4, 2}, 1000), zone(0, "Normal", {1, 0, 3}, 3000), zone(1, "Normal", {8}, 4000)};
  m.mem_available_kib = 12345;
  m.hugepages = {{0, 2048, 10, 0, 0}, {1, 2048, 5, 0, 0}, {1, 1048576, 1, 0, 0}};
  const Observation o = observation_of(77, &m, nullptr, nullptr, 4, 4);
  EXPECT_EQ(o.now_ns, 77u);
  ASSERT_EQ(o.nodes.size(), 2u);
  EXPECT_EQ(o.nodes[0].node, 0);
  EXPECT_EQ(o.nodes[0].total_pages, 4000u);
  EXPECT_EQ(o.nodes[0].free_blocks, (std::vector<uint64_t>{5, 2, 3}));
  EXPECT_EQ(o.nodes[0].free_pages, 4u + 2 * 2 + 1 + 3 * 4);
  EXPECT_EQ(o.nodes[1].free_pages, 8u);
  EXPECT_EQ(o.mem_available_kib, 12345u);
  ASSERT_EQ(o.pools.size(), 5u);
  EXPECT_EQ(o.pools[3].node, -1);
  EXPECT_EQ(o.pools[3].size_kib, 2048u);
  EXPECT_EQ(o.pools[3].total, 15u);
  EXPECT_EQ(o.pools[4].size_kib, 1048576u);
  EXPECT_EQ(o.pools[4].total, 1u);
  EXPECT_EQ(o.stalls_total, 0u);
  // Each node's pool pages by order (4 KiB pages: 2 MiB is order 9, 1 GiB order 18).
  EXPECT_EQ(o.nodes[0].pool_pages, (std::vector<uint64_t>{0, 0, 0, 0, 0, 0, 0, 0, 0, 10}));
  ASSERT_EQ(o.nodes[1].pool_pages.size(), 19u);
  EXPECT_EQ(o.nodes[1].pool_pages[9], 5u);
  EXPECT_EQ(o.nodes[1].pool_pages[18], 1u);
}

TEST(Observe, PoolOrdersFollowThePageSize) {
  MemSnapshot m;
  m.zones = {zone(0, "Normal", {1}, 1000)};
  m.hugepages = {{0, 2048, 7, 0, 0}, {0, 1536, 3, 0, 0}};  // 1536 kB: no power of two of 64 kB
  const Observation o = observation_of(1, &m, nullptr, nullptr, 4, 64);  // 64 KiB pages: 2 MiB is order 5
  EXPECT_EQ(o.nodes[0].pool_pages, (std::vector<uint64_t>{0, 0, 0, 0, 0, 7}));
}

TEST(Observe, StallsCountFromTheGivenOrderUpAndCompactionTimeByTrigger) {
  StallsSnapshot st;
  st.alloc.direct_entries[3][0] = 100;  // below the order: not counted
  st.alloc.direct_entries[4][0] = 2;
  st.alloc.direct_entries[9][1] = 5;
  st.stall[3][0].add(1000, 7);
  st.stall[9][0].add(5'000'000, 3);
  CompactionSnapshot b;
  b.compaction_hist[FRAGD_TRIGGER_FRAGD].add(2'000'000);
  b.compaction_hist[FRAGD_TRIGGER_PROACTIVE].add(3'000'000, 2);
  const Observation o = observation_of(1, nullptr, &st, &b, 4, 4);
  EXPECT_TRUE(o.nodes.empty());
  EXPECT_EQ(o.stalls_total, 7u);
  EXPECT_EQ(o.stall_hist.bucket_total(), 3u);
  EXPECT_EQ(o.fragd_compaction_ns, 2'000'000u);
  EXPECT_EQ(o.proactive_compaction_ns, 6'000'000u);
}

}  // namespace
