#include "sources/pools/metrics.h"


namespace fragd {


void pool_metrics(const MemSnapshot& m, const std::vector<PoolGauge>& targets, Families& out) {
  const MemSnapshot* mem = &m;
    FamilyBuilder hp("fragd_hugepages", "Hugetlb pool pages per node and size (sysfs).", MetricType::Gauge);
    for (const auto& p : mem->hugepages) {
      const std::string size = std::to_string(p.size_kib) + "kB";
      hp.gauge({{"node", node_label(p.node)}, {"size", size}, {"state", "total"}}, p.total);
      hp.gauge({{"node", node_label(p.node)}, {"size", size}, {"state", "free"}}, p.free);
    }
    for (const auto& t : targets)
      hp.gauge({{"node", t.node < 0 ? "all" : node_label(t.node)},
                {"size", std::to_string(t.size_kib) + "kB"},
                {"state", "target"}},
               t.target);
    emit(out, hp);
}

}  // namespace fragd
