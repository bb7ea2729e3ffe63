// SPDX-License-Identifier: Apache-2.0
// fragd's main loop: one poll(2) over the descriptors the daemon's parts registered, each
// with its handler, run in the order they were registered; a periodic task (the systemd
// watchdog) that the poll wakes up for; signals read from a signalfd and a periodic
// timerfd, both closed with the loop; and a stop that ends the loop after the handler that
// asked for it.
#pragma once

#include <poll.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <vector>

#include "base/result.h"

namespace fragd {

class EventLoop {
 public:
  using Clock = std::function<uint64_t()>;  // monotonic ns
  explicit EventLoop(Clock clock) : clock_(std::move(clock)) {}
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // `fd` (skipped when negative) is polled for `events` every turn; `on` gets its revents.
  void watch(int fd, std::function<void(short revents)> on, short events = POLLIN);
  // Descriptors that change from turn to turn (the control server's clients), asked for
  // before each poll; `on` gets each one that has revents; `timeout_ms` bounds the wait
  // (-1: no bound); `after` runs at the end of every turn.
  void watch_set(std::function<std::vector<pollfd>()> fds, std::function<void(const pollfd&)> on,
                 std::function<int()> timeout_ms, std::function<void()> after);
  // `task` runs before the first poll and then at least every `period_ns` (0: never).
  void every(uint64_t period_ns, std::function<void()> task);

  // `signos` are blocked in this thread (and every thread it starts after) and handed to `on`
  // one by one as the loop reads them.
  Result<void> signals(std::initializer_list<int> signos, std::function<void(int signo)> on);
  // `on` runs every `period_ns` of CLOCK_MONOTONIC from now, with the expirations since the
  // last call (more than 1: the loop was late by a whole period or more).
  Result<void> timer(uint64_t period_ns, std::function<void(uint64_t expirations)> on);

  // Polls and dispatches until stop(); 1 when poll fails (its error in error()), else 0.
  int run();
  void stop() { running_ = false; }
  int error() const { return error_; }

 private:
  struct Watch {
    int fd;
    short events;
    std::function<void(short)> on;
  };
  Clock clock_;
  std::vector<Watch> watches_;
  std::function<std::vector<pollfd>()> set_fds_;
  std::function<void(const pollfd&)> set_on_;
  std::function<int()> set_timeout_;
  std::function<void()> set_after_;
  uint64_t period_ns_ = 0, last_ns_ = 0;
  bool ran_task_ = false;
  std::function<void()> task_;
  std::vector<int> owned_;  // the signalfd and timerfd, closed with the loop
  bool running_ = true;
  int error_ = 0;
};

}  // namespace fragd
