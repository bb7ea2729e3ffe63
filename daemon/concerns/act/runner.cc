// SPDX-License-Identifier: Apache-2.0
#include "concerns/act/runner.h"

#include "base/text.h"

#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"

namespace fragd {
namespace {

uint64_t mono_ns() { return now_ns(CLOCK_MONOTONIC); }

}  // namespace

ActionRunner::ActionRunner(SysfsActuator& actuator, std::function<uint64_t()> pages_migrated,
                           std::string state_file, std::function<uint64_t(unsigned)> foreign_stalls)
    : act_(actuator),
      state_(std::move(state_file)),
      exec_(actuator, ActionExecutor::Hooks{std::move(pages_migrated),
                                            [this](const std::string& f, uint64_t v, uint64_t w) { return remember(f, v, w); },
                                            [this](const std::string& f) { forget(f); }, std::move(foreign_stalls)}) {}

ActionRunner::~ActionRunner() {
  stop();
  if (efd_ >= 0) close(efd_);
}

Result<void> ActionRunner::start() {
  efd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (efd_ < 0) return sys_error("create the action runner's eventfd");
  worker_ = std::thread([this] { loop(); });
  return {};
}

void ActionRunner::submit(const ActionRequest& req, const Policy& policy) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(Job{req, policy});
  }
  cv_.notify_one();
}

std::vector<ActionOutcome> ActionRunner::take_finished() {
  uint64_t n;
  if (efd_ >= 0) (void)!read(efd_, &n, sizeof(n));
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ActionOutcome> out;
  out.swap(done_);
  return out;
}

std::optional<ActionRequest> ActionRunner::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_;
}

void ActionRunner::loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      job = std::move(queue_.front());
      queue_.pop_front();
      running_ = job.req;
    }
    ActionOutcome o;
    if (act_.stop_requested()) {
      o.req = job.req;
      o.result = "abandoned";
      o.detail = "fragd is exiting";
      o.start_ns = o.end_ns = mono_ns();
    } else {
      try {
        o = execute(job);
      } catch (const std::exception& e) {  // an action's bug must not end fragd with settings changed
        o.req = job.req;
        o.result = "error";
        o.detail = std::string("fragd failed: ") + e.what();
        o.start_ns = o.end_ns = mono_ns();
      }
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      running_.reset();
      done_.push_back(std::move(o));
    }
    const uint64_t one = 1;
    (void)!write(efd_, &one, sizeof(one));
  }
}

ActionOutcome ActionRunner::execute(const Job& job) {
  const uint64_t t0 = mono_ns();
  ActionOutcome o = exec_.run(job.req, job.policy);
  o.start_ns = t0;
  o.end_ns = mono_ns();
  if (job.req.kind == ActionKind::RestoreProactiveness && o.result == "ok")
    log_info("vm.compaction_proactiveness restored");
  return o;
}

Result<void> ActionRunner::remember(const std::string& file, uint64_t value, uint64_t wrote) {
  // Written before the change, so that a fragd killed while holding the
  // changed value has the old one put back later, in the same tree, and only
  // while the setting holds what fragd wrote.
  std::lock_guard<std::mutex> g(state_mu_);
  return state_.remember(file, value, act_.tree_root(file), wrote);
}

void ActionRunner::forget(const std::string& file) {
  std::lock_guard<std::mutex> g(state_mu_);
  if (auto r = state_.forget(file); !r)
    log_warn(r.error().message + " (" + setting_name(file) + " is back; the file still names it)");
}

void ActionRunner::stop() {
  act_.request_stop();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !worker_.joinable()) return;
    stopping_ = true;
    for (auto& j : queue_) {
      ActionOutcome o;
      o.req = j.req;
      o.result = "abandoned";
      o.detail = "fragd is exiting";
      done_.push_back(o);
    }
    queue_.clear();
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
  // Every saved setting goes back, not only the proactiveness the executor raised.
  std::lock_guard<std::mutex> g(state_mu_);
  if (!state_.loaded()) return;  // fragd changed nothing
  const RestoreReport rep = restore_saved(state_, act_);
  for (const auto& m : rep.restored) log_info(m);
  for (const auto& m : rep.failed) log_error(m);
}

}  // namespace fragd
