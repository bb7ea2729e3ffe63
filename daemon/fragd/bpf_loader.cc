#include "fragd/bpf_loader.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstring>

#include "alloc.skel.h"
#include "compaction.skel.h"
#include "core/log.h"
#include "core/pageblock.h"
#include "core/procfs.h"
#include "fallback.h"
#include "fallback.skel.h"

namespace fragd {
namespace {

int libbpf_print(enum libbpf_print_level level, const char* fmt, va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  char buf[1024];
  vsnprintf(buf, sizeof(buf), fmt, args);
  size_t n = strlen(buf);
  while (n && buf[n - 1] == '\n') buf[--n] = 0;
  log(level == LIBBPF_WARN ? LogLevel::Warn : LogLevel::Info, std::string("libbpf: ") + buf);
  return 0;
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
  if (block_counts_) munmap(const_cast<uint64_t*>(block_counts_), block_counts_len_);
  for (auto* l : links_) bpf_link__destroy(l);
  if (alloc_) alloc_bpf::destroy(alloc_);
  if (compaction_) compaction_bpf::destroy(compaction_);
  if (fallback_) fallback_bpf::destroy(fallback_);
}

Result<std::unique_ptr<BpfPrograms>> BpfPrograms::create(const BpfOptions& opts) {
  libbpf_set_print(libbpf_print);
  std::unique_ptr<BpfPrograms> p(new BpfPrograms());

  btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) log_warn("cannot read the kernel BTF; BTF tracepoints are off");

  // --- open
  p->alloc_ = alloc_bpf::open();
  if (!p->alloc_) return sys_error("open BPF object alloc");
  p->compaction_ = compaction_bpf::open();
  if (!p->compaction_) return sys_error("open BPF object compaction");
  p->fallback_ = fallback_bpf::open();
  if (!p->fallback_) return sys_error("open BPF object fallback");

  // --- knobs (rodata)
  p->alloc_->rodata->min_order = opts.min_order;
  p->alloc_->rodata->slow_stall_ns = opts.slow_stall_ns;
  p->compaction_->rodata->fragd_tgid = opts.self_tgid;

  // --- pollution tracking: pageblock order and map sizes. The per-block
  // counts cover every block up to the highest zone end (8 bytes per block).
  auto* fb = p->fallback_;
  p->track_pollution_ = opts.track_pollution;
  p->pageblock_order_ = opts.pageblock_order ? opts.pageblock_order : kernel_pageblock_order();
  if (p->pageblock_order_ > 20)
    return make_error("pageblock order " + std::to_string(p->pageblock_order_) + " is out of range 1..20",
                      EINVAL);
  fb->rodata->pageblock_order = p->pageblock_order_;
  uint32_t count_entries = 1, record_entries = 1, page_entries = 1;
  if (p->track_pollution_) {
    const uint64_t max_pfn = opts.max_pfn ? opts.max_pfn : zoneinfo_max_pfn();
    uint64_t blocks = FRAGD_POLLUTION_MAX_BLOCKS;
    if (max_pfn == 0)
      log_warn("cannot read the zone spans from /proc/zoneinfo: sizing pollution tracking for " +
               std::to_string(FRAGD_POLLUTION_MAX_BLOCKS) + " pageblocks (" +
               std::to_string(FRAGD_POLLUTION_MAX_BLOCKS / 128) + " KiB of kernel memory)");
    else
      blocks = ((max_pfn - 1) >> p->pageblock_order_) + 1;
    if (blocks > FRAGD_POLLUTION_MAX_BLOCKS) {
      log_warn("memory spans " + std::to_string(blocks) + " pageblocks; pollution is tracked in the first " +
               std::to_string(FRAGD_POLLUTION_MAX_BLOCKS) +
               " only (fallbacks beyond them count in fragd's untracked pollution events)");
      blocks = FRAGD_POLLUTION_MAX_BLOCKS;
    }
    count_entries = static_cast<uint32_t>(blocks);
    record_entries = std::min<uint32_t>(count_entries, FRAGD_POLLUTION_BLOCK_ENTRIES);
    page_entries = opts.pollution_max_allocs ? opts.pollution_max_allocs : FRAGD_POLLUTION_PAGE_ENTRIES;
  } else {
    // Nothing records or releases: the release programs stay out of the free path.
    bpf_program__set_autoload(fb->progs.page_free, false);
    bpf_program__set_autoload(fb->progs.page_pcpu_drain, false);
  }
  if (bpf_map__set_max_entries(fb->maps.block_pollution, count_entries) ||
      bpf_map__set_max_entries(fb->maps.polluted_blocks, record_entries) ||
      bpf_map__set_max_entries(fb->maps.pollution_pages, page_entries))
    return sys_error("size the pollution maps of BPF object fallback");
  p->block_count_entries_ = count_entries;

  // --- choose attach types by probing the kernel's BTF, not its version
  const bool page_alloc_btf = has_btf_tracepoint(vmlinux, "mm_page_alloc");
  bpf_program__set_autoload(p->alloc_->progs.page_alloc_btf, page_alloc_btf);
  bpf_program__set_autoload(p->alloc_->progs.page_alloc_tp, !page_alloc_btf);

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
  btf__free(vmlinux);

  // --- load
  if (int err = alloc_bpf::load(p->alloc_))
    return make_error("load BPF object alloc (verifier or CO-RE relocation failed, see libbpf "
                      "messages above): " + std::string(strerror(-err)), -err);
  if (int err = compaction_bpf::load(p->compaction_))
    return make_error("load BPF object compaction: " + std::string(strerror(-err)), -err);
  if (int err = fallback_bpf::load(p->fallback_))
    return make_error("load BPF object fallback: " + std::string(strerror(-err)), -err);

