// Runs act-mode actions off the collector tick, one at a time, on a worker
// thread: a node compaction takes seconds and a pool resize longer, and the
// collector, /metrics and the control socket must not wait for them.
//
// The main loop submits requests and polls event_fd(); finished outcomes are
// taken with take_finished(). stop() asks a running action to end at its
// next step, waits for it, and puts back vm.compaction_proactiveness if an
// action raised it. The value it replaced is also written to a state file,
// so that a fragd killed while holding it raised restores it on its next
// start (recover_saved_proactiveness()).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "act/engine.h"
#include "act/executor.h"
#include "policy/policy.h"
#include "act/sysfs_actuator.h"

namespace fragd {

class ActionRunner {
 public:
  // `pages_migrated` returns the cumulative pages migrated by compaction runs
  // of trigger "fragd" (BPF); called on the worker thread.
  ActionRunner(SysfsActuator& actuator, std::function<uint64_t()> pages_migrated, std::string state_file);
  ~ActionRunner();

  Result<void> start();  // creates the worker and the eventfd
  int event_fd() const { return efd_; }

  // Queues a request. The hugepage settings come from `policy` at submit
  // time. dry_run: nothing is written; the outcome says "dry_run".
  void submit(const ActionRequest& req, const Policy& policy);
  std::vector<ActionOutcome> take_finished();
  std::optional<ActionRequest> running() const;

  // Ends the worker (see above). Idempotent.
  void stop();

  // At start-up: a state file left by a fragd that did not exit cleanly
  // holds the proactiveness value it replaced: write it back.
  static std::optional<std::string> recover_saved_proactiveness(SysfsActuator& a, const std::string& state_file);

 private:
  struct Job {
    ActionRequest req;
    Policy policy;
  };
  void loop();
  ActionOutcome execute(const Job& job);
  Result<void> remember(unsigned value);  // the state file

  SysfsActuator& act_;
  std::string state_file_;
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
