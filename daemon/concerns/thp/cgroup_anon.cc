// SPDX-License-Identifier: Apache-2.0
#include "concerns/thp/cgroup_anon.h"

#include <fstream>
#include <sstream>

namespace fragd {
namespace {

// The values of `keys` in a memory.stat ("key value" lines); false if the file cannot be read
// or lacks one of them.
bool read_keys(const std::string& file, const std::string& a, const std::string& b, uint64_t& va, uint64_t& vb) {
  std::ifstream in(file);
  if (!in) return false;
  bool ha = false, hb = false;
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::string k;
    uint64_t v;
    if (!(ls >> k >> v)) continue;
    if (k == a) va = v, ha = true;
    if (k == b) vb = v, hb = true;
  }
  return ha && hb;
}

}  // namespace

Result<CgroupAnon> read_cgroup_anon(const std::string& v2_root, const std::string& v1_memory_root,
                                    const std::string& path) {
  const std::string rel = path == "/" ? "" : path;
  CgroupAnon c;
  const std::string v2 = v2_root + rel + "/memory.stat";
  if (!v2_root.empty() && read_keys(v2, "anon", "anon_thp", c.anon_bytes, c.huge_bytes)) return c;
  const std::string v1 = v1_memory_root + rel + "/memory.stat";
  if (!v1_memory_root.empty() && read_keys(v1, "total_rss", "total_rss_huge", c.anon_bytes, c.huge_bytes)) {
    c.v1 = true;
    return c;
  }
  return make_error("no anon and anon_thp in " + v2 + ", no total_rss and total_rss_huge in " + v1, ENOENT);
}

void cgroup_anon_metrics(const std::map<std::string, CgroupAnon>& by_cgroup, Families& out) {
  FamilyBuilder anon("fragd_thp_cgroup_anon_bytes",
                     "Anonymous memory of each cgroup the stall attribution exports (memory.stat anon; "
                     "total_rss of the v1 memory controller on a hybrid host), read every 10 s.",
                     MetricType::Gauge);
  FamilyBuilder huge("fragd_thp_cgroup_anon_huge_bytes",
                     "Of it, the part mapped by transparent huge pages (memory.stat anon_thp; v1: "
                     "total_rss_huge). The ratio to fragd_thp_cgroup_anon_bytes is the cgroup's THP coverage.",
                     MetricType::Gauge);
  for (const auto& [cg, a] : by_cgroup) {
    anon.gauge({{"cgroup", cg}}, static_cast<double>(a.anon_bytes));
    huge.gauge({{"cgroup", cg}}, static_cast<double>(a.huge_bytes));
  }
  emit(out, anon, huge);
}

}  // namespace fragd
