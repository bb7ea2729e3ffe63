// SPDX-License-Identifier: Apache-2.0
#include "sources/attribution/cgroups.h"

#include <sys/stat.h>

#include <filesystem>

namespace fragd {

namespace fs = std::filesystem;

CgroupPaths::CgroupPaths(const std::string& sys_root) {
  std::error_code ec;
  for (const char* rel : {"/fs/cgroup", "/fs/cgroup/unified"})
    if (fs::exists(sys_root + rel + "/cgroup.controllers", ec)) {
      root_ = sys_root + rel;
      break;
    }
}

void CgroupPaths::walk() {
  walks_++;
  paths_.clear();
  if (root_.empty()) return;
  struct stat st {};
  // assign(1, '/'), not = "/": GCC 12 at -O2 warns of a memcpy overlap that cannot happen (PR105329).
  if (::stat(root_.c_str(), &st) == 0) paths_[st.st_ino].assign(1, '/');
  std::error_code ec;
  fs::recursive_directory_iterator it(root_, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (it->is_symlink(ec) || !it->is_directory(ec)) {
      continue;
    }
    if (::stat(it->path().c_str(), &st) != 0) continue;
    paths_[st.st_ino] = it->path().string().substr(root_.size());
  }
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
