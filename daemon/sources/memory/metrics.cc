// SPDX-License-Identifier: Apache-2.0
#include "sources/memory/metrics.h"

#include "sources/memory/score.h"

namespace fragd {

void memory_metrics(const MemSnapshot& mem, Families& out) {
  FamilyBuilder zs("fragd_zone_fragmentation_score_percent",
                   "The kernel's fragmentation score of a zone (extfrag_for_order at order 9): percent of free "
                   "memory not in free blocks of 2 MiB or more. 0 = unfragmented, 100 = no free 2 MiB block.",
                   MetricType::Gauge);
  FamilyBuilder fbk("fragd_free_blocks", "Free blocks of each order (/proc/buddyinfo).", MetricType::Gauge);
  FamilyBuilder ufi("fragd_unusable_free_index_ratio",
                    "The kernel's unusable free space index: fraction of free memory unusable for an "
                    "allocation of this order.",
                    MetricType::Gauge);
  FamilyBuilder pb("fragd_pageblocks", "Pageblocks of each migratetype (/proc/pagetypeinfo).", MetricType::Gauge);
  FamilyBuilder fp("fragd_zone_free_pages", "Free pages in the zone (from /proc/buddyinfo).", MetricType::Gauge);
  for (const auto& z : mem.zones) {
    if (z.present_pages == 0) continue;  // empty zones (Movable, Device) carry nothing
    const std::string n = node_label(z.node);
    zs.gauge({{"node", n}, {"zone", z.zone}}, zone_score(z));
    const auto ui = unusable_index(z);
    for (size_t o = 0; o < z.free_blocks.size(); o++) {
      fbk.gauge({{"node", n}, {"zone", z.zone}, {"order", std::to_string(o)}}, z.free_blocks[o]);
      if (o < ui.size()) ufi.gauge({{"node", n}, {"zone", z.zone}, {"order", std::to_string(o)}}, ui[o]);
    }
    fp.gauge({{"node", n}, {"zone", z.zone}}, buddy_free_pages(z));
    for (const auto& [mt, count] : z.pageblocks)
      pb.gauge({{"node", n}, {"zone", z.zone}, {"migratetype", mt}}, count);
  }
  emit(out, zs, fbk, ufi, pb, fp);

  FamilyBuilder ns("fragd_node_fragmentation_score_percent",
                   "The kernel's node fragmentation score (what proactive compaction compares with its "
                   "thresholds), percent 0..100: zone scores weighted by present pages.",
                   MetricType::Gauge);
  for (const auto& s : node_scores(mem.zones)) ns.gauge({{"node", node_label(s.node)}}, s.score);
  emit(out, ns);

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

}

}  // namespace fragd
