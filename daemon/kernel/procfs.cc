// SPDX-License-Identifier: Apache-2.0
#include "kernel/procfs.h"

#include <linux/magic.h>
#include <sys/vfs.h>

#include <unordered_map>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <optional>
#include <utility>

#include "base/text.h"
#include "kernel/source_faults.h"

namespace fragd {

// ---------------------------------------------------------------------------
// File access.

namespace {

// The procfs and sysfs files a thread reads again and again (the collector reads a dozen every
// tick): kept open and read again from offset 0, which makes the kernel generate them anew, so
// a tick pays no path walk, open or close. Files elsewhere (recorded fixtures, a --path.procfs
// copy) are opened at each read: a file replaced between reads is then seen.
class OpenFiles {
 public:
  ~OpenFiles() {
    for (auto& [_, fd] : fds_) ::close(fd);
  }
  // -1 when the file is not kept open (not procfs or sysfs, or too many kept already).
  int fd_for(const std::string& path, int fd) {
    if (fds_.size() >= kMaxKept) return -1;
    struct statfs st;
    if (::fstatfs(fd, &st) != 0 || (st.f_type != PROC_SUPER_MAGIC && st.f_type != SYSFS_MAGIC)) return -1;
    fds_.emplace(path, fd);
    return fd;
  }
  int find(const std::string& path) const {
    auto it = fds_.find(path);
    return it == fds_.end() ? -1 : it->second;
  }
  void forget(const std::string& path) {
    if (auto it = fds_.find(path); it != fds_.end()) {
      ::close(it->second);
      fds_.erase(it);
    }
  }

