// SPDX-License-Identifier: Apache-2.0
// How much of a cgroup's anonymous memory is mapped huge: memory.stat's anon and anon_thp
// (cgroup v2), or total_rss and total_rss_huge of the v1 memory controller on a hybrid
// host, where the v2 hierarchy has no memory controller. Read for the cgroups the stall
// attribution exports (at most attribution.top_cgroups of them), every 10 s. Families
// fragd_thp_cgroup_anon_bytes{cgroup} and fragd_thp_cgroup_anon_huge_bytes{cgroup}.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "base/family.h"
#include "base/result.h"

namespace fragd {

struct CgroupAnon {
  uint64_t anon_bytes = 0;  // anonymous memory in use
  uint64_t huge_bytes = 0;  // of it, mapped by transparent huge pages
  bool v1 = false;          // from the v1 memory controller
};

// The cgroup at `path` ("/a/b"): v2_root + path + "/memory.stat" when it has anon_thp, else
// v1_memory_root + path + "/memory.stat" (total_rss, total_rss_huge). An error names both files.
Result<CgroupAnon> read_cgroup_anon(const std::string& v2_root, const std::string& v1_memory_root,
                                    const std::string& path);

void cgroup_anon_metrics(const std::map<std::string, CgroupAnon>& by_cgroup, Families& out);

}  // namespace fragd
