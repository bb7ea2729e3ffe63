// SPDX-License-Identifier: Apache-2.0
#include "fragd/event_loop.h"

#include <cerrno>
#include <algorithm>

namespace fragd {

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