 private:
  static constexpr size_t kMaxKept = 256;  // the per-size THP statistics alone are ~150 files
  std::unordered_map<std::string, int> fds_;
};

thread_local OpenFiles open_files;

}  // namespace

Result<std::string> read_text_file(const std::string& path) {
  if (const int kept = open_files.find(path); kept >= 0) {
    if (auto r = read_text_fd(kept, path)) return r;
    // A file that went away (a hugepage size or node removed, procfs remounted): open anew.
    open_files.forget(path);
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return sys_error("cannot open " + path);
  auto r = read_text_fd(fd, path);
  if (!r || open_files.fd_for(path, fd) < 0) ::close(fd);
  return r;
}

Result<std::string> read_text_fd(int fd, const std::string& path) {
  // Kernel text files here are a few KB; refuse anything absurd rather than
  // eat memory if pointed at the wrong file.
  constexpr size_t kMaxBytes = 64u << 20;
  if (::lseek(fd, 0, SEEK_SET) < 0) return sys_error("cannot rewind " + path);
  std::string data;
  char buf[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return sys_error("cannot read " + path);
    }
    if (n == 0) break;
    if (data.size() + static_cast<size_t>(n) > kMaxBytes)
      return make_error(path + ": larger than " + std::to_string(kMaxBytes >> 20) +
                            " MiB, not a kernel text file; check the path",
                        EFBIG);
    data.append(buf, static_cast<size_t>(n));
  }
  return data;
}

namespace {

namespace fs = std::filesystem;

std::string join(const std::string& root, std::string_view rel) {
  if (root.empty()) return std::string(rel);
  if (root.back() == '/') return root + std::string(rel);
  return root + "/" + std::string(rel);
}

// A one-line sysfs or procfs file without its trailing newline and blanks; nothing when unreadable.
std::optional<std::string> read_line_file(const std::string& path) {
  auto t = read_text_file(path);
  if (!t) return std::nullopt;
  std::string s = std::move(*t);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// The first pool file that failed, and why (an errno name or "format").
struct PoolFault {
  std::string path, cause, message;
};

// A sysfs file holding one number.
std::optional<uint64_t> read_number_file(const std::string& path,
                                         std::vector<std::string>* warnings, bool required,
                                         PoolFault* fault) {
  auto text = read_text_file(path);
  if (!text) {
    if (required && warnings) warnings->push_back(text.error().message);
    if (required && fault && fault->cause.empty())
      *fault = {path, errno_name(text.error().err), text.error().message};
    return std::nullopt;
  }
  const auto toks = tokenize(*text, true);
  uint64_t v = 0;
  if (toks.size() != 1 || !parse_u64(toks[0], v)) {
    const std::string msg = path + ":1: expected one number, got " + quote(*text);
    if (warnings) warnings->push_back(msg);
    if (fault && fault->cause.empty()) *fault = {path, "format", msg};
    return std::nullopt;
  }
  return v;
}

// Sorted subdirectory names of `dir` matching `prefix` + digits + `suffix`,
// with the number.
std::vector<std::pair<uint64_t, std::string>> numbered_dirs(const std::string& dir,
                                                            std::string_view prefix,
                                                            std::string_view suffix) {
  std::vector<std::pair<uint64_t, std::string>> out;
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() + suffix.size()) continue;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    if (name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    uint64_t n = 0;
    const std::string_view digits =
        std::string_view(name).substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (!parse_u64(digits, n)) continue;
    out.emplace_back(n, name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// One pool's folder: .../hugepages/hugepages-<size>kB of a node (node 0 without nodes).
struct PoolDir {
  int node;
  uint64_t size_kib;
  std::string path;
};

// The pools' folders of a listing: the nodes and page sizes change only with memory hot-plug.
struct PoolListing {
  std::string sys_root;
  std::string folder;  // devices/system/node, or kernel/mm/hugepages without it
  std::vector<PoolDir> pools;
  std::chrono::steady_clock::time_point at;
};

PoolListing list_pools(const std::string& sys_root) {
  PoolListing l{sys_root, join(sys_root, "devices/system/node"), {}, std::chrono::steady_clock::now()};
  auto add = [&l](const std::string& dir, int node) {
    for (const auto& [size_kib, name] : numbered_dirs(dir, "hugepages-", "kB")) l.pools.push_back({node, size_kib, join(dir, name)});
  };
  std::error_code ec;
  if (fs::is_directory(l.folder, ec)) {
    for (const auto& [n, name] : numbered_dirs(l.folder, "node", "")) {
      if (n > static_cast<uint64_t>(std::numeric_limits<int>::max())) continue;
      add(join(join(l.folder, name), "hugepages"), static_cast<int>(n));
    }
  } else {
    l.folder = join(sys_root, "kernel/mm/hugepages");
    add(l.folder, 0);
  }
  return l;
}

// The last listing, kept by the thread that reads the pools each tick: listed again after 10 s,
// or at once when a pool's file has gone.
thread_local std::optional<PoolListing> pool_listing;

const std::vector<PoolDir>& pool_dirs(const std::string& sys_root, bool fresh) {
  if (fresh || !pool_listing || pool_listing->sys_root != sys_root ||
      std::chrono::steady_clock::now() - pool_listing->at >= std::chrono::seconds(10))
    pool_listing = list_pools(sys_root);
  return pool_listing->pools;
}

// Reads the pools of the listing. With `stale_on_enoent`, false when a pool's file is gone
// (ENOENT): the listing is then out of date.
bool read_listed_pools(const std::vector<PoolDir>& pools, std::vector<HugePool>& out,
                       std::vector<std::string>* warnings, PoolFault* fault, bool stale_on_enoent) {
  for (const PoolDir& p : pools) {
    PoolFault f;
    auto total = read_number_file(join(p.path, "nr_hugepages"), warnings, true, &f);
    auto free = read_number_file(join(p.path, "free_hugepages"), warnings, true, &f);
    if (stale_on_enoent && f.cause == "ENOENT") return false;
    if (fault && fault->cause.empty() && !f.cause.empty()) *fault = f;
    if (!total || !free) continue;
    auto surplus = read_number_file(join(p.path, "surplus_hugepages"), warnings, false, fault);
    out.push_back(HugePool{p.node, p.size_kib, *total, *free, surplus.value_or(0)});
  }
  return true;
}

std::vector<HugePool> read_hugepages_noting(const std::string& sys_root, std::vector<std::string>* warnings,
                                            PoolFault* fault) {
  std::vector<HugePool> out;
  const size_t warned = warnings ? warnings->size() : 0;
  if (read_listed_pools(pool_dirs(sys_root, false), out, warnings, fault, true)) return out;
  // A pool's file went away: a node or a size went with it; listed again, the pools read again.
  out.clear();
  if (warnings) warnings->resize(warned);
  if (fault) *fault = {};
  read_listed_pools(pool_dirs(sys_root, true), out, warnings, fault, false);
  return out;
}

}  // namespace

std::vector<MthpStats> read_mthp_stats(const std::string& sys_root, std::vector<std::string>* warnings,
                                       std::string* fault_path, std::string* fault_cause,
                                       std::string* fault_message) {
  std::vector<MthpStats> out;
  const std::string thp = join(sys_root, "kernel/mm/transparent_hugepage");
  PoolFault fault;
  for (const auto& [size_kib, name] : numbered_dirs(thp, "hugepages-", "kB")) {
    const std::string dir = join(join(thp, name), "stats");
    std::error_code ec;
    fs::directory_iterator it(dir, ec), end;
    if (ec) continue;  // a size without statistics (kernels before 6.9 have the folder, not stats/)
    MthpStats m{size_kib, {}};
    for (; !ec && it != end; it.increment(ec)) {
      const std::string file = it->path().filename().string();
      if (auto v = read_number_file(join(dir, file), warnings, true, &fault)) m.stats[file] = *v;
    }
    if (!m.stats.empty()) out.push_back(std::move(m));
  }
  if (fault_path) *fault_path = fault.path;
  if (fault_cause) *fault_cause = fault.cause;
  if (fault_message) *fault_message = fault.message;
  return out;
}

std::optional<PageReporting> read_page_reporting(const std::string& sys_root) {
  std::optional<int> order;
  if (auto t = read_line_file(join(sys_root, "module/page_reporting/parameters/page_reporting_order"))) {
    uint64_t v = 0;
    if (parse_u64(*t, v) && v < kMaxOrders) order = static_cast<int>(v);
  }
  std::error_code ec;
  // virtio: the device answers for itself (its negotiated features).
  const std::string virtio = join(sys_root, "bus/virtio/devices");
  std::vector<std::string> names;
  for (fs::directory_iterator it(virtio, ec), end; !ec && it != end; it.increment(ec))
    names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    const std::string dir = join(virtio, name);
    const auto id = read_line_file(join(dir, "device"));
    const auto features = read_line_file(join(dir, "features"));
    constexpr size_t kReportingBit = 5;  // VIRTIO_BALLOON_F_REPORTING
    if (!id || *id != "0x0005" || !features || features->size() <= kReportingBit || (*features)[kReportingBit] != '1')
      continue;
    std::error_code lec;
    const fs::path driver = fs::read_symlink(join(dir, "driver"), lec);
    if (lec) continue;  // not bound: no reporting device registered
    return PageReporting{driver.filename().string(), name, order.value_or(-1)};
  }
  // hv_balloon: sysfs shows no feature; the order set since boot says a device registered.
  if (order) {
    const std::string hv = join(sys_root, "bus/vmbus/drivers/hv_balloon");
    for (fs::directory_iterator it(hv, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      std::error_code lec;
      if (name != "module" && it->is_symlink(lec)) return PageReporting{"hv_balloon", name, *order};
    }
  }
  return std::nullopt;
}

std::vector<HugePool> read_hugepages(const std::string& sys_root,
                                     std::vector<std::string>* warnings) {
  return read_hugepages_noting(sys_root, warnings, nullptr);
}

Result<MemSnapshot> read_snapshot(const std::string& proc_root, const std::string& sys_root,
                                  const MemSnapshot* pageblocks_from) {
  std::vector<SourceRead> report;
  if (!pageblocks_from) return read_snapshot(proc_root, sys_root, nullptr, SourcePlan{}, report);
  MemSnapshot from = *pageblocks_from;
  return read_snapshot(proc_root, sys_root, &from, SourcePlan{{}, {"pagetypeinfo"}}, report);
}

namespace {

class SnapshotReader;

// How a source of kSourceSpecs is read, and how its fields are carried to the next snapshot.
// A text file of /proc (`file`, `parse`): fragd cannot run without a required one; an optional
// one's failure is reported and says which figures are missing (`what`; `what_unparsed` when it
// read but did not parse); with `may_be_absent` a file the kernel does not have (ENOENT,
// EOPNOTSUPP) is no failure, its figures are absent. A tree of sysfs or /proc/sys is read by
// `read` instead. `carry` moves the fields it fills from one snapshot to the next (none for
// buddyinfo and zoneinfo, which are always read).
struct SourceDef {
  const char* name;  // as in kSourceSpecs, in its order
  const char* file;  // under the proc root; nullptr: `read` reads it
  bool may_be_absent;
  const char* what;
  const char* what_unparsed;
  Result<void> (*parse)(const std::string& text, const std::string& path, MemSnapshot& snap);
  void (*read)(const std::string& proc_root, const std::string& sys_root, MemSnapshot& snap, SnapshotReader& rd);
  void (*carry)(MemSnapshot& from, MemSnapshot& to);
};

Result<void> into_buddyinfo(const std::string& text, const std::string& path, MemSnapshot& snap) {
  auto zones = parse_buddyinfo(text, path, &snap.warnings);
  if (!zones) return zones.error();
  snap.zones = std::move(*zones);
  return {};
}

Result<void> into_zoneinfo(const std::string& text, const std::string& path, MemSnapshot& snap) {
  if (auto r = parse_zoneinfo(text, path, snap.zones, &snap.warnings); !r) return r;
  // buddyinfo lists every populated zone; one that zoneinfo says is populated but that has no
  // buddyinfo row lost its line.
  const std::string buddy_path = (fs::path(path).parent_path() / "buddyinfo").string();
  for (const ZoneFree& z : snap.zones)
    if (z.present_pages > 0 && z.free_blocks.empty())
      snap.warnings.push_back(buddy_path + ": no usable line for " + zone_label(z.node, z.zone) + " (" +
                              std::to_string(z.present_pages) +
                              " present pages); its free blocks are unknown and its score reads 0");
  return {};
}

Result<void> into_pagetypeinfo(const std::string& text, const std::string& path, MemSnapshot& snap) {
  return parse_pagetypeinfo(text, path, snap.zones, &snap.warnings, &snap.pageblock_order);
}

Result<void> into_vmstat(const std::string& text, const std::string& path, MemSnapshot& snap) {
  auto vm = parse_vmstat(text, path, &snap.warnings);
  if (!vm) return vm.error();
  snap.vmstat = std::move(*vm);
  return {};
}

Result<void> into_meminfo(const std::string& text, const std::string& path, MemSnapshot& snap) {
  return parse_meminfo(text, path, snap);
}

Result<void> into_psi(const std::string& text, const std::string& path, MemSnapshot& snap) {
  auto p = parse_pressure(text, path, &snap.warnings);
  if (!p) return p.error();
  snap.memory_pressure = *p;
  return {};
}

// Reads sources into one snapshot and reports each: its error (cause: the errno name, or
// "format" when it read but did not parse), or the first line it skipped.
class SnapshotReader {
 public:
  SnapshotReader(MemSnapshot& snap, std::vector<SourceRead>& report, const std::string& proc_root)
      : snap_(snap), report_(report), proc_root_(proc_root) {}

  void begin() { warned_before_ = snap_.warnings.size(); }
  void done(const char* source, const std::string& path) {
    SourceRead r{source, path, "", ""};
    if (snap_.warnings.size() > warned_before_) {
      r.cause = "lines";
      r.message = snap_.warnings[warned_before_];
      if (const size_t more = snap_.warnings.size() - warned_before_ - 1)
        r.message += " (and " + std::to_string(more) + " more)";
    }
    report_.push_back(std::move(r));
  }
  void failed(const char* source, const std::string& path, const std::string& cause, const std::string& message) {
    report_.push_back(SourceRead{source, path, cause, message});
  }

  // A required source's failure is the snapshot's; an optional one's is reported and warned.
  Result<void> read(const SourceDef& s, bool required) {
    const std::string path = join(proc_root_, s.file);
    begin();
    auto text = read_text_file(path);
    if (!text && s.may_be_absent && (text.error().err == ENOENT || text.error().err == EOPNOTSUPP)) {
      done(s.name, path);
      return {};
    }
    if (!text) {
      const int err = text.error().err;
      const std::string fix =
          required ? "; fragd needs " + path + ": mount procfs there (mount -t proc proc " + proc_root_ +
                           ") or point fragd at the right proc root (--path.procfs)"
          : err == EACCES || err == EPERM
              ? std::string("; it is readable by root only (mode 0400): run fragd as root to get ") + s.what
              : std::string("; ") + s.what + " are not reported";
      return fail(s, required, path, Error{err, text.error().message + fix}, errno_name(err));
    }
    if (Result<void> r = s.parse(*text, path, snap_); !r) {
      const std::string msg =
          required ? r.error().message : r.error().message + "; " + s.what_unparsed + " are not reported";
      return fail(s, required, path, Error{r.error().err, msg}, "format");
    }
    done(s.name, path);
    return {};
  }

 private:
  Result<void> fail(const SourceDef& s, bool required, const std::string& path, const Error& e,
                    const std::string& cause) {
    failed(s.name, path, cause, e.message);
    if (required) return e;
    snap_.warnings.push_back(e.message);
    return {};
  }

  MemSnapshot& snap_;
  std::vector<SourceRead>& report_;
  const std::string& proc_root_;
  size_t warned_before_ = 0;
};

// The pageblock counts of an earlier snapshot, zone by zone, instead of reading /proc/pagetypeinfo.
void carry_pageblocks(MemSnapshot& from, MemSnapshot& snap) {
  snap.pageblock_order = from.pageblock_order;
  for (ZoneFree& z : snap.zones)
    for (ZoneFree& old : from.zones)
      if (old.node == z.node && old.zone == z.zone) {
        z.pageblocks = std::move(old.pageblocks);
        z.free_by_type = std::move(old.free_by_type);
      }
}

void read_vm_sysctls(const std::string& proc_root, MemSnapshot& snap) {
  for (const char* name : kCompactionSysctls) {
    const auto t = read_line_file(join(proc_root, std::string("sys/vm/") + name));
    uint64_t v = 0;
    if (t && parse_u64(*t, v)) snap.vm_sysctls[name] = v;
  }
}

// The hugetlb pools: a pool file that fails fails them all, like a source that failed outright
// (and one skipped while it backs off): no pool at all, rather than pools that come and go.
void read_pools(const std::string& sys_root, MemSnapshot& snap, SnapshotReader& rd) {
  rd.begin();
  PoolFault fault;
  snap.hugepages = read_hugepages_noting(sys_root, &snap.warnings, &fault);
  if (!fault.cause.empty()) {
    snap.hugepages.clear();
    rd.failed("hugepages", fault.path, fault.cause,
              fault.message + "; no hugetlb pool is reported until every pool file reads");
    return;
  }
  rd.done("hugepages", pool_listing->folder);  // as read_hugepages_noting listed them
}

// The per-size THP statistics: as for the pools, all sizes or none.
void read_mthp(const std::string& sys_root, MemSnapshot& snap, SnapshotReader& rd) {
  rd.begin();
  std::string path, cause, message;
  snap.mthp = read_mthp_stats(sys_root, &snap.warnings, &path, &cause, &message);
  if (!cause.empty()) {
    snap.mthp.clear();
    rd.failed("mthp", path, cause, message + "; no per-size THP statistic is reported until every stats file reads");
    return;
  }
  rd.done("mthp", join(sys_root, "kernel/mm/transparent_hugepage"));
}

// In kSourceSpecs' order: zoneinfo fills the zones buddyinfo made, pagetypeinfo adds to them.
// PSI is absent where the kernel has none (no CONFIG_PSI, or booted psi=0: no /proc/pressure).
constexpr SourceDef kSources[] = {
    {"buddyinfo", "buddyinfo", false, "", "", into_buddyinfo, nullptr, nullptr},
    {"zoneinfo", "zoneinfo", false, "", "", into_zoneinfo, nullptr, nullptr},
    {"pagetypeinfo", "pagetypeinfo", false, "pageblock counts per migrate type", "pageblock counts", into_pagetypeinfo,
     nullptr, carry_pageblocks},
    {"vmstat", "vmstat", false, "vmstat counters", "vmstat counters", into_vmstat, nullptr,
     [](MemSnapshot& f, MemSnapshot& t) { t.vmstat = std::move(f.vmstat); }},
    {"meminfo", "meminfo", false, "MemFree/MemAvailable", "MemFree/MemAvailable", into_meminfo, nullptr,
     [](MemSnapshot& f, MemSnapshot& t) {
       t.mem_available_kib = f.mem_available_kib;
       t.mem_free_kib = f.mem_free_kib;
     }},
    {"psi", "pressure/memory", true, "memory pressure (PSI) totals", "memory pressure (PSI) totals", into_psi, nullptr,
     [](MemSnapshot& f, MemSnapshot& t) { t.memory_pressure = f.memory_pressure; }},
    {"vm_sysctls", nullptr, false, "", "", nullptr,
     [](const std::string& proc, const std::string&, MemSnapshot& snap, SnapshotReader&) { read_vm_sysctls(proc, snap); },
     [](MemSnapshot& f, MemSnapshot& t) { t.vm_sysctls = std::move(f.vm_sysctls); }},
    {"hugepages", nullptr, false, "", "", nullptr,
     [](const std::string&, const std::string& sys, MemSnapshot& snap, SnapshotReader& rd) { read_pools(sys, snap, rd); },
     [](MemSnapshot& f, MemSnapshot& t) { t.hugepages = std::move(f.hugepages); }},
    {"mthp", nullptr, false, "", "", nullptr,
     [](const std::string&, const std::string& sys, MemSnapshot& snap, SnapshotReader& rd) { read_mthp(sys, snap, rd); },
     [](MemSnapshot& f, MemSnapshot& t) { t.mthp = std::move(f.mthp); }},
    {"page_reporting", nullptr, false, "", "", nullptr,
     [](const std::string&, const std::string& sys, MemSnapshot& snap, SnapshotReader&) {
       snap.page_reporting = read_page_reporting(sys);
     },
     [](MemSnapshot& f, MemSnapshot& t) { t.page_reporting = f.page_reporting; }},
};
static_assert(std::size(kSources) == std::size(kSourceSpecs));
constexpr bool same_order() {
  for (size_t i = 0; i < std::size(kSources); i++)
    if (std::string_view(kSources[i].name) != kSourceSpecs[i].name) return false;
  return true;
}
static_assert(same_order(), "kSources and kSourceSpecs name the sources in one order");

Result<void> read_source(const SourceDef& d, const SourceSpec& spec, const std::string& proc_root,
                         const std::string& sys_root, MemSnapshot& snap, SnapshotReader& rd) {
  if (d.file) return rd.read(d, spec.required);
  d.read(proc_root, sys_root, snap, rd);
  return {};
}

}  // namespace

Result<MemSnapshot> read_snapshot(const std::string& proc_root, const std::string& sys_root, MemSnapshot* from,
                                  const SourcePlan& plan, std::vector<SourceRead>& report) {
  MemSnapshot snap;
  SnapshotReader rd(snap, report, proc_root);
  for (size_t i = 0; i < std::size(kSources); i++) {
    const SourceDef& d = kSources[i];
    const SourceSpec& spec = kSourceSpecs[i];
    if (!spec.required && plan.skip.count(d.name)) continue;
    if (!spec.required && from && plan.carry.count(d.name)) {
      d.carry(*from, snap);
      continue;
    }
    if (auto r = read_source(d, spec, proc_root, sys_root, snap, rd); !r) return r.error();
  }
  return snap;
}

void reread_sources(const std::string& proc_root, const std::string& sys_root, const std::set<std::string>& names,
                    MemSnapshot& snap, std::vector<SourceRead>& report) {
  SnapshotReader rd(snap, report, proc_root);
  for (size_t i = 0; i < std::size(kSources); i++) {
    const SourceDef& d = kSources[i];
    if (kSourceSpecs[i].required || d.carry == carry_pageblocks || !names.count(d.name)) continue;
    MemSnapshot empty;
    d.carry(empty, snap);  // a source that fails now leaves its fields empty
    (void)read_source(d, kSourceSpecs[i], proc_root, sys_root, snap, rd);
  }
}

}  // namespace fragd
