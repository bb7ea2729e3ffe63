// SPDX-License-Identifier: Apache-2.0
#include "kernel/bpf_loader.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstring>

#include "stalls.h"
#include "stalls.skel.h"
#include "compaction.skel.h"
#include "base/log.h"
#include "kernel/memmap.h"
#include "kernel/procfs.h"
#include "pollution.h"
#include "pollution.skel.h"

namespace fragd {
namespace {

// The program libbpf last said failed to load ("prog 'NAME': failed to load"), for the error.
std::string g_failed_prog;

// Whole messages, however long: a verifier log runs to thousands of lines, and its end
// says why the program was rejected.
int libbpf_print(enum libbpf_print_level level, const char* fmt, va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  va_list copy;
  va_copy(copy, args);
  const int len = vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  if (len < 0) return 0;
  std::string msg(static_cast<size_t>(len) + 1, '\0');
  vsnprintf(msg.data(), msg.size(), fmt, args);
  msg.resize(static_cast<size_t>(len));
  while (!msg.empty() && msg.back() == '\n') msg.pop_back();
  if (auto at = msg.find("prog '"); at != std::string::npos && msg.find("failed to load") != std::string::npos) {
    const auto end = msg.find('\'', at + 6);
    if (end != std::string::npos) g_failed_prog = msg.substr(at + 6, end - at - 6);
  }
  log(level == LIBBPF_WARN ? LogLevel::Warn : LogLevel::Info, "libbpf: " + msg);
  return 0;
}

// Why an object did not load: which program, on which kernel, and what to do.
Error load_error(const char* object, int err) {
  utsname u{};
  uname(&u);
  std::string prog = g_failed_prog.empty() ? std::string("?") : g_failed_prog;
  return make_error("load BPF object " + std::string(object) + ": program " + prog +
                        " was rejected (" + strerror(err) + ") on Linux " + u.release +
                        "; the kernel's whole verifier log is above (libbpf lines). README \"Kernels\" lists the "
                        "kernels fragd is proven on: report this with that log, `fragd --version` and "
                        "`uname -r`.",
                    err);
}

// True when the kernel BTF describes the BTF tracepoint `name` (typedef btf_trace_<name>).
bool has_btf_tracepoint(const btf* vmlinux, const char* name) {
  if (!vmlinux) return false;
  const std::string t = std::string("btf_trace_") + name;
  return btf__find_by_name_kind(vmlinux, t.c_str(), BTF_KIND_TYPEDEF) > 0;
}

// True when struct `s` has member `m` in the kernel BTF.
bool has_member(const btf* vmlinux, const char* s, const char* m) {
  if (!vmlinux) return false;
  int id = btf__find_by_name_kind(vmlinux, s, BTF_KIND_STRUCT);
  if (id <= 0) return false;
  const btf_type* t = btf__type_by_id(vmlinux, id);
  const btf_member* mem = btf_members(t);
  for (int i = 0; i < btf_vlen(t); i++, mem++)
    if (strcmp(btf__name_by_offset(vmlinux, mem->name_off), m) == 0) return true;
  return false;
}

// Classic tracepoints are attached by their tracefs id: mount tracefs if nobody has.
void ensure_tracefs() {
  if (access("/sys/kernel/tracing/events", F_OK) == 0 || access("/sys/kernel/debug/tracing/events", F_OK) == 0)
    return;
  if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, nullptr) == 0) {
    log_info("mounted tracefs on /sys/kernel/tracing (needed to attach tracepoints)");
    return;
  }
  log_warn(std::string("tracefs is not mounted and mounting it on /sys/kernel/tracing failed (") + strerror(errno) +
           "): tracepoints will not attach; run: mount -t tracefs tracefs /sys/kernel/tracing");
}

