// SPDX-License-Identifier: Apache-2.0
#include "fragctl/render/preflight.h"

#include "base/format.h"

namespace fragd {

std::string format_preflight(const Supply& s) {
  return s.reason + " [" + s.basis + ", " + format_duration(s.age_seconds * 1e9) + " old]\n";
}

}  // namespace fragd
