// SPDX-License-Identifier: Apache-2.0
// Helpers and constants shared by engine.cc and engine_outcomes.cc; not an API.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace fragd::engine_detail {

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();
// The expected duration of the next compaction is the mean of this many.
constexpr size_t kRecentDurations = 4;
// A miss counter this large already waits backoff.max.
constexpr unsigned kMaxMisses = 64;

inline uint64_t sat_add(uint64_t a, uint64_t b) { return a > kU64Max - b ? kU64Max : a + b; }

inline std::string join_ints(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
  return s.empty() ? "none" : s;
}

}  // namespace fragd::engine_detail
