// SPDX-License-Identifier: Apache-2.0
// Sizes and page sizes, and the checks of a policy against the machine with the
// facts those checks need. The keys that set a policy are in policy/keys.cc.
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
#include "kernel/memmap.h"
#include "kernel/page_size.h"
#include "kernel/procfs.h"

namespace fragd {

bool NodeSet::contains(int node) const {
  return all || std::binary_search(nodes.begin(), nodes.end(), node);
}

const char* method_name(CompactMethod m) {
  switch (m) {
    case CompactMethod::Node: return "node";
    case CompactMethod::Proactiveness: return "proactiveness";
    case CompactMethod::Pool: return "pool";
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
  f.page_kib = kernel_page_kib();

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

const char* const kNodeSpareHow =
    "the node's MemAvailable: MemFree less its high watermarks and reserves, plus its file pages and reclaimable "
    "slab less what the kernel keeps of them";

Result<SpareMemory> parse_spare_memory(const std::string& text, const std::string& path, int node,
                                       uint64_t reserve_kib, uint64_t low_kib) {
  SpareMemory s;
  if (node < 0) {
    auto a = meminfo_kib(text, path, "MemAvailable");
    if (!a) return a.error();
    s.kib = *a;
    s.how = "MemAvailable";
    return s;
  }
  uint64_t v[4];
  const char* labels[] = {"MemFree", "Active(file)", "Inactive(file)", "SReclaimable"};
  for (int i = 0; i < 4; i++) {
    auto r = meminfo_kib(text, path, labels[i]);
    if (!r) return r.error();
    v[i] = *r;
  }
  if (auto k = meminfo_kib(text, path, "KReclaimable")) v[3] = *k;  // slab and other reclaimable kernel memory
  const uint64_t free = v[0], file = v[1] + v[2], reclaimable = v[3];
  auto less_half = [low_kib](uint64_t x) { return x - std::min(x / 2, low_kib); };
  const uint64_t usable = free > reserve_kib ? free - reserve_kib : 0;
  s.kib = usable + less_half(file) + less_half(reclaimable);
  s.how = kNodeSpareHow;
  return s;
}

Result<SpareMemory> read_spare_memory(const std::string& proc_root, const std::string& sys_root, int node) {
  const std::string path =
      node < 0 ? proc_root + "/meminfo" : sys_root + "/devices/system/node/node" + std::to_string(node) + "/meminfo";
  auto t = read_text_file(path);
  if (!t) return t.error();
  if (node < 0) return parse_spare_memory(*t, path, node);
  const std::string zoneinfo = proc_root + "/zoneinfo";
  auto z = read_text_file(zoneinfo);
  if (!z) return z.error();
  auto spans = parse_zone_spans(*z, zoneinfo);
  if (!spans) return spans.error();
  uint64_t reserve = 0, low = 0;
  for (const ZoneSpan& zone : *spans)
    if (zone.node == node) {
      reserve += zone.high_pages + zone.protection_pages;
      low += zone.low_pages;
    }
  return parse_spare_memory(*t, path, node, reserve * kernel_page_kib(), low * kernel_page_kib());
}

}  // namespace fragd
