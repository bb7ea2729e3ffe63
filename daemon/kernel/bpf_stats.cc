// SPDX-License-Identifier: Apache-2.0
#include "kernel/bpf_stats.h"

#include <bpf/bpf.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "base/text.h"
#include "kernel/procfs.h"

namespace fragd {
namespace {

std::optional<uint64_t> pgfault(const std::string& proc_root) {
  const std::string path = proc_root + "/vmstat";
  auto text = read_text_file(path);
  if (!text) return std::nullopt;
  auto kv = parse_vmstat(*text, path);
  if (!kv) return std::nullopt;
  auto it = kv->find("pgfault");
  return it == kv->end() ? std::nullopt : std::optional<uint64_t>(it->second);
}

bool prog_info(int fd, bpf_prog_info& info) {
  info = {};
  uint32_t len = sizeof(info);
  return bpf_obj_get_info_by_fd(fd, &info, &len) == 0;
}

}  // namespace

Result<RunStatsWindow> measure_run_stats(const std::vector<uint32_t>& ids, double seconds, int interrupt_fd,
                                         const std::string& proc_root) {
  // The stats fd first: run times accrue only while it is held (or kernel.bpf_stats_enabled is 1).
  const int stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
  if (stats_fd < 0) {
    const int e = errno;
    return make_error(std::string("cannot turn on BPF run-time statistics (BPF_ENABLE_STATS): ") + std::strerror(e) +
                          (e == EPERM ? "; it needs CAP_SYS_ADMIN: run as root" : ""),
                      e);
  }
  std::vector<int> fds;
  std::vector<bpf_prog_info> before(ids.size());
  auto release = [&] {
    for (int fd : fds) ::close(fd);
    ::close(stats_fd);
  };
  for (size_t i = 0; i < ids.size(); ++i) {
    const int fd = bpf_prog_get_fd_by_id(ids[i]);
    if (fd < 0 || !prog_info(fd, before[i])) {
      const int e = errno;
      if (fd >= 0) ::close(fd);
      release();
      return make_error("cannot open BPF program id " + std::to_string(ids[i]) + ": " + std::strerror(e) +
                            (e == EPERM ? "; run as root" : ""),
                        e);
    }
    fds.push_back(fd);
  }
  const auto f0 = pgfault(proc_root);
  const uint64_t t0 = now_ns();
  pollfd pfd{interrupt_fd, POLLIN, 0};
  (void)::poll(&pfd, interrupt_fd >= 0 ? 1 : 0, static_cast<int>(seconds * 1000));
  const uint64_t t1 = now_ns();
  const auto f1 = pgfault(proc_root);
  RunStatsWindow w;
  w.seconds = static_cast<double>(t1 - t0) / 1e9;
  if (f0 && f1) w.page_faults = *f1 - *f0;
  for (size_t i = 0; i < ids.size(); ++i) {
    WindowRunStats p;
    p.id = ids[i];
    bpf_prog_info after{};
    if ((p.read = prog_info(fds[i], after))) {
      p.runs = after.run_cnt - before[i].run_cnt;
      p.run_ns = after.run_time_ns - before[i].run_time_ns;
      p.recursion_misses = after.recursion_misses - before[i].recursion_misses;
    }
    w.programs.push_back(p);
  }
  release();
  return w;
}

}  // namespace fragd
