// SPDX-License-Identifier: Apache-2.0
// Tests of fragctl/render/log2: a latency histogram as bcc-style log2 rows.
#include "fragctl/render/log2.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using fragd::LatencyHist;

TEST(HistRender, Log2Usecs) {
  LatencyHist h;
  h.add(262144, 1);   // first value of the 2^18 ns row
  h.add(300000, 2);
  h.add(524287, 1);   // last value of the same row
  h.add(1500000, 2);  // 2^20 ns row; the 2^19 row stays empty
  EXPECT_EQ(fragd::render_log2(h),
            "     usecs               : count     distribution\n"
            "     262.1 -> 524.3      : 4        |****************************************|\n"
            "     524.3 -> 1048.6     : 0        |                                        |\n"
            "    1048.6 -> 2097.2     : 2        |********************                    |\n");
}

TEST(HistRender, Log2NsecsAndEnds) {
  LatencyHist h;
  h.add(5, 3);       // bucket 0: [0, 1024)
  h.add(1500, 1);    // [1024, 2048)
  h.add(1ULL << 35); // open-ended last bucket
  std::string out = fragd::render_log2(h, "nsecs");
  std::vector<std::string> lines;
  for (size_t pos = 0; pos < out.size();) {
    size_t nl = out.find('\n', pos);
    ASSERT_NE(nl, std::string::npos);
    lines.push_back(out.substr(pos, nl - pos));
    pos = nl + 1;
  }
  ASSERT_EQ(lines.size(), 1u + 26u);  // header + rows 0..25
  EXPECT_EQ(lines[0], "     nsecs               : count     distribution");
  EXPECT_EQ(lines[1], "         0 -> 1023       : 3        |****************************************|");
  EXPECT_EQ(lines[2], "      1024 -> 2047       : 1        |*************                           |");
  EXPECT_EQ(lines[3], "      2048 -> 4095       : 0        |                                        |");
  EXPECT_EQ(lines[26], "17179869184 -> inf        : 1        |*************                           |");
  EXPECT_EQ(fragd::render_log2(LatencyHist{}), "");
}

TEST(HistRender, RowsSumToTotal) {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<uint64_t> d(0, 1ULL << 36);
  LatencyHist h;
  for (int i = 0; i < 1000; ++i) h.add(d(rng) >> (i % 30));
  std::string out = fragd::render_log2(h);
  uint64_t total = 0;
  for (size_t pos = out.find('\n') + 1; pos < out.size();) {
    size_t colon = out.find(" : ", pos);
    total += std::stoull(out.substr(colon + 3));
    pos = out.find('\n', pos) + 1;
  }
  EXPECT_EQ(total, 1000u);
}
