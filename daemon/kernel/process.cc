// SPDX-License-Identifier: Apache-2.0
#include "kernel/process.h"

#include <dirent.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "kernel/page_size.h"

namespace fragd {

Result<ProcessStats> parse_process_stat(const std::string& text, long ticks_per_second, long page_size,
                                        uint64_t boot_time) {
  // Fields after the comm's closing parenthesis, from field 3 (state) on.
  const auto close = text.rfind(')');
  if (close == std::string::npos) return make_error("no ')' after the command name", EINVAL);
  std::istringstream in(text.substr(close + 1));
  std::vector<std::string> f;
  for (std::string w; in >> w;) f.push_back(w);
  // f[0] is field 3; utime 14, stime 15, starttime 22, vsize 23, rss 24.
  if (f.size() < 22) return make_error("only " + std::to_string(f.size() + 2) + " fields, want 24 or more", EINVAL);
  auto num = [&](size_t field, uint64_t& out) -> bool {
    try {
      size_t used = 0;
      out = std::stoull(f[field - 3], &used);
      return used == f[field - 3].size();
    } catch (...) {
      return false;
    }
  };
  uint64_t utime, stime, start, vsize, rss;
  if (!num(14, utime) || !num(15, stime) || !num(22, start) || !num(23, vsize) || !num(24, rss))
    return make_error("a field of utime, stime, starttime, vsize, rss is not a number", EINVAL);
  if (ticks_per_second <= 0 || page_size <= 0) return make_error("clock ticks or page size unknown", EINVAL);
  ProcessStats s;
  s.cpu_seconds = static_cast<double>(utime + stime) / static_cast<double>(ticks_per_second);
  s.virtual_bytes = vsize;
  s.resident_bytes = rss * static_cast<uint64_t>(page_size);
  s.start_time_seconds =
      static_cast<double>(boot_time) + static_cast<double>(start) / static_cast<double>(ticks_per_second);
  return s;
}

namespace {

uint64_t read_boot_time(const std::string& proc_root) {
  std::ifstream in(proc_root + "/stat");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("btime ", 0) == 0) return std::stoull(line.substr(6));
  return 0;
}

}  // namespace

Result<ProcessStats> read_process_stats(const std::string& proc_root) {
  static const uint64_t boot_time = read_boot_time(proc_root);
  std::ifstream in(proc_root + "/self/stat");
  if (!in) return sys_error("open " + proc_root + "/self/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto s = parse_process_stat(text, sysconf(_SC_CLK_TCK), static_cast<long>(kernel_page_bytes()), boot_time);
  if (!s) return make_error(proc_root + "/self/stat: " + s.error().message, EINVAL);
  if (DIR* d = opendir((proc_root + "/self/fd").c_str())) {
    uint64_t n = 0;
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') n++;
    closedir(d);
    s->open_fds = n > 0 ? n - 1 : 0;  // less the directory's own fd
  }
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0) s->max_fds = rl.rlim_cur;
  return s;
}

std::string kernel_release() {
  utsname u{};
  return uname(&u) == 0 ? std::string(u.release) : std::string("unknown");
}

}  // namespace fragd
