// SPDX-License-Identifier: Apache-2.0
#include "concerns/supply/supply.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <bit>
#include <numeric>
#include <set>

#include "base/format.h"
#include "base/text.h"

namespace fragd {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Ready: return "ready";
    case Verdict::Makeable: return "makeable";
    case Verdict::No: return "no";
  }
  return "no";
}

int verdict_exit_status(Verdict v) {
  switch (v) {
    case Verdict::Ready: return 0;
    case Verdict::Makeable: return 3;
    case Verdict::No: return 4;
  }
  return 4;
}

uint64_t migrate_cost(const ZoneScan& z, uint64_t n) {
  const auto& m = z.movable_sorted;
  if (n == 0 || m.empty()) return 0;
  const uint64_t movable = z.counts[static_cast<size_t>(BlockClass::Movable)];
  // A full scan lists every movable block (per 1); a sampled round's each stand for `per`.
  const double per = movable > m.size() ? static_cast<double>(movable) / static_cast<double>(m.size()) : 1.0;
  double left = static_cast<double>(std::min(n, std::max<uint64_t>(movable, m.size())));
  double pages = 0;
  for (uint16_t used : m) {
    if (left <= 0) break;
    const double take = std::min(left, per);
    pages += take * used;
    left -= take;
  }
  return static_cast<uint64_t>(std::llround(pages));
}

namespace {

uint64_t shift_to(uint64_t blocks, unsigned from, unsigned to) {
  if (to <= from) return from - to >= 40 ? blocks : blocks << (from - to);
  return (to - from) >= 64 ? 0 : blocks >> (to - from);
}

// The largest order of the buddy free lists (buddyinfo's last column).
unsigned max_buddy_order(const MemSnapshot& m) {
  size_t n = 0;
  for (const auto& z : m.zones) n = std::max(n, z.free_blocks.size());
  return n ? static_cast<unsigned>(n - 1) : 0;
}

std::string list_sizes(const std::set<uint64_t>& sizes) {
  std::string s;
  for (uint64_t k : sizes) s += (s.empty() ? "" : ", ") + format_size_kib(k);
  return s.empty() ? "none" : s;
}

uint64_t reserve_of(const SupplyInputs& in, int node, const std::string& zone) {
  if (in.scan)
    for (const auto& z : in.scan->zones)
      if (z.node == node && z.zone == zone) return z.reserve_pages;
  for (const auto& s : in.spans)
    if (s.node == node && s.zone == zone) return s.reserve_pages;
  return 0;
}

}  // namespace