// The kernel's pageblock order: /proc/pagetypeinfo's "Page block order" (root
// only), else the PMD order of /sys/kernel/mm/transparent_hugepage/hpage_pmd_size
// (pageblock_order is min(HPAGE_PMD_ORDER, MAX_PAGE_ORDER) on kernels with huge
// pages), else 9.
unsigned kernel_pageblock_order() {
  if (auto t = read_text_file("/proc/pagetypeinfo")) {
    std::vector<ZoneFree> zones;
    unsigned order = 0;
    if (parse_pagetypeinfo(*t, "/proc/pagetypeinfo", zones, nullptr, &order) && order > 0) return order;
  }
  if (auto t = read_text_file("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long bytes = strtoull(t->c_str(), &end, 10);
    const long page = sysconf(_SC_PAGESIZE);
    if (errno == 0 && end != t->c_str() && bytes > 0 && page > 0 && bytes % page == 0) {
      const unsigned long long pages = bytes / page;
      if ((pages & (pages - 1)) == 0) return std::min(static_cast<unsigned>(__builtin_ctzll(pages)), 10u);
    }
  }
  log_warn("cannot read the pageblock order from /proc/pagetypeinfo or hpage_pmd_size; assuming 9 "
           "(2 MiB pageblocks of 4 KiB pages)");
  return 9;
}

// The highest end_pfn of any zone in /proc/zoneinfo; 0 when unreadable.
uint64_t zoneinfo_max_pfn() {
  auto t = read_text_file("/proc/zoneinfo");
  if (!t) return 0;
  auto spans = parse_zone_spans(*t, "/proc/zoneinfo");
  if (!spans) return 0;
  uint64_t m = 0;
  for (const auto& z : *spans) m = std::max(m, z.end_pfn);
  return m;
}

}  // namespace

Result<void> check_bpf_privileges() {
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (syscall(SYS_capget, &hdr, data) != 0) return sys_error("capget");
  auto has = [&](int cap) { return (data[cap / 32].effective >> (cap % 32)) & 1u; };
  constexpr int kCapPerfmon = 38, kCapBpf = 39;
  if (has(CAP_SYS_ADMIN)) return {};
  std::string missing;
  if (!has(kCapBpf)) missing += "CAP_BPF";
  if (!has(kCapPerfmon)) missing += std::string(missing.empty() ? "" : " and ") + "CAP_PERFMON";
  if (missing.empty()) return {};
  return make_error("fragd needs " + missing +
                        " (or CAP_SYS_ADMIN) to load its BPF programs: run it as root, or grant "
                        "AmbientCapabilities=CAP_BPF CAP_PERFMON in its systemd unit",
                    EPERM);
}

Result<void> check_kernel_btf() {
  if (access("/sys/kernel/btf/vmlinux", R_OK) == 0) return {};
  return make_error(
      "this kernel exposes no BTF (/sys/kernel/btf/vmlinux is missing): fragd's CO-RE programs "
      "need a kernel built with CONFIG_DEBUG_INFO_BTF=y",
      ENOENT);
}

BpfPrograms::~BpfPrograms() {
  if (counting_link_) bpf_link__destroy(counting_link_);
  for (auto* l : links_) bpf_link__destroy(l);
  if (stalls_) stalls_bpf::destroy(stalls_);
  if (compaction_) compaction_bpf::destroy(compaction_);
  if (pollution_) pollution_bpf::destroy(pollution_);
}

