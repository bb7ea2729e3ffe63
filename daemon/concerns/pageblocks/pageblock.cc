// SPDX-License-Identifier: Apache-2.0
#include "concerns/pageblocks/pageblock.h"
#include "base/text.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstring>
#include <numeric>
#include <optional>
#include <thread>

#include "kernel/procfs.h"

namespace fragd {
namespace {

constexpr const char* kClassNames[kBlockClasses + 1] = {"free", "movable", "hybrid", "unmovable",
                                                        "huge", "offline", "unseen"};
constexpr char kClassChars[kBlockClasses + 1] = {'.', 'm', 'x', 'U', 'H', '-', '?'};


// One page's kind from its flags (holes already marked with KPF_NOPAGE).
PageKind page_kind(uint64_t f, PageKind& carry) {
  using namespace kpf;
  if (f & (bit(kNopage) | bit(kOffline))) return PageKind::Hole;
  if (f & bit(kBuddy)) return PageKind::Free;
  PageKind k;
  if (f & bit(kHuge)) k = PageKind::Huge;
  else if (f & (bit(kSlab) | bit(kPgtable) | bit(kReserved))) k = PageKind::Unmovable;
  else if (f & (bit(kLru) | bit(kAnon) | bit(kMmap) | bit(kSwapbacked) | bit(kKsm) | bit(kSwapcache) | bit(kThp)))
    k = PageKind::Movable;
  else if (f & bit(kCompoundHead)) k = PageKind::Unmovable;  // a kernel compound page
  else if (f & bit(kCompoundTail)) k = carry;
  else k = PageKind::Untyped;
  if (f & bit(kCompoundHead)) carry = k;
  return k;
}

}  // namespace

const char* block_class_name(BlockClass c) {
  const auto i = static_cast<size_t>(c);
  return i <= kBlockClasses ? kClassNames[i] : "unknown";
}

char block_class_char(BlockClass c) {
  const auto i = static_cast<size_t>(c);
  return i <= kBlockClasses ? kClassChars[i] : '?';
}

bool block_class_from_char(char ch, BlockClass& out) {
  for (size_t i = 0; i <= kBlockClasses; i++)
    if (kClassChars[i] == ch) {
      out = static_cast<BlockClass>(i);
      return true;
    }
  return false;
}

uint64_t ZoneScan::cost_for(uint64_t n) const {
  n = std::min<uint64_t>(n, movable_sorted.size());
  return std::accumulate(movable_sorted.begin(), movable_sorted.begin() + static_cast<std::ptrdiff_t>(n), uint64_t{0});
}

BlockInfo classify_block(const uint64_t* flags, size_t n, size_t block_pages, PageKind& carry) {
  size_t kinds[6] = {};
  size_t thp = 0, late_heads = 0;
  for (size_t i = 0; i < n; i++) {
    const uint64_t f = flags[i];
    const PageKind k = page_kind(f, carry);
    kinds[static_cast<size_t>(k)]++;
    if (k == PageKind::Movable && (f & kpf::bit(kpf::kThp))) {
      thp++;
      if (i > 0 && (f & kpf::bit(kpf::kCompoundHead))) late_heads++;
    }
  }
  const size_t hole = kinds[static_cast<size_t>(PageKind::Hole)] + (block_pages > n ? block_pages - n : 0);
  size_t free = kinds[static_cast<size_t>(PageKind::Free)];
  size_t movable = kinds[static_cast<size_t>(PageKind::Movable)];
  const size_t unmovable = kinds[static_cast<size_t>(PageKind::Unmovable)];
  const size_t untyped = kinds[static_cast<size_t>(PageKind::Untyped)];
  size_t huge = kinds[static_cast<size_t>(PageKind::Huge)];
  // A THP folio covering the whole block is a huge page, not movable pages.
  if (thp == block_pages && late_heads == 0) {
    huge += thp;
    movable -= thp;
  }

  BlockInfo b;
  b.used = static_cast<uint16_t>(std::min<size_t>(movable + unmovable + untyped + huge, UINT16_MAX));
  b.movable = static_cast<uint16_t>(std::min<size_t>(movable, UINT16_MAX));
  b.unmovable = static_cast<uint16_t>(std::min<size_t>(unmovable, UINT16_MAX));
  if (hole > 0) b.cls = BlockClass::Offline;
  else if (huge == block_pages) b.cls = BlockClass::Huge;
  else if (free == block_pages) b.cls = BlockClass::Free;
  else if (movable > 0 && unmovable > 0) b.cls = movable > unmovable ? BlockClass::Hybrid : BlockClass::Unmovable;
  else if (unmovable > 0) b.cls = BlockClass::Unmovable;
  else if (movable > 0) b.cls = BlockClass::Movable;
  else if (untyped > 0) b.cls = BlockClass::Unmovable;
  else b.cls = BlockClass::Huge;  // only free and huge pages: part of a gigantic page being freed
  return b;
}

namespace {

// The free pages compaction and migration can use: those of free, movable and hybrid blocks.
// Free pages in unmovable blocks can neither join a huge page nor take a migrated page
// (compaction's free scanner skips unmovable pageblocks).
uint64_t usable_free_pages(const ZoneScan& z, unsigned pageblock_order) {
  const uint64_t bp = uint64_t{1} << pageblock_order;
  uint64_t usable = 0;
  for (const auto& b : z.blocks)
    if (b.cls == BlockClass::Free || b.cls == BlockClass::Movable || b.cls == BlockClass::Hybrid)
      usable += bp - std::min<uint64_t>(b.used, bp);
  return std::min(usable, z.free_pages);
}

}  // namespace

void estimate_zone(ZoneScan& z, unsigned pageblock_order) {
  const uint64_t bp = uint64_t{1} << pageblock_order;
  z.counts.fill(0);
  z.movable_sorted.clear();
  for (const auto& b : z.blocks) {
    if (b.cls == BlockClass::Unseen) continue;
    z.counts[static_cast<size_t>(b.cls)]++;
    if (b.cls == BlockClass::Movable) z.movable_sorted.push_back(b.movable);
  }
  std::sort(z.movable_sorted.begin(), z.movable_sorted.end());
  z.hugepages_free = z.counts[static_cast<size_t>(BlockClass::Free)];
  z.hugepages_polluted = z.counts[static_cast<size_t>(BlockClass::Hybrid)];
  const uint64_t usable = usable_free_pages(z, pageblock_order);
  const uint64_t capacity = usable > z.reserve_pages ? (usable - z.reserve_pages) / bp : 0;
  const uint64_t room = capacity > z.hugepages_free ? capacity - z.hugepages_free : 0;
  z.hugepages_compaction = std::min<uint64_t>(z.movable_sorted.size(), room);
  z.compaction_cost_pages = z.cost_for(z.hugepages_compaction);
  // Every block was read: the estimates are exact.
  z.sample_blocks = z.blocks.size();
  for (size_t c = 0; c < kBlockClasses; c++) z.counts_ci[c] = {z.counts[c], z.counts[c]};
  z.compaction_ci = {z.hugepages_compaction, z.hugepages_compaction};
  z.polluted_ci = {z.hugepages_polluted, z.hugepages_polluted};
  estimate_from_map(z, pageblock_order);
}

void estimate_from_map(ZoneScan& z, unsigned pageblock_order, unsigned giga_order) {
  const uint64_t bp = uint64_t{1} << pageblock_order;
  const uint64_t usable = usable_free_pages(z, pageblock_order);

  // The longest run of free blocks.
  uint64_t run = 0, best = 0;
  for (const auto& b : z.blocks) {
    run = b.cls == BlockClass::Free ? run + 1 : 0;
    best = std::max(best, run);
  }
  z.free_run_max_pages = best * bp;

  // 1 GiB ranges: aligned, wholly inside the zone.
  z.gigantic_free = z.gigantic_migration = 0;
  z.gigantic_used.clear();
  if (pageblock_order >= giga_order) return;
  const uint64_t per = uint64_t{1} << (giga_order - pageblock_order);  // blocks per range
  const uint64_t gp = uint64_t{1} << giga_order;                        // pages per range
  std::vector<uint64_t> used;  // movable pages to migrate, per candidate range
  uint64_t free_in_candidates = 0;
  for (uint64_t first = (z.start_pfn + gp - 1) / gp * gp; first + gp <= z.end_pfn; first += gp) {
    const uint64_t b0 = (first >> pageblock_order) - z.first_block;
    if (b0 + per > z.blocks.size()) break;
    bool all_free = true, movable_only = true;
    uint64_t u = 0, f = 0;
    for (uint64_t i = b0; i < b0 + per; i++) {
      const BlockInfo& b = z.blocks[i];
      all_free = all_free && b.cls == BlockClass::Free;
      // Untyped pages count as movable here: contiguous-range migration takes free pages on
      // the per-CPU lists (which kpageflags shows untyped: a pool just freed leaves whole blocks
      // so) and fails only on typed unmovable pages.
      movable_only = movable_only && (b.cls == BlockClass::Free || b.cls == BlockClass::Movable ||
                                      (b.cls == BlockClass::Unmovable && b.unmovable == 0));
      u += std::min<uint64_t>(b.used, bp);
      f += bp - std::min<uint64_t>(b.used, bp);
    }
    if (all_free) {
      z.gigantic_free++;
      free_in_candidates += f;
    } else if (movable_only) {
      used.push_back(u);
    }
  }
  // Migration moves a range's pages into free pages outside it: the free pages of the zone not
  // in a range already taken (free ones included), above the reserve.
  std::sort(used.begin(), used.end());
  uint64_t outside = usable > z.reserve_pages + free_in_candidates ? usable - z.reserve_pages - free_in_candidates : 0;
  for (uint64_t u : used) {
    const uint64_t f = gp - u;  // the range's own free pages leave the pool of targets
    if (outside < f + u) break;
    outside -= f + u;
    z.gigantic_migration++;
    z.gigantic_used.push_back(u);
  }
}

ScanClock ScanClock::now() { return {now_ns(CLOCK_REALTIME), now_ns(CLOCK_BOOTTIME)}; }

uint64_t scan_age_ns(const ScanResult& r, const ScanClock& now) {
  return now.boot_ns > r.boot_time_ns ? now.boot_ns - r.boot_time_ns : 0;
}

void mark_holes(uint64_t* flags, uint64_t first_pfn, size_t n, size_t got, const ZoneSpan& zone,
                const std::vector<PfnRange>& ram) {
  std::fill(flags + got, flags + n, kpf::bit(kpf::kNopage));
  auto mark_hole = [&](uint64_t lo, uint64_t hi) {  // pfns [lo, hi)
    lo = std::max(lo, first_pfn);
    hi = std::min(hi, first_pfn + n);
    for (uint64_t p = lo; p < hi; p++) flags[p - first_pfn] = kpf::bit(kpf::kNopage);
  };
  mark_hole(first_pfn, zone.start_pfn);
  mark_hole(zone.end_pfn, first_pfn + n);
  if (ram.empty()) return;
  uint64_t cursor = first_pfn;
  for (const auto& rr : ram) {
    if (rr.end_pfn <= cursor) continue;
    if (rr.start_pfn >= first_pfn + n) break;
    mark_hole(cursor, rr.start_pfn);
    cursor = std::max(cursor, rr.end_pfn);
  }
  mark_hole(cursor, first_pfn + n);
}

Result<ScanResult> scan_pageblocks(const std::vector<ZoneSpan>& spans, const std::vector<PfnRange>& ram,
                                   unsigned pageblock_order, const FlagReader& read, size_t chunk_blocks,
                                   unsigned threads) {
  if (pageblock_order == 0 || pageblock_order > 20)
    return make_error("pageblock order " + std::to_string(pageblock_order) + " is out of range 1..20", EINVAL);
  const uint64_t bp = uint64_t{1} << pageblock_order;
  // A power of two of at least 8 blocks: items then start at multiples of
  // 2^12 pages or more, past the largest buddy order of any architecture.
  size_t cb = 8;
  while (cb < chunk_blocks && cb < (size_t{1} << 16)) cb <<= 1;
  chunk_blocks = cb;
  ScanResult r;
  r.pageblock_order = pageblock_order;
  r.wall_time_ns = now_ns(CLOCK_REALTIME);
  r.boot_time_ns = now_ns(CLOCK_BOOTTIME);
  const uint64_t t0 = now_ns(CLOCK_MONOTONIC);

  // Work items: runs of up to chunk_blocks blocks, cut at multiples of
  // chunk_blocks so that no compound page from the buddy allocator (at most
  // order 10) straddles two items and a tail always finds its head.
  struct Item {
    size_t zone;
    uint64_t block, nblocks;
    uint64_t free_pages = 0, pages_read = 0;
    uint64_t short_at = UINT64_MAX;  // first pfn the read did not return
    std::optional<Error> error = std::nullopt;
  };
  std::vector<Item> items;
  for (const auto& span : spans) {
    if (span.end_pfn <= span.start_pfn) continue;
    ZoneScan z;
    static_cast<ZoneSpan&>(z) = span;
    z.first_block = span.start_pfn >> pageblock_order;
    const uint64_t last_block = (span.end_pfn - 1) >> pageblock_order;
    z.blocks.resize(last_block - z.first_block + 1);
    for (uint64_t b = z.first_block; b <= last_block;) {
      const uint64_t next = std::min<uint64_t>((b / chunk_blocks + 1) * chunk_blocks, last_block + 1);
      items.push_back({r.zones.size(), b, next - b});
      b = next;
    }
    r.zones.push_back(std::move(z));
  }

  std::atomic<size_t> next_item{0};
  auto worker = [&]() {
    std::vector<uint64_t> buf(chunk_blocks * bp);
    for (size_t i; (i = next_item.fetch_add(1)) < items.size();) {
      Item& it = items[i];
      ZoneScan& z = r.zones[it.zone];
      const uint64_t first_pfn = it.block << pageblock_order;
      const size_t want = it.nblocks * bp;
      auto n = read(first_pfn, buf.data(), want);
      if (!n) {
        it.error = n.error();
        continue;
      }
      const size_t got = std::min(*n, want);
      it.pages_read = got;
      if (got < want) it.short_at = first_pfn + got;
      mark_holes(buf.data(), first_pfn, want, got, z, ram);
      PageKind carry = PageKind::Untyped;
      for (uint64_t k = 0; k < it.nblocks; k++) {
        const uint64_t* f = buf.data() + k * bp;
        for (uint64_t p = 0; p < bp; p++)
          if (f[p] & kpf::bit(kpf::kBuddy)) it.free_pages++;
        z.blocks[it.block - z.first_block + k] = classify_block(f, bp, bp, carry);
      }
    }
  };
  threads = std::clamp<unsigned>(threads, 1, 64);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; t++) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();

