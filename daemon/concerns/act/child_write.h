// SPDX-License-Identifier: Apache-2.0
// One write to a kernel file from a child process that fragd can kill.
//
// A write of 1 to /proc/sys/vm/compact_memory or nodeN/compact returns when
// the kernel has compacted the node: seconds on a large fragmented node, and
// only a fatal signal ends it early. Done in fragd's own thread, it held
// fragd's exit for as long as the compaction ran. Here a child process does
// the open and the write; the calling thread waits on a pidfd and on
// `stop_fd`, and when `stop_fd` turns readable (fragd is stopping) it sends
// the child SIGKILL, reaps it and returns an error with errno ECANCELED. The
// kernel checks for a fatal signal between the migration batches of a
// compaction, so the write ends within milliseconds of the kill.
//
// The child is named "fragd-write" (/proc/PID/comm), dies with the thread
// that made it (PR_SET_PDEATHSIG: a fragd killed with SIGKILL takes it
// along), and waits, before it opens the file, until `own` has been called
// with its pid: fragd registers it with its BPF programs there, so that every
// compaction run the write causes counts as trigger "fragd". `disown` is
// called once the child is reaped.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>

#include "base/result.h"

namespace fragd {

struct ChildWriteHooks {
  // The child's pid (in fragd's pid namespace), before it writes; an error
  // kills the child and fails the write with that error.
  std::function<Result<void>(pid_t)> own;
  std::function<void(pid_t)> disown;  // after the child is reaped
  // Polled every kReachedPollMs while the child writes: true kills the child and the write
  // counts as done (a compaction stopped once what it was for exists). Empty: never.
  std::function<bool()> reached;
};
inline constexpr int kReachedPollMs = 20;

struct ChildWriteReport {
  pid_t pid = -1;                // the child's pid, -1 when none was made
  bool attempted = false;        // the child opened (or tried to open) the file: an error is the kernel's
  bool killed = false;           // stop_fd turned readable and the child was killed mid-write
  bool cut = false;              // the deadline passed and the child was killed mid-write
  bool reached = false;          // hooks.reached() turned true and the child was killed mid-write
  uint64_t kill_to_reap_ns = 0;  // from SIGKILL sent to the child reaped, when killed or cut
};

// How long a poll may wait, in ms, at `now_ns` for a write with deadline
// `deadline_ns` (0: none, -1: wait for ever): rounded up, so that the wait
// never ends before the deadline; 0 once it has passed.
int deadline_poll_ms(uint64_t now_ns, uint64_t deadline_ns);

// Writes `value` to `path` from a child process (see above). The error of a
// refused open or write names the step and carries the kernel's errno, as an
// open and write in fragd's own thread would. Returns ECANCELED at once,
// without a child, when `stop_fd` is readable already, and ETIMEDOUT when
// `deadline_ns` (CLOCK_MONOTONIC, 0: none) has passed. `report`, when given,
// says what became of the child.
Result<void> write_in_child(const std::string& path, const std::string& value, int stop_fd,
                            const ChildWriteHooks& hooks, ChildWriteReport* report = nullptr,
                            uint64_t deadline_ns = 0);

}  // namespace fragd
