// SPDX-License-Identifier: Apache-2.0
#include "concerns/attribution/cgroups.h"

#include <sys/stat.h>

#include <filesystem>

#include "base/text.h"

namespace fragd {

namespace fs = std::filesystem;

CgroupPaths::CgroupPaths(const std::string& sys_root, size_t max_dirs, std::function<uint64_t()> clock)
    : max_dirs_(max_dirs), clock_(clock ? std::move(clock) : [] { return now_ns(CLOCK_MONOTONIC); }) {
  std::error_code ec;
  for (const char* rel : {"/fs/cgroup", "/fs/cgroup/unified"})
    if (fs::exists(sys_root + rel + "/cgroup.controllers", ec)) {
      root_ = sys_root + rel;
      break;
    }
}

void CgroupPaths::new_round() {
  if (walked_ && walks_ && clock_() - walk_end_ns_ < kWalkGapFactor * walk_ns_) return;
  walked_ = false;
}

void CgroupPaths::walk() {
  walks_++;
  paths_.clear();
  truncated_ = false;
  if (root_.empty()) return;
  const uint64_t t0 = clock_();
  struct stat st {};
  // assign(1, '/'), not = "/": GCC 12 at -O2 warns of a memcpy overlap that cannot happen (PR105329).
  if (::stat(root_.c_str(), &st) == 0) paths_[st.st_ino].assign(1, '/');
  std::error_code ec;
  size_t dirs = 0;
  fs::recursive_directory_iterator it(root_, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (it->is_symlink(ec) || !it->is_directory(ec)) {
      continue;
    }
    if (++dirs > max_dirs_) {
      truncated_ = true;
      break;
    }
    if (::stat(it->path().c_str(), &st) != 0) continue;
    paths_[st.st_ino] = it->path().string().substr(root_.size());
  }
  walk_end_ns_ = clock_();
  walk_ns_ = walk_end_ns_ - t0;
}

std::optional<std::string> CgroupPaths::path(uint64_t id) {
  auto it = paths_.find(id);
  if (it == paths_.end() || !exists(id, it->second)) {
    if (walked_) return std::nullopt;
    walked_ = true;
    walk();
    it = paths_.find(id);
    if (it == paths_.end()) return std::nullopt;
  }
  return it->second;
}

bool CgroupPaths::exists(uint64_t id, const std::string& path) {
  if (root_.empty()) return false;
  struct stat st {};
  return ::stat((root_ + (path == "/" ? "" : path)).c_str(), &st) == 0 && st.st_ino == id;
}

}  // namespace fragd
