// SPDX-License-Identifier: Apache-2.0
// An estimate's 95% interval on the wire: [lower, upper] (the map's and preflight's answers).
#pragma once

#include <nlohmann/json.hpp>

#include "protocol/fields.h"
#include "concerns/pageblocks/pageblock.h"

namespace fragd::wire {

// An interval as [lower, upper].
template <>
struct Codec<Bounds> {
  static nlohmann::json write(const Bounds& b) { return nlohmann::json::array({b.lo, b.hi}); }
  static void read(const nlohmann::json& j, Bounds& out, const std::string& path) {
    if (!j.is_array() || j.size() != 2) malformed(path + ": not [lower, upper]");
    out = {as_u64(j[0], path + "[0]"), as_u64(j[1], path + "[1]")};
  }
};

}  // namespace fragd::wire
