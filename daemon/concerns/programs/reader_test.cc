// SPDX-License-Identifier: Apache-2.0
// The map reader given descriptors rather than the objects that own them (no root).
#include "concerns/programs/reader.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

namespace {

// The reader learns from its descriptors' struct that the ledger is off: it says so before
// touching a map, with the message the pageblocks concern logs.
TEST(BpfReader, LedgerOffIsAnErrorBeforeAnyMapRead) {
  fragd::BpfMapFds fds;  // every descriptor -1, pollution.pollution_on false
  fragd::BpfReader r(fds);
  auto c = r.read_pollution_counters();
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().err, ENOENT);
  EXPECT_EQ(c.error().message, "the pollution ledger is off (see fragd's start-up warnings for why)");
  EXPECT_FALSE(r.read_pollution());
}

// A tick reads the histograms at the first read, when their count moved, and at the read after
// it moved (an end counted between the count's read and its histogram's write is read then);
// while the count stays, not at all; after a failed read, again.
TEST(HistWatch, DueWhenTheCountMovedAndOnceMore) {
  fragd::HistWatch w;
  EXPECT_TRUE(w.due(0));   // first read
  EXPECT_FALSE(w.due(0));  // quiet
  EXPECT_FALSE(w.due(0));
  EXPECT_TRUE(w.due(3));   // moved
  EXPECT_TRUE(w.due(3));   // the read after
  EXPECT_FALSE(w.due(3));
  EXPECT_TRUE(w.due(4));
  EXPECT_TRUE(w.due(5));   // moved again
  EXPECT_TRUE(w.due(5));
  EXPECT_FALSE(w.due(5));
  w.again();               // a read that failed
  EXPECT_TRUE(w.due(5));
  EXPECT_FALSE(w.due(5));
}

// read_into on a descriptor that is no map is a read error naming the map, not a crash, and makes
// every histogram due at the next read.
TEST(BpfReader, ReadIntoFailsOnABadDescriptorAndReadsWholeAfter) {
  fragd::BpfMapFds fds;
  fragd::BpfReader r(fds);
  fragd::BpfSnapshot s;
  fragd::HistCounts seen;
  seen.runs.due(0);  // quiet: nothing due
  ASSERT_FALSE(seen.runs.due(0));
  auto res = r.read_into(s, seen);
  ASSERT_FALSE(res);
  EXPECT_NE(res.error().message.find("compaction_stats"), std::string::npos) << res.error().message;
  EXPECT_TRUE(seen.runs.due(0));
}

}  // namespace
