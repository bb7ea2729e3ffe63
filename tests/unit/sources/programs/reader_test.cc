// SPDX-License-Identifier: Apache-2.0
// The map reader given descriptors rather than the objects that own them (no root).
#include "sources/programs/reader.h"

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

// A descriptor that is no map is a read error naming the map, not a crash.
TEST(BpfReader, BadDescriptorNamesTheMap) {
  fragd::BpfMapFds fds;
  fragd::BpfReader r(fds);
  auto s = r.read();
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("alloc_stats"), std::string::npos) << s.error().message;
}

}  // namespace
