// SPDX-License-Identifier: Apache-2.0
#include "fragd/event_loop.h"

#include <signal.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace fragd {

EventLoop::~EventLoop() {
  for (int fd : owned_) close(fd);
}

Result<void> EventLoop::signals(std::initializer_list<int> signos, std::function<void(int)> on) {
  sigset_t mask;
  sigemptyset(&mask);
  for (int s : signos) sigaddset(&mask, s);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  const int fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (fd < 0) return Error{errno, std::string("cannot create a signalfd: ") + strerror(errno)};
  owned_.push_back(fd);
  watch(fd, [fd, on = std::move(on)](short) {
    signalfd_siginfo si;
    while (read(fd, &si, sizeof(si)) == sizeof(si)) on(static_cast<int>(si.ssi_signo));
  });
  return {};
}

Result<void> EventLoop::timer(uint64_t period_ns, std::function<void(uint64_t)> on) {
  const int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (fd < 0) return Error{errno, std::string("cannot create a timerfd: ") + strerror(errno)};
  owned_.push_back(fd);
  itimerspec its{};
  its.it_interval.tv_sec = static_cast<time_t>(period_ns / 1'000'000'000ULL);
  its.it_interval.tv_nsec = static_cast<long>(period_ns % 1'000'000'000ULL);
  its.it_value = its.it_interval;
  if (timerfd_settime(fd, 0, &its, nullptr) != 0)
    return Error{errno, std::string("cannot arm the tick timer: ") + strerror(errno)};
  watch(fd, [fd, on = std::move(on)](short) {
    uint64_t expirations;
    if (read(fd, &expirations, sizeof(expirations)) > 0) on(expirations);
  });
  return {};
}

void EventLoop::watch(int fd, std::function<void(short)> on, short events) {
  if (fd >= 0) watches_.push_back({fd, events, std::move(on)});
}

void EventLoop::watch_set(std::function<std::vector<pollfd>()> fds, std::function<void(const pollfd&)> on,
                          std::function<int()> timeout_ms, std::function<void()> after) {
  set_fds_ = std::move(fds);
  set_on_ = std::move(on);
  set_timeout_ = std::move(timeout_ms);
  set_after_ = std::move(after);
}

void EventLoop::every(uint64_t period_ns, std::function<void()> task) {
  period_ns_ = period_ns;
  task_ = std::move(task);
}

int EventLoop::run() {
  std::vector<pollfd> fds;
  while (running_) {
    int timeout_ms = set_timeout_ ? set_timeout_() : -1;
    if (period_ns_ && task_) {
      const uint64_t now = clock_();
      if (!ran_task_ || now - last_ns_ >= period_ns_) {
        task_();
        last_ns_ = now;
        ran_task_ = true;
      }
      const uint64_t next = last_ns_ + period_ns_;
      const int due_ms = static_cast<int>((next - std::min(clock_(), next)) / 1'000'000) + 1;
      timeout_ms = timeout_ms < 0 ? due_ms : std::min(timeout_ms, due_ms);
    }
    fds.clear();
    for (const Watch& w : watches_) fds.push_back({w.fd, w.events, 0});
    const size_t first_set = fds.size();
    if (set_fds_)
      for (const pollfd& p : set_fds_()) fds.push_back(p);
    if (poll(fds.data(), fds.size(), timeout_ms) < 0) {
      if (errno == EINTR) continue;
      error_ = errno;
      return 1;
    }
    for (size_t i = 0; i < watches_.size() && running_; i++)
      if (fds[i].revents) watches_[i].on(fds[i].revents);
    if (!running_) break;
    for (size_t i = first_set; i < fds.size(); i++)
      if (fds[i].revents) set_on_(fds[i]);
    if (set_after_) set_after_();
  }
  return 0;
}

}  // namespace fragd
