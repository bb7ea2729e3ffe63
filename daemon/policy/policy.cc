// The policy sections of the config file (`compaction:`, `hugepages:`), the
// checks against the machine, and the facts those checks need.
#include "policy/policy.h"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>

#include "policy/config.h"
#include "policy/values.h"
#include "kernel/procfs.h"

namespace fragd {

bool NodeSet::contains(int node) const {
  return all || std::binary_search(nodes.begin(), nodes.end(), node);
}

const char* method_name(CompactMethod m) {
  switch (m) {
    case CompactMethod::Node: return "node";
    case CompactMethod::Proactiveness: return "proactiveness";
  }
  return "?";
}

// ---------------------------------------------------------------- sizes

Result<uint64_t> parse_size_kib(const std::string& text) {
  const char* b = text.data();
  const char* e = b + text.size();
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(b, e, v);
  if (ec == std::errc::result_out_of_range) return make_error("size '" + text + "' is too large", EINVAL);
  if (ec != std::errc() || p == b)
    return make_error("expected a size like 1GiB, 512MiB or 65536KiB, got '" + text + "'", EINVAL);
  std::string unit;
  for (const char* q = p; q != e; ++q) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(*q)));
  if (unit.empty()) {
    if (v == 0) return uint64_t{0};
    return make_error("size '" + text + "' has no unit; write e.g. 1GiB, 512MiB or 65536KiB (binary units)",
                      EINVAL);
  }
  unsigned shift = 0;
  if (unit == "k" || unit == "kb" || unit == "kib") shift = 0;
  else if (unit == "m" || unit == "mb" || unit == "mib") shift = 10;
  else if (unit == "g" || unit == "gb" || unit == "gib") shift = 20;
  else if (unit == "t" || unit == "tb" || unit == "tib") shift = 30;
  else
    return make_error("unknown size unit '" + std::string(p, e) + "' in '" + text +
                          "' (use KiB, MiB, GiB or TiB; K/KB, M/MB, G/GB, T/TB mean the same)",
                      EINVAL);
  if (v > (uint64_t{1} << 50) >> shift)  // 1 EiB: beyond any machine, far from overflow
    return make_error("size '" + text + "' is too large", EINVAL);
  return v << shift;
}

Result<uint64_t> parse_page_size_kib(const std::string& text) {
  auto v = parse_size_kib(text);
  if (!v) return v.error();
  if (*v == 0 || (*v & (*v - 1)) != 0)
    return make_error("'" + text + "' is not a page size (a power of two, e.g. 2MB or 1GB)", EINVAL);
  return *v;
}


// ---------------------------------------------------------------- parsing

