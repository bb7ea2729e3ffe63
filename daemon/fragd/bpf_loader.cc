#include "fragd/bpf_loader.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdarg>
#include <cstring>

#include "alloc.skel.h"
#include "compaction.skel.h"
#include "core/log.h"
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
  return p;
}

void BpfPrograms::attach_one(bpf_program* prog, const std::string& tracepoint) {
  ProgramState st{bpf_program__name(prog), tracepoint, false, {}};
  if (!bpf_program__autoload(prog)) {
    st.error = "not loaded on this kernel";
    programs_.push_back(st);
    return;
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
  };
  for (const auto& it : items) {
    // Of the two mm_page_alloc variants only the loaded one is listed.
    if (!bpf_program__autoload(it.prog) &&
        (it.prog == alloc_->progs.page_alloc_btf || it.prog == alloc_->progs.page_alloc_tp))
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

}  // namespace fragd
