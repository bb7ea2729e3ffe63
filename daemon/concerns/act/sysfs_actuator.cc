// SPDX-License-Identifier: Apache-2.0
#include "concerns/act/sysfs_actuator.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <charconv>

#include "concerns/act/saved_state.h"
#include "base/log.h"
#include "kernel/procfs.h"
#include "concerns/memory/score.h"
#include "kernel/source_faults.h"
#include "version.h"

namespace fragd {
namespace {

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// What to do about a refused write, by errno.
std::string write_fix(int err) {
  switch (err) {
    case EROFS:
      return "the file system is read-only for fragd (a container's /sys or /proc/sys, or fragd.service without "
             "the act drop-in): " + read_only_fix("the path") + ", or run in mode observe";
    case EACCES:
    case EPERM:
      return "fragd may not write it: run fragd as root";
    case ENOENT:
      return "the file is gone (the node went offline, or hugetlb is not available)";
    default:
      return "fragd tries again after its back-off";
  }
}

Result<void> write_here(const std::string& path, const std::string& value) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return sys_error("open " + path + " for writing");
  const ssize_t n = write(fd, value.data(), value.size());
  const int err = errno;
  close(fd);
  if (n < 0) return sys_error("write " + value + " to " + path, err);
  if (static_cast<size_t>(n) != value.size()) return make_error("short write of " + value + " to " + path, EIO);
  return {};
}

}  // namespace

std::string read_only_fix(const std::string& them) {
  return std::string("under systemd install ") + FRAGD_ACT_DROPIN +
         " as /etc/systemd/system/fragd.service.d/act.conf, then systemctl daemon-reload and systemctl restart "
         "fragd; in a container mount " + them + " writable (docs/deployment.md)";
}

namespace {
// True when `path` lies on a mount made read-only (a container's /proc/sys, systemd's
// ProtectKernelTunables without the act drop-in): the kernel refuses every write there.
bool on_read_only_mount(const std::string& path) {
  struct statvfs st;
  return statvfs(path.c_str(), &st) == 0 && (st.f_flag & ST_RDONLY);
}
}  // namespace

std::vector<std::string> SysfsActuator::read_only_paths() const {
  const std::string paths[] = {proc_ + "/sys/vm/compact_memory", proc_ + "/sys/vm/compaction_proactiveness",
                               proc_ + "/sys/vm/drop_caches",    proc_ + "/sys/vm/defrag_mode",
                               proc_ + "/sys/vm/stat_refresh",
                               sys_ + "/devices/system/node",    sys_ + "/kernel/mm/hugepages"};
  std::vector<std::string> out;
  for (const auto& p : paths)
    if (on_read_only_mount(p)) out.push_back(p);
  return out;
}

SysfsActuator::SysfsActuator(std::string proc_root, std::string sys_root)
    : proc_(std::move(proc_root)), sys_(std::move(sys_root)), stop_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (stop_fd_ < 0)
    log_warn(sys_error("create the actuator's stop eventfd").message +
             ": a compaction under way when fragd stops will not be interrupted");
}

SysfsActuator::~SysfsActuator() {
  if (stop_fd_ >= 0) close(stop_fd_);
}

void SysfsActuator::request_stop() {
  stop_ = true;
  const uint64_t one = 1;
  if (stop_fd_ >= 0) (void)!write(stop_fd_, &one, sizeof(one));
}

ChildWriteReport SysfsActuator::last_compaction_child() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_child_;
}

