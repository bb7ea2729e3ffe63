// SPDX-License-Identifier: Apache-2.0
// process_* figures from /proc/<pid>/stat, and this process's own.
#include "kernel/process.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace {

// A real line of /proc/self/stat (fragd on this machine), with a comm holding a space and a ')'.
const char* kStat =
    "4242 (frag d)x) S 1 4242 4242 0 -1 4194560 2100 0 0 0 150 50 0 0 20 0 12 0 1000 83886080 2600 "
    "18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0";

TEST(ProcessStat, FieldsAfterTheCommand) {
  auto s = fragd::parse_process_stat(kStat, 100, 4096, 1700000000);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_DOUBLE_EQ(s->cpu_seconds, 2.0);                  // (150 + 50) / 100
  EXPECT_EQ(s->virtual_bytes, 83886080u);
  EXPECT_EQ(s->resident_bytes, 2600u * 4096u);
  EXPECT_DOUBLE_EQ(s->start_time_seconds, 1700000010.0);  // btime + 1000 / 100
}

TEST(ProcessStat, BadInputIsAnErrorNotAGuess) {
  EXPECT_FALSE(fragd::parse_process_stat("4242 (fragd S 1 2 3", 100, 4096, 0));
  EXPECT_FALSE(fragd::parse_process_stat("4242 (fragd) S 1 2 3", 100, 4096, 0));
  std::string bad = kStat;
  bad.replace(bad.find(" 150 "), 5, " 1x0 ");
  EXPECT_FALSE(fragd::parse_process_stat(bad, 100, 4096, 0));
  EXPECT_FALSE(fragd::parse_process_stat(kStat, 0, 4096, 0));
}

TEST(ProcessStat, ThisProcess) {
  auto s = fragd::read_process_stats();
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_GT(s->resident_bytes, 0u);
  EXPECT_GE(s->open_fds, 3u);  // stdin, stdout, stderr at least
  EXPECT_GT(s->max_fds, 0u);
  EXPECT_GT(s->start_time_seconds, 1.5e9);
  EXPECT_LE(s->start_time_seconds, static_cast<double>(time(nullptr)) + 1);
}

}  // namespace
