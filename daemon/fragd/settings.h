// SPDX-License-Identifier: Apache-2.0
// What the configuration asks of each part fragd starts: the BPF loader's options, the
// pageblock scanner's settings, and where the kernel's symbols are read from.
#pragma once

#include <cstdint>
#include <string>

#include "policy/config.h"
#include "concerns/pageblocks/scanner.h"
#include "concerns/programs/programs.h"

namespace fragd {

// The loader's options from `cfg`; `self_tgid` is getpid(), `max_pfn` the highest zone end
// (0: unknown), which sizes the pollution ledger.
BpfOptions bpf_options(const Config& cfg, uint32_t self_tgid, uint64_t max_pfn);

// The scanner's settings from `cfg`, for pageblocks of `pageblock_order`.
ScanSettings scan_settings(const Config& cfg, unsigned pageblock_order);

// /proc/kallsyms shows addresses only to a reader that opened it with CAP_SYSLOG: opened before
// the capabilities go. A copy named by --path.kallsyms (taken by the unit before its sandbox
// hides the real file) is deleted once open: the descriptor is all fragd needs, and no file of
// kernel addresses stays behind. `fd` is -1 when it could not be opened; `warning` says what
// went wrong, if anything.
struct KallsymsFile {
  int fd = -1;
  std::string path, warning;
};
KallsymsFile open_kallsyms(const Config& cfg);

}  // namespace fragd
