// SPDX-License-Identifier: Apache-2.0
// The pageblock classifier and scanner on synthetic /proc/kpageflags arrays.
#include "concerns/pageblocks/pageblock.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fragd {
namespace {

using namespace kpf;

const std::string kFixtures = FRAGD_FIXTURES_DIR;
constexpr unsigned kOrder = 3;  // 8-page blocks keep the arrays small
constexpr size_t kBp = size_t{1} << kOrder;

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

constexpr uint64_t kFree = bit(kBuddy);
constexpr uint64_t kAnonPage = bit(kLru) | bit(kAnon) | bit(kMmap);
constexpr uint64_t kFilePage = bit(kLru) | bit(3);  // LRU + UPTODATE
constexpr uint64_t kSlabPage = bit(kSlab);
constexpr uint64_t kPgtablePage = bit(kPgtable);
constexpr uint64_t kReservedPage = bit(kReserved);

BlockInfo classify(const std::vector<uint64_t>& flags, size_t block_pages = kBp) {
  PageKind carry = PageKind::Untyped;
  return classify_block(flags.data(), flags.size(), block_pages, carry);
}

std::vector<uint64_t> fill(uint64_t f, size_t n = kBp) { return std::vector<uint64_t>(n, f); }

TEST(ClassifyBlock, EveryClass) {
  EXPECT_EQ(classify(fill(kFree)).cls, BlockClass::Free);
  EXPECT_EQ(classify(fill(kFree)).used, 0);

  auto movable = fill(kFree);
  movable[1] = kAnonPage;
  movable[5] = kFilePage;
  EXPECT_EQ(classify(movable).cls, BlockClass::Movable);
  EXPECT_EQ(classify(movable).used, 2);
  EXPECT_EQ(classify(movable).movable, 2);

  auto hybrid = fill(kAnonPage);
  hybrid[3] = kPgtablePage;
  hybrid[4] = kFree;
  const BlockInfo h = classify(hybrid);
  EXPECT_EQ(h.cls, BlockClass::Hybrid);
  EXPECT_EQ(h.used, 7);
  EXPECT_EQ(h.movable, 6);
  EXPECT_EQ(h.unmovable, 1);

  auto unmovable = fill(kSlabPage);
  unmovable[0] = kAnonPage;  // one movable page among slab: mostly kernel
  EXPECT_EQ(classify(unmovable).cls, BlockClass::Unmovable);
  EXPECT_EQ(classify(fill(kReservedPage)).cls, BlockClass::Unmovable);

  EXPECT_EQ(classify(fill(bit(kHuge) | bit(kCompoundTail))).cls, BlockClass::Huge);

  auto offline = fill(kFree);
  offline[7] = bit(kNopage);
  EXPECT_EQ(classify(offline).cls, BlockClass::Offline);
  EXPECT_EQ(classify(fill(bit(kOffline))).cls, BlockClass::Offline);
}

TEST(ClassifyBlock, HybridNeedsMovableMajority) {
  auto even = fill(kAnonPage);
  for (size_t i = 0; i < kBp / 2; i++) even[i] = kSlabPage;
  EXPECT_EQ(classify(even).cls, BlockClass::Unmovable);  // 4 movable, 4 unmovable
  even[0] = kAnonPage;
  EXPECT_EQ(classify(even).cls, BlockClass::Hybrid);  // 5 movable, 3 unmovable
}

TEST(ClassifyBlock, UntypedPagesAloneDoNotMakeAHybrid) {
  // Flagless pages next to movable ones may be free pages on a per-CPU list.
  auto b = fill(kAnonPage);
  b[2] = 0;
  b[3] = 0;
  EXPECT_EQ(classify(b).cls, BlockClass::Movable);
  EXPECT_EQ(classify(b).used, 8);
  EXPECT_EQ(classify(b).movable, 6);
  // Without any movable page they are kernel memory.
  auto k = fill(kFree);
  k[0] = 0;
  EXPECT_EQ(classify(k).cls, BlockClass::Unmovable);
}

TEST(ClassifyBlock, ThpCoveringTheBlockIsHugeSmallerOnesAreMovable) {
  auto pmd = fill(bit(kThp) | bit(kAnon) | bit(kLru) | bit(kCompoundTail));
  pmd[0] = bit(kThp) | bit(kAnon) | bit(kLru) | bit(kCompoundHead);
  EXPECT_EQ(classify(pmd).cls, BlockClass::Huge);
  EXPECT_EQ(classify(pmd).movable, 0);

  auto mthp = pmd;  // two 4-page folios
  mthp[4] = bit(kThp) | bit(kAnon) | bit(kLru) | bit(kCompoundHead);
  EXPECT_EQ(classify(mthp).cls, BlockClass::Movable);
  EXPECT_EQ(classify(mthp).movable, 8);
}

TEST(ClassifyBlock, TailTakesItsHeadsKindAcrossBlocks) {
  // A kernel compound page of 16 pages (no other flag) spans two blocks; the
  // second block holds only tails.
  std::vector<uint64_t> flags = fill(bit(kCompoundTail), 2 * kBp);
  flags[0] = bit(kCompoundHead);
  PageKind carry = PageKind::Untyped;
  EXPECT_EQ(classify_block(flags.data(), kBp, kBp, carry).cls, BlockClass::Unmovable);
  const BlockInfo second = classify_block(flags.data() + kBp, kBp, kBp, carry);
  EXPECT_EQ(second.cls, BlockClass::Unmovable);
  EXPECT_EQ(second.used, 8);

  // A slab page of 16 whose tails carry only the tail bit, next to movable pages.
  flags = fill(kAnonPage, 2 * kBp);
  flags[6] = kSlabPage | bit(kCompoundHead);
  flags[7] = bit(kCompoundTail);
  flags[8] = bit(kCompoundTail);
  carry = PageKind::Untyped;
  EXPECT_EQ(classify_block(flags.data(), kBp, kBp, carry).cls, BlockClass::Hybrid);
  const BlockInfo b2 = classify_block(flags.data() + kBp, kBp, kBp, carry);
  EXPECT_EQ(b2.cls, BlockClass::Hybrid);
  EXPECT_EQ(b2.unmovable, 1);
}

TEST(ClassifyBlock, MissingPagesAtAnEdgeAreHoles) {
  EXPECT_EQ(classify(fill(kFree, 5), kBp).cls, BlockClass::Offline);
}

TEST(BlockClass, NamesAndCharsRoundTrip) {
  for (size_t i = 0; i < kBlockClasses; i++) {
    const auto c = static_cast<BlockClass>(i);
    BlockClass back;
    ASSERT_TRUE(block_class_from_char(block_class_char(c), back));
    EXPECT_EQ(back, c);
  }
  EXPECT_STREQ(block_class_name(BlockClass::Hybrid), "hybrid");
  EXPECT_EQ(block_class_char(BlockClass::Free), '.');
  BlockClass out;
  ASSERT_TRUE(block_class_from_char('?', out));  // a block of a sampled map not read yet
  EXPECT_EQ(out, BlockClass::Unseen);
  EXPECT_FALSE(block_class_from_char('*', out));
}

// A synthetic physical memory: `flags[pfn]`.
struct Memory {
  std::vector<uint64_t> flags;
  size_t reads = 0;
  uint64_t highest_read = 0;
  FlagReader reader() {
    return [this](uint64_t pfn, uint64_t* out, size_t n) -> Result<size_t> {
      reads++;
      if (pfn >= flags.size()) return size_t{0};
      const size_t got = std::min<size_t>(n, flags.size() - pfn);
      std::copy(flags.begin() + static_cast<long>(pfn), flags.begin() + static_cast<long>(pfn + got), out);
      highest_read = std::max<uint64_t>(highest_read, pfn + got);
      return got;
    };
  }
};

TEST(ScanPageblocks, ZonesHolesAndCounts) {
  // 12 blocks of 8 pages: zone A covers pfns 1..32 (its first block lacks pfn
  // 0), zone B pfns 32..96. RAM is everything but pfns 64..72 (block 8).
  Memory m;
  m.flags = fill(kFree, 12 * kBp);
  for (size_t p = 8; p < 16; p++) m.flags[p] = kAnonPage;  // block 1 movable
  m.flags[16] = kAnonPage;
  m.flags[17] = kSlabPage;                                   // block 2 hybrid
  m.flags[18] = kAnonPage;
  for (size_t p = 40; p < 48; p++) m.flags[p] = kSlabPage;   // block 5 unmovable
  for (size_t p = 48; p < 56; p++) m.flags[p] = bit(kHuge);  // block 6 huge
  m.flags[56] = kAnonPage;                                   // block 7 movable, 1 page
  std::vector<ZoneSpan> spans = {{0, "A", 1, 32, 0}, {0, "B", 32, 96, 0}};
  std::vector<PfnRange> ram = {{0, 64}, {72, 1000}};
  auto r = scan_pageblocks(spans, ram, kOrder, m.reader());
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->zones.size(), 2u);
  const ZoneScan& a = r->zones[0];
  EXPECT_EQ(a.first_block, 0u);
  ASSERT_EQ(a.blocks.size(), 4u);
  EXPECT_EQ(a.blocks[0].cls, BlockClass::Offline);  // pfn 0 is not in the zone
  EXPECT_EQ(a.blocks[1].cls, BlockClass::Movable);
  EXPECT_EQ(a.blocks[2].cls, BlockClass::Hybrid);
  EXPECT_EQ(a.blocks[3].cls, BlockClass::Free);
  EXPECT_EQ(a.free_pages, 7u + 5u + 8u);  // pfns 1..7, block 2's five, block 3

