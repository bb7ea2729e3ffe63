#include "policy/config.h"

#include "policy/values.h"

#include <grp.h>

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

namespace fragd {
using namespace values;
using config_detail::parse_compaction;
using config_detail::parse_hugepages;

Result<uint64_t> parse_duration_ns(const std::string& text) {
  double v = 0;
  const char* b = text.data();
  const char* e = text.data() + text.size();
  auto [p, ec] = std::from_chars(b, e, v);
  if (ec != std::errc() || p == b || v < 0 || !std::isfinite(v))
    return make_error("expected a duration like 1s, 500ms, 250us, got '" + text + "'", EINVAL);
  const std::string unit(p, e);
  double mult = 0;
  if (unit.empty() || unit == "s") mult = 1e9;
  else if (unit == "ms") mult = 1e6;
  else if (unit == "us") mult = 1e3;
  else if (unit == "ns") mult = 1;
  else if (unit == "m") mult = 60e9;
  else if (unit == "h") mult = 3600e9;
  else
    return make_error("unknown duration unit '" + unit + "' in '" + text + "' (use ns, us, ms, s, m or h)",
                      EINVAL);
  const double ns = v * mult;
  if (ns > 1e18) return make_error("duration '" + text + "' is too large", EINVAL);
  return static_cast<uint64_t>(std::llround(ns));
}


Result<void> check_listen_address(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return make_error("listen address '" + text + "' is not ADDR:PORT (e.g. 127.0.0.1:9717)", EINVAL);
  const std::string port = text.substr(colon + 1);
  unsigned v = 0;
  auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), v);
  if (ec != std::errc() || p != port.data() + port.size() || v == 0 || v > 65535)
    return make_error("listen address '" + text + "' has no valid port 1..65535", EINVAL);
  return {};
}