namespace config_detail {
using namespace values;
namespace {

constexpr uint64_t kSecond = 1'000'000'000ULL;
constexpr uint64_t kMinute = 60 * kSecond;
constexpr uint64_t kHour = 60 * kMinute;
constexpr uint64_t kNoLimit = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kMinGuardKib = 64 * 1024;

std::string join_keys(const std::set<std::string>& keys) {
  std::string s;
  for (const auto& k : keys) s += (s.empty() ? "" : ", ") + k;
  return s;
}

// Section `n` (key path `key`) must be a map with only `known` keys, or
// empty. true: a map to read; false: empty (all defaults).
Result<bool> open_section(const std::string& file, const YAML::Node& n, const std::string& key,
                          const std::set<std::string>& known, const std::set<std::string>& may_be_empty = {}) {
  if (auto r = expect_section(file, n, key, join_keys(known)); !r) return r.error();
  if (n.IsNull()) return false;
  if (auto r = check_keys(file, n, key + ".", known, may_be_empty); !r) return r.error();
  return true;
}

Result<void> parse_score(const std::string& file, const YAML::Node& n, ScoreTrigger& out) {
  const std::string key = "compaction.score";
  auto open = open_section(file, n, key, {"enabled", "high", "low"});
  if (!open) return open.error();
  if (!*open) return {};
  if (auto v = n["enabled"]) {
    auto b = boolean(file, v, key + ".enabled");
    if (!b) return b.error();
    out.enabled = *b;
  }
  if (auto v = n["high"]) {
    auto i = integer(file, v, key + ".high", 0, 100);
    if (!i) return i.error();
    out.high = static_cast<unsigned>(*i);
  }
  if (auto v = n["low"]) {
    auto i = integer(file, v, key + ".low", 0, 100);
    if (!i) return i.error();
    out.low = static_cast<unsigned>(*i);
  }
  if (out.low >= out.high) {
    const bool at_low = static_cast<bool>(n["low"]);
    return bad(file, at_low ? n["low"] : n["high"], key + (at_low ? ".low" : ".high"),
               "contradictory thresholds: low " + std::to_string(out.low) + " is not below high " +
                   std::to_string(out.high) +
                   " (compaction starts above high and stops below low); make low smaller than high");
  }
  return {};
}

Result<void> parse_demand(const std::string& file, const YAML::Node& n, DemandTrigger& out) {
  const std::string key = "compaction.demand";
  auto open = open_section(file, n, key, {"enabled", "min_order", "stalls_per_second", "stall_p99", "window"});
  if (!open) return open.error();
  if (!*open) return {};
  if (auto v = n["enabled"]) {
    auto b = boolean(file, v, key + ".enabled");
    if (!b) return b.error();
    out.enabled = *b;
  }
  if (auto v = n["min_order"]) {
    auto i = integer(file, v, key + ".min_order", 1, 10);
    if (!i) return i.error();
    out.min_order = static_cast<unsigned>(*i);
  }
  if (auto v = n["stalls_per_second"]) {
    auto d = number(file, v, key + ".stalls_per_second", 0, 1e9);
    if (!d) return d.error();
    out.stalls_per_second = *d;
  }
  if (auto v = n["stall_p99"]) {
    auto d = duration(file, v, key + ".stall_p99", 0, 60 * kSecond);
    if (!d) return d.error();
    out.stall_p99_ns = *d;
  }
  if (auto v = n["window"]) {
    auto d = duration(file, v, key + ".window", kSecond, kHour);
    if (!d) return d.error();
    out.window_ns = *d;
  }
  if (out.enabled && out.stalls_per_second == 0 && out.stall_p99_ns == 0) {
    const char* at = n["enabled"] ? "enabled" : n["stalls_per_second"] ? "stalls_per_second" : "stall_p99";
    return bad(file, n[at], key + "." + at,
               "the demand trigger is enabled but both of its checks are off (stalls_per_second 0 and stall_p99 "
               "0); set enabled: false instead, or give one of them a limit");
  }
  return {};
}

Result<void> parse_reserve(const std::string& file, const YAML::Node& n, ReserveGoal& out) {
  const std::string key = "compaction.reserve";
  auto open = open_section(file, n, key, {"order", "blocks"});
  if (!open) return open.error();
  if (!*open) return {};
  if (auto v = n["order"]) {
    auto i = integer(file, v, key + ".order", 1, 10);
    if (!i) return i.error();
    out.order = static_cast<unsigned>(*i);
  }
  if (auto v = n["blocks"]) {
    // The machine check bounds it by node memory; this bound only keeps
    // `blocks << order` in range.
    auto i = integer(file, v, key + ".blocks", 0, uint64_t{1} << 40);
    if (!i) return i.error();
    out.blocks = *i;
    out.mark = mark_of(v);
  }
  return {};
}

Result<void> parse_proactiveness(const std::string& file, const YAML::Node& n, ProactivenessMethod& out) {
  const std::string key = "compaction.proactiveness";
  auto open = open_section(file, n, key, {"value", "hold"});
  if (!open) return open.error();
  if (!*open) return {};
  if (auto v = n["value"]) {
    auto i = integer(file, v, key + ".value", 1, 100);
    if (!i) return i.error();
    out.value = static_cast<unsigned>(*i);
  }
  if (auto v = n["hold"]) {
    auto d = duration(file, v, key + ".hold", kSecond, 24 * kHour);
    if (!d) return d.error();
    out.hold_ns = *d;
  }
  return {};
}

Result<void> parse_backoff(const std::string& file, const YAML::Node& n, Backoff& out) {
  const std::string key = "compaction.backoff";
  auto open = open_section(file, n, key, {"min_gain", "max"});
  if (!open) return open.error();
  if (!*open) return {};
  if (auto v = n["min_gain"]) {
    auto i = integer(file, v, key + ".min_gain", 1, 100);
    if (!i) return i.error();
    out.min_gain = static_cast<unsigned>(*i);
  }
  if (auto v = n["max"]) {
    auto d = duration(file, v, key + ".max", 0, 24 * kHour);
    if (!d) return d.error();
    out.max_ns = *d;
  }
  return {};
}

}  // namespace

Result<void> parse_compaction(const std::string& file, const YAML::Node& n, CompactionPolicy& out) {
  const std::string key = "compaction";
  auto open = open_section(file, n, key,
                           {"nodes", "method", "score", "demand", "reserve", "proactiveness", "min_interval",
                            "cpu_budget", "backoff"},
                           {"score", "demand", "reserve", "proactiveness", "backoff"});
  if (!open) return open.error();
  if (!*open) return {};
  if (auto v = n["nodes"]) {
    auto s = node_list(file, v, key + ".nodes");
    if (!s) return s.error();
    out.nodes = *s;
  }
  if (auto v = n["method"]) {
    auto s = scalar(file, v, key + ".method");
    if (!s) return s.error();
    if (*s == "node") out.method = CompactMethod::Node;
    else if (*s == "proactiveness") out.method = CompactMethod::Proactiveness;
    else
      return bad(file, v, key + ".method",
                 "'" + *s + "' is not a method; use node (write nodeN/compact) or proactiveness (raise "
                 "vm.compaction_proactiveness for a while)");
  }
  if (auto v = n["min_interval"]) {
    auto d = duration(file, v, key + ".min_interval", 0, kNoLimit);
    if (!d) return d.error();
    if (*d < kSecond)
      return bad(file, v, key + ".min_interval",
                 format_duration(*d, DurationStyle::Exact) +
                     " is refused: acting that often would keep compaction running continuously; set at least 1s");
    if (*d > 24 * kHour)
      return bad(file, v, key + ".min_interval",
                 "duration '" + format_duration(*d, DurationStyle::Exact) + "' is out of range 1s..24h");
    out.min_interval_ns = *d;
  }
  if (auto v = n["cpu_budget"]) {
    auto d = duration(file, v, key + ".cpu_budget", 0, kNoLimit);
    if (!d) return d.error();
    if (*d == 0)
      return bad(file, v, key + ".cpu_budget",
                 "0 is refused: no compaction could ever run; to stop acting use mode: observe, or set the "
                 "triggers' enabled: false");
    if (*d > 30 * kSecond)
      return bad(file, v, key + ".cpu_budget",
                 format_duration(*d, DurationStyle::Exact) +
                     " of compaction per minute is refused: more than half a CPU; set at most 30s");
    out.cpu_budget_ns = *d;
  }
  if (auto v = n["score"]) {
    if (auto r = parse_score(file, v, out.score); !r) return r;
  }
  if (auto v = n["demand"]) {
    if (auto r = parse_demand(file, v, out.demand); !r) return r;
  }
  if (auto v = n["reserve"]) {
    if (auto r = parse_reserve(file, v, out.reserve); !r) return r;
  }
  if (auto v = n["proactiveness"]) {
    if (auto r = parse_proactiveness(file, v, out.proactiveness); !r) return r;
  }
  if (auto v = n["backoff"]) {
    if (auto r = parse_backoff(file, v, out.backoff); !r) return r;
  }
  if (out.backoff.max_ns < out.min_interval_ns) {
    // The back-off starts at min_interval and doubles up to max.
    const bool max_given = n["backoff"] && n["backoff"].IsMap() && n["backoff"]["max"];
    if (max_given)
      return bad(file, n["backoff"]["max"], key + ".backoff.max",
                 format_duration(out.backoff.max_ns, DurationStyle::Exact) + " is shorter than compaction.min_interval " +
                     format_duration(out.min_interval_ns, DurationStyle::Exact) +
                     " (the back-off starts at min_interval and doubles up to max); set max >= min_interval");
    return bad(file, n["min_interval"], key + ".min_interval",
               format_duration(out.min_interval_ns, DurationStyle::Exact) + " is longer than compaction.backoff.max " +
                   format_duration(out.backoff.max_ns, DurationStyle::Exact) +
                   " (its default; the back-off starts at min_interval and doubles up to max); set backoff.max >= "
                   "min_interval");
  }
  return {};
}

Result<void> parse_hugepages(const std::string& file, const YAML::Node& n, HugepagePolicy& out) {
  const std::string key = "hugepages";
  auto open = open_section(file, n, key, {"guard", "drop_caches", "pools"}, {"pools"});
  if (!open) return open.error();
  if (!*open) return {};
  if (auto v = n["guard"]) {
    auto s = scalar(file, v, key + ".guard");
    if (!s) return s.error();
    auto kib = parse_size_kib(*s);
    if (!kib) return bad(file, v, key + ".guard", kib.error().message);
    if (*kib < kMinGuardKib)
      return bad(file, v, key + ".guard",
                 "'" + *s + "' is refused: hugepage allocation could take MemAvailable " +
                     (*kib == 0 ? std::string("to zero") : "below " + format_size_kib(*kib, SizeStyle::Config)) +
                     " and set off the OOM killer; set at least 64MiB (default 1GiB)");
    out.guard_kib = *kib;
    out.guard_mark = mark_of(v);
  }
  if (auto v = n["drop_caches"]) {
    auto b = boolean(file, v, key + ".drop_caches");
    if (!b) return b.error();
    out.drop_caches = *b;
  }
  if (auto v = n["pools"]) {
    if (v.IsNull()) return {};
    if (!v.IsSequence())
      return bad(file, v, key + ".pools", "expected a list of {size, node, count} entries (or [] for none)");
    std::vector<PoolTarget> pools;
    for (size_t i = 0; i < v.size(); ++i) {
      const YAML::Node e = v[i];
      const std::string k = key + ".pools[" + std::to_string(i) + "]";
      if (!e.IsMap())
        return bad(file, e, k, "expected a map like {size: 2MB, node: all, count: 512}");
      if (auto r = check_keys(file, e, k + ".", {"size", "node", "count"}); !r) return r;
      PoolTarget t;
      t.mark = mark_of(e);
      for (const char* required : {"size", "count"})
        if (!e[required])
          return bad(file, e, k + "." + required,
                     std::string("missing; a pool needs size and count, e.g. {size: 2MB, node: all, count: 512}"));
      auto s = scalar(file, e["size"], k + ".size");
      if (!s) return s.error();
      auto size = parse_page_size_kib(*s);
      if (!size) return bad(file, e["size"], k + ".size", size.error().message);
      t.size_kib = *size;
      t.size_mark = mark_of(e["size"]);
      if (auto nv = e["node"]) {
        auto ns = node_scalar(file, nv, k + ".node");
        if (!ns) return ns.error();
        t.node = *ns;
      } else {
        t.node.mark = t.mark;
      }
      // The machine check bounds it by memory; this bound keeps count * size in range.
      auto c = integer(file, e["count"], k + ".count", 0, uint64_t{1} << 32);
      if (!c) return c.error();
      t.count = *c;
      t.count_mark = mark_of(e["count"]);
      for (size_t j = 0; j < pools.size(); ++j) {
        const PoolTarget& o = pools[j];
        if (o.size_kib != t.size_kib) continue;
        const std::string other =
            "hugepages.pools[" + std::to_string(j) + "] at line " + std::to_string(o.mark.line);
        const std::string sz = format_size_kib(t.size_kib, SizeStyle::Config);
        if (o.node.all && t.node.all)
          return bad(file, e, k, "a second pool of " + sz + " pages for all nodes; " + other +
                                     " already sets it; keep one");
        if (!o.node.all && !t.node.all && o.node.nodes == t.node.nodes)
          return bad(file, e, k, "a second pool of " + sz + " pages on node " + std::to_string(t.node.nodes[0]) +
                                     "; " + other + " already sets it; keep one");
        if (o.node.all != t.node.all)
          return bad(file, e, k,
                     "pools of " + sz + " pages for all nodes and for node " +
                         std::to_string(o.node.all ? t.node.nodes[0] : o.node.nodes[0]) + " (with " + other +
                         ") would fight over the same pages (the global pool spans every node); use either one "
                         "pool for all nodes or one per node");
      }
      pools.push_back(std::move(t));
    }
    out.pools = std::move(pools);
  }
  return {};
}

}  // namespace config_detail

