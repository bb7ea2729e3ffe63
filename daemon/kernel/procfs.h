// SPDX-License-Identifier: Apache-2.0
// Readers for the kernel's memory-layout files: /proc/buddyinfo,
// /proc/zoneinfo, /proc/pagetypeinfo, /proc/vmstat, /proc/meminfo and the
// hugetlb pools in sysfs.
//
// The parse_* functions are pure: they take a file's contents and a path
// (used only in messages) and never touch the file system, so the unit tests
// feed them recorded fixtures. read_snapshot() reads the live files.
//
// Error policy: a file with nothing usable in it is an Error whose message
// reads "path:line: expected ...; <fix>". A single bad line in an otherwise
// good file is skipped and reported as a warning "path:line: <why>" in the
// `warnings` vector passed in (or MemSnapshot::warnings).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace fragd {

// One zone of one NUMA node.
struct ZoneFree {
  int node = 0;
  std::string zone;  // "DMA", "DMA32", "Normal", "Movable", "Device", ...
  // buddyinfo: free blocks per order, index = order. Empty when the zone has
  // no buddyinfo line (an unpopulated zone, or its line was garbled).
  std::vector<uint64_t> free_blocks;
  // zoneinfo ("present", "managed", "spanned", "pages free"), in pages.
  uint64_t present_pages = 0, managed_pages = 0, spanned_pages = 0, free_pages = 0;
  // zoneinfo "node_unreclaimable", the node's, printed in each of its populated zones: 1 when
  // kswapd has given up reclaiming the node (it is no longer woken). -1: no such line.
  int node_unreclaimable = -1;
  // zoneinfo "nr_free_pages_blocks" (Linux 6.15+): the kernel's own count of free pages in free
  // blocks of pageblock order and up, on the buddy lists (not the per-CPU lists) and not
  // isolated. Absent on a kernel that does not print it (or when its line did not parse).
  std::optional<uint64_t> free_pages_blocks;
  // pagetypeinfo "Number of blocks type": migratetype -> pageblocks, with the
  // names the kernel prints (Unmovable, Movable, Reclaimable, HighAtomic, CMA,
  // Isolate). Empty when pagetypeinfo was not readable.
  std::map<std::string, uint64_t> pageblocks;
  // pagetypeinfo "Free pages count per migrate type at order": migratetype ->
  // free blocks per order. The kernel stops counting a list at 100000 and
  // prints ">100000"; such a cell is stored as 100000 (a lower bound).
  std::map<std::string, std::vector<uint64_t>> free_by_type;
};

// One hugetlb pool (one page size on one node).
struct HugePool {
  int node = 0;
  uint64_t size_kib = 0;
  uint64_t total = 0;    // nr_hugepages
  uint64_t free = 0;     // free_hugepages
  uint64_t surplus = 0;  // surplus_hugepages (0 when the file is absent)
};

// One transparent huge page size's statistics (Linux 6.9+):
// kernel/mm/transparent_hugepage/hugepages-<size>kB/stats/<name>, every file
// of that folder by name (anon_fault_alloc, anon_fault_fallback, shmem_alloc,
// split, nr_anon, ...). Kernels without per-size statistics have none.
struct MthpStats {
  uint64_t size_kib = 0;
  std::map<std::string, uint64_t> stats;
};

// Free page reporting: the guest hands free blocks of `order` pages and up to its hypervisor,
// which takes their memory back; the next touch of such a page faults on the host.
struct PageReporting {
  std::string driver;  // "virtio_balloon" or "hv_balloon"
  std::string device;  // the bound device ("virtio0", a vmbus device id)
  // module/page_reporting/parameters/page_reporting_order; -1 when the kernel does not say.
  int order = -1;
  bool operator==(const PageReporting&) const = default;
};

// /proc/pressure/memory (PSI; a kernel with CONFIG_PSI not booted with psi=0): microseconds since
// boot during which at least one task (some) and every non-idle task at once (full) waited for
// memory: reclaim, compaction, refaults of thrashing pages.
struct MemoryPressure {
  uint64_t some_us = 0;
  std::optional<uint64_t> full_us;  // absent when the file has no "full" line
  bool operator==(const MemoryPressure&) const = default;
};

