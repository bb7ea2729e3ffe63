#include "fragctl/render/map_view.h"
#include "base/text.h"

#include <algorithm>
#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <ctime>

#include <nlohmann/json.hpp>

#include "fragctl/render/ctl_format.h"

namespace fragd {

namespace {

using json = nlohmann::json;

// Thrown inside the parser on a malformed field, caught at its boundary and
// turned into an Error. `what` starts with the field's path.
struct Malformed {
  std::string what;
};

[[noreturn]] void malformed(std::string what) { throw Malformed{std::move(what)}; }


using ull = unsigned long long;

const json& member(const json& obj, const char* key, const std::string& path) {
  auto it = obj.find(key);
  if (it == obj.end()) malformed(path + ": missing \"" + key + "\"");
  return *it;
}

const json& object_member(const json& obj, const char* key, const std::string& path) {
  const json& j = member(obj, key, path);
  if (!j.is_object()) malformed(path + "." + key + ": not an object");
  return j;
}

const json& array_member(const json& obj, const char* key, const std::string& path) {
  const json& j = member(obj, key, path);
  if (!j.is_array()) malformed(path + "." + key + ": not an array");
  return j;
}

std::string string_member(const json& obj, const char* key, const std::string& path) {
  const json& j = member(obj, key, path);
  if (!j.is_string()) malformed(path + "." + key + ": not a string");
  return j.get<std::string>();
}

uint64_t as_u64(const json& j, const std::string& path) {
  if (j.is_number_unsigned()) return j.get<uint64_t>();
  if (j.is_number_integer() && j.get<int64_t>() >= 0) return static_cast<uint64_t>(j.get<int64_t>());
  malformed(path + ": not a non-negative integer");
}

uint64_t u64_member(const json& obj, const char* key, const std::string& path) {
  return as_u64(member(obj, key, path), path + "." + key);
}

uint64_t bounded_member(const json& obj, const char* key, const std::string& path, uint64_t max) {
  uint64_t v = u64_member(obj, key, path);
  if (v > max) malformed(strf("%s.%s: %llu is out of range (at most %llu)", path.c_str(), key, ull(v), ull(max)));
  return v;
}

constexpr uint64_t kMaxNode = 65535;

// Replaces control characters, so a process name cannot move the cursor.
std::string printable(std::string s) {
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return s;
}

MapZone parse_zone(const json& z, const std::string& path, unsigned order) {
  if (!z.is_object()) malformed(path + ": not an object");
  MapZone m;
  m.node = static_cast<int>(bounded_member(z, "node", path, kMaxNode));
  m.zone = string_member(z, "zone", path);
  if (m.zone.empty()) malformed(path + ".zone: empty");
  m.start_pfn = u64_member(z, "start_pfn", path);
  m.end_pfn = u64_member(z, "end_pfn", path);
  if (m.end_pfn <= m.start_pfn)
    malformed(strf("%s: end_pfn %llu is not above start_pfn %llu", path.c_str(), ull(m.end_pfn), ull(m.start_pfn)));
  m.first_block = u64_member(z, "first_block", path);
  if (m.first_block != m.start_pfn >> order)
    malformed(strf("%s.first_block: %llu is not start_pfn >> pageblock_order (%llu)", path.c_str(),
                   ull(m.first_block), ull(m.start_pfn >> order)));
  const uint64_t nblocks = ((m.end_pfn - 1) >> order) - m.first_block + 1;
  const uint64_t block_pages = uint64_t{1} << order;

  const std::string classes = string_member(z, "classes", path);
  if (classes.size() != nblocks)
    malformed(strf("%s.classes: %zu blocks, but pfns %llu..%llu span %llu blocks", path.c_str(), classes.size(),
                   ull(m.start_pfn), ull(m.end_pfn), ull(nblocks)));
  m.classes.reserve(classes.size());
  std::array<uint64_t, kBlockClasses> counted{};
  for (size_t i = 0; i < classes.size(); ++i) {
    BlockClass c;
    if (!block_class_from_char(classes[i], c))
      malformed(strf("%s.classes: character 0x%02x at block %zu is not a block class (one of . m x U H -)",
                     path.c_str(), static_cast<unsigned char>(classes[i]), i));
    m.classes.push_back(c);
    ++counted[static_cast<size_t>(c)];
  }

  const json& used = array_member(z, "used", path);
  if (used.size() != nblocks)
    malformed(strf("%s.used: %zu values, but \"classes\" has %llu blocks", path.c_str(), used.size(), ull(nblocks)));
  m.used.reserve(used.size());
  for (size_t i = 0; i < used.size(); ++i) {
    const std::string p = strf("%s.used[%zu]", path.c_str(), i);
    uint64_t v = as_u64(used[i], p);
    if (v > block_pages)
      malformed(strf("%s: %llu is more than the %llu pages of a block", p.c_str(), ull(v), ull(block_pages)));
    m.used.push_back(static_cast<uint32_t>(v));
  }

  const json& counts = object_member(z, "counts", path);
  for (size_t c = 0; c < kBlockClasses; ++c) {
    const char* name = block_class_name(static_cast<BlockClass>(c));
    m.counts[c] = u64_member(counts, name, path + ".counts");
    if (m.counts[c] != counted[c])
      malformed(strf("%s.counts.%s: %llu, but \"classes\" has %llu %s blocks", path.c_str(), name,
                     ull(m.counts[c]), ull(counted[c]), name));
  }

  m.free_pages = bounded_member(z, "free_pages", path, m.end_pfn - m.start_pfn);
  const json& huge = object_member(z, "hugepages", path);
  m.hugepages_free = bounded_member(huge, "free", path + ".hugepages", nblocks);
  m.hugepages_compaction = bounded_member(huge, "compaction", path + ".hugepages", nblocks);
  m.hugepages_polluted = bounded_member(huge, "polluted", path + ".hugepages", nblocks);
  m.compaction_cost_pages = bounded_member(z, "compaction_cost_pages", path, m.end_pfn - m.start_pfn);
  return m;
}

PollutionView parse_pollution(const json& p, unsigned order) {
  const std::string path = "pollution";
  if (!p.is_object()) malformed(path + ": not an object or null");
  PollutionView v;
  v.tracked_blocks = u64_member(p, "tracked_blocks", path);
  v.tracked_pages = u64_member(p, "tracked_pages", path);
  v.untracked_events = u64_member(p, "untracked_events", path);
  const json& blocks = array_member(p, "blocks", path);
  for (size_t i = 0; i < blocks.size(); ++i) {
    const std::string bp = strf("pollution.blocks[%zu]", i);
    const json& b = blocks[i];
    if (!b.is_object()) malformed(bp + ": not an object");
    PollutedBlock pb;
    pb.block = u64_member(b, "block", bp);
    pb.node = static_cast<int>(bounded_member(b, "node", bp, kMaxNode));
    pb.pages = u64_member(b, "pages", bp);
    pb.events = u64_member(b, "events", bp);
    pb.first_ns = u64_member(b, "first_ns", bp);
    pb.last_ns = u64_member(b, "last_ns", bp);
    if (pb.last_ns < pb.first_ns)
      malformed(strf("%s.last_ns: %llu is before first_ns %llu", bp.c_str(), ull(pb.last_ns), ull(pb.first_ns)));
    pb.pid = u64_member(b, "pid", bp);
    pb.comm = string_member(b, "comm", bp);
    pb.cgroup_id = u64_member(b, "cgroup_id", bp);
    pb.alloc = string_member(b, "alloc", bp);
    if (pb.block > (UINT64_MAX >> order)) malformed(bp + ".block: beyond the physical address space");
    v.blocks.push_back(std::move(pb));
  }
  const json& top = array_member(p, "top", path);
  for (size_t i = 0; i < top.size(); ++i) {
    const std::string tp = strf("pollution.top[%zu]", i);
    const json& t = top[i];
    if (!t.is_object()) malformed(tp + ": not an object");
    Polluter pl;
    pl.comm = string_member(t, "comm", tp);
    pl.cgroup_id = u64_member(t, "cgroup_id", tp);
    pl.blocks = u64_member(t, "blocks", tp);
    pl.pages = u64_member(t, "pages", tp);
    v.top.push_back(std::move(pl));
  }
  return v;
}

MapView parse_body(const json& a) {
  MapView v;
  const json& scan = member(a, "scan", "answer");
  if (scan.is_null()) {
    v.scanned = false;
    auto it = a.find("scan_error");
    if (it != a.end() && !it->is_null() && !it->is_string()) malformed("scan_error: not a string");
    v.scan_error = (it != a.end() && it->is_string()) ? it->get<std::string>() : "fragd gave no reason";
  } else {
    if (!scan.is_object()) malformed("scan: not an object or null");
    v.scanned = true;
    v.time_ns = u64_member(scan, "time_ns", "scan");
    v.age_ns = u64_member(scan, "age_ns", "scan");
    v.duration_ns = u64_member(scan, "duration_ns", "scan");
    v.pages_read = u64_member(scan, "pages_read", "scan");
    v.pageblock_order = static_cast<unsigned>(bounded_member(scan, "pageblock_order", "scan", kMaxMapPageblockOrder));
    const json& zones = array_member(scan, "zones", "scan");
    for (size_t i = 0; i < zones.size(); ++i)
      v.zones.push_back(parse_zone(zones[i], strf("scan.zones[%zu]", i), v.pageblock_order));
  }
  const json& pol = member(a, "pollution", "answer");
  if (!pol.is_null()) v.pollution = parse_pollution(pol, v.pageblock_order);
  return v;
}

bool iequal(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

bool zone_selected(int node, const std::string& zone, const MapFilter& f) {
  return (!f.node || *f.node == node) && (!f.zone || iequal(*f.zone, zone));
}

std::string filter_text(const MapFilter& f) {
  std::string s;
  if (f.node) s += "node " + std::to_string(*f.node);
  if (f.zone) s += (s.empty() ? "zone " : ", zone ") + *f.zone;
  return s;
}

// Whether `block` of `node` lies in one of the zones (node, first block, count).
struct ZoneBlocks {
  int node;
  uint64_t first, count;
};
bool in_zones(uint64_t block, int node, const std::vector<ZoneBlocks>& zones) {
  for (const auto& z : zones)
    if (z.node == node && block >= z.first && block - z.first < z.count) return true;
  return false;
}

std::string addr_hex(uint64_t pfn, uint64_t page_kib) { return strf("0x%llx", ull(pfn * page_kib * 1024)); }

}  // namespace

Result<MapView> parse_map_answer(const json& answer) {
  if (auto ok = check_answer(answer, "map"); !ok) return ok.error();
  try {
    return parse_body(answer);
  } catch (const Malformed& m) {
    return make_error("malformed answer to 'map' from fragd: " + m.what);
  } catch (const json::exception& e) {
    return make_error(std::string("malformed answer to 'map' from fragd: ") + e.what());
  }
}

Result<void> filter_map(MapView& v, const MapFilter& f) {
  if (!v.scanned || (!f.node && !f.zone)) return {};
  std::vector<MapZone> kept;
  std::string names;
  for (auto& z : v.zones) {
    names += strf("%snode %d %s", names.empty() ? "" : ", ", z.node, z.zone.c_str());
    if (zone_selected(z.node, z.zone, f)) kept.push_back(std::move(z));
  }
  if (kept.empty())
    return make_error("no zone of fragd's map matches " + filter_text(f) + " (there " +
                      (v.zones.size() == 1 ? "is " : "are ") + (names.empty() ? "none" : names) + ")");
  v.zones = std::move(kept);
  if (v.pollution) {
    std::vector<ZoneBlocks> zb;
    for (const auto& z : v.zones) zb.push_back({z.node, z.first_block, z.blocks()});
    auto& b = v.pollution->blocks;
    b.erase(std::remove_if(b.begin(), b.end(), [&](const PollutedBlock& p) { return !in_zones(p.block, p.node, zb); }),
            b.end());
  }
  return {};
}

Result<void> filter_map_answer(json& answer, const MapFilter& f) {
  auto v = parse_map_answer(answer);
  if (!v) return v.error();
  if (auto r = filter_map(*v, f); !r) return r;
  if (!v->scanned || (!f.node && !f.zone)) return {};
  json& zones = answer["scan"]["zones"];
  json kept = json::array();
  std::vector<ZoneBlocks> zb;
  for (auto& z : zones) {
    if (!zone_selected(z["node"].get<int>(), z["zone"].get<std::string>(), f)) continue;
    zb.push_back({z["node"].get<int>(), z["first_block"].get<uint64_t>(), z["classes"].get<std::string>().size()});
    kept.push_back(std::move(z));
  }
  zones = std::move(kept);
  json& pol = answer["pollution"];
  if (pol.is_object()) {
    json blocks = json::array();
    for (auto& b : pol["blocks"])
      if (in_zones(b["block"].get<uint64_t>(), b["node"].get<int>(), zb)) blocks.push_back(std::move(b));
    pol["blocks"] = std::move(blocks);
  }
  return {};
}


std::string format_realtime(uint64_t realtime_ns, bool utc) {
  std::time_t t = static_cast<std::time_t>(realtime_ns / 1000000000ULL);
  std::tm tm{};
  if (utc) gmtime_r(&t, &tm);
  else localtime_r(&t, &tm);
  char buf[48];
  std::strftime(buf, sizeof buf, utc ? "%Y-%m-%d %H:%M:%S UTC" : "%Y-%m-%d %H:%M:%S %z", &tm);
  return buf;
}

std::array<uint64_t, kBlockClasses> map_class_totals(const MapView& v) {
  std::array<uint64_t, kBlockClasses> t{};
  for (const auto& z : v.zones)
    for (size_t c = 0; c < kBlockClasses; ++c) t[c] += z.counts[c];
  return t;
}

std::string format_map_text(const MapView& v, const MapTextOptions& opt) {
  if (!v.scanned) return "no pageblock map: " + v.scan_error + "\n";
  const uint64_t page_kib = opt.page_kib ? opt.page_kib : 4;
  const unsigned order = v.pageblock_order;
  const uint64_t block_pages = v.block_pages();
  const uint64_t row = opt.row_blocks ? opt.row_blocks : 64;
  const std::string block_size = format_size_kib(block_pages * page_kib);
  auto mib = [&](uint64_t pages) { return strf("%.1f MiB", static_cast<double>(pages * page_kib) / 1024); };

  std::string out = strf("pageblock map: scanned %s (%s ago) in %s, %llu pages read; one block = %s (order %u)\n",
                         format_realtime(v.time_ns, opt.utc_times).c_str(), format_duration(v.age_ns, DurationStyle::Age).c_str(),
                         format_duration(static_cast<double>(v.duration_ns)).c_str(), ull(v.pages_read),
                         block_size.c_str(), order);
  for (const auto& z : v.zones) {
    out += strf("\nnode %d %s: pfn 0x%llx-0x%llx (%s), %llu blocks:", z.node, printable(z.zone).c_str(),
                ull(z.start_pfn), ull(z.end_pfn), format_size_kib((z.end_pfn - z.start_pfn) * page_kib).c_str(),
                ull(z.blocks()));
    for (size_t c = 0; c < kBlockClasses; ++c)
      out += strf(" %llu %s%s", ull(z.counts[c]), block_class_name(static_cast<BlockClass>(c)),
                  c + 1 < kBlockClasses ? "," : "");
    out += strf("\n  hugepages of %s: %llu free, +%llu by compaction (migrating %llu pages, %s), %llu polluted; "
                "%llu pages free\n",
                block_size.c_str(), ull(z.hugepages_free), ull(z.hugepages_compaction), ull(z.compaction_cost_pages),
                mib(z.compaction_cost_pages).c_str(), ull(z.hugepages_polluted), ull(z.free_pages));
    if (!opt.rows) continue;
    const uint64_t first_row = z.first_block / row * row;
    const uint64_t end_block = z.first_block + z.blocks();
    for (uint64_t r = first_row; r < end_block; r += row) {
      out += "  " + strf("%12s ", addr_hex(r << order, page_kib).c_str());
      std::string cells;
      for (uint64_t b = r; b < r + row; ++b) {
        if (b > r && (b - r) % 16 == 0) cells += ' ';
        cells += (b >= z.first_block && b < end_block) ? block_class_char(z.classes[b - z.first_block]) : ' ';
      }
      while (!cells.empty() && cells.back() == ' ') cells.pop_back();
      out += cells + "\n";
    }
  }
  if (opt.rows && !v.zones.empty()) {
    out += "\nlegend:";
    for (size_t c = 0; c < kBlockClasses; ++c)
      out += strf(" %c %s ", block_class_char(static_cast<BlockClass>(c)), block_class_name(static_cast<BlockClass>(c)));
    out += strf("(one character = %s, one row = %s)\n", block_size.c_str(),
                format_size_kib(row * block_pages * page_kib).c_str());
  }

  out += "\n";
  if (!v.pollution) {
    out += "pollution: not tracked (fragd's pollution programs are not attached)\n";
    return out;
  }
  const PollutionView& p = *v.pollution;
  out += strf("pollution (unmovable pages in movable blocks, whole host): %llu blocks, %llu pages tracked, "
              "%llu events untracked\n",
              ull(p.tracked_blocks), ull(p.tracked_pages), ull(p.untracked_events));
  if (!p.top.empty()) {
    out += strf("  %-16s %12s %8s %8s\n", "COMM", "CGROUP", "BLOCKS", "PAGES");
    for (const auto& t : p.top)
      out += strf("  %-16s %12llu %8llu %8llu\n", printable(t.comm).c_str(), ull(t.cgroup_id), ull(t.blocks),
                  ull(t.pages));
  }
  constexpr size_t kBlocksShown = 5;
  if (!p.blocks.empty()) {
    out += strf("  most polluted blocks (%zu of %zu):\n", std::min(kBlocksShown, p.blocks.size()), p.blocks.size());
    out += strf("  %-14s %4s %6s %6s %-12s %8s %-16s %s\n", "ADDRESS", "NODE", "PAGES", "EVENTS", "ALLOC", "PID",
                "COMM", "CGROUP");
    for (size_t i = 0; i < p.blocks.size() && i < kBlocksShown; ++i) {
      const auto& b = p.blocks[i];
      out += strf("  %-14s %4d %6llu %6llu %-12s %8llu %-16s %llu\n", addr_hex(b.block << order, page_kib).c_str(),
                  b.node, ull(b.pages), ull(b.events), printable(b.alloc).c_str(), ull(b.pid),
                  printable(b.comm).c_str(), ull(b.cgroup_id));
    }
  }
  return out;
}

}  // namespace fragd
