// SPDX-License-Identifier: Apache-2.0
#include "fragd/concerns/attribution.h"

#include "fragd/settings.h"
#include "fragd/views.h"

namespace fragd {

AttributionConcern::AttributionConcern(Shared& sh) : sh_(sh), rounds_(sh.cfg.top_cgroups, sh.cfg.top_callsites) {
  const KallsymsFile ks = open_kallsyms(sh_.cfg);
  if (!ks.warning.empty()) log_warn(ks.warning);
  symbols_ = std::make_unique<KernelSymbols>(ks.fd, ks.path);
  cgroup_paths_ = std::make_unique<CgroupPaths>(sh_.cfg.sys_root);
}

void AttributionConcern::tick(uint64_t now) {
  if (!sh_.last_bpf) return;
  BpfReader& r = *sh_.reader;
  rounds_.tick(
      now, sh_.last_bpf->alloc,
      {[&r](auto& sites, auto& cgroups) { return r.read_attribution(sites, cgroups); },
       [&r](int32_t id) { return r.read_stack(id); }, [&r](uint64_t id) { r.forget_cgroup(id); }},
      symbols_.get(), *cgroup_paths_,
      [this](const std::string& path) {
        return read_cgroup_anon(cgroup_paths_->root(), sh_.cfg.sys_root + "/fs/cgroup/memory", path);
      },
      {[this](const std::string& k, const std::string& m) { sh_.warn.once(k, m); },
       [this](const std::string& k, const std::string& m) { sh_.warn.cleared(k, m); }});
}

void AttributionConcern::metrics(ExportFrame& f) {
  f.attribution = rounds_.view();
  f.cgroup_anon = rounds_.cgroup_anon();
}

void AttributionConcern::reload() { rounds_.set_limits(sh_.cfg.top_cgroups, sh_.cfg.top_callsites); }

TopReply AttributionConcern::top() const {
  return top_reply(rounds_.view(), sh_.last_mem ? &*sh_.last_mem : nullptr, now_ns() - sh_.start_ns);
}

}  // namespace fragd
