// The control socket's answers (docs/control-protocol.md), built from snapshots.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "stalls.h"
#include "act/engine.h"
#include "sources/pageblocks/pageblock.h"
#include "sources/pollution/pollution.h"
#include "kernel/procfs.h"
#include "kernel/bpf_loader.h"
#include "kernel/bpf_maps.h"

namespace fragd {

nlohmann::json hist_answer(const BpfSnapshot& s, unsigned min_order, uint64_t uptime_ns);
nlohmann::json status_answer(const MemSnapshot* mem, const BpfSnapshot* bpf,
                             const std::vector<ProgramState>& programs, uint64_t tick_ns);
nlohmann::json trace_event_json(const stall_event& e);

// Act mode (docs/control-protocol.md "Acting"). Times in outcomes are
// CLOCK_MONOTONIC; `mono_now`/`real_now` convert them to Unix time.
nlohmann::json request_json(const ActionRequest& r);
nlohmann::json outcome_json(const ActionOutcome& o, uint64_t mono_now, uint64_t real_now);
// The "scan" object of the map answer (docs/control-protocol.md).
nlohmann::json scan_json(const ScanResult& r, uint64_t real_now);

// The "pollution" object of the map answer (with_blocks: the worst blocks
// too) and of the status answer (totals and top polluters).
nlohmann::json pollution_json(const PollutionCounters& c, const PollutionSummary& s, bool with_blocks);
// The "scan" summary of the status answer: per zone classes and huge pages.
nlohmann::json scan_summary_json(const ScanResult& r, uint64_t real_now);

// The log line of one finished action.
std::string outcome_line(const ActionOutcome& o);

}  // namespace fragd
