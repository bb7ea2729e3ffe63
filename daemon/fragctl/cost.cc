// SPDX-License-Identifier: Apache-2.0
#include "fragctl/cost.h"

#include <vector>

#include "kernel/bpf_stats.h"

namespace fragd::ctl {

Result<nlohmann::json> measure_cost(const StatusReply& status, double seconds, int interrupt_fd) {
  if (!status.programs) return make_error("fragd's status answer has no program list (an older fragd?)");
  std::vector<const ProgramStatus*> progs;
  std::vector<uint32_t> ids;
  for (const ProgramStatus& p : *status.programs)
    if (p.id.value_or(0)) {
      progs.push_back(&p);
      ids.push_back(static_cast<uint32_t>(*p.id));
    }
  if (progs.empty()) return make_error("fragd reports no loaded BPF program ids");
  auto w = measure_run_stats(ids, seconds, interrupt_fd);
  if (!w) return make_error(w.error().message + " (fragctl cost)", w.error().err);
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < progs.size(); ++i) {
    const WindowRunStats& r = w->programs[i];
    if (!r.read) continue;  // unloaded during the window
    list.push_back({{"name", progs[i]->name.value_or("?")},
                    {"tracepoint", progs[i]->tracepoint.value_or("?")},
                    {"id", r.id},
                    {"attached", progs[i]->attached.value_or(false)},
                    {"runs", r.runs},
                    {"run_ns", r.run_ns},
                    {"recursion_misses", r.recursion_misses}});
  }
  nlohmann::json out;
  out["seconds"] = w->seconds;
  out["page_faults"] = w->page_faults ? nlohmann::json(*w->page_faults) : nlohmann::json(nullptr);
  out["programs"] = std::move(list);
  return out;
}

}  // namespace fragd::ctl
