#include "kernel/kallsyms.h"

#include <unistd.h>

#include <algorithm>

#include "kernel/procfs.h"

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

std::map<uint64_t, std::string> KernelSymbols::name_addresses(std::string_view text,
                                                               const std::vector<uint64_t>& addrs) {
  std::vector<uint64_t> want(addrs);
  std::sort(want.begin(), want.end());
  want.erase(std::unique(want.begin(), want.end()), want.end());
  // best[i]: the highest text symbol at or below want[i] seen so far.
  std::vector<uint64_t> best_addr(want.size(), 0);
  std::vector<std::string_view> best_name(want.size());
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    const std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    // "ffffffff81000000 T _stext" or "ffffffffc0a01000 t foo\t[module]"
    const size_t sp1 = line.find(' ');
    if (sp1 == std::string_view::npos || sp1 + 3 >= line.size() || line[sp1 + 2] != ' ') continue;
    const char type = line[sp1 + 1];
    if (type != 't' && type != 'T' && type != 'w' && type != 'W') continue;
    uint64_t a = 0;
    bool ok = sp1 > 0;
    for (size_t i = 0; i < sp1 && ok; i++) {
      const char c = line[i];
      const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (d < 0) ok = false;
      else a = a << 4 | static_cast<uint64_t>(d);
    }
    if (!ok || a == 0) continue;
    std::string_view name = line.substr(sp1 + 3);
    if (const size_t tab = name.find_first_of("\t "); tab != std::string_view::npos) name = name.substr(0, tab);
    // The addresses this symbol may hold: those at or above it (and above their best so far).
    for (auto it = std::lower_bound(want.begin(), want.end(), a); it != want.end() && *it - a < kMaxFunctionBytes;
         ++it) {
      const size_t i = static_cast<size_t>(it - want.begin());
      if (a >= best_addr[i]) {
        best_addr[i] = a;
        best_name[i] = name;
      }
    }
  }
  std::map<uint64_t, std::string> out;
  for (size_t i = 0; i < want.size(); i++) {
    std::string n(best_name[i]);
    if (const size_t dot = n.find('.'); dot != std::string::npos && dot > 0) n.resize(dot);
    out[want[i]] = n;
  }
  return out;
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
  auto text = read_text_fd(fd_, path_);
  passes_++;
  if (!text) {
    usable_ = false;
    why_not_ = text.error().message;
  } else if (text->find('\n') != std::string::npos && text->compare(0, 16, "0000000000000000") == 0) {
    usable_ = false;
    why_not_ = path_ + " shows every address as 0: fragd opened it without CAP_SYSLOG (add CAP_SYSLOG to the "
                       "unit's CapabilityBoundingSet, or run fragctl as root)";
  }
  if (!usable_) {
    for (uint64_t a : todo) names_[a] = "";
    return;
  }
  for (auto& [a, n] : name_addresses(*text, todo)) names_[a] = std::move(n);
}

std::string KernelSymbols::name(uint64_t addr) const {
  auto it = names_.find(addr);
  return it == names_.end() ? std::string() : it->second;
}

}  // namespace fragd
