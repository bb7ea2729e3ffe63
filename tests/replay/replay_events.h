// SPDX-License-Identifier: Apache-2.0
// Reads a replay file (tests/replay/*.events) and plays it through the BPF
// programs' logic compiled for user space (replay_programs.h).
//
// One line per event, in time order:
//   TIME TID EVENT [field=value ...]     a tracepoint firing in thread TID
//   TIME - counting on|off               fragd attaches/detaches the mm_page_alloc program
//   TIME - arm_wakeup                    fragd asks the next stall to wake it
//   expect COUNTER VALUE                 after the replay, COUNTER is VALUE
// TIME is in milliseconds (decimals allowed). EVENT is a tracepoint's name:
//   mm_compaction_try_to_compact_pages order= gfp= [storage=0]
//   mm_vmscan_direct_reclaim_begin order= gfp= [storage=0]   (storage=0: no task storage)
//   mm_vmscan_direct_reclaim_end
//   mm_page_alloc order= page=0|1                          (seen only while counting is on)
//   mm_compaction_begin trigger=
//   mm_compaction_end trigger= status= [memalloc=1]        (memalloc: PF_MEMALLOC set)
//   mm_compaction_migratepages nr_migrated= nr_failed=
// trigger and status take the metrics' label values (direct, kcompactd, ...; success, complete, ...).
// COUNTER names a field of the programs' maps with label values as indexes:
//   allocs[9][stalled], stall_hist[9][success].count, stall_hist[9][success].sum_ns,
//   runs[kcompactd][complete], runs_unmatched, wakeups, ...; VALUE is a count, or a time with
//   a unit (5ms, 1.5s). Every counter no expect line names must be 0.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "replay_programs.h"

namespace fragd::replay {

// Every counter of the state by name (see above), zero or not.
std::map<std::string, uint64_t> counters(const replay_state& r);

// Plays the file; returns one message per parse error or unmet expectation ("file:line: ..."), none when it passes.
std::vector<std::string> run_file(const std::string& path);

}  // namespace fragd::replay