  const ZoneScan& b = r->zones[1];
  EXPECT_EQ(b.first_block, 4u);
  ASSERT_EQ(b.blocks.size(), 8u);
  const std::string want = ".UHm-...";
  std::string got;
  for (const auto& blk : b.blocks) got += block_class_char(blk.cls);
  EXPECT_EQ(got, want);
  EXPECT_EQ(b.counts[static_cast<size_t>(BlockClass::Free)], 4u);
  EXPECT_EQ(b.counts[static_cast<size_t>(BlockClass::Offline)], 1u);
  EXPECT_EQ(b.hugepages_free, 4u);
  EXPECT_EQ(b.hugepages_polluted, 0u);
  EXPECT_EQ(a.hugepages_polluted, 1u);
  EXPECT_EQ(m.highest_read, 96u);  // never past the last zone's end
  EXPECT_TRUE(r->warnings.empty());
}

TEST(ScanPageblocks, EstimateIsBoundedByFreePagesAndMovableBlocks) {
  // 10 blocks: 2 free, 4 movable holding 1, 2, 3 and 4 pages, 4 unmovable.
  Memory m;
  m.flags = fill(kFree, 10 * kBp);
  for (size_t blk = 2; blk < 6; blk++)
    for (size_t p = 0; p < blk - 1; p++) m.flags[blk * kBp + p] = kAnonPage;
  for (size_t p = 6 * kBp; p < 9 * kBp + 1; p++) m.flags[p] = kSlabPage;
  // Usable free pages: 16 + (7+6+5+4) = 38 (block 9's 7 free pages sit in an
  // unmovable block) -> with no reserve, 38/8 = 4 huge pages in all, 2 free
  // now and 2 more by compaction, migrating 1 + 2 pages.
  auto r = scan_pageblocks({{0, "Normal", 0, 80, 0}}, {}, kOrder, m.reader());
  ASSERT_TRUE(r) << r.error().message;
  const ZoneScan& z = r->zones[0];
  EXPECT_EQ(z.free_pages, 45u);
  EXPECT_EQ(z.blocks[9].cls, BlockClass::Unmovable);
  EXPECT_EQ(z.hugepages_free, 2u);
  EXPECT_EQ(z.hugepages_compaction, 2u);
  EXPECT_EQ(z.compaction_cost_pages, 3u);
  EXPECT_EQ(z.cost_for(4), 10u);
  EXPECT_EQ(z.cost_for(99), 10u);

  // A reserve of 15 pages leaves (38-15)/8 = 2: only the free blocks.
  r = scan_pageblocks({{0, "Normal", 0, 80, 15}}, {}, kOrder, m.reader());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->zones[0].hugepages_compaction, 0u);

  // Free pages of hybrid blocks take migrated pages too, so the movable
  // blocks can be the bound: 1 movable block (1 page used) and 2 hybrid ones
  // (2 anon + 1 slab) leave 7 + 5 + 5 usable free pages, room for 2, but only
  // the movable block can become a huge page.
  Memory h;
  h.flags = fill(kFree, 3 * kBp);
  h.flags[0] = kAnonPage;
  for (size_t blk = 1; blk < 3; blk++) {
    h.flags[blk * kBp] = kAnonPage;
    h.flags[blk * kBp + 1] = kAnonPage;
    h.flags[blk * kBp + 2] = kSlabPage;
  }
  r = scan_pageblocks({{0, "Normal", 0, 24, 0}}, {}, kOrder, h.reader());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->zones[0].hugepages_polluted, 2u);
  EXPECT_EQ(r->zones[0].hugepages_compaction, 1u);
  EXPECT_EQ(r->zones[0].compaction_cost_pages, 1u);
}