struct MemSnapshot {
  // Merged from buddyinfo + zoneinfo + pagetypeinfo by (node, zone), ordered
  // by node and then in the kernel's zone order (as zoneinfo lists them).
  std::vector<ZoneFree> zones;
  // Every key of /proc/vmstat; the reclaim counters fragd exports (kReclaimCounters) among them.
  std::map<std::string, uint64_t> vmstat;
  uint64_t mem_available_kib = 0, mem_free_kib = 0;
  std::vector<HugePool> hugepages;  // ordered by (node, size_kib)
  std::vector<MthpStats> mthp;      // ordered by size_kib; empty before Linux 6.9
  std::optional<PageReporting> page_reporting;  // none: no reporting device (bare metal, most hosts)
  // The compaction settings of /proc/sys/vm that fragd reports (kCompactionSysctls),
  // by name; a file this kernel lacks (defrag_mode before 6.15) is absent.
  std::map<std::string, uint64_t> vm_sysctls;
  // PSI's memory totals, read each tick; none where the kernel has no /proc/pressure/memory.
  std::optional<MemoryPressure> memory_pressure;
  // pagetypeinfo "Page block order: N"; 0 when pagetypeinfo was not read.
  unsigned pageblock_order = 0;
  std::vector<std::string> warnings;  // non-fatal problems, "path:line: why"
};

inline constexpr const char* kCompactionSysctls[] = {"compaction_proactiveness", "defrag_mode"};

// The reclaim counters of /proc/vmstat beside the allocation stalls: pages scanned and
// reclaimed ("stolen") by allocating tasks (direct) and by kswapd. In MemSnapshot::vmstat.
inline constexpr const char* kReclaimCounters[] = {"pgscan_direct", "pgscan_kswapd", "pgsteal_direct",
                                                   "pgsteal_kswapd"};

// Orders above this are rejected as garbage (the kernel's NR_PAGE_ORDERS is
// 11 on x86-64 and at most a few more elsewhere); it also keeps the
// `blocks << order` arithmetic of the score math far from overflow.
inline constexpr size_t kMaxOrders = 32;

// /proc/buddyinfo: "Node 0, zone   Normal   4351   5688 ...". Every line must
// carry the same number of orders (the count most lines agree on); lines
// with a different count are skipped with a warning.
Result<std::vector<ZoneFree>> parse_buddyinfo(std::string_view text, std::string_view path,
                                              std::vector<std::string>* warnings = nullptr);

// Each node's node_unreclaimable from its zones (true when any says 1), for the nodes whose
// zones say it at all.
std::map<int, bool> nodes_unreclaimable(const std::vector<ZoneFree>& zones);

// /proc/zoneinfo: fills present/managed/spanned/free_pages and node_unreclaimable of the zones
// already in `zones` and adds the zones missing from them (buddyinfo omits
// unpopulated zones such as an empty Movable or Device). Afterwards `zones`
// is ordered by node, then in the order zoneinfo lists the zones.
Result<void> parse_zoneinfo(std::string_view text, std::string_view path,
                            std::vector<ZoneFree>& zones,
                            std::vector<std::string>* warnings = nullptr);

// /proc/pagetypeinfo: fills pageblocks and free_by_type (adding zones that
// are not in `zones` yet). `pageblock_order`, when given, receives the
// "Page block order" header value (left untouched when the header is absent).
Result<void> parse_pagetypeinfo(std::string_view text, std::string_view path,
                                std::vector<ZoneFree>& zones,
                                std::vector<std::string>* warnings = nullptr,
                                unsigned* pageblock_order = nullptr);

// /proc/vmstat: "key value" per line.
Result<std::map<std::string, uint64_t>> parse_vmstat(std::string_view text, std::string_view path,
                                                     std::vector<std::string>* warnings = nullptr);