// ---------------------------------------------------------------- the machine

namespace {

namespace fs = std::filesystem;

// "0-3,5\n" -> {0, 1, 2, 3, 5}
Result<std::vector<int>> parse_node_list(const std::string& text, const std::string& path) {
  std::vector<int> out;
  std::string s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::stringstream ss(s);
  std::string part;
  auto num = [](const std::string& t, int& v) {
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    return ec == std::errc() && p == t.data() + t.size() && v >= 0 && v <= 1023;
  };
  while (std::getline(ss, part, ',')) {
    if (part.empty()) continue;
    const auto dash = part.find('-');
    int a = 0, b = 0;
    if (dash == std::string::npos ? !num(part, a) : !num(part.substr(0, dash), a) || !num(part.substr(dash + 1), b))
      return make_error(path + ": expected a node list like 0-3,5, got '" + s + "'", EINVAL);
    if (dash == std::string::npos) b = a;
    if (b < a) return make_error(path + ": expected a node list like 0-3,5, got '" + s + "'", EINVAL);
    for (int i = a; i <= b; ++i) out.push_back(i);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The kB value of the line whose label (before ':') ends with `label`:
// "MemTotal:  24684084 kB", "Node 0 MemTotal:  24608740 kB".
Result<uint64_t> meminfo_kib(const std::string& text, const std::string& path, const std::string& label) {
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string name = line.substr(0, colon);
    if (name != label && !(name.size() > label.size() && name.compare(name.size() - label.size(), label.size(), label) == 0 &&
                           name[name.size() - label.size() - 1] == ' '))
      continue;
    size_t i = colon + 1;
    while (i < line.size() && line[i] == ' ') ++i;
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(line.data() + i, line.data() + line.size(), v);
    if (ec != std::errc() || std::string_view(p, static_cast<size_t>(line.data() + line.size() - p)) != " kB")
      return make_error(path + ": expected '" + label + ": N kB', got '" + line + "'", EINVAL);
    return v;
  }
  return make_error(path + ": no " + label + " line; is this a Linux meminfo file?", EINVAL);
}

std::string list_nodes(const std::vector<int>& nodes) {
  std::string s;
  for (int n : nodes) s += (s.empty() ? "" : ", ") + std::to_string(n);
  return s.empty() ? "none" : s;
}

std::string at(const std::string& source, const SourceMark& m) {
  if (m.line == 0) return source;
  return source + ":" + std::to_string(m.line) + ":" + std::to_string(m.column);
}

Error refuse(const std::string& source, const SourceMark& m, const std::string& key, const std::string& what) {
  return make_error(at(source, m) + ": key '" + key + "': " + what, EINVAL);
}

}  // namespace

Result<MachineFacts> read_machine_facts(const std::string& proc_root, const std::string& sys_root) {
  MachineFacts f;
  if (const long page = sysconf(_SC_PAGESIZE); page >= 1024) f.page_kib = static_cast<uint64_t>(page) / 1024;

  const std::string meminfo = proc_root + "/meminfo";
  auto text = read_text_file(meminfo);
  if (!text) return make_error(text.error().message + " (is /proc mounted?)", text.error().err);
  auto total = meminfo_kib(*text, meminfo, "MemTotal");
  if (!total) return total.error();
  f.mem_total_kib = *total;

  const std::string node_dir = sys_root + "/devices/system/node";
  std::error_code ec;
  if (!fs::is_directory(node_dir, ec)) {
    f.nodes = {0};
    f.node_total_kib = {f.mem_total_kib};
  } else {
    std::vector<int> nodes;
    bool filtered_by_has_memory = false;
    if (auto online = read_text_file(node_dir + "/online")) {
      auto l = parse_node_list(*online, node_dir + "/online");
      if (!l) return l.error();
      nodes = *l;
      if (auto has = read_text_file(node_dir + "/has_memory")) {
        auto m = parse_node_list(*has, node_dir + "/has_memory");
        if (!m) return m.error();
        std::vector<int> both;
        std::set_intersection(nodes.begin(), nodes.end(), m->begin(), m->end(), std::back_inserter(both));
        nodes = both;
        filtered_by_has_memory = true;
      }
    } else {
      for (const auto& e : fs::directory_iterator(node_dir, ec)) {
        const std::string name = e.path().filename().string();
        int v = 0;
        if (name.rfind("node", 0) != 0) continue;
        auto [p, ec2] = std::from_chars(name.data() + 4, name.data() + name.size(), v);
        if (ec2 != std::errc() || p != name.data() + name.size() || name.size() == 4) continue;
        if (fs::exists(e.path() / "meminfo", ec)) nodes.push_back(v);
      }
      if (ec) return sys_error("cannot list " + node_dir, ec.value());
      std::sort(nodes.begin(), nodes.end());
    }
    for (int n : nodes) {
      const std::string path = node_dir + "/node" + std::to_string(n) + "/meminfo";
      auto t = read_text_file(path);
      if (!t) return t.error();
      auto kib = meminfo_kib(*t, path, "MemTotal");
      if (!kib) return kib.error();
      if (*kib == 0 && !filtered_by_has_memory) continue;  // a memoryless node (CPUs only)
      f.nodes.push_back(n);
      f.node_total_kib.push_back(*kib);
    }
    if (f.nodes.empty())
      return make_error("no online NUMA node with memory under " + node_dir + "; is /sys mounted?", ENOENT);
  }

  const std::string hp_dir = sys_root + "/kernel/mm/hugepages";
  if (fs::is_directory(hp_dir, ec)) {
    for (const auto& e : fs::directory_iterator(hp_dir, ec)) {
      const std::string name = e.path().filename().string();
      const std::string pre = "hugepages-", suf = "kB";
      if (name.size() <= pre.size() + suf.size() || name.rfind(pre, 0) != 0 ||
          name.compare(name.size() - suf.size(), suf.size(), suf) != 0)
        continue;
      uint64_t v = 0;
      const char* b = name.data() + pre.size();
      const char* end = name.data() + name.size() - suf.size();
      auto [p, ec2] = std::from_chars(b, end, v);
      if (ec2 == std::errc() && p == end && v > 0) f.hugepage_kib.push_back(v);
    }
    if (ec) return sys_error("cannot list " + hp_dir, ec.value());
    std::sort(f.hugepage_kib.begin(), f.hugepage_kib.end());
  }
  return f;
}

Result<void> check_policy_on(const Policy& p, const MachineFacts& m, const std::string& source) {
  const std::string online = "online nodes with memory: " + list_nodes(m.nodes);
  auto node_index = [&](int node) -> int {
    for (size_t i = 0; i < m.nodes.size(); ++i)
      if (m.nodes[i] == node) return static_cast<int>(i);
    return -1;
  };
  auto node_kib = [&](int node) -> uint64_t {
    const int i = node_index(node);
    if (i >= 0 && static_cast<size_t>(i) < m.node_total_kib.size()) return m.node_total_kib[i];
    return m.mem_total_kib;
  };

  // compaction.nodes
  const NodeSet& scope = p.compaction.nodes;
  if (!scope.all) {
    for (size_t i = 0; i < scope.nodes.size(); ++i) {
      if (node_index(scope.nodes[i]) >= 0) continue;
      const SourceMark mk = i < scope.marks.size() ? scope.marks[i] : scope.mark;
      return refuse(source, mk, "compaction.nodes[" + std::to_string(i) + "]",
                    "node " + std::to_string(scope.nodes[i]) + " does not exist (" + online +
                        "); list only those, or write all");
    }
  }

  // compaction.reserve: blocks of 2^order pages must fit in each node in scope.
  const ReserveGoal& rg = p.compaction.reserve;
  if (rg.blocks > 0) {
    const uint64_t block_kib = m.page_kib << rg.order;
    for (int node : m.nodes) {
      if (!scope.contains(node)) continue;
      const uint64_t mem = node_kib(node);
      if (rg.blocks > mem / block_kib)
        return refuse(source, rg.mark, "compaction.reserve.blocks",
                      std::to_string(rg.blocks) + " blocks of order " + std::to_string(rg.order) + " (" +
                          format_size_kib(block_kib, SizeStyle::Config) + " each, " + format_size_kib(rg.blocks * block_kib, SizeStyle::Config) +
                          ") are more than node " + std::to_string(node) + "'s memory (" + format_size_kib(mem, SizeStyle::Config) +
                          "); set at most " + std::to_string(mem / block_kib) + ", well below that in practice");
    }
  }

  // hugepages.pools
  const HugepagePolicy& hp = p.hugepages;
  std::string sizes;
  for (uint64_t s : m.hugepage_kib) sizes += (sizes.empty() ? "" : ", ") + format_size_kib(s, SizeStyle::Config);
  std::map<int, uint64_t> node_sum;  // per-node pools, KiB
  uint64_t all_sum = 0;              // every pool, KiB
  for (size_t i = 0; i < hp.pools.size(); ++i) {
    const PoolTarget& t = hp.pools[i];
    const std::string k = "hugepages.pools[" + std::to_string(i) + "]";
    const std::string sz = format_size_kib(t.size_kib, SizeStyle::Config);
    const int node = t.node.all ? -1 : t.node.nodes.at(0);
    if (node >= 0 && node_index(node) < 0)
      return refuse(source, t.node.mark, k + ".node",
                    "node " + std::to_string(node) + " does not exist (" + online + "); use one of those or all");
    if (std::find(m.hugepage_kib.begin(), m.hugepage_kib.end(), t.size_kib) == m.hugepage_kib.end())
      return refuse(source, t.size_mark.line ? t.size_mark : t.mark, k + ".size",
                    m.hugepage_kib.empty()
                        ? "this kernel offers no hugepage sizes (no /sys/kernel/mm/hugepages: hugetlbfs is not built "
                          "in); remove the pool"
                        : "the kernel does not offer " + sz + " pages (sizes offered: " + sizes + "); use one of those");
    const uint64_t mem = node >= 0 ? node_kib(node) : m.mem_total_kib;
    const std::string where_mem = node >= 0 ? "node " + std::to_string(node) : "this machine (MemTotal)";
    const SourceMark cm = t.count_mark.line ? t.count_mark : t.mark;
    const uint64_t room = mem > hp.guard_kib ? mem - hp.guard_kib : 0;
    if (t.count > room / t.size_kib)
      return refuse(source, cm, k + ".count",
                    "more hugepages than memory: " + std::to_string(t.count) + " x " + sz + " = " +
                        format_size_kib(t.count > UINT64_MAX / t.size_kib ? UINT64_MAX : t.count * t.size_kib, SizeStyle::Config) + ", but " + where_mem + " has " + format_size_kib(mem, SizeStyle::Config) +
                        " and hugepages.guard keeps " + format_size_kib(hp.guard_kib, SizeStyle::Config) + " free; set count at most " +
                        std::to_string(room / t.size_kib));
    const uint64_t want = t.count * t.size_kib;  // <= room: no overflow
    if (node >= 0) {
      node_sum[node] += want;
      if (node_sum[node] > room)
        return refuse(source, cm, k + ".count",
                      "more hugepages than memory: the pools of node " + std::to_string(node) + " add up to " +
                          format_size_kib(node_sum[node], SizeStyle::Config) + ", but it has " + format_size_kib(mem, SizeStyle::Config) +
                          " and hugepages.guard keeps " + format_size_kib(hp.guard_kib, SizeStyle::Config) +
                          " free; lower the counts");
    }
    all_sum += want;
    const uint64_t total_room = m.mem_total_kib > hp.guard_kib ? m.mem_total_kib - hp.guard_kib : 0;
    if (all_sum > total_room)
      return refuse(source, cm, k + ".count",
                    "more hugepages than memory: the pools add up to " + format_size_kib(all_sum, SizeStyle::Config) +
                        ", but this machine has " + format_size_kib(m.mem_total_kib, SizeStyle::Config) + " (MemTotal) and hugepages.guard keeps " +
                        format_size_kib(hp.guard_kib, SizeStyle::Config) + " free; lower the counts");
  }
  return {};
}

}  // namespace fragd