namespace {

// The order and size asked, checked against the free lists' orders and the hugetlb pools.
Result<void> resolve_size(const SupplyAsk& ask, const MemSnapshot& mem, uint64_t base_kib, unsigned top, Supply& s) {
  std::set<uint64_t> sizes;
  for (const auto& p : mem.hugepages) sizes.insert(p.size_kib);
  if (ask.order) {
    s.order = *ask.order;
    if (s.order == 0 || s.order > top)
      return make_error(strf("order %u: this kernel's free lists hold orders 1..%u (a larger block comes from a "
                             "hugetlb pool: ask for its size, %s)",
                             s.order, top, list_sizes(sizes).c_str()));
    s.size_kib = base_kib << s.order;
    s.hugetlb = false;
    return {};
  }
  s.size_kib = ask.size_kib;
  if (!sizes.count(ask.size_kib))
    return make_error("no hugetlb pool of " + format_size_kib(ask.size_kib) + " on this kernel (its sizes: " +
                      list_sizes(sizes) + "); for plain free blocks of a size ask with an order");
  if (ask.size_kib % base_kib || !std::has_single_bit(ask.size_kib / base_kib))
    return make_error("a page of " + format_size_kib(ask.size_kib) + " is not a power of two of base pages");
  s.order = static_cast<unsigned>(std::countr_zero(ask.size_kib / base_kib));
  s.hugetlb = true;
  if (s.order > top && s.order != gigantic_order(base_kib))
    return make_error(strf("a page of order %u is neither on the free lists (orders 1..%u) nor a 1 GiB page", s.order,
                           top));
  return {};
}

// The nodes asked, with their memory; an error naming the nodes there are when the asked one has none.
Result<std::map<int, NodeSupply>> asked_nodes(const SupplyAsk& ask, const MemSnapshot& mem) {
  std::map<int, NodeSupply> nodes;
  for (const auto& z : mem.zones) {
    if (ask.node >= 0 && z.node != ask.node) continue;
    if (z.present_pages == 0 && z.free_blocks.empty()) continue;
    NodeSupply& n = nodes[z.node];
    n.node = z.node;
    n.total_pages += z.present_pages;
  }
  if (ask.node >= 0 && nodes.empty()) {
    std::set<int> have;
    for (const auto& z : mem.zones)
      if (z.present_pages) have.insert(z.node);
    std::string list;
    for (int n : have) list += (list.empty() ? "" : ", ") + std::to_string(n);
    return make_error(strf("node %d has no memory on this machine (nodes with memory: %s)", ask.node, list.c_str()));
  }
  return nodes;
}

// Free blocks of `order` on a zone's free lists, larger ones counted as several.
uint64_t free_blocks_of(const ZoneFree& z, unsigned order) {
  uint64_t blocks = 0;
  for (size_t k = order; k < z.free_blocks.size(); k++) blocks += shift_to(z.free_blocks[k], static_cast<unsigned>(k), order);
  return blocks;
}

// Pages of `order` a zone's free pages above its reserve could hold.
uint64_t free_pages_hold(const SupplyInputs& in, const ZoneFree& z, unsigned order) {
  const uint64_t reserve = reserve_of(in, z.node, z.zone);
  return z.free_pages > reserve ? (z.free_pages - reserve) >> order : 0;
}

// Makeable pages by the scan's picture of each zone (or the map's 1 GiB ranges).
void makeable_from_scan(const SupplyInputs& in, unsigned pb, bool gigantic, Supply& s, std::map<int, NodeSupply>& nodes) {
  s.basis = in.scan->sampled ? "sampled scan" : "scan";
  s.age_seconds = static_cast<double>(std::max(in.scan_age_ns, in.mem_age_ns)) / 1e9;
  const bool map_whole = in.scan->map_oldest_boot_ns != 0;
  for (const auto& z : in.scan->zones) {
    if (!nodes.count(z.node)) continue;
    NodeSupply& n = nodes[z.node];
    if (gigantic) {
      n.free_blocks += z.gigantic_free;
      n.makeable += z.gigantic_migration;
      n.makeable_ci.lo += z.gigantic_migration;
      // While some block was never read the map's ranges are lower bounds: the most a
      // zone could hold is every 1 GiB range of its span.
      n.makeable_ci.hi +=
          map_whole ? z.gigantic_migration : std::max(z.gigantic_migration, (z.end_pfn - z.start_pfn) >> s.order);
    } else {
      n.makeable += shift_to(z.hugepages_compaction, pb, s.order);
      n.makeable_ci.lo += shift_to(z.compaction_ci.lo, pb, s.order);
      n.makeable_ci.hi += shift_to(z.compaction_ci.hi, pb, s.order);
    }
  }
  if (gigantic && !map_whole) s.basis += " (1 GiB ranges: a lower bound until every pageblock was read once)";
}

// Without a scan: the most the free pages could hold beyond the free blocks.
void makeable_from_free_lists(const SupplyInputs& in, bool gigantic, Supply& s, std::map<int, NodeSupply>& nodes) {
  s.basis = "free lists only: " + (in.no_scan.empty() ? std::string("no pageblock scan yet") : in.no_scan) +
            "; makeable is the most the free pages could hold";
  s.age_seconds = static_cast<double>(in.mem_age_ns) / 1e9;
  for (const auto& z : in.mem->zones) {
    if (!nodes.count(z.node) || gigantic) continue;
    const uint64_t holds = free_pages_hold(in, z, s.order), blocks = free_blocks_of(z, s.order);
    const uint64_t more = holds > blocks ? holds - blocks : 0;
    NodeSupply& n = nodes[z.node];
    n.makeable += more;
    n.makeable_ci.hi += more;
  }
}

// What the ask lacks beyond free, taken node by node in order, and the pages each share migrates.
void pages_to_migrate(const SupplyAsk& ask, const SupplyInputs& in, unsigned pb, bool gigantic, Supply& s,
                      std::map<int, NodeSupply>& nodes) {
  uint64_t lack = ask.count > s.free ? ask.count - s.free : 0;
  for (auto& [id, n] : nodes) {
    const uint64_t take = std::min(lack, n.makeable);
    lack -= take;
    if (!take || !in.scan) continue;
    for (const auto& z : in.scan->zones) {
      if (z.node != id) continue;
      if (gigantic) {
        const uint64_t k = std::min<uint64_t>(take, z.gigantic_used.size());
        n.pages_to_migrate += std::accumulate(z.gigantic_used.begin(),
                                              z.gigantic_used.begin() + static_cast<std::ptrdiff_t>(k), uint64_t{0});
      } else {
        // order-o blocks as 2 MiB blocks (rounded up: a part of a block still moves its pages)
        const uint64_t blocks = s.order <= pb ? (take + (uint64_t{1} << (pb - s.order)) - 1) >> (pb - s.order)
                                              : take << (s.order - pb);
        n.pages_to_migrate += migrate_cost(z, std::min(blocks, z.hugepages_compaction));
      }
    }
    s.pages_to_migrate += n.pages_to_migrate;
  }
}

void set_verdict(const SupplyAsk& ask, Supply& s) {
  const std::string what = strf("%llu x %s", static_cast<unsigned long long>(ask.count), format_size_kib(s.size_kib).c_str());
  const std::string where = ask.node >= 0 ? strf("node %d", ask.node) : std::string("this host");
  if (ask.count <= s.free) {
    s.verdict = Verdict::Ready;
    s.reason = strf("%s: %s ready, %llu free now", where.c_str(), what.c_str(), static_cast<unsigned long long>(s.free));
  } else if (ask.count <= s.free + s.makeable) {
    s.verdict = Verdict::Makeable;
    s.reason = strf("%s: %s makeable, %llu free now and %llu more by compaction (95%%: %llu..%llu in all), "
                    "migrating about %s pages",
                    where.c_str(), what.c_str(), static_cast<unsigned long long>(s.free),
                    static_cast<unsigned long long>(s.makeable), static_cast<unsigned long long>(s.interval.lo),
                    static_cast<unsigned long long>(s.interval.hi), format_count(static_cast<double>(s.pages_to_migrate)).c_str());
  } else {
    s.verdict = Verdict::No;
    uint64_t total = 0;
    for (const auto& n : s.nodes) total += n.total_pages;
    const uint64_t whole = total >> s.order;
    s.reason = strf("%s: %s not possible, %llu free now and %llu more by compaction (95%%: %llu..%llu in all)",
                    where.c_str(), what.c_str(), static_cast<unsigned long long>(s.free),
                    static_cast<unsigned long long>(s.makeable), static_cast<unsigned long long>(s.interval.lo),
                    static_cast<unsigned long long>(s.interval.hi));
    if (ask.count > whole)
      s.reason += strf("; its memory holds %llu such pages in all", static_cast<unsigned long long>(whole));
  }
}

}  // namespace

