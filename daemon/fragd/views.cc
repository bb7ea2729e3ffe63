// SPDX-License-Identifier: Apache-2.0
#include "fragd/views.h"

#include <unistd.h>

#include <cstring>
#include <map>

#include "base/text.h"
#include "sources/memory/score.h"
#include "version.h"

namespace fragd {

HistSnapshot hist_reply(const BpfSnapshot& s, unsigned min_order, uint64_t uptime_ns) {
  HistSnapshot h;
  h.min_order = min_order;
  h.uptime_ns = uptime_ns;
  for (unsigned o = min_order; o < FRAGD_NR_ORDERS; o++) {
    const auto& a = s.alloc;
    OrderStats st;
    st.order = o;
    st.fast = a.allocs[o][FRAGD_OUTCOME_FAST];
    st.stalled = a.allocs[o][FRAGD_OUTCOME_STALLED];
    st.failed = a.allocs[o][FRAGD_OUTCOME_FAILED];
    st.compaction_ns = a.phase_ns[o][FRAGD_PHASE_COMPACTION];
    st.reclaim_ns = a.phase_ns[o][FRAGD_PHASE_RECLAIM];
    st.success = s.stall[o][FRAGD_RESULT_SUCCESS];
    st.failure = s.stall[o][FRAGD_RESULT_FAILURE];
    h.orders.push_back(std::move(st));
  }
  return h;
}

StatusReply status_reply(const MemSnapshot* mem, const BpfSnapshot* bpf, const std::vector<ProgramState>& programs,
                         uint64_t tick_ns) {
  StatusReply r;
  r.version = FRAGD_VERSION;
  r.pid = static_cast<uint64_t>(getpid());
  r.tick_ns = tick_ns;
  if (mem) {
    std::map<int, NodeStatus> by_node;
    for (const auto& ns : node_scores(mem->zones)) {
      NodeStatus& n = by_node[ns.node];
      n.node = static_cast<uint64_t>(ns.node);
      n.score = ns.score;
      n.present_pages = ns.present_pages;
      n.zones.emplace();
      n.hugepages.emplace();
    }
    for (const auto& z : mem->zones) {
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
    for (const auto& p : mem->hugepages)
      if (by_node.count(p.node)) by_node[p.node].hugepages->push_back({p.size_kib, p.total, p.free});
    for (auto& [n, node] : by_node) r.nodes.push_back(std::move(node));
  }
  r.programs.emplace();
  for (const auto& p : programs) {
    ProgramStatus ps{p.name, p.tracepoint, p.attached, p.id, std::nullopt};
    if (!p.attached) ps.error = p.error;
    r.programs->push_back(std::move(ps));
  }
  if (mem && !mem->warnings.empty()) r.warnings = mem->warnings;
  if (bpf) {
    r.events_dropped = bpf->alloc.events_dropped;
    r.compaction.emplace();
    for (unsigned t = 0; t < FRAGD_NR_TRIGGERS; t++) {
      uint64_t runs = 0;
      for (unsigned s = 0; s < FRAGD_NR_CSTATUS; s++) runs += bpf->compaction.runs[t][s];
      r.compaction->push_back({trigger_name(t), runs, bpf->compaction.pages_migrated[t],
                               bpf->compaction.pages_failed[t], bpf->compaction_hist[t].sum_ns / 1e9});
    }
  }
  return r;
}

StallEvent stall_message(const stall_event& e) {
  // comm is whatever the task set (prctl PR_SET_NAME): keep printable ASCII only.
  std::string comm(e.comm, strnlen(e.comm, sizeof(e.comm)));
  for (char& ch : comm)
    if (ch < 0x20 || ch > 0x7e) ch = '?';
  return StallEvent{.ts_ns = e.ts_ns, .pid = e.pid, .tid = e.tid, .cgroup_id = e.cgroup_id, .order = e.order,
                    .gfp = e.gfp, .comm = std::move(comm), .duration_ns = e.duration_ns,
                    .compact_ns = e.compact_ns, .reclaim_ns = e.reclaim_ns, .result = result_name(e.result)};
}

MapView map_reply(const ScanResult& r, const ScanClock& now) {
  MapView v;
  v.scanned = true;
  v.time_ns = r.wall_time_ns;
  v.age_ns = scan_age_ns(r, now);
  v.duration_ns = r.duration_ns;
  v.pageblock_order = r.pageblock_order;
  v.pages_read = r.pages_read;
  for (const auto& z : r.zones) {
    MapZone m;
    m.node = z.node;
    m.zone = z.zone;
    m.start_pfn = z.start_pfn;
    m.end_pfn = z.end_pfn;
    m.first_block = z.first_block;
    for (const auto& b : z.blocks) {
      m.classes.push_back(b.cls);
      m.used.push_back(b.used);
    }
    for (size_t c = 0; c < kBlockClasses; c++) m.counts[c] = z.counts[c];
    m.free_pages = z.free_pages;
    m.hugepages_free = z.hugepages_free;
    m.hugepages_compaction = z.hugepages_compaction;
    m.hugepages_polluted = z.hugepages_polluted;
    m.compaction_cost_pages = z.compaction_cost_pages;
    if (z.sample_blocks < z.blocks.size()) m.sample = MapZone::Sample{z.sample_blocks, z.compaction_ci, z.polluted_ci};
    v.zones.push_back(std::move(m));
  }
  if (r.map_oldest_boot_ns) v.map_age_ns = now.boot_ns > r.map_oldest_boot_ns ? now.boot_ns - r.map_oldest_boot_ns : 0;
  return v;
}

PollutionInfo pollution_info(const PollutionCounters& c, const PollutionSummary& s, bool with_blocks) {
  PollutionInfo p;
  p.tracked_blocks = s.blocks;
  p.tracked_pages = s.pages;
  p.events = c.events;
  p.untracked_events = c.untracked_events();
  // comm is whatever the task set (prctl PR_SET_NAME): any bytes.
  for (const auto& t : s.top) p.top.push_back({utf8_escaped(t.comm), t.cgroup_id, t.blocks, t.pages});
  if (with_blocks) {
    p.blocks.emplace();
    for (const auto& b : s.worst)
      p.blocks->push_back({b.block, static_cast<int>(b.node), b.pages, b.events, b.first_ns, b.last_ns, b.pid,
                           utf8_escaped(b.comm), b.cgroup_id, migratetype_name(b.alloc_mt)});
  }
  return p;
}

ScanSummary scan_summary(const ScanResult& r, const ScanClock& now) {
  ScanSummary s;
  s.age_ns = scan_age_ns(r, now);
  s.duration_ns = r.duration_ns;
  s.zones.emplace();
  for (const auto& z : r.zones) {
    ScanZoneSummary zs;
    zs.node = static_cast<uint64_t>(z.node);
    zs.zone = z.zone;
    zs.counts.emplace();
    for (size_t c = 0; c < kBlockClasses; c++) (*zs.counts)[block_class_name(static_cast<BlockClass>(c))] = z.counts[c];
    zs.hugepages = ScanHugepages{z.hugepages_free, z.hugepages_compaction, z.hugepages_polluted, z.compaction_ci.lo,
                                 z.compaction_ci.hi};
    zs.compaction_cost_pages = z.compaction_cost_pages;
    zs.blocks = z.blocks.size();
    zs.sample_blocks = z.sample_blocks;
    s.zones->push_back(std::move(zs));
  }
  s.sampled = r.sampled;
  if (r.map_oldest_boot_ns) s.map_age_ns = now.boot_ns > r.map_oldest_boot_ns ? now.boot_ns - r.map_oldest_boot_ns : 0;
  return s;
}

std::string unready_programs(const std::vector<ProgramState>& programs, const std::string& allocations) {
  std::string out;
  for (const auto& p : programs)
    if (!p.attached && !(p.per_page && allocations != "exact"))
      out += (out.empty() ? "not attached: " : "; ") + p.name + " (" + p.tracepoint + "): " + p.error;
  return out;
}

TopReply top_reply(const AttributionView* a, const MemSnapshot* mem, uint64_t uptime_ns) {
  TopReply r;
  r.uptime_ns = uptime_ns;
  if (mem) {
    std::map<int, TopNode> nodes;
    for (const auto& s : node_scores(mem->zones)) nodes[s.node] = TopNode{s.node, s.score, 0, 0};
    for (const auto& z : mem->zones) {
      if (z.present_pages == 0) continue;
      TopNode& n = nodes[z.node];
      n.node = z.node;
      n.free_2m += blocks_of_order(z.free_blocks, kCompactionHpageOrder);
      n.free_1g += blocks_of_order(z.free_blocks, kCompactionHpageOrder + 9);
    }
    for (const auto& [_, n] : nodes) r.nodes.push_back(n);
  }
  if (!a) return r;
  r.symbols = a->symbols;
  // A cgroup's name is any bytes but '/' and NUL: escaped as in its /metrics label (base/family.h).
  for (const auto& [cg, x] : a->cgroups) r.cgroups.push_back({utf8_escaped(cg), {x.entries, x.ns}});
  for (const auto& [cs, x] : a->callsites) r.callsites.push_back({cs, {x.entries, x.ns}});
  for (const auto& [k, x] : a->consumers) r.consumers.push_back({k.first, k.second, {x.entries, x.ns}});
  // The 50 stacks with the most stall time (the map holds up to 2048).
  for (size_t i = 0; i < a->stacks.size() && i < 50; i++) {
    const StackView& s = a->stacks[i];
    r.stacks.push_back({s.consumer, s.callsite, s.frames, {s.attr.entries, s.attr.ns}, s.unnamed_frames});
  }
  return r;
}

}  // namespace fragd
