// SPDX-License-Identifier: Apache-2.0
#include "fragd/privileges.h"

#include <dirent.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

namespace fragd {
namespace {

struct CapFree {
  void operator()(void* p) const { cap_free(p); }
};
using CapPtr = std::unique_ptr<std::remove_pointer_t<cap_t>, CapFree>;

std::string cap_text(cap_t c) {
  ssize_t len = 0;
  char* t = cap_to_text(c, &len);
  if (!t) return "?";
  std::string s(t, static_cast<size_t>(len));
  cap_free(t);
  return s;
}

size_t thread_count() {
  size_t n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') n++;
    closedir(d);
  }
  return n;
}

}  // namespace

std::string effective_capabilities() {
  CapPtr now(cap_get_proc());
  return now ? cap_text(now.get()) : "?";
}

Result<std::string> drop_capabilities() {
  if (const size_t n = thread_count(); n > 1)
    return make_error("cannot drop capabilities: fragd already runs " + std::to_string(n) +
                          " threads and capabilities are per thread (this is a bug in fragd's start-up order)",
                      EBUSY);
  CapPtr before(cap_get_proc());
  if (!before) return sys_error("read fragd's capabilities (cap_get_proc)");
  const std::string had = cap_text(before.get());

  // Which capability, if any, is kept: none as root (mode bits let uid 0 in).
  std::vector<cap_value_t> keep;
  std::string why = "none: every later access is an fd opened before (BPF maps, links, ring buffer, "
                    "/proc/iomem, /proc/kallsyms) or a root-owned file uid 0 may open by its mode bits";
  if (geteuid() != 0) {
    cap_flag_value_t v = CAP_CLEAR;
    cap_get_flag(before.get(), CAP_DAC_OVERRIDE, CAP_PERMITTED, &v);
    if (v == CAP_SET) {
      keep.push_back(CAP_DAC_OVERRIDE);
      why = "cap_dac_override: fragd runs as uid " + std::to_string(geteuid()) +
            " and reads and writes root-owned /proc and /sys files";
    }
  }

  // Bounding set: needs CAP_SETPCAP; under systemd the unit's CapabilityBoundingSet already bounds it.
  std::string bounding = "bounding set emptied";
  cap_flag_value_t setpcap = CAP_CLEAR;
  cap_get_flag(before.get(), CAP_SETPCAP, CAP_EFFECTIVE, &setpcap);
  if (setpcap == CAP_SET) {
    for (cap_value_t c = 0; c <= cap_max_bits() - 1; c++) {
      bool kept = false;
      for (auto k : keep) kept |= k == c;
      if (!kept && CAP_IS_SUPPORTED(c) && cap_get_bound(c) == 1 && cap_drop_bound(c) != 0)
        return sys_error("drop capability " + std::to_string(c) + " from the bounding set");
    }
  } else {
    bounding = "bounding set left as started (no cap_setpcap to change it)";
  }
  if (cap_reset_ambient() != 0 && errno != EINVAL) return sys_error("clear the ambient capabilities");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return sys_error("set no_new_privs");

  CapPtr after(cap_init());
  if (!after) return sys_error("cap_init");
  if (!keep.empty()) {
    cap_set_flag(after.get(), CAP_EFFECTIVE, static_cast<int>(keep.size()), keep.data(), CAP_SET);
    cap_set_flag(after.get(), CAP_PERMITTED, static_cast<int>(keep.size()), keep.data(), CAP_SET);
  }
  if (cap_set_proc(after.get()) != 0) return sys_error("set fragd's capabilities (cap_set_proc)");
  // Still uid 0 and now without capabilities: without this, any root process, even one
  // without CAP_SYS_PTRACE, could ptrace fragd or open its /proc/PID/mem, and a crash
  // would dump its memory.
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return sys_error("make fragd not dumpable (PR_SET_DUMPABLE)");
  return "capabilities after attaching: had " + had + ", now " + effective_capabilities() + "; kept " + why +
         "; " + bounding + "; no_new_privs set; not dumpable";
}

}  // namespace fragd
