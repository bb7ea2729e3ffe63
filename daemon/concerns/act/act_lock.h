// SPDX-License-Identifier: Apache-2.0
// One act-mode fragd per host. Acting means changing host-wide kernel
// settings (vm.compaction_proactiveness, hugepage pools) and keeping the
// values to put back in one host-wide file (concerns/act/saved_state.h); two fragds
// doing that at once would fight over the settings and over the file. So an
// act-mode fragd holds an exclusive flock on /run/fragd/act.lock from before
// it loads BPF or writes anything until it exits, with its pid in the file;
// a second one is refused with that pid. The kernel drops the lock when the
// holder dies, however it dies. An observe-mode fragd takes no lock: it
// writes nothing to the kernel and never touches the saved state, so any
// number may run beside an act-mode one (and an observe-mode fragd that is
// reloaded into act mode takes the lock then, or refuses the reload).
#pragma once

#include <memory>
#include <string>

#include "base/result.h"

namespace fragd {

class ActLock {
 public:
  ~ActLock();
  ActLock(const ActLock&) = delete;
  ActLock& operator=(const ActLock&) = delete;

  // Takes the lock on `path` without waiting. `what` says what the lock is
  // taken for, in the refusal ("run in act mode", "restore the saved settings").
  static Result<std::unique_ptr<ActLock>> acquire(const std::string& path, const std::string& what);

 private:
  explicit ActLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace fragd
