// SPDX-License-Identifier: Apache-2.0
// The stalls object's attribution maps (bpf/stalls.bpf.c, include/stalls.h): stalls and failed
// allocations by call site, stalls by cgroup, and the call sites' stacks.
#pragma once

#include <cstdint>
#include <vector>

#include "base/result.h"
#include "stalls.h"

namespace fragd {

struct AttributionMapFds {
  int stall_sites = -1;    // HASH struct stall_site_key -> struct stall_attr
  int failure_sites = -1;  // HASH struct stall_site_key -> struct stall_attr (entries: failed allocations)
  int stall_cgroups = -1;  // HASH cgroup v2 id -> struct stall_attr
  int stall_stacks = -1;   // STACK_TRACE id -> FRAGD_STACK_DEPTH return addresses
};

// One entry of map stall_sites (or of failure_sites: `failure`, attr.entries is the count).
struct SiteCount {
  stall_site_key key{};
  stall_attr attr{};
  bool failure = false;
};
struct CgroupCount {
  uint64_t cgroup_id = 0;
  stall_attr attr{};
};

// Every entry of maps stall_sites, failure_sites (SiteCount::failure) and stall_cgroups (unordered).
Result<void> read_attribution(const AttributionMapFds& maps, std::vector<SiteCount>& sites,
                              std::vector<CgroupCount>& cgroups);
// The return addresses of stack `id` of map stall_stacks (innermost first, zeros dropped).
Result<std::vector<uint64_t>> read_stack(const AttributionMapFds& maps, int32_t id);
// Forgets a cgroup's stall counts (the cgroup is gone, its counts are folded in by fragd).
void forget_cgroup(const AttributionMapFds& maps, uint64_t cgroup_id);

}  // namespace fragd
