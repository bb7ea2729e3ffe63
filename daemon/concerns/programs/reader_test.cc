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

}  // namespace
