// SPDX-License-Identifier: Apache-2.0
// The zones of a fixed /proc/buddyinfo, which the zoneinfo and pagetypeinfo
// targets merge their input into.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_check.h"
#include "kernel/procfs.h"

namespace fragd_fuzz {

// Two nodes: DMA, DMA32 and Normal on node 0, Normal on node 1.
inline std::vector<fragd::ZoneFree> known_zones() {
  static constexpr std::string_view kBuddy =
      "Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3\n"
      "Node 0, zone    DMA32    227     51     31     39     38     35     28     28     22     17    731\n"
      "Node 0, zone   Normal   1712   8264   5281   4109   2279   1554   1254    857    535    380   4464\n"
      "Node 1, zone   Normal     12     64     81    109    279    554    254     57     35     80    464\n";
  auto z = fragd::parse_buddyinfo(kBuddy, "buddyinfo");
  FUZZ_CHECK(z.ok(), "the fixed buddyinfo parses");
  return std::move(*z);
}

// Runs `check` on the input merged into no zones, then into known_zones().
template <class Check>
void into_zones(const uint8_t* data, size_t size, const Check& check) {
  static const std::vector<fragd::ZoneFree> zones = known_zones();
  const std::string_view text = as_text(data, size);
  check(text, std::vector<fragd::ZoneFree>{});
  check(text, zones);
}

}  // namespace fragd_fuzz
