// SPDX-License-Identifier: Apache-2.0
#include "concerns/attribution/maps.h"

#include <cerrno>
#include <string>

#include "kernel/bpf_maps.h"

namespace fragd {

Result<void> read_attribution(const AttributionMapFds& maps, std::vector<SiteCount>& sites,
                              std::vector<CgroupCount>& cgroups) {
  std::vector<stall_site_key> skeys;
  std::vector<stall_attr> vals;
  if (auto r = read_hash(maps.stall_sites, FRAGD_STALL_SITES, skeys, vals, "stall_sites"); !r) return r.error();
  sites.clear();
  for (size_t i = 0; i < skeys.size(); i++) sites.push_back({skeys[i], vals[i]});
  if (maps.failure_sites >= 0) {
    if (auto r = read_hash(maps.failure_sites, FRAGD_FAILURE_SITES, skeys, vals, "failure_sites"); !r)
      return r.error();
    for (size_t i = 0; i < skeys.size(); i++) sites.push_back({skeys[i], vals[i], true});
  }
  std::vector<uint64_t> ckeys;
  if (auto r = read_hash(maps.stall_cgroups, FRAGD_STALL_CGROUPS, ckeys, vals, "stall_cgroups"); !r)
    return r.error();
  cgroups.clear();
  for (size_t i = 0; i < ckeys.size(); i++) cgroups.push_back({ckeys[i], vals[i]});
  return {};
}

Result<std::vector<uint64_t>> read_stack(const AttributionMapFds& maps, int32_t id) {
  if (id < 0) return make_error("read BPF map stall_stacks key " + std::to_string(id), EINVAL);  // none recorded
  std::vector<uint64_t> ips(FRAGD_STACK_DEPTH, 0);
  const uint32_t key = static_cast<uint32_t>(id);
  if (auto r = map_lookup(maps.stall_stacks, &key, ips.data(), "stall_stacks", std::to_string(id)); !r)
    return r.error();
  while (!ips.empty() && ips.back() == 0) ips.pop_back();
  return ips;
}

void forget_cgroup(const AttributionMapFds& maps, uint64_t cgroup_id) {
  (void)map_delete(maps.stall_cgroups, &cgroup_id, "stall_cgroups", "cgroup " + std::to_string(cgroup_id));
}

}  // namespace fragd
