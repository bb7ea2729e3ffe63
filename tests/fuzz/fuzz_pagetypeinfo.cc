// SPDX-License-Identifier: Apache-2.0
// /proc/pagetypeinfo: parse_pagetypeinfo() on any text, merging into no zones
// and into the zones of a fixed buddyinfo. On error the zones are untouched.
#include <set>
#include <utility>

#include "kernel/procfs.h"
#include "fuzz_check.h"
#include "fuzz_zones.h"

namespace {

void run(std::string_view text, std::vector<fragd::ZoneFree> zones) {
  const std::vector<fragd::ZoneFree> before = zones;
  std::vector<std::string> warnings;
  unsigned order = 12345;
  auto r = fragd::parse_pagetypeinfo(text, "pagetypeinfo", zones, &warnings, &order);
  if (!r) {
    FUZZ_CHECK(zones.size() == before.size(), "a refused file leaves the zones alone");
    FUZZ_CHECK(order == 12345, "a refused file leaves the pageblock order alone");
    return;
  }
  FUZZ_CHECK(order == 12345 || order < fragd::kMaxOrders, "pageblock order below kMaxOrders");
  FUZZ_CHECK(zones.size() >= before.size(), "zones are only added");
  for (size_t i = 0; i < before.size(); ++i)
    FUZZ_CHECK(zones[i].node == before[i].node && zones[i].zone == before[i].zone &&
                   zones[i].free_blocks == before[i].free_blocks,
               "known zones keep their place and buddyinfo counts");
  std::set<std::pair<int, std::string>> seen;
  size_t rows = 0;
  for (const auto& z : zones) {
    FUZZ_CHECK(seen.emplace(z.node, z.zone).second, "a zone appears once");
    for (const auto& [type, counts] : z.free_by_type)
      FUZZ_CHECK(!type.empty() && !counts.empty() && counts.size() <= fragd::kMaxOrders, "free-list rows are sane");
    rows += z.free_by_type.size() + z.pageblocks.size();
  }
  FUZZ_CHECK(rows > 0, "an accepted file has a table row");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fragd_fuzz::into_zones(data, size, run);
  return 0;
}
