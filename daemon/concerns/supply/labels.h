// SPDX-License-Identifier: Apache-2.0
// The scheduler's view: a few Node Feature Discovery labels a Kubernetes scheduler can place
// hugepage pods on (nfd-worker's local source reads them from a file in its features.d
// directory). Each is a coarse bucket that changes rarely: a label takes a new bucket only after
// the value has stayed past its bucket's edge for `hold` (hysteresis in time), so that steady
// churn around an edge does not relabel the node, and nothing else recomputes placement.
//
//   fragd-hugepages-2Mi-gib     GiB of 2 MiB pages obtainable now or by one compaction (free +
//                               makeable, the whole host), rounded down to 0, 1, 2, 4, 8, ...:
//                               an integer, so that node affinity can say Gt
//   fragd-hugepages-1Gi-count   1 GiB pages obtainable, rounded down the same way
//   fragd-fragmentation         low, medium or high: the highest node score (the kernel's
//                               fragmentation score, 0..100) below 50, below 85, or above
// Pure: the unit tests drive it with their own clock.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fragd {

// The raw values of one moment.
struct LabelInputs {
  uint64_t hugepages_2m = 0;  // 2 MiB pages obtainable (free + makeable)
  uint64_t hugepages_1g = 0;  // 1 GiB pages obtainable
  unsigned max_score = 0;     // the highest node's fragmentation score
};

// v rounded down to 0 or a power of two.
uint64_t pow2_floor(uint64_t v);
// The labels' values for `in`, before hysteresis, by label name.
std::map<std::string, std::string> label_buckets(const LabelInputs& in);
// "fragmentation" bucket of a score.
const char* fragmentation_level(unsigned score);

class LabelHysteresis {
 public:
  explicit LabelHysteresis(uint64_t hold_ns) : hold_ns_(hold_ns) {}
  // The labels at `now_ns` given this moment's buckets; true in the result's second when a
  // label changed (or at the first call).
  std::pair<std::map<std::string, std::string>, bool> update(const std::map<std::string, std::string>& buckets,
                                                             uint64_t now_ns);
  const std::map<std::string, std::string>& labels() const { return shown_; }
  void set_hold(uint64_t hold_ns) { hold_ns_ = hold_ns; }
  // Label changes since start, by label.
  const std::map<std::string, uint64_t>& changes() const { return changes_; }

 private:
  uint64_t hold_ns_;
  std::map<std::string, std::string> shown_;
  std::map<std::string, uint64_t> away_since_;  // when the bucket first differed from the shown one
  std::map<std::string, uint64_t> changes_;
  bool first_ = true;
};

// The feature file's text: a comment naming fragd and what the labels mean, nfd-worker's expiry
// directive (so that a node whose fragd stopped does not keep them), then name=value lines.
std::string feature_file_text(const std::map<std::string, std::string>& labels, const std::string& expires_rfc3339);

}  // namespace fragd
