// SPDX-License-Identifier: Apache-2.0
// The BPF programs: loaded and attached once at start (with what the zones and the config make
// of their options), the reader of their maps, and the start-up report of what attached.
#pragma once

#include "fragd/concerns/concern.h"

namespace fragd {

// Checks BTF and the privileges BPF needs, reads the zone spans (Shared::spans: the pollution
// ledger's size and the blocks' nodes), loads and attaches every program, opens the reader and
// sets the start time. An error names what failed and the fix.
Result<void> load_programs(Shared& sh);
// Logs each program that should be attached and is not, the tracepoints this kernel lacks, and
// the one line that says fragd runs.
void log_programs(const Shared& sh);
// The status answer's own part: version, pid, tick and the programs.
void program_status(const Shared& sh, StatusReply& s);
// Readiness: the programs that should be attached and are not, as "not attached: NAME
// (TRACEPOINT): ERROR; ..."; "" when every one is. The per-page allocation counter must be
// attached only with allocations "exact" (adaptive attaches it while counting, off never).
std::string unready_programs(const std::vector<ProgramState>& programs, const std::string& allocations);

}  // namespace fragd
