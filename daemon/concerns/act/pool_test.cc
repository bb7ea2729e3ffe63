// SPDX-License-Identifier: Apache-2.0
// The hugetlb pool strategy (concerns/act/pool.h) against the simulated kernel of
// fake_actuator.h: grow with compaction when blocks are short, stop after two
// writes in a row without progress, the guard (the host's MemAvailable, a node's spare
// memory), shrink, errors.
#include "concerns/act/pool.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "fake_actuator.h"

namespace fragd {
namespace {

using test::FakeActuator;

constexpr uint64_t k2M = 2048;
constexpr uint64_t k1G = 1024 * 1024;
constexpr uint64_t kFree = 1024000;  // pages: 2000 order-9 blocks when unfragmented

PoolRequest grow_request(int node, uint64_t target) {
  PoolRequest r;
  r.node = node;
  r.size_kib = k2M;
  r.target = target;
  r.compact_nodes = {node < 0 ? 0 : node};
  r.guard_kib = k1G;
  return r;
}

// Every pool write asked for at most `target` pages.
void expect_never_beyond(const FakeActuator& f, uint64_t target) {
  for (const auto& c : f.calls) {
    if (c.rfind("write_pool", 0) != 0) continue;
    const uint64_t count = std::stoull(c.substr(c.rfind(' ') + 1));
    EXPECT_LE(count, target) << c;
  }
}

TEST(PoolOrder, PageOrderOfSizesForEachBasePage) {
  // 4 KiB pages (x86-64), 16 KiB and 64 KiB (arm64, ppc64le builds).
  EXPECT_EQ(order_of(2048, 4), 9u);
  EXPECT_EQ(order_of(1024 * 1024, 4), 18u);
  EXPECT_EQ(order_of(4, 4), 0u);
  EXPECT_EQ(order_of(64, 4), 4u);
  EXPECT_EQ(order_of(0, 4), 0u);
  EXPECT_EQ(order_of(2048, 16), 7u);
  EXPECT_EQ(order_of(32 * 1024, 16), 11u);
  EXPECT_EQ(order_of(2048, 64), 5u);
  EXPECT_EQ(order_of(512 * 1024, 64), 13u);
  EXPECT_EQ(order_of(16 * 1024 * 1024, 64), 18u);
  EXPECT_EQ(gigantic_order(4), 18u);
  EXPECT_EQ(gigantic_order(16), 16u);
  EXPECT_EQ(gigantic_order(64), 14u);
}

TEST(PoolGrow, AfterAMissItCompactsForThePagesOrderInTheKernelsPages) {
  // A 512 MiB pool page on a 64 KiB-page kernel is of order 13, not log2(512 MiB / 4 KiB) = 17.
  FakeActuator f;
  f.set_node(0, kFree, 99, 99);  // no block: the first write adds nothing, a compaction follows
  PoolRequest r = grow_request(0, 2);
  r.size_kib = 512 * 1024;
  r.page_kib = 64;
  resize_pool(f, r);
  EXPECT_GE(f.count_calls("free_blocks 0 13"), 1u);
  EXPECT_EQ(f.count_calls("free_blocks 0 17"), 0u);
}

TEST(PoolGrow, AlreadyAtTargetWritesNothing) {
  FakeActuator f;
  f.set_node(0, kFree, 50, 5);
  f.nodes[0].pool[k2M] = 40;
  const PoolOutcome o = resize_pool(f, grow_request(0, 40));
  EXPECT_EQ(o.result, "ok");
  EXPECT_EQ(o.before, 40u);
  EXPECT_EQ(o.after, 40u);
  EXPECT_EQ(o.attempts, 0u);
  EXPECT_EQ(f.count_calls("write_pool"), 0u);
  EXPECT_EQ(f.count_calls("compact"), 0u);
}

TEST(PoolGrow, EnoughFreeBlocksNeedsNoCompaction) {
  FakeActuator f;
  f.set_node(0, kFree, 50, 5);  // 1000 free blocks
  const PoolOutcome o = resize_pool(f, grow_request(0, 300));
  EXPECT_EQ(o.result, "ok") << o.detail;
  EXPECT_EQ(o.after, 300u);
  EXPECT_EQ(o.attempts, 1u);
  EXPECT_EQ(o.compactions, 0u);
  EXPECT_EQ(f.pool_total(0, k2M), 300u);
  EXPECT_EQ(f.count_calls("compact"), 0u);
}

TEST(PoolGrow, WritesFirstAndCompactsOnlyAfterAWriteAddsNothing) {
  FakeActuator f;
  f.set_node(0, kFree, 95, 5);  // 100 free blocks, 1900 after compaction
  const PoolOutcome o = resize_pool(f, grow_request(0, 1000));
  EXPECT_EQ(o.result, "ok") << o.detail;
  EXPECT_EQ(o.before, 0u);
  EXPECT_EQ(o.after, 1000u);
  EXPECT_EQ(o.compactions, 1u);
  // 0 -> 100 (the free blocks), 100 -> 100 (a miss), the node compacted, 100 -> 1000.
  EXPECT_EQ(o.attempts, 3u);
  ASSERT_EQ(o.steps.size(), 4u);
  EXPECT_EQ(o.steps[0].step, "grow");
  EXPECT_EQ(o.steps[0].pool_after, 100u);
  EXPECT_EQ(o.steps[1].step, "grow");
  EXPECT_EQ(o.steps[1].pool_after, 100u);
  EXPECT_EQ(o.steps[2].step, "compact");
  EXPECT_EQ(o.steps[2].node, 0);
  EXPECT_EQ(o.steps[3].step, "grow");
  EXPECT_EQ(o.steps[3].pool_after, 1000u);
  EXPECT_EQ(f.count_calls("grow_pool"), 3u);
  expect_never_beyond(f, 1000);
}

TEST(PoolGrow, DirectCompactionInTheWriteNeedsNoNodeCompaction) {
  FakeActuator f;
  f.set_node(0, kFree, 95, 5);  // 100 free blocks
  f.direct_yield = 100000;      // the kernel compacts for each page the write asks for
  const PoolOutcome o = resize_pool(f, grow_request(0, 1000));
  EXPECT_EQ(o.result, "ok") << o.detail;
  EXPECT_EQ(o.attempts, 1u);
  EXPECT_EQ(o.compactions, 0u);
  EXPECT_EQ(f.count_calls("compact"), 0u);
}

TEST(PoolGrow, TwoWritesWithoutProgressIsShort) {
  FakeActuator f;
  f.set_node(0, kFree, 99, 99);  // 20 free blocks; compaction cannot add any
  const PoolOutcome o = resize_pool(f, grow_request(0, 500));
  EXPECT_EQ(o.result, "short");
  EXPECT_EQ(o.after, 20u);
  // 1: 0 -> 20 (progress), 2: no progress (miss 1), 3: no progress (miss 2).
  EXPECT_EQ(o.attempts, 3u);
  EXPECT_FALSE(o.dropped_caches);
  EXPECT_EQ(f.count_calls("drop_caches"), 0u);
  EXPECT_NE(o.detail.find("reached 20 of target 500"), std::string::npos) << o.detail;
  expect_never_beyond(f, 500);
}

TEST(PoolGrow, PartialProgressKeepsGoing) {
  FakeActuator f;
  f.set_node(0, kFree, 100, 100);   // no free block, none to compact
  f.direct_yield = 30;              // the kernel's own direct compaction finds 30 per write
  f.nodes[0].max_blocks9 = 1000;    // room for it to find them
  f.nodes[0].step_blocks = 0;       // and fragd's compaction adds nothing
  const PoolOutcome o = resize_pool(f, grow_request(0, 100));
  EXPECT_EQ(o.result, "ok") << o.detail;
  EXPECT_EQ(o.after, 100u);
  EXPECT_EQ(o.attempts, 4u);  // 30, 60, 90, 100
  expect_never_beyond(f, 100);
}

TEST(PoolGrow, DropsCachesAfterTheFirstMissWhenEnabled) {
  FakeActuator f;
  f.set_node(0, kFree, 99, 99);       // 20 free blocks, compaction adds nothing
  f.nodes[0].cache_blocks = 600;      // page cache that becomes compactable when dropped
  PoolRequest r = grow_request(0, 500);
  r.drop_caches = true;
  const PoolOutcome o = resize_pool(f, r);
  EXPECT_EQ(o.result, "ok") << o.detail;
  EXPECT_TRUE(o.dropped_caches);
  EXPECT_EQ(o.after, 500u);
  EXPECT_EQ(f.count_calls("drop_caches"), 1u);
  // Dropped only when compaction did not help either: writes 1 (0->20) and 2 (a miss),
  // the node compacted, write 3 (a miss again) came first.
  unsigned writes_before_drop = 0;
  for (const auto& c : f.calls) {
    if (c == "drop_caches") break;
    if (c.rfind("grow_pool", 0) == 0) ++writes_before_drop;
  }
  EXPECT_EQ(writes_before_drop, 3u);
  EXPECT_EQ(o.compactions, 2u);  // before the drop, and after it on the freed cache

  FakeActuator g;  // the same without the option: short, cache untouched
  g.set_node(0, kFree, 99, 99);
  g.nodes[0].cache_blocks = 600;
  EXPECT_EQ(resize_pool(g, grow_request(0, 500)).result, "short");
  EXPECT_EQ(g.count_calls("drop_caches"), 0u);
}

TEST(PoolGrow, StopsAtTheMemAvailableGuard) {
  FakeActuator f;
  f.set_node(0, kFree, 50, 5);
  f.mem_available = k1G + 30 * k2M + 1000;  // room for 30 pages above the guard
  const PoolOutcome o = resize_pool(f, grow_request(0, 100));
  EXPECT_EQ(o.result, "guard");
  EXPECT_EQ(o.after, 30u);
  EXPECT_EQ(f.pool_total(0, k2M), 30u);
  EXPECT_GE(f.mem_available, k1G);
  EXPECT_NE(o.detail.find("guard of 1048576 kB"), std::string::npos) << o.detail;

  FakeActuator g;  // already below the guard: nothing written at all
  g.set_node(0, kFree, 50, 5);
  g.mem_available = k1G - 1;
  const PoolOutcome p = resize_pool(g, grow_request(0, 100));
  EXPECT_EQ(p.result, "guard");
  EXPECT_EQ(g.count_calls("write_pool"), 0u);
  EXPECT_EQ(g.count_calls("compact"), 0u);
}

TEST(PoolGrow, ANodesPoolStopsAtThatNodesGuardWhileTheHostHasRoom) {
  FakeActuator f;
  f.set_node(0, kFree, 50, 5);
  f.set_node(1, kFree, 50, 5);
  f.mem_available = 8 * k1G;                // the host: room for 3584 pages above the guard
  f.node_spare[1] = k1G + 40 * k2M + 1000;  // node 1: room for 40
  const PoolOutcome o = resize_pool(f, grow_request(1, 200));
  EXPECT_EQ(o.result, "guard");
  EXPECT_EQ(o.after, 40u);
  EXPECT_EQ(f.pool_total(1, k2M), 40u);
  EXPECT_GE(f.node_spare[1], k1G);
  EXPECT_NE(o.detail.find("node 1 can spare"), std::string::npos) << o.detail;
  EXPECT_NE(o.detail.find("the node's MemAvailable"), std::string::npos) << o.detail;
  // Near the guard the pool grows in steps, the room read again before each: three quarters of
  // the room (30 of 40), of what is left (8 of 10), then the last 2 (under 4 pages: all of it).
  EXPECT_EQ(f.count_calls("grow_pool 1 2048 30"), 1u);
  EXPECT_EQ(f.count_calls("grow_pool 1 2048 38"), 1u);
  EXPECT_EQ(f.count_calls("grow_pool 1 2048 40"), 1u);
  EXPECT_EQ(f.count_calls("grow_pool"), 3u);
  EXPECT_EQ(f.count_calls("spare_memory 1"), 4u);

  FakeActuator g;  // the global pool: the host's MemAvailable alone
  g.set_node(0, kFree, 50, 5);
  g.node_spare[0] = 0;
  EXPECT_EQ(resize_pool(g, grow_request(-1, 100)).result, "ok");
  EXPECT_EQ(g.count_calls("spare_memory"), 0u);
}

TEST(PoolGrow, AtMostSixteenWrites) {
  FakeActuator f;
  f.set_node(0, kFree, 100, 100);
  f.nodes[0].max_blocks9 = 1000;
  f.direct_yield = 1;  // one page per write: progress every time, slowly
  PoolRequest r = grow_request(0, 100);
  r.compact_nodes.clear();
  const PoolOutcome o = resize_pool(f, r);
  EXPECT_EQ(o.result, "short");
  EXPECT_EQ(o.attempts, 16u);
  EXPECT_EQ(o.after, 16u);
  EXPECT_EQ(f.count_calls("write_pool"), 16u);
  EXPECT_EQ(f.count_calls("compact"), 0u);  // no compact_nodes: never compacts
}

// A global pool of 1000 pages grown over two nodes of 40 free 2 MiB blocks each, both of which
// may compact, down to the scores `best0` and `best1` (set_node: 10 is up to 1800 blocks, 80 up
// to 400). The 80 free blocks go first, then a miss: 920 blocks lacking, for compaction to make.
struct GlobalGrow {
  FakeActuator f;
  PoolOutcome o;
  GlobalGrow(unsigned best0, unsigned best1) {
    f.set_node(0, kFree, 98, best0);
    f.set_node(1, kFree, 98, best1);
    PoolRequest r = grow_request(-1, 1000);
    r.compact_nodes = {0, 1};
    o = resize_pool(f, r);
  }
  // The pool reached its 1000 pages after `compactions` compactions.
  void expect_filled(unsigned compactions) const {
    EXPECT_EQ(o.result, "ok") << o.detail;
    EXPECT_EQ(o.compactions, compactions);
    EXPECT_EQ(f.pool_total(-1, k2M), 1000u);
  }
};

TEST(PoolGrow, GlobalPoolCompactsOnlyWhatItLacks) {
  GlobalGrow g(10, 10);  // each node up to 1800 blocks by compaction
  // All 920 lacking come from node 0; node 1 is not compacted, and node 0 stops at 920 blocks,
  // not 1800.
  g.expect_filled(1);
  EXPECT_EQ(g.f.count_calls("compact 0 until 920"), 1u);
  EXPECT_EQ(g.f.count_calls("compact 1"), 0u);
  EXPECT_EQ(g.f.nodes[0].blocks9 + g.f.nodes[1].blocks9, 0u);  // the pool took every block made
}

TEST(PoolGrow, ANodeThatCannotMakeTheLackLeavesTheRestToTheNext) {
  GlobalGrow g(80, 10);  // node 0 up to 400 blocks by compaction, node 1 up to 1800
  // Node 0 makes 360 of the 920 lacking (its 400 less the 40 the pool holds), node 1 the other 560.
  g.expect_filled(2);
  EXPECT_EQ(g.f.count_calls("compact 0 until 920"), 1u);
  EXPECT_EQ(g.f.count_calls("compact 1 until 560"), 1u);
}

TEST(PoolShrink, WritesTheTarget) {
  FakeActuator f;
  f.set_node(0, kFree, 50, 5);
  f.nodes[0].pool[k2M] = 100;
  const PoolOutcome o = resize_pool(f, grow_request(0, 40));
  EXPECT_EQ(o.result, "ok") << o.detail;
  EXPECT_EQ(o.before, 100u);
  EXPECT_EQ(o.after, 40u);
  EXPECT_EQ(o.attempts, 1u);
  EXPECT_EQ(f.count_calls("compact"), 0u);
  EXPECT_EQ(f.count_calls("mem_available"), 0u);  // a shrink needs no guard
  EXPECT_EQ(f.count_calls("refresh_vm_stats"), 0u) << "every freed block is on the free lists: no drain";
  ASSERT_EQ(o.steps.size(), 1u);
  EXPECT_EQ(o.steps[0].step, "shrink");
  EXPECT_EQ(o.detail.find("page list"), std::string::npos) << o.detail;
}

TEST(PoolShrink, TheBlocksACPUsPageListKeptArePutBackOnTheFreeLists) {
  FakeActuator f;
  f.set_node(0, kFree, 50, 5);
  const uint64_t free0 = f.nodes[0].blocks9;
  f.nodes[0].pool[k2M] = 100;
  f.percpu_keep = 45;  // of the 60 pages freed, 45 stay on a CPU's list; a write brings back 30
  const PoolOutcome o = resize_pool(f, grow_request(0, 40));
  EXPECT_EQ(o.result, "ok") << o.detail;
  ASSERT_EQ(o.steps.size(), 2u);
  EXPECT_EQ(o.steps[0].step, "shrink");
  EXPECT_EQ(o.steps[1].step, "drain");
  EXPECT_EQ(f.count_calls("refresh_vm_stats"), 2u);
  EXPECT_EQ(f.nodes[0].percpu, 0u);
  EXPECT_EQ(f.nodes[0].blocks9, free0 + 60) << "every freed page a free block of its order";
  EXPECT_NE(o.detail.find("shrunk from 100 to 40; 45 freed blocks came back from a CPU's page list after 2 writes "
                          "of vm.stat_refresh"),
            std::string::npos)
      << o.detail;
}

TEST(PoolShrink, AGlobalPoolsDrainCountsEveryNode) {
  FakeActuator f;
  f.set_node(0, kFree, 50, 5);
  f.set_node(1, kFree, 50, 5);
  f.nodes[0].pool[k2M] = 50;
  f.nodes[1].pool[k2M] = 50;
  f.percpu_keep = 20;  // each node's list keeps 20 of its freed blocks
  const PoolOutcome o = resize_pool(f, grow_request(-1, 0));
  EXPECT_EQ(o.result, "ok") << o.detail;
  EXPECT_EQ(f.count_calls("free_blocks -1 9"), 3u) << "before the shrink, after it and after the drain's write";
  EXPECT_EQ(f.count_calls("refresh_vm_stats"), 1u);
  EXPECT_EQ(f.nodes[0].percpu + f.nodes[1].percpu, 0u);
  EXPECT_NE(o.detail.find("40 freed blocks came back from a CPU's page list after 1 write of vm.stat_refresh"),
            std::string::npos)
      << o.detail;
}

TEST(PoolShrink, ADrainItCannotMakeIsSaidAndTheShrinkStands) {
  for (const char* op : {"refresh_vm_stats", "free_blocks"}) {
    FakeActuator f;
    f.set_node(0, kFree, 50, 5);
    f.nodes[0].pool[k2M] = 100;
    f.percpu_keep = 45;
    f.fail(op, EROFS);
    const PoolOutcome o = resize_pool(f, grow_request(0, 40));
    EXPECT_EQ(o.result, "ok") << op << ": " << o.detail;
    EXPECT_EQ(o.after, 40u) << op;
    EXPECT_NE(o.detail.find("shrunk from 100 to 40; the per-CPU page lists were not drained: "), std::string::npos)
        << op << ": " << o.detail;
    EXPECT_NE(o.detail.find("Read-only file system"), std::string::npos) << op << ": " << o.detail;
  }
}

TEST(PoolShrink, TheDrainStopsAfterThreeWritesThatBringNoBlockBack) {
  FakeActuator f;
  f.set_node(0, kFree, 50, 5);
  f.nodes[0].pool[k2M] = 100;
  f.percpu_keep = 45;
  f.percpu_step = 0;  // the lists' floor: nothing comes back
  const PoolOutcome o = resize_pool(f, grow_request(0, 40));
  EXPECT_EQ(o.result, "ok") << o.detail;
  EXPECT_EQ(f.count_calls("refresh_vm_stats"), 3u);
  EXPECT_NE(o.detail.find("0 freed blocks came back from a CPU's page list after 3 writes"), std::string::npos)
      << o.detail;
}

TEST(PoolShrink, PagesInUseLeaveItShort) {
  FakeActuator f;
  f.set_node(0, kFree, 50, 5);
  f.nodes[0].pool[k2M] = 100;
  f.nodes[0].in_use[k2M] = 60;
  const PoolOutcome o = resize_pool(f, grow_request(0, 40));
  EXPECT_EQ(o.result, "short");
  EXPECT_EQ(o.after, 60u);
  EXPECT_NE(o.detail.find("in use"), std::string::npos) << o.detail;
  EXPECT_EQ(f.count_calls("refresh_vm_stats"), 0u) << "the 40 freed blocks are free: no drain";
}

TEST(PoolShrink, NoPageFreedNoDrainAsked) {
  FakeActuator f;
  f.set_node(0, kFree, 50, 5);
  f.nodes[0].pool[k2M] = 100;
  f.nodes[0].in_use[k2M] = 100;
  f.percpu_keep = 45;
  f.fail("free_blocks", EIO);
  const PoolOutcome o = resize_pool(f, grow_request(0, 40));
  EXPECT_EQ(o.result, "short");
  EXPECT_EQ(f.count_calls("refresh_vm_stats"), 0u);
  EXPECT_EQ(o.detail.find("page list"), std::string::npos) << "nothing was freed to drain: " << o.detail;
}

TEST(PoolErrors, AWriteErrorEndsWithItsMessage) {
  FakeActuator f;
  f.set_node(0, kFree, 50, 5);
  f.fail("write_pool", EPERM);
  const PoolOutcome o = resize_pool(f, grow_request(0, 100));
  EXPECT_EQ(o.result, "error");
  EXPECT_NE(o.detail.find("Operation not permitted"), std::string::npos) << o.detail;
  EXPECT_NE(o.detail.find("node0/hugepages/hugepages-2048kB/nr_hugepages"), std::string::npos) << o.detail;
  EXPECT_EQ(o.attempts, 1u);
}

TEST(PoolErrors, EachStepCanFail) {
  struct Case {
    const char* op;
    int err;
    const char* text;
  };
  for (const Case& c : {Case{"read_pool", ENOENT, "No such file or directory"},
                        Case{"mem_available", EIO, "Input/output error"},
                        Case{"spare_memory", EIO, "Input/output error"},
                        Case{"grow_pool", EIO, "Input/output error"},
                        Case{"compact", EBUSY, "Device or resource busy"}}) {
    FakeActuator f;
    f.set_node(0, kFree, 98, 5);  // 40 free blocks: the second write adds nothing, the compaction step runs
    f.fail(c.op, c.err);
    const PoolOutcome o = resize_pool(f, grow_request(0, 500));
    EXPECT_EQ(o.result, "error") << c.op;
    EXPECT_NE(o.detail.find(c.text), std::string::npos) << c.op << ": " << o.detail;
    EXPECT_EQ(f.count_calls("write_pool"), std::string(c.op) == "compact" ? 2u : 0u) << c.op;
  }
  FakeActuator f;  // the read-back after a write
  f.set_node(0, kFree, 50, 5);
  f.nodes[0].pool[k2M] = 0;
  f.fail("read_pool", EIO, -1, 1);
  const PoolOutcome back = resize_pool(f, grow_request(0, 10));
  EXPECT_EQ(back.result, "error");
  EXPECT_EQ(back.attempts, 1u);
  EXPECT_EQ(f.count_calls("write_pool"), 1u);

  FakeActuator g;  // drop_caches failing after a miss
  g.set_node(0, kFree, 99, 99);
  g.fail("drop_caches", EACCES);
  PoolRequest r = grow_request(0, 500);
  r.drop_caches = true;
  const PoolOutcome o = resize_pool(g, r);
  EXPECT_EQ(o.result, "error");
  EXPECT_NE(o.detail.find("drop_caches"), std::string::npos) << o.detail;
}

TEST(PoolErrors, AMissingNodeIsAnErrorNotACrash) {
  FakeActuator f;
  f.set_node(0, kFree, 50, 5);
  const PoolOutcome o = resize_pool(f, grow_request(3, 10));
  EXPECT_EQ(o.result, "error");
  EXPECT_NE(o.detail.find("node3"), std::string::npos) << o.detail;
}

TEST(PoolStop, StopRequestedAbandons) {
  FakeActuator f;
  f.set_node(0, kFree, 99, 99);
  f.stop_after = 0;
  EXPECT_EQ(resize_pool(f, grow_request(0, 100)).result, "abandoned");
  EXPECT_EQ(f.count_calls("write_pool"), 0u);

  FakeActuator g;  // stop between two writes
  g.set_node(0, kFree, 100, 100);
  g.nodes[0].max_blocks9 = 1000;
  g.nodes[0].step_blocks = 0;  // compaction finds nothing; the kernel one page per write
  g.direct_yield = 1;
  g.stop_after = 3;  // start, attempt 1 (+ compaction check), then stop
  PoolRequest r = grow_request(0, 100);
  const PoolOutcome o = resize_pool(g, r);
  EXPECT_EQ(o.result, "abandoned");
  EXPECT_LT(o.attempts, 16u);
  EXPECT_GE(o.attempts, 1u);
  EXPECT_NE(o.detail.find("exiting"), std::string::npos);
}

}  // namespace
}  // namespace fragd
