// SPDX-License-Identifier: Apache-2.0
// Pollution summary: blocks placed on nodes by zone span, polluters and
// blocks ranked with deterministic ties, bounds respected.
#include "concerns/pollution/pollution.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fragd {
namespace {

ZoneSpan span(int node, const std::string& zone, uint64_t start, uint64_t end) {
  ZoneSpan z;
  z.node = node;
  z.zone = zone;
  z.start_pfn = start;
  z.end_pfn = end;
  return z;
}

PollutedBlock blk(uint64_t block, uint64_t pages, const std::string& comm, uint64_t cgroup) {
  return {.block = block, .pages = pages, .events = pages, .comm = comm, .cgroup_id = cgroup};
}

// Two nodes as a 2-node x86 host lays them out (order 9, 512 pages a block):
//   node 0: DMA32 [4096, 1048576) = blocks 8..2047, Normal [1048576, 2097152) = blocks 2048..4095
//   node 1: Normal [2097152, 4194304) = blocks 4096..8191
std::vector<ZoneSpan> two_nodes() {
  return {span(0, "DMA32", 4096, 1048576), span(0, "Normal", 1048576, 2097152),
          span(1, "Normal", 2097152, 4194304)};
}

TEST(NodeOfBlock, ByFirstPageOfTheBlock) {
  const auto spans = two_nodes();
  EXPECT_EQ(node_of_block(8, spans, 9), 0);      // pfn 4096, first page of DMA32
  EXPECT_EQ(node_of_block(2047, spans, 9), 0);   // last block of DMA32
  EXPECT_EQ(node_of_block(2048, spans, 9), 0);   // first of node 0's Normal
  EXPECT_EQ(node_of_block(4095, spans, 9), 0);
  EXPECT_EQ(node_of_block(4096, spans, 9), 1);   // pfn 2097152: node 1 starts
  EXPECT_EQ(node_of_block(8191, spans, 9), 1);
  EXPECT_EQ(node_of_block(8192, spans, 9), -1);  // past the last zone
  EXPECT_EQ(node_of_block(0, spans, 9), -1);     // below DMA32 (no DMA zone given)
  EXPECT_EQ(node_of_block(7, spans, 9), -1);     // pfn 3584, still below 4096
  // The order matters: block 4096 at order 10 is pfn 4194304, past node 1.
  EXPECT_EQ(node_of_block(4096, spans, 10), -1);
  EXPECT_EQ(node_of_block(2048, spans, 10), 1);  // pfn 2097152
  // A block number that overflows when shifted lies in no zone.
  EXPECT_EQ(node_of_block(UINT64_MAX, spans, 9), -1);
}

TEST(SummarizePollution, CountsPerNodeIncludingEmptyNodes) {
  const auto spans = two_nodes();
  const std::vector<PollutedBlock> blocks = {
      blk(10, 3, "bash", 1), blk(3000, 5, "bash", 1), blk(9000, 7, "ghost", 2),  // 9000: no zone
  };
  const auto s = summarize_pollution(blocks, spans, 9);
  ASSERT_EQ(s.nodes.size(), 2u);
  EXPECT_EQ(s.nodes[0].node, 0);
  EXPECT_EQ(s.nodes[0].blocks, 2u);
  EXPECT_EQ(s.nodes[0].pages, 8u);
  EXPECT_EQ(s.nodes[1].node, 1);  // listed with zeros: a gauge per node
  EXPECT_EQ(s.nodes[1].blocks, 0u);
  EXPECT_EQ(s.nodes[1].pages, 0u);
  EXPECT_EQ(s.unplaced_blocks, 1u);
  EXPECT_EQ(s.blocks, 3u);
  EXPECT_EQ(s.pages, 15u);
}

TEST(SummarizePollution, TopPollutersByBlocksThenPagesThenName) {
  const auto spans = two_nodes();
  const std::vector<PollutedBlock> blocks = {
      // kworker in cgroup 1: 3 blocks, 3 pages
      blk(100, 1, "kworker/0:1", 1), blk(101, 1, "kworker/0:1", 1), blk(102, 1, "kworker/0:1", 1),
      // java in cgroup 7: 2 blocks, 40 pages; java in cgroup 8 is another polluter
      blk(200, 30, "java", 7), blk(201, 10, "java", 7), blk(4100, 2, "java", 8),
      // two single-block polluters with equal pages: comm breaks the tie
      blk(300, 4, "zsh", 1), blk(301, 4, "bash", 1),
  };
  const auto s = summarize_pollution(blocks, spans, 9, 10, 256);
  ASSERT_EQ(s.top.size(), 5u);
  EXPECT_EQ(s.top[0].comm, "kworker/0:1");
  EXPECT_EQ(s.top[0].blocks, 3u);
  EXPECT_EQ(s.top[0].pages, 3u);
  EXPECT_EQ(s.top[1].comm, "java");
  EXPECT_EQ(s.top[1].cgroup_id, 7u);
  EXPECT_EQ(s.top[1].blocks, 2u);
  EXPECT_EQ(s.top[1].pages, 40u);
  // One block each: most pages first (bash and zsh 4), then comm (bash < zsh), then java/8 (2 pages).
  EXPECT_EQ(s.top[2].comm, "bash");
  EXPECT_EQ(s.top[3].comm, "zsh");
  EXPECT_EQ(s.top[4].comm, "java");
  EXPECT_EQ(s.top[4].cgroup_id, 8u);
  EXPECT_EQ(s.top[4].pages, 2u);

  // Bounded: the first two only.
  const auto s2 = summarize_pollution(blocks, spans, 9, 2, 256);
  ASSERT_EQ(s2.top.size(), 2u);
  EXPECT_EQ(s2.top[0].comm, "kworker/0:1");
  EXPECT_EQ(s2.top[1].comm, "java");
}

TEST(SummarizePollution, SameCommInTwoCgroupsIsTwoPolluters) {
  const auto s = summarize_pollution({blk(10, 1, "nginx", 5), blk(11, 1, "nginx", 6), blk(12, 1, "nginx", 5)},
                                     two_nodes(), 9);
  ASSERT_EQ(s.top.size(), 2u);
  EXPECT_EQ(s.top[0].cgroup_id, 5u);
  EXPECT_EQ(s.top[0].blocks, 2u);
  EXPECT_EQ(s.top[1].cgroup_id, 6u);
  EXPECT_EQ(s.top[1].blocks, 1u);
}

TEST(SummarizePollution, WorstBlocksMostPagesFirstWithNodeAndBound) {
  const auto spans = two_nodes();
  const std::vector<PollutedBlock> blocks = {
      blk(4200, 9, "a", 1), blk(50, 9, "b", 1), blk(60, 100, "c", 1), blk(70, 1, "d", 1), blk(9999, 50, "e", 1),
  };
  const auto s = summarize_pollution(blocks, spans, 9, 10, 3);
  ASSERT_EQ(s.worst.size(), 3u);
  EXPECT_EQ(s.worst[0].block, 60u);
  EXPECT_EQ(s.worst[0].node, 0);
  EXPECT_EQ(s.worst[1].block, 9999u);  // outside every span: kept, node -1
  EXPECT_EQ(s.worst[1].node, -1);
  EXPECT_EQ(s.worst[2].block, 50u);    // 9 pages like 4200: the lower block first
  EXPECT_EQ(s.worst[2].comm, "b");
  // Totals cover every block, not only the ones listed.
  EXPECT_EQ(s.blocks, 5u);
  EXPECT_EQ(s.pages, 169u);

  const auto all = summarize_pollution(blocks, spans, 9, 10, 256);
  ASSERT_EQ(all.worst.size(), 5u);
  EXPECT_EQ(all.worst[3].block, 4200u);
  EXPECT_EQ(all.worst[3].node, 1);
  EXPECT_EQ(all.worst[4].block, 70u);
}

TEST(SummarizePollution, NothingPolluted) {
  const auto s = summarize_pollution({}, two_nodes(), 9);
  ASSERT_EQ(s.nodes.size(), 2u);
  EXPECT_EQ(s.nodes[0].blocks + s.nodes[1].blocks, 0u);
  EXPECT_TRUE(s.top.empty());
  EXPECT_TRUE(s.worst.empty());
  EXPECT_EQ(s.unplaced_blocks, 0u);

  // No spans at all (zoneinfo unreadable): every block is unplaced, nothing is lost.
  const auto u = summarize_pollution({blk(1, 2, "x", 1)}, {}, 9);
  EXPECT_TRUE(u.nodes.empty());
  EXPECT_EQ(u.unplaced_blocks, 1u);
  ASSERT_EQ(u.worst.size(), 1u);
  EXPECT_EQ(u.worst[0].node, -1);
  ASSERT_EQ(u.top.size(), 1u);
  EXPECT_EQ(u.top[0].pages, 2u);
}

// The ledger is reconciled with a scan: a block with no unmovable page left is
// released, unless a fallback into it came after the scan began.
TEST(BlocksFoundClean, ReleasesBlocksTheScanSawWithoutUnmovablePages) {
  ScanResult scan;
  scan.boot_time_ns = 1000;
  ZoneScan z;
  z.first_block = 10;
  auto info = [](BlockClass c, uint16_t unmovable) {
    BlockInfo b;
    b.cls = c;
    b.unmovable = unmovable;
    return b;
  };
  // blocks 10..15
  z.blocks = {info(BlockClass::Movable, 0), info(BlockClass::Hybrid, 3),  info(BlockClass::Free, 0),
              info(BlockClass::Unmovable, 512), info(BlockClass::Offline, 0), info(BlockClass::Huge, 0)};
  scan.zones.push_back(z);
  auto at = [](uint64_t block, uint64_t last) {
    PollutedBlock b;
    b.block = block;
    b.last_boot_ns = last;
    return b;
  };
  const std::vector<PollutedBlock> ledger = {
      at(10, 500),   // movable now: clean
      at(11, 500),   // still hybrid
      at(12, 500),   // free: clean
      at(13, 500),   // unmovable
      at(14, 500),   // offline: nothing known
      at(15, 500),   // a huge page now: clean
      at(10, 500),   // listed twice: once out
      at(16, 500),   // outside every scanned zone
      at(2, 500),    // below the zone
  };
  EXPECT_EQ(blocks_found_clean(ledger, scan), (std::vector<uint64_t>{10, 12, 15}));
  // A fallback at or after the scan's start: the scan may not have seen it.
  EXPECT_TRUE(blocks_found_clean({at(10, 1000), at(12, 2000)}, scan).empty());
}

// Releasing: each clean block's record is read once more before its delete; one polluted
// again since the scan began, or gone, stays; a failed delete stops the release and says why.
TEST(ReleaseCleanBlocks, LooksEachRecordUpAgainAndStopsAtAFailedDelete) {
  ScanResult scan;
  scan.boot_time_ns = 1000;
  ZoneScan z;
  z.first_block = 10;
  z.blocks.resize(5);  // blocks 10..14, all movable with no unmovable page: clean
  for (auto& b : z.blocks) b.cls = BlockClass::Movable;
  scan.zones.push_back(z);
  auto at = [](uint64_t block, uint64_t pages) {
    PollutedBlock b;
    b.block = block;
    b.pages = pages;
    b.last_boot_ns = 500;
    return b;
  };
  const std::vector<PollutedBlock> ledger = {at(10, 3), at(11, 5), at(12, 7), at(13, 11), at(14, 13)};
  std::map<uint64_t, uint64_t> now_last = {{10, 500}, {11, 1500}, {13, 900}, {14, 900}};  // 11 again since; 12 gone
  std::vector<uint64_t> deleted;
  uint64_t refuse = 14;
  LedgerOps ops{[&](uint64_t b) -> Result<uint64_t> {
                  auto it = now_last.find(b);
                  if (it == now_last.end()) return make_error("no record", ENOENT);
                  return it->second;
                },
                [&](uint64_t b) -> Result<void> {
                  if (b == refuse) return make_error("delete of block 14 refused", EPERM);
                  deleted.push_back(b);
                  return {};
                }};
  Released r = release_clean_blocks(ledger, scan, ops);
  EXPECT_EQ(deleted, (std::vector<uint64_t>{10, 13}));
  EXPECT_EQ(r.blocks, 2u);
  EXPECT_EQ(r.pages, 3u + 11u);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->message, "delete of block 14 refused");
  deleted.clear();
  refuse = 0;
  r = release_clean_blocks(ledger, scan, ops);
  EXPECT_EQ(deleted, (std::vector<uint64_t>{10, 13, 14}));
  EXPECT_FALSE(r.error);
}

}  // namespace
}  // namespace fragd
