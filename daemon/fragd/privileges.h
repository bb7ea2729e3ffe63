// SPDX-License-Identifier: Apache-2.0
// Least privilege after start-up. Loading and attaching the BPF programs needs
// CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN), and /proc/iomem shows addresses
// only to an opener with CAP_SYS_ADMIN. Once those are done, everything fragd
// touches is either an fd it already holds (BPF maps, the ring buffer, links,
// /proc/iomem) or a root-owned file whose mode bits let uid 0 in without any
// capability (/proc/kpageflags, /proc/pagetypeinfo 0400; /proc/sys/vm/* and the
// node and hugepage sysfs files it writes, 0200/0644). So fragd running as root
// drops every capability; run as another user with capabilities, it keeps
// CAP_DAC_OVERRIDE for those root-owned files.
#pragma once

#include <string>

#include "base/result.h"

namespace fragd {

// Drops capabilities from the effective, permitted, inheritable and ambient sets
// and (with CAP_SETPCAP) the bounding set, sets no_new_privs so that no exec
// regains them, and makes fragd not dumpable (no core dump; its /proc/PID/mem,
// kernel stack and ptrace only for holders of CAP_SYS_PTRACE). Must run while
// fragd has one thread: capabilities are per thread.
// Returns a log line saying what was dropped and what was kept, and why.
Result<std::string> drop_capabilities();

// The effective capabilities of the calling thread as text ("=" when none).
std::string effective_capabilities();

}  // namespace fragd