  std::vector<uint64_t> short_at(r.zones.size(), UINT64_MAX);
  for (const auto& it : items) {
    if (it.error) return *it.error;
    r.zones[it.zone].free_pages += it.free_pages;
    r.pages_read += it.pages_read;
    short_at[it.zone] = std::min(short_at[it.zone], it.short_at);
  }
  for (size_t i = 0; i < r.zones.size(); i++) {
    ZoneScan& z = r.zones[i];
    if (short_at[i] != UINT64_MAX)
      r.warnings.push_back("zone " + std::to_string(z.node) + "/" + z.zone + ": page flags end at pfn " +
                           std::to_string(short_at[i]) + ", before the zone's end " + std::to_string(z.end_pfn) +
                           " (memory removed while scanning?); the rest is reported offline");
    z.seen_boot_ns.assign(z.blocks.size(), r.boot_time_ns);
    estimate_zone(z, pageblock_order);
  }
  r.map_oldest_boot_ns = r.boot_time_ns;
  r.duration_ns = now_ns(CLOCK_MONOTONIC) - t0;
  return r;
}

Result<LiveLayout> read_live_layout(const std::string& proc_root, int iomem_fd, const std::string& sys_root,
                                    bool with_free) {
  LiveLayout l;
  auto zi = read_text_file(proc_root + "/zoneinfo");
  if (!zi) return zi.error();
  auto spans = parse_zone_spans(*zi, proc_root + "/zoneinfo");
  if (!spans) return spans.error();
  l.spans = std::move(*spans);
  if (with_free) {
    // Free pages (zoneinfo) and free blocks by order (buddyinfo), as the kernel counts them.
    auto bi = read_text_file(proc_root + "/buddyinfo");
    if (!bi) return bi.error();
    auto zones = parse_buddyinfo(*bi, proc_root + "/buddyinfo");
    if (!zones) return zones.error();
    if (auto r = parse_zoneinfo(*zi, proc_root + "/zoneinfo", *zones); !r) return r.error();
    l.free = std::move(*zones);
  }
  // /proc/iomem shows its addresses only through an fd opened with CAP_SYS_ADMIN; without it
  // (the shipped unit does not grant it) the firmware's map under sysfs gives the same ranges.
  std::string iomem_error;
  if (auto io = iomem_fd >= 0 ? read_text_fd(iomem_fd, proc_root + "/iomem") : read_text_file(proc_root + "/iomem")) {
    if (auto r = parse_iomem_ram(*io, proc_root + "/iomem")) l.ram = std::move(*r);
    else iomem_error = r.error().message;
  } else {
    iomem_error = io.error().message;
  }
  if (!iomem_error.empty()) {
    auto fw = sys_root.empty() ? Result<std::vector<PfnRange>>(make_error("no sysfs to read", ENOENT))
                               : read_firmware_memmap_ram(sys_root);
    if (fw) l.ram = std::move(*fw);
    else l.warnings.push_back(iomem_error + "; " + fw.error().message +
                              "; holes inside zones are classified by their flags");
  }
  return l;
}

