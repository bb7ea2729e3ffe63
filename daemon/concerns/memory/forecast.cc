// SPDX-License-Identifier: Apache-2.0
#include "concerns/memory/forecast.h"

#include "base/format.h"
#include "concerns/memory/score.h"

namespace fragd {

void BlockForecast::observe(uint64_t now_ns, const std::vector<ZoneFree>& zones) {
  std::map<int, uint64_t> blocks;
  for (const ZoneFree& z : zones)
    if (z.present_pages > 0) blocks[z.node] += blocks_of_order(z.free_blocks, compaction_hpage_order());
  observe(now_ns, blocks);
}

void BlockForecast::observe(uint64_t now_ns, const std::map<int, uint64_t>& free_blocks) {
  // A node gone from the snapshot is forgotten: its series go with it.
  for (auto it = samples_.begin(); it != samples_.end();)
    it = free_blocks.count(it->first) ? std::next(it) : samples_.erase(it);
  for (const auto& [node, n] : free_blocks) {
    auto& q = samples_[node];
    if (!q.empty() && now_ns <= q.back().t_ns) q.clear();  // the clock went back: start again
    q.push_back({now_ns, n});
    while (q.size() > 1 && now_ns - q.front().t_ns > window_ns_) q.pop_front();
  }
}

std::vector<NodeForecast> BlockForecast::forecast() const {
  std::vector<NodeForecast> out;
  for (const auto& [node, q] : samples_) {
    NodeForecast f;
    f.node = node;
    f.free_blocks = q.empty() ? 0 : q.back().blocks;
    if (q.size() >= 3 && (q.back().t_ns - q.front().t_ns) * 2 >= window_ns_) {
      // Least squares on (seconds since the first sample, blocks).
      const double t0 = static_cast<double>(q.front().t_ns);
      double st = 0, sb = 0;
      for (const Sample& s : q) {
        st += (static_cast<double>(s.t_ns) - t0) / 1e9;
        sb += static_cast<double>(s.blocks);
      }
      const double n = static_cast<double>(q.size()), mt = st / n, mb = sb / n;
      double stt = 0, stb = 0;
      for (const Sample& s : q) {
        const double dt = (static_cast<double>(s.t_ns) - t0) / 1e9 - mt;
        stt += dt * dt;
        stb += dt * (static_cast<double>(s.blocks) - mb);
      }
      if (stt > 0) {
        f.ready = true;
        f.blocks_per_second = stb / stt;
        if (f.blocks_per_second < 0) f.exhaustion_seconds = static_cast<double>(f.free_blocks) / -f.blocks_per_second;
      }
    }
    out.push_back(f);
  }
  return out;
}

void forecast_metrics(const std::vector<NodeForecast>& f, uint64_t window_ns, Families& out) {
  const std::string window = format_duration(window_ns, DurationStyle::Exact);
  FamilyBuilder ex("fragd_hugepages_exhaustion_seconds",
                   "Seconds until the node has no free 2 MiB block left at the rate it lost them over the last " +
                       window +
                       " (least-squares slope of its free blocks of order >= 9, made minus consumed; "
                       "forecast.window). Absent for a node that is not losing blocks.",
                   MetricType::Gauge);
  FamilyBuilder rate("fragd_free_hugepage_blocks_rate",
                     "Free 2 MiB blocks gained (> 0) or lost (< 0) per second on the node: the least-squares slope "
                     "over the last " + window + " (forecast.window). Absent until half a window was sampled.",
                     MetricType::Gauge);
  for (const NodeForecast& n : f) {
    if (!n.ready) continue;
    rate.gauge({{"node", node_label(n.node)}}, n.blocks_per_second);
    if (n.blocks_per_second < 0) ex.gauge({{"node", node_label(n.node)}}, n.exhaustion_seconds);
  }
  emit(out, ex, rate);
}

}  // namespace fragd
