// SPDX-License-Identifier: Apache-2.0
#include "concerns/supply/labels.h"

#include <bit>

namespace fragd {

uint64_t pow2_floor(uint64_t v) { return v ? std::bit_floor(v) : 0; }

const char* fragmentation_level(unsigned score) {
  if (score < 50) return "low";
  if (score < 85) return "medium";
  return "high";
}

std::map<std::string, std::string> label_buckets(const LabelInputs& in) {
  // 512 pages of 2 MiB in a GiB.
  return {{"fragd-hugepages-2Mi-gib", std::to_string(pow2_floor(in.hugepages_2m / 512))},
          {"fragd-hugepages-1Gi-count", std::to_string(pow2_floor(in.hugepages_1g))},
          {"fragd-fragmentation", fragmentation_level(in.max_score)}};
}

std::pair<std::map<std::string, std::string>, bool> LabelHysteresis::update(
    const std::map<std::string, std::string>& buckets, uint64_t now_ns) {
  bool changed = first_;
  if (first_) {
    shown_ = buckets;
    first_ = false;
    return {shown_, true};
  }
  for (const auto& [name, value] : buckets) {
    auto it = shown_.find(name);
    if (it == shown_.end()) {
      shown_[name] = value;
      changed = true;
      continue;
    }
    if (it->second == value) {
      away_since_.erase(name);
      continue;
    }
    auto [since, fresh] = away_since_.try_emplace(name, now_ns);
    if (!fresh && now_ns - since->second >= hold_ns_) {
      it->second = value;
      away_since_.erase(since);
      changes_[name]++;
      changed = true;
    } else if (fresh && hold_ns_ == 0) {
      it->second = value;
      away_since_.erase(since);
      changes_[name]++;
      changed = true;
    }
  }
  return {shown_, changed};
}

std::string feature_file_text(const std::map<std::string, std::string>& labels, const std::string& expires_rfc3339) {
  std::string t =
      "# Written by fragd: contiguous memory this node can supply (docs/deployment.md \"Scheduling on fragd's "
      "labels\").\n";
  if (!expires_rfc3339.empty()) t += "# +expiry-time=" + expires_rfc3339 + "\n";
  for (const auto& [name, value] : labels) t += name + "=" + value + "\n";
  return t;
}

}  // namespace fragd