// /proc/pressure/memory: "some avg10=0.00 avg60=0.00 avg300=0.00 total=<us>" and the same for
// "full". Error when there is no usable "some" line; a bad "full" line is a warning and leaves
// full_us absent.
Result<MemoryPressure> parse_pressure(std::string_view text, std::string_view path,
                                      std::vector<std::string>* warnings = nullptr);

// /proc/meminfo: sets mem_free_kib and mem_available_kib; warnings go to
// out.warnings. Error when neither MemFree nor MemAvailable is present.
Result<void> parse_meminfo(std::string_view text, std::string_view path, MemSnapshot& out);

// Hugetlb pools under `sys_root`: every
// devices/system/node/nodeN/hugepages/hugepages-<size>kB/{nr,free,surplus}_hugepages;
// when devices/system/node does not exist, kernel/mm/hugepages as node 0.
// Nothing there (no hugetlbfs, or no sysfs) -> empty. An unreadable pool is
// skipped with a warning.
std::vector<HugePool> read_hugepages(const std::string& sys_root,
                                     std::vector<std::string>* warnings = nullptr);

// Per-size THP statistics under `sys_root`/kernel/mm/transparent_hugepage:
// every hugepages-<size>kB/stats folder, each of its files one number. No
// such folder (a kernel before 6.9, or no THP) -> empty, without a warning.
// A stats file that does not read or parse is left out with a warning; the
// first such file, its cause and message go to *fault_path / *fault_cause / *fault_message.
std::vector<MthpStats> read_mthp_stats(const std::string& sys_root, std::vector<std::string>* warnings = nullptr,
                                       std::string* fault_path = nullptr, std::string* fault_cause = nullptr,
                                       std::string* fault_message = nullptr);

// Free page reporting under `sys_root`: a virtio-balloon device bound to its driver that
// negotiated VIRTIO_BALLOON_F_REPORTING (bit 5 of bus/virtio/devices/*/features; device id
// 0x0005), or a vmbus device bound to hv_balloon while the page_reporting module's order is set
// (it reads -1, 4294967295, until a device registers). None when neither holds or sysfs has no
// such folders. Reads a few small files; nothing fails (an unreadable file counts as absent).
std::optional<PageReporting> read_page_reporting(const std::string& sys_root);

// Reads and merges everything. buddyinfo or zoneinfo missing, unreadable or
// unparsable -> Error naming the path and the fix. pagetypeinfo (root-only,
// mode 0400), vmstat, meminfo and /proc/pressure/memory problems -> warnings,
// with the affected fields left empty/zero. Hugepages missing -> empty; no
// /proc/pressure/memory (no PSI) -> no memory_pressure, without a warning.
//
// /proc/pagetypeinfo is costly: the kernel walks every free list under the
// zone lock with interrupts off (milliseconds on a fragmented host). With
// `pageblocks_from` set it is not read; its pageblock counts are copied from
// that earlier snapshot, zone by zone.
Result<MemSnapshot> read_snapshot(const std::string& proc_root = "/proc",
                                  const std::string& sys_root = "/sys",
                                  const MemSnapshot* pageblocks_from = nullptr);

// The sources of a snapshot that may fail, as named in SourceRead, the skip set and
// fragd_collect_errors_total.
inline constexpr const char* kSnapshotSources[] = {"buddyinfo", "zoneinfo",  "pagetypeinfo", "vmstat",
                                                   "meminfo",   "hugepages", "mthp",         "psi"};
// Read with the snapshot unless skipped, never failing: "page_reporting", "vm_sysctls".

