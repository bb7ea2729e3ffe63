// SPDX-License-Identifier: Apache-2.0
#include "concerns/act/saved_state.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cerrno>
#include <string_view>

#include "base/text.h"
#include "kernel/procfs.h"

namespace fragd {
namespace {

constexpr std::string_view kHeader =
    "# fragd saved state: kernel settings fragd changed, each with the value it had before.\n"
    "# fragd puts them back when it stops, at the start of the next act-mode fragd, or with `fragd --restore`.\n";

// What a canonical file name stands for; nullopt: not a setting fragd saves.
struct Setting {
  bool pool = false;         // else a vm sysctl: compaction_proactiveness or defrag_mode
  bool defrag_mode = false;  // vm.defrag_mode (the guard)
  int node = -1;
  uint64_t size_kib = 0;
};

bool take(std::string_view& s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) != prefix) return false;
  s.remove_prefix(prefix.size());
  return true;
}

// Digits up to `stop` (consumed too).
bool take_number(std::string_view& s, std::string_view stop, uint64_t& out) {
  const auto end = s.find(stop);
  if (end == std::string_view::npos || end == 0 || !parse_u64(s.substr(0, end), out)) return false;
  s.remove_prefix(end + stop.size());
  return true;
}

std::optional<Setting> setting_of(const std::string& file) {
  if (file == kProactivenessFile) return Setting{};
  if (file == kDefragModeFile) return Setting{.defrag_mode = true};
  std::string_view s = file;
  Setting t;
  t.pool = true;
  uint64_t node = 0;
  if (take(s, "/sys/devices/system/node/node")) {
    if (!take_number(s, "/", node) || node > 1 << 20) return std::nullopt;
    t.node = static_cast<int>(node);
    if (!take(s, "hugepages/hugepages-")) return std::nullopt;
  } else if (!take(s, "/sys/kernel/mm/hugepages/hugepages-")) {
    return std::nullopt;
  }
  if (!take_number(s, "kB/", t.size_kib) || s != "nr_hugepages") return std::nullopt;
  return t;
}

Error unsafe(const std::string& path, const std::string& what) {
  return make_error(path + " " + what + ": fragd keeps the kernel settings it must put back there and will not " +
                        "use it; check who made it, put the settings right by hand if needed, then remove it",
                    EPERM);
}

}  // namespace

std::string tree_of(const std::string& file, const std::string& proc_root, const std::string& sys_root) {
  const std::string& root = file.compare(0, 5, "/sys/") == 0 ? sys_root : proc_root;
  char buf[PATH_MAX];
  if (realpath(root.c_str(), buf)) return buf;
  return root;
}

std::string Actuator::tree_root(const std::string& canonical_file) const {
  return tree_of(canonical_file, "/proc", "/sys");
}

std::string pool_file(int node, uint64_t size_kib) {
  const std::string leaf = "/hugepages/hugepages-" + std::to_string(size_kib) + "kB/nr_hugepages";
  return node < 0 ? "/sys/kernel/mm" + leaf : "/sys/devices/system/node/node" + std::to_string(node) + leaf;
}

std::string setting_name(const std::string& file) {
  constexpr std::string_view sys = "/proc/sys/";
  if (file.compare(0, sys.size(), sys) != 0) return file;
  std::string n = file.substr(sys.size());
  for (char& c : n)
    if (c == '/') c = '.';
  return n;
}

Result<void> check_state_dir(const std::string& dir, uid_t owner) {
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT) return sys_error("cannot look at " + dir);
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return sys_error("cannot make " + dir);
    if (lstat(dir.c_str(), &st) != 0) return sys_error("cannot look at " + dir);
  }
  if (S_ISLNK(st.st_mode)) return unsafe(dir, "is a symbolic link");
  if (!S_ISDIR(st.st_mode)) return unsafe(dir, "is not a directory");
  if (st.st_uid != owner) return unsafe(dir, "is owned by uid " + std::to_string(st.st_uid) + ", not " + std::to_string(owner));
  if (st.st_mode & 022) return unsafe(dir, "is writable by group or others");
  return {};
}

