// SPDX-License-Identifier: Apache-2.0
#include "kernel/source_faults.h"

#include <string.h>

#include <algorithm>

namespace fragd {

std::string errno_name(int err) {
  if (err == 0) return "OK";
  if (const char* n = strerrorname_np(err)) return n;
  return "E" + std::to_string(err);
}

SourceFaults::SourceFaults(uint64_t first_retry_ns, uint64_t max_retry_ns)
    : first_ns_(std::max<uint64_t>(first_retry_ns, 1)), max_ns_(std::max(max_retry_ns, first_ns_)) {}

bool SourceFaults::due(const std::string& source, uint64_t now) const {
  auto it = state_.find(source);
  return it == state_.end() || now >= it->second.next_ns;
}

bool SourceFaults::failed(const std::string& source, const std::string& cause, uint64_t now) {
  auto [it, fresh] = state_.try_emplace(source);
  State& s = it->second;
  const bool new_cause = fresh || s.cause != cause;
  if (fresh) s.since_ns = now;
  s.cause = cause;
  // The wait doubles with each failure in a row: first, 2 first, 4 first, ... up to max.
  uint64_t wait = first_ns_;
  for (unsigned i = 0; i < s.failures && wait < max_ns_; i++) wait = wait > max_ns_ / 2 ? max_ns_ : wait * 2;
  if (s.failures < 1000) s.failures++;
  s.next_ns = now + std::min(wait, max_ns_);
  return new_cause;
}

std::optional<SourceFaults::Recovered> SourceFaults::ok(const std::string& source, uint64_t now) {
  auto it = state_.find(source);
  if (it == state_.end()) return std::nullopt;
  Recovered r{it->second.cause, it->second.failures, now > it->second.since_ns ? now - it->second.since_ns : 0};
  state_.erase(it);
  return r;
}

uint64_t SourceFaults::retry_in_ns(const std::string& source, uint64_t now) const {
  auto it = state_.find(source);
  if (it == state_.end() || now >= it->second.next_ns) return 0;
  return it->second.next_ns - now;
}

unsigned SourceFaults::failures(const std::string& source) const {
  auto it = state_.find(source);
  return it == state_.end() ? 0 : it->second.failures;
}

}  // namespace fragd