Result<Supply> estimate_supply(const SupplyAsk& ask, const SupplyInputs& in) {
  if (!in.mem) return make_error("no memory snapshot yet: fragd reads the free lists at its first tick; ask again");
  const MemSnapshot& mem = *in.mem;
  const uint64_t base_kib = in.page_kib ? in.page_kib : 4;
  const unsigned pb = mem.pageblock_order ? mem.pageblock_order : (in.scan ? in.scan->pageblock_order : 9);
  const unsigned top = max_buddy_order(mem);
  Supply s;
  s.count = ask.count;
  if (ask.node >= 0) s.node = ask.node;
  if (ask.count == 0) return make_error("a count of 0 pages asks for nothing: give 1 or more");
  if (auto r = resolve_size(ask, mem, base_kib, top, s); !r) return r.error();
  const bool gigantic = s.order > top;  // a 1 GiB page: above the buddy's largest order
  auto asked = asked_nodes(ask, mem);
  if (!asked) return asked.error();
  std::map<int, NodeSupply>& nodes = *asked;

  // Free now: the pool's free pages and the free lists' blocks (or the map's free 1 GiB ranges).
  if (s.hugetlb)
    for (const auto& p : mem.hugepages)
      if (p.size_kib == s.size_kib && nodes.count(p.node)) nodes[p.node].pool_free += p.free;
  if (!gigantic)
    for (const auto& z : mem.zones)
      if (nodes.count(z.node)) nodes[z.node].free_blocks += std::min(free_blocks_of(z, s.order), free_pages_hold(in, z, s.order));
  if (in.scan) makeable_from_scan(in, pb, gigantic, s, nodes);
  else makeable_from_free_lists(in, gigantic, s, nodes);

  for (auto& [id, n] : nodes) {
    n.free = n.pool_free + n.free_blocks;
    s.free += n.free;
    s.makeable += n.makeable;
    s.interval.lo += n.free + n.makeable_ci.lo;
    s.interval.hi += n.free + n.makeable_ci.hi;
  }
  pages_to_migrate(ask, in, pb, gigantic, s, nodes);
  for (auto& [id, n] : nodes) s.nodes.push_back(n);
  set_verdict(ask, s);
  return s;
}

}  // namespace fragd
