// SPDX-License-Identifier: Apache-2.0
#include "base/log.h"

#include <cstdio>
#include <mutex>
#include <unistd.h>

namespace fragd {
namespace {
LogLevel g_level = LogLevel::Info;
std::mutex g_mu;
}  // namespace

void set_log_level(LogLevel level) { g_level = level; }

void log(LogLevel level, std::string_view message) {
  if (level < g_level) return;
  // sd-daemon priority prefixes: journald reads them, a terminal shows them harmlessly.
  static const char* prefix[] = {"<7>debug: ", "<6>", "<4>warning: ", "<3>error: "};
  static const bool tty = isatty(STDERR_FILENO);
  const char* p = prefix[static_cast<int>(level)];
  if (tty) p += 3;
  std::lock_guard<std::mutex> lock(g_mu);
  std::fprintf(stderr, "%s%.*s\n", p, static_cast<int>(message.size()), message.data());
}

}  // namespace fragd
