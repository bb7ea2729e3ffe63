// SPDX-License-Identifier: Apache-2.0
// The control socket's answers (docs/control-protocol.md), built as the
// protocol's structs (protocol/) from fragd's snapshots and act/'s records.
#pragma once

#include <string>
#include <vector>

#include "stalls.h"
#include "act/action_log.h"
#include "act/engine.h"
#include "kernel/bpf_loader.h"
#include "kernel/bpf_maps.h"
#include "kernel/procfs.h"
#include "protocol/action.h"
#include "protocol/hist.h"
#include "protocol/map.h"
#include "protocol/status.h"
#include "protocol/top.h"
#include "sources/attribution/attribution.h"
#include "sources/pageblocks/pageblock.h"
#include "sources/pollution/pollution.h"

namespace fragd {

// Orders min_order..10 of the snapshot; allocation counting is the caller's to add.
HistSnapshot hist_reply(const BpfSnapshot& s, unsigned min_order, uint64_t uptime_ns);
// Nodes, programs, warnings, events dropped and compaction runs; the caller adds
// allocations, pollution, scan and the policy's part.
StatusReply status_reply(const MemSnapshot* mem, const BpfSnapshot* bpf, const std::vector<ProgramState>& programs,
                         uint64_t tick_ns);
StallEvent stall_message(const stall_event& e);
// The answer to "top": the attribution (null: nothing read yet) and each node's score and free blocks.
TopReply top_reply(const AttributionView* a, const MemSnapshot* mem, uint64_t uptime_ns);

// The map answer's scan (the caller sets pollution, or scan_error without a scan).
MapView map_reply(const ScanResult& r, const ScanClock& now);
// "pollution" of the map answer (with_blocks: the worst blocks too) and of
// the status answer (totals and top polluters).
PollutionInfo pollution_info(const PollutionCounters& c, const PollutionSummary& s, bool with_blocks);
// "scan" of the status answer: per zone classes and huge pages.
ScanSummary scan_summary(const ScanResult& r, const ScanClock& now);

// Readiness: the programs that should be attached and are not, as "not
// attached: NAME (TRACEPOINT): ERROR; ..."; "" when every one is. The per-page
// allocation counter must be attached only with allocations "exact" (adaptive
// attaches it while counting, off never).
std::string unready_programs(const std::vector<ProgramState>& programs, const std::string& allocations);

}  // namespace fragd
