// SPDX-License-Identifier: Apache-2.0
#include "concerns/pools/metrics.h"

namespace fragd {

void pool_metrics(const MemSnapshot& mem, Families& out) {
  FamilyBuilder hp("fragd_hugepages",
                   "Hugetlb pool pages per node and size (sysfs): state=\"total\" in the pool, "
                   "state=\"free\" of them not in use.",
                   MetricType::Gauge);
  for (const auto& p : mem.hugepages) {
    const std::string size = std::to_string(p.size_kib) + "kB";
    hp.gauge({{"node", node_label(p.node)}, {"size", size}, {"state", "total"}}, p.total);
    hp.gauge({{"node", node_label(p.node)}, {"size", size}, {"state", "free"}}, p.free);
  }
  emit(out, hp);
}

void pool_target_metrics(const std::vector<PoolGauge>& targets, Families& out) {
  FamilyBuilder tg("fragd_hugepages_target",
                   "Act mode: the pool size the policy (hugepages.pools) or `fragctl pool set` asks for, per "
                   "node (\"all\": the global pool) and size.",
                   MetricType::Gauge);
  for (const auto& t : targets)
    tg.gauge({{"node", node_label(t.node)}, {"size", std::to_string(t.size_kib) + "kB"}}, t.target);
  if (!targets.empty()) emit(out, tg);
}

}  // namespace fragd
