#include "act/runner.h"

#include "base/text.h"

#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <charconv>
#include <fstream>

#include "base/log.h"
#include "kernel/procfs.h"

namespace fragd {
namespace {

uint64_t mono_ns() { return now_ns(CLOCK_MONOTONIC); }

}  // namespace

ActionRunner::ActionRunner(SysfsActuator& actuator, std::function<uint64_t()> pages_migrated,
                           std::string state_file)
    : act_(actuator),
      state_file_(std::move(state_file)),
      exec_(actuator, ActionExecutor::Hooks{std::move(pages_migrated),
                                            [this](unsigned v) { return remember(v); },
                                            [this] { unlink(state_file_.c_str()); }}) {}

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
      o = execute(job);
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

Result<void> ActionRunner::remember(unsigned value) {
  // Written before the change, so that a fragd killed while holding the
  // raised value can put the old one back on its next start.
  std::ofstream f(state_file_, std::ios::trunc);
  if (!(f << value << "\n") || !f.flush())
    return make_error("cannot write " + state_file_ + " (the value to restore): not raising proactiveness", EIO);
  return {};
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
  if (auto saved = exec_.saved_proactiveness()) {
    if (auto r = exec_.restore(); !r)
      log_error("could not restore vm.compaction_proactiveness to " + std::to_string(*saved) + ": " +
                r.error().message + " (the value is kept in " + state_file_ + ")");
    else
      log_info("vm.compaction_proactiveness restored to " + std::to_string(*saved));
  }
}

std::optional<std::string> ActionRunner::recover_saved_proactiveness(SysfsActuator& a, const std::string& state_file) {
  auto t = read_text_file(state_file);
  if (!t) return std::nullopt;
  unsigned v = 0;
  std::string s = *t;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v > 100) {
    unlink(state_file.c_str());
    return "ignored " + state_file + ": '" + s + "' is not a proactiveness value 0..100";
  }
  if (auto r = a.write_proactiveness(v); !r)
    return "could not restore vm.compaction_proactiveness from " + state_file + ": " + r.error().message;
  unlink(state_file.c_str());
  return "restored vm.compaction_proactiveness to " + std::to_string(v) +
         ", left raised by a fragd that did not exit cleanly (" + state_file + ")";
}

}  // namespace fragd
