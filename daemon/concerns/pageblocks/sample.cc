// SPDX-License-Identifier: Apache-2.0
#include "concerns/pageblocks/sample.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_set>

namespace fragd {
namespace {

// splitmix64's finaliser: a well-mixed 64-bit function of its input.
uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The normal quantiles fragd's intervals use: 95% two-sided, and 97.5% two-sided for each of
// the two sides of a min() (Bonferroni: together at least 95%).
constexpr double kZ95 = 1.959964, kZ975 = 2.241403;

uint64_t clamp_round(double v, uint64_t lo, uint64_t hi) {
  if (!(v > static_cast<double>(lo))) return lo;
  if (v >= static_cast<double>(hi)) return hi;
  return static_cast<uint64_t>(std::llround(v));
}

}  // namespace

BlockOrder::BlockOrder(uint64_t n, uint64_t key) : n_(n), key_(mix64(key)) {
  half_bits_ = 1;
  while (half_bits_ < 32 && (uint64_t{1} << (2 * half_bits_)) < n) half_bits_++;
}

uint64_t BlockOrder::at(uint64_t i) const {
  const uint64_t mask = (uint64_t{1} << half_bits_) - 1;
  uint64_t x = i;
  do {
    uint64_t l = x >> half_bits_, r = x & mask;
    for (uint64_t round = 0; round < 4; round++) {
      const uint64_t f = mix64(r ^ (key_ + round * 0x632be59bd9b4e019ULL)) & mask;
      const uint64_t nl = r;
      r = l ^ f;
      l = nl;
    }
    x = (l << half_bits_) | r;
  } while (x >= n_);  // cycle-walking: a permutation of the covering domain, restricted to [0, n)
  return x;
}

std::vector<uint64_t> share_blocks(const std::vector<uint64_t>& zone_blocks, uint64_t budget) {
  std::vector<uint64_t> out(zone_blocks.size(), 0);
  std::vector<size_t> idx(zone_blocks.size());
  std::iota(idx.begin(), idx.end(), 0);
  // Smallest first: a zone read whole hands what it does not need to the larger ones.
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return zone_blocks[a] < zone_blocks[b]; });
  uint64_t left = budget;
  uint64_t population = std::accumulate(zone_blocks.begin(), zone_blocks.end(), uint64_t{0});
  for (size_t i : idx) {
    const uint64_t n = zone_blocks[i];
    const double share = population ? static_cast<double>(left) * static_cast<double>(n) / static_cast<double>(population) : 0;
    uint64_t k = static_cast<uint64_t>(std::ceil(share));
    k = std::max(k, std::min(n, kMinZoneSample));
    k = std::min(k, n);
    out[i] = k;
    left = left > k ? left - k : 0;
    population -= n;
  }
  return out;
}

Bounds count_interval(uint64_t k, uint64_t n, uint64_t N, double z) {
  if (n == 0 || N == 0) return {0, N};
  if (n >= N) return {k, k};
  const double p = static_cast<double>(k) / static_cast<double>(n);
  // Drawn without replacement: the effective sample size grows to infinity as n reaches N.
  const double ne = static_cast<double>(n) * static_cast<double>(N - 1) / static_cast<double>(N - n);
  const double z2 = z * z;
  const double centre = (p + z2 / (2 * ne)) / (1 + z2 / ne);
  const double half = z / (1 + z2 / ne) * std::sqrt(p * (1 - p) / ne + z2 / (4 * ne * ne));
  const double Nd = static_cast<double>(N);
  // The blocks seen are a sure floor; those not seen in the class a sure ceiling.
  return {clamp_round(std::floor((centre - half) * Nd), k, N - (n - k)),
          clamp_round(std::ceil((centre + half) * Nd), k, N - (n - k))};
}

