// SPDX-License-Identifier: Apache-2.0
#include "concerns/memory/score.h"

#include <algorithm>
#include <limits>
#include <map>

namespace fragd {
namespace {

// The kernel does this arithmetic in unsigned long and real counts never come
// near 2^64. Parsed input, though, can hold any uint64_t, so sums are taken
// in 128 bits (kMaxOrders keeps `blocks << order` below 2^96) and clamped.
using u128 = unsigned __int128;

uint64_t clamp64(u128 v) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  return v > kMax ? kMax : static_cast<uint64_t>(v);
}

// fill_contig_page_info (mm/vmstat.c): free pages over all orders, and free
// pages in blocks of order >= suitable_order.
struct ContigInfo {
  u128 free_pages = 0;
  u128 suitable_pages = 0;
};

ContigInfo fill_contig_info(const ZoneFree& z, unsigned suitable_order) {
  ContigInfo info;
  const size_t orders = std::min(z.free_blocks.size(), kMaxOrders);
  for (size_t o = 0; o < orders; ++o) {
    const u128 pages = static_cast<u128>(z.free_blocks[o]) << o;
    info.free_pages += pages;
    if (o >= suitable_order) info.suitable_pages += pages;
  }
  return info;
}

// (free - suitable) * scale / free, truncated, as extfrag_for_order and
// unusable_free_index compute it with div_u64. free > 0.
uint64_t unusable_scaled(const ContigInfo& info, unsigned scale) {
  return clamp64((info.free_pages - info.suitable_pages) * scale / info.free_pages);
}

}  // namespace

uint64_t buddy_free_pages(const ZoneFree& z) { return clamp64(fill_contig_info(z, 0).free_pages); }

uint64_t buddy_suitable_pages(const ZoneFree& z, unsigned order) {
  return clamp64(fill_contig_info(z, order).suitable_pages);
}

// extfrag_for_order() (mm/vmstat.c) as used by fragmentation_score_zone()
// (mm/compaction.c).
unsigned zone_score(const ZoneFree& z, unsigned order) {
  const ContigInfo info = fill_contig_info(z, order);
  if (info.free_pages == 0) return 0;
  return static_cast<unsigned>(unusable_scaled(info, 100));
}

// fragmentation_score_node() summing fragmentation_score_zone_weighted()
// (mm/compaction.c). node_present_pages is the sum of the node's zones'
// present_pages (calculate_node_totalpages in mm/mm_init.c), including the
// unpopulated ones, which add 0. Zones with present_pages == 0 are skipped
// like the kernel's populated_zone() check; they would add 0 anyway.
std::vector<NodeScore> node_scores(const std::vector<ZoneFree>& zones, unsigned order) {
  std::map<int, u128> node_present;
  for (const ZoneFree& z : zones) node_present[z.node] += z.present_pages;

  std::map<int, uint64_t> node_score;
  for (const ZoneFree& z : zones) {
    node_score.try_emplace(z.node, 0);
    if (z.present_pages == 0) continue;
    // div64_ul(zone->present_pages * score, node_present_pages + 1)
    const u128 weighted =
        static_cast<u128>(z.present_pages) * zone_score(z, order) / (node_present[z.node] + 1);
    node_score[z.node] += clamp64(weighted);
  }

  std::vector<NodeScore> out;
  out.reserve(node_score.size());
  for (const auto& [node, score] : node_score) {
    NodeScore ns;
    ns.node = node;
    ns.score =
        static_cast<unsigned>(std::min<uint64_t>(score, std::numeric_limits<unsigned>::max()));
    ns.present_pages = clamp64(node_present[node]);
    out.push_back(ns);
  }
  return out;
}

// unusable_free_index() as printed by unusable_show_print() (mm/vmstat.c),
// one value per order.
std::vector<unsigned> unusable_index_permille(const ZoneFree& z) {
  const size_t orders = std::min(z.free_blocks.size(), kMaxOrders);
  std::vector<unsigned> out;
  out.reserve(orders);
  for (size_t o = 0; o < orders; ++o) {
    const ContigInfo info = fill_contig_info(z, static_cast<unsigned>(o));
    // "No free memory is interpreted as all free memory is unusable".
    out.push_back(info.free_pages == 0 ? 1000u
                                       : static_cast<unsigned>(unusable_scaled(info, 1000)));
  }
  return out;
}

