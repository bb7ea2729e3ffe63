// SPDX-License-Identifier: Apache-2.0
// The BPF mechanism without a loaded object (no root): an empty program set, and the map
// reader given descriptors rather than the objects that own them.
#include "kernel/bpf_object.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "kernel/bpf_maps.h"

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

// The reader learns from its descriptors' struct that the ledger is off: it says so before
// touching a map, with the message the pageblocks concern logs.
TEST(BpfReader, LedgerOffIsAnErrorBeforeAnyMapRead) {
  fragd::BpfMapFds fds;  // every descriptor -1, pollution_on false
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
