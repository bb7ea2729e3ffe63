#include "fragd/views.h"

#include <unistd.h>

#include <cstring>
#include <map>

#include "sources/memory/score.h"
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
    json j = {{"name", p.name}, {"tracepoint", p.tracepoint}, {"attached", p.attached}, {"id", p.id}};
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

namespace fragd {

json request_json(const ActionRequest& r) {
  return {{"id", r.id},
          {"action", action_name(r.kind)},
          {"trigger", trigger_label(r.trigger)},
          {"node", r.node},
          {"reason", r.reason},
          {"size_kib", r.size_kib},
          {"target", r.target}};
}

json outcome_json(const ActionOutcome& o, uint64_t mono_now, uint64_t real_now) {
  json j = request_json(o.req);
  const uint64_t age = mono_now > o.start_ns ? mono_now - o.start_ns : 0;
  j["result"] = o.result;
  j["detail"] = o.detail;
  j["start_unix_ns"] = real_now > age ? real_now - age : 0;
  j["duration_ns"] = o.end_ns > o.start_ns ? o.end_ns - o.start_ns : 0;
  j["score_before"] = o.score_before;
  j["score_after"] = o.score_after;
  j["blocks_before"] = o.blocks_before;
  j["blocks_after"] = o.blocks_after;
  j["pages_migrated"] = o.pages_migrated;
  j["pool_before"] = o.pool_before;
  j["pool_after"] = o.pool_after;
  if (o.req.kind == ActionKind::Pool) {
    j["attempts"] = o.attempts;
    j["compactions"] = o.compactions;
  }
  return j;
}

std::string outcome_line(const ActionOutcome& o) {
  const ActionRequest& r = o.req;
  char dur[32];
  std::snprintf(dur, sizeof(dur), "%.2f s", (o.end_ns > o.start_ns ? o.end_ns - o.start_ns : 0) / 1e9);
  std::string s = "action " + std::to_string(r.id) + " " + action_name(r.kind);
  if (r.kind == ActionKind::Pool) s += " " + std::to_string(r.size_kib) + "kB";
  s += r.node < 0 ? std::string(" (global)") : " node " + std::to_string(r.node);
  s += " [" + std::string(trigger_label(r.trigger)) + ": " + r.reason + "]: " + o.result;
  if (r.kind == ActionKind::Compact && o.score_before >= 0) {
    s += ", score " + std::to_string(o.score_before);
    if (o.score_after >= 0) s += " -> " + std::to_string(o.score_after);
    s += ", " + std::to_string(o.pages_migrated) + " pages migrated";
  }
  if (r.kind == ActionKind::Pool)
    s += ", pool " + std::to_string(o.pool_before) + " -> " + std::to_string(o.pool_after) + " (target " +
         std::to_string(r.target) + "), " + std::to_string(o.attempts) + " writes, " +
         std::to_string(o.compactions) + " compactions";
  if (r.kind == ActionKind::RaiseProactiveness) s += ", vm.compaction_proactiveness=" + std::to_string(r.proactiveness);
  s += ", " + std::string(dur);
  if (!o.detail.empty()) s += ": " + o.detail;
  return s;
}

nlohmann::json scan_json(const ScanResult& r, uint64_t real_now) {
  nlohmann::json zones = nlohmann::json::array();
  for (const auto& z : r.zones) {
    std::string classes(z.blocks.size(), ' ');
    std::vector<uint16_t> used(z.blocks.size());
    for (size_t i = 0; i < z.blocks.size(); i++) {
      classes[i] = block_class_char(z.blocks[i].cls);
      used[i] = z.blocks[i].used;
    }
    nlohmann::json counts;
    for (size_t c = 0; c < kBlockClasses; c++) counts[block_class_name(static_cast<BlockClass>(c))] = z.counts[c];
    zones.push_back({{"node", z.node},
                     {"zone", z.zone},
                     {"start_pfn", z.start_pfn},
                     {"end_pfn", z.end_pfn},
                     {"first_block", z.first_block},
                     {"classes", std::move(classes)},
                     {"used", std::move(used)},
                     {"counts", std::move(counts)},
                     {"free_pages", z.free_pages},
                     {"hugepages",
                      {{"free", z.hugepages_free},
                       {"compaction", z.hugepages_compaction},
                       {"polluted", z.hugepages_polluted}}},
                     {"compaction_cost_pages", z.compaction_cost_pages}});
  }
  return {{"time_ns", r.wall_time_ns},
          {"age_ns", real_now > r.wall_time_ns ? real_now - r.wall_time_ns : 0},
          {"duration_ns", r.duration_ns},
          {"pageblock_order", r.pageblock_order},
          {"pages_read", r.pages_read},
          {"zones", std::move(zones)}};
}

nlohmann::json pollution_json(const PollutionCounters& c, const PollutionSummary& s, bool with_blocks) {
  nlohmann::json top = nlohmann::json::array();
  for (const auto& t : s.top)
    top.push_back({{"comm", t.comm}, {"cgroup_id", t.cgroup_id}, {"blocks", t.blocks}, {"pages", t.pages}});
  nlohmann::json j = {{"tracked_blocks", s.blocks},
                      {"tracked_pages", s.pages},
                      {"events", c.events},
                      {"untracked_events", c.untracked_events()},
                      {"top", std::move(top)}};
  if (with_blocks) {
    nlohmann::json blocks = nlohmann::json::array();
    for (const auto& b : s.worst)
      blocks.push_back({{"block", b.block},
                        {"node", b.node},
                        {"pages", b.pages},
                        {"events", b.events},
                        {"first_ns", b.first_ns},
                        {"last_ns", b.last_ns},
                        {"pid", b.pid},
                        {"comm", b.comm},
                        {"cgroup_id", b.cgroup_id},
                        {"alloc", migratetype_name(b.alloc_mt)}});
    j["blocks"] = std::move(blocks);
  }
  return j;
}

nlohmann::json scan_summary_json(const ScanResult& r, uint64_t real_now) {
  nlohmann::json zones = nlohmann::json::array();
  for (const auto& z : r.zones) {
    nlohmann::json counts;
    for (size_t c = 0; c < kBlockClasses; c++) counts[block_class_name(static_cast<BlockClass>(c))] = z.counts[c];
    zones.push_back({{"node", z.node},
                     {"zone", z.zone},
                     {"counts", std::move(counts)},
                     {"hugepages",
                      {{"free", z.hugepages_free},
                       {"compaction", z.hugepages_compaction},
                       {"polluted", z.hugepages_polluted}}},
                     {"compaction_cost_pages", z.compaction_cost_pages}});
  }
  return {{"age_ns", real_now > r.wall_time_ns ? real_now - r.wall_time_ns : 0},
          {"duration_ns", r.duration_ns},
          {"zones", std::move(zones)}};
}

}  // namespace fragd
