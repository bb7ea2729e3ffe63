// SPDX-License-Identifier: Apache-2.0
#include "fragctl/session.h"

#include <signal.h>
#include <sys/signalfd.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>

#include "protocol/wire.h"

namespace fragd::ctl {

using nlohmann::json;


// Readable once SIGINT or SIGTERM arrived (both blocked, read through here).
namespace {
int g_signal_fd = -1;
}  // namespace

int signal_fd() { return g_signal_fd; }

void setup_signals() {
  ::signal(SIGPIPE, SIG_IGN);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  if (sigprocmask(SIG_BLOCK, &set, nullptr) == 0) g_signal_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (g_signal_fd < 0) {
    // Without a signalfd, keep the default handlers: a signal just ends fragctl.
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
  }
}

int fail(const std::string& message) {
  std::fprintf(stderr, "fragctl: %s\n", message.c_str());
  return 1;
}

int fail(const fragd::Error& e) {
  if (e.err == fragd::ctl::kInterrupted) return kExitInterrupted;
  return fail(e.message);
}

// The local wall-clock time, strftime-formatted.
std::string local_time(const char* format) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

fragd::Result<Client> open_client(const std::string& socket_path) {
  auto c = Client::connect(socket_path);
  if (c) c->set_interrupt_fd(g_signal_fd);
  return c;
}

// Parses one line from fragd as JSON, or says what is wrong with it; `what`
// names the line in the message ("answer to 'hist'", "trace event").
fragd::Result<json> parse_line(const std::string& line, const std::string& what) {
  try {
    return json::parse(line);
  } catch (const json::exception& e) {
    std::string head = line.size() > 80 ? line.substr(0, 80) + "..." : line;
    return fragd::make_error("malformed " + what + " from fragd (not JSON: " + e.what() + "): " + head);
  }
}

// Sends `req` on `c` and reads the answer, with a read timeout. The answer
// is returned whatever its "ok"; the caller checks the envelope.
fragd::Result<json> ask_fragd(Client& c, const json& req, int timeout_ms) {
  const std::string cmd = req.value("cmd", std::string("?"));
  if (auto s = c.send_line(req.dump()); !s) return s.error();
  auto line = c.read_line(timeout_ms);
  if (!line) return line.error();
  if (!*line) return fragd::make_error("fragd closed the connection on " + c.path() + " without answering '" + cmd + "'");
  return parse_line(**line, "answer to '" + cmd + "'");
}

fragd::Result<json> request(const std::string& socket_path, const fragd::ControlRequest& req, int timeout_ms) {
  auto c = open_client(socket_path);
  if (!c) return c.error();
  auto j = ask_fragd(*c, req, timeout_ms);
  if (!j) return j.error();
  if (auto ok = fragd::check_answer(*j, fragd::command_name(req.cmd)); !ok) return ok.error();
  return j;
}

// Waits until CLOCK_MONOTONIC reaches `deadline_ms`; false if a signal came first.
bool sleep_until(int64_t deadline_ms) {
  for (;;) {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t now = static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
    if (now >= deadline_ms) return true;
    if (g_signal_fd < 0) {
      int64_t left = deadline_ms - now;
      timespec d{static_cast<time_t>(left / 1000), static_cast<long>(left % 1000) * 1000000};
      nanosleep(&d, nullptr);
      continue;
    }
    pollfd p{g_signal_fd, POLLIN, 0};
    int rc = poll(&p, 1, static_cast<int>(deadline_ms - now));
    if (rc > 0) return false;
  }
}

int64_t mono_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}


std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

}  // namespace fragd::ctl
