// SPDX-License-Identifier: Apache-2.0
// The Actuator (concerns/act/actuator.h) over the kernel's files. Every path it
// writes is built here from a node number and a page size that were
// validated against the machine, never from a string of the policy:
//   /sys/devices/system/node/node<N>/compact
//   /proc/sys/vm/compact_memory                    (a machine without node dirs)
//   /proc/sys/vm/compaction_proactiveness
//   /proc/sys/vm/defrag_mode                       (the defrag_mode guard)
//   /proc/sys/vm/drop_caches
//   /proc/sys/vm/stat_refresh                      (the per-CPU lists' drain)
//   /sys/kernel/mm/hugepages/hugepages-<S>kB/nr_hugepages
//   /sys/devices/system/node/node<N>/hugepages/hugepages-<S>kB/nr_hugepages
// The roots are fragd's --path.procfs and --path.sysfs.
//
// A compaction write (compact_node) runs in a child process that
// request_stop() kills (concerns/act/child_write.h): it returns ECANCELED then, and
// the action is recorded "abandoned". The same holds for a write that grows
// a pool (grow_pool), where the kernel compacts page by page. Both are also
// killed at the action's deadline (Actuator::set_deadline: the compaction
// budget left), and the action is recorded "cut". Every other write is made
// in the calling thread: the kernel answers those at once (a pool write that
// lowers a pool frees pages and compacts nothing; the kernel does not stop
// it for a signal either).
//
// A write the kernel refuses is counted by file (the pattern above, so the
// label values are bounded) and errno name, for fragd_kernel_write_errors_total,
// and logged once per file and errno: again only after a write to that file
// succeeded ("accepts writes again", logged once too). The action that made
// the write fails with the error, and the engine backs off (concerns/act/engine.h).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "concerns/act/actuator.h"
#include "concerns/act/child_write.h"

namespace fragd {

// What to do about kernel files read-only for fragd (`them`: "the path", "them"): the act drop-in
// under systemd, a writable mount in a container.
std::string read_only_fix(const std::string& them);

class SysfsActuator : public Actuator {
 public:
  explicit SysfsActuator(std::string proc_root = "/proc", std::string sys_root = "/sys");
  ~SysfsActuator() override;
  SysfsActuator(const SysfsActuator&) = delete;
  SysfsActuator& operator=(const SysfsActuator&) = delete;

  // Called around each compaction write's child process (concerns/act/child_write.h):
  // the daemon registers the child with its BPF programs. Set before the
  // first compaction, not while one may run.
  void set_writer_hooks(ChildWriteHooks hooks) { hooks_ = std::move(hooks); }
  // The last compaction write's child (pid, killed, time from kill to reaped).
  ChildWriteReport last_compaction_child() const;

  // Refused writes so far: (file pattern, errno name) -> count. Any thread.
  using WriteErrors = std::map<std::pair<std::string, std::string>, uint64_t>;
  WriteErrors write_errors() const;

  Result<void> compact_node(int node) override;
  // The node's compaction write, its child killed once /proc/buddyinfo (read every
  // kReachedPollMs) shows the blocks.
  Result<void> compact_node_until(int node, unsigned order, uint64_t blocks) override;
  Result<unsigned> read_proactiveness() override;
  Result<void> write_proactiveness(unsigned value) override;
  Result<unsigned> read_defrag_mode() override;
  Result<void> write_defrag_mode(unsigned value) override;
  Result<uint64_t> read_pool(int node, uint64_t size_kib) override;
  Result<void> write_pool(int node, uint64_t size_kib, uint64_t count) override;
  Result<void> grow_pool(int node, uint64_t size_kib, uint64_t count) override;  // in a child, killable
  // The child killed once `give_way` (polled every kReachedPollMs) is true.
  Result<void> grow_pool_giving_way(int node, uint64_t size_kib, uint64_t count,
                                    const std::function<bool()>& give_way) override;
  Result<uint64_t> mem_available_kib() override;
  Result<SpareMemory> spare_memory(int node) override;
  Result<uint64_t> free_blocks(int node, unsigned order) override;
  Result<unsigned> node_score(int node) override;
  Result<void> drop_caches() override;  // in a child, killable
  Result<void> refresh_vm_stats() override;
  bool stop_requested() override { return stop_.load(); }
  std::string tree_root(const std::string& canonical_file) const override;

  // From any thread: multi-step actions stop at their next step, and a
  // compaction write under way is killed. Irreversible.
  void request_stop();

  // The paths act mode writes (sysfs_actuator.h's list, the directories for the node and
  // hugepage trees) that exist and sit on a read-only mount for this process: a container's
  // /proc/sys, or fragd.service without the act drop-in. What fragd says at an act-mode start.
  std::vector<std::string> read_only_paths() const;

 private:
  std::string pool_path(int node, uint64_t size_kib) const;
  // compact_node, its writer stopped once `reached` (may be empty) is true.
  Result<void> compact(int node, std::function<bool()> reached);
  Result<void> write_pool(int node, uint64_t size_kib, uint64_t count, bool in_child,
                         std::function<bool()> reached = {});
  // `pattern` is the allow-listed file `path` is an instance of.
  // killable: from a child process that request_stop() kills.
  // reached: with killable, ends the write once it is true (ChildWriteHooks::reached).
  Result<void> write_value(const std::string& path, const char* pattern, const std::string& value,
                           bool killable = false, std::function<bool()> reached = {});
  Result<uint64_t> read_value(const std::string& path);

  std::string proc_, sys_;
  std::atomic<bool> stop_{false};
  int stop_fd_ = -1;  // eventfd, readable once stop is requested
  ChildWriteHooks hooks_;
  mutable std::mutex mu_;                        // the members below (worker and main thread)
  ChildWriteReport last_child_;
  WriteErrors write_errors_;
  std::map<std::string, std::string> refused_;  // path -> errno name of its last refused write
};

}  // namespace fragd
