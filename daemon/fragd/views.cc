#include "fragd/views.h"

#include <unistd.h>

#include <cstring>
#include <map>

#include "core/score.h"
#include "version.h"

namespace fragd {

using nlohmann::json;

json hist_answer(const BpfSnapshot& s, unsigned min_order, uint64_t uptime_ns) {
  json orders = json::array();
  for (unsigned o = min_order; o < FRAGD_NR_ORDERS; o++) {
    const auto& a = s.alloc;
    orders.push_back({
        {"order", o},
        {"fast", a.allocs[o][FRAGD_OUTCOME_FAST]},
        {"stalled", a.allocs[o][FRAGD_OUTCOME_STALLED]},
        {"failed", a.allocs[o][FRAGD_OUTCOME_FAILED]},
        {"phase_ns", {{"compaction", a.phase_ns[o][FRAGD_PHASE_COMPACTION]},
                      {"reclaim", a.phase_ns[o][FRAGD_PHASE_RECLAIM]}}},
        {"stall", {{"success", s.stall[o][FRAGD_RESULT_SUCCESS].to_json()},
                   {"failure", s.stall[o][FRAGD_RESULT_FAILURE].to_json()}}},
    });
  }
  return {{"ok", true},
          {"min_order", min_order},
          {"uptime_ns", uptime_ns},
          {"hist_scheme",
           {{"sub_bits", FRAGD_HIST_SUB_BITS},
            {"min_shift", FRAGD_HIST_MIN_SHIFT},
            {"max_shift", FRAGD_HIST_MAX_SHIFT},
            {"buckets", FRAGD_HIST_BUCKETS}}},
          {"orders", orders}};
}

json status_answer(const MemSnapshot* mem, const BpfSnapshot* bpf, const std::vector<ProgramState>& programs,
                   uint64_t tick_ns) {
  json nodes = json::array();
  if (mem) {
    std::map<int, json> by_node;
    for (const auto& ns : node_scores(mem->zones))
      by_node[ns.node] = {{"node", ns.node}, {"score", ns.score}, {"present_pages", ns.present_pages},
                          {"zones", json::array()}, {"hugepages", json::array()}};
    for (const auto& z : mem->zones) {
      if (z.present_pages == 0 || !by_node.count(z.node)) continue;
      by_node[z.node]["zones"].push_back({{"zone", z.zone},
                                          {"present_pages", z.present_pages},
                                          {"free_pages", buddy_free_pages(z)},
                                          {"score", zone_score(z)},
                                          {"free_blocks", z.free_blocks},
                                          {"unusable_index", unusable_index(z)},
                                          {"pageblocks", z.pageblocks}});
    }
    for (const auto& p : mem->hugepages)
      if (by_node.count(p.node))
        by_node[p.node]["hugepages"].push_back({{"size_kib", p.size_kib}, {"total", p.total}, {"free", p.free}});
    for (auto& [n, j] : by_node) nodes.push_back(std::move(j));
  }
  json progs = json::array();
  for (const auto& p : programs) {
    json j = {{"name", p.name}, {"tracepoint", p.tracepoint}, {"attached", p.attached}};
    if (!p.attached) j["error"] = p.error;
    progs.push_back(std::move(j));
  }
  json answer = {{"ok", true},       {"version", FRAGD_VERSION}, {"pid", getpid()},
                 {"tick_ns", tick_ns}, {"nodes", nodes},           {"programs", progs}};
  if (mem && !mem->warnings.empty()) answer["warnings"] = mem->warnings;
  if (bpf) {
    answer["events_dropped"] = bpf->alloc.events_dropped;
    json comp = json::array();
    for (unsigned t = 0; t < FRAGD_NR_TRIGGERS; t++) {
      uint64_t runs = 0;
      for (unsigned s = 0; s < FRAGD_NR_CSTATUS; s++) runs += bpf->compaction.runs[t][s];
      comp.push_back({{"trigger", trigger_name(t)},
                      {"runs", runs},
                      {"pages_migrated", bpf->compaction.pages_migrated[t]},
                      {"pages_failed", bpf->compaction.pages_failed[t]},
                      {"seconds", bpf->compaction_hist[t].sum_ns / 1e9}});
    }
    answer["compaction"] = comp;
  }
  return answer;
}

json trace_event_json(const stall_event& e) {
  // comm is whatever the task set (prctl PR_SET_NAME): keep printable ASCII only.
  std::string comm(e.comm, strnlen(e.comm, sizeof(e.comm)));
  for (char& ch : comm)
    if (ch < 0x20 || ch > 0x7e) ch = '?';
  return {{"ts_ns", e.ts_ns},
          {"pid", e.pid},
          {"tid", e.tid},
          {"comm", comm},
          {"cgroup_id", e.cgroup_id},
          {"order", e.order},
          {"gfp", e.gfp},
          {"duration_ns", e.duration_ns},
          {"compact_ns", e.compact_ns},
          {"reclaim_ns", e.reclaim_ns},
          {"result", result_name(e.result)}};
}

}  // namespace fragd
