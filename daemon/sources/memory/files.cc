// SPDX-License-Identifier: Apache-2.0
#include "sources/memory/files.h"

#include <cstdio>
#include <set>
#include <vector>

#include "base/log.h"

namespace fragd {

bool MemoryFiles::tick(uint64_t now, std::optional<MemSnapshot>& mem) {
  // buddyinfo and zoneinfo make the snapshot: while either waits there is none (`mem` was
  // reset when it failed).
  if (!faults_.due("buddyinfo", now) || !faults_.due("zoneinfo", now)) return false;
  const bool pti_due = !mem || now - last_pti_ns_ >= pagetypeinfo_ns_;
  std::set<std::string> skip;
  for (const char* s : kSnapshotSources)
    if (!faults_.due(s, now)) skip.insert(s);
  // While the THP statistics back off after a failure they are absent, as any source's.
  const bool mthp_backing_off = skip.count("mthp") > 0;
  const bool mthp_due = !mem || now - last_mthp_ns_ >= kMthpIntervalNs;
  if (!mthp_due) skip.insert("mthp");
  // A reporting device comes with the VM's configuration: looked for at the same pace.
  const bool reporting_due = !mem || now - last_reporting_ns_ >= kMthpIntervalNs;
  if (!reporting_due) skip.insert("page_reporting");
  std::vector<SourceRead> report;
  auto m = read_snapshot(proc_root_, sys_root_, pti_due ? nullptr : &*mem, skip, report);
  for (const auto& r : report) note(r, now);
  if (!m) {
    mem.reset();
    return false;
  }
  if (pti_due) last_pti_ns_ = now;
  if (!mthp_backing_off) {
    if (mthp_due) last_mthp_ns_ = now;
    else if (mem) m->mthp = mem->mthp;
  }
  if (reporting_due) last_reporting_ns_ = now;
  else m->page_reporting = mem->page_reporting;
  mem = std::move(*m);
  return true;
}

void MemoryFiles::note(const SourceRead& r, uint64_t now) {
  if (r.failed()) {
    errors_[r.source]++;
    if (faults_.failed(r.source, r.cause, now))
      log_warn(r.message + " [" + r.cause + "]; counted in fragd_collect_errors_total{source=\"" + r.source +
               "\"}, read again at doubling intervals up to 60 s, not logged again until the cause changes or "
               "clears");
    return;
  }
  if (auto rec = faults_.ok(r.source, now)) {
    char took[32];
    std::snprintf(took, sizeof took, "%.1f s", rec->failing_ns / 1e9);
    log_info(r.source + " (" + r.path + ") readable again after " + std::to_string(rec->failures) +
             " failed reads in " + took + " (last cause " + rec->cause + ")");
  }
  // A file that parses with some lines skipped is used; its first bad line is logged once.
  const std::string lines = r.source + " lines";
  if (r.cause == "lines") {
    if (faults_.failed(lines, r.cause, now))
      log_warn(r.message + "; further skipped lines of " + r.path + " are not logged until it parses cleanly");
  } else if (faults_.ok(lines, now)) {
    log_info(r.path + " parses cleanly again");
  }
}

}  // namespace fragd
