// fragctl's view of the answer to {"cmd":"map"} (docs/control-protocol.md):
// the pageblock classes and pages in use of every zone from fragd's last
// kpageflags scan, and the pollution fragd tracked. Parsing validates every
// field; the text map is what `fragctl map` prints. Pure logic (no sockets,
// no clock), unit-tested on hand-made answers. Malformed answers give an
// Error, never an exception.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "sources/pageblocks/pageblock.h"
#include "base/format.h"
#include "base/result.h"

namespace fragd {

// Highest pageblock order an answer may carry (x86: 9; arm64 with 64 KiB
// pages: 13).
inline constexpr unsigned kMaxMapPageblockOrder = 20;

// One zone of the scan: blocks first_block, first_block + 1, ... cover
// [start_pfn, end_pfn).
struct MapZone {
  int node = 0;
  std::string zone;
  uint64_t start_pfn = 0, end_pfn = 0;
  uint64_t first_block = 0;
  std::vector<BlockClass> classes;  // one per block
  std::vector<uint32_t> used;       // pages in use per block, 0..block pages
  std::array<uint64_t, kBlockClasses> counts{};  // blocks per class
  uint64_t free_pages = 0;
  uint64_t hugepages_free = 0, hugepages_compaction = 0, hugepages_polluted = 0;
  uint64_t compaction_cost_pages = 0;  // pages compaction migrates for hugepages_compaction
  uint64_t blocks() const { return classes.size(); }
};

// A movable block an unmovable allocation fell back into.
struct PollutedBlock {
  uint64_t block = 0;  // block number (pfn >> order)
  int node = 0;
  uint64_t pages = 0, events = 0;
  uint64_t first_ns = 0, last_ns = 0;  // CLOCK_REALTIME
  uint64_t pid = 0;
  std::string comm;
  uint64_t cgroup_id = 0;
  std::string alloc;  // migratetype of the allocation that fell back
};

struct Polluter {
  std::string comm;
  uint64_t cgroup_id = 0;
  uint64_t blocks = 0, pages = 0;
};

struct PollutionView {
  uint64_t tracked_blocks = 0, tracked_pages = 0, untracked_events = 0;
  std::vector<PollutedBlock> blocks;  // most pages first
  std::vector<Polluter> top;          // by blocks
};

struct MapView {
  bool scanned = false;    // false: "scan" was null
  std::string scan_error;  // why there is no scan (when !scanned)
  uint64_t time_ns = 0, age_ns = 0, duration_ns = 0, pages_read = 0;
  unsigned pageblock_order = 9;
  std::vector<MapZone> zones;
  std::optional<PollutionView> pollution;  // nullopt: pollution programs not attached
  uint64_t block_pages() const { return uint64_t{1} << pageblock_order; }
};

// Parses an answer to {"cmd":"map"} (envelope included). Every field must be
// present with its type and range: node 0..65535, a non-empty zone name,
// start_pfn < end_pfn, first_block = start_pfn >> order, one class per block
// overlapping the zone (only the six class characters), "used" as long as
// "classes" with each value at most the block's pages, "counts" equal to the
// classes counted, hugepages at most the blocks. The Error names the field
// ("scan.zones[1].used[17]").
Result<MapView> parse_map_answer(const nlohmann::json& answer);

// Which zones to show: nullopt = all. Zone names match without regard to case.
struct MapFilter {
  std::optional<int> node;
  std::optional<std::string> zone;
};

// Keeps the zones `f` selects, and the polluted blocks inside them (totals and
// the top polluters stay host-wide). Error when no zone matches: it lists the
// zones there are. A view without a scan is left as it is.
Result<void> filter_map(MapView& v, const MapFilter& f);
// The same on the raw answer (for --json); `answer` must have parsed.
Result<void> filter_map_answer(nlohmann::json& answer, const MapFilter& f);

struct MapTextOptions {
  uint64_t page_kib = 4;    // page size, for addresses and sizes
  unsigned row_blocks = 64;  // blocks per row of the map (128 MiB with 2 MiB blocks)
  bool rows = true;         // false: headers and pollution only (no map rows)
  bool utc_times = false;   // scan time in UTC instead of local time
};

// The terminal map: a scan line; per zone a header (node, zone, pfn range,
// blocks per class, hugepages free / by compaction / polluted, compaction
// cost in pages and MiB) and rows of row_blocks blocks, each prefixed by the
// physical address of its first block and aligned to row_blocks (positions
// outside the zone are blank), one class character per block, a space every
// 16; a legend; then the pollution summary (tracked blocks and pages, top
// polluters, the most polluted blocks shown). Without a scan: one line with
// scan_error.
std::string format_map_text(const MapView& v, const MapTextOptions& opt = {});

// "2025-11-21 10:00:00 +0100" (local) or "2025-11-21 09:00:00 UTC".
std::string format_realtime(uint64_t realtime_ns, bool utc);
// Blocks per class summed over the zones of `v`.
std::array<uint64_t, kBlockClasses> map_class_totals(const MapView& v);

}  // namespace fragd
