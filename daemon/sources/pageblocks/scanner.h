// SPDX-License-Identifier: Apache-2.0
// Runs the pageblock scan (sources/pageblocks/pageblock.h) on its own thread, at a lower CPU
// priority, and keeps the latest result for the collector and `fragctl map`.
// A scan reads 8 bytes of /proc/kpageflags per page frame (about 0.1 us of
// kernel time each), so it runs only when it can tell something new: at most
// every `interval` while the collector reports that memory changed
// (mark_changed), at least every `max_age`, and at once when asked (request).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "sources/pageblocks/pageblock.h"
#include "base/result.h"

namespace fragd {

class PageblockScanner {
 public:
  // Checks /proc/kpageflags can be read (Error naming the path and the fix
  // when not: the feature then stays off), then starts the thread, whose
  // first scan begins at once.
  // `iomem_fd`: /proc/iomem opened while fragd had CAP_SYS_ADMIN (-1: open it
  // at each scan); the scanner owns and closes it. `proc_root`: where
  // kpageflags, zoneinfo and iomem are (fragd's --path.procfs). `sys_root`: where
  // firmware/memmap is, read when /proc/iomem shows no address ("": not read).
  static Result<std::unique_ptr<PageblockScanner>> start(uint64_t interval_ns, unsigned threads,
                                                         unsigned pageblock_order, int iomem_fd = -1,
                                                         std::string proc_root = "/proc",
                                                         uint64_t max_age_ns = 0, std::string sys_root = "");
  ~PageblockScanner();
  PageblockScanner(const PageblockScanner&) = delete;
  PageblockScanner& operator=(const PageblockScanner&) = delete;

  // The latest successful scan (null before the first one ends).
  std::shared_ptr<const ScanResult> latest() const;

  // Asks the scanner thread for a scan now; event_fd() becomes readable when
  // it ends (ok or not). The main loop never waits for a scan.
  void request();
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

 private:
  PageblockScanner(uint64_t interval_ns, unsigned threads, unsigned order, std::string proc_root,
                   uint64_t max_age_ns)
      : interval_ns_(interval_ns),
        max_age_ns_(max_age_ns ? max_age_ns : interval_ns),
        threads_(threads),
        order_(order),
        proc_root_(std::move(proc_root)) {}
  void loop();
  Result<std::shared_ptr<const ScanResult>> scan_once();

  const uint64_t interval_ns_, max_age_ns_;
  const unsigned threads_, order_;
  const std::string proc_root_;
  std::string sys_root_;
  int iomem_fd_ = -1;
  int event_fd_ = -1;
  bool requested_ = false;
  bool changed_ = false;
  uint64_t skipped_ = 0;
  std::string last_error_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::shared_ptr<const ScanResult> latest_;
  uint64_t latest_mono_ns_ = 0;
  uint64_t ok_ = 0, failed_ = 0;
  std::vector<std::string> messages_;
  std::thread thread_;
};

}  // namespace fragd
