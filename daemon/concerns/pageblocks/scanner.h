// SPDX-License-Identifier: Apache-2.0
// Runs the pageblock scan (concerns/pageblocks/pageblock.h) on its own thread ("fragd-scan"), at
// a lower CPU priority, and keeps the latest picture for the collector and `fragctl map`.
// Reading /proc/kpageflags costs about 0.1 us of kernel time per page frame, so the thread
// reads only when it can tell something new: at most every `interval` while the collector
// reports that memory changed (mark_changed), at least every `max_age`, and at once when
// asked (request: a full scan). In sample mode (the default) each of those rounds reads a
// random sample of pageblocks (concerns/pageblocks/sample.h) sized so that the thread's CPU
// time stays within `budget` (a share of one core, measured on the thread's own clock) of the
// interval, whatever the memory size; in full mode every round reads every page frame.
// Until every block was read once (the 1 GiB estimates and the longest free run need a whole
// map) sample mode runs a start pass: the same rounds, each followed by a pause that holds
// them to `full_budget` of a core (start_gap_ns); the map is whole after about blocks x (CPU time per
// block) / full_budget: about 30 s per 24 GiB at the default 2%, 22 minutes at 1 TiB, whatever
// memory does.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "concerns/pageblocks/full_scan_bucket.h"
#include "concerns/pageblocks/pageblock.h"
#include "concerns/pageblocks/sample.h"
#include "base/result.h"

namespace fragd {

struct ScanSettings {
  uint64_t interval_ns = 60'000'000'000, max_age_ns = 0;  // max_age 0: interval
  unsigned threads = 1, pageblock_order = 9;
  bool sample = true;    // rounds read a sample (false: every round is a full scan)
  double budget = 0.001; // sample rounds' CPU time per interval, as a share of one core
  double full_budget = 0.02;  // forced full scans' CPU time, as a share of one core (full_scan_wait_ns)
  std::string proc_root = "/proc", sys_root;  // sys_root "": firmware/memmap is not read
};

// What the thread spent, for fragd_scan_* (counters since start).
struct ScanCost {
  uint64_t cpu_ns = 0;  // the thread's CPU time in rounds and scans (user and system)
  uint64_t blocks_sample = 0, blocks_full = 0;  // pageblocks read by sample rounds and by full scans
  uint64_t round_blocks = 0;  // the blocks the next sample round may read
};

class PageblockScanner {
 public:
  // Checks /proc/kpageflags can be read (Error naming the path and the fix
  // when not: the feature then stays off), then starts the thread, whose
  // first scan begins at once.
  // `iomem_fd`: /proc/iomem opened while fragd had CAP_SYS_ADMIN (-1: open it
  // at each scan); the scanner owns and closes it. `proc_root`: where
  // kpageflags, zoneinfo and iomem are (fragd's --path.procfs). `sys_root`: where
  // firmware/memmap is, read when /proc/iomem shows no address ("": not read).
  static Result<std::unique_ptr<PageblockScanner>> start(const ScanSettings& settings, int iomem_fd = -1);
  ~PageblockScanner();
  PageblockScanner(const PageblockScanner&) = delete;
  PageblockScanner& operator=(const PageblockScanner&) = delete;

  // The latest successful scan (null before the first one ends).
  std::shared_ptr<const ScanResult> latest() const;

  // Asks the scanner thread for a scan now; event_fd() becomes readable when
  // it ends (ok or not). The main loop never waits for a scan.
  // begun_after_boot_ns (CLOCK_BOOTTIME, 0: none): no request when a scan that began at or after
  // it is running or done (a re-request for maps still waiting, which that scan answers).
  void request(uint64_t begun_after_boot_ns = 0);
  // Forced full scans (request), across every client, are held to `full_budget` of a core
  // with a burst of kFullScanBurst scans (FullScanBucket: a bucket of scans refilled at that
  // share over the last full scan's CPU time). 0 when one may run now, else the nanoseconds
  // until one may.
  static constexpr uint64_t kFullScanBurst = 5;
  // The start pass: the next round begins this long after the last one began, so that the
  // thread spends full_budget of a core by its own clock whatever a round cost (a round of
  // budget x interval, 0.06 s at the defaults: every 3 s); at least a second.
  static uint64_t start_gap_ns(uint64_t round_cpu_ns, double full_budget);
  double full_budget() const { return full_budget_; }
  uint64_t full_scan_wait_ns();
  // Memory changed enough since the last scan began (memory_changed()): scan at the next interval.
  void mark_changed();
  // Interval checks that found nothing changed and did not scan.
  uint64_t scans_skipped() const;
  int event_fd() const { return event_fd_; }
  // Clears event_fd(); then the scans ended so far and the last failure (empty when the last scan was ok).
  uint64_t take_event();
  uint64_t scans_done() const;
  std::string last_error() const;

  uint64_t scans_ok() const;
  uint64_t scans_failed() const;
  // Problems since the last call (failed scans, warnings), each once.
  std::vector<std::string> take_messages();
  ScanCost cost() const;

 private:
  explicit PageblockScanner(const ScanSettings& s)
      : interval_ns_(s.interval_ns),
        max_age_ns_(s.max_age_ns ? s.max_age_ns : s.interval_ns),
        threads_(s.threads),
        order_(s.pageblock_order),
        sample_(s.sample),
        budget_(s.budget),
        full_budget_(s.full_budget),
        proc_root_(s.proc_root),
        sys_root_(s.sys_root) {}
  void loop();
  Result<std::shared_ptr<const ScanResult>> scan_once(bool full);
  Result<ScanResult> round();

  const uint64_t interval_ns_, max_age_ns_;
  const unsigned threads_, order_;
  const bool sample_;
  const double budget_, full_budget_;
  const std::string proc_root_, sys_root_;
  // The thread's own: the map sample rounds update, where each zone is in its permutation,
  // and the CPU time one block costs (measured, smoothed).
  ScanResult map_;
  std::vector<SampleCursor> cursors_;
  uint64_t key_seed_ = 0;
  double ns_per_block_ = 0;
  ScanCost cost_;
  int iomem_fd_ = -1;
  int event_fd_ = -1;
  bool requested_ = false;
  uint64_t began_boot_ns_ = 0;  // when the latest scan (running or done) began, CLOCK_BOOTTIME
  bool changed_ = false;
  uint64_t skipped_ = 0;
  std::string last_error_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::shared_ptr<const ScanResult> latest_;
  uint64_t latest_mono_ns_ = 0;
  uint64_t start_next_ns_ = 0;  // the thread's own: when the start pass's next round may begin (monotonic)
  FullScanBucket full_bucket_{full_budget_, kFullScanBurst};  // under mu_ (full_scan_wait_ns)
  uint64_t ok_ = 0, failed_ = 0;
  std::vector<std::string> messages_;
  std::thread thread_;
};

}  // namespace fragd
