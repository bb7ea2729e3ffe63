// SPDX-License-Identifier: Apache-2.0
// The compaction concern as the Daemon drives it: it reads its maps at each tick through its
// port; its part of the status answer and its families come from that read, and there are none
// until one read whole. A failed read is counted and keeps the last good read.
#include "concerns/compaction/concern.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "fragd/concern_fixtures.h"

namespace {

using namespace fragd;
using fragd::test::family;

struct Maps {
  CompactionSnapshot next;  // what the next read finds
  bool broken = false;
  int reads = 0;
  CompactionPort port() {
    return {{}, [this](const CompactionMapFds&, CompactionSnapshot& s, HistWatch& w) -> Result<void> {
              reads++;
              if (broken) {
                w.again();
                return make_error("map compaction_stats: EPERM", EPERM);
              }
              s = next;
              return {};
            }};
  }
};

TEST(CompactionConcern, StatusAndFamiliesFromItsOwnReadOfTheMaps) {
  Shared sh{Config{}};
  Maps maps;
  CompactionConcern c(sh, maps.port());
  const SeriesPlan plan = widest_plan(1);

  StatusReply none;
  c.status(none, Tick{});
  EXPECT_FALSE(none.compaction.has_value());
  Families empty;
  c.metrics(plan, Tick{}, empty);
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(c.snapshot(), nullptr);

  maps.next.compaction.runs[FRAGD_TRIGGER_DIRECT][FRAGD_CSTATUS_SUCCESS] = 6;
  maps.next.compaction.runs[FRAGD_TRIGGER_DIRECT][FRAGD_CSTATUS_CONTENDED] = 1;
  maps.next.compaction.pages_migrated[FRAGD_TRIGGER_DIRECT] = 512;
  maps.next.compaction.pages_failed[FRAGD_TRIGGER_DIRECT] = 3;
  maps.next.compaction_hist[FRAGD_TRIGGER_DIRECT].sum_ns = 2'500'000'000ULL;
  c.tick(Tick{1});
  ASSERT_NE(c.snapshot(), nullptr);

  StatusReply s;
  c.status(s, Tick{});
  ASSERT_TRUE(s.compaction.has_value());
  ASSERT_EQ(s.compaction->size(), size_t{FRAGD_NR_TRIGGERS});
  const auto& direct = (*s.compaction)[FRAGD_TRIGGER_DIRECT];
  EXPECT_EQ(direct.trigger.value_or(""), std::string(trigger_name(FRAGD_TRIGGER_DIRECT)));
  EXPECT_EQ(direct.runs.value_or(0), 7u);  // every status
  EXPECT_EQ(direct.pages_migrated.value_or(0), 512u);
  EXPECT_EQ(direct.pages_failed.value_or(0), 3u);
  EXPECT_DOUBLE_EQ(direct.seconds.value_or(0), 2.5);
  EXPECT_EQ((*s.compaction)[FRAGD_TRIGGER_KCOMPACTD].runs.value_or(1), 0u);

  Families out;
  c.metrics(plan, Tick{}, out);
  const auto* runs = family(out, "fragd_compaction_runs_total");
  ASSERT_NE(runs, nullptr);
  double direct_runs = 0;
  for (const auto& m : runs->metric)
    for (const auto& l : m.label)
      if (l.name == "trigger" && l.value == "direct") direct_runs += m.counter.value;
  EXPECT_EQ(direct_runs, 7);
  EXPECT_NE(family(out, "fragd_compaction_duration_seconds"), nullptr);

  // A read that fails is counted; the last good read stays.
  maps.broken = true;
  c.tick(Tick{2});
  EXPECT_EQ(c.read_errors(), 1u);
  ASSERT_NE(c.snapshot(), nullptr);
  EXPECT_EQ(c.snapshot()->compaction.pages_migrated[FRAGD_TRIGGER_DIRECT], 512u);
  EXPECT_EQ(maps.reads, 2);
}

TEST(CompactionConcern, NoSnapshotUntilAReadSucceeds) {
  Shared sh{Config{}};
  Maps maps;
  maps.broken = true;
  CompactionConcern c(sh, maps.port());
  c.tick(Tick{1});
  c.tick(Tick{2});
  EXPECT_EQ(c.snapshot(), nullptr);
  EXPECT_EQ(c.read_errors(), 2u);
  maps.broken = false;
  c.tick(Tick{3});
  EXPECT_NE(c.snapshot(), nullptr);
}

// The real read on a descriptor that is no map is a read error naming the map, not a crash, and
// makes every histogram due at the next read.
TEST(CompactionMaps, ABadDescriptorIsAnErrorAndTheHistogramsAreReadWholeAfter) {
  CompactionMapFds fds;  // every descriptor -1
  CompactionSnapshot s;
  HistWatch seen;
  seen.due(0);  // quiet: nothing due
  ASSERT_FALSE(seen.due(0));
  auto res = read_compaction(fds, s, seen);
  ASSERT_FALSE(res);
  EXPECT_NE(res.error().message.find("compaction_stats"), std::string::npos) << res.error().message;
  EXPECT_TRUE(seen.due(0));
}

}  // namespace