Result<void> SysfsActuator::write_value(const std::string& path, const char* pattern, const std::string& value,
                                        bool killable, std::function<bool()> reached) {
  ChildWriteReport child;
  ChildWriteHooks hooks = hooks_;
  hooks.reached = std::move(reached);
  const Result<void> r = killable ? write_in_child(path, value, stop_fd_, hooks, &child, deadline_ns_) : write_here(path, value);

  std::lock_guard<std::mutex> lock(mu_);
  if (killable) last_child_ = child;
  // Stopped, or no child to write: not the kernel's refusal.
  if (!r && killable && !child.attempted) return r;
  if (r) {
    if (auto it = refused_.find(path); it != refused_.end()) {
      log_info(path + " accepts writes again (refused with " + it->second + " before)");
      refused_.erase(it);
    }
    return r;
  }
  const std::string name = errno_name(r.error().err);
  write_errors_[{pattern, name}]++;
  auto [it, fresh] = refused_.try_emplace(path, name);
  if (fresh || it->second != name) {
    it->second = name;
    log_warn("the kernel refused a write: " + r.error().message + " (" + name + "): " + write_fix(r.error().err) +
             ". The action fails and fragd backs off; counted in fragd_kernel_write_errors_total{file=\"" + pattern +
             "\",error=\"" + name + "\"}, not logged again until a write to " + path + " succeeds");
  }
  return r;
}

SysfsActuator::WriteErrors SysfsActuator::write_errors() const {
  std::lock_guard<std::mutex> lock(mu_);
  return write_errors_;
}

Result<uint64_t> SysfsActuator::read_value(const std::string& path) {
  auto t = read_text_file(path);
  if (!t) return t.error();
  std::string s = *t;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size())
    return make_error(path + ": expected a number, read '" + s + "'", EINVAL);
  return v;
}

Result<void> SysfsActuator::compact_node(int node) { return compact(node, {}); }

Result<void> SysfsActuator::compact(int node, std::function<bool()> reached) {
  if (node < 0) return make_error("compact: no node given", EINVAL);
  const std::string nodes = sys_ + "/devices/system/node";
  if (!exists(nodes)) {
    if (node != 0) return make_error("compact: node " + std::to_string(node) + " does not exist", ENOENT);
    return write_value(proc_ + "/sys/vm/compact_memory", "/proc/sys/vm/compact_memory", "1", true, std::move(reached));
  }
  return write_value(nodes + "/node" + std::to_string(node) + "/compact", "/sys/devices/system/node/node<N>/compact",
                     "1", true, std::move(reached));
}

Result<void> SysfsActuator::compact_node_until(int node, unsigned order, uint64_t blocks) {
  auto reached = [this, node, order, blocks] {
    auto b = free_blocks(node, order);
    return b && *b >= blocks;
  };
  if (node >= 0 && reached()) return {};
  return compact(node, reached);
}

Result<unsigned> SysfsActuator::read_proactiveness() {
  auto v = read_value(proc_ + "/sys/vm/compaction_proactiveness");
  if (!v) return v.error();
  if (*v > 100) return make_error("vm.compaction_proactiveness reads " + std::to_string(*v) + " (> 100)", EINVAL);
  return static_cast<unsigned>(*v);
}

Result<void> SysfsActuator::write_proactiveness(unsigned value) {
  if (value > 100) return make_error("vm.compaction_proactiveness must be 0..100", EINVAL);
  return write_value(proc_ + "/sys/vm/compaction_proactiveness", "/proc/sys/vm/compaction_proactiveness",
                     std::to_string(value));
}

Result<unsigned> SysfsActuator::read_defrag_mode() {
  auto v = read_value(proc_ + "/sys/vm/defrag_mode");
  if (!v) return v.error();
  if (*v > 1) return make_error("vm.defrag_mode reads " + std::to_string(*v) + " (not 0 or 1)", EINVAL);
  return static_cast<unsigned>(*v);
}

Result<void> SysfsActuator::write_defrag_mode(unsigned value) {
  if (value > 1) return make_error("vm.defrag_mode must be 0 or 1", EINVAL);
  return write_value(proc_ + "/sys/vm/defrag_mode", "/proc/sys/vm/defrag_mode", std::to_string(value));
}

std::string SysfsActuator::pool_path(int node, uint64_t size_kib) const {
  const std::string leaf = "/hugepages/hugepages-" + std::to_string(size_kib) + "kB/nr_hugepages";
  if (node < 0) return sys_ + "/kernel/mm" + leaf;
  return sys_ + "/devices/system/node/node" + std::to_string(node) + leaf;
}

