// SPDX-License-Identifier: Apache-2.0
// Kernel function names for the return addresses of stall stacks, from
// /proc/kallsyms. The kernel shows real addresses only to a reader that held
// CAP_SYSLOG when it opened the file (kptr_restrict 0 or 1), and checks the
// opener's credentials, not the reader's: fragd opens it before dropping its
// capabilities and keeps the descriptor, so it can read the file again later,
// when a stack holds an address it has not named yet (a module loaded since).
//
// Nothing is kept but the names of the addresses asked for: each new batch of
// addresses costs one pass over the file (about 5 MB, 50 ms here), none once
// every address seen is named.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace fragd {

class KernelSymbols {
 public:
  // Takes `fd` (an open /proc/kallsyms, or -1: no symbols); `path` names it in messages.
  KernelSymbols(int fd, std::string path);
  ~KernelSymbols();
  KernelSymbols(const KernelSymbols&) = delete;
  KernelSymbols& operator=(const KernelSymbols&) = delete;

  // Names every address of `addrs` not named yet, in one pass over the file.
  void resolve(const std::vector<uint64_t>& addrs);
  // The function holding `addr` ("" when unknown), without its ".isra.0"-style suffix.
  std::string name(uint64_t addr) const;
  // False when the file showed no address (opened without CAP_SYSLOG) or could not be read.
  bool usable() const { return usable_; }
  const std::string& why_not() const { return why_not_; }
  uint64_t passes() const { return passes_; }

  // The pass itself, on the text of a kallsyms file (unit tests): for each address,
  // the text symbol at or below it, if within kMaxFunctionBytes.
  static std::map<uint64_t, std::string> name_addresses(std::string_view text, const std::vector<uint64_t>& addrs);
  // A function longer than this is taken for a gap (an address in a module loaded later).
  static constexpr uint64_t kMaxFunctionBytes = 1 << 20;

 private:
  int fd_;
  std::string path_;
  bool usable_ = true;
  std::string why_not_;
  uint64_t passes_ = 0;
  std::map<uint64_t, std::string> names_;  // "" for an address no symbol holds
};

}  // namespace fragd