Result<std::unique_ptr<BpfPrograms>> BpfPrograms::create(const BpfOptions& opts) {
  libbpf_set_print(libbpf_print);
  std::unique_ptr<BpfPrograms> p(new BpfPrograms());

  btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) log_warn("cannot read the kernel BTF; BTF tracepoints are off");

  // --- open
  p->stalls_ = stalls_bpf::open();
  if (!p->stalls_) return sys_error("open BPF object stalls");
  p->compaction_ = compaction_bpf::open();
  if (!p->compaction_) return sys_error("open BPF object compaction");
  p->pollution_ = pollution_bpf::open();
  if (!p->pollution_) return sys_error("open BPF object pollution");

  // --- knobs (rodata)
  p->stalls_->rodata->min_order = opts.min_order;
  p->stalls_->rodata->slow_stall_ns = opts.slow_stall_ns;
  p->stalls_->rodata->stack_interval_ns = opts.stack_interval_ns;
  if (bpf_map__set_max_entries(p->stalls_->maps.stall_stacks, opts.stall_stacks))
    return sys_error("size map stall_stacks of BPF object stalls to " + std::to_string(opts.stall_stacks) +
                     " stacks (attribution.stacks)");
  p->compaction_->rodata->fragd_tgid = opts.self_tgid;
  if (struct stat ns; stat(opts.pidns_path.c_str(), &ns) == 0) {
    p->compaction_->rodata->fragd_pidns_dev = ns.st_dev;
    p->compaction_->rodata->fragd_pidns_ino = ns.st_ino;
  } else {
    log_warn(sys_error("stat " + opts.pidns_path).message +
             ": fragd's own compactions are recognised by its process id in the initial pid namespace only; "
             "in a container's pid namespace they count as trigger \"manual\" and escape compaction.cpu_budget");
  }

  // --- pollution ledger: pageblock order and map size (one record per block of RAM at most).
  auto* fb = p->pollution_;
  p->track_pollution_ = opts.track_pollution;
  p->pageblock_order_ = opts.pageblock_order ? opts.pageblock_order : kernel_pageblock_order();
  if (p->pageblock_order_ > 20)
    return make_error("pageblock order " + std::to_string(p->pageblock_order_) + " is out of range 1..20",
                      EINVAL);
  fb->rodata->pageblock_order = p->pageblock_order_;
  uint32_t record_entries = 1;
  if (p->track_pollution_) {
    const uint64_t max_pfn = opts.max_pfn ? opts.max_pfn : zoneinfo_max_pfn();
    const LedgerSize size = pollution_ledger_size(max_pfn, p->pageblock_order_, FRAGD_POLLUTION_BLOCK_ENTRIES);
    if (max_pfn == 0)
      log_warn("cannot read the zone spans from /proc/zoneinfo: sizing the pollution ledger for " +
               std::to_string(FRAGD_POLLUTION_BLOCK_ENTRIES) + " pageblocks");
    if (size.capped)
      log_warn("memory spans " + std::to_string(size.blocks) + " pageblocks; the pollution ledger holds " +
               std::to_string(FRAGD_POLLUTION_BLOCK_ENTRIES) +
               " at most (fallbacks into more count in fragd's untracked pollution events)");
    record_entries = static_cast<uint32_t>(size.entries);
  }
  if (bpf_map__set_max_entries(fb->maps.polluted_blocks, record_entries))
    return sys_error("size the pollution ledger of BPF object pollution");

  // --- choose attach types by probing the kernel's BTF, not its version
  const bool page_alloc_btf = has_btf_tracepoint(vmlinux, "mm_page_alloc");
  bpf_program__set_autoload(p->stalls_->progs.page_alloc_btf, page_alloc_btf);
  bpf_program__set_autoload(p->stalls_->progs.page_alloc_tp, !page_alloc_btf);

  const bool compaction_btf = has_btf_tracepoint(vmlinux, "mm_compaction_begin") &&
                              has_btf_tracepoint(vmlinux, "mm_compaction_end") &&
                              has_member(vmlinux, "compact_control", "direct_compaction") &&
                              has_member(vmlinux, "compact_control", "proactive_compaction");
  if (!compaction_btf) {
    log_warn("this kernel's BTF lacks the mm_compaction_begin/end BTF tracepoints or "
             "compact_control's trigger fields: compaction runs by trigger are not traced");
    bpf_program__set_autoload(p->compaction_->progs.compaction_begin, false);
    bpf_program__set_autoload(p->compaction_->progs.compaction_end, false);
  }
  // CMA allocations: only where the kernel has the cma tracepoints (CONFIG_CMA).
  const bool cma = has_btf_tracepoint(vmlinux, "cma_alloc_start") &&
                   has_btf_tracepoint(vmlinux, "cma_alloc_finish");
  bpf_program__set_autoload(p->compaction_->progs.cma_alloc_start, cma);
  bpf_program__set_autoload(p->compaction_->progs.cma_alloc_finish, cma);
  bpf_program__set_autoload(p->compaction_->progs.cma_alloc_busy_retry,
                            cma && has_btf_tracepoint(vmlinux, "cma_alloc_busy_retry"));
  // Their maps only serve them: without the programs they would hold kernel memory for nothing.
  if (!cma)
    for (bpf_map* m : {p->compaction_->maps.cma_open, p->compaction_->maps.cma_areas, p->compaction_->maps.cma_zero,
                       p->compaction_->maps.cma_misc})
      if (bpf_map__set_autocreate(m, false))
        return sys_error(std::string("leave out BPF map ") + bpf_map__name(m) + " of object compaction");
  btf__free(vmlinux);

  // --- load
  g_failed_prog.clear();
  if (int err = stalls_bpf::load(p->stalls_)) return load_error("stalls", -err);
  if (int err = compaction_bpf::load(p->compaction_)) return load_error("compaction", -err);
  if (int err = pollution_bpf::load(p->pollution_)) return load_error("pollution", -err);

  if (auto r = p->attach_all(opts.count_allocations); !r) return r.error();

  if (p->track_pollution_) {
    bool ready = false;
    for (const auto& ps : p->programs_)
      if (ps.name == "page_alloc_extfrag") ready = ps.attached;
    if (!ready) {
      log_warn("the pollution ledger is off: page_alloc_extfrag did not attach, see above");
    } else {
      fb->bss->pollution_on = 1;
      p->pollution_on_ = true;
    }
  }
  return p;
}

