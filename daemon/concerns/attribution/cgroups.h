// SPDX-License-Identifier: Apache-2.0
// cgroup v2 ids, as bpf_get_current_cgroup_id() returns them (the inode number
// of the cgroup's directory in the v2 hierarchy), to the cgroup's path as the
// host sees it: "/" for the root, "/kubepods.slice/kubepods-pod<UID>.slice/..."
// on Kubernetes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace fragd {

// What the attribution needs of the cgroup tree (a fake in unit tests).
class CgroupLookup {
 public:
  virtual ~CgroupLookup() = default;
  // The path of cgroup `id`, or nothing when no cgroup has that id now.
  virtual std::optional<std::string> path(uint64_t id) = 0;
  // Whether `path` is still the cgroup `id` (not deleted).
  virtual bool exists(uint64_t id, const std::string& path) = 0;
  // A new round of lookups (one tick): CgroupPaths walks the tree at most once per round.
  virtual void new_round() {}
  // False when there is no hierarchy to look in (no cgroup2 mount): an id without a path is
  // then not a deleted cgroup.
  virtual bool available() const { return true; }
};

// The walk that names a new cgroup runs in fragd's main loop, so it is bounded: at most one a
// round, and none until kWalkGapFactor times the last walk's duration has passed since it
// ended (a tree that takes 1 ms to walk may be walked every round, one that takes 50 ms every
// 5 s: walks cost at most 1% of the loop however many cgroups a delegated subtree holds); and a
// walk reads at most `max_dirs` directories (truncated() then says so).
class CgroupPaths : public CgroupLookup {
 public:
  static constexpr uint64_t kWalkGapFactor = 100;
  static constexpr size_t kMaxDirs = 100000;
  // The v2 hierarchy under `sys_root`: fs/cgroup when it is cgroup2 (cgroup.controllers at its
  // top), else fs/cgroup/unified (a hybrid host). No hierarchy: every path() is empty.
  // `clock`: CLOCK_MONOTONIC in ns (a test's own in unit tests).
  explicit CgroupPaths(const std::string& sys_root, size_t max_dirs = kMaxDirs,
                       std::function<uint64_t()> clock = {});
  std::optional<std::string> path(uint64_t id) override;
  bool exists(uint64_t id, const std::string& path) override;
  void new_round() override;
  bool available() const override { return !root_.empty(); }
  const std::string& root() const { return root_; }
  uint64_t walks() const { return walks_; }
  bool truncated() const { return truncated_; }

 private:
  void walk();
  std::string root_;                       // "" when there is none
  size_t max_dirs_;
  std::function<uint64_t()> clock_;
  std::map<uint64_t, std::string> paths_;  // as of the last walk
  uint64_t walks_ = 0;
  bool walked_ = false;  // in this round, or the last walk too recent
  bool truncated_ = false;
  uint64_t walk_end_ns_ = 0, walk_ns_ = 0;  // when the last walk ended, and what it took
};

}  // namespace fragd
