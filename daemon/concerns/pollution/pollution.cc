// SPDX-License-Identifier: Apache-2.0
#include "concerns/pollution/pollution.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace fragd {

int node_of_block(uint64_t block, const std::vector<ZoneSpan>& spans, unsigned pageblock_order) {
  if (pageblock_order >= 64 || block > (UINT64_MAX >> pageblock_order)) return -1;
  const uint64_t pfn = block << pageblock_order;
  for (const auto& z : spans)
    if (pfn >= z.start_pfn && pfn < z.end_pfn) return z.node;
  return -1;
}

PollutionSummary summarize_pollution(const std::vector<PollutedBlock>& blocks, const std::vector<ZoneSpan>& spans,
                                     unsigned pageblock_order, size_t top_n, size_t max_blocks) {
  PollutionSummary s;
  std::map<int, NodePollution> nodes;
  for (const auto& z : spans) nodes[z.node].node = z.node;

  std::map<std::pair<std::string, uint64_t>, Polluter> by_who;
  std::vector<PollutedBlock> placed;
  placed.reserve(blocks.size());
  for (const auto& b : blocks) {
    PollutedBlock p = b;
    p.node = node_of_block(b.block, spans, pageblock_order);
    if (p.node < 0) {
      s.unplaced_blocks++;
    } else {
      auto& n = nodes[p.node];
      n.blocks++;
      n.pages += b.pages;
    }
    s.blocks++;
    s.pages += b.pages;
    auto& who = by_who[{b.comm, b.cgroup_id}];
    who.comm = b.comm;
    who.cgroup_id = b.cgroup_id;
    who.blocks++;
    who.pages += b.pages;
    placed.push_back(std::move(p));
  }
  for (auto& [id, n] : nodes) s.nodes.push_back(n);

  for (auto& [key, p] : by_who) s.top.push_back(std::move(p));
  auto polluter_order = [](const Polluter& a, const Polluter& b) {
    return std::tie(b.blocks, b.pages, a.comm, a.cgroup_id) < std::tie(a.blocks, a.pages, b.comm, b.cgroup_id);
  };
  const size_t nt = std::min(top_n, s.top.size());
  std::partial_sort(s.top.begin(), s.top.begin() + nt, s.top.end(), polluter_order);
  s.top.resize(nt);

  auto block_order = [](const PollutedBlock& a, const PollutedBlock& b) {
    return std::tie(b.pages, a.block) < std::tie(a.pages, b.block);
  };
  const size_t nb = std::min(max_blocks, placed.size());
  std::partial_sort(placed.begin(), placed.begin() + nb, placed.end(), block_order);
  placed.resize(nb);
  s.worst = std::move(placed);
  return s;
}

std::vector<uint64_t> blocks_found_clean(const std::vector<PollutedBlock>& ledger, const ScanResult& scan) {
  std::vector<uint64_t> out;
  for (const auto& b : ledger) {
    if (b.last_boot_ns >= scan.boot_time_ns) continue;
    for (const auto& z : scan.zones) {
      if (b.block < z.first_block || b.block - z.first_block >= z.blocks.size()) continue;
      const size_t i = b.block - z.first_block;
      const BlockInfo& info = z.blocks[i];
      // Read after the block's last fallback: a sampled map holds blocks read rounds ago.
      const uint64_t seen = i < z.seen_boot_ns.size() ? z.seen_boot_ns[i] : scan.boot_time_ns;
      if (seen <= b.last_boot_ns) break;
      if (info.cls != BlockClass::Unseen && info.unmovable == 0 && info.cls != BlockClass::Unmovable && info.cls != BlockClass::Hybrid &&
          info.cls != BlockClass::Offline)
        out.push_back(b.block);
      break;
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Released release_clean_blocks(const std::vector<PollutedBlock>& ledger, const ScanResult& scan, const LedgerOps& ops) {
  Released out;
  std::map<uint64_t, uint64_t> pages;
  for (const auto& b : ledger) pages[b.block] = b.pages;
  for (uint64_t block : blocks_found_clean(ledger, scan)) {
    auto last = ops.last_boot_ns(block);
    if (!last || *last >= scan.boot_time_ns) continue;  // gone meanwhile, or polluted again since the scan began
    if (auto r = ops.release(block); !r) {
      out.error = r.error();
      return out;
    }
    out.blocks++;
    out.pages += pages[block];
  }
  return out;
}

}  // namespace fragd
