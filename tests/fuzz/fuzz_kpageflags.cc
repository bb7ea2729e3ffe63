// SPDX-License-Identifier: Apache-2.0
// The pageblock scanner: scan_pageblocks() and classify_block() over a made-up
// /proc/kpageflags.
//
// Input: a 32-byte header, then little-endian uint64 kpageflags records, one
// per pfn from pfn 0 (past the last record, reads come back short, as past
// the end of memory).
//   [0]      pageblock order: 1 + b % 6 (2..64 pages per block)
//   [1]      zones: 1 + b % 3
//   [2]      bits 0-1: System RAM ranges (0: no iomem, every pfn is RAM);
//            bit 2: two scanner threads; bit 3: the read covering pfn E fails;
//            bit 4: each read returns at most L pages (a partial read)
//   [3]      chunk_blocks passed to the scanner (0..255)
//   [4..15]  three zones: uint16 start_pfn, uint16 length (each % 4096)
//   [16..27] three RAM ranges: uint16 start_pfn, uint16 length (each % 4096)
//   [28..29] E (uint16); [30] L - 1; [31] unused
// Compound heads and tails land wherever the records put them, across block
// and read boundaries.
//
// Checked: the scanner reads only whole blocks of the zones, never more than
// its buffer; each zone has one block per block its span overlaps, and the
// class counts add up to them; the class of each block agrees with its pages
// (offline iff a page is outside the zone, RAM or the records, or flagged a
// hole; free iff every page is free); the free pages and the estimates match
// the blocks. With partial reads or a failing read, only what still holds.
#include <algorithm>
#include <cstring>
#include <mutex>

#include "concerns/pageblocks/pageblock.h"
#include "fuzz_check.h"

namespace {

using namespace fragd;

constexpr size_t kHeader = 32;

uint64_t u16_at(const uint8_t* p) { return uint64_t{p[0]} | uint64_t{p[1]} << 8; }

bool in_ram(uint64_t pfn, const std::vector<PfnRange>& ram) {
  if (ram.empty()) return true;
  for (const auto& r : ram)
    if (pfn >= r.start_pfn && pfn < r.end_pfn) return true;
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < kHeader) return 0;
  const uint8_t* h = data;
  const unsigned order = 1 + h[0] % 6;
  const uint64_t bp = uint64_t{1} << order;
  const size_t nzones = 1 + h[1] % 3;
  const size_t nram = h[2] & 3;
  const unsigned threads = (h[2] & 4) ? 2 : 1;
  const bool failing = h[2] & 8;
  const bool partial = h[2] & 16;
  const size_t chunk_blocks = h[3];
  const uint64_t fail_pfn = u16_at(h + 28);
  const size_t read_limit = size_t{h[30]} + 1;

  std::vector<ZoneSpan> spans;
  for (size_t i = 0; i < nzones; ++i) {
    ZoneSpan s;
    s.node = static_cast<int>(i % 2);
    s.zone = i == 0 ? "DMA32" : i == 1 ? "Normal" : "Movable";
    s.start_pfn = u16_at(h + 4 + 4 * i) % 4096;
    s.end_pfn = s.start_pfn + u16_at(h + 6 + 4 * i) % 4096;
    s.reserve_pages = h[31] * i;
    spans.push_back(s);
  }
  std::vector<PfnRange> ram;
  for (size_t i = 0; i < nram; ++i) {
    const uint64_t start = u16_at(h + 16 + 4 * i) % 4096, len = u16_at(h + 18 + 4 * i) % 4096;
    if (len > 0) ram.push_back({start, start + len});
  }
  std::sort(ram.begin(), ram.end(), [](const PfnRange& a, const PfnRange& b) { return a.start_pfn < b.start_pfn; });
  // The scanner's ram list comes from parse_iomem_ram: sorted, possibly overlapping.

  std::vector<uint64_t> recs((size - kHeader) / sizeof(uint64_t));
  if (!recs.empty()) std::memcpy(recs.data(), data + kHeader, recs.size() * sizeof(uint64_t));

  // classify_block on the first records, also a block cut short.
  {
    PageKind carry = PageKind::Untyped;
    const size_t n = std::min<size_t>(recs.size(), bp);
    const BlockInfo b = classify_block(recs.data(), n, bp, carry);
    FUZZ_CHECK(b.used <= bp && b.movable + b.unmovable <= b.used, "classify_block: page counts fit the block");
    if (n < bp) FUZZ_CHECK(b.cls == BlockClass::Offline, "classify_block: a short block is offline");
  }