TEST(ScanPageblocks, ShortReadLeavesTheRestOfflineWithAWarning) {
  // The zone claims 16 blocks but memory ends after 9 (hot-removed mid-scan).
  Memory m;
  m.flags = fill(kAnonPage, 9 * kBp);
  auto r = scan_pageblocks({{0, "Normal", 0, 16 * kBp, 0}}, {}, kOrder, m.reader());
  ASSERT_TRUE(r) << r.error().message;
  const ZoneScan& z = r->zones[0];
  ASSERT_EQ(z.blocks.size(), 16u);
  EXPECT_EQ(z.counts[static_cast<size_t>(BlockClass::Movable)], 9u);
  EXPECT_EQ(z.counts[static_cast<size_t>(BlockClass::Offline)], 7u);
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("page flags end at pfn 72"), std::string::npos) << r->warnings[0];
  EXPECT_EQ(r->pages_read, 72u);
}

TEST(ScanPageblocks, ReadErrorIsAnError) {
  FlagReader bad = [](uint64_t, uint64_t*, size_t) -> Result<size_t> {
    return make_error("reading /proc/kpageflags at pfn 0: Input/output error", EIO);
  };
  auto r = scan_pageblocks({{0, "Normal", 0, 64, 0}}, {}, kOrder, bad);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("kpageflags"), std::string::npos);
}

