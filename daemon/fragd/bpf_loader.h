// Loads and attaches fragd's three BPF objects (embedded skeletons).
// open -> set rodata -> load -> attach are separate steps, so every failure
// says which step failed, on which program, and what to do.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"

struct alloc_bpf;
struct compaction_bpf;
struct fallback_bpf;
struct bpf_program;
struct bpf_link;

namespace fragd {

struct ProgramState {
  std::string name;      // program name, the `program` label
  std::string tracepoint;
  bool attached = false;
  std::string error;     // why not, when not attached
};

struct BpfOptions {
  uint32_t min_order = 1;
  uint64_t slow_stall_ns = 10'000'000;
  uint32_t self_tgid = 0;
};

class BpfPrograms {
 public:
  ~BpfPrograms();
  BpfPrograms(const BpfPrograms&) = delete;
  BpfPrograms& operator=(const BpfPrograms&) = delete;

  // Opens, configures, loads and attaches everything. A program whose
  // tracepoint is missing is left detached with a warning; an object that
  // cannot load at all is an error.
  static Result<std::unique_ptr<BpfPrograms>> create(const BpfOptions& opts);

  const std::vector<ProgramState>& programs() const { return programs_; }
  size_t attached_count() const;

  int alloc_stats_fd() const;
  int stall_hist_fd() const;
  int slow_stalls_fd() const;
  int compaction_stats_fd() const;
  int compaction_hist_fd() const;
  int fallback_stats_fd() const;

 private:
  BpfPrograms() = default;
  Result<void> attach_all();
  void attach_one(bpf_program* prog, const std::string& tracepoint);

  alloc_bpf* alloc_ = nullptr;
  compaction_bpf* compaction_ = nullptr;
  fallback_bpf* fallback_ = nullptr;
  std::vector<::bpf_link*> links_;
  std::vector<ProgramState> programs_;
};

// Checks for CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN); the message names what is missing.
Result<void> check_bpf_privileges();

// Checks the kernel exposes BTF (CO-RE needs it).
Result<void> check_kernel_btf();

}  // namespace fragd