bpf_program* BpfPrograms::page_alloc_prog() const {
  return bpf_program__autoload(stalls_->progs.page_alloc_btf) ? stalls_->progs.page_alloc_btf
                                                               : stalls_->progs.page_alloc_tp;
}

Result<void> BpfPrograms::set_counting(bool on) {
  if (on == counting()) return {};
  ProgramState* st = nullptr;
  for (auto& ps : programs_)
    if (ps.per_page) st = &ps;
  if (!st) return make_error("no mm_page_alloc program is loaded", ENOENT);
  if (on) {
    // The generation moves first: a stall opened from here on belongs to this period.
    __atomic_add_fetch(&stalls_->bss->count_gen, 1, __ATOMIC_SEQ_CST);
    ::bpf_link* link = bpf_program__attach(page_alloc_prog());
    if (!link) {
      const int err = errno;
      __atomic_add_fetch(&stalls_->bss->count_gen, 1, __ATOMIC_SEQ_CST);
      st->error = strerror(err);
      return make_error("attach " + st->name + " to " + st->tracepoint + ": " + st->error +
                            (err == EPERM || err == EACCES
                                 ? " (this kernel attaches it through perf_event_open, which needs CAP_PERFMON; "
                                   "fragd dropped it after start-up: use bpf.allocations: exact)"
                                 : ""),
                        err);
    }
    counting_link_ = link;
    st->attached = true;
    st->error.clear();
  } else {
    bpf_link__destroy(counting_link_);
    counting_link_ = nullptr;
    __atomic_add_fetch(&stalls_->bss->count_gen, 1, __ATOMIC_SEQ_CST);
    st->attached = false;
    st->error = "allocation counting is off";
  }
  return {};
}

void BpfPrograms::arm_wakeup() { __atomic_store_n(&stalls_->bss->wake_armed, 1u, __ATOMIC_SEQ_CST); }
int BpfPrograms::wakeups_fd() const { return bpf_map__fd(stalls_->maps.alloc_wakeups); }

