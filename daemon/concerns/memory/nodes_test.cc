// SPDX-License-Identifier: Apache-2.0
// Nodes coming and going with the zones of the snapshots.
#include <gtest/gtest.h>

#include "concerns/memory/nodes.h"

namespace {

using namespace fragd;

std::vector<ZoneFree> zones(std::vector<std::pair<int, uint64_t>> node_present) {
  std::vector<ZoneFree> out;
  for (auto [node, present] : node_present) {
    ZoneFree z;
    z.node = node;
    z.zone = "Normal";
    z.present_pages = present;
    out.push_back(z);
  }
  return out;
}

TEST(OnlineNodes, TheFirstSnapshotLearnsThenEachChangeIsReportedOnce) {
  OnlineNodes n;
  EXPECT_FALSE(n.update(zones({{0, 100}, {1, 100}, {2, 0}})));
  EXPECT_EQ(n.nodes(), (std::set<int>{0, 1}));
  EXPECT_FALSE(n.update(zones({{0, 100}, {1, 100}})));
  auto c = n.update(zones({{0, 100}, {1, 0}, {2, 50}}));  // 1 hot-removed, 2 onlined
  ASSERT_TRUE(c);
  EXPECT_EQ(c->gone, std::vector<int>{1});
  EXPECT_EQ(c->came, std::vector<int>{2});
  EXPECT_FALSE(n.update(zones({{0, 100}, {2, 50}})));
  c = n.update(zones({{0, 100}}));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->gone, std::vector<int>{2});
  EXPECT_TRUE(c->came.empty());
}

}  // namespace
