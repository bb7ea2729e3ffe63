// SPDX-License-Identifier: Apache-2.0
#include "kernel/bpf_object.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstring>

#include "base/log.h"
#include "kernel/memmap.h"
#include "kernel/page_size.h"
#include "kernel/procfs.h"

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

}  // namespace

void set_libbpf_log() { libbpf_set_print(libbpf_print); }

void forget_failed_program() { g_failed_prog.clear(); }

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

bool has_btf_tracepoint(const btf* vmlinux, const char* name) {
  if (!vmlinux) return false;
  const std::string t = std::string("btf_trace_") + name;
  return btf__find_by_name_kind(vmlinux, t.c_str(), BTF_KIND_TYPEDEF) > 0;
}

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

// pageblock_order is min(HPAGE_PMD_ORDER, MAX_PAGE_ORDER) on kernels with huge pages: the PMD
// size gives it where /proc/pagetypeinfo (root only) cannot be read, held to the highest order
// /proc/buddyinfo lists (MAX_PAGE_ORDER: 10 on x86-64, 13 on arm64 with 64 KiB pages).
std::optional<unsigned> pageblock_order_from(const std::string* pagetypeinfo, const std::string* pmd_size,
                                             const std::string* buddyinfo, uint64_t page_bytes) {
  if (pagetypeinfo) {
    std::vector<ZoneFree> zones;
    unsigned order = 0;
    if (parse_pagetypeinfo(*pagetypeinfo, "/proc/pagetypeinfo", zones, nullptr, &order) && order > 0) return order;
  }
  if (!pmd_size || page_bytes == 0) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const unsigned long long bytes = strtoull(pmd_size->c_str(), &end, 10);
  if (errno != 0 || end == pmd_size->c_str() || bytes == 0 || bytes % page_bytes != 0) return std::nullopt;
  const unsigned long long pages = bytes / page_bytes;
  if ((pages & (pages - 1)) != 0) return std::nullopt;
  unsigned max_order = 10;  // x86-64's MAX_PAGE_ORDER, where buddyinfo says nothing
  if (buddyinfo) {
    if (auto zones = parse_buddyinfo(*buddyinfo, "/proc/buddyinfo")) {
      size_t orders = 0;
      for (const auto& z : *zones) orders = std::max(orders, z.free_blocks.size());
      if (orders > 0) max_order = static_cast<unsigned>(orders - 1);
    }
  }
  return std::min(static_cast<unsigned>(__builtin_ctzll(pages)), max_order);
}

unsigned kernel_pageblock_order() {
  const auto pti = read_text_file("/proc/pagetypeinfo");
  const auto pmd = read_text_file("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
  const auto buddy = read_text_file("/proc/buddyinfo");
  if (auto order = pageblock_order_from(pti ? &*pti : nullptr, pmd ? &*pmd : nullptr, buddy ? &*buddy : nullptr,
                                        kernel_page_bytes()))
    return *order;
  log_warn("cannot read the pageblock order from /proc/pagetypeinfo or hpage_pmd_size; assuming 9 "
           "(2 MiB pageblocks of 4 KiB pages)");
  return 9;
}

uint64_t zoneinfo_max_pfn() {
  auto t = read_text_file("/proc/zoneinfo");
  if (!t) return 0;
  auto spans = parse_zone_spans(*t, "/proc/zoneinfo");
  if (!spans) return 0;
  uint64_t m = 0;
  for (const auto& z : *spans) m = std::max(m, z.end_pfn);
  return m;
}

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

ProgramSet::~ProgramSet() {
  for (auto* l : links_) bpf_link__destroy(l);
}

bool ProgramSet::attach(const Tracepoint& tp) {
  if (tp.kernel_may_lack && !bpf_program__autoload(tp.prog)) {
    absent_.push_back(bpf_program__name(tp.prog));
    return false;
  }
  return attach_one(tp.prog, std::string(tp.category) + ":" + tp.event, false, nullptr, nullptr);
}

bool ProgramSet::attach_per_page(const Tracepoint& tp, bool attach, const char* off, ::bpf_link** link) {
  return attach_one(tp.prog, std::string(tp.category) + ":" + tp.event, true, attach ? nullptr : off, link);
}

bool ProgramSet::attach_one(bpf_program* prog, const std::string& tracepoint, bool per_page, const char* off,
                            ::bpf_link** link) {
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
  if (off) {
    st.error = off;
    programs_.push_back(st);
    return false;
  }
  ::bpf_link* l = bpf_program__attach(prog);
  if (!l) {
    st.error = strerror(errno);
    log_warn("BPF program " + st.name + " did not attach to " + tracepoint + ": " + st.error +
             " (the feature it feeds is off; fragd_bpf_program_attached{program=\"" + st.name +
             "\"} is 0)");
  } else {
    (link ? *link : links_.emplace_back()) = l;
    st.attached = true;
  }
  programs_.push_back(st);
  return st.attached;
}

size_t ProgramSet::attached_count() const {
  size_t n = 0;
  for (const auto& p : programs_) n += p.attached;
  return n;
}

const ProgramState* ProgramSet::find(std::string_view name) const {
  for (const auto& ps : programs_)
    if (ps.name == name) return &ps;
  return nullptr;
}

ProgramState* ProgramSet::per_page() {
  ProgramState* st = nullptr;
  for (auto& ps : programs_)
    if (ps.per_page) st = &ps;
  return st;
}

std::vector<ProgramRunStats> ProgramSet::run_stats() const {
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

bool ProgramSet::add_map_memory_of(const char* object, const bpf_object* obj, std::vector<MapMemory>& out) const {
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
      return false;
    }
    add_map_memory(out, object, bpf_map__name(m), bpf_map__is_internal(m), *bytes);
  }
  return true;
}

}  // namespace fragd