Result<void> BpfPrograms::own_writer(uint32_t pid) {
  const uint8_t one = 1;
  if (bpf_map_update_elem(bpf_map__fd(compaction_->maps.fragd_writers), &pid, &one, BPF_ANY) != 0)
    return sys_error("register process " + std::to_string(pid) +
                     " as fragd's compaction writer (BPF map fragd_writers): its compaction would not count as "
                     "trigger \"fragd\"");
  // Its stalls and allocations are fragd's own, not the host's: marked in its
  // task storage, which a pidfd names in any pid namespace.
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
  if (pidfd < 0)
    return sys_error("open a pidfd for process " + std::to_string(pid) +
                     " to mark it as fragd's own (its stalls would count as the host's)");
  ::open_stall mark = {};
  mark.own = 1;
  const int rc = bpf_map_update_elem(bpf_map__fd(stalls_->maps.open_stalls), &pidfd, &mark, BPF_ANY);
  const int err = errno;
  close(pidfd);
  if (rc != 0)
    return sys_error("mark process " + std::to_string(pid) +
                     " as fragd's own (task storage open_stalls): its stalls would count as the host's", err);
  return {};
}

void BpfPrograms::disown_writer(uint32_t pid) {
  bpf_map_delete_elem(bpf_map__fd(compaction_->maps.fragd_writers), &pid);
}

std::vector<ProgramRunStats> BpfPrograms::run_stats() const {
  std::vector<ProgramRunStats> out;
  for (const auto& ps : programs_) {
    if (ps.fd < 0) continue;
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(ps.fd, &info, &len) != 0) continue;
    out.push_back({ps.name, info.id, info.run_cnt, info.run_time_ns, info.recursion_misses});
  }
  return out;
}

std::vector<MapMemory> BpfPrograms::map_memory() const {
  std::vector<MapMemory> out;
  const std::pair<const char*, const bpf_object*> objects[] = {
      {"stalls", stalls_->obj}, {"compaction", compaction_->obj}, {"pollution", pollution_->obj}};
  for (const auto& [object, obj] : objects) {
    const bpf_map* m = nullptr;
    bpf_object__for_each_map(m, obj) {
      // A map fragd did not create (the CMA maps where CMA is not traced): libbpf 1.1 gives no
      // fd, later ones a placeholder fd whose fdinfo is not a map's.
      if (!bpf_map__autocreate(m)) continue;
      const int fd = bpf_map__fd(m);
      if (fd < 0) continue;
      const std::string path = "/proc/self/fdinfo/" + std::to_string(fd);
      const auto text = read_text_file(path);
      const Result<uint64_t> bytes = text ? parse_fdinfo_memlock(*text, path) : Result<uint64_t>(text.error());
      if (!bytes) {
        if (!map_memory_warned_)
          log_warn("cannot read what BPF map " + std::string(bpf_map__name(m)) + " of object " + object +
                   " takes (" + bytes.error().message + "): fragd_bpf_map_memory_bytes is not exported");
        map_memory_warned_ = true;
        return {};
      }
      add_map_memory(out, object, bpf_map__name(m), bpf_map__is_internal(m), *bytes);
    }
  }
  return out;
}

bool BpfPrograms::attach_one(bpf_program* prog, const std::string& tracepoint, bool per_page, bool attach) {
  ProgramState st{bpf_program__name(prog), tracepoint, false, {}};
  st.per_page = per_page;
  if (!bpf_program__autoload(prog)) {
    st.error = "not loaded on this kernel";
    programs_.push_back(st);
    return false;
  }
  st.fd = bpf_program__fd(prog);
  bpf_prog_info info{};
  uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(st.fd, &info, &len) == 0) st.id = info.id;
  if (!attach) {
    st.error = "allocation counting is off";
    programs_.push_back(st);
    return false;
  }
  ::bpf_link* link = bpf_program__attach(prog);
  if (!link) {
    st.error = strerror(errno);
    log_warn("BPF program " + st.name + " did not attach to " + tracepoint + ": " + st.error +
             " (the feature it feeds is off; fragd_bpf_program_attached{program=\"" + st.name +
             "\"} is 0)");
  } else {
    (per_page ? counting_link_ : links_.emplace_back()) = link;
    st.attached = true;
  }
  programs_.push_back(st);
  return st.attached;
}