void estimate_zone_sampled(ZoneScan& z, const std::vector<BlockInfo>& sample, uint64_t free_pages,
                           uint64_t free_blocks, unsigned pageblock_order) {
  const uint64_t bp = uint64_t{1} << pageblock_order;
  const uint64_t N = z.blocks.size(), n = sample.size();
  z.sample_blocks = n;
  z.free_pages = free_pages;
  std::array<uint64_t, kBlockClasses> k{};
  // y: free pages of a block compaction can use neither to make a huge page nor as a target
  // (unmovable and huge blocks); offline blocks' free pages are not told from their holes and
  // count as none.
  double ysum = 0, ysq = 0;
  std::vector<uint16_t> movable;
  for (const auto& b : sample) {
    if (b.cls == BlockClass::Unseen) continue;
    k[static_cast<size_t>(b.cls)]++;
    if (b.cls == BlockClass::Movable) movable.push_back(b.movable);
    if (b.cls == BlockClass::Unmovable || b.cls == BlockClass::Huge) {
      const double y = static_cast<double>(bp - std::min<uint64_t>(b.used, bp));
      ysum += y;
      ysq += y * y;
    }
  }
  const double scale = n ? static_cast<double>(N) / static_cast<double>(n) : 0;
  for (size_t c = 0; c < kBlockClasses; c++) {
    z.counts[c] = clamp_round(static_cast<double>(k[c]) * scale, k[c], N);
    z.counts_ci[c] = count_interval(k[c], n, N, kZ95);
  }
  const size_t mov = static_cast<size_t>(BlockClass::Movable), hyb = static_cast<size_t>(BlockClass::Hybrid);
  z.hugepages_free = free_blocks;
  z.hugepages_polluted = z.counts[hyb];
  z.polluted_ci = z.counts_ci[hyb];

  // The free pages in unmovable and huge blocks: N times the sample mean, and its interval.
  const double nd = static_cast<double>(n), Nd = static_cast<double>(N);
  const double ymean = n ? ysum / nd : 0;
  const double yvar = n > 1 ? std::max(0.0, (ysq - nd * ymean * ymean) / (nd - 1)) : 0;
  const double yse = n ? Nd * std::sqrt(yvar / nd * (1 - nd / Nd)) : 0;
  const double yhat = Nd * ymean;
  auto room = [&](double unusable) -> uint64_t {
    const double usable = static_cast<double>(free_pages) - std::max(0.0, unusable);
    const double capacity = usable > static_cast<double>(z.reserve_pages)
                                ? std::floor((usable - static_cast<double>(z.reserve_pages)) / static_cast<double>(bp))
                                : 0;
    return capacity > static_cast<double>(free_blocks) ? static_cast<uint64_t>(capacity) - free_blocks : 0;
  };
  z.hugepages_compaction = std::min<uint64_t>(z.counts[mov], room(yhat));
  const Bounds m = count_interval(k[mov], n, N, kZ975);
  z.compaction_ci = {std::min<uint64_t>(m.lo, room(yhat + kZ975 * yse)),
                     std::min<uint64_t>(m.hi, room(yhat - kZ975 * yse))};
  z.compaction_ci.lo = std::min(z.compaction_ci.lo, z.hugepages_compaction);
  z.compaction_ci.hi = std::max(z.compaction_ci.hi, z.hugepages_compaction);

  // What compaction migrates: the least occupied movable blocks. The sample's movable blocks
  // stand for N/n blocks each: the lightest hugepages_compaction of them are the lightest
  // share of the sample's, scaled.
  std::sort(movable.begin(), movable.end());
  z.movable_sorted = movable;
  const double per = movable.empty() ? 0 : static_cast<double>(z.counts[mov]) / static_cast<double>(movable.size());
  const uint64_t take = per > 0 ? std::min<uint64_t>(movable.size(), static_cast<uint64_t>(std::ceil(
                                                                          static_cast<double>(z.hugepages_compaction) / per)))
                                : 0;
  const double lightest = std::accumulate(movable.begin(), movable.begin() + static_cast<std::ptrdiff_t>(take), 0.0);
  const double share = take ? static_cast<double>(z.hugepages_compaction) / (per * static_cast<double>(take)) : 0;
  z.compaction_cost_pages = static_cast<uint64_t>(std::llround(lightest * per * share));
}

