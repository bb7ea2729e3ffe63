// SPDX-License-Identifier: Apache-2.0
#include "concerns/act/child_write.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "base/text.h"

namespace fragd {
namespace {

// What the child sends back before it exits: the step that failed and its errno.
enum Step : int { kDone = 0, kOpen = 1, kWrite = 2, kShort = 3 };
struct ChildResult {
  int step = kDone;
  int err = 0;
};
constexpr int kNotRegistered = 3;  // the child's exit status when fragd never said "go"

// The child. fragd has other threads (HTTP workers, the scanner, the main
// loop) whose locks, malloc's among them, may be held by a thread that does
// not exist in this process: from fork to _exit only async-signal-safe system
// calls, on memory prepared before the fork.
[[noreturn]] void child_main(int sock, int parent_end, const char* path, const char* value, size_t len) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  prctl(PR_SET_NAME, "fragd-write");
  close(parent_end);
  char go = 0;
  ssize_t r;
  do r = read(sock, &go, 1);
  while (r < 0 && errno == EINTR);
  if (r != 1) _exit(kNotRegistered);

  ChildResult res;
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    res = {kOpen, errno};
  } else {
    const ssize_t n = write(fd, value, len);
    if (n < 0) res = {kWrite, errno};
    else if (static_cast<size_t>(n) != len) res = {kShort, EIO};
    close(fd);
  }
  (void)!write(sock, &res, sizeof(res));
  _exit(res.step == kDone ? 0 : 1);
}

bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

// Reaps `pid`; its wait status, or -1 when it was reaped elsewhere (SIGCHLD ignored).
int reap(pid_t pid) {
  int status = 0;
  for (;;) {
    if (waitpid(pid, &status, 0) == pid) return status;
    if (errno != EINTR) return -1;
  }
}

std::string ms_text(uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f ms", static_cast<double>(ns) / 1e6);
  return buf;
}

// Waits for the child to exit, or kills it once stop_fd turns readable or
// the deadline passes. Returns its wait status (-1: unknown); `killed` and
// `cut` say whether it was killed, and why.
Result<int> wait_or_kill(pid_t pid, int pidfd, int stop_fd, uint64_t deadline_ns, const std::function<bool()>& reached,
                         bool& killed, bool& cut, bool& at_goal, uint64_t& kill_to_reap_ns) {
  auto kill_now = [&]() {
    const uint64_t t0 = now_ns(CLOCK_MONOTONIC);
    kill(pid, SIGKILL);
    const int status = reap(pid);
    kill_to_reap_ns = now_ns(CLOCK_MONOTONIC) - t0;
    killed = true;
    return status;
  };
  for (;;) {
    pollfd fds[2] = {{stop_fd, POLLIN, 0}, {pidfd, POLLIN, 0}};
    // Without a pidfd (Linux < 5.3) the wait polls every 10 ms.
    int timeout = deadline_poll_ms(now_ns(CLOCK_MONOTONIC), deadline_ns);
    if (pidfd < 0 && (timeout < 0 || timeout > 10)) timeout = 10;
    if (reached && (timeout < 0 || timeout > kReachedPollMs)) timeout = kReachedPollMs;
    const int n = poll(fds, pidfd >= 0 ? 2 : 1, timeout);
    if (n < 0) {
      if (errno == EINTR) continue;
      return sys_error("poll");
    }
    if (pidfd >= 0 && n > 0 && fds[1].revents) return reap(pid);  // exited: a finished write wins over a stop
    if (pidfd < 0) {
      int st = 0;
      const pid_t w = waitpid(pid, &st, WNOHANG);
      if (w == pid) return st;
      if (w < 0 && errno == ECHILD) return -1;
    }
    if (n > 0 && (fds[0].revents & POLLIN)) return kill_now();
    if (deadline_ns != 0 && now_ns(CLOCK_MONOTONIC) >= deadline_ns) {
      cut = true;
      return kill_now();
    }
    if (reached && reached()) {
      at_goal = true;
      return kill_now();
    }
  }
}

}  // namespace