TEST(ScanPageblocks, ThreadsGiveTheSameResult) {
  Memory m;
  m.flags.resize(300 * kBp);
  for (size_t p = 0; p < m.flags.size(); p++)
    m.flags[p] = (p * 2654435761u) % 7 == 0 ? kSlabPage : (p % 3 ? kFree : kAnonPage);
  auto one = scan_pageblocks({{0, "Normal", 0, 300 * kBp, 0}}, {}, kOrder, m.reader(), 8, 1);
  auto four = scan_pageblocks({{0, "Normal", 0, 300 * kBp, 0}}, {}, kOrder, m.reader(), 8, 4);
  ASSERT_TRUE(one && four);
  ASSERT_EQ(one->zones[0].blocks.size(), four->zones[0].blocks.size());
  for (size_t i = 0; i < one->zones[0].blocks.size(); i++) {
    EXPECT_EQ(one->zones[0].blocks[i].cls, four->zones[0].blocks[i].cls) << i;
    EXPECT_EQ(one->zones[0].blocks[i].used, four->zones[0].blocks[i].used) << i;
  }
  EXPECT_EQ(one->zones[0].free_pages, four->zones[0].free_pages);
}

TEST(ZoneSpans, ParsesStartSpannedAndReserve) {
  auto z = parse_zone_spans(slurp(kFixtures + "/two_nodes/zoneinfo"), "zoneinfo");
  ASSERT_TRUE(z) << z.error().message;
  ASSERT_EQ(z->size(), 4u);  // empty zones (spanned 0) are left out
  EXPECT_EQ((*z)[0].zone, "DMA");
  EXPECT_EQ((*z)[0].start_pfn, 1u);
  EXPECT_EQ((*z)[0].end_pfn, 4096u);
  EXPECT_EQ((*z)[0].reserve_pages, 10u + 24090u);
  EXPECT_EQ((*z)[1].reserve_pages, 2116u + 21071u);
  EXPECT_EQ((*z)[2].start_pfn, 1048576u);
  EXPECT_EQ((*z)[2].end_pfn, 1048576u + 5505024u);
  EXPECT_EQ((*z)[2].reserve_pages, 14769u);
  EXPECT_EQ((*z)[3].node, 1);
  EXPECT_EQ((*z)[3].start_pfn, 6553600u);
  // The watermarks and the largest protection entry, MemAvailable's share of each zone.
  EXPECT_EQ((*z)[2].low_pages, 20163u);
  EXPECT_EQ((*z)[2].high_pages, 25557u);
  EXPECT_EQ((*z)[2].protection_pages, 0u);
  EXPECT_EQ((*z)[0].protection_pages, 24090u);

  auto none = parse_zone_spans("Node 0, zone Normal\n  pages free 5\n", "/proc/zoneinfo");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("/proc/zoneinfo"), std::string::npos);
}

