// SPDX-License-Identifier: Apache-2.0
#include "kernel/kallsyms.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace fragd {

KernelSymbols::KernelSymbols(int fd, std::string path) : fd_(fd), path_(std::move(path)) {
  if (fd_ < 0) {
    usable_ = false;
    why_not_ = "cannot open " + path_;
  }
}

KernelSymbols::~KernelSymbols() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

// One pass over kallsyms lines: for each wanted address, the highest text symbol at or below it
// within kMaxFunctionBytes. Lines are fed one at a time, so the file is never held whole.
class Namer {
 public:
  explicit Namer(const std::vector<uint64_t>& addrs) : want_(addrs) {
    std::sort(want_.begin(), want_.end());
    want_.erase(std::unique(want_.begin(), want_.end()), want_.end());
    best_addr_.assign(want_.size(), 0);
    best_name_.assign(want_.size(), std::string());
  }

  // "ffffffff81000000 T _stext" or "ffffffffc0a01000 t foo\t[module]"
  void line(std::string_view line) {
    const size_t sp1 = line.find(' ');
    if (sp1 == std::string_view::npos || sp1 + 3 >= line.size() || line[sp1 + 2] != ' ') return;
    const char type = line[sp1 + 1];
    if (type != 't' && type != 'T' && type != 'w' && type != 'W') return;
    uint64_t a = 0;
    if (sp1 == 0 || sp1 > 16) return;
    for (size_t i = 0; i < sp1; i++) {
      const char c = line[i];
      const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (d < 0) return;
      a = a << 4 | static_cast<uint64_t>(d);
    }
    if (a == 0) return;
    std::string_view name = line.substr(sp1 + 3);
    if (const size_t tab = name.find_first_of("\t "); tab != std::string_view::npos) name = name.substr(0, tab);
    // The addresses this symbol may hold: those at or above it (and above their best so far).
    for (auto it = std::lower_bound(want_.begin(), want_.end(), a);
         it != want_.end() && *it - a < KernelSymbols::kMaxFunctionBytes; ++it) {
      const size_t i = static_cast<size_t>(it - want_.begin());
      if (a >= best_addr_[i]) {
        best_addr_[i] = a;
        best_name_[i].assign(name);
      }
    }
  }

  std::map<uint64_t, std::string> names() const {
    std::map<uint64_t, std::string> out;
    for (size_t i = 0; i < want_.size(); i++) {
      std::string n = best_name_[i];
      if (const size_t dot = n.find('.'); dot != std::string::npos && dot > 0) n.resize(dot);
      out[want_[i]] = n;
    }
    return out;
  }

 private:
  std::vector<uint64_t> want_, best_addr_;
  std::vector<std::string> best_name_;
};

}  // namespace

std::map<uint64_t, std::string> KernelSymbols::name_addresses(std::string_view text,
                                                               const std::vector<uint64_t>& addrs) {
  Namer n(addrs);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    n.line(text.substr(pos, eol - pos));
    pos = eol + 1;
  }
  return n.names();
}

void KernelSymbols::resolve(const std::vector<uint64_t>& addrs) {
  std::vector<uint64_t> todo;
  for (uint64_t a : addrs)
    if (!names_.count(a)) todo.push_back(a);
  if (todo.empty()) return;
  if (!usable_) {
    for (uint64_t a : todo) names_[a] = "";
    return;
  }
  // One pass in 64 KiB reads, line by line: the file (about 5 MB) is never held whole.
  passes_++;
  Namer namer(todo);
  std::string carry;
  char buf[65536];
  bool any = false, all_zero = true, failed = ::lseek(fd_, 0, SEEK_SET) < 0;
  while (!failed) {
    const ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) failed = true;
    if (n <= 0) break;
    size_t start = 0;
    for (size_t i = 0; i < static_cast<size_t>(n); i++) {
      if (buf[i] != '\n') continue;
      std::string_view line(buf + start, i - start);
      if (!carry.empty()) {
        carry.append(line);
        line = carry;
      }
      if (!line.empty()) {
        any = true;
        all_zero = all_zero && line.compare(0, 16, "0000000000000000") == 0;
        namer.line(line);
      }
      carry.clear();
      start = i + 1;
    }
    carry.append(buf + start, static_cast<size_t>(n) - start);
  }
  if (failed) {
    usable_ = false;
    why_not_ = "cannot read " + path_ + ": " + std::strerror(errno);
  } else if (!any || all_zero) {
    usable_ = false;
    why_not_ = path_ + " shows every address as 0: fragd opened it without CAP_SYSLOG (add CAP_SYSLOG to the "
                       "unit's CapabilityBoundingSet, or run fragctl as root)";
  }
  if (!usable_) {
    for (uint64_t a : todo) names_[a] = "";
    return;
  }
  for (auto& [a, n] : namer.names()) names_[a] = std::move(n);
}

std::string KernelSymbols::name(uint64_t addr) const {
  auto it = names_.find(addr);
  return it == names_.end() ? std::string() : it->second;
}

}  // namespace fragd
