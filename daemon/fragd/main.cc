// SPDX-License-Identifier: Apache-2.0
// fragd: watches high-order allocation stalls, compaction and memory
// fragmentation with BPF tracepoints and /proc, exports them, and acts on them.
// main: the command line; the daemon itself is fragd/daemon.h.
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/log.h"
#include "fragd/daemon.h"
#include "policy/config.h"
#include "version.h"

int main(int argc, char** argv) {
  using namespace fragd;
  CLI::App app{"fragd: traces high-order allocation stalls and compaction with BPF, scores memory "
               "fragmentation, and exports Prometheus metrics"};
  std::string config_path, check_path, listen, socket_path, log_level = "info";
  bool version = false, restore = false;
  app.add_option("-c,--config", config_path, "policy/config file (YAML), e.g. configs/fragd.yaml");
  app.add_option("--check-config", check_path, "validate FILE and exit (needs no privileges)");
  app.add_option("--listen", listen, "serve /metrics on ADDR:PORT (default 127.0.0.1:9717)");
  app.add_option("--socket", socket_path, "control socket for fragctl (default /run/fragd/fragd.sock)");
  std::string procfs = "/proc", sysfs = "/sys";
  app.add_option("--path.procfs", procfs,
                 "where procfs is mounted: fragd reads /proc files and writes /proc/sys/vm there (default /proc)");
  app.add_option("--path.sysfs", sysfs,
                 "where sysfs is mounted: fragd reads and writes node and hugepage files there (default /sys; "
                 "tracefs and /sys/kernel/btf are always the real ones)");
  std::string kallsyms;
  app.add_option("--path.kallsyms", kallsyms,
                 "a copy of /proc/kallsyms taken with CAP_SYSLOG, for where the real one is hidden (the unit's "
                 "ProtectKernelTunables): fragd names stall call sites from it, then deletes it (default: "
                 "PROCFS/kallsyms, kept)");
  app.add_option("--log-level", log_level, "debug, info, warn or error")
      ->check(CLI::IsMember({"debug", "info", "warn", "error"}));
  app.add_flag("--restore", restore,
               "put back the kernel settings a fragd that did not exit cleanly left changed (saved in "
               "/run/fragd/saved-state), then exit; idempotent; the unit runs it as ExecStopPost");
  app.add_flag("-V,--version", version, "print the version and exit");
  CLI11_PARSE(app, argc, argv);
  // The copy is read once, when the programs load (fragd/settings.cc), and deleted then; a start
  // that ends before that (bad flags, a config that does not load, programs that do not attach)
  // deletes it here, so that no copy of the kernel's addresses outlives this process.
  struct DeleteCopy {
    const std::string& path;
    ~DeleteCopy() {
      if (!path.empty()) ::unlink(path.c_str());
    }
  } delete_copy{kallsyms};

  if (version) {
    std::printf("fragd %s\n", FRAGD_VERSION);
    return 0;
  }
  set_log_level(log_level == "debug" ? LogLevel::Debug
                : log_level == "warn" ? LogLevel::Warn
                : log_level == "error" ? LogLevel::Error
                                       : LogLevel::Info);
  for (auto [flag, dir] : {std::pair<const char*, std::string*>{"--path.procfs", &procfs}, {"--path.sysfs", &sysfs}}) {
    while (dir->size() > 1 && dir->back() == '/') dir->pop_back();
    struct stat st;
    const bool found = stat(dir->c_str(), &st) == 0;
    if (!found || !S_ISDIR(st.st_mode)) {
      log_error(std::string(flag) + " " + *dir + ": " + (found ? "not a directory" : std::strerror(errno)) +
                "; give the directory where " + (dir == &procfs ? "procfs" : "sysfs") + " is mounted");
      return 1;
    }
  }
  if (restore) return restore_saved_settings(procfs, sysfs);
  if (!check_path.empty()) {
    auto c = load_and_check_config(check_path, procfs, sysfs);
    if (!c) {
      std::fprintf(stderr, "%s\n", c.error().message.c_str());
      return 1;
    }
    std::printf("%s: OK (mode %s%s, method %s, %zu pool targets)\n", check_path.c_str(), c->mode.c_str(),
                c->policy.dry_run ? ", dry_run" : "", method_name(c->policy.compaction.method),
                c->policy.hugepages.pools.size());
    return 0;
  }

  Config cfg;
  if (!config_path.empty()) {
    auto c = load_and_check_config(config_path, procfs, sysfs);
    if (!c) {
      log_error(c.error().message);
      return 1;
    }
    cfg = *c;
  }
  cfg.proc_root = procfs;
  cfg.sys_root = sysfs;
  cfg.kallsyms_path = kallsyms;
  if (!listen.empty()) {
    if (auto r = check_listen_address(listen); !r) {
      log_error("--listen: " + r.error().message);
      return 1;
    }
    cfg.listen = cfg.listen_flag = listen;
  }
  if (!socket_path.empty()) cfg.socket = cfg.socket_flag = socket_path;
  // An exception unwinds through the Daemon: its runner puts back what fragd changed.
  try {
    return Daemon(std::move(cfg)).run();
  } catch (const std::exception& e) {
    log_error(std::string("fragd failed: ") + e.what());
    return 1;
  }
}
