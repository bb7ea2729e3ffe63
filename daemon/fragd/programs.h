// SPDX-License-Identifier: Apache-2.0
// The BPF programs: loaded and attached once at start (with what the zones and the config make
// of their options), the reader of their maps, and the start-up report of what attached. The
// Daemon owns them and hands each concern its port (daemon_run.cc).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "kernel/memmap.h"
#include "policy/config.h"
#include "protocol/status.h"
#include "concerns/programs/programs.h"
#include "concerns/programs/reader.h"

namespace fragd {

struct LoadedPrograms {
  std::unique_ptr<BpfPrograms> programs;
  std::unique_ptr<BpfReader> reader;
  std::vector<ZoneSpan> spans;  // zone spans at start: the pollution ledger's size, the blocks' nodes
  uint64_t start_ns = 0;        // when they were attached
};

// Checks BTF and the privileges BPF needs, reads the zone spans, loads and attaches every
// program and opens the reader. An error names what failed and the fix.
Result<LoadedPrograms> load_programs(const Config& cfg);
// Logs each program that should be attached and is not, the tracepoints this kernel lacks, and
// the one line that says fragd runs.
void log_programs(const Config& cfg, const BpfPrograms& bpf);
// The status answer's own part: version, pid, tick and the programs.
void program_status(const Config& cfg, const BpfPrograms& bpf, StatusReply& s);
// Readiness: the programs that should be attached and are not, as "not attached: NAME
// (TRACEPOINT): ERROR; ..."; "" when every one is. The per-page allocation counter must be
// attached only with allocations "exact" (adaptive attaches it while counting, off never).
std::string unready_programs(const std::vector<ProgramState>& programs, const std::string& allocations);

}  // namespace fragd
