// SPDX-License-Identifier: Apache-2.0
// The answer to {"cmd":"map"} (docs/control-protocol.md): the pageblock
// classes and pages in use of every zone from fragd's last kpageflags scan,
// and the pollution fragd tracked. fragd fills it from its scanner and its
// pollution ledger (concerns/pageblocks/concern.cc); fragctl reads it and draws it
// (fragctl/render/map_view.h, map_png.h).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "concerns/pageblocks/pageblock.h"

namespace fragd {

// Highest pageblock order an answer may carry (x86: 9; arm64 with 64 KiB
// pages: 13).
inline constexpr unsigned kMaxMapPageblockOrder = 20;

// A zone's sample (MapZone::sample): the blocks read, and the 95% intervals of
// hugepages.compaction and hugepages.polluted. Declared outside MapZone so that
// std::optional<MapZoneSample> sees a complete, default-constructible type (clang
// decides that while MapZone is still incomplete).
struct MapZoneSample {
  uint64_t blocks = 0;
  Bounds compaction, polluted;
};

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
  // Set when the zone's estimates come from a sample of its blocks ("sample": absent when the
  // zone was read whole, and then the counts are the classes counted). Blocks the map has not
  // read yet are Unseen ('?').
  using Sample = MapZoneSample;
  std::optional<Sample> sample;
  uint64_t blocks() const { return classes.size(); }
};

// A movable block an unmovable allocation fell back into.
struct PollutedBlockInfo {
  uint64_t block = 0;  // block number (pfn >> order)
  int node = 0;
  uint64_t pages = 0, events = 0;
  uint64_t first_ns = 0, last_ns = 0;  // CLOCK_REALTIME
  uint64_t pid = 0;
  std::string comm;
  uint64_t cgroup_id = 0;
  std::string alloc;  // migratetype of the allocation that fell back
};

struct PolluterInfo {
  std::string comm;
  uint64_t cgroup_id = 0;
  uint64_t blocks = 0, pages = 0;
};

// The pollution fragd tracked: "pollution" of the map answer (with the worst
// blocks) and of the status answer (without).
struct PollutionInfo {
  uint64_t tracked_blocks = 0, tracked_pages = 0, untracked_events = 0;
  std::optional<uint64_t> events;                   // polluting fallbacks seen (absent: not sent)
  std::optional<std::vector<PollutedBlockInfo>> blocks;  // map: most pages first
  std::vector<PolluterInfo> top;                    // by blocks
};

struct MapView {
  bool scanned = false;    // false: "scan" was null
  std::string scan_error;  // why there is no scan (when !scanned)
  uint64_t time_ns = 0, age_ns = 0, duration_ns = 0, pages_read = 0;
  // Age of the map's least recently read block; absent while some block was never read.
  std::optional<uint64_t> map_age_ns;
  unsigned pageblock_order = 9;
  std::vector<MapZone> zones;
  std::optional<PollutionInfo> pollution;  // nullopt: pollution programs not attached
  // Set in an answer to a reader other than root (protocol/readers.h): what it was not sent.
  // Its zones then have no classes and used (both empty), its pollution no blocks and no top.
  std::optional<std::string> withheld;
  // Why the map is older than asked (a full scan was not allowed yet, or the asker reads the
  // sampled map): said beside the map, which is still sent.
  std::optional<std::string> note;
  uint64_t block_pages() const { return uint64_t{1} << pageblock_order; }
};

// from_json checks every field's presence, type and range: node 0..65535, a
// non-empty zone name, start_pfn < end_pfn, first_block = start_pfn >> order,
// one class per block overlapping the zone (the six class characters, and '?'
// in a zone with "sample"), "used" as long as "classes" with each value at most
// the block's pages, "counts" equal to the classes counted (at most the blocks
// in a sampled zone), hugepages at most the blocks, a sample's intervals
// around their estimates. An answer with "withheld" has neither "classes" nor
// "used" (its counts at most the blocks each), and its pollution no "blocks".
// The error names the field ("scan.zones[1].used[17]").
void to_json(nlohmann::json& j, const MapView& v);
void from_json(const nlohmann::json& j, MapView& v);
// "pollution" alone (status carries it too); blocks only when set.
void to_json(nlohmann::json& j, const PollutionInfo& p);
void from_json(const nlohmann::json& j, PollutionInfo& p);
// The same checks, the error naming `path` ("pollution.blocks[3].node").
void read_json(const nlohmann::json& j, PollutionInfo& p, const std::string& path);

}  // namespace fragd
