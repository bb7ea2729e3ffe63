#include "fragd/scanner.h"

#include "core/text.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace fragd {
namespace {

uint64_t mono_ns() { return now_ns(CLOCK_MONOTONIC); }

}  // namespace

Result<std::unique_ptr<PageblockScanner>> PageblockScanner::start(uint64_t interval_ns, unsigned threads,
                                                                   unsigned pageblock_order) {
  const int fd = ::open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    return make_error(std::string("cannot open /proc/kpageflags: ") + std::strerror(e) + "; " +
                          (e == ENOENT ? "the kernel lacks CONFIG_PROC_PAGE_MONITOR"
                                       : "it is root's alone (mode 0400): run fragd as root") +
                          ". The pageblock scan is off (fragd_pageblock_class is not exported); everything "
                          "else works",
                      e);
  }
  ::close(fd);
  std::unique_ptr<PageblockScanner> s(new PageblockScanner(interval_ns, threads, pageblock_order));
  s->thread_ = std::thread([p = s.get()] { p->loop(); });
  return s;
}

PageblockScanner::~PageblockScanner() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Result<std::shared_ptr<const ScanResult>> PageblockScanner::scan_locked() {
  auto r = scan_live("/proc", order_, threads_);
  std::lock_guard<std::mutex> g(mu_);
  if (!r) {
    failed_++;
    messages_.push_back("pageblock scan failed: " + r.error().message);
    return r.error();
  }
  for (auto& w : r->warnings) messages_.push_back("pageblock scan: " + w);
  ok_++;
  latest_ = std::make_shared<const ScanResult>(std::move(*r));
  latest_mono_ns_ = mono_ns();
  return latest_;
}

void PageblockScanner::loop() {
  // Reading kpageflags is kernel time spent for fragd; let everything else go first.
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 10);
  for (;;) {
    {
      std::lock_guard<std::mutex> g(scan_mu_);
      const bool due = [&] {
        std::lock_guard<std::mutex> g2(mu_);
        return !latest_ || mono_ns() - latest_mono_ns_ >= interval_ns_ / 2;  // fresh() may have just scanned
      }();
      if (due) (void)scan_locked();
    }
    std::unique_lock<std::mutex> lk(mu_);
    if (cv_.wait_for(lk, std::chrono::nanoseconds(interval_ns_), [&] { return stop_; })) return;
  }
}

std::shared_ptr<const ScanResult> PageblockScanner::latest() const {
  std::lock_guard<std::mutex> g(mu_);
  return latest_;
}

Result<std::shared_ptr<const ScanResult>> PageblockScanner::fresh(uint64_t max_age_ns) {
  std::lock_guard<std::mutex> g(scan_mu_);
  {
    std::lock_guard<std::mutex> g2(mu_);
    if (latest_ && mono_ns() - latest_mono_ns_ <= max_age_ns) return latest_;
  }
  return scan_locked();
}

uint64_t PageblockScanner::scans_ok() const {
  std::lock_guard<std::mutex> g(mu_);
  return ok_;
}

uint64_t PageblockScanner::scans_failed() const {
  std::lock_guard<std::mutex> g(mu_);
  return failed_;
}

std::vector<std::string> PageblockScanner::take_messages() {
  std::lock_guard<std::mutex> g(mu_);
  return std::exchange(messages_, {});
}

}  // namespace fragd
