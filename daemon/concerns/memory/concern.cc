// SPDX-License-Identifier: Apache-2.0
#include "concerns/memory/concern.h"

#include <map>

#include "base/text.h"
#include "concerns/memory/metrics.h"
#include "concerns/memory/score.h"
#include "concerns/pools/metrics.h"
#include "concerns/thp/metrics.h"

namespace fragd {

MemoryConcern::MemoryConcern(Shared& sh)
    : sh_(sh),
      files_(sh.cfg.proc_root, sh.cfg.sys_root, sh.cfg.tick_ns, sh.cfg.pagetypeinfo_ns, collect_errors_),
      forecast_(sh.cfg.forecast_window_ns) {
  if (auto f = read_machine_facts(sh_.cfg.proc_root, sh_.cfg.sys_root)) facts_ = *f;
  else log_warn(f.error().message);
}

void MemoryConcern::tick(const Tick& t) {
  if (!files_.tick(t.now, mem_)) return;
  forecast_.observe(t.now, mem_->zones);
  // The act engine's forecast trigger reads it each tick; the metrics fit it at a scrape.
  if (sh_.cfg.policy.act && sh_.cfg.policy.compaction.forecast.enabled) tick_forecast_ = forecast_.forecast();
  else tick_forecast_.clear();
  check_nodes();
  check_reporting();
}

// A guest with free page reporting hands free blocks to its host within seconds, and the
// first touch of each faults on the host: the blocks the reserve makes ahead of a workload
// fragd does not know of are slow to take when it comes (BENCHMARKS.md "The VM and the
// hugetlb user with compaction.settle"). Said once when the device shows up or goes, and a
// warning while the policy would make such blocks for nobody it knows of. Looked at when the
// device (read every 10 s) or the policy (at a reload) changed.
void MemoryConcern::check_reporting() {
  const auto& rep = mem_->page_reporting;
  const bool changed = rep != reporting_seen_;
  if (!changed && !reporting_due_) return;
  reporting_due_ = false;
  auto describe = [](const PageReporting& d) {
    return d.driver + " " + d.device + ", order " + std::to_string(d.order);
  };
  if (changed) {
    if (rep)
      log_info("free page reporting is on (" + describe(*rep) + "): free blocks of that order go back to the host; "
               "fragd_free_page_reporting_order says so");
    else
      log_info("free page reporting is off (" + describe(*reporting_seen_) + " is gone)");
    reporting_seen_ = rep;
  }
  const Policy& p = sh_.cfg.policy;
  const ReserveGoal& r = p.compaction.reserve;
  const bool reserve = p.act && (r.blocks > 0 || r.memory_percent > 0);
  const bool handed_back = rep && (rep->order < 0 || static_cast<unsigned>(rep->order) <= r.order);
  const std::string key = "page reporting under the reserve";
  if (reserve && handed_back && p.hugepages.pools.empty())
    sh_.warn.once(key, "free page reporting is on (" + describe(*rep) +
                           ") and compaction.reserve keeps free blocks of order " + std::to_string(r.order) +
                           " ready: this guest hands them to its host while they wait, and a workload's first "
                           "touch of each then faults on the host (a hugetlb-backed VM took 11.0 s to allocate "
                           "4 GiB from such blocks, 0.58 s from a held pool). Name the workload's pool in "
                           "hugepages.pools (" + sh_.cfg.source +
                           "): fragd then holds its pages; docs/configuration.md \"On a VM guest with free page "
                           "reporting\"");
  else
    sh_.warn.cleared(key, "the reserve's blocks are no longer handed to the host unused (free page reporting off, "
                          "a pool named in hugepages.pools, or no reserve)");
}

// Nodes come and go with the zones of the snapshot (a node taken offline,
// memory hot-removed): each change is logged once, and the machine facts (the
// nodes `fragctl compact --node` and `pool set --node` may name) are read
// again. The engine forgets a node missing from its observation, so fragd
// does not act on it, and its metrics go with its zones.
void MemoryConcern::check_nodes() {
  if (auto change = nodes_.update(mem_->zones)) {
    for (int n : change->gone)
      log_warn("node " + std::to_string(n) + " went offline (no populated zone in " + sh_.cfg.proc_root +
               "/zoneinfo): its metrics are gone and fragd does not act on it");
    for (int n : change->came) log_info("node " + std::to_string(n) + " is online");
    facts_stale_ = true;
  }
  if (!facts_stale_ || !files_.faults().due("nodes", now_ns())) return;
  if (auto f = read_machine_facts(sh_.cfg.proc_root, sh_.cfg.sys_root)) {
    facts_ = *f;
    facts_stale_ = false;
    if (files_.faults().ok("nodes", now_ns())) log_info("the node list under " + sh_.cfg.sys_root + " reads again");
  } else {
    collect_errors_["nodes"]++;
    if (files_.faults().failed("nodes", errno_name(f.error().err), now_ns()))
      log_warn(f.error().message + " (fragctl requests naming a node are checked against the last good read)");
  }
}

void MemoryConcern::metrics(const SeriesPlan& plan, const Tick& last, Families& out) {
  // What only the families show (vmstat, the per-size THP statistics) is read now, for them.
  if (mem_) files_.scrape(last.now, *mem_);
  // The tick fitted it already when the forecast trigger reads it (the samples change only at a tick).
  const bool fitted = sh_.cfg.policy.act && sh_.cfg.policy.compaction.forecast.enabled;
  families(snapshot(), fitted ? tick_forecast_ : forecast_.forecast(), forecast_.window_ns(), plan, out);
}

void MemoryConcern::families(const MemSnapshot* mem, const std::vector<NodeForecast>& forecast, uint64_t window_ns,
                             const SeriesPlan& plan, Families& out) {
  if (mem) {
    memory_metrics(*mem, plan, out);
    pool_metrics(*mem, out);
    thp_metrics(*mem, plan, out);
  }
  forecast_metrics(forecast, window_ns, out);
}

void MemoryConcern::status(StatusReply& r, const Tick&) const {
  if (!mem_) return;
  const MemSnapshot& mem = *mem_;
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
  for (const auto& [n, v] : nodes_unreclaimable(mem.zones))
    if (by_node.count(n)) by_node[n].unreclaimable = v;
  for (auto& [n, node] : by_node) r.nodes.push_back(std::move(node));
  VmSettings vm;
  if (auto it = mem.vm_sysctls.find("compaction_proactiveness"); it != mem.vm_sysctls.end())
    vm.compaction_proactiveness = it->second;
  if (auto it = mem.vm_sysctls.find("defrag_mode"); it != mem.vm_sysctls.end()) vm.defrag_mode = it->second;
  r.vm = vm;
  if (!mem.warnings.empty()) r.warnings = mem.warnings;
}

void MemoryConcern::reload() {
  forecast_.set_window(sh_.cfg.forecast_window_ns);
  reporting_due_ = true;  // the policy's reserve or pools may have changed
  if (auto f = read_machine_facts(sh_.cfg.proc_root, sh_.cfg.sys_root)) facts_ = *f;
}

}  // namespace fragd