std::vector<double> unusable_index(const ZoneFree& z) {
  std::vector<double> out;
  for (unsigned permille : unusable_index_permille(z)) out.push_back(permille / 1000.0);
  return out;
}

uint64_t blocks_of_order(const std::vector<uint64_t>& free_blocks, unsigned order) {
  if (free_blocks.empty()) return 0;
  const unsigned top = static_cast<unsigned>(free_blocks.size() - 1);
  if (order > top) return order - top >= 64 ? 0 : free_blocks.back() >> (order - top);
  constexpr uint64_t kMax = ~uint64_t{0};
  uint64_t n = 0;
  for (unsigned o = order; o <= top; ++o) {
    const unsigned shift = o - order;
    const uint64_t b = free_blocks[o];
    const uint64_t v = shift >= 64 || (b != 0 && b > (kMax >> shift)) ? kMax : b << shift;
    n = n > kMax - v ? kMax : n + v;
  }
  return n;
}

bool memory_changed(const MemSnapshot& then, const MemSnapshot& now, unsigned pageblock_order, double fraction) {
  return memory_change(then, now, pageblock_order, fraction).has_value();
}

std::optional<std::string> memory_change(const MemSnapshot& then, const MemSnapshot& now, unsigned pageblock_order,
                                         double fraction) {
  if (then.zones.size() != now.zones.size()) return "the zones changed";
  for (size_t i = 0; i < now.zones.size(); i++) {
    const ZoneFree& a = then.zones[i];
    const ZoneFree& b = now.zones[i];
    if (a.node != b.node || a.zone != b.zone) return "the zones changed";
    const double limit = std::max(1.0, fraction * static_cast<double>(b.present_pages));
    // The message is built only for a change: a tick on a quiet host compares and returns.
    auto said = [&](const std::string& what) {
      return "node " + std::to_string(b.node) + " " + b.zone + ": " + what + ", " +
             std::to_string(static_cast<uint64_t>(limit)) + " pages (" + std::to_string(static_cast<int>(fraction * 100)) +
             "% of the zone) or more is a change";
    };
    // `what`, then `order` when one is given.
    auto moved = [&](uint64_t x, uint64_t y, const char* what, int order = -1) -> std::optional<std::string> {
      const uint64_t d = x > y ? x - y : y - x;
      if (static_cast<double>(d) < limit) return std::nullopt;
      return said(what + (order >= 0 ? std::to_string(order) : "") + (y > x ? " grew by " : " fell by ") +
                  std::to_string(d));
    };
    if (auto m = moved(buddy_suitable_pages(a, pageblock_order), buddy_suitable_pages(b, pageblock_order),
                       "free pages in blocks of order >= ", static_cast<int>(pageblock_order)))
      return m;
    if (auto m = moved(buddy_free_pages(a), buddy_free_pages(b), "free pages")) return m;
    // Blocks that changed migratetype: each moves one count out of a type and into another.
    uint64_t moved_counts = 0;
    for (const auto& [type, n] : b.pageblocks) {
      auto it = a.pageblocks.find(type);
      const uint64_t m = it == a.pageblocks.end() ? 0 : it->second;
      moved_counts += n > m ? n - m : m - n;
    }
    for (const auto& [type, m] : a.pageblocks)
      if (!b.pageblocks.count(type)) moved_counts += m;
    const uint64_t block_pages = uint64_t{1} << pageblock_order;
    if (static_cast<double>(moved_counts / 2 * block_pages) >= limit && moved_counts > 0)
      return said(std::to_string(moved_counts / 2) + " pageblocks changed migratetype");
  }
  return std::nullopt;
}

std::optional<std::string> LastingChange::see(const MemSnapshot& now, unsigned pageblock_order) {
  if (!ref_) {
    ref_ = now;
    return "the first snapshot";
  }
  auto change = memory_change(*ref_, now, pageblock_order);
  if (!change) {
    seen_once_ = false;
    return std::nullopt;
  }
  if (!seen_once_) {
    seen_once_ = true;  // a change at one tick only is no change yet
    return std::nullopt;
  }
  seen_once_ = false;
  ref_ = now;
  return change;
}

}  // namespace fragd
