// The zones of a fixed /proc/buddyinfo, which the zoneinfo and pagetypeinfo
// targets merge their input into.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_check.h"
#include "kernel/procfs.h"

namespace fragd_fuzz {

inline std::vector<fragd::ZoneFree> zones_of(std::string_view buddyinfo) {
  auto z = fragd::parse_buddyinfo(buddyinfo, "buddyinfo");
  FUZZ_CHECK(z.ok(), "the fixed buddyinfo parses");
  return std::move(*z);
}

}  // namespace fragd_fuzz
