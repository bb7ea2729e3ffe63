// SPDX-License-Identifier: Apache-2.0
// The compaction concern as the Daemon drives it: its part of the status answer and its families
// come from the maps of the last Tick, and there are none while no Tick has read them.
#include "concerns/compaction/concern.h"

#include <gtest/gtest.h>

#include "fragd/concern_fixtures.h"

namespace {

using namespace fragd;
using fragd::test::family;

TEST(CompactionConcern, StatusAndFamiliesFromTheLastTicksMaps) {
  CompactionConcern c;
  const SeriesPlan plan = widest_plan(1);

  StatusReply none;
  c.status(none, Tick{});
  EXPECT_FALSE(none.compaction.has_value());
  Families empty;
  c.metrics(plan, Tick{}, empty);
  EXPECT_TRUE(empty.empty());

  BpfSnapshot bpf;
  bpf.compaction.runs[FRAGD_TRIGGER_DIRECT][FRAGD_CSTATUS_SUCCESS] = 6;
  bpf.compaction.runs[FRAGD_TRIGGER_DIRECT][FRAGD_CSTATUS_CONTENDED] = 1;
  bpf.compaction.pages_migrated[FRAGD_TRIGGER_DIRECT] = 512;
  bpf.compaction.pages_failed[FRAGD_TRIGGER_DIRECT] = 3;
  bpf.compaction_hist[FRAGD_TRIGGER_DIRECT].sum_ns = 2'500'000'000ULL;
  const Tick last{0, &bpf};

  StatusReply s;
  c.status(s, last);
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
  c.metrics(plan, last, out);
  const auto* runs = family(out, "fragd_compaction_runs_total");
  ASSERT_NE(runs, nullptr);
  double direct_runs = 0;
  for (const auto& m : runs->metric)
    for (const auto& l : m.label)
      if (l.name == "trigger" && l.value == "direct") direct_runs += m.counter.value;
  EXPECT_EQ(direct_runs, 7);
  EXPECT_NE(family(out, "fragd_compaction_duration_seconds"), nullptr);
}

}  // namespace
