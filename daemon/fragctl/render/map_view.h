// SPDX-License-Identifier: Apache-2.0
// fragctl's view of the answer to {"cmd":"map"} (protocol/map.h): which
// zones to show, and the text map `fragctl map` prints. Pure logic (no
// sockets, no clock), unit-tested on hand-made answers. Malformed answers give
// an Error, never an exception.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "protocol/map.h"
#include "base/format.h"
#include "base/result.h"

namespace fragd {

// Reads an answer to {"cmd":"map"} (envelope included; from_json of MapView
// says what is checked).
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
// The same on an answer (what `fragctl map --json` prints): `answer` becomes
// the answer with only those zones.
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
