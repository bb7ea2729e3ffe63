// SPDX-License-Identifier: Apache-2.0
#include "fragctl/render/map_view.h"
#include "base/text.h"

#include <algorithm>
#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <ctime>

#include <nlohmann/json.hpp>

#include "protocol/wire.h"

namespace fragd {

namespace {

using json = nlohmann::json;

using ull = unsigned long long;

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

Result<MapView> parse_map_answer(const json& answer) { return read_answer<MapView>(answer, "map"); }

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
  if (v.pollution && v.pollution->blocks) {
    std::vector<ZoneBlocks> zb;
    for (const auto& z : v.zones) zb.push_back({z.node, z.first_block, z.blocks()});
    auto& b = *v.pollution->blocks;
    b.erase(std::remove_if(b.begin(), b.end(),
                           [&](const PollutedBlockInfo& p) { return !in_zones(p.block, p.node, zb); }),
            b.end());
  }
  return {};
}

Result<void> filter_map_answer(json& answer, const MapFilter& f) {
  auto v = parse_map_answer(answer);
  if (!v) return v.error();
  if (auto r = filter_map(*v, f); !r) return r;
  answer = *v;
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
  bool sampled = false, unseen = false;
  for (const auto& z : v.zones) sampled = sampled || z.sample.has_value();
  if (sampled)
    out += "estimates from a random sample of each zone's blocks, with 95% intervals; the map shows each block's "
           "last class (" + (v.map_age_ns ? "the oldest read " + format_duration(*v.map_age_ns, DurationStyle::Age) + " ago"
                                           : std::string("'?': not read yet")) + ")\n";
  if (v.withheld)
    out += "fragd sent each zone's counts only; it withheld " + printable(*v.withheld) + "\n";
  for (const auto& z : v.zones) {
    // Without the blocks (withheld), the zone's span says how many there are.
    const uint64_t nblocks = v.withheld ? ((z.end_pfn - 1) >> order) - z.first_block + 1 : z.blocks();
    out += strf("\nnode %d %s: pfn 0x%llx-0x%llx (%s), %llu blocks", z.node, printable(z.zone).c_str(),
                ull(z.start_pfn), ull(z.end_pfn), format_size_kib((z.end_pfn - z.start_pfn) * page_kib).c_str(),
                ull(nblocks));
    out += z.sample ? strf(" (%llu sampled, estimated):", ull(z.sample->blocks)) : std::string(":");
    for (size_t c = 0; c < kBlockClasses; ++c)
      out += strf(" %llu %s%s", ull(z.counts[c]), block_class_name(static_cast<BlockClass>(c)),
                  c + 1 < kBlockClasses ? "," : "");
    auto ci = [&](const Bounds& b) { return z.sample ? strf(" (95%%: %llu-%llu)", ull(b.lo), ull(b.hi)) : std::string(); };
    out += strf("\n  hugepages of %s: %llu free, +%llu%s by compaction (migrating %llu pages, %s), %llu%s polluted; "
                "%llu pages free\n",
                block_size.c_str(), ull(z.hugepages_free), ull(z.hugepages_compaction),
                z.sample ? ci(z.sample->compaction).c_str() : "", ull(z.compaction_cost_pages),
                mib(z.compaction_cost_pages).c_str(), ull(z.hugepages_polluted),
                z.sample ? ci(z.sample->polluted).c_str() : "", ull(z.free_pages));
    for (BlockClass c : z.classes) unseen = unseen || c == BlockClass::Unseen;
    if (!opt.rows || v.withheld) continue;
    const uint64_t first_row = z.first_block / row * row;
    const uint64_t end_block = z.first_block + z.blocks();
    // 1 GiB boundaries: a row starting at one is marked '>' (where a 1 GiB page could start).
    const uint64_t giga_pages = (uint64_t{1} << 30) / (page_kib * 1024);
    for (uint64_t r = first_row; r < end_block; r += row) {
      out += ((r << order) % giga_pages == 0 ? "> " : "  ") + strf("%12s ", addr_hex(r << order, page_kib).c_str());
      std::string cells;
      for (uint64_t b = r; b < r + row; ++b) {
        if (b > r && (b - r) % 16 == 0) cells += ' ';
        cells += (b >= z.first_block && b < end_block) ? block_class_char(z.classes[b - z.first_block]) : ' ';
      }
      while (!cells.empty() && cells.back() == ' ') cells.pop_back();
      out += cells + "\n";
    }
  }
  if (opt.rows && !v.withheld && !v.zones.empty()) {
    out += "\nlegend:";
    for (size_t c = 0; c < kBlockClasses; ++c)
      out += strf(" %c %s ", block_class_char(static_cast<BlockClass>(c)), block_class_name(static_cast<BlockClass>(c)));
    if (unseen) out += strf(" %c not read yet ", block_class_char(BlockClass::Unseen));
    out += strf("(one character = %s, one row = %s; '>' starts a row at a 1 GiB boundary)\n", block_size.c_str(),
                format_size_kib(row * block_pages * page_kib).c_str());
  }

  out += "\n";
  if (!v.pollution) {
    out += "pollution: not tracked (fragd's pollution programs are not attached)\n";
    return out;
  }
  const PollutionInfo& p = *v.pollution;
  const std::vector<PollutedBlockInfo> none;
  const auto& blocks = p.blocks ? *p.blocks : none;
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
  if (!blocks.empty()) {
    out += strf("  most polluted blocks (%zu of %zu):\n", std::min(kBlocksShown, blocks.size()), blocks.size());
    out += strf("  %-14s %4s %6s %6s %-12s %8s %-16s %s\n", "ADDRESS", "NODE", "PAGES", "EVENTS", "ALLOC", "PID",
                "COMM", "CGROUP");
    for (size_t i = 0; i < blocks.size() && i < kBlocksShown; ++i) {
      const auto& b = blocks[i];
      out += strf("  %-14s %4d %6llu %6llu %-12s %8llu %-16s %llu\n", addr_hex(b.block << order, page_kib).c_str(),
                  b.node, ull(b.pages), ull(b.events), printable(b.alloc).c_str(), ull(b.pid),
                  printable(b.comm).c_str(), ull(b.cgroup_id));
    }
  }
  return out;
}

}  // namespace fragd
