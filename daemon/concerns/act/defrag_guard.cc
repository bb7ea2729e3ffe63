// SPDX-License-Identifier: Apache-2.0
#include "concerns/act/defrag_guard.h"

#include "base/format.h"
#include "base/text.h"

namespace fragd {

namespace {
constexpr uint64_t kRetryNs = 60'000'000'000ULL;  // a put-back that failed is tried again after this
}

void DefragModeGuard::forget_window() {
  window_.clear();
  atomic_rate_.reset();
  pressure_pct_.reset();
}

void DefragModeGuard::rates(const DefragGuard& g) {
  atomic_rate_.reset();
  pressure_pct_.reset();
  if (window_.size() < 2) return;
  const GuardSample& a = window_.front();
  const GuardSample& b = window_.back();
  const uint64_t span = b.now_ns - a.now_ns;
  if (span == 0 || span < g.window_ns) return;
  const double secs = static_cast<double>(span) / 1e9;
  bool counted = true;
  for (const auto& s : window_) counted = counted && s.counting;
  if (counted && b.atomic_failures >= a.atomic_failures)
    atomic_rate_ = static_cast<double>(b.atomic_failures - a.atomic_failures) / secs;
  if (a.pressure_full_s && b.pressure_full_s && *b.pressure_full_s >= *a.pressure_full_s)
    pressure_pct_ = (*b.pressure_full_s - *a.pressure_full_s) / secs * 100;
}

std::optional<GuardRequest> DefragModeGuard::decide(const GuardSample& s, bool act, const DefragGuard& g, bool busy) {
  if (off_since_) {
    // While fragd holds it off, nothing is measured: the next window starts at the put-back.
    forget_window();
    if (busy || s.now_ns < retry_at_) return std::nullopt;
    if (!act || !g.enabled)
      return GuardRequest{false, false,
                          std::string("the policy no longer asks for the defrag_mode guard (") +
                              (!act ? "mode observe" : "compaction.defrag_guard.enabled false") + ")"};
    const uint64_t held = s.now_ns > *off_since_ ? s.now_ns - *off_since_ : 0;
    if (held >= g.hold_ns)
      return GuardRequest{false, true,
                          "held " + format_duration(static_cast<double>(held)) + " (compaction.defrag_guard.hold " +
                              format_duration(static_cast<double>(g.hold_ns)) + ")"};
    return std::nullopt;
  }
  if (!act || !g.enabled || !s.defrag_mode || *s.defrag_mode != 1) {
    forget_window();
    return std::nullopt;
  }
  window_.push_back(s);
  // Keep the newest sample at or before now - window as the window's start.
  while (window_.size() > 2 && window_[1].now_ns + g.window_ns <= s.now_ns) window_.pop_front();
  rates(g);
  if (busy) return std::nullopt;
  const std::string over = " over " + format_duration(static_cast<double>(g.window_ns)) + " with vm.defrag_mode 1";
  if (g.atomic_failures_per_second > 0 && atomic_rate_ && *atomic_rate_ > g.atomic_failures_per_second)
    return GuardRequest{true, false,
                        strf("%.2f atomic allocation failures/s > %g (compaction.defrag_guard.atomic_failures_per_second)",
                             *atomic_rate_, g.atomic_failures_per_second) +
                            over};
  if (g.pressure_full_percent > 0 && pressure_pct_ && *pressure_pct_ > g.pressure_full_percent)
    return GuardRequest{true, false,
                        strf("memory pressure full %.2f%% > %g%% (compaction.defrag_guard.pressure_full_percent)",
                             *pressure_pct_, g.pressure_full_percent) +
                            over};
  return std::nullopt;
}

void DefragModeGuard::finished(bool off, const std::string& result, uint64_t end_ns) {
  const bool done = result == "ok" || result == "dry_run";
  if (off) {
    if (done) {
      off_since_ = end_ns;
      retry_at_ = 0;
    }
    forget_window();
    return;
  }
  if (done) {
    off_since_.reset();
    retry_at_ = 0;
  } else if (result != "abandoned") {  // abandoned: fragd is exiting and puts it back itself
    retry_at_ = end_ns + kRetryNs;
  }
  forget_window();
}

}  // namespace fragd