Result<uint64_t> SysfsActuator::read_pool(int node, uint64_t size_kib) {
  return read_value(pool_path(node, size_kib));
}

Result<void> SysfsActuator::write_pool(int node, uint64_t size_kib, uint64_t count, bool in_child,
                                       std::function<bool()> reached) {
  return write_value(pool_path(node, size_kib),
                     node < 0 ? "/sys/kernel/mm/hugepages/hugepages-<S>kB/nr_hugepages"
                              : "/sys/devices/system/node/node<N>/hugepages/hugepages-<S>kB/nr_hugepages",
                     std::to_string(count), in_child, std::move(reached));
}

Result<void> SysfsActuator::write_pool(int node, uint64_t size_kib, uint64_t count) {
  return write_pool(node, size_kib, count, false);
}

Result<void> SysfsActuator::grow_pool(int node, uint64_t size_kib, uint64_t count) {
  return write_pool(node, size_kib, count, true);
}

Result<void> SysfsActuator::grow_pool_giving_way(int node, uint64_t size_kib, uint64_t count,
                                                 const std::function<bool()>& give_way) {
  if (give_way && give_way()) return {};
  return write_pool(node, size_kib, count, true, give_way);
}

Result<uint64_t> SysfsActuator::mem_available_kib() {
  auto t = read_text_file(proc_ + "/meminfo");
  if (!t) return t.error();
  MemSnapshot m;
  if (auto r = parse_meminfo(*t, proc_ + "/meminfo", m); !r) return r.error();
  return m.mem_available_kib;
}

Result<SpareMemory> SysfsActuator::spare_memory(int node) { return read_spare_memory(proc_, sys_, node); }

Result<uint64_t> SysfsActuator::free_blocks(int node, unsigned order) {
  auto t = read_text_file(proc_ + "/buddyinfo");
  if (!t) return t.error();
  auto zones = parse_buddyinfo(*t, proc_ + "/buddyinfo");
  if (!zones) return zones.error();
  uint64_t blocks = 0;
  for (const auto& z : *zones)
    if (node < 0 || z.node == node) blocks += blocks_of_order(z.free_blocks, order);
  return blocks;
}

Result<unsigned> SysfsActuator::node_score(int node) {
  auto b = read_text_file(proc_ + "/buddyinfo");
  if (!b) return b.error();
  auto zones = parse_buddyinfo(*b, proc_ + "/buddyinfo");
  if (!zones) return zones.error();
  auto zi = read_text_file(proc_ + "/zoneinfo");
  if (!zi) return zi.error();
  if (auto r = parse_zoneinfo(*zi, proc_ + "/zoneinfo", *zones); !r) return r.error();
  for (const auto& s : node_scores(*zones))
    if (s.node == node) return s.score;
  return make_error("node " + std::to_string(node) + " is not in " + proc_ + "/buddyinfo", ENOENT);
}

std::string SysfsActuator::tree_root(const std::string& canonical_file) const {
  return tree_of(canonical_file, proc_, sys_);
}

// Dropping the page cache can take seconds on a large host: in a child, like the compaction and
// pool writes, so that the action's deadline (compaction.cpu_budget) and a stop end it.
Result<void> SysfsActuator::drop_caches() {
  return write_value(proc_ + "/sys/vm/drop_caches", "/proc/sys/vm/drop_caches", "1", true);
}

// A vmstat refresh on every CPU: a few ms on this project's VM. In the calling thread: the
// kernel answers at once. The drain is fragd's own step, not one the policy asks for: where
// /proc/sys is mounted read-only (a container's, as the DaemonSet's act overlay keeps it; said at
// start, read_only_paths) it is unavailable by design, and not written or counted as refused.
Result<void> SysfsActuator::refresh_vm_stats() {
  const std::string path = proc_ + "/sys/vm/stat_refresh";
  if (on_read_only_mount(path))
    return make_error("/proc/sys/vm/stat_refresh is read-only for fragd: " + read_only_fix("it"), EROFS);
  return write_value(path, "/proc/sys/vm/stat_refresh", "1");
}

}  // namespace fragd