int deadline_poll_ms(uint64_t now_ns, uint64_t deadline_ns) {
  if (deadline_ns == 0) return -1;
  if (now_ns >= deadline_ns) return 0;
  const uint64_t left = deadline_ns - now_ns;
  const uint64_t ms = left / 1'000'000 + (left % 1'000'000 != 0);
  return ms > 1'000'000'000 ? 1'000'000'000 : static_cast<int>(ms);
}

Result<void> write_in_child(const std::string& path, const std::string& value, int stop_fd,
                            const ChildWriteHooks& hooks, ChildWriteReport* report, uint64_t deadline_ns) {
  ChildWriteReport scratch;
  ChildWriteReport& rep = report ? *report : scratch;
  rep = {};
  const std::string what = "write " + value + " to " + path;
  if (readable(stop_fd)) return make_error(what + " not started: fragd is exiting", ECANCELED);
  if (deadline_ns != 0 && now_ns(CLOCK_MONOTONIC) >= deadline_ns) {
    rep.cut = true;
    return make_error(what + " not started: the action's deadline has passed", ETIMEDOUT);
  }

  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return sys_error("create the socket pair of the process that is to " + what);
  const char* cpath = path.c_str();
  const char* cvalue = value.data();
  const size_t len = value.size();
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(sv[0]);
    close(sv[1]);
    return sys_error("start a process to " + what + " (fork)", err);
  }
  if (pid == 0) child_main(sv[1], sv[0], cpath, cvalue, len);
  close(sv[1]);
  rep.pid = pid;
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  auto finish = [&](Result<void> r) {
    if (pidfd >= 0) close(pidfd);
    close(sv[0]);
    return r;
  };

  if (hooks.own) {
    if (auto o = hooks.own(pid); !o) {
      kill(pid, SIGKILL);
      reap(pid);
      return finish(make_error("not trying to " + what + ": " + o.error().message, o.error().err));
    }
  }
  (void)!write(sv[0], "g", 1);  // a child gone already shows in its result below

  bool killed = false, cut = false, at_goal = false;
  auto status = wait_or_kill(pid, pidfd, stop_fd, deadline_ns, hooks.reached, killed, cut, at_goal, rep.kill_to_reap_ns);
  if (!status) {  // cannot wait: the child must not outlive this call
    kill(pid, SIGKILL);
    reap(pid);
  }
  if (hooks.disown) hooks.disown(pid);
  if (!status) return finish(make_error("wait for the process that is to " + what + ": " + status.error().message,
                                        status.error().err));

  // The child's result, sent before it exits: a write that completed just
  // before the kill is a completed write.
  ChildResult res;
  if (recv(sv[0], &res, sizeof(res), MSG_DONTWAIT) != static_cast<ssize_t>(sizeof(res))) {
    if (killed && at_goal) {  // stopped because what it was for exists: a done write
      rep.reached = true;
      rep.attempted = true;
      return finish({});
    }
    if (killed && cut) {
      rep.cut = true;
      return finish(make_error(what + " cut short: the action's deadline (its share of compaction.cpu_budget, or a fragctl request's --timeout) ran out "
                                      "(the writing process was killed and gone " +
                                   ms_text(rep.kill_to_reap_ns) + " later)",
                               ETIMEDOUT));
    }
    if (killed) {
      rep.killed = true;
      return finish(make_error(what + " stopped: fragd is exiting (the writing process was killed and gone " +
                                   ms_text(rep.kill_to_reap_ns) + " later)",
                               ECANCELED));
    }
    std::string how = "status unknown";
    if (*status >= 0 && WIFSIGNALED(*status)) how = "killed by signal " + std::to_string(WTERMSIG(*status));
    else if (*status >= 0 && WIFEXITED(*status)) how = "exit status " + std::to_string(WEXITSTATUS(*status));
    return finish(make_error("the process that was to " + what + " ended without a result (" + how + ")", EIO));
  }
  rep.attempted = true;
  switch (res.step) {
    case kDone: return finish({});
    case kOpen: return finish(sys_error("open " + path + " for writing", res.err));
    case kWrite: return finish(sys_error(what, res.err));
    default: return finish(make_error("short write of " + value + " to " + path, EIO));
  }
}

}  // namespace fragd
