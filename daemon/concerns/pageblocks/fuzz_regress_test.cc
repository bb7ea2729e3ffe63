// SPDX-License-Identifier: Apache-2.0
// Inputs the fuzz targets of tests/fuzz found mishandled, kept as unit tests
// so the fixes stay.
#include <gtest/gtest.h>

#include <string>

#include "concerns/pageblocks/pageblock.h"

namespace fragd {
namespace {

// fuzz_zoneinfo: a start_pfn and a spanned whose sum passes 2^64 gave a span
// whose end_pfn wrapped below its start_pfn.
TEST(FuzzRegress, ZoneSpanThatWouldWrapIsSkipped) {
  const std::string text =
      "Node 0, zone   Normal\n"
      "        spanned  100\n"
      "  start_pfn:           18446744073709551600\n"
      "Node 0, zone  Movable\n"
      "        spanned  18446744073709551615\n"
      "  start_pfn:           5\n"
      "Node 1, zone   Normal\n"
      "        spanned  4096\n"
      "        min      10\n"
      "  start_pfn:           1048576\n";
  auto spans = parse_zone_spans(text, "zoneinfo");
  ASSERT_TRUE(spans) << spans.error().message;
  ASSERT_EQ(spans->size(), 1u);
  EXPECT_EQ((*spans)[0].node, 1);
  EXPECT_EQ((*spans)[0].start_pfn, 1048576u);
  EXPECT_EQ((*spans)[0].end_pfn, 1048576u + 4096u);

  // Nothing left once the wrapping zones are dropped: the usual error.
  auto none = parse_zone_spans(text.substr(0, text.find("Node 1")), "zoneinfo");
  EXPECT_FALSE(none);

  // The largest span that does not wrap is kept.
  auto edge = parse_zone_spans("Node 0, zone Normal\n  spanned 16\n  start_pfn: 18446744073709551599\n", "zoneinfo");
  ASSERT_TRUE(edge) << edge.error().message;
  EXPECT_EQ((*edge)[0].end_pfn, UINT64_MAX);
}

}  // namespace
}  // namespace fragd