Result<void> write_file_atomic(const std::string& path, const std::string& text) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string tmp = path + ".new." + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST) {  // left by a fragd of the same pid that was killed mid-write
    unlink(tmp.c_str());
    fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  }
  if (fd < 0) return sys_error("cannot create " + tmp);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      close(fd);
      unlink(tmp.c_str());
      return sys_error("cannot write " + tmp, err);
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    const int err = errno;
    unlink(tmp.c_str());
    return sys_error("cannot flush " + tmp, err);
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(tmp.c_str());
    return sys_error("cannot rename " + tmp + " to " + path, err);
  }
  const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return sys_error("cannot open " + dir + " to flush the rename of " + path);
  const bool synced = fsync(dfd) == 0;
  const int err = errno;
  close(dfd);
  if (!synced) return sys_error("cannot flush " + dir + " after renaming " + path, err);
  return {};
}

Result<std::optional<std::string>> read_private_file(const std::string& path, uid_t owner) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    if (errno == ELOOP) return unsafe(path, "is a symbolic link");
    return sys_error("cannot open " + path);
  }
  struct stat st;
  Result<std::optional<std::string>> r = std::optional<std::string>();
  if (fstat(fd, &st) != 0) r = sys_error("cannot stat " + path);
  else if (!S_ISREG(st.st_mode)) r = unsafe(path, "is not a regular file");
  else if (st.st_uid != owner)
    r = unsafe(path, "is owned by uid " + std::to_string(st.st_uid) + ", not " + std::to_string(owner));
  else if (st.st_mode & 022) r = unsafe(path, "is writable by group or others");
  else if (auto t = read_text_fd(fd, path)) r = std::optional<std::string>(std::move(*t));
  else r = t.error();
  close(fd);
  return r;
}

Result<std::vector<SavedSetting>> parse_saved_state(const std::string& text, const std::string& path) {
  std::vector<SavedSetting> out;
  for (const auto& line : split_lines(text)) {
    const auto toks = tokenize(line.text);
    if (toks.empty() || toks[0][0] == '#') continue;
    const std::string where = path + ":" + std::to_string(line.no) + ": ";
    SavedSetting s;
    bool ok = toks.size() >= 2 && parse_u64(toks[1], s.value);
    for (size_t i = 2; ok && i < toks.size(); ++i) {
      std::string_view t = toks[i];
      uint64_t w = 0;
      if (take(t, "root=") && !t.empty() && s.root.empty()) s.root = std::string(t);
      else if (t = toks[i]; take(t, "wrote=") && !s.wrote && parse_u64(t, w)) s.wrote = w;
      else ok = false;
    }
    if (!ok)
      return make_error(where + "expected '<file> <value> [root=<tree>] [wrote=<value>]', read " + quote(line.text) +
                            "; fix the line (or put the setting right by hand and remove " + path + ")",
                        EINVAL);
    s.file = std::string(toks[0]);
    if (!setting_of(s.file))
      return make_error(where + quote(toks[0]) + " is not a setting fragd changes (" + kProactivenessFile + ", " +
                            kDefragModeFile + " or a hugepage pool's nr_hugepages); remove the line",
                        EINVAL);
    if (s.file == kProactivenessFile && s.value > 100)
      return make_error(where + "vm.compaction_proactiveness " + std::to_string(s.value) + " is not 0..100", EINVAL);
    if (s.file == kDefragModeFile && s.value > 1)
      return make_error(where + "vm.defrag_mode " + std::to_string(s.value) + " is not 0 or 1", EINVAL);
    for (const auto& e : out)
      if (e.file == s.file) return make_error(where + s.file + " is saved twice; keep one line", EINVAL);
    out.push_back(std::move(s));
  }
  return out;
}