namespace {

Result<void> parse_top(const std::string& path, const YAML::Node& root, Config& c) {
  if (auto r = check_keys(path, root, "",
                          {"mode", "dry_run", "listen", "socket", "socket_group", "tick_interval", "pagetypeinfo_interval", "bpf",
                           "pageblocks", "compaction", "hugepages"},
                          {"bpf", "pageblocks", "compaction", "hugepages"});
      !r)
    return r.error();
  if (auto n = root["mode"]) {
    auto s = scalar(path, n, "mode");
    if (!s) return s.error();
    if (*s != "observe" && *s != "act")
      return bad(path, n, "mode",
                 "'" + *s + "' is not a mode; use 'observe' (watch only) or 'act' (apply the policy)");
    c.mode = *s;
    c.policy.act = *s == "act";
  }
  if (auto n = root["dry_run"]) {
    auto b = boolean(path, n, "dry_run");
    if (!b) return b.error();
    c.policy.dry_run = *b;
  }
  if (auto n = root["listen"]) {
    auto s = scalar(path, n, "listen");
    if (!s) return s.error();
    if (auto r = check_listen_address(*s); !r) return bad(path, n, "listen", r.error().message);
    c.listen = *s;
  }
  if (auto n = root["socket"]) {
    auto s = scalar(path, n, "socket");
    if (!s) return s.error();
    if (s->empty() || (*s)[0] != '/') return bad(path, n, "socket", "expected an absolute path");
    if (s->size() >= 108) return bad(path, n, "socket", "path is longer than a Unix socket allows (107)");
    c.socket = *s;
  }
  if (auto n = root["socket_group"]) {
    auto s = scalar(path, n, "socket_group");
    if (!s) return s.error();
    // Resolved now, so that a typo fails --check-config and the reload check, not the start.
    const group* g = getgrnam(s->c_str());
    if (!g)
      return bad(path, n, "socket_group",
                 "'" + *s + "' is not a group on this host; create it (groupadd " + *s +
                     ") or remove the key to keep the socket root's alone");
    c.socket_group = *s;
    c.socket_gid = g->gr_gid;
  }
  if (auto n = root["tick_interval"]) {
    auto d = duration(path, n, "tick_interval", 100'000'000ULL, 3600'000'000'000ULL);
    if (!d) return d.error();
    c.tick_ns = *d;
  }
  if (auto n = root["pagetypeinfo_interval"]) {
    auto d = duration(path, n, "pagetypeinfo_interval", 1'000'000'000ULL, 86400'000'000'000ULL);
    if (!d) return d.error();
    c.pagetypeinfo_ns = *d;
  }
  if (auto b = root["bpf"]) {
    if (auto r = expect_section(path, b, "bpf",
                                "allocations, adaptive_hold, adaptive_free_blocks, min_order, slow_stall_threshold, "
                                "track_pollution");
        !r)
      return r;
    if (b.IsMap()) {
      if (auto r = check_keys(path, b, "bpf.",
                              {"allocations", "adaptive_hold", "adaptive_free_blocks", "min_order",
                               "slow_stall_threshold", "track_pollution"});
          !r)
        return r.error();
      if (auto n = b["allocations"]) {
        auto v = scalar(path, n, "bpf.allocations");
        if (!v) return v.error();
        if (*v != "adaptive" && *v != "exact" && *v != "off")
          return bad(path, n, "bpf.allocations",
                     "'" + *v + "' is not a counting mode; use 'adaptive' (count while memory needs watching), "
                     "'exact' (count every high-order allocation, always) or 'off'");
        c.allocations = *v;
      }
      if (auto n = b["adaptive_hold"]) {
        auto d = duration(path, n, "bpf.adaptive_hold", 1'000'000'000ULL, 86400'000'000'000ULL);
        if (!d) return d.error();
        c.adaptive_hold_ns = *d;
      }
      if (auto n = b["adaptive_free_blocks"]) {
        auto v = integer(path, n, "bpf.adaptive_free_blocks", 0, 1'000'000'000);
        if (!v) return v.error();
        c.adaptive_free_blocks = static_cast<uint64_t>(*v);
      }
      if (auto n = b["track_pollution"]) {
        auto v = boolean(path, n, "bpf.track_pollution");
        if (!v) return v.error();
        c.track_pollution = *v;
      }
      if (auto n = b["min_order"]) {
        auto v = integer(path, n, "bpf.min_order", 1, 10);
        if (!v) return v.error();
        c.min_order = static_cast<uint32_t>(*v);
      }
      if (auto n = b["slow_stall_threshold"]) {
        auto d = duration(path, n, "bpf.slow_stall_threshold", 1'000ULL, 60'000'000'000ULL);
        if (!d) return d.error();
        c.slow_stall_ns = *d;
      }
    }
  }
  if (auto b = root["pageblocks"]) {
    if (auto r = expect_section(path, b, "pageblocks", "scan, interval, max_age, threads"); !r) return r;
    if (b.IsMap()) {
      if (auto r = check_keys(path, b, "pageblocks.", {"scan", "interval", "max_age", "threads"}); !r)
        return r.error();
      if (auto n = b["max_age"]) {
        auto d = duration(path, n, "pageblocks.max_age", 1'000'000'000ULL, 7 * 86400'000'000'000ULL);
        if (!d) return d.error();
        c.scan_max_age_ns = *d;
      }
      if (auto n = b["scan"]) {
        auto v = boolean(path, n, "pageblocks.scan");
        if (!v) return v.error();
        c.scan_pageblocks = *v;
      }
      if (auto n = b["interval"]) {
        auto d = duration(path, n, "pageblocks.interval", 1'000'000'000ULL, 86400'000'000'000ULL);
        if (!d) return d.error();
        c.scan_ns = *d;
      }
      if (auto n = b["threads"]) {
        auto v = integer(path, n, "pageblocks.threads", 1, 64);
        if (!v) return v.error();
        c.scan_threads = static_cast<unsigned>(*v);
      }
    }
  }
  if (auto n = root["compaction"]) {
    if (auto r = parse_compaction(path, n, c.policy.compaction); !r) return r;
  }
  if (auto n = root["hugepages"]) {
    if (auto r = parse_hugepages(path, n, c.policy.hugepages); !r) return r;
  }
  // The demand trigger counts stalls the BPF side traced: orders below
  // bpf.min_order never reach it.
  const DemandTrigger& d = c.policy.compaction.demand;
  if (d.enabled && d.min_order < c.min_order) {
    const YAML::Node comp = root["compaction"];
    const bool at_demand = comp && comp.IsMap() && comp["demand"] && comp["demand"].IsMap() &&
                           comp["demand"]["min_order"];
    return bad(path, at_demand ? comp["demand"]["min_order"] : root["bpf"]["min_order"],
               at_demand ? "compaction.demand.min_order" : "bpf.min_order",
               "compaction.demand.min_order " + std::to_string(d.min_order) + " is below bpf.min_order " + std::to_string(c.min_order) +
                   ", so stalls of orders " + std::to_string(d.min_order) + ".." +
                   std::to_string(c.min_order - 1) +
                   " are never traced; raise compaction.demand.min_order to at least bpf.min_order or lower "
                   "bpf.min_order");
  }
  // The p99 check reads the stall histogram, which only allocation counting fills.
  if (c.policy.act && d.enabled && d.stall_p99_ns > 0 && c.allocations == "off") {
    const YAML::Node comp = root["compaction"];
    const bool at_p99 = comp && comp.IsMap() && comp["demand"] && comp["demand"].IsMap() &&
                        comp["demand"]["stall_p99"];
    return bad(path, at_p99 ? comp["demand"]["stall_p99"] : root["bpf"]["allocations"],
               at_p99 ? "compaction.demand.stall_p99" : "bpf.allocations",
               "compaction.demand.stall_p99 needs the stall times of counted allocations, and bpf.allocations "
               "is off, so it would never fire; set compaction.demand.stall_p99: 0 (the stall-rate check "
               "still works) or bpf.allocations: adaptive");
  }
  if (c.scan_max_age_ns < c.scan_ns) {
    const YAML::Node pb = root["pageblocks"];
    return bad(path, pb && pb.IsMap() && pb["max_age"] ? pb["max_age"] : pb["interval"], "pageblocks.max_age",
               "pageblocks.max_age " + format_duration(c.scan_max_age_ns, DurationStyle::Exact) + " is below pageblocks.interval " +
                   format_duration(c.scan_ns, DurationStyle::Exact) + "; raise max_age to at least the interval");
  }
  return {};
}

}  // namespace

Result<Config> parse_config(const std::string& text, const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    return make_error(path + ":" + std::to_string(e.mark.line + 1) + ":" +
                          std::to_string(e.mark.column + 1) + ": not valid YAML: " + e.msg,
                      EINVAL);
  }
  Config c;
  c.source = path;
  if (root.IsNull()) return c;  // an empty file means all defaults
  if (!root.IsMap())
    return make_error(where(path, root) + ": the top level must be a map of keys (mode, listen, ...)",
                      EINVAL);
  try {
    if (auto r = parse_top(path, root, c); !r) return r.error();
  } catch (const YAML::Exception& e) {
    return make_error(path + ": " + e.what(), EINVAL);
  }
  return c;
}

Result<Config> load_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) return sys_error("cannot read config file " + path + " (pass --config FILE)");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_config(ss.str(), path);
}

Result<Config> load_and_check_config(const std::string& path, const std::string& proc_root,
                                     const std::string& sys_root) {
  auto c = load_config(path);
  if (!c) return c.error();
  auto facts = read_machine_facts(proc_root, sys_root);
  if (!facts)
    return make_error(path + ": cannot check the policy against this machine: " + facts.error().message,
                      facts.error().err);
  if (auto r = check_policy_on(c->policy, *facts, c->source); !r) return r.error();
  return c;
}

}  // namespace fragd
