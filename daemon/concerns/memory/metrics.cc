// SPDX-License-Identifier: Apache-2.0
#include "concerns/memory/metrics.h"

#include <map>
#include <string_view>

#include "concerns/memory/score.h"

namespace fragd {

namespace {

// A node's zones as one: free blocks, pageblocks and present pages summed (zone "all"); the
// kernel's free pages in free pageblocks too, when every populated zone of the node says it.
std::vector<ZoneFree> per_node(const std::vector<ZoneFree>& zones) {
  std::map<int, ZoneFree> nodes;
  std::map<int, bool> blocks_unknown;
  for (const auto& z : zones) {
    if (z.present_pages == 0) continue;
    ZoneFree& n = nodes[z.node];
    n.node = z.node;
    n.zone = "all";
    n.present_pages += z.present_pages;
    if (n.free_blocks.size() < z.free_blocks.size()) n.free_blocks.resize(z.free_blocks.size(), 0);
    for (size_t o = 0; o < z.free_blocks.size(); o++) n.free_blocks[o] += z.free_blocks[o];
    for (const auto& [mt, count] : z.pageblocks) n.pageblocks[mt] += count;
    if (z.free_pages_blocks) n.free_pages_blocks = n.free_pages_blocks.value_or(0) + *z.free_pages_blocks;
    else blocks_unknown[z.node] = true;
  }
  std::vector<ZoneFree> out;
  for (auto& [node, n] : nodes) {
    if (blocks_unknown.count(node)) n.free_pages_blocks.reset();
    out.push_back(std::move(n));
  }
  return out;
}

// One family per /proc/vmstat reclaim counter pair, by who reclaimed (kReclaimCounters).
void reclaim_metrics(const MemSnapshot& mem, Families& out) {
  FamilyBuilder scanned("fragd_reclaim_pages_scanned_total",
                        "Pages the kernel's reclaim scanned (/proc/vmstat pgscan_direct, pgscan_kswapd): "
                        "trigger=\"direct\" in allocating tasks that found too little free memory (a stall, beside "
                        "fragd_direct_stall_entries_total{phase=\"reclaim\"}), \"kswapd\" in the background.",
                        MetricType::Counter);
  FamilyBuilder reclaimed("fragd_reclaim_pages_reclaimed_total",
                          "Pages the kernel's reclaim freed (/proc/vmstat pgsteal_direct, pgsteal_kswapd), by the "
                          "same trigger; reclaimed over scanned is reclaim's efficiency.",
                          MetricType::Counter);
  for (const char* counter : kReclaimCounters) {
    const auto it = mem.vmstat.find(counter);
    if (it == mem.vmstat.end()) continue;
    const std::string_view name(counter);  // pgscan_<trigger>, pgsteal_<trigger>
    const std::string trigger(name.substr(name.find('_') + 1));
    (name.starts_with("pgscan_") ? scanned : reclaimed).counter({{"trigger", trigger}}, it->second);
  }
  emit(out, scanned, reclaimed);

  FamilyBuilder psi("fragd_memory_pressure_seconds_total",
                    "Time tasks waited for memory since boot (PSI, /proc/pressure/memory: reclaim, compaction, "
                    "refaults): stalled=\"some\" while at least one task waited, \"full\" while every non-idle "
                    "task did. Absent without PSI (a kernel without CONFIG_PSI, or booted psi=0).",
                    MetricType::Counter);
  if (const auto& p = mem.memory_pressure) {
    psi.counter({{"stalled", "some"}}, static_cast<double>(p->some_us) / 1e6);
    if (p->full_us) psi.counter({{"stalled", "full"}}, static_cast<double>(*p->full_us) / 1e6);
  }
  emit(out, psi);
}

}  // namespace

void memory_metrics(const MemSnapshot& mem, const SeriesPlan& plan, Families& out) {
  const bool by_zone = plan.has(Detail::Zones);
  FamilyBuilder zs("fragd_zone_fragmentation_score_percent",
                   "The kernel's fragmentation score of a zone (extfrag_for_order at order 9): percent of free "
                   "memory not in free blocks of 2 MiB or more. 0 = unfragmented, 100 = no free 2 MiB block. "
                   "Exported with metrics.detail zones (the node score is what decisions read).",
                   MetricType::Gauge);
  FamilyBuilder fbk("fragd_free_blocks",
                    "Free blocks of each order (/proc/buddyinfo), by order group (metrics.orders: order=\"4-8\" "
                    "counts the free blocks of orders 4 to 8), per zone with metrics.detail zones, per node "
                    "(zone=\"all\") otherwise.",
                    MetricType::Gauge);
  FamilyBuilder ufi("fragd_unusable_free_index_ratio",
                    "The kernel's unusable free space index: fraction of free memory unusable for an "
                    "allocation of this order, at the first order of each order group; per zone with "
                    "metrics.detail zones, per node (zone=\"all\", from the node's free blocks) otherwise.",
                    MetricType::Gauge);
  FamilyBuilder pb("fragd_pageblocks",
                   "Pageblocks of each migratetype (/proc/pagetypeinfo), per zone with metrics.detail zones, per "
                   "node (zone=\"all\") otherwise.",
                   MetricType::Gauge);
  FamilyBuilder fp("fragd_zone_free_pages",
                   "Free pages (from /proc/buddyinfo), per zone with metrics.detail zones, per node "
                   "(zone=\"all\") otherwise.",
                   MetricType::Gauge);
  FamilyBuilder fpb("fragd_zone_free_pageblock_pages",
                    "The kernel's own count of free pages in whole free pageblocks (nr_free_pages_blocks in "
                    "/proc/zoneinfo, Linux 6.15+; absent before): free blocks of pageblock order (2 MiB on "
                    "x86-64) and up on the buddy lists, isolated ones left out. Per zone with metrics.detail zones, "
                    "per node (zone=\"all\") otherwise.",
                    MetricType::Gauge);
  const std::vector<ZoneFree> nodes = by_zone ? std::vector<ZoneFree>{} : per_node(mem.zones);
  for (const auto& z : by_zone ? mem.zones : nodes) {
    if (z.present_pages == 0) continue;  // empty zones (Movable, Device) carry nothing
    const std::string n = node_label(z.node);
    if (by_zone) zs.gauge({{"node", n}, {"zone", z.zone}}, zone_score(z));
    const auto ui = unusable_index(z);
    for (const OrderGroup& g : plan.buddy) {
      if (g.first >= z.free_blocks.size()) break;
      double blocks = 0;
      for (unsigned o = g.first; o <= g.last && o < z.free_blocks.size(); o++) blocks += z.free_blocks[o];
      fbk.gauge({{"node", n}, {"zone", z.zone}, {"order", g.label}}, blocks);
      if (g.first < ui.size()) ufi.gauge({{"node", n}, {"zone", z.zone}, {"order", std::to_string(g.first)}}, ui[g.first]);
    }
    fp.gauge({{"node", n}, {"zone", z.zone}}, buddy_free_pages(z));
    if (z.free_pages_blocks) fpb.gauge({{"node", n}, {"zone", z.zone}}, *z.free_pages_blocks);
    for (const auto& [mt, count] : z.pageblocks)
      pb.gauge({{"node", n}, {"zone", z.zone}, {"migratetype", mt}}, count);
  }
  if (by_zone) emit(out, zs);
  emit(out, fbk, ufi, pb, fp, fpb);

  FamilyBuilder ns("fragd_node_fragmentation_score_percent",
                   "The kernel's node fragmentation score (what proactive compaction compares with its "
                   "thresholds), percent 0..100: zone scores weighted by present pages.",
                   MetricType::Gauge);
  for (const auto& s : node_scores(mem.zones)) ns.gauge({{"node", node_label(s.node)}}, s.score);
  emit(out, ns);

  FamilyBuilder nu("fragd_node_unreclaimable",
                   "1 when kswapd has given up reclaiming the node (node_unreclaimable in /proc/zoneinfo; it is "
                   "then no longer woken). The pageblock skip hints compaction leaves stay set until kswapd "
                   "sleeps again, so direct compactions at costly orders may pass over every block and "
                   "huge-page allocations fail with free memory left. Absent where the kernel does not say.",
                   MetricType::Gauge);
  for (const auto& [node, v] : nodes_unreclaimable(mem.zones)) nu.gauge({{"node", node_label(node)}}, v ? 1 : 0);
  emit(out, nu);

  // Absent where the kernel has no such file; fragd reads them, never writes defrag_mode.
  FamilyBuilder pro("fragd_vm_compaction_proactiveness",
                    "vm.compaction_proactiveness as read each tick (0..100): how hard kcompactd compacts in the "
                    "background; fragd raises it only with compaction.method proactiveness.",
                    MetricType::Gauge);
  FamilyBuilder dm("fragd_vm_defrag_mode",
                   "vm.defrag_mode as read each tick (Linux 6.15+; absent before): 1 = the kernel keeps pageblocks "
                   "from mixing and compacts ahead to the high watermark. fragd never changes it.",
                   MetricType::Gauge);
  if (auto it = mem.vm_sysctls.find("compaction_proactiveness"); it != mem.vm_sysctls.end()) pro.gauge({}, it->second);
  if (auto it = mem.vm_sysctls.find("defrag_mode"); it != mem.vm_sysctls.end()) dm.gauge({}, it->second);
  emit(out, pro, dm);

  FamilyBuilder rep("fragd_free_page_reporting_order",
                    "Present on a VM guest whose free page reporting is on (a bound virtio-balloon device that "
                    "negotiated it, or hv_balloon): the guest hands free blocks of this order and up to its host, "
                    "and the next touch of each faults on the host. -1: the kernel does not say the order.",
                    MetricType::Gauge);
  if (mem.page_reporting) rep.gauge({{"driver", mem.page_reporting->driver}}, mem.page_reporting->order);
  emit(out, rep);
  reclaim_metrics(mem, out);

}

}  // namespace fragd