Result<void> SavedState::load() {
  entries_.clear();
  loaded_ = false;
  auto t = read_private_file(path_, owner_);
  if (!t) return t.error();
  if (*t) {
    auto e = parse_saved_state(**t, path_);
    if (!e) return e.error();
    entries_ = std::move(*e);
  }
  loaded_ = true;
  return {};
}

std::optional<uint64_t> SavedState::find(const std::string& file) const {
  for (const auto& e : entries_)
    if (e.file == file) return e.value;
  return std::nullopt;
}

Result<void> SavedState::store() const {
  if (entries_.empty()) {
    if (unlink(path_.c_str()) != 0 && errno != ENOENT) return sys_error("cannot remove " + path_);
    return {};
  }
  std::string text(kHeader);
  for (const auto& e : entries_) {
    text += e.file + " " + std::to_string(e.value);
    if (!e.root.empty()) text += " root=" + e.root;
    if (e.wrote) text += " wrote=" + std::to_string(*e.wrote);
    text += "\n";
  }
  return write_file_atomic(path_, text);
}

Result<void> SavedState::remember(const std::string& file, uint64_t value, const std::string& root,
                                  std::optional<uint64_t> wrote) {
  if (root.find_first_of(" \t\n\r") != std::string::npos)
    return make_error("the tree " + quote(root) + " of " + setting_name(file) + " has white space, which " + path_ +
                          " cannot hold: the value to put back cannot be kept, so fragd does not change it "
                          "(use --path.procfs/--path.sysfs without white space)",
                      EINVAL);
  if (!loaded_)
    if (auto r = load(); !r) return r;
  for (auto& e : entries_) {
    if (e.file != file) continue;
    const std::string saved_in = e.root.empty() ? tree_of(file, "/proc", "/sys") : e.root;
    if (!root.empty() && saved_in != root)
      return make_error(setting_name(file) + " has the value " + std::to_string(e.value) + " saved in " + path_ +
                            " from " + saved_in + " by a fragd on that tree; fragd will not change it in " + root +
                            " until that one is put back (fragd --restore with that tree's --path.procfs/--path.sysfs)",
                        EBUSY);
    if (e.value != value)
      return make_error(setting_name(file) + " still has the value " + std::to_string(e.value) + " saved in " +
                            path_ + " by an earlier fragd, and it could not be put back; fragd will not change it "
                            "again until it is (fragd --restore, or write it by hand and remove the line)",
                        EBUSY);
    if ((wrote && e.wrote != wrote) || (e.root.empty() && !root.empty())) {
      const SavedSetting old = e;
      if (wrote) e.wrote = wrote;
      if (e.root.empty()) e.root = root;
      if (auto r = store(); !r) {
        e = old;
        return r;
      }
    }
    return {};
  }
  entries_.push_back({file, value, root, wrote});
  if (auto r = store(); !r) {
    entries_.pop_back();
    return make_error(r.error().message + ": the value to put back (" + setting_name(file) + " " +
                          std::to_string(value) + ") cannot be kept, so fragd does not change it",
                      r.error().err);
  }
  return {};
}

Result<void> SavedState::forget(const std::string& file) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->file == file) {
      entries_.erase(it);
      return store();
    }
  return {};
}