// When the memory concern reads a source (concerns/memory/files.cc). Each is read only as often
// as what it tells can change: a decision reads it at a tick, a scrape's families only when a
// scrape asks for them. Between two reads its fields are carried from snapshot to snapshot.
enum class SourcePeriod {
  kTick,    // at each tick, at most once per interval_ns
  kScrape,  // when a scrape asks for the families (at most once a tick), at most once per interval_ns
};
// Every source of a snapshot, in the order read_snapshot reads them.
struct SourceSpec {
  const char* name;
  const char* path;  // under the proc root ("/proc/...") or the sys root ("/sys/..."), for a reader
  SourcePeriod period;
  uint64_t interval_ns;  // 0: every time; kPagetypeinfoInterval: the config's pagetypeinfo_interval
  bool required;         // no snapshot without it (never skipped, never carried)
};
inline constexpr uint64_t kPagetypeinfoInterval = ~0ULL;
inline constexpr uint64_t kTenSeconds = 10'000'000'000ULL;
// buddyinfo and zoneinfo make the zones and their free blocks, which every decision reads;
// pagetypeinfo is costly (the zone lock, interrupts off, over every free list); meminfo
// (MemAvailable), PSI, the compaction settings and the hugetlb pools are read by the act
// engine and the supply answers; a free page reporting device comes with the VM's
// configuration; vmstat and the per-size THP statistics (some 150 files) are only exported.
inline constexpr SourceSpec kSourceSpecs[] = {
    {"buddyinfo", "/proc/buddyinfo", SourcePeriod::kTick, 0, true},
    {"zoneinfo", "/proc/zoneinfo", SourcePeriod::kTick, 0, true},
    {"pagetypeinfo", "/proc/pagetypeinfo", SourcePeriod::kTick, kPagetypeinfoInterval, false},
    {"vmstat", "/proc/vmstat", SourcePeriod::kScrape, 0, false},
    {"meminfo", "/proc/meminfo", SourcePeriod::kTick, 0, false},
    {"psi", "/proc/pressure/memory", SourcePeriod::kTick, 0, false},
    {"vm_sysctls", "/proc/sys/vm", SourcePeriod::kTick, 0, false},
    {"hugepages", "/sys/devices/system/node", SourcePeriod::kTick, 0, false},
    {"mthp", "/sys/kernel/mm/transparent_hugepage", SourcePeriod::kScrape, kTenSeconds, false},
    {"page_reporting", "/sys/bus/virtio/devices", SourcePeriod::kTick, kTenSeconds, false},
};

// What became of one source in a read_snapshot() call.
struct SourceRead {
  std::string source;  // one of kSnapshotSources
  std::string path;    // the file (for hugepages: the first pool file that failed, or the pools' directory)
  // "" read and parsed cleanly; an errno name ("ENOENT", "EACCES", "EISDIR", ...)
  // when it could not be read; "format" when nothing in it parsed; "lines"
  // when some lines were skipped and the rest is used.
  std::string cause;
  std::string message;  // the error or the first skipped line, with the fix; "" when clean
  bool failed() const { return !cause.empty() && cause != "lines"; }
};

// What read_snapshot does with the optional sources it is not to read now.
struct SourcePlan {
  // Backing off after a failure: not read, their fields left empty as if they had failed.
  std::set<std::string> skip;
  // Not due: their fields are moved from the snapshot before (`from`; without one they are read).
  std::set<std::string> carry;
};

// read_snapshot for a caller that reads each source at its own period and backs off failing
// ones (`plan`); buddyinfo and zoneinfo are always read. `report` receives one SourceRead per
// source read, also when the result is an Error (then its last entry is the source that
// failed). A pool file that fails makes the hugepages source fail: no pool is reported.
Result<MemSnapshot> read_snapshot(const std::string& proc_root, const std::string& sys_root, MemSnapshot* from,
                                  const SourcePlan& plan, std::vector<SourceRead>& report);
// Reads the optional sources `names` again into `snap`, their fields replaced (empty when one
// fails, as in read_snapshot); not the zones' (buddyinfo, zoneinfo, pagetypeinfo).
void reread_sources(const std::string& proc_root, const std::string& sys_root, const std::set<std::string>& names,
                    MemSnapshot& snap, std::vector<SourceRead>& report);

// Reads a whole file (procfs files report size 0, so this reads until EOF).
// Error: sys_error naming the path.
Result<std::string> read_text_file(const std::string& path);

// "Node 0, zone Normal", as the kernel's files name a zone in messages.
std::string zone_label(int node, std::string_view zone);
// The same from an fd held open (read again from its start; `path` names it in errors).
// /proc/iomem keeps showing addresses through an fd opened with CAP_SYS_ADMIN.
Result<std::string> read_text_fd(int fd, const std::string& path);

}  // namespace fragd
