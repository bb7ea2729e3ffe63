// SPDX-License-Identifier: Apache-2.0
#include "concerns/memory/files.h"

#include <cstdio>
#include <set>
#include <vector>

#include "base/log.h"

namespace fragd {

bool MemoryFiles::due(const SourceSpec& s, uint64_t now) const {
  const uint64_t interval = s.interval_ns == kPagetypeinfoInterval ? pagetypeinfo_ns_ : s.interval_ns;
  const auto it = last_read_ns_.find(s.name);
  return it == last_read_ns_.end() || now - it->second >= interval;
}

bool MemoryFiles::tick(uint64_t now, std::optional<MemSnapshot>& mem) {
  // buddyinfo and zoneinfo make the snapshot: while either waits there is none (`mem` was
  // reset when it failed).
  if (!faults_.due("buddyinfo", now) || !faults_.due("zoneinfo", now)) return false;
  // A source backing off after a failure is absent; one not due is carried from the last
  // snapshot; the first snapshot reads them all.
  SourcePlan plan;
  for (const SourceSpec& s : kSourceSpecs) {
    if (s.required) continue;
    if (!faults_.due(s.name, now)) plan.skip.insert(s.name);
    else if (mem && (s.period == SourcePeriod::kScrape || !due(s, now))) plan.carry.insert(s.name);
  }
  std::vector<SourceRead> report;
  auto m = read_snapshot(proc_root_, sys_root_, mem ? &*mem : nullptr, plan, report);
  for (const auto& r : report) note(r, now);
  if (!m) {
    mem.reset();
    return false;
  }
  for (const SourceSpec& s : kSourceSpecs)
    if (!plan.skip.count(s.name) && !plan.carry.count(s.name)) last_read_ns_[s.name] = now;
  mem = std::move(*m);
  return true;
}

void MemoryFiles::scrape(uint64_t now, MemSnapshot& mem) {
  std::set<std::string> names;
  for (const SourceSpec& s : kSourceSpecs)
    if (s.period == SourcePeriod::kScrape && faults_.due(s.name, now) && due(s, now)) names.insert(s.name);
  if (names.empty()) return;
  std::vector<SourceRead> report;
  reread_sources(proc_root_, sys_root_, names, mem, report);
  for (const auto& r : report) note(r, now);
  for (const auto& n : names) last_read_ns_[n] = now;
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
