// SPDX-License-Identifier: Apache-2.0
// /proc/zoneinfo, read two ways: parse_zoneinfo() (counters, merged into no
// zones and into the zones of a fixed buddyinfo) and parse_zone_spans() (the
// pfn spans the pageblock scanner walks).
#include <set>
#include <utility>

#include "concerns/pageblocks/pageblock.h"
#include "kernel/procfs.h"
#include "fuzz_check.h"
#include "fuzz_zones.h"

namespace {

void counters(std::string_view text, std::vector<fragd::ZoneFree> zones) {
  const std::vector<fragd::ZoneFree> before = zones;
  std::vector<std::string> warnings;
  auto r = fragd::parse_zoneinfo(text, "zoneinfo", zones, &warnings);
  if (!r) {
    FUZZ_CHECK(zones.size() == before.size(), "a refused file leaves the zones alone");
    return;
  }
  FUZZ_CHECK(zones.size() >= before.size(), "zones are only added");
  std::set<std::pair<int, std::string>> seen;
  for (size_t i = 0; i < zones.size(); ++i) {
    FUZZ_CHECK(seen.emplace(zones[i].node, zones[i].zone).second, "a zone appears once");
    if (i > 0) FUZZ_CHECK(zones[i - 1].node <= zones[i].node, "zones ordered by node");
  }
  for (const auto& b : before)
    FUZZ_CHECK(seen.count({b.node, b.zone}) == 1, "known zones are kept");
}

void spans(std::string_view text) {
  auto s = fragd::parse_zone_spans(text, "zoneinfo");
  if (!s) {
    FUZZ_CHECK(s.error().message.rfind("zoneinfo:", 0) == 0, "an error names the file");
    return;
  }
  FUZZ_CHECK(!s->empty(), "an accepted file has a span");
  for (const auto& z : *s) FUZZ_CHECK(z.start_pfn < z.end_pfn, "a span is not empty and does not wrap");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fragd_fuzz::into_zones(data, size, counters);
  spans(fragd_fuzz::as_text(data, size));
  return 0;
}
