// SPDX-License-Identifier: Apache-2.0
// cgroup v2 ids, as bpf_get_current_cgroup_id() returns them (the inode number
// of the cgroup's directory in the v2 hierarchy), to the cgroup's path as the
// host sees it: "/" for the root, "/kubepods.slice/kubepods-pod<UID>.slice/..."
// on Kubernetes.
#pragma once

#include <cstdint>
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

class CgroupPaths : public CgroupLookup {
 public:
  // The v2 hierarchy under `sys_root`: fs/cgroup when it is cgroup2 (cgroup.controllers at its
  // top), else fs/cgroup/unified (a hybrid host). No hierarchy: every path() is empty.
  explicit CgroupPaths(const std::string& sys_root);
  std::optional<std::string> path(uint64_t id) override;
  bool exists(uint64_t id, const std::string& path) override;
  void new_round() override { walked_ = false; }
  bool available() const override { return !root_.empty(); }
  const std::string& root() const { return root_; }
  uint64_t walks() const { return walks_; }

 private:
  void walk();
  std::string root_;                       // "" when there is none
  std::map<uint64_t, std::string> paths_;  // as of the last walk
  uint64_t walks_ = 0;
  bool walked_ = false;  // in this round
};

}  // namespace fragd
