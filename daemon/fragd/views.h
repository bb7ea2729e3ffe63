// The control socket's answers (docs/control-protocol.md), built from snapshots.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "alloc.h"
#include "core/procfs.h"
#include "fragd/bpf_loader.h"
#include "fragd/bpf_reader.h"

namespace fragd {

nlohmann::json hist_answer(const BpfSnapshot& s, unsigned min_order, uint64_t uptime_ns);
nlohmann::json status_answer(const MemSnapshot* mem, const BpfSnapshot* bpf,
                             const std::vector<ProgramState>& programs, uint64_t tick_ns);
nlohmann::json trace_event_json(const stall_event& e);

}  // namespace fragd
