// SPDX-License-Identifier: Apache-2.0
// The compaction BPF object (bpf/compaction.bpf.c, its embedded skeleton): compaction runs by
// trigger, CMA allocations where the kernel has them, and fragd's own compaction writers.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"
#include "kernel/bpf_object.h"

struct compaction_bpf;

namespace fragd {

class CompactionObject {
 public:
  CompactionObject() = default;
  ~CompactionObject();
  CompactionObject(const CompactionObject&) = delete;
  CompactionObject& operator=(const CompactionObject&) = delete;

  Result<void> open();
  // fragd's pid as getpid() gives it and its pid namespace (identified by `pidns_path`): a
  // compaction written by this process or a registered writer is trigger "fragd", in a
  // container's pid namespace too. A namespace that cannot be read is a warning.
  void configure(uint32_t self_tgid, const std::string& pidns_path);
  // Runs by trigger need the compaction_begin/end BTF tracepoints and compact_control's trigger
  // fields; the CMA programs and their maps only where the kernel has the cma tracepoints.
  Result<void> choose_programs(const btf* vmlinux);
  Result<void> load();
  // The compaction run programs, then (attach_cma) the CMA ones: two calls, so the programs'
  // list keeps its order (the pollution ledger's program sits between them).
  void attach_runs(ProgramSet& set);
  void attach_cma(ProgramSet& set);

  // fragd's compaction writers (concerns/act/child_write.h), by pid in fragd's pid namespace: the
  // compaction runs of a registered process count as trigger "fragd". The map holds 16.
  Result<void> register_writer(uint32_t pid);
  void unregister_writer(uint32_t pid);

  const bpf_object* obj() const;
  int compaction_stats_fd() const;
  int compaction_hist_fd() const;
  int cma_areas_fd() const;
  int cma_misc_fd() const;

 private:
  compaction_bpf* skel_ = nullptr;
};

// cma_alloc_finish is attached: fragd_cma_* are read and exported (kernels with CONFIG_CMA).
bool cma_traced(const ProgramSet& set);

}  // namespace fragd