void sync_cursors(const ScanResult& map, std::vector<SampleCursor>& cursors, uint64_t key_seed) {
  cursors.resize(map.zones.size());
  for (size_t i = 0; i < map.zones.size(); i++) {
    const uint64_t n = map.zones[i].blocks.size();
    if (cursors[i].order.size() != n) cursors[i] = {BlockOrder(n, mix64(key_seed ^ i)), 0, 0};
  }
}

namespace {

// The map follows the zones: a zone whose span changed (memory added or removed) starts over.
void follow_spans(ScanResult& map, std::vector<SampleCursor>& cursors, const std::vector<ZoneSpan>& spans,
                  unsigned pageblock_order, uint64_t key_seed) {
  std::vector<ZoneScan> zones;
  std::vector<SampleCursor> next_cursors;
  for (const auto& span : spans) {
    if (span.end_pfn <= span.start_pfn) continue;
    auto same = std::find_if(map.zones.begin(), map.zones.end(), [&](const ZoneScan& z) {
      return z.node == span.node && z.zone == span.zone && z.start_pfn == span.start_pfn && z.end_pfn == span.end_pfn;
    });
    ZoneScan z;
    SampleCursor c;
    if (same != map.zones.end()) {
      const size_t i = static_cast<size_t>(same - map.zones.begin());
      z = std::move(*same);
      if (i < cursors.size()) c = cursors[i];
    } else {
      z.first_block = span.start_pfn >> pageblock_order;
      const uint64_t last_block = (span.end_pfn - 1) >> pageblock_order;
      z.blocks.assign(last_block - z.first_block + 1, BlockInfo{});
      z.seen_boot_ns.assign(z.blocks.size(), 0);
    }
    static_cast<ZoneSpan&>(z) = span;
    if (c.order.size() != z.blocks.size())
      c = {BlockOrder(z.blocks.size(), mix64(key_seed ^ (static_cast<uint64_t>(span.node) << 8) ^ zones.size())), 0, 0};
    zones.push_back(std::move(z));
    next_cursors.push_back(c);
  }
  map.zones = std::move(zones);
  cursors = std::move(next_cursors);
}

// The blocks to read: a whole zone in address order (a compound tail then finds its head in the
// block before), a sample the next `share` of the permutation, a new pass (a new key) when one
// ends, each block once.
std::vector<uint64_t> pick_blocks(uint64_t n, uint64_t share, SampleCursor& cur, uint64_t key_seed, size_t zi) {
  std::vector<uint64_t> picks;
  if (share >= n) {
    picks.resize(n);
    std::iota(picks.begin(), picks.end(), 0);
    return picks;
  }
  std::unordered_set<uint64_t> taken;
  while (picks.size() < share) {
    if (cur.next >= n) {
      cur.pass++;
      cur.order = BlockOrder(n, mix64(key_seed ^ cur.pass ^ (zi << 32)));
      cur.next = 0;
    }
    const uint64_t b = cur.order.at(cur.next++);
    if (taken.insert(b).second) picks.push_back(b);
  }
  return picks;
}

// A sampled zone's estimate, from the kernel's free counts of the zone (or the sample's own, scaled).
void estimate_sampled(ScanResult& map, ZoneScan& z, const std::vector<BlockInfo>& sample, uint64_t free_seen,
                      const std::vector<ZoneFree>& free, unsigned pageblock_order) {
  map.sampled = true;
  auto f = std::find_if(free.begin(), free.end(), [&](const ZoneFree& x) { return x.node == z.node && x.zone == z.zone; });
  uint64_t free_pages = 0, free_blocks = 0;
  if (f != free.end()) {
    free_pages = f->free_pages;
    for (size_t o = pageblock_order; o < f->free_blocks.size(); o++) free_blocks += f->free_blocks[o] << (o - pageblock_order);
  } else {
    free_pages = static_cast<uint64_t>(static_cast<double>(free_seen) * static_cast<double>(z.blocks.size()) /
                                       static_cast<double>(sample.size()));
    map.warnings.push_back("zone " + std::to_string(z.node) + "/" + z.zone +
                           " is in neither /proc/buddyinfo nor /proc/zoneinfo: its free pages are estimated");
  }
  estimate_zone_sampled(z, sample, free_pages, free_blocks, pageblock_order);
  estimate_from_map(z, pageblock_order);
}

}  // namespace

