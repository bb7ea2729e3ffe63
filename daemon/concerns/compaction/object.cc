// SPDX-License-Identifier: Apache-2.0
#include "concerns/compaction/object.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/stat.h>

#include "base/log.h"
#include "compaction.skel.h"

namespace fragd {

CompactionObject::~CompactionObject() {
  if (skel_) compaction_bpf::destroy(skel_);
}

Result<void> CompactionObject::open() {
  skel_ = compaction_bpf::open();
  if (!skel_) return sys_error("open BPF object compaction");
  return {};
}

void CompactionObject::configure(uint32_t self_tgid, const std::string& pidns_path) {
  skel_->rodata->fragd_tgid = self_tgid;
  if (struct stat ns; stat(pidns_path.c_str(), &ns) == 0) {
    skel_->rodata->fragd_pidns_dev = ns.st_dev;
    skel_->rodata->fragd_pidns_ino = ns.st_ino;
  } else {
    log_warn(sys_error("stat " + pidns_path).message +
             ": fragd's own compactions are recognised by its process id in the initial pid namespace only; "
             "in a container's pid namespace they count as trigger \"manual\" and escape compaction.cpu_budget");
  }
}

Result<void> CompactionObject::choose_programs(const btf* vmlinux) {
  const bool compaction_btf = has_btf_tracepoint(vmlinux, "mm_compaction_begin") &&
                              has_btf_tracepoint(vmlinux, "mm_compaction_end") &&
                              has_member(vmlinux, "compact_control", "direct_compaction") &&
                              has_member(vmlinux, "compact_control", "proactive_compaction");
  if (!compaction_btf) {
    log_warn("this kernel's BTF lacks the mm_compaction_begin/end BTF tracepoints or "
             "compact_control's trigger fields: compaction runs by trigger are not traced");
    bpf_program__set_autoload(skel_->progs.compaction_begin, false);
    bpf_program__set_autoload(skel_->progs.compaction_end, false);
  }
  // CMA allocations: only where the kernel has the cma tracepoints (CONFIG_CMA).
  const bool cma = has_btf_tracepoint(vmlinux, "cma_alloc_start") &&
                   has_btf_tracepoint(vmlinux, "cma_alloc_finish");
  bpf_program__set_autoload(skel_->progs.cma_alloc_start, cma);
  bpf_program__set_autoload(skel_->progs.cma_alloc_finish, cma);
  bpf_program__set_autoload(skel_->progs.cma_alloc_busy_retry,
                            cma && has_btf_tracepoint(vmlinux, "cma_alloc_busy_retry"));
  // Their maps only serve them: without the programs they would hold kernel memory for nothing.
  if (!cma)
    for (bpf_map* m : {skel_->maps.cma_open, skel_->maps.cma_areas, skel_->maps.cma_zero, skel_->maps.cma_misc})
      if (bpf_map__set_autocreate(m, false))
        return sys_error(std::string("leave out BPF map ") + bpf_map__name(m) + " of object compaction");
  return {};
}

Result<void> CompactionObject::load() {
  if (int err = compaction_bpf::load(skel_)) return load_error("compaction", -err);
  return {};
}

void CompactionObject::attach_runs(ProgramSet& set) {
  const Tracepoint runs[] = {
      {skel_->progs.compaction_begin, "compaction", "mm_compaction_begin"},
      {skel_->progs.compaction_end, "compaction", "mm_compaction_end"},
      {skel_->progs.compaction_migratepages, "compaction", "mm_compaction_migratepages"},
  };
  for (const auto& tp : runs) set.attach(tp);
}

void CompactionObject::attach_cma(ProgramSet& set) {
  const Tracepoint cma[] = {
      {skel_->progs.cma_alloc_start, "cma", "cma_alloc_start", true},
      {skel_->progs.cma_alloc_finish, "cma", "cma_alloc_finish", true},
      {skel_->progs.cma_alloc_busy_retry, "cma", "cma_alloc_busy_retry", true},
  };
  for (const auto& tp : cma) set.attach(tp);
}

Result<void> CompactionObject::register_writer(uint32_t pid) {
  const uint8_t one = 1;
  if (bpf_map_update_elem(bpf_map__fd(skel_->maps.fragd_writers), &pid, &one, BPF_ANY) != 0)
    return sys_error("register process " + std::to_string(pid) +
                     " as fragd's compaction writer (BPF map fragd_writers): its compaction would not count as "
                     "trigger \"fragd\"");
  return {};
}

void CompactionObject::unregister_writer(uint32_t pid) {
  bpf_map_delete_elem(bpf_map__fd(skel_->maps.fragd_writers), &pid);
}

const bpf_object* CompactionObject::obj() const { return skel_->obj; }
int CompactionObject::compaction_stats_fd() const { return bpf_map__fd(skel_->maps.compaction_stats); }
int CompactionObject::compaction_hist_fd() const { return bpf_map__fd(skel_->maps.compaction_hist); }
int CompactionObject::cma_areas_fd() const { return bpf_map__fd(skel_->maps.cma_areas); }
int CompactionObject::cma_misc_fd() const { return bpf_map__fd(skel_->maps.cma_misc); }

bool cma_traced(const ProgramSet& set) {
  const ProgramState* ps = set.find("cma_alloc_finish");
  return ps && ps->attached;
}

}  // namespace fragd
