// SPDX-License-Identifier: Apache-2.0
#include "fragd/concerns/memory.h"

#include <map>

#include "base/text.h"
#include "sources/memory/score.h"

namespace fragd {

MemoryConcern::MemoryConcern(Shared& sh)
    : sh_(sh),
      files_(sh.cfg.proc_root, sh.cfg.sys_root, sh.cfg.tick_ns, sh.cfg.pagetypeinfo_ns, sh.self.collect_errors_files),
      forecast_(sh.cfg.forecast_window_ns) {
  if (auto f = read_machine_facts(sh_.cfg.proc_root, sh_.cfg.sys_root)) sh_.facts = *f;
  else log_warn(f.error().message);
}

void MemoryConcern::tick(uint64_t now) {
  if (!files_.tick(now, sh_.last_mem)) return;
  forecast_.observe(now, sh_.last_mem->zones);
  // The act engine's forecast trigger reads it each tick; the metrics fit it at a scrape.
  if (sh_.cfg.policy.act && sh_.cfg.policy.compaction.forecast.enabled) sh_.forecast = forecast_.forecast();
  else sh_.forecast.clear();
  check_nodes();
}

// Nodes come and go with the zones of the snapshot (a node taken offline,
// memory hot-removed): each change is logged once, and the machine facts (the
// nodes `fragctl compact --node` and `pool set --node` may name) are read
// again. The engine forgets a node missing from its observation, so fragd
// does not act on it, and its metrics go with its zones.
void MemoryConcern::check_nodes() {
  if (auto change = nodes_.update(sh_.last_mem->zones)) {
    for (int n : change->gone)
      log_warn("node " + std::to_string(n) + " went offline (no populated zone in " + sh_.cfg.proc_root +
               "/zoneinfo): its metrics are gone and fragd does not act on it");
    for (int n : change->came) log_info("node " + std::to_string(n) + " is online");
    facts_stale_ = true;
  }
  if (!facts_stale_ || !files_.faults().due("nodes", now_ns())) return;
  if (auto f = read_machine_facts(sh_.cfg.proc_root, sh_.cfg.sys_root)) {
    sh_.facts = *f;
    facts_stale_ = true;
    if (files_.faults().ok("nodes", now_ns())) log_info("the node list under " + sh_.cfg.sys_root + " reads again");
  } else {
    sh_.self.collect_errors_files["nodes"]++;
    if (files_.faults().failed("nodes", errno_name(f.error().err), now_ns()))
      log_warn(f.error().message + " (fragctl requests naming a node are checked against the last good read)");
  }
}

void MemoryConcern::metrics(ExportFrame& f) {
  f.mem = sh_.last_mem ? &*sh_.last_mem : nullptr;
  // The tick fitted it already when the forecast trigger reads it (the samples change only at a tick).
  forecast_now_ = sh_.cfg.policy.act && sh_.cfg.policy.compaction.forecast.enabled ? sh_.forecast : forecast_.forecast();
  f.forecast = &forecast_now_;
  f.forecast_window_ns = forecast_.window_ns();
}

void MemoryConcern::status(StatusReply& r) const {
  if (!sh_.last_mem) return;
  const MemSnapshot& mem = *sh_.last_mem;
  std::map<int, NodeStatus> by_node;
  for (const auto& ns : node_scores(mem.zones)) {
    NodeStatus& n = by_node[ns.node];
    n.node = static_cast<uint64_t>(ns.node);
    n.score = ns.score;
    n.present_pages = ns.present_pages;
    n.zones.emplace();
    n.hugepages.emplace();
  }
  for (const auto& z : mem.zones) {
    if (z.present_pages == 0 || !by_node.count(z.node)) continue;
    ZoneStatus zs;
    zs.zone = z.zone;
    zs.present_pages = z.present_pages;
    zs.free_pages = buddy_free_pages(z);
    zs.score = zone_score(z);
    zs.free_blocks = std::vector<uint64_t>(z.free_blocks.begin(), z.free_blocks.end());
    const auto ui = unusable_index(z);
    zs.unusable_index = std::vector<double>(ui.begin(), ui.end());
    zs.pageblocks = std::map<std::string, uint64_t>(z.pageblocks.begin(), z.pageblocks.end());
    by_node[z.node].zones->push_back(std::move(zs));
  }
  for (const auto& p : mem.hugepages)
    if (by_node.count(p.node)) by_node[p.node].hugepages->push_back({p.size_kib, p.total, p.free});
  for (auto& [n, node] : by_node) r.nodes.push_back(std::move(node));
  if (!mem.warnings.empty()) r.warnings = mem.warnings;
}

void MemoryConcern::reload() {
  forecast_.set_window(sh_.cfg.forecast_window_ns);
  if (auto f = read_machine_facts(sh_.cfg.proc_root, sh_.cfg.sys_root)) sh_.facts = *f;
}

}  // namespace fragd