TEST(IomemRam, TopLevelSystemRamOnly) {
  auto r = parse_iomem_ram(slurp(kFixtures + "/one_node/iomem"), "iomem");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].start_pfn, 1u);
  EXPECT_EQ((*r)[0].end_pfn, 0x9fu);  // 0x1000..0x9fbff: the last partial page is not RAM
  EXPECT_EQ((*r)[1].start_pfn, 0x100u);
  EXPECT_EQ((*r)[1].end_pfn, 0xc0000u);
  EXPECT_EQ((*r)[2].start_pfn, 0x100000u);
  EXPECT_EQ((*r)[2].end_pfn, 0x640000u);

  auto hidden = parse_iomem_ram("00000000-00000000 : System RAM\n", "/proc/iomem");
  ASSERT_FALSE(hidden);
  EXPECT_NE(hidden.error().message.find("only root"), std::string::npos);
}

// On a kernel of 16 KiB or 64 KiB pages (arm64, ppc64le) a pfn counts those pages: the same
// addresses give other pfns, whole pages only.
TEST(IomemRam, PfnsInTheKernelsPages) {
  const std::string text = "40000000-bfffffff : System RAM\n100001000-13fffffff : System RAM\n";
  auto k16 = parse_iomem_ram(text, "iomem", 16384);
  ASSERT_TRUE(k16) << k16.error().message;
  ASSERT_EQ(k16->size(), 2u);
  EXPECT_EQ((*k16)[0].start_pfn, 0x40000000u / 16384);
  EXPECT_EQ((*k16)[0].end_pfn, 0xc0000000u / 16384);
  EXPECT_EQ((*k16)[1].start_pfn, 0x100004000u / 16384);  // 0x100001000 is inside a page: the next one
  auto k64 = parse_iomem_ram(text, "iomem", 65536);
  ASSERT_TRUE(k64) << k64.error().message;
  EXPECT_EQ((*k64)[0].start_pfn, 0x4000u);
  EXPECT_EQ((*k64)[0].end_pfn, 0xc000u);
  EXPECT_EQ((*k64)[1].start_pfn, 0x10001u);
  EXPECT_EQ((*k64)[1].end_pfn, 0x14000u);
}