Result<void> BpfPrograms::attach_all(bool count_allocations) {
  ensure_tracefs();
  struct Item {
    bpf_program* prog;
    const char* category;
    const char* event;
    bool kernel_may_lack = false;  // a kernel without this tracepoint is not degraded (CONFIG_CMA off)
  };
  const Item items[] = {
      {page_alloc_prog(), "kmem", "mm_page_alloc"},
      {stalls_->progs.try_to_compact, "compaction", "mm_compaction_try_to_compact_pages"},
      {stalls_->progs.reclaim_begin, "vmscan", "mm_vmscan_direct_reclaim_begin"},
      {stalls_->progs.reclaim_end, "vmscan", "mm_vmscan_direct_reclaim_end"},
      {stalls_->progs.compaction_run_end, "compaction", "mm_compaction_end"},
      {compaction_->progs.compaction_begin, "compaction", "mm_compaction_begin"},
      {compaction_->progs.compaction_end, "compaction", "mm_compaction_end"},
      {compaction_->progs.compaction_migratepages, "compaction", "mm_compaction_migratepages"},
      {pollution_->progs.page_alloc_extfrag, "kmem", "mm_page_alloc_extfrag"},
      {compaction_->progs.cma_alloc_start, "cma", "cma_alloc_start", true},
      {compaction_->progs.cma_alloc_finish, "cma", "cma_alloc_finish", true},
      {compaction_->progs.cma_alloc_busy_retry, "cma", "cma_alloc_busy_retry", true},
  };
  for (const auto& it : items) {
    if (it.kernel_may_lack && !bpf_program__autoload(it.prog)) {
      absent_.push_back(bpf_program__name(it.prog));
      continue;
    }
    const bool per_page = it.prog == page_alloc_prog();
    if (per_page && count_allocations) __atomic_add_fetch(&stalls_->bss->count_gen, 1, __ATOMIC_SEQ_CST);
    const bool attached =
        attach_one(it.prog, std::string(it.category) + ":" + it.event, per_page, !per_page || count_allocations);
    // count_gen is odd exactly while the program is attached (include/stalls.h): undo the move if it is not.
    if (per_page && count_allocations && !attached) __atomic_add_fetch(&stalls_->bss->count_gen, 1, __ATOMIC_SEQ_CST);
  }
  if (attached_count() == 0)
    return make_error("no BPF program could attach to its tracepoint; see the warnings above", ENOENT);
  return {};
}

size_t BpfPrograms::attached_count() const {
  size_t n = 0;
  for (const auto& p : programs_) n += p.attached;
  return n;
}

int BpfPrograms::alloc_stats_fd() const { return bpf_map__fd(stalls_->maps.alloc_stats); }
int BpfPrograms::stall_hist_fd() const { return bpf_map__fd(stalls_->maps.stall_hist); }
int BpfPrograms::slow_stalls_fd() const { return bpf_map__fd(stalls_->maps.slow_stalls); }
int BpfPrograms::compaction_stats_fd() const { return bpf_map__fd(compaction_->maps.compaction_stats); }
int BpfPrograms::compaction_hist_fd() const { return bpf_map__fd(compaction_->maps.compaction_hist); }
int BpfPrograms::cma_areas_fd() const { return bpf_map__fd(compaction_->maps.cma_areas); }
int BpfPrograms::cma_misc_fd() const { return bpf_map__fd(compaction_->maps.cma_misc); }
bool BpfPrograms::cma_traced() const {
  for (const auto& ps : programs_)
    if (ps.name == "cma_alloc_finish") return ps.attached;
  return false;
}
int BpfPrograms::fallback_stats_fd() const { return bpf_map__fd(pollution_->maps.fallback_stats); }
int BpfPrograms::stall_sites_fd() const { return bpf_map__fd(stalls_->maps.stall_sites); }
int BpfPrograms::stall_cgroups_fd() const { return bpf_map__fd(stalls_->maps.stall_cgroups); }
int BpfPrograms::stall_stacks_fd() const { return bpf_map__fd(stalls_->maps.stall_stacks); }
int BpfPrograms::pollution_stats_fd() const { return bpf_map__fd(pollution_->maps.pollution_stats); }
int BpfPrograms::polluted_blocks_fd() const { return bpf_map__fd(pollution_->maps.polluted_blocks); }

}  // namespace fragd
