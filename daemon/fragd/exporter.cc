// SPDX-License-Identifier: Apache-2.0
#include "fragd/exporter.h"

#include <algorithm>
#include <iterator>

#include "concerns/programs/metrics.h"
#include "version.h"

namespace fragd {
namespace {


void self_metrics(const SelfStats& self, Families& out) {
  FamilyBuilder e("fragd_collect_errors_total",
                  "Failed reads of a source: the BPF maps, or one /proc or sysfs source (buddyinfo, zoneinfo, "
                  "pagetypeinfo, vmstat, meminfo, hugepages, mthp, psi, nodes). A failing source is read again at a "
                  "doubling interval up to 60 s.",
                  MetricType::Counter);
  e.counter({{"source", "bpf"}}, self.collect_errors_bpf);
  for (const char* s : kSnapshotSources) {
    auto it = self.collect_errors_files.find(s);
    e.counter({{"source", s}}, it == self.collect_errors_files.end() ? 0 : it->second);
  }
  for (const auto& [source, n] : self.collect_errors_files)
    if (std::find(std::begin(kSnapshotSources), std::end(kSnapshotSources), source) == std::end(kSnapshotSources))
      e.counter({{"source", source}}, n);
  emit(out, e);
  FamilyBuilder we("fragd_kernel_write_errors_total",
                   "Writes to a kernel file the kernel refused, by file (the allow-listed path, <N> a node, <S> "
                   "a page size in kB) and errno name. The action fails and fragd backs off.",
                   MetricType::Counter);
  for (const auto& [key, n] : self.kernel_write_errors)
    we.counter({{"file", key.first}, {"error", key.second}}, n);
  emit(out, we);
  single(out, "fragd_collector_tick_seconds", "Duration of the last collector tick.",
         MetricType::Gauge, self.last_tick_seconds);
  single(out, "fragd_collector_tick_late_max_seconds",
         "Largest delay between a collector tick's due time and its start since fragd started.",
         MetricType::Gauge, self.tick_late_max_seconds);
  single(out, "fragd_collector_ticks_missed_total",
         "Collector ticks skipped because the main loop was busy for a whole tick or longer.",
         MetricType::Counter, static_cast<double>(self.ticks_missed));
  FamilyBuilder dropped("fragd_control_clients_dropped_total",
                        "Control connections fragd closed, by reason: bad_request and line_deadline (answered "
                        "with the reason), idle, output_full (its queued output would pass the cap), "
                        "write_timeout (its queued output did not drain in time).",
                        MetricType::Counter);
  for (size_t r = 0; r < self.control.dropped.size(); r++)
    dropped.counter({{"reason", kDropReasonNames[r]}}, self.control.dropped[r]);
  FamilyBuilder refused("fragd_control_clients_refused_total",
                        "Control connections refused, by reason: server_full (every slot taken, or every slot "
                        "open to users other than root), uid_limit (that user holds its share).",
                        MetricType::Counter);
  for (size_t r = 0; r < self.control.refused.size(); r++)
    refused.counter({{"reason", kRefuseReasonNames[r]}}, self.control.refused[r]);
  emit(out, dropped, refused);
}

}  // namespace

Families own_families(const SelfStats& self, const std::vector<ProgramState>& programs, const SeriesPlan& plan) {
  Families out;
  {
    FamilyBuilder b("fragd_build_info", "fragd's version and the kernel release it runs on (uname -r); always 1.",
                    MetricType::Gauge);
    b.gauge({{"version", FRAGD_VERSION}, {"kernel", self.kernel.empty() ? "unknown" : self.kernel}}, 1);
    emit(out, b);
  }
  program_metrics(programs, self.run_stats, plan, out);
  map_memory_metrics(self.map_memory, plan, out);
  self_metrics(self, out);
  return out;
}

Families process_families(const ProcessStats& p) {
  Families out;
  single(out, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", MetricType::Counter,
         p.cpu_seconds);
  single(out, "process_resident_memory_bytes", "Resident memory size in bytes.", MetricType::Gauge,
         static_cast<double>(p.resident_bytes));
  single(out, "process_virtual_memory_bytes", "Virtual memory size in bytes.", MetricType::Gauge,
         static_cast<double>(p.virtual_bytes));
  single(out, "process_open_fds", "Number of open file descriptors.", MetricType::Gauge,
         static_cast<double>(p.open_fds));
  single(out, "process_max_fds", "Maximum number of open file descriptors.", MetricType::Gauge,
         static_cast<double>(p.max_fds));
  single(out, "process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
         MetricType::Gauge, p.start_time_seconds);
  return out;
}

}  // namespace fragd