RestoreReport restore_saved(SavedState& s, Actuator& a) {
  RestoreReport rep;
  const auto entries = s.entries();
  for (const auto& e : entries) {
    const auto t = setting_of(e.file);
    const std::string here = a.tree_root(e.file);
    const std::string saved_in = e.root.empty() ? tree_of(e.file, "/proc", "/sys") : e.root;
    if (saved_in != here) {
      rep.notes.push_back(setting_name(e.file) + " " + std::to_string(e.value) + " not restored: it was saved from " +
                          saved_in + ", and this fragd writes " + here + " (kept in " + s.path() +
                          " for `fragd --restore` with that tree's --path.procfs/--path.sysfs)");
      continue;
    }
    if (t && e.wrote) {  // only a value fragd wrote is fragd's to put back
      Result<uint64_t> cur = t->pool ? a.read_pool(t->node, t->size_kib) : [&]() -> Result<uint64_t> {
        auto p = t->defrag_mode ? a.read_defrag_mode() : a.read_proactiveness();
        if (!p) return p.error();
        return uint64_t{*p};
      }();
      if (!cur) {
        rep.failed.push_back("could not restore " + setting_name(e.file) + " " + std::to_string(e.value) +
                             ": cannot read its value now: " + cur.error().message + " (kept in " + s.path() + ")");
        continue;
      }
      const uint64_t lo = std::min(e.value, *e.wrote), hi = std::max(e.value, *e.wrote);
      const bool fragds = t->pool ? (*cur >= lo && *cur <= hi) : *cur == *e.wrote;
      if (!fragds) {
        rep.notes.push_back(setting_name(e.file) + " not restored to " + std::to_string(e.value) + ": it reads " +
                            std::to_string(*cur) + ", not the " + std::to_string(*e.wrote) +
                            " fragd wrote: someone set it since, and fragd leaves it (dropped from " + s.path() + ")");
        if (auto f = s.forget(e.file); !f) rep.failed.push_back(f.error().message);
        continue;
      }
    }
    Result<void> w = !t ? make_error("not a setting fragd changes", EINVAL)
                     : t->pool        ? a.write_pool(t->node, t->size_kib, e.value)
                     : t->defrag_mode ? a.write_defrag_mode(static_cast<unsigned>(e.value))
                                      : a.write_proactiveness(static_cast<unsigned>(e.value));
    const std::string what = setting_name(e.file) + " " + std::to_string(e.value);
    if (!w) {
      rep.failed.push_back("could not restore " + what + ": " + w.error().message + " (kept in " + s.path() + ")");
      continue;
    }
    if (auto f = s.forget(e.file); !f) rep.failed.push_back("restored " + what + " but " + f.error().message);
    rep.restored.push_back(setting_name(e.file) + " restored to " + std::to_string(e.value));
  }
  return rep;
}

std::optional<std::string> adopt_legacy_state(SavedState& s, const std::string& legacy) {
  auto t = read_private_file(legacy, geteuid());
  if (!t) return t.error().message;
  if (!*t) return std::nullopt;
  const auto toks = tokenize(**t);
  uint64_t v = 0;
  if (toks.size() != 1 || !parse_u64(toks[0], v) || v > 100) {
    unlink(legacy.c_str());
    return "ignored " + legacy + ": " + quote(**t) + " is not a proactiveness value 0..100";
  }
  if (auto r = s.remember(kProactivenessFile, v); !r) return r.error().message;
  unlink(legacy.c_str());
  return "took the vm.compaction_proactiveness value " + std::to_string(v) + " to put back from " + legacy +
         " (fragd 0.1's file) into " + s.path();
}

Result<RestoreReport> restore_left_behind(Actuator& a, const std::string& file, const std::string& legacy) {
  SavedState s(file);
  if (auto r = s.load(); !r) return r.error();
  std::optional<std::string> adopted = adopt_legacy_state(s, legacy);
  RestoreReport rep = restore_saved(s, a);
  if (adopted) rep.notes.insert(rep.notes.begin(), *adopted);
  return rep;
}

Result<HostClaim> claim_host_settings(Actuator& a, const std::string& what) {
  if (auto r = check_state_dir(kRunDir, geteuid()); !r) return r.error();
  auto lock = ActLock::acquire(kActLockFile, what);
  if (!lock) return lock.error();
  auto rep = restore_left_behind(a);
  if (!rep) return make_error("cannot " + what + ": " + rep.error().message, rep.error().err);
  return HostClaim{std::move(*lock), std::move(*rep)};
}

}  // namespace fragd
