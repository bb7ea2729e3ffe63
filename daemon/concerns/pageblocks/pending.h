// SPDX-License-Identifier: Apache-2.0
// Map requests waiting for a scan: a client that asks for a map fresher than the latest scan is
// answered when a scan that began late enough ends, or with the scanner's error once a scan
// that ended after the request failed. `Ask` is what the answer needs besides the scan (how
// many blocks to list, who asked).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fragd {

template <class Ask>
class PendingMaps {
 public:
  struct Waiting {
    uint64_t token;         // the client owed the answer
    uint64_t oldest_ok_ns;  // CLOCK_BOOTTIME: a scan begun at or after this will do
    uint64_t scans_before;  // scans ended when it was asked
    Ask ask;
  };
  // How a waiting request is answered: with the latest scan, or with the scanner's error.
  struct Due {
    uint64_t token;
    Ask ask;
    bool with_scan;
  };

  void add(uint64_t token, uint64_t oldest_ok_ns, uint64_t scans_before, Ask ask) {
    waiting_.push_back({token, oldest_ok_ns, scans_before, std::move(ask)});
  }

  // A scan ended: `scans_done` have ended in all; the latest good scan began at
  // `latest_boot_ns` (none: `have_latest` false); `error` is the last failure ("" none). Returns
  // the requests to answer now, in the order they came; `again` is set when some still wait
  // (the scan that ended began before them: the next one answers them).
  std::vector<Due> scan_ended(uint64_t scans_done, bool have_latest, uint64_t latest_boot_ns,
                              const std::string& error, bool& again) {
    std::vector<Due> due;
    std::vector<Waiting> still;
    for (auto& w : waiting_) {
      if (have_latest && latest_boot_ns >= w.oldest_ok_ns) due.push_back({w.token, std::move(w.ask), true});
      else if (!error.empty() && scans_done > w.scans_before) due.push_back({w.token, std::move(w.ask), false});
      else still.push_back(std::move(w));
    }
    waiting_ = std::move(still);
    again = !waiting_.empty();
    return due;
  }

  size_t size() const { return waiting_.size(); }
  // The latest `oldest_ok_ns` of the requests still waiting (0: none): a scan begun at or after
  // it answers them all.
  uint64_t newest_oldest_ok() const {
    uint64_t n = 0;
    for (const auto& w : waiting_) n = std::max(n, w.oldest_ok_ns);
    return n;
  }

 private:
  std::vector<Waiting> waiting_;
};

}  // namespace fragd
