// SPDX-License-Identifier: Apache-2.0
#include "sources/pageblocks/scanner.h"

#include "base/text.h"

#include <fcntl.h>
#include <sys/eventfd.h>
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
                                                                   unsigned pageblock_order, int iomem_fd,
                                                                   std::string proc_root, uint64_t max_age_ns,
                                                                   std::string sys_root) {
  const std::string kpf = proc_root + "/kpageflags";
  const int fd = ::open(kpf.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    if (iomem_fd >= 0) ::close(iomem_fd);
    return make_error("cannot open " + kpf + ": " + std::strerror(e) + "; " +
                          (e == ENOENT ? "the kernel lacks CONFIG_PROC_PAGE_MONITOR"
                                       : "it is root's alone (mode 0400): run fragd as root") +
                          ". The pageblock scan is off (fragd_pageblock_class is not exported); everything "
                          "else works",
                      e);
  }
  ::close(fd);
  std::unique_ptr<PageblockScanner> s(new PageblockScanner(interval_ns, threads, pageblock_order, std::move(proc_root), max_age_ns));
  s->iomem_fd_ = iomem_fd;
  s->sys_root_ = std::move(sys_root);
  s->event_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (s->event_fd_ < 0) return sys_error("create the pageblock scanner's eventfd");
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
  if (iomem_fd_ >= 0) ::close(iomem_fd_);
  if (event_fd_ >= 0) ::close(event_fd_);
}

Result<std::shared_ptr<const ScanResult>> PageblockScanner::scan_once() {
  auto r = scan_live(proc_root_, order_, threads_, iomem_fd_, sys_root_);
  std::lock_guard<std::mutex> g(mu_);
  const uint64_t one = 1;
  if (event_fd_ >= 0) (void)!::write(event_fd_, &one, sizeof(one));
  if (!r) {
    failed_++;
    last_error_ = r.error().message;
    messages_.push_back("pageblock scan failed: " + r.error().message);
    return r.error();
  }
  last_error_.clear();
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
      const bool due = [&] {
        std::lock_guard<std::mutex> g2(mu_);
        const bool asked = std::exchange(requested_, false);
        const uint64_t age = mono_ns() - latest_mono_ns_;
        // Woken early by a request: not again so soon on the interval's account.
        const bool due = asked || !latest_ || age >= max_age_ns_ || (changed_ && age >= interval_ns_ / 2);
        if (due) changed_ = false;  // changes from here on call for the next scan
        else if (age >= interval_ns_ / 2) skipped_++;
        return due;
      }();
      if (due) (void)scan_once();
    }
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait_for(lk, std::chrono::nanoseconds(interval_ns_), [&] { return stop_ || requested_; });
    if (stop_) return;
  }
}

std::shared_ptr<const ScanResult> PageblockScanner::latest() const {
  std::lock_guard<std::mutex> g(mu_);
  return latest_;
}

void PageblockScanner::mark_changed() {
  std::lock_guard<std::mutex> g(mu_);
  changed_ = true;
}

uint64_t PageblockScanner::scans_skipped() const {
  std::lock_guard<std::mutex> g(mu_);
  return skipped_;
}

void PageblockScanner::request() {
  {
    std::lock_guard<std::mutex> g(mu_);
    requested_ = true;
  }
  cv_.notify_all();
}

uint64_t PageblockScanner::take_event() {
  uint64_t n = 0;
  (void)!::read(event_fd_, &n, sizeof(n));
  return scans_done();
}

uint64_t PageblockScanner::scans_done() const {
  std::lock_guard<std::mutex> g(mu_);
  return ok_ + failed_;
}

std::string PageblockScanner::last_error() const {
  std::lock_guard<std::mutex> g(mu_);
  return last_error_;
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
