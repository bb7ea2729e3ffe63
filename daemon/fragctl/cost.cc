// SPDX-License-Identifier: Apache-2.0
#include "fragctl/cost.h"

#include <bpf/bpf.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "kernel/procfs.h"
#include "base/text.h"

namespace fragd::ctl {
namespace {

struct Prog {
  std::string name, tracepoint;
  uint32_t id = 0;
  bool attached = false;
  int fd = -1;
  bpf_prog_info before{}, after{};
};

Result<uint64_t> pgfault() {
  auto text = read_text_file("/proc/vmstat");
  if (!text) return text.error();
  auto kv = parse_vmstat(*text, "/proc/vmstat");
  if (!kv) return kv.error();
  auto it = kv->find("pgfault");
  if (it == kv->end()) return make_error("/proc/vmstat has no pgfault line", ENOENT);
  return it->second;
}

bool prog_info(int fd, bpf_prog_info& info) {
  info = {};
  uint32_t len = sizeof(info);
  return bpf_obj_get_info_by_fd(fd, &info, &len) == 0;
}

}  // namespace

Result<nlohmann::json> measure_cost(const nlohmann::json& status, double seconds, int interrupt_fd) {
  std::vector<Prog> progs;
  if (!status.contains("programs") || !status["programs"].is_array())
    return make_error("fragd's status answer has no program list (an older fragd?)");
  for (const auto& p : status["programs"]) {
    Prog g;
    g.name = p.value("name", std::string("?"));
    g.tracepoint = p.value("tracepoint", std::string("?"));
    g.id = p.value("id", 0u);
    g.attached = p.value("attached", false);
    if (g.id) progs.push_back(std::move(g));
  }
  if (progs.empty()) return make_error("fragd reports no loaded BPF program ids");

  // The stats fd first: run times accrue only while it is held (or kernel.bpf_stats_enabled is 1).
  const int stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
  if (stats_fd < 0) {
    const int e = errno;
    return make_error(std::string("cannot turn on BPF run-time statistics (BPF_ENABLE_STATS): ") + std::strerror(e) +
                          (e == EPERM ? "; it needs CAP_SYS_ADMIN: run fragctl cost as root" : ""),
                      e);
  }
  auto release = [&] { ::close(stats_fd); };
  for (auto& g : progs) {
    g.fd = bpf_prog_get_fd_by_id(g.id);
    if (g.fd < 0 || !prog_info(g.fd, g.before)) {
      const int e = errno;
      for (auto& h : progs)
        if (h.fd >= 0) ::close(h.fd);
      release();
      return make_error("cannot open BPF program " + g.name + " (id " + std::to_string(g.id) + "): " +
                            std::strerror(e) + (e == EPERM ? "; run fragctl cost as root" : ""),
                        e);
    }
  }
  auto f0 = pgfault();
  const uint64_t t0 = now_ns();
  pollfd pfd{interrupt_fd, POLLIN, 0};
  (void)::poll(&pfd, interrupt_fd >= 0 ? 1 : 0, static_cast<int>(seconds * 1000));
  const uint64_t t1 = now_ns();
  auto f1 = pgfault();
  nlohmann::json out;
  nlohmann::json list = nlohmann::json::array();
  for (auto& g : progs) {
    const bool ok = prog_info(g.fd, g.after);
    ::close(g.fd);
    if (!ok) continue;
    list.push_back({{"name", g.name},
                    {"tracepoint", g.tracepoint},
                    {"id", g.id},
                    {"attached", g.attached},
                    {"runs", g.after.run_cnt - g.before.run_cnt},
                    {"run_ns", g.after.run_time_ns - g.before.run_time_ns},
                    {"recursion_misses", g.after.recursion_misses - g.before.recursion_misses}});
  }
  release();
  out["seconds"] = (t1 - t0) / 1e9;
  out["page_faults"] = f0 && f1 ? nlohmann::json(*f1 - *f0) : nlohmann::json(nullptr);
  out["programs"] = std::move(list);
  return out;
}

}  // namespace fragd::ctl
