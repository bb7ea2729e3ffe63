// SPDX-License-Identifier: Apache-2.0
// Runs act-mode actions off the collector tick, one at a time, on a worker
// thread: a node compaction takes seconds and a pool resize longer, and the
// collector, /metrics and the control socket must not wait for them.
//
// The main loop submits requests and polls event_fd(); finished outcomes are
// taken with take_finished(). stop() asks a running action to end at its
// next step, waits for it, and puts back every kernel setting fragd changed.
// Before an action changes one (today vm.compaction_proactiveness), the value
// it replaces is written to the saved-state file (concerns/act/saved_state.h), so that
// a fragd that dies without stop() has it put back at the next start or by
// `fragd --restore`. The runner reads and writes that file only when an
// action changes or restores a setting: in act mode, under the act lock
// (concerns/act/act_lock.h) that the daemon holds.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "concerns/act/engine.h"
#include "concerns/act/executor.h"
#include "concerns/act/saved_state.h"
#include "concerns/act/sysfs_actuator.h"
#include "policy/policy.h"

namespace fragd {

class ActionRunner {
 public:
  // `pages_migrated` returns the cumulative pages migrated by compaction runs
  // of trigger "fragd" (BPF); `foreign_stalls` the other processes' direct
  // compaction and reclaim entries at an order or above (ActionExecutor::Hooks);
  // both called on the worker thread.
  ActionRunner(SysfsActuator& actuator, std::function<uint64_t()> pages_migrated, std::string state_file,
               std::function<uint64_t(unsigned)> foreign_stalls = {});
  ~ActionRunner();

  Result<void> start();  // creates the worker and the eventfd
  int event_fd() const { return efd_; }

  // Queues a request. The hugepage settings come from `policy` at submit
  // time. dry_run: nothing is written; the outcome says "dry_run".
  void submit(const ActionRequest& req, const Policy& policy);
  std::vector<ActionOutcome> take_finished();
  std::optional<ActionRequest> running() const;

  // Ends the worker and puts back what fragd changed (see above). Idempotent.
  void stop();

 private:
  struct Job {
    ActionRequest req;
    Policy policy;
  };
  void loop();
  ActionOutcome execute(const Job& job);
  Result<void> remember(const std::string& file, uint64_t value, uint64_t wrote);  // the state file
  void forget(const std::string& file);

  SysfsActuator& act_;
  std::mutex state_mu_;  // state_: the worker, and stop() after the join
  SavedState state_;
  ActionExecutor exec_;  // worker thread only (and stop() after join)
  int efd_ = -1;
  std::thread worker_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  std::vector<ActionOutcome> done_;
  std::optional<ActionRequest> running_;
  bool stopping_ = false;
};

}  // namespace fragd
