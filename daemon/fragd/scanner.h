// Runs the pageblock scan (core/pageblock.h) on its own thread every
// `interval`, at a lower CPU priority, and keeps the latest result for the
// collector and `fragctl map`.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/pageblock.h"
#include "core/result.h"

namespace fragd {

class PageblockScanner {
 public:
  // Checks /proc/kpageflags can be read (Error naming the path and the fix
  // when not: the feature then stays off), then starts the thread, whose
  // first scan begins at once.
  static Result<std::unique_ptr<PageblockScanner>> start(uint64_t interval_ns, unsigned threads,
                                                         unsigned pageblock_order);
  ~PageblockScanner();
  PageblockScanner(const PageblockScanner&) = delete;
  PageblockScanner& operator=(const PageblockScanner&) = delete;

  // The latest successful scan (null before the first one ends).
  std::shared_ptr<const ScanResult> latest() const;
  // A scan no older than max_age_ns: the latest, or a new one run on the
  // caller's thread (it waits for a scan under way to end first).
  Result<std::shared_ptr<const ScanResult>> fresh(uint64_t max_age_ns);

  uint64_t scans_ok() const;
  uint64_t scans_failed() const;
  // Problems since the last call (failed scans, warnings), each once.
  std::vector<std::string> take_messages();

 private:
  PageblockScanner(uint64_t interval_ns, unsigned threads, unsigned order)
      : interval_ns_(interval_ns), threads_(threads), order_(order) {}
  void loop();
  Result<std::shared_ptr<const ScanResult>> scan_locked();

  const uint64_t interval_ns_;
  const unsigned threads_, order_;
  std::mutex scan_mu_;  // one scan at a time
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