  size_t max_chunk = 8;
  while (max_chunk < chunk_blocks) max_chunk <<= 1;
  std::mutex mu;
  bool failed_read = false, short_read = false;
  uint64_t requested = 0;
  FlagReader read = [&](uint64_t pfn, uint64_t* out, size_t n) -> Result<size_t> {
    FUZZ_CHECK(n > 0 && n % bp == 0 && pfn % bp == 0, "reads are whole blocks");
    FUZZ_CHECK(n <= max_chunk * bp, "a read fits the scanner's chunk");
    bool in_zone = false;
    for (const auto& s : spans)
      if (s.end_pfn > s.start_pfn && pfn >= (s.start_pfn >> order << order) && pfn + n <= ((s.end_pfn - 1) | (bp - 1)) + 1)
        in_zone = true;
    FUZZ_CHECK(in_zone, "reads stay within the blocks of one zone");
    std::lock_guard<std::mutex> lock(mu);
    requested += n;
    if (failing && fail_pfn >= pfn && fail_pfn < pfn + n) {
      failed_read = true;
      return make_error("reading kpageflags at pfn " + std::to_string(fail_pfn) + ": Input/output error", EIO);
    }
    size_t got = pfn < recs.size() ? std::min<size_t>(n, recs.size() - pfn) : 0;
    if (partial) got = std::min(got, read_limit);
    if (got < n) short_read = true;
    std::copy(recs.begin() + static_cast<std::ptrdiff_t>(std::min<uint64_t>(pfn, recs.size())),
              recs.begin() + static_cast<std::ptrdiff_t>(std::min<uint64_t>(pfn, recs.size()) + got), out);
    return got;
  };

  auto r = scan_pageblocks(spans, ram, order, read, chunk_blocks, threads);
  if (!r) {
    FUZZ_CHECK(failed_read, "the scan fails only when a read failed");
    return 0;
  }
  FUZZ_CHECK(!failed_read, "a failed read fails the scan");
  FUZZ_CHECK(r->pageblock_order == order, "the order is reported");
  FUZZ_CHECK(r->pages_read <= requested, "pages read are at most those asked for");
  FUZZ_CHECK(short_read == !r->warnings.empty(), "a short read, and only that, warns");

  size_t zi = 0;
  for (const auto& s : spans) {
    if (s.end_pfn <= s.start_pfn) continue;
    FUZZ_CHECK(zi < r->zones.size(), "every non-empty span is scanned");
    const ZoneScan& z = r->zones[zi++];
    const uint64_t first = s.start_pfn >> order, last = (s.end_pfn - 1) >> order;
    FUZZ_CHECK(z.first_block == first && z.blocks.size() == last - first + 1, "one block per block of the span");
    uint64_t sum = 0;
    for (uint64_t c : z.counts) sum += c;
    FUZZ_CHECK(sum == z.blocks.size(), "class counts add up to the blocks");
    FUZZ_CHECK(z.hugepages_free == z.counts[size_t(BlockClass::Free)], "free huge pages are the free blocks");
    FUZZ_CHECK(z.hugepages_polluted == z.counts[size_t(BlockClass::Hybrid)], "polluted are the hybrid blocks");
    FUZZ_CHECK(z.hugepages_compaction <= z.counts[size_t(BlockClass::Movable)], "compaction makes at most movable");
    FUZZ_CHECK(z.movable_sorted.size() == z.counts[size_t(BlockClass::Movable)] &&
                   std::is_sorted(z.movable_sorted.begin(), z.movable_sorted.end()),
               "movable_sorted holds the movable blocks, ascending");
    FUZZ_CHECK(z.compaction_cost_pages == z.cost_for(z.hugepages_compaction), "the cost is that of the cheapest");
    FUZZ_CHECK(z.free_pages <= s.end_pfn - s.start_pfn, "free pages fit the zone");
    uint64_t free_pages = 0;
    for (uint64_t k = 0; k < z.blocks.size(); ++k) {
      const BlockInfo& b = z.blocks[k];
      FUZZ_CHECK(b.used <= bp && b.movable + b.unmovable <= b.used, "page counts fit the block");
      if (partial) continue;  // where a partial read cut a zone is the scanner's business
      const uint64_t lo = (first + k) << order;
      bool hole = false, all_free = true;
      for (uint64_t p = lo; p < lo + bp; ++p) {
        const bool here = p >= s.start_pfn && p < s.end_pfn && in_ram(p, ram) && p < recs.size();
        const uint64_t f = here ? recs[p] : 0;
        hole = hole || !here || (f & (kpf::bit(kpf::kNopage) | kpf::bit(kpf::kOffline)));
        all_free = all_free && (f & kpf::bit(kpf::kBuddy));
        if (here && (f & kpf::bit(kpf::kBuddy))) free_pages++;
      }
      FUZZ_CHECK((b.cls == BlockClass::Offline) == hole, "offline iff a page is a hole");
      FUZZ_CHECK((b.cls == BlockClass::Free) == (!hole && all_free), "free iff every page is free");
    }
    if (!partial) FUZZ_CHECK(z.free_pages == free_pages, "free pages are the buddy pages inside the zone");
  }
  FUZZ_CHECK(zi == r->zones.size(), "no extra zones");
  return 0;
}
