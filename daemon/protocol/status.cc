// SPDX-License-Identifier: Apache-2.0
#include "protocol/status.h"

#include <nlohmann/json.hpp>

#include "base/text.h"
#include "protocol/wire.h"

namespace fragd {
namespace {

using json = nlohmann::json;
using namespace wire;

// An optional array member, each entry an object read by `read`.
template <class T, class F>
std::optional<std::vector<T>> opt_objects(const json& obj, const char* key, const std::string& where,
                                          const std::string& entry, F read) {
  const json* a = opt_member(obj, key, json::value_t::array, where);
  if (!a) return std::nullopt;
  std::vector<T> out;
  for (const auto& e : *a) {
    if (!e.is_object()) malformed("an entry of \"" + entry + "\" is not an object");
    out.push_back(read(e));
  }
  return out;
}

std::optional<std::map<std::string, uint64_t>> opt_counts(const json& obj, const char* key,
                                                           const std::string& where) {
  const json* m = opt_member(obj, key, json::value_t::object, where);
  if (!m) return std::nullopt;
  std::map<std::string, uint64_t> out;
  for (auto it = m->begin(); it != m->end(); ++it) {
    if (!is_u64(it.value())) malformed(where + ": " + key + "." + it.key() + " is not a non-negative integer");
    out[it.key()] = to_u64(it.value());
  }
  return out;
}

ZoneStatus read_zone(const json& z, const std::string& node) {
  ZoneStatus r;
  r.zone = opt_str(z, "zone", node + ": zone");
  const std::string w = node + ": zone " + printable(r.zone.value_or("-"));
  r.present_pages = opt_u64(z, "present_pages", w);
  r.free_pages = opt_u64(z, "free_pages", w);
  r.score = opt_u64(z, "score", w);
  if (const json* fb = opt_member(z, "free_blocks", json::value_t::array, w)) {
    r.free_blocks.emplace();
    for (size_t o = 0; o < fb->size(); ++o) {
      if (!is_u64((*fb)[o])) malformed(w + strf(": free_blocks[%zu] is not a non-negative integer", o));
      r.free_blocks->push_back(to_u64((*fb)[o]));
    }
  }
  if (const json* ui = opt_member(z, "unusable_index", json::value_t::array, w)) {
    r.unusable_index.emplace();
    for (size_t o = 0; o < ui->size(); ++o) {
      if (!(*ui)[o].is_number()) malformed(w + strf(": unusable_index[%zu] is not a number", o));
      r.unusable_index->push_back((*ui)[o].get<double>());
    }
  }
  r.pageblocks = opt_counts(z, "pageblocks", w);
  return r;
}

NodeStatus read_node(const json& n) {
  NodeStatus r;
  r.node = opt_u64(n, "node", "node");
  const std::string w = "node " + (r.node ? std::to_string(*r.node) : std::string("-"));
  r.score = opt_u64(n, "score", w);
  r.present_pages = opt_u64(n, "present_pages", w);
  r.zones = opt_objects<ZoneStatus>(n, "zones", w, "zones", [&](const json& z) { return read_zone(z, w); });
  r.hugepages = opt_objects<HugepagePoolStatus>(n, "hugepages", w, "hugepages", [&](const json& p) {
    return HugepagePoolStatus{opt_u64(p, "size_kib", w + ": hugepages"), opt_u64(p, "total", w + ": hugepages"),
                              opt_u64(p, "free", w + ": hugepages")};
  });
  return r;
}

ScanSummary read_scan(const json& s) {
  ScanSummary r;
  r.age_ns = opt_u64(s, "age_ns", "scan");
  r.duration_ns = opt_u64(s, "duration_ns", "scan");
  r.zones = opt_objects<ScanZoneSummary>(s, "zones", "scan", "scan.zones", [](const json& z) {
    ScanZoneSummary zs;
    zs.node = opt_u64(z, "node", "scan.zones");
    zs.zone = opt_str(z, "zone", "scan.zones");
    zs.counts = opt_counts(z, "counts", "scan.zones");
    if (const json* h = opt_member(z, "hugepages", json::value_t::object, "scan.zones")) {
      zs.hugepages_free = opt_u64(*h, "free", "hugepages");
      zs.hugepages_compaction = opt_u64(*h, "compaction", "hugepages");
      zs.hugepages_polluted = opt_u64(*h, "polluted", "hugepages");
    }
    zs.compaction_cost_pages = opt_u64(z, "compaction_cost_pages", "scan.zones");
    zs.blocks = opt_u64(z, "blocks", "scan.zones");
    zs.sample_blocks = opt_u64(z, "sample_blocks", "scan.zones");
    if (const json* h = opt_member(z, "hugepages", json::value_t::object, "scan.zones")) {
      zs.compaction_lower = opt_u64(*h, "compaction_lower", "hugepages");
      zs.compaction_upper = opt_u64(*h, "compaction_upper", "hugepages");
    }
    return zs;
  });
  r.sampled = opt_bool(s, "sampled", "scan");
  r.map_age_ns = opt_u64(s, "map_age_ns", "scan");
  return r;
}

template <class T>
json objects(const std::vector<T>& v, json (*one)(const T&)) {
  json a = json::array();
  for (const auto& e : v) a.push_back(one(e));
  return a;
}

json zone_json(const ZoneStatus& z) {
  json j = json::object();
  put(j, "zone", z.zone);
  put(j, "present_pages", z.present_pages);
  put(j, "free_pages", z.free_pages);
  put(j, "score", z.score);
  put(j, "free_blocks", z.free_blocks);
  put(j, "unusable_index", z.unusable_index);
  put(j, "pageblocks", z.pageblocks);
  return j;
}

json node_json(const NodeStatus& n) {
  json j = json::object();
  put(j, "node", n.node);
  put(j, "score", n.score);
  put(j, "present_pages", n.present_pages);
  if (n.zones) j["zones"] = objects(*n.zones, zone_json);
  if (n.hugepages)
    j["hugepages"] = objects<HugepagePoolStatus>(*n.hugepages, [](const HugepagePoolStatus& p) {
      json h = json::object();
      put(h, "size_kib", p.size_kib);
      put(h, "total", p.total);
      put(h, "free", p.free);
      return h;
    });
  return j;
}

json scan_json(const ScanSummary& s) {
  json j = json::object();
  put(j, "age_ns", s.age_ns);
  put(j, "duration_ns", s.duration_ns);
  if (s.zones)
    j["zones"] = objects<ScanZoneSummary>(*s.zones, [](const ScanZoneSummary& z) {
      json e = json::object();
      put(e, "node", z.node);
      put(e, "zone", z.zone);
      put(e, "counts", z.counts);
      json h = json::object();
      put(h, "free", z.hugepages_free);
      put(h, "compaction", z.hugepages_compaction);
      put(h, "polluted", z.hugepages_polluted);
      put(h, "compaction_lower", z.compaction_lower);
      put(h, "compaction_upper", z.compaction_upper);
      if (!h.empty()) e["hugepages"] = std::move(h);
      put(e, "compaction_cost_pages", z.compaction_cost_pages);
      put(e, "blocks", z.blocks);
      put(e, "sample_blocks", z.sample_blocks);
      return e;
    });
  put(j, "sampled", s.sampled);
  put(j, "map_age_ns", s.map_age_ns);
  return j;
}

}  // namespace

void to_json(json& j, const StatusReply& s) {
  j = json{{"ok", true}};
  put(j, "version", s.version);
  put(j, "withheld", s.withheld);
  put(j, "pid", s.pid);
  put(j, "tick_ns", s.tick_ns);
  j["nodes"] = objects(s.nodes, node_json);
  if (s.programs)
    j["programs"] = objects<ProgramStatus>(*s.programs, [](const ProgramStatus& p) {
      json e = json::object();
      put(e, "name", p.name);
      put(e, "tracepoint", p.tracepoint);
      put(e, "attached", p.attached);
      put(e, "id", p.id);
      put(e, "error", p.error);
      return e;
    });
  put(j, "warnings", s.warnings);
  put(j, "events_dropped", s.events_dropped);
  if (s.compaction)
    j["compaction"] = objects<CompactionRuns>(*s.compaction, [](const CompactionRuns& c) {
      json e = json::object();
      put(e, "trigger", c.trigger);
      put(e, "runs", c.runs);
      put(e, "pages_migrated", c.pages_migrated);
      put(e, "pages_failed", c.pages_failed);
      put(e, "seconds", c.seconds);
      return e;
    });
  if (s.allocations) {
    json a = json::object();
    put(a, "mode", s.allocations->mode);
    put(a, "counting", s.allocations->counting);
    put(a, "counting_seconds", s.allocations->counting_seconds);
    put(a, "hold_ns", s.allocations->hold_ns);
    put(a, "free_blocks_threshold", s.allocations->free_blocks_threshold);
    j["allocations"] = std::move(a);
  }
  // fragd always says whether it tracks pollution and has a scan: null when not.
  j["pollution"] = s.pollution ? json(*s.pollution) : json(nullptr);
  j["scan"] = s.scan ? scan_json(*s.scan) : json(nullptr);
  if (s.policy) {
    const PolicyStatus& p = *s.policy;
    json e = json::object();
    put(e, "mode", p.mode);
    put(e, "dry_run", p.dry_run);
    put(e, "method", p.method);
    put(e, "source", p.source);
    put(e, "reloads", p.reloads);
    put(e, "reload_errors", p.reload_errors);
    put(e, "proactiveness_raised", p.proactiveness_raised);
    put(e, "budget_used_ns", p.budget_used_ns);
    put(e, "budget_ns", p.budget_ns);
    put(e, "budget_cuts", p.budget_cuts);
    j["policy"] = std::move(e);
  }
  if (s.policy_nodes)
    j["policy_nodes"] = objects<PolicyNodeStatus>(*s.policy_nodes, [](const PolicyNodeStatus& n) {
      json e = json::object();
      put(e, "node", n.node);
      put(e, "score", n.score);
      put(e, "hot", n.hot);
      e["floor"] = n.floor ? json(*n.floor) : json(nullptr);
      put(e, "misses", n.misses);
      put(e, "waiting", n.waiting);
      put(e, "next_allowed_in_ns", n.next_allowed_in_ns);
      return e;
    });
  if (s.pools)
    j["pools"] = objects<PoolStatus>(*s.pools, [](const PoolStatus& p) {
      json e = json::object();
      put(e, "node", p.node);
      put(e, "size_kib", p.size_kib);
      put(e, "target", p.target);
      put(e, "reached", p.reached);
      put(e, "manual", p.manual);
      put(e, "last_result", p.last_result);
      return e;
    });
  if (s.action_running) j["action_running"] = *s.action_running ? json(**s.action_running) : json(nullptr);
  if (s.actions) j["actions"] = *s.actions;
}

void from_json(const json& a, StatusReply& s) {
  s = StatusReply{};
  s.version = opt_str(a, "version", "status");
  s.withheld = opt_str(a, "withheld", "status");
  s.pid = opt_u64(a, "pid", "status");
  s.tick_ns = opt_u64(a, "tick_ns", "status");
  auto nodes = a.find("nodes");
  if (nodes == a.end() || !nodes->is_array()) malformed("no \"nodes\" array");
  for (const auto& n : *nodes) {
    if (!n.is_object()) malformed("an entry of \"nodes\" is not an object");
    s.nodes.push_back(read_node(n));
  }
  s.programs = opt_objects<ProgramStatus>(a, "programs", "status", "programs", [](const json& p) {
    ProgramStatus r;
    r.name = opt_str(p, "name", "programs");
    const std::string w = "programs: " + printable(r.name.value_or("?"));
    r.tracepoint = opt_str(p, "tracepoint", w);
    auto at = p.find("attached");
    if (at != p.end() && !at->is_boolean())
      malformed("programs: \"attached\" of " + printable(r.name.value_or("?")) + " is not a boolean");
    r.attached = opt_bool(p, "attached", w);
    r.id = opt_u64(p, "id", w);
    r.error = opt_str(p, "error", w);
    return r;
  });
  if (const json* w = opt_member(a, "warnings", json::value_t::array, "status")) {
    s.warnings.emplace();
    for (const auto& x : *w) {
      if (!x.is_string()) malformed("an entry of \"warnings\" is not a string");
      s.warnings->push_back(x.get<std::string>());
    }
  }
  s.events_dropped = opt_u64(a, "events_dropped", "status");
  s.compaction = opt_objects<CompactionRuns>(a, "compaction", "status", "compaction", [](const json& c) {
    return CompactionRuns{opt_str(c, "trigger", "compaction"), opt_u64(c, "runs", "compaction"),
                          opt_u64(c, "pages_migrated", "compaction"), opt_u64(c, "pages_failed", "compaction"),
                          opt_double(c, "seconds", "compaction")};
  });
  if (const json* al = opt_member(a, "allocations", json::value_t::object, "status")) {
    AllocationCounting c;
    c.mode = opt_str(*al, "mode", "allocations");
    c.counting = opt_bool(*al, "counting", "allocations");
    c.counting_seconds = opt_double(*al, "counting_seconds", "allocations");
    c.hold_ns = opt_u64(*al, "hold_ns", "allocations");
    c.free_blocks_threshold = opt_u64(*al, "free_blocks_threshold", "allocations");
    s.allocations = c;
  }
  if (const json* p = opt_member(a, "pollution", json::value_t::object, "status")) s.pollution = p->get<PollutionInfo>();
  if (const json* sc = opt_member(a, "scan", json::value_t::object, "status")) s.scan = read_scan(*sc);
  if (const json* p = opt_member(a, "policy", json::value_t::object, "status")) {
    const std::string w = "policy";
    PolicyStatus r;
    r.mode = opt_str(*p, "mode", w);
    r.dry_run = opt_bool(*p, "dry_run", w);
    r.method = opt_str(*p, "method", w);
    r.source = opt_str(*p, "source", w);
    r.reloads = opt_u64(*p, "reloads", w);
    r.reload_errors = opt_u64(*p, "reload_errors", w);
    r.proactiveness_raised = opt_bool(*p, "proactiveness_raised", w);
    r.budget_used_ns = opt_u64(*p, "budget_used_ns", w);
    r.budget_ns = opt_u64(*p, "budget_ns", w);
    r.budget_cuts = opt_u64(*p, "budget_cuts", w);
    s.policy = r;
  }
  s.policy_nodes = opt_objects<PolicyNodeStatus>(a, "policy_nodes", "status", "policy_nodes", [](const json& n) {
    PolicyNodeStatus r;
    r.node = opt_i64(n, "node", "policy_nodes");
    const std::string w = "policy_nodes: node " + (r.node ? std::to_string(*r.node) : std::string("-"));
    r.score = opt_u64(n, "score", w);
    r.hot = opt_bool(n, "hot", w);
    r.floor = opt_u64(n, "floor", w);
    r.misses = opt_u64(n, "misses", w);
    r.waiting = opt_str(n, "waiting", w);
    r.next_allowed_in_ns = opt_u64(n, "next_allowed_in_ns", w);
    return r;
  });
  s.pools = opt_objects<PoolStatus>(a, "pools", "status", "pools", [](const json& p) {
    PoolStatus r;
    r.node = opt_i64(p, "node", "pools");
    r.size_kib = opt_u64(p, "size_kib", "pools");
    r.target = opt_u64(p, "target", "pools");
    r.reached = opt_u64(p, "reached", "pools");
    r.manual = opt_bool(p, "manual", "pools");
    r.last_result = opt_str(p, "last_result", "pools");
    return r;
  });
  if (auto it = a.find("action_running"); it != a.end()) {
    s.action_running.emplace();
    if (!it->is_null()) *s.action_running = it->get<ActionSummary>();
  }
  if (const json* acts = opt_member(a, "actions", json::value_t::array, "status")) {
    s.actions.emplace();
    for (const auto& o : *acts) {
      try {
        s.actions->push_back(o.get<ActionReport>());
      } catch (const Malformed& m) {
        malformed("actions: " + m.what);
      }
    }
  }
}

}  // namespace fragd
