// SPDX-License-Identifier: Apache-2.0
// Pageblock pollution, from fragd's BPF records (bpf/pollution.bpf.c): which
// MOVABLE pageblocks hold pages of UNMOVABLE or RECLAIMABLE allocations that
// fell back into them without claiming them, since when, and who did it.
// Pure: the BPF side is read by concerns/pollution/maps; this file only places the
// blocks on nodes and ranks them and their polluters.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

#include "concerns/pollution/maps.h"
#include "concerns/pageblocks/pageblock.h"

namespace fragd {

struct NodePollution {
  int node = 0;
  uint64_t blocks = 0;  // polluted blocks in the node's zone spans
  uint64_t pages = 0;   // their recorded polluting pages
};

// Blocks and pages by who polluted them (comm and cgroup of the first fallback into each block).
struct Polluter {
  std::string comm;
  uint64_t cgroup_id = 0;
  uint64_t blocks = 0;
  uint64_t pages = 0;
};

struct PollutionSummary {
  std::vector<NodePollution> nodes;   // every node of the spans, ascending, zeros included
  uint64_t unplaced_blocks = 0;       // blocks in no zone span (node -1)
  uint64_t blocks = 0, pages = 0;     // over all blocks given
  std::vector<Polluter> top;          // most blocks first, then most pages; at most top_n
  std::vector<PollutedBlock> worst;   // most pages first, then lowest block; node set; at most max_blocks
};

// The node whose zone span holds the block's first page; -1 when none does.
int node_of_block(uint64_t block, const std::vector<ZoneSpan>& spans, unsigned pageblock_order);

// Places `blocks` on nodes, ranks polluters and blocks. Ties break on comm,
// then cgroup id (polluters) and on block number (blocks), so the output is
// the same for the same input.
PollutionSummary summarize_pollution(const std::vector<PollutedBlock>& blocks, const std::vector<ZoneSpan>& spans,
                                     unsigned pageblock_order, size_t top_n = 10, size_t max_blocks = 256);

// The ledger blocks `scan` found clean: the block lies in a scanned zone, holds
// no unmovable page and is not classed unmovable or hybrid, and its last
// recorded fallback came before the block was read (a fallback during the scan
// may not have been seen by it; a sampled map holds blocks read rounds ago, and
// blocks not read yet). Ascending block numbers.
std::vector<uint64_t> blocks_found_clean(const std::vector<PollutedBlock>& ledger, const ScanResult& scan);

// What releasing blocks needs of the BPF ledger (concerns/programs/reader.h's BpfReader in fragd).
struct LedgerOps {
  std::function<Result<uint64_t>(uint64_t block)> last_boot_ns;  // the record's latest fallback, read anew
  std::function<Result<void>(uint64_t block)> release;            // deletes the record
};
struct Released {
  uint64_t blocks = 0, pages = 0;     // records deleted, and the pages they held
  std::optional<Error> error;         // a delete that failed: the release stopped there
};
// Deletes the record of every block `scan` found clean (blocks_found_clean), each looked up once
// more right before its delete, so that a fallback that landed since the ledger was read keeps it.
Released release_clean_blocks(const std::vector<PollutedBlock>& ledger, const ScanResult& scan, const LedgerOps& ops);

}  // namespace fragd
