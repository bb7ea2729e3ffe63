// SPDX-License-Identifier: Apache-2.0
// When does a node run out of free 2 MiB blocks? From the free blocks of order
// >= compaction_hpage_order() (9 with 4 KiB pages) per node, sampled every tick: the least-squares
// slope over the last `window` (blocks made minus blocks consumed, per second).
// A node whose slope is negative gets free blocks / -slope seconds; a node not
// losing blocks, or with less than half a window of samples, gets nothing.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include "base/family.h"
#include "kernel/procfs.h"

namespace fragd {

struct NodeForecast {
  int node = 0;
  uint64_t free_blocks = 0;       // now
  double blocks_per_second = 0;   // slope over the window: < 0 losing, > 0 gaining
  bool ready = false;             // at least half a window of samples
  double exhaustion_seconds = 0;  // free_blocks / -slope, when ready and losing
};

class BlockForecast {
 public:
  explicit BlockForecast(uint64_t window_ns) : window_ns_(window_ns) {}
  void set_window(uint64_t window_ns) { window_ns_ = window_ns; }
  uint64_t window_ns() const { return window_ns_; }

  // One sample per node present in `zones` (populated zones only) at `now_ns`.
  void observe(uint64_t now_ns, const std::vector<ZoneFree>& zones);
  void observe(uint64_t now_ns, const std::map<int, uint64_t>& free_blocks);

  std::vector<NodeForecast> forecast() const;

 private:
  struct Sample {
    uint64_t t_ns;
    uint64_t blocks;
  };
  uint64_t window_ns_;
  std::map<int, std::deque<Sample>> samples_;
};

// fragd_hugepages_exhaustion_seconds{node} (only nodes losing blocks) and
// fragd_free_hugepage_blocks_rate{node} (every node with half a window of samples).
void forecast_metrics(const std::vector<NodeForecast>& f, uint64_t window_ns, Families& out);

}  // namespace fragd
