#include "policy/config.h"

#include <grp.h>

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

namespace fragd {
namespace config_detail {

SourceMark mark_of(const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  if (m.line < 0) return {};
  return SourceMark{m.line + 1, m.column + 1};
}

std::string where(const std::string& file, const YAML::Node& n) {
  const SourceMark m = mark_of(n);
  if (m.line == 0) return file;
  return file + ":" + std::to_string(m.line) + ":" + std::to_string(m.column);
}

Error bad(const std::string& file, const YAML::Node& n, const std::string& key, const std::string& what) {
  return make_error(where(file, n) + ": key '" + key + "': " + what, EINVAL);
}

Result<void> check_keys(const std::string& file, const YAML::Node& map, const std::string& prefix,
                        const std::set<std::string>& known, const std::set<std::string>& may_be_empty) {
  std::map<std::string, SourceMark> seen;
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) return bad(file, kv.first, prefix + "?", "a key must be a plain name");
    const std::string k = kv.first.Scalar();
    if (!known.count(k)) {
      std::string list;
      for (const auto& s : known) list += (list.empty() ? "" : ", ") + s;
      return bad(file, kv.first, prefix + k, "unknown key (known keys here: " + list + ")");
    }
    const SourceMark m = mark_of(kv.first);
    if (auto [it, fresh] = seen.emplace(k, m); !fresh)
      return bad(file, kv.first, prefix + k,
                 "given twice (first at line " + std::to_string(it->second.line) + "); keep one");
    // An empty value (`key:` with nothing after it) reads as null; its mark
    // points past the key, so the message uses the key's position.
    if (kv.second.IsNull() && !may_be_empty.count(k))
      return bad(file, kv.first, prefix + k, "has no value; write a value or remove the key for its default");
  }
  return {};
}

Result<void> expect_section(const std::string& file, const YAML::Node& n, const std::string& key,
                            const std::string& what) {
  if (n.IsNull() || n.IsMap()) return {};
  return bad(file, n, key, "expected a map (" + what + ")");
}

Result<std::string> scalar(const std::string& file, const YAML::Node& n, const std::string& key) {
  if (n.IsNull()) return bad(file, n, key, "has no value; write a value or remove the key for its default");
  if (!n.IsScalar()) return bad(file, n, key, "expected a single value, not a list or map");
  return n.Scalar();
}

namespace {

// A quoted scalar ('40', "true") is a string in YAML, not a number or a boolean.
bool quoted(const YAML::Node& n) { return n.Tag() == "!"; }

}  // namespace

Result<uint64_t> integer(const std::string& file, const YAML::Node& n, const std::string& key, uint64_t lo,
                         uint64_t hi) {
  auto s = scalar(file, n, key);
  if (!s) return s.error();
  const std::string& t = *s;
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  if (quoted(n)) return bad(file, n, key, "expected an integer, got the string '" + t + "'; remove the quotes");
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec == std::errc::result_out_of_range)
    return bad(file, n, key, "value " + t + " is out of range " + range);
  if (ec != std::errc() || p != t.data() + t.size()) {
    int64_t neg = 0;
    auto [q, ec2] = std::from_chars(t.data(), t.data() + t.size(), neg);
    if (ec2 == std::errc() && q == t.data() + t.size() && neg < 0)
      return bad(file, n, key, "value " + t + " is out of range " + range);
    return bad(file, n, key, "expected an integer, got '" + t + "'");
  }
  if (v < lo || v > hi) return bad(file, n, key, "value " + t + " is out of range " + range);
  return v;
}

Result<double> number(const std::string& file, const YAML::Node& n, const std::string& key, double lo,
                      double hi) {
  auto s = scalar(file, n, key);
  if (!s) return s.error();
  const std::string& t = *s;
  if (quoted(n)) return bad(file, n, key, "expected a number, got the string '" + t + "'; remove the quotes");
  double v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size() || !std::isfinite(v))
    return bad(file, n, key, "expected a number, got '" + t + "'");
  if (v < lo || v > hi) {
    std::ostringstream r;
    r << "value " << t << " is out of range " << lo << ".." << hi;
    return bad(file, n, key, r.str());
  }
  return v;
}

Result<bool> boolean(const std::string& file, const YAML::Node& n, const std::string& key) {
  auto s = scalar(file, n, key);
  if (!s) return s.error();
  const std::string& t = *s;
  if (quoted(n))
    return bad(file, n, key, "expected true or false, got the string '" + t + "'; remove the quotes");
  if (t == "true" || t == "True" || t == "TRUE") return true;
  if (t == "false" || t == "False" || t == "FALSE") return false;
  std::string lower;
  for (char c : t) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* word : {"yes", "no", "on", "off", "y", "n"})
    if (lower == word)
      return bad(file, n, key,
                 "'" + t + "' is ambiguous (a boolean in YAML 1.1, a string in YAML 1.2); write true or false");
  return bad(file, n, key, "expected true or false, got '" + t + "'");
}

Result<uint64_t> duration(const std::string& file, const YAML::Node& n, const std::string& key,
                          uint64_t lo_ns, uint64_t hi_ns) {
  auto s = scalar(file, n, key);
  if (!s) return s.error();
  auto d = parse_duration_ns(*s);
  if (!d) return bad(file, n, key, d.error().message);
  if (*d < lo_ns || *d > hi_ns)
    return bad(file, n, key,
               "duration '" + *s + "' is out of range " + format_duration(lo_ns, DurationStyle::Exact) + ".." + format_duration(hi_ns, DurationStyle::Exact));
  return *d;
}

}  // namespace config_detail

using namespace config_detail;

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