Result<int> open_kpageflags(const std::string& proc_root) {
  const std::string kpf_path = proc_root + "/kpageflags";
  const int fd = ::open(kpf_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) return fd;
  const int e = errno;
  std::string fix = e == EACCES || e == EPERM
                        ? "it is root's alone (mode 0400): run fragd as root"
                        : e == ENOENT ? "the kernel lacks CONFIG_PROC_PAGE_MONITOR"
                                      : "check the kernel's procfs";
  return make_error("cannot open " + kpf_path + ": " + std::strerror(e) + "; " + fix +
                        " (the pageblock scan is off, everything else works)",
                    e);
}

FlagReader fd_flag_reader(int fd, std::string path) {
  return [fd, path = std::move(path)](uint64_t pfn, uint64_t* out, size_t n) -> Result<size_t> {
    size_t done = 0;
    while (done < n) {
      const ssize_t got = ::pread(fd, reinterpret_cast<char*>(out + done), (n - done) * sizeof(uint64_t),
                                  static_cast<off_t>((pfn + done) * sizeof(uint64_t)));
      if (got < 0) {
        if (errno == EINTR) continue;
        if (errno == EINVAL && done == 0) return size_t{0};  // past the last pfn
        return make_error("reading " + path + " at pfn " + std::to_string(pfn + done) + ": " + std::strerror(errno),
                          errno);
      }
      if (got == 0) break;
      done += static_cast<size_t>(got) / sizeof(uint64_t);
      if (static_cast<size_t>(got) % sizeof(uint64_t)) break;
    }
    return done;
  };
}

Result<ScanResult> scan_live(const std::string& proc_root, unsigned pageblock_order, unsigned threads,
                             int iomem_fd, const std::string& sys_root) {
  auto fd = open_kpageflags(proc_root);
  if (!fd) return fd.error();
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{*fd};
  auto layout = read_live_layout(proc_root, iomem_fd, sys_root, false);
  if (!layout) return layout.error();
  auto r = scan_pageblocks(layout->spans, layout->ram, pageblock_order, fd_flag_reader(*fd, proc_root + "/kpageflags"),
                           64, threads);
  if (r) r->warnings.insert(r->warnings.begin(), layout->warnings.begin(), layout->warnings.end());
  return r;
}

}  // namespace fragd
