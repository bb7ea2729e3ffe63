// SPDX-License-Identifier: Apache-2.0
#include "concerns/pageblocks/scanner.h"

#include "base/text.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace fragd {
namespace {

uint64_t mono_ns() { return now_ns(CLOCK_MONOTONIC); }

}  // namespace

Result<std::unique_ptr<PageblockScanner>> PageblockScanner::start(const ScanSettings& settings, int iomem_fd) {
  auto fd = open_kpageflags(settings.proc_root);
  if (!fd) {
    if (iomem_fd >= 0) ::close(iomem_fd);
    return fd.error();
  }
  ::close(*fd);
  std::unique_ptr<PageblockScanner> s(new PageblockScanner(settings));
  s->iomem_fd_ = iomem_fd;
  s->key_seed_ = now_ns(CLOCK_REALTIME) ^ (static_cast<uint64_t>(getpid()) << 32);
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

// A sampled round: as many blocks as the budget buys over one interval at the CPU time a block
// took so far (the first round reads kMinZoneSample a zone and measures).
Result<ScanResult> PageblockScanner::round() {
  auto fd = open_kpageflags(proc_root_);
  if (!fd) return fd.error();
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{*fd};
  auto layout = read_live_layout(proc_root_, iomem_fd_, sys_root_, true);
  if (!layout) return layout.error();
  uint64_t budget_blocks = 0;
  if (ns_per_block_ > 0)
    budget_blocks = static_cast<uint64_t>(budget_ * static_cast<double>(interval_ns_) / ns_per_block_);
  {
    std::lock_guard<std::mutex> g(mu_);
    cost_.round_blocks = budget_blocks;
  }
  const FlagReader reader = fd_flag_reader(*fd, proc_root_ + "/kpageflags");
  uint64_t extra = 0;
  if (budget_blocks == 0) {
    // The first round: a small one measures what a block costs, then the round proper.
    const uint64_t c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
    auto m = sample_round(map_, cursors_, layout->spans, layout->ram, layout->free, order_, reader, 0, key_seed_,
                          ScanClock::now().boot_ns);
    if (!m) return m.error();
    extra = *m;
    if (*m > 0) ns_per_block_ = static_cast<double>(now_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / static_cast<double>(*m);
    if (ns_per_block_ > 0)
      budget_blocks = static_cast<uint64_t>(budget_ * static_cast<double>(interval_ns_) / ns_per_block_);
  }
  const ScanClock clock = ScanClock::now();
  const uint64_t t0 = mono_ns();
  auto n = sample_round(map_, cursors_, layout->spans, layout->ram, layout->free, order_, reader, budget_blocks,
                        key_seed_, clock.boot_ns);
  if (!n) return n.error();
  *n += extra;
  map_.wall_time_ns = clock.wall_ns;
  map_.duration_ns = mono_ns() - t0;
  map_.warnings.insert(map_.warnings.begin(), layout->warnings.begin(), layout->warnings.end());
  {
    std::lock_guard<std::mutex> g(mu_);
    cost_.blocks_sample += *n;
  }
  return map_;
}

Result<std::shared_ptr<const ScanResult>> PageblockScanner::scan_once(bool full) {
  const uint64_t cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
  Result<ScanResult> r = make_error("no scan", EINVAL);
  uint64_t blocks = 0;
  if (full) {
    r = scan_live(proc_root_, order_, threads_, iomem_fd_, sys_root_);
    if (r) {
      for (const auto& z : r->zones) blocks += z.blocks.size();
      map_ = *r;  // the map starts again from the whole picture; the permutations go on
      sync_cursors(map_, cursors_, key_seed_);
    }
  } else {
    const uint64_t before = cost_.blocks_sample;
    r = round();
    blocks = cost_.blocks_sample - before;
  }
  const uint64_t cpu = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
  // Full scans with several threads spend CPU time on the other threads too: their own clock
  // misses it, so a full scan's cost is not what a block costs a sample round.
  if (!full && blocks > 0) {
    const double per = static_cast<double>(cpu) / static_cast<double>(blocks);
    ns_per_block_ = ns_per_block_ > 0 ? 0.7 * ns_per_block_ + 0.3 * per : per;
  }
  std::lock_guard<std::mutex> g(mu_);
  cost_.cpu_ns += cpu;
  if (full && r) cost_.blocks_full += blocks;
  if (full) {
    full_bucket_.spent(cpu, mono_ns());
  }
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
  pthread_setname_np(pthread_self(), "fragd-scan");
  // Reading kpageflags is kernel time spent for fragd; let everything else go first.
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 10);
  for (;;) {
    // The start pass (sample mode, some block never read yet): the next round once the thread's
    // CPU time since the last one began is full_budget_ of the time (start_gap_ns).
    // map_ is this thread's own.
    const auto starting = [&] { return sample_ && map_.map_oldest_boot_ns == 0; };
    {
      bool asked = false;
      const bool due = [&] {
        std::lock_guard<std::mutex> g2(mu_);
        asked = std::exchange(requested_, false);
        const uint64_t age = mono_ns() - latest_mono_ns_;
        // Woken early by a request: not again so soon on the interval's account.
        const bool due = asked || !latest_ || (starting() && mono_ns() >= start_next_ns_) || age >= max_age_ns_ ||
                         (changed_ && age >= interval_ns_ / 2);
        if (due) {
          changed_ = false;  // changes from here on call for the next scan
          began_boot_ns_ = ScanClock::now().boot_ns;
        }
        else if (age >= interval_ns_ / 2) skipped_++;
        return due;
      }();
      // A request (fragctl map --max-age) asks for every block as it is now: a full scan.
      if (due) {
        const uint64_t began = mono_ns(), cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
        (void)scan_once(asked || !sample_);
        start_next_ns_ = began + start_gap_ns(now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0, full_budget_);
      }
    }
    const uint64_t now = mono_ns();
    const uint64_t wait_ns = !starting() ? interval_ns_ : start_next_ns_ > now ? start_next_ns_ - now : 0;
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait_for(lk, std::chrono::nanoseconds(wait_ns), [&] { return stop_ || requested_; });
    if (stop_) return;
  }
}

uint64_t PageblockScanner::start_gap_ns(uint64_t round_cpu_ns, double full_budget) {
  const double ns = static_cast<double>(round_cpu_ns) / full_budget;
  return std::max<uint64_t>(1'000'000'000, static_cast<uint64_t>(ns));
}

ScanCost PageblockScanner::cost() const {
  std::lock_guard<std::mutex> g(mu_);
  return cost_;
}

std::shared_ptr<const ScanResult> PageblockScanner::latest() const {
  std::lock_guard<std::mutex> g(mu_);
  return latest_;
}

void PageblockScanner::mark_changed() {
  std::lock_guard<std::mutex> g(mu_);
  changed_ = true;
}

uint64_t PageblockScanner::full_scan_wait_ns() {
  std::lock_guard<std::mutex> g(mu_);
  return full_bucket_.wait_ns(mono_ns());
}

uint64_t PageblockScanner::scans_skipped() const {
  std::lock_guard<std::mutex> g(mu_);
  return skipped_;
}

void PageblockScanner::request(uint64_t begun_after_boot_ns) {
  {
    std::lock_guard<std::mutex> g(mu_);
    // A scan that began late enough is running or done: it answers, another would be one more.
    if (begun_after_boot_ns && began_boot_ns_ >= begun_after_boot_ns) return;
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