  if (auto r = p->attach_all(); !r) return r.error();

  // Recording starts once every program it needs is attached: a recorded page
  // that nothing would release would stay counted for good.
  if (p->track_pollution_) {
    bool ready = true;
    for (const auto& ps : p->programs_)
      if ((ps.name == "page_alloc_extfrag" || ps.name == "page_free" || ps.name == "page_pcpu_drain") &&
          !ps.attached)
        ready = false;
    if (!ready) {
      log_warn("pollution tracking is off: a program it needs (page_alloc_extfrag, page_free, "
               "page_pcpu_drain) did not attach, see above");
    } else if (auto r = p->map_block_counts(); !r) {
      log_warn(r.error().message + "; pollution tracking is off");
    } else {
      fb->bss->pollution_on = 1;
      p->pollution_on_ = true;
    }
  }
  return p;
}

Result<void> BpfPrograms::map_block_counts() {
  const long page = sysconf(_SC_PAGESIZE);
  const size_t bytes = size_t{block_count_entries_} * sizeof(uint64_t);
  const size_t len = (bytes + page - 1) / page * page;
  void* m = mmap(nullptr, len, PROT_READ, MAP_SHARED, bpf_map__fd(fallback_->maps.block_pollution), 0);
  if (m == MAP_FAILED)
    return sys_error("mmap BPF map block_pollution (" + std::to_string(len) +
                     " bytes; needs a kernel with mmapable array maps, 5.5+)");
  block_counts_ = static_cast<const volatile uint64_t*>(m);
  block_counts_len_ = len;
  return {};
}

bool BpfPrograms::attach_one(bpf_program* prog, const std::string& tracepoint) {
  ProgramState st{bpf_program__name(prog), tracepoint, false, {}};
  if (!bpf_program__autoload(prog)) {
    st.error = "not loaded on this kernel";
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
    links_.push_back(link);
    st.attached = true;
  }
  programs_.push_back(st);
  return st.attached;
}

Result<void> BpfPrograms::attach_all() {
  ensure_tracefs();
  struct Item {
    bpf_program* prog;
    const char* category;
    const char* event;
  };
  const Item items[] = {
      {alloc_->progs.page_alloc_btf, "kmem", "mm_page_alloc"},
      {alloc_->progs.page_alloc_tp, "kmem", "mm_page_alloc"},
      {alloc_->progs.try_to_compact, "compaction", "mm_compaction_try_to_compact_pages"},
      {alloc_->progs.reclaim_begin, "vmscan", "mm_vmscan_direct_reclaim_begin"},
      {alloc_->progs.reclaim_end, "vmscan", "mm_vmscan_direct_reclaim_end"},
      {compaction_->progs.compaction_begin, "compaction", "mm_compaction_begin"},
      {compaction_->progs.compaction_end, "compaction", "mm_compaction_end"},
      {compaction_->progs.compaction_migratepages, "compaction", "mm_compaction_migratepages"},
      {fallback_->progs.page_alloc_extfrag, "kmem", "mm_page_alloc_extfrag"},
      {fallback_->progs.page_free, "kmem", "mm_page_free"},
      {fallback_->progs.page_pcpu_drain, "kmem", "mm_page_pcpu_drain"},
  };
  for (const auto& it : items) {
    // Of the two mm_page_alloc variants only the loaded one is listed, and the
    // release programs only when pollution tracking is on.
    if (!bpf_program__autoload(it.prog) &&
        (it.prog == alloc_->progs.page_alloc_btf || it.prog == alloc_->progs.page_alloc_tp ||
         it.prog == fallback_->progs.page_free || it.prog == fallback_->progs.page_pcpu_drain))
      continue;
    attach_one(it.prog, std::string(it.category) + ":" + it.event);
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

int BpfPrograms::alloc_stats_fd() const { return bpf_map__fd(alloc_->maps.alloc_stats); }
int BpfPrograms::stall_hist_fd() const { return bpf_map__fd(alloc_->maps.stall_hist); }
int BpfPrograms::slow_stalls_fd() const { return bpf_map__fd(alloc_->maps.slow_stalls); }
int BpfPrograms::compaction_stats_fd() const { return bpf_map__fd(compaction_->maps.compaction_stats); }
int BpfPrograms::compaction_hist_fd() const { return bpf_map__fd(compaction_->maps.compaction_hist); }
int BpfPrograms::fallback_stats_fd() const { return bpf_map__fd(fallback_->maps.fallback_stats); }
int BpfPrograms::pollution_stats_fd() const { return bpf_map__fd(fallback_->maps.pollution_stats); }
int BpfPrograms::pollution_pages_fd() const { return bpf_map__fd(fallback_->maps.pollution_pages); }
int BpfPrograms::polluted_blocks_fd() const { return bpf_map__fd(fallback_->maps.polluted_blocks); }
int BpfPrograms::block_pollution_fd() const { return bpf_map__fd(fallback_->maps.block_pollution); }

std::vector<int> BpfPrograms::pollution_prog_fds() const {
  std::vector<int> fds;
  for (bpf_program* prog : {fallback_->progs.page_alloc_extfrag, fallback_->progs.page_free,
                            fallback_->progs.page_pcpu_drain})
    if (bpf_program__autoload(prog) && bpf_program__fd(prog) >= 0) fds.push_back(bpf_program__fd(prog));
  return fds;
}

}  // namespace fragd
