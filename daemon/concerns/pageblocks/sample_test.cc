// SPDX-License-Identifier: Apache-2.0
// Sampled pageblock rounds on synthetic /proc/kpageflags arrays: the permutation, the shares,
// the estimates and their intervals against the truth a full scan of the same array gives.
#include "concerns/pageblocks/sample.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

namespace fragd {
namespace {

using namespace kpf;

constexpr unsigned kOrder = 4;  // 16-page blocks keep the arrays small
constexpr uint64_t kBp = uint64_t{1} << kOrder;
constexpr uint64_t kFree = bit(kBuddy);
constexpr uint64_t kAnonPage = bit(kLru) | bit(kAnon) | bit(kMmap);
constexpr uint64_t kSlabPage = bit(kSlab);

TEST(BlockOrder, IsAPermutationOfEverySize) {
  for (uint64_t n : {1ULL, 2ULL, 3ULL, 7ULL, 64ULL, 100ULL, 1000ULL, 4099ULL}) {
    BlockOrder o(n, 42);
    std::set<uint64_t> seen;
    for (uint64_t i = 0; i < n; i++) {
      const uint64_t v = o.at(i);
      ASSERT_LT(v, n);
      seen.insert(v);
    }
    EXPECT_EQ(seen.size(), n) << "n=" << n;
  }
}

TEST(BlockOrder, KeysGiveDifferentOrders) {
  BlockOrder a(1000, 1), b(1000, 2);
  int same = 0;
  for (uint64_t i = 0; i < 1000; i++) same += a.at(i) == b.at(i);
  EXPECT_LT(same, 20);  // about 1 expected for two unrelated permutations
  // Not the identity, nor a rotation: the first 100 positions spread over the range.
  uint64_t lo = UINT64_MAX, hi = 0;
  for (uint64_t i = 0; i < 100; i++) lo = std::min(lo, a.at(i)), hi = std::max(hi, a.at(i));
  EXPECT_GT(hi - lo, 800u);
}

TEST(ShareBlocks, ProportionalWithAFloorAndSmallZonesWhole) {
  // DMA (8 blocks), DMA32 (1000), Normal (11000): 1200 blocks to share.
  auto s = share_blocks({8, 1000, 11000}, 1200);
  EXPECT_EQ(s[0], 8u);  // read whole
  // DMA32's share (99.6 of what DMA left) is above the floor.
  EXPECT_GE(s[1], 99u);
  EXPECT_LE(s[1], 101u);
  EXPECT_GE(s[2], 1090u);
  EXPECT_LE(s[0] + s[1] + s[2], 1200u + 2);
  // A budget of 0 (the first round) reads the floor in each zone.
  auto f = share_blocks({8, 1000, 11000}, 0);
  EXPECT_EQ(f, (std::vector<uint64_t>{8, kMinZoneSample, kMinZoneSample}));
  // A budget above the total reads everything.
  auto all = share_blocks({8, 1000, 11000}, 1'000'000);
  EXPECT_EQ(all, (std::vector<uint64_t>{8, 1000, 11000}));
}

TEST(CountInterval, CoversTheTruthAndIsExactWhenWhole) {
  EXPECT_EQ(count_interval(30, 100, 100, 1.96).lo, 30u);
  EXPECT_EQ(count_interval(30, 100, 100, 1.96).hi, 30u);
  // 0 of 100 seen: the interval still allows some (Wilson), and never below what was seen.
  Bounds z = count_interval(0, 100, 10000, 1.96);
  EXPECT_EQ(z.lo, 0u);
  EXPECT_GT(z.hi, 0u);
  EXPECT_LT(z.hi, 500u);
  // Coverage: draw 100 blocks of 5000 with 30% in the class, 2000 times; the 95% interval
  // holds the true 1500 in about 95% of the draws.
  std::mt19937_64 rng(7);
  std::vector<int> pop(5000, 0);
  for (int i = 0; i < 1500; i++) pop[i] = 1;
  int covered = 0;
  for (int t = 0; t < 2000; t++) {
    std::shuffle(pop.begin(), pop.end(), rng);
    uint64_t k = 0;
    for (int i = 0; i < 100; i++) k += pop[i];
    Bounds b = count_interval(k, 100, 5000, 1.96);
    covered += b.lo <= 1500 && 1500 <= b.hi;
  }
  EXPECT_GE(covered, 1860);  // 93%: the binomial spread of a 95% rate over 2000 draws is 0.5%
  EXPECT_LE(covered, 1990);  // and not a trivially wide interval
}

// A zone of `nblocks` blocks whose classes are drawn at random: free, movable (some pages
// anon, the rest free), hybrid (anon with a slab page), unmovable (slab with free pages).
struct Synthetic {
  std::vector<uint64_t> flags;
  ZoneSpan span;
  std::vector<ZoneFree> free;
};

Synthetic synthetic(uint64_t nblocks, uint64_t seed) {
  Synthetic s;
  s.span.node = 0;
  s.span.zone = "Normal";
  s.span.start_pfn = 0;
  s.span.end_pfn = nblocks * kBp;
  s.span.reserve_pages = 3 * kBp;
  s.flags.assign(nblocks * kBp, kFree);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> pick(0, 99), fill(1, kBp - 1);
  for (uint64_t b = 0; b < nblocks; b++) {
    uint64_t* f = s.flags.data() + b * kBp;
    const int p = pick(rng);
    const int used = fill(rng);
    if (p < 20) continue;                                                 // free
    for (int i = 0; i < used; i++) f[i] = kAnonPage;                      // movable
    if (p >= 60 && p < 75) f[kBp - 1] = kSlabPage;                        // hybrid
    if (p >= 75) for (int i = 0; i < used; i++) f[i] = kSlabPage;         // unmovable
  }
  ZoneFree zf;
  zf.node = 0;
  zf.zone = "Normal";
  for (uint64_t v : s.flags) zf.free_pages += (v & kFree) ? 1 : 0;
  zf.free_blocks.assign(kOrder + 1, 0);
  for (uint64_t b = 0; b < nblocks; b++) {
    bool all = true;
    for (uint64_t i = 0; i < kBp; i++) all = all && (s.flags[b * kBp + i] & kFree);
    zf.free_blocks[kOrder] += all;
  }
  s.free.push_back(zf);
  return s;
}

FlagReader reader_of(const std::vector<uint64_t>& flags, uint64_t* pages_read = nullptr) {
  return [&flags, pages_read](uint64_t pfn, uint64_t* out, size_t n) -> Result<size_t> {
    if (pfn >= flags.size()) return size_t{0};
    const size_t k = std::min<size_t>(n, flags.size() - pfn);
    std::copy(flags.begin() + static_cast<std::ptrdiff_t>(pfn), flags.begin() + static_cast<std::ptrdiff_t>(pfn + k), out);
    if (pages_read) *pages_read += k;
    return k;
  };
}

// A synthetic zone of `nblocks` blocks sampled round by round into `map`, and the full scan of
// the same array: the truth to hold the map against.
struct SampledZone {
  Synthetic s;
  Result<ScanResult> full;
  ScanResult map;
  std::vector<SampleCursor> cursors;
  SampledZone(uint64_t nblocks, uint64_t seed)
      : s(synthetic(nblocks, seed)), full(scan_pageblocks({s.span}, {}, kOrder, reader_of(s.flags))) {}
  // One round of `budget` blocks at boot time `now_ns`; `pages` (when given) counts the pages read.
  Result<uint64_t> round(uint64_t budget, uint64_t key, uint64_t now_ns, uint64_t* pages = nullptr) {
    return sample_round(map, cursors, {s.span}, {}, s.free, kOrder, reader_of(s.flags, pages), budget, key, now_ns);
  }
};

TEST(SampleRound, EstimatesHoldTheFullScanWithinTheirIntervals) {
  SampledZone sampled(20000, 3);
  ASSERT_TRUE(sampled.full) << sampled.full.error().message;
  const ZoneScan& truth = sampled.full->zones[0];
  int covered_comp = 0, covered_pol = 0, rounds = 0;
  for (int r = 0; r < 40; r++) {
    uint64_t pages = 0;
    auto n = sampled.round(1000, 99, uint64_t(r + 1) * 1'000'000'000, &pages);
    ASSERT_TRUE(n) << n.error().message;
    EXPECT_EQ(*n, 1000u);
    EXPECT_EQ(pages, 1000 * kBp);  // the cost: the blocks it was given, not the zone's size
    const ZoneScan& z = sampled.map.zones[0];
    EXPECT_TRUE(sampled.map.sampled);
    EXPECT_EQ(z.sample_blocks, 1000u);
    EXPECT_EQ(z.hugepages_free, truth.hugepages_free);  // from buddyinfo: exact
    rounds++;
    covered_comp += z.compaction_ci.lo <= truth.hugepages_compaction && truth.hugepages_compaction <= z.compaction_ci.hi;
    covered_pol += z.polluted_ci.lo <= truth.hugepages_polluted && truth.hugepages_polluted <= z.polluted_ci.hi;
    // Within 10% of the full scan's obtainable count.
    const double est = double(z.hugepages_free + z.hugepages_compaction);
    const double tru = double(truth.hugepages_free + truth.hugepages_compaction);
    EXPECT_NEAR(est, tru, 0.10 * tru) << "round " << r;
  }
  // 95% intervals: allow the binomial spread over 40 rounds (the truth outside in at most 6).
  EXPECT_GE(covered_comp, 34);
  EXPECT_GE(covered_pol, 34);
}

TEST(SampleRound, TheMapConvergesAndEveryBlockIsReadOncePerPass) {
  SampledZone sampled(5000, 5);
  ASSERT_TRUE(sampled.full);
  for (int r = 0; r < 5; r++) {
    ASSERT_TRUE(sampled.round(1000, 1, uint64_t(r + 1) * 1'000'000'000));
    if (r < 4) {
      EXPECT_EQ(sampled.map.map_oldest_boot_ns, 0u) << "round " << r;  // blocks not read yet
    }
  }
  // 5 rounds of 1000 from 5000 blocks: one pass, every block read exactly once.
  EXPECT_EQ(sampled.map.map_oldest_boot_ns, 1'000'000'000u);
  const ZoneScan& z = sampled.map.zones[0];
  const ZoneScan& truth = sampled.full->zones[0];
  for (size_t i = 0; i < z.blocks.size(); i++) {
    ASSERT_NE(z.seen_boot_ns[i], 0u) << "block " << i;
    EXPECT_EQ(z.blocks[i].cls, truth.blocks[i].cls) << "block " << i;
  }
  // The 1 GiB estimates and the longest run come from the whole map: what the full scan gives.
  EXPECT_EQ(z.free_run_max_pages, truth.free_run_max_pages);
}

TEST(SampleRound, ASmallZoneIsReadWholeAndExact) {
  SampledZone sampled(40, 11);
  ASSERT_TRUE(sampled.full);
  auto n = sampled.round(10, 1, 5);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 40u);
  EXPECT_FALSE(sampled.map.sampled);
  const ZoneScan& z = sampled.map.zones[0];
  const ZoneScan& truth = sampled.full->zones[0];
  EXPECT_EQ(z.sample_blocks, 40u);
  EXPECT_EQ(z.counts, truth.counts);
  EXPECT_EQ(z.hugepages_compaction, truth.hugepages_compaction);
  EXPECT_EQ(z.compaction_ci.lo, z.compaction_ci.hi);
}

TEST(SampleRound, AZoneWhoseSpanChangedStartsANewMap) {
  Synthetic s = synthetic(2000, 13);
  ScanResult map;
  std::vector<SampleCursor> cursors;
  ASSERT_TRUE(sample_round(map, cursors, {s.span}, {}, s.free, kOrder, reader_of(s.flags), 500, 1, 5));
  s.span.end_pfn -= 100 * kBp;  // memory removed
  ASSERT_TRUE(sample_round(map, cursors, {s.span}, {}, s.free, kOrder, reader_of(s.flags), 500, 1, 6));
  const ZoneScan& z = map.zones[0];
  EXPECT_EQ(z.blocks.size(), 1900u);
  uint64_t seen = 0;
  for (uint64_t t : z.seen_boot_ns) {
    EXPECT_TRUE(t == 0 || t == 6);  // nothing kept from the old span's map
    seen += t != 0;
  }
  EXPECT_EQ(seen, 500u);
}

TEST(SampleRound, AReadErrorIsReturned) {
  const Synthetic s = synthetic(500, 1);
  ScanResult map;
  std::vector<SampleCursor> cursors;
  FlagReader bad = [](uint64_t, uint64_t*, size_t) -> Result<size_t> { return make_error("reading kpageflags: EIO", EIO); };
  auto n = sample_round(map, cursors, {s.span}, {}, s.free, kOrder, bad, 100, 1, 5);
  ASSERT_FALSE(n);
  EXPECT_NE(n.error().message.find("EIO"), std::string::npos);
}

}  // namespace
}  // namespace fragd
