// SPDX-License-Identifier: Apache-2.0
// The mechanism of loading and attaching BPF objects, knowing none of them: libbpf's log,
// why a load failed, what the kernel's BTF offers, tracefs, the figures that size maps, and
// the set of programs attached with their states and links. Each concern's object
// (concerns/<concern>/object.h) sets itself up with these; concerns/programs composes them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "kernel/bpf_memory.h"

struct bpf_object;
struct bpf_program;
struct bpf_link;
struct btf;

namespace fragd {

struct ProgramState {
  std::string name;      // program name, the `program` label
  std::string tracepoint;
  bool attached = false;
  std::string error;     // why not, when not attached
  uint32_t id = 0;       // kernel program id (bpftool prog show id N), 0 when not loaded
  int fd = -1;           // program fd, -1 when not loaded
  // The per-page allocation counter: attached only while counting is on (bpf.allocations).
  bool per_page = false;
};

// Kernel run statistics of one program (bpf_prog_info).
struct ProgramRunStats {
  std::string name;
  uint32_t id = 0;
  uint64_t run_cnt = 0;      // runs counted while BPF run-time stats were on
  uint64_t run_time_ns = 0;  // their total run time
  uint64_t recursion_misses = 0;
};

// Routes libbpf's messages into fragd's log, whole (a verifier log's end says why a program
// was rejected), and remembers the program libbpf last said failed to load, for load_error.
void set_libbpf_log();
// Forgets that program: before loading, so an error names a program of this load.
void forget_failed_program();
// Why object `object` did not load (`err` positive): which program, on which kernel, and what to do.
Error load_error(const char* object, int err);

// True when the kernel BTF describes the BTF tracepoint `name` (typedef btf_trace_<name>).
// The attach type is chosen by probing the kernel's BTF, not its version.
bool has_btf_tracepoint(const btf* vmlinux, const char* name);
// True when struct `s` has member `m` in the kernel BTF.
bool has_member(const btf* vmlinux, const char* s, const char* m);
// Classic tracepoints are attached by their tracefs id: mounts tracefs if nobody has.
void ensure_tracefs();

// The kernel's pageblock order: /proc/pagetypeinfo's "Page block order" (root only), else the
// PMD order of /sys/kernel/mm/transparent_hugepage/hpage_pmd_size held to the highest order of
// /proc/buddyinfo (MAX_PAGE_ORDER), else 9 (with a warning).
unsigned kernel_pageblock_order();
// The same from the files' texts (nullptr where one is unreadable) and the page size; nullopt
// when neither pagetypeinfo nor the PMD size gives it.
std::optional<unsigned> pageblock_order_from(const std::string* pagetypeinfo, const std::string* pmd_size,
                                             const std::string* buddyinfo, uint64_t page_bytes);
// The highest end_pfn of any zone in /proc/zoneinfo; 0 when unreadable.
uint64_t zoneinfo_max_pfn();

// Checks for CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN); the message names what is missing.
Result<void> check_bpf_privileges();

// Checks the kernel exposes BTF (CO-RE needs it).
Result<void> check_kernel_btf();

// A program and the tracepoint it attaches to.
struct Tracepoint {
  bpf_program* prog = nullptr;
  const char* category = "";  // kmem, compaction, vmscan, cma
  const char* event = "";
  bool kernel_may_lack = false;  // a kernel without this tracepoint is not degraded (CONFIG_CMA off)
};

// The programs of every object, in the order they were attached (the `program` series and the
// status answer list them so), with their links. Destroying the set detaches them; it must go
// before the objects that hold the programs.
class ProgramSet {
 public:
  ProgramSet() = default;
  ~ProgramSet();
  ProgramSet(const ProgramSet&) = delete;
  ProgramSet& operator=(const ProgramSet&) = delete;

  // Attaches tp's program and records its state; a program the kernel may lack and that is
  // not loaded goes to absent() instead. A missing tracepoint is a warning, not an error.
  // True when it attached.
  bool attach(const Tracepoint& tp);
  // The per-page program (ProgramState::per_page), attached and detached at will: attached
  // now when `attach`, else recorded loaded with `off` as its error. Its link goes to `*link`,
  // which the caller destroys.
  bool attach_per_page(const Tracepoint& tp, bool attach, const char* off, ::bpf_link** link);

  const std::vector<ProgramState>& programs() const { return programs_; }
  // Programs left out because this kernel lacks their tracepoints: not in programs().
  const std::vector<std::string>& absent() const { return absent_; }
  size_t attached_count() const;
  // The state of program `name`, nullptr when it is not in programs().
  const ProgramState* find(std::string_view name) const;
  // The per-page program's state, nullptr when there is none.
  ProgramState* per_page();

  // Run statistics of every loaded program.
  std::vector<ProgramRunStats> run_stats() const;
  // Adds what each map of `obj` takes (its fdinfo's memlock; an object's global variables as
  // one entry) to `out`, as the maps of `object`. Maps not created are left out. False, with
  // one warning in the set's life, when an fdinfo cannot be read: the caller drops the partial
  // sum, which would understate the total.
  bool add_map_memory_of(const char* object, const bpf_object* obj, std::vector<MapMemory>& out) const;

 private:
  bool attach_one(bpf_program* prog, const std::string& tracepoint, bool per_page, const char* off,
                  ::bpf_link** link);

  std::vector<::bpf_link*> links_;
  std::vector<ProgramState> programs_;
  std::vector<std::string> absent_;
  mutable bool map_memory_warned_ = false;
};

}  // namespace fragd