// The firmware's map (read where /proc/iomem shows zeros, as without CAP_SYS_ADMIN): the same
// RAM ranges as iomem's top level, recorded on the same machine, but for the first page (iomem
// lists it as Reserved), in address order whatever the directory order.
TEST(FirmwareMemmapRam, SameRangesAsIomem) {
  auto r = read_firmware_memmap_ram(kFixtures + "/one_node/sys");
  ASSERT_TRUE(r) << r.error().message;
  auto io = parse_iomem_ram(slurp(kFixtures + "/one_node/iomem"), "iomem");
  ASSERT_TRUE(io) << io.error().message;
  ASSERT_EQ(r->size(), io->size());
  EXPECT_EQ((*r)[0].start_pfn, 0u);
  for (size_t i = 0; i < r->size(); i++) {
    if (i > 0) {
      EXPECT_EQ((*r)[i].start_pfn, (*io)[i].start_pfn) << i;
    }
    EXPECT_EQ((*r)[i].end_pfn, (*io)[i].end_pfn) << i;
  }

  auto missing = read_firmware_memmap_ram(kFixtures + "/two_nodes/sys");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("two_nodes/sys/firmware/memmap"), std::string::npos) << missing.error().message;
  EXPECT_NE(missing.error().message.find("CONFIG_FIRMWARE_MEMMAP"), std::string::npos) << missing.error().message;
}

TEST(ScanLive, MissingKpageflagsNamesThePathAndTheFix) {
  auto r = scan_live(kFixtures + "/one_node");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("one_node/kpageflags"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("pageblock scan is off"), std::string::npos) << r.error().message;
}

// 1 GiB pages: aligned ranges of 512 blocks; free ones count now, ranges of free and movable
// blocks only count while the free pages outside them can take their pages; the longest
// run of free blocks.
TEST(EstimateZone, GiganticRangesAndTheLongestFreeRun) {
  ZoneScan z;
  z.start_pfn = 0;
  z.end_pfn = 4 * 262144 + 1000;  // 4 whole ranges, and a part of a fifth (not counted)
  z.first_block = 0;
  auto blocks = [&](BlockClass c, uint16_t used, size_t n) {
    for (size_t i = 0; i < n; i++) z.blocks.push_back(BlockInfo{c, used, static_cast<uint16_t>(c == BlockClass::Movable ? used : 0), 0});
  };
  blocks(BlockClass::Free, 0, 512);       // range 0: free now
  blocks(BlockClass::Movable, 100, 512);  // range 1: 100 pages to move per block
  blocks(BlockClass::Movable, 400, 511);  // range 2: 400 per block, and one unmovable block:
  z.blocks.push_back(BlockInfo{BlockClass::Unmovable, 500, 0, 20});  // typed unmovable pages: never obtainable
  blocks(BlockClass::Movable, 400, 511);  // range 3: 400 per block, and one block of untyped
  z.blocks.push_back(BlockInfo{BlockClass::Unmovable, 400, 0, 0});   // pages only (per-CPU lists?): counted
  blocks(BlockClass::Free, 0, 1);         // the partial fifth range
  uint64_t free_pages = 0;
  for (const auto& b : z.blocks)
    if (b.cls != BlockClass::Unmovable) free_pages += 512 - b.used;
  z.free_pages = free_pages;
  estimate_zone(z, 9);
  EXPECT_EQ(z.gigantic_free, 1u);
  // Outside range 0 (taken): 412 + 112 + 112 free pages per block of ranges 1-3. Range 1 needs
  // its own 412 and the 100 it moves out: it fits; range 3 then finds too few left.
  EXPECT_EQ(z.gigantic_migration, 1u);
  EXPECT_EQ(z.free_run_max_pages, 512u * 512u);
  // A reserve that leaves too little: no range by migration.
  z.reserve_pages = 400 * 512;
  estimate_zone(z, 9);
  EXPECT_EQ(z.gigantic_free, 1u);
  EXPECT_EQ(z.gigantic_migration, 0u);
}

}  // namespace
}  // namespace fragd