Result<uint64_t> sample_round(ScanResult& map, std::vector<SampleCursor>& cursors,
                              const std::vector<ZoneSpan>& spans, const std::vector<PfnRange>& ram,
                              const std::vector<ZoneFree>& free, unsigned pageblock_order,
                              const FlagReader& read, uint64_t budget_blocks, uint64_t key_seed,
                              uint64_t now_boot_ns) {
  if (pageblock_order == 0 || pageblock_order > 20)
    return make_error("pageblock order " + std::to_string(pageblock_order) + " is out of range 1..20", EINVAL);
  const uint64_t bp = uint64_t{1} << pageblock_order;
  follow_spans(map, cursors, spans, pageblock_order, key_seed);
  map.pageblock_order = pageblock_order;
  map.boot_time_ns = now_boot_ns;
  map.warnings.clear();
  map.pages_read = 0;
  map.sampled = false;

  std::vector<uint64_t> sizes;
  for (const auto& z : map.zones) sizes.push_back(z.blocks.size());
  const std::vector<uint64_t> shares = share_blocks(sizes, budget_blocks);

  std::vector<uint64_t> buf(bp);
  uint64_t blocks_read = 0;
  for (size_t zi = 0; zi < map.zones.size(); zi++) {
    ZoneScan& z = map.zones[zi];
    const bool whole = shares[zi] >= z.blocks.size();
    const std::vector<uint64_t> picks = pick_blocks(z.blocks.size(), shares[zi], cursors[zi], key_seed, zi);
    std::vector<BlockInfo> sample;
    sample.reserve(picks.size());
    PageKind carry = PageKind::Unmovable;  // a tail whose head is not read: typed kernel memory
    uint64_t free_seen = 0;
    for (uint64_t i : picks) {
      const uint64_t first_pfn = (z.first_block + i) << pageblock_order;
      auto got = read(first_pfn, buf.data(), bp);
      if (!got) return got.error();
      const size_t n = std::min<size_t>(*got, bp);
      map.pages_read += n;
      mark_holes(buf.data(), first_pfn, bp, n, z, ram);
      if (!whole) carry = PageKind::Unmovable;
      for (uint64_t p = 0; p < bp; p++)
        if (buf[p] & kpf::bit(kpf::kBuddy)) free_seen++;
      const BlockInfo b = classify_block(buf.data(), bp, bp, carry);
      z.blocks[i] = b;
      z.seen_boot_ns[i] = now_boot_ns;
      sample.push_back(b);
    }
    blocks_read += picks.size();
    if (whole) {
      z.free_pages = free_seen;
      estimate_zone(z, pageblock_order);
    } else {
      estimate_sampled(map, z, sample, free_seen, free, pageblock_order);
    }
  }
  // The map is whole once every block was read; its age is its least recently read block's.
  uint64_t oldest = UINT64_MAX;
  for (const auto& z : map.zones)
    for (uint64_t t : z.seen_boot_ns) oldest = std::min(oldest, t);
  map.map_oldest_boot_ns = oldest == UINT64_MAX ? now_boot_ns : oldest;
  return blocks_read;
}

}  // namespace fragd
