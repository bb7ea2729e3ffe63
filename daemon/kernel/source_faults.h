// SPDX-License-Identifier: Apache-2.0
// Faults of the kernel files fragd reads, kept per source ("buddyinfo",
// "vmstat", ...): a source that fails is retried at a doubling interval, and
// each cause of failure is reported once, not once per tick; when the source
// reads well again that is reported once too.
//
// Pure bookkeeping: time comes in as arguments and nothing is logged here,
// so the unit tests drive it with a fake clock. The daemon decides what to
// log with what it returns.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace fragd {

// errno's symbolic name: "ENOENT", "EACCES", "EISDIR"; "E<number>" for one
// the C library does not name, "OK" for 0. A bounded set: fit for a label.
std::string errno_name(int err);

class SourceFaults {
 public:
  // After a failure a source is read again first_retry_ns later; each further
  // failure in a row doubles the wait, up to max_retry_ns.
  SourceFaults(uint64_t first_retry_ns, uint64_t max_retry_ns);

  // Whether `source` may be read at `now`: it is not failing, or its retry is due.
  bool due(const std::string& source, uint64_t now) const;

  // A read of `source` failed at `now` with `cause` (an errno name, or a word
  // such as "format" for a file that no longer parses). True when this cause
  // is new for the source (it was reading well, or failed for another
  // reason): the caller logs it. False while the same cause persists.
  bool failed(const std::string& source, const std::string& cause, uint64_t now);

  struct Recovered {
    std::string cause;      // the last cause of failure
    unsigned failures = 0;  // failed reads in a row
    uint64_t failing_ns = 0;  // from the first failure to now
  };
  // A read of `source` succeeded at `now`. Returns what it recovered from when
  // it had been failing (the caller logs that once); nothing otherwise.
  std::optional<Recovered> ok(const std::string& source, uint64_t now);

  // The wait before the next read of a failing source (0 when not failing).
  uint64_t retry_in_ns(const std::string& source, uint64_t now) const;
  unsigned failures(const std::string& source) const;
  bool failing(const std::string& source) const { return state_.count(source) > 0; }

 private:
  struct State {
    std::string cause;
    unsigned failures = 0;
    uint64_t since_ns = 0;  // first failure in this run of failures
    uint64_t next_ns = 0;   // next read allowed
  };
  uint64_t first_ns_, max_ns_;
  std::map<std::string, State> state_;  // failing sources only
};

}  // namespace fragd
